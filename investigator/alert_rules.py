"""Several alerting rules of one name (GOV.UK's `High5xxRate` in three rule files): which one
a lookup means, and how to tell them apart.

The rules import gives each its own id (`alert:High5xxRate@page`, `@2`, `@3`) and the same
name. When the rules of a name lead to different runbooks (or some to none), answering with
one of them would tell one team's on-call to read another's page: pasted text picks the rule
whose own words (summary, severity, file, group) it holds, and a bare name is ambiguous.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from graph_schema.words import words as text_words
from investigator.evidence import UNRECORDED_TRUST, Evidence

# Words that tell no rule from another ("rate of 5xx for ...").
_FILLER = frozenset(
    [
        "the",
        "and",
        "for",
        "from",
        "with",
        "that",
        "this",
        "are",
        "was",
        "has",
        "have",
        "not",
        "its",
        "into",
        "over",
        "than",
        "when",
        "what",
    ]
)
_SUMMARY_SHOWN = 60
# A severity shown of an untrusted rule: one word, as severity labels are.
_SEVERITY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,19}")


class RulePick(BaseModel):
    """The rule pasted text picks among rules of one name, and the words that picked it."""

    model_config = ConfigDict(frozen=True)

    alert_id: str
    words: tuple[str, ...]


def alert_name_of(ev: Evidence) -> str:
    """The alert's name as its rule spells it (the id's name part when it has none)."""
    return str(ev.props.get("alertname") or ev.name or ev.element_id.removeprefix("alert:"))


def same_named_rules(alerts: Iterable[Evidence]) -> list[list[Evidence]]:
    """The alerts among `alerts` that share a name with another of another id, grouped by
    name (in any case), each group sorted by id; a name of one rule is no group."""
    groups: dict[str, dict[str, Evidence]] = {}
    for ev in alerts:
        if ev.type == "Alert":
            groups.setdefault(alert_name_of(ev).casefold(), {}).setdefault(ev.element_id, ev)
    return [
        [rules[i] for i in sorted(rules)] for _, rules in sorted(groups.items()) if len(rules) > 1
    ]


def lead_apart(rules: list[Evidence], runbooks_of: dict[str, frozenset[str]]) -> bool:
    """Whether the rules lead to different runbooks (`runbooks_of`: alert id -> the runbook
    ids reached through it; an id absent reaches none). Rules of the name left unread (past
    the row cap, linked ones read first) that link none differ from read ones that do."""
    reached = {runbooks_of.get(r.element_id, frozenset()) for r in rules}
    total, linked = rules_matched(rules)
    unread_unlinked = total - len(rules) > 0 and linked < total and frozenset() not in reached
    return len(reached) > 1 or (unread_unlinked and any(reached))


def rules_matched(rules: list[Evidence]) -> tuple[int, int]:
    """How many rules the name matched in all and how many of them a runbook is linked to
    (entity_resolution 5 counts them on every row); the rules read when it does not say."""
    totals = [r.context.get("matches") for r in rules]
    linked = [r.context.get("linked_matches") for r in rules]
    total = max((t for t in totals if isinstance(t, int)), default=len(rules))
    return max(total, len(rules)), max((n for n in linked if isinstance(n, int)), default=0)


def page_texts(props: Mapping[str, object]) -> dict[str, str]:
    """The texts an alert's page shows, by key: its `message`, `summary` and `description`,
    and the `title` annotation GitLab writes instead of a summary (kept in the record's
    `annotations_json` only: read there, so stores imported before need no re-import)."""
    texts = {
        k: v for k in ("message", "summary", "description") if isinstance(v := props.get(k), str)
    }
    raw = props.get("annotations_json")
    try:
        annotations = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        annotations = None
    if isinstance(annotations, dict) and isinstance(title := annotations.get("title"), str):
        texts["title"] = title
    return texts


def one_line_text(props: Mapping[str, object]) -> str:
    """The one line an alert pages with: its summary, else its `title` (GitLab's)."""
    texts = page_texts(props)
    return texts.get("summary") or texts.get("title") or ""


def _words(text: str) -> set[str]:
    # Words of any script ("zählerstand" whole, not "hlerstand"): graph_schema.words.
    return {w for w in text_words(text.casefold()) if len(w) > 2 and w not in _FILLER}


def _rule_words(ev: Evidence) -> set[str]:
    parts: list[object] = [one_line_text(ev.props)]
    parts += [ev.props.get(k) for k in ("severity", "group", "rule_file")]
    return _words(" ".join(str(p).replace("_", " ") for p in parts if p))


def picked_by_words(rules: list[Evidence], text: str) -> RulePick | None:
    """The one rule whose own words (summary, severity, group, file) `text` holds most of,
    counting only words the rules do not all share; None when none or several lead."""
    said = _words(text)
    own = {r.element_id: _rule_words(r) for r in rules}
    shared = set.intersection(*own.values()) if own else set()
    held = {i: tuple(sorted((w - shared) & said)) for i, w in own.items()}
    ranked = sorted(held.items(), key=lambda item: (-len(item[1]), item[0]))
    if (
        not ranked
        or not ranked[0][1]
        or (len(ranked) > 1 and len(ranked[1][1]) == len(ranked[0][1]))
    ):
        return None
    return RulePick(alert_id=ranked[0][0], words=ranked[0][1])


def rule_label(ev: Evidence) -> str:
    """The rule as `--alert` takes it, with what tells it apart: `High5xxRate@2 (fastly.yaml,
    group Fastly, warning: "Fastly error rate ...")`. An untrusted rule's file, group and
    summary are text its file's author wrote, and a label is read outside the untrusted
    fence (a note, the MCP summary): it is named by its id and a severity of one plain word,
    `ZorkQueueStuck@page (untrusted rule, page)`; its words are quoted as data only
    (rule_texts.py). A rule whose trust was never recorded is named by its id alone."""
    rule_id = ev.element_id.removeprefix("alert:")
    if ev.trust == UNRECORDED_TRUST:
        # Imported before its import's trust was stored: nothing of its words, its id only.
        return f"{rule_id} (untrusted rule: trust not recorded)"
    if ev.trust != "trusted":
        severity = plain_severity(ev)
        return f"{rule_id} (untrusted rule" + (f", {severity})" if severity else ")")
    said = [str(ev.props[k]) for k in ("rule_file",) if ev.props.get(k)]
    if ev.props.get("group"):
        said.append(f"group {ev.props['group']}")
    severity = str(ev.props.get("severity") or "no severity")
    summary = " ".join(one_line_text(ev.props).split())
    if len(summary) > _SUMMARY_SHOWN:
        summary = summary[: _SUMMARY_SHOWN - 3].rstrip() + "..."
    said.append(f'{severity}: "{summary}"' if summary else severity)
    return f"{rule_id} ({', '.join(said)})"


def plain_severity(ev: Evidence) -> str | None:
    """The rule's severity when it is one plain word (`page`, `critical`, `P1`): what a
    severity label holds, and no sentence fits in it; else None."""
    severity = ev.props.get("severity")
    return severity if isinstance(severity, str) and _SEVERITY.fullmatch(severity) else None


def untrusted_rules_named(rules: Iterable[Evidence]) -> str | None:
    """What a note naming rules adds when some are untrusted: where their words are."""
    trusts = {r.trust for r in rules if r.type == "Alert"}
    if trusts <= {"trusted"}:
        return None
    said = (
        "an untrusted rule is named by its id: its file, group and summary are untrusted "
        "text, quoted only as data (untrusted_rules)"
    )
    if UNRECORDED_TRUST in trusts:
        said += (
            "; a rule imported before its import's trust was recorded is untrusted and "
            "nothing of it is quoted"
        )
    return said


def runbooks_reached(documents: Iterable[Evidence]) -> dict[str, frozenset[str]]:
    """Alert id -> the runbooks (ids without version) `documents` reached through it (their
    `anchor`)."""
    reached: dict[str, set[str]] = {}
    for ev in documents:
        if ev.type != "Policy" and ev.context.get("anchor"):
            runbook = ev.element_id.split("@", 1)[0]
            reached.setdefault(str(ev.context["anchor"]), set()).add(runbook)
    return {anchor: frozenset(ids) for anchor, ids in reached.items()}


def _rule_runbooks(rule: Evidence, reached: dict[str, frozenset[str]]) -> str:
    runbooks = sorted(reached.get(rule.element_id, frozenset()))
    if runbooks:
        return "runbook " + ", ".join(runbooks)
    url = rule.props.get("runbook_url")
    if url and rule.trust != "trusted":
        return "no runbook imported (its runbook_url is untrusted: not quoted here)"
    return f"no runbook imported (runbook_url {url})" if url else "no runbook linked"


def ambiguous_rules_note(
    apart: list[list[Evidence]],
    reached: dict[str, frozenset[str]],
    ask: str = "investigator runbook --alert",
) -> str:
    """A name of several rules leading to different runbooks, none picked: which is which,
    and how to ask for one (`ask`: the command that takes the rule's id)."""
    parts = []
    for rules in apart:
        name = alert_name_of(rules[0])
        total, linked = rules_matched(rules)
        if total == len(rules):
            listed = "; ".join(f"{rule_label(r)} -> {_rule_runbooks(r, reached)}" for r in rules)
            parts.append(
                f"{len(rules)} alert rules are named {name}, with different runbooks: {listed}"
            )
            continue
        # More rules than read (GitLab's 65 saturation rules of one name): the linked ones
        # were read first; the rest are counted, a few named.
        shown = [r for r in rules if r.element_id in reached]
        listed = "; ".join(f"{rule_label(r)} -> {_rule_runbooks(r, reached)}" for r in shown)
        unshown = [r.element_id.removeprefix("alert:") for r in rules if r not in shown]
        more = f" (the first {len(shown)} shown)" if linked > len(shown) else ""
        others = f"the other {total - linked} link no runbook" + (
            f" ({', '.join(unshown)}, ...)" if unshown else ""
        )
        parts.append(
            f"{total} alert rules are named {name}, {linked} of them linked to a runbook"
            f"{more}: {listed}; {others}"
        )
    # A name of more rules than read is asked for by its linked rule (the one worth asking).
    cut = [r for rules in apart if rules_matched(rules)[0] > len(rules) for r in rules]
    linked_rules = [r for r in cut if r.element_id in reached]
    first = (linked_rules or apart[0])[0].element_id.removeprefix("alert:")
    untrusted = untrusted_rules_named(r for rules in apart for r in rules)
    return (
        "; ".join(parts) + f"; which one fired? ask for it by id ({ask} {first}), or paste"
        " the notification: its words pick the rule" + (f"; {untrusted}" if untrusted else "")
    )


def picked_rules_note(apart: list[list[Evidence]], picks: list[RulePick]) -> str:
    """Which of several rules of one name the text's words picked, and why."""
    parts = []
    for rules, pick in zip(apart, picks, strict=True):
        chosen = next(r for r in rules if r.element_id == pick.alert_id)
        others = ", ".join(
            r.element_id.removeprefix("alert:") for r in rules if r.element_id != pick.alert_id
        )
        words = ", ".join(repr(w) for w in pick.words)
        parts.append(
            f"{len(rules)} alert rules are named {alert_name_of(chosen)}: the text's words "
            f"({words}) pick {rule_label(chosen)}; not {others}"
        )
    untrusted = untrusted_rules_named(r for rules in apart for r in rules)
    return "; ".join([*parts, *([untrusted] if untrusted else [])])
