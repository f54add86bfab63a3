"""What the runbook card and the investigation report say under a version withheld as
untrusted instruction-like text (where the gate found it, never its words, and the way out),
and under a record whose text a legal purge removed."""

from __future__ import annotations

import re

from investigator.gate import CHANNEL_LEAK_KIND, INSTRUCTION_KIND
from investigator.terminal import one_line
from investigator.untrusted_text import FOUND_BY_TEXT_ONLY, unquoted_detail

# Under a record rejected for its integrity because a legal purge removed its text: its
# reason code alone (`rejected_integrity`) reads as tampering.
PURGED_HINT = "(its text was removed by a legal purge, which keeps only its hash: not served)"

# What and where the gate found (gate.instruction_detail): "instruction-like text in line 4
# of its text (not quoted)", "a step that puts a secret into a shared channel in ...".
_WHERE = re.compile(
    rf"({re.escape(INSTRUCTION_KIND)}|{re.escape(CHANNEL_LEAK_KIND)}) in (.+?) \(not quoted\)"
)


def untrusted_hint(detail: str) -> str:
    """Under a version withheld as an untrusted instruction: what the gate found (a secret
    put into a shared channel is said so) and where, not the words (they would put the
    instruction back in front of whoever reads the report), and how a team that trusts the
    source imports it (not for a page found by text only, `FOUND_BY_TEXT_ONLY`: it is no
    runbook found)."""
    match = _WHERE.search(unquoted_detail(detail))
    kind = match.group(1) if match else INSTRUCTION_KIND
    where = f" in {one_line(match.group(2), 60)}" if match else ""
    if detail.endswith(FOUND_BY_TEXT_ONLY):
        # Not the runbook the question asks for: no way to serve it is suggested.
        return f"({kind}{where}, not quoted{FOUND_BY_TEXT_ONLY})"
    return (
        f"({kind}{where}, not quoted; imported untrusted: a team that trusts "
        "this source imports it with "
        "--trusted, see docs/security.md)"
    )
