"""Wording shared by the claim rules: labels, validity and time phrases, quotes, the claim
constructor, and the gap words for a search cut short or a record unknown, not absent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from graph_schema.canonical import sha256_hex
from investigator.claims.model import Claim, EpistemicStatus
from investigator.evidence import Evidence, canonical_json, iso_utc
from investigator.timeline import (
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    FIRST_SEEN_KEYS,
    ReferenceTime,
    holds_at,
    instant,
    release_of,
)

# What to ask again with when the loop stopped with reads still planned, per stop reason.
_LONGER_SEARCH = {
    "deadline": "a longer --deadline-seconds",
    "max_rounds": "a larger --max-rounds",
    "budget_exhausted": "a larger --budget-tokens",
}


# Said for `search_stopped_by` when the loop finished but one of its reads failed (a template
# timed out on a loaded server): its rows are unknown, and "none found" would be a claim.
READ_FAILED = "read_failed"


# How a gap left by a search that did not finish begins: not found yet is not none.
UNKNOWN_NOT_ABSENT = "unknown, not absent: "

# How the competing-cause checks' gap begins (failed_reads.py knows it by these words).
CHECKS_NOT_RUN = "competing-cause checks did not all run"


def checks_not_run_words(not_run: Sequence[str]) -> str:
    """The competing-cause checks' gap, up to what it means for the answer: which of the
    window's checks did not run."""
    steps = f" ({'; '.join(not_run)})" if not_run else ""
    return f"{CHECKS_NOT_RUN} for the window before the first error{steps}"


# Property names that carry the relevant instant, most specific first (investigator.timeline).
_DEPLOY_TIME_KEYS = DEPLOY_TIME_KEYS


_FIRST_SEEN_KEYS = FIRST_SEEN_KEYS


_CHANGE_TIME_KEYS = CHANGE_TIME_KEYS


_instant = instant


def _label(ev: Evidence) -> str:
    code = ev.context.get("code") or ev.context.get("error_code")
    if "error_first_seen" in ev.evidence_types and isinstance(code, str):
        return code.removeprefix("err:")
    return ev.name or ev.title or ev.element_id


def _title(ev: Evidence) -> str:
    """A runbook's or policy's name in a claim: its title, as the runbook card names it (an
    imported page's record name is its file name, `backdoor-ec2-spambot`, where its title
    is the finding's, `Backdoor:EC2/Spambot`)."""
    return ev.title or _label(ev)


def _about(ev: Evidence, entity_id: str) -> bool:
    """Whether `ev` is a record about `entity_id` (same record, its fact slot, its documents)."""
    return (
        ev.element_id == entity_id
        or entity_id in (ev.conflict_key or "")
        or entity_id in (ev.context.get("entity"), ev.context.get("deployment"))
    )


def _claim(
    statement: str, status: EpistemicStatus, confidence: float, evs: Sequence[Evidence], intent: str
) -> Claim:
    ids = sorted({ev.evidence_id for ev in evs})
    digest = sha256_hex(canonical_json([statement, ids, status.value]))
    return Claim(
        claim_id="claim:" + digest[:16],
        statement=statement,
        epistemic_status=status,
        confidence=confidence,
        evidence_ids=ids,
        intent=intent,
    )


def _with(evidence: Sequence[Evidence], etype: str) -> list[Evidence]:
    # A tombstone in the pack (a retracted OWNS record an answer cites) supports nothing.
    return [ev for ev in evidence if etype in ev.evidence_types and ev.status == "active"]


def _validity(ev: Evidence) -> str:
    """` (valid A to B)` after a runbook or policy claim, or nothing when the document states
    no validity at all (an imported file: in force until replaced, nothing to repeat in every
    claim; records of other kinds keep saying it)."""
    if ev.valid_from is None and ev.valid_to is None:
        return ""
    return f" ({_valid_text(ev)})"


def _valid_text(ev: Evidence) -> str:
    end = iso_utc(ev.valid_to) if ev.valid_to else "open"
    if ev.valid_from is None:
        # An imported runbook often states no start: say so, rather than print "?".
        return f"valid to {end}, no start recorded"
    return f"valid {iso_utc(ev.valid_from)} to {end}"


def _through(ev: Evidence, etype: str) -> str:
    """For a service found over several hops of DEPENDS_ON (`etype` the way it was walked):
    who depends on whom, through whom, in the order of the chain. A dependent's path runs
    from the service asked about back to it ("svc:api-gateway depends on svc:payment-db
    through svc:checkout, svc:payment-api"); a dependency's out of the service asked about
    ("svc:checkout depends on svc:payment-db through svc:payment-api")."""
    path = ev.context.get("path")
    if not isinstance(path, list) or len(path) < 3:
        return ""
    names = [str(p) for p in path]
    if etype == "dependent":
        names.reverse()
    return f", so {names[0]} depends on {names[-1]} through {', '.join(names[1:-1])}"


