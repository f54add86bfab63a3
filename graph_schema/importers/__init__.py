"""Importers of real-world sources into the bundle model (docs/design.md sections 9 and 10).

Each importer parses one public format and returns an `ImportResult` whose `bundle` is an
ordinary `graph_schema.bundle.Bundle`; the bundle writer writes it like any other bundle, so
there is exactly one write path. Links an importer could not resolve are listed in
`ImportResult.unresolved` for the ingest output, never dropped silently.

- `graph_schema.importers.markdown_runbooks`: a folder of Markdown runbooks (one per alert
  or topic, optional YAML front matter).
- `graph_schema.importers.prometheus_rules`: Prometheus rule files (groups / rules / alert).

Their result is `graph_schema.importers.result.ImportResult`. Nothing is imported here: a
runbook lookup reads `markdown_sections` without the importers and the bundle models.
"""
