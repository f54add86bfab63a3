"""The subject of a command: `--subject` or `INVESTIGATOR_SUBJECT`, checked before any query."""

from __future__ import annotations

import os

from investigator.errors import BadInput

SUBJECT_ENV = "INVESTIGATOR_SUBJECT"
MAX_SUBJECT_LENGTH = 200


def subject_id_from(flag_value: str | None) -> str:
    """The subject id to use; missing or malformed ids are bad input (exit 2).

    A well-formed id that names no principal is decided later, in the KG (exit 3).
    """
    subject_id = flag_value if flag_value is not None else os.environ.get(SUBJECT_ENV)
    if not subject_id:
        raise BadInput(f"no subject: pass --subject ID or set {SUBJECT_ENV}")
    if (
        not subject_id.isprintable()
        or subject_id.strip() != subject_id
        or len(subject_id) > MAX_SUBJECT_LENGTH
    ):
        raise BadInput(
            f"--subject {subject_id[:60]!r} is not a principal id "
            f"(printable, no surrounding spaces, at most {MAX_SUBJECT_LENGTH} characters)"
        )
    return subject_id