# A source version an importer wrote: the file's commit or content hash.
_FILE_VERSION = re.compile(r"^(git|sha256):([0-9a-f]{12})[0-9a-f]*$")


def _version_words(ev: Evidence) -> str:
    """A runbook's version as the card names it: its own label (`v3`), else, for an
    imported file without one, the commit or content hash it was read from, short."""
    own = ev.props.get("runbook_version")
    if own is None and (at := re.search(r"@v(\d+)$", ev.element_id)):
        own = at.group(1)
    if own is not None and str(own).strip():
        return "v" + str(own).strip().removeprefix("v").removeprefix("V")
    match = _FILE_VERSION.match(ev.source_version or "")
    return f"{match.group(1)}:{match.group(2)}" if match else f"v{ev.version}"


def _versioned(ev: Evidence) -> str:
    """A runbook version as a claim names it, fact or inference: its id and its version as
    the card's `Runbook` line names it (`runbook:mimir-runbooks, sha256:b008c1d2ff90`), or
    the id alone when it ends with that version already (`runbook:payment-recovery@v3`)."""
    label = _version_words(ev)
    return ev.element_id if ev.element_id.endswith("@" + label) else f"{ev.element_id}, {label}"


def _holds_text(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    successor: Evidence | None = None,
) -> str:
    """`At <label>, <time> (<why>) and at as_of, <time>` for the instants a record holds at
    (less those where its successor, also admitted, holds instead)."""

    def holds(at: datetime) -> bool:
        return holds_at(ev, at) and not (successor is not None and holds_at(successor, at))

    parts = [f"{r.describe()} ({r.why})" for r in refs if holds(r.at)]
    if holds(as_of):
        parts.append(f"as_of, {iso_utc(as_of)}")
    if not parts:
        parts.append(f"as_of, {iso_utc(as_of)}")
    return "At " + " and at ".join(parts)


def _span_text(ev: Evidence, as_of: datetime) -> str:
    """`From A to B`, or `From A, still at as_of, <as_of>`, of a record's valid interval."""
    start = f"From {iso_utc(ev.valid_from)}" if ev.valid_from else "From the first record"
    if ev.valid_to is None:
        return f"{start}, still at as_of, {iso_utc(as_of)}"
    return f"{start} to {iso_utc(ev.valid_to)}"


def _was(ev: Evidence) -> str:
    """`is` of a version still in force (no end), else `was`."""
    return "is" if ev.valid_to is None else "was"


def _until(ev: Evidence, as_of: datetime, still: str) -> str:
    """How a record's span ends as seen at as_of: "no end recorded by as_of", "<still> at
    as_of" (it ends later), or "until <its end>"."""
    if ev.valid_to is None:
        return "no end recorded by as_of"
    if ev.valid_to > as_of:
        return f"{still} at as_of"
    return f"until {iso_utc(ev.valid_to)}"


def _when(value: datetime | None) -> str:
    return iso_utc(value) if value is not None else "an unknown time"


def _release_of(ev: Evidence) -> str | None:
    """The release a deployment-time record is about: itself, or its fact slot's subject."""
    return release_of(ev)


def _quote(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _change_id(ev: Evidence) -> str:
    """The change a record stands for: the release a release-time document is about, else
    the record itself."""
    return _release_of(ev) or ev.element_id


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _unfinished_why(stopped_by: str) -> str:
    """Why a search did not finish (`search_stopped_by`), and how to ask again."""
    if stopped_by == READ_FAILED:
        return (
            "a read of the run failed (see its tool calls: a query timed out or Neo4j refused "
            "it), so its search for this did not finish; ask again"
        )
    again = _LONGER_SEARCH.get(stopped_by)
    hint = f"; ask again with {again}" if again else ""
    return (
        f"the run stopped ({stopped_by}) with reads still planned, before its search "
        f"for this finished{hint}"
    )


def _stopped_words(unfinished_by: str, failed_reads: Sequence[str], searched: str) -> str:
    """Why the search of `searched` did not finish: its failed reads named in plain words,
    so this gap is theirs and `failed_read_gaps` adds no second one (before, "the run
    stopped (read_failed)" here and a gap naming the read beside it), else the stop reason."""
    if unfinished_by != READ_FAILED or not failed_reads:
        return f"the run stopped ({unfinished_by}) before its search of {searched} finished"
    return (
        f"a read of the run failed before its search of {searched} finished: "
        f"{'; '.join(failed_reads)} did not answer (see its tool calls: a query timed out or "
        "Neo4j refused it)"
    )


def _human(delta: timedelta) -> str:
    """`38 s`, `4 min 10 s`, `2 d 20 h 2 min 38 s`."""
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if not days and not hours:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")]
    return " ".join(f"{n} {unit}" for n, unit in parts if n)
