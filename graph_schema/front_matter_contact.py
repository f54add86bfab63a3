"""A runbook page's contact as its front matter names it in words (not a team record).

Apart from the Markdown importer (which warns about these keys) so that a runbook lookup,
which shows the contact on its card, does not import the importer and the bundle models.
"""

from __future__ import annotations

import json
from typing import Any

# Front matter keys that name a page's owner in words (GOV.UK's `owner_slack: "#team"`), not
# a team record: warned about, and the card shows them as the page's contact.
CONTACT_KEYS = (
    *(f"owner_{kind}" for kind in ("slack", "email", "channel", "team", "github", "name")),
    *("owners", "team", "teams", "maintainer", "maintainers", "contact", "contacts"),
)


def front_matter_contact(props: dict[str, Any]) -> str | None:
    """What an imported runbook's front matter names as its contact, said as read:
    `#team (from front matter owner_slack, not a team record)`; None when it names none.
    Words only: an owner of record is a team's OWNS edge (front matter `owner:`)."""
    try:
        front = json.loads(str(props.get("front_matter_json") or "{}"))
    except ValueError:
        return None
    if not isinstance(front, dict):
        return None
    for key in CONTACT_KEYS:
        value = front.get(key)
        values = value if isinstance(value, list) else [value]
        texts = [str(v).strip() for v in values if isinstance(v, str | int) and str(v).strip()]
        if texts:
            return f"{', '.join(texts)} (from front matter {key}, not a team record)"
    return None
