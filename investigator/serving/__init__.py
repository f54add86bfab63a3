"""The MCP server (`investigator mcp`): the investigator's commands served to MCP clients.

`backend` is the one adapter to the run session, the subject rules and the Context Graph;
`mcp_server` needs the `mcp` extra. OpenTelemetry lives in `investigator.telemetry`, below
the run session, which calls it.
"""
