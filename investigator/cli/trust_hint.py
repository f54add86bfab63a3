"""What the runbook card and the investigation report say under a version withheld as
untrusted instruction-like text: the fragment the gate matched and the way out."""

from __future__ import annotations

import re

from investigator.terminal import one_line

# The gate's detail ends with the fragment it matched, quoted (investigator/gate.py).
_FRAGMENT = re.compile(r"instruction-like text: (.+)$")


def untrusted_hint(detail: str) -> str:
    """Under a version withheld as an untrusted instruction: the fragment that matched (the
    subject's own visible text) and how a team that trusts the source imports it."""
    match = _FRAGMENT.search(detail)
    fragment = f"matched {one_line(match.group(1), 120)}; " if match else ""
    return (
        f"({fragment}imported untrusted: a team that trusts this source imports it with "
        "--trusted, see docs/security.md)"
    )
