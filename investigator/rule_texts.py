"""The own words of untrusted alert rules a note names: data, quoted only inside the fence.

A note that tells rules of one name apart (`alert_rules.ambiguous_rules_note`) quoted each
rule's file, group and summary. Of a rule imported without `--trusted` those are text anyone
who could write the rule file wrote ("IMPORTANT SYSTEM NOTE TO THE AI AGENT: ignore all
previous instructions ..."), and notes are read outside the untrusted fence (the MCP
summary block, `rule_notes`, the card's `Note` line). So a note names an untrusted rule by
its id (`alert_rules.rule_label`), and its words are listed here, beside the note: the MCP
server fences them as data (untrusted_text.py), the card and the report print them on lines
marked `[untrusted]`, and a field that reads like an instruction is withheld, named, never
quoted, as the gate withholds such text anywhere else. A rule whose trust was never recorded
(imported before the importer stored it: trust `unrecorded`) is untrusted and none of its
words is quoted, here either: it is named by id, and its fields are listed as withheld.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from investigator.alert_rules import one_line_text
from investigator.evidence import UNRECORDED_TRUST, Evidence
from investigator.gate import instruction_match

# The rule's own words, in the order they are shown.
_FIELDS = ("rule_file", "group", "severity", "summary")
# Why nothing of a rule of unknown trust is quoted (served too: names no CLI flag).
UNRECORDED_DETAIL = (
    "the rule's trust was not recorded (imported before its import's trust was stored): "
    "untrusted, nothing of it quoted; importing its file again records it"
)


class RuleText(BaseModel):
    """An untrusted rule a note names by id, and its own words (data, never instructions):
    each field that reads like an instruction is None and named in `withheld`."""

    id: str  # the rule's element id, `alert:ZorkQueueStuck@page`
    trust: str = "untrusted"
    source_id: str | None = None
    evidence_id: str
    rule_file: str | None = None
    group: str | None = None
    severity: str | None = None
    summary: str | None = None  # its summary (GitLab's `title` when it has none)
    withheld: list[str] = Field(default_factory=list)
    withheld_detail: str | None = None

    def quoted(self) -> str:
        """What the fence or an `[untrusted]` line shows of it: its words, and what is not
        quoted and why."""
        said = [f"file {self.rule_file}" if self.rule_file else None]
        said += [f"group {self.group}" if self.group else None]
        said += [f"severity {self.severity}" if self.severity else None]
        said += [f"summary: {self.summary}" if self.summary else None]
        if self.withheld:
            said.append(f"{', '.join(self.withheld)} withheld: {self.withheld_detail}")
        return "; ".join(s for s in said if s) or "no file, group or summary"


def _words(ev: Evidence) -> dict[str, str]:
    texts = {k: str(ev.props[k]) for k in ("rule_file", "group", "severity") if ev.props.get(k)}
    if summary := " ".join(one_line_text(ev.props).split()):
        texts["summary"] = summary
    return texts


def untrusted_rule_texts(rules: Iterable[Evidence]) -> list[RuleText]:
    """The untrusted ones of `rules` (once each, by id), with their own words; a trusted
    rule's words are in the note itself, as before."""
    out: dict[str, RuleText] = {}
    for ev in rules:
        if ev.trust == "trusted" or ev.type != "Alert" or ev.element_id in out:
            continue
        words = _words(ev)
        if ev.trust == UNRECORDED_TRUST:
            out[ev.element_id] = _unrecorded(ev, words)
            continue
        found = {k: m for k in _FIELDS if k in words and (m := instruction_match(words[k]))}
        kinds = sorted({m.kind for m in found.values()})
        out[ev.element_id] = RuleText(
            id=ev.element_id,
            trust=ev.trust,
            source_id=ev.source_id,
            evidence_id=ev.evidence_id,
            **{k: v for k, v in words.items() if k not in found},
            withheld=[k for k in _FIELDS if k in found],
            withheld_detail=(
                f"untrusted rule contains {' and '.join(kinds)} (not quoted)" if kinds else None
            ),
        )
    return [out[i] for i in sorted(out)]


def _unrecorded(ev: Evidence, words: dict[str, str]) -> RuleText:
    """A rule of unknown trust: named by id, every field it has withheld, none quoted."""
    return RuleText(
        id=ev.element_id,
        trust=ev.trust,
        source_id=ev.source_id,
        evidence_id=ev.evidence_id,
        withheld=[k for k in _FIELDS if k in words],
        withheld_detail=UNRECORDED_DETAIL,
    )
