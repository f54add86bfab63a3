"""What the runbook card and the investigation report say under a version withheld as
untrusted instruction-like text (where the gate found it, never its words, and the way out),
and under a record whose text a legal purge removed."""

from __future__ import annotations

import re

from investigator.terminal import one_line
from investigator.untrusted_text import FOUND_BY_TEXT_ONLY, unquoted_detail

# Under a record rejected for its integrity because a legal purge removed its text: its
# reason code alone (`rejected_integrity`) reads as tampering.
PURGED_HINT = "(its text was removed by a legal purge, which keeps only its hash: not served)"

# Where the gate found it (gate.instruction_detail): "in line 4 of its text (not quoted)".
_WHERE = re.compile(r"instruction-like text in (.+?) \(not quoted\)")


def untrusted_hint(detail: str) -> str:
    """Under a version withheld as an untrusted instruction: where it was found, not the
    words (they would put the instruction back in front of whoever reads the report), and
    how a team that trusts the source imports it (not for a page found by text only,
    `FOUND_BY_TEXT_ONLY`: it is no runbook found)."""
    match = _WHERE.search(unquoted_detail(detail))
    where = f" in {one_line(match.group(1), 60)}" if match else ""
    if detail.endswith(FOUND_BY_TEXT_ONLY):
        # Not the runbook the question asks for: no way to serve it is suggested.
        return f"(instruction-like text{where}, not quoted{FOUND_BY_TEXT_ONLY})"
    return (
        f"(instruction-like text{where}, not quoted; imported untrusted: a team that trusts "
        "this source imports it with "
        "--trusted, see docs/security.md)"
    )
