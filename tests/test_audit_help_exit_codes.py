"""Every audit command's --help lists its exit codes as docs/context-graph.md and
docs/security.md give them (an explorer's finding: `trace --help` named only exit 1, while
`trace` also exits 2 for an unknown or another tenant's run and 3 for another subject's;
`replay --help` and `verify --help` left out 4, `runs --help` and `purge --help` said none).
"""

from __future__ import annotations

import re

import pytest

# The codes each command exits with (docs/context-graph.md "Reading it", "Replay",
# "Anchors and verify", "Purge"; README "Exit codes").
DOCUMENTED = {
    "runs": {0, 2, 3, 4},
    "trace": {0, 1, 2, 3, 4},
    "replay": {0, 1, 2, 3, 4},
    "verify": {0, 1, 2, 3, 4},
    "purge": {0, 2, 3, 4},
}


def _listed(help_text: str) -> tuple[set[int], str]:
    """The codes the help's `Exit codes:` paragraph names, and the paragraph."""
    flat = " ".join(help_text.split())
    match = re.search(r"Exit codes: (.*?\.)(?: [A-Z]|$)", flat)
    assert match, help_text
    paragraph = match.group(1)
    return {int(c) for c in re.findall(r"(?:^|; )(\d) ", paragraph)}, paragraph


@pytest.mark.parametrize("command", sorted(DOCUMENTED))
def test_every_audit_commands_help_lists_its_exit_codes(invoke, command: str) -> None:  # type: ignore[no-untyped-def]
    res = invoke(command, "--help")
    assert res.code == 0, res
    codes, paragraph = _listed(res.out)
    assert codes == DOCUMENTED[command], paragraph
    assert "4 Neo4j unavailable" in paragraph, paragraph


def test_trace_help_says_what_2_and_3_mean(invoke) -> None:  # type: ignore[no-untyped-def]
    _, paragraph = _listed(invoke("trace", "--help").out)
    assert "2 bad input" in paragraph and "another tenant's (answered alike)" in paragraph
    assert "3 another subject's run you may not read" in paragraph
