"""`derive_claims`: the claim rules run over a pack, and the gaps it assembles."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from investigator.change_period import (
    CHANGES_TEMPLATE,
    RELEASES_TEMPLATE,
    ROLLOUTS_TEMPLATE,
    TENANT_ROLLOUTS_TEMPLATE,
    CausesDropped,
    EventPeriod,
    WindowCut,
)
from investigator.claims.actions import action_step_claims, reported_action_claims
from investigator.claims.candidates import _rollout_taken_as_then, _sightings
from investigator.claims.causes import _candidate_causes, _correlation, _taken_release_facts
from investigator.claims.changes import (
    _changes_before,
    _changes_by_as_of,
    _last_changes_before,
    _with_change_records,
    period_change_times,
)
from investigator.claims.dependencies import _capped_walk_gaps, _retracted_dependency_claims
from investigator.claims.errors import (
    _asked_error_codes,
    _hindsight,
    _mechanisms_of_asked_errors,
    _names_an_error,
    _unseen_error_gaps,
    error_count_claims,
    error_state_claims,
)
from investigator.claims.incidents import (
    _affected_claims,
    _incident_duration_claims,
    _incident_facts,
    _incident_not_recorded,
    _named_only,
    _no_incident_found,
    _valid_by,
    incidents_outside_period_gaps,
    severity_history_claims,
)
from investigator.claims.model import Claim, ClaimSet, Confounder, EpistemicStatus, Verdict
from investigator.claims.ownership import (
    _correction_claims,
    _dated_in,
    _ended_record_gaps,
    _instant_correction_claims,
    _instant_retraction_claims,
    _other_kinds_claims,
    _owner_side,
    _owners_in_period,
    _period_retraction_claims,
    _split_kinds,
    _team_gaps,
    _team_retraction_claims,
    _uncovered_period_gaps,
    _unowned_instant_gaps,
    _unread_owner_gaps,
    _unrecorded_owned_gaps,
    _version_end,
)
from investigator.claims.releases import (
    FiringListRead,
    ReleaseRecordAnswer,
    _alert_firing_claims,
    _alert_unfound_gaps,
    _firing_list_claims,
    _firing_list_gaps,
    _firing_list_unread,
    _last_release_claims,
    _last_releases,
    _release_claims,
    _release_service,
    _releases_in_period,
    _rollout_claims,
    firing_times,
    listed_release_contents,
    named_release_gaps,
    policy_ended_by,
    release_policy_claims,
    release_record_answer,
    team_firing_claims,
)
from investigator.claims.reports import (
    ROLLBACK_ONLY_RECORDED,
    _cause_reports,
    _rollback_step,
    _rollbacks_recorded,
)
from investigator.claims.rollback import rollback_decision
from investigator.claims.runbooks import (
    _escalation_step,
    _in_force,
    _no_runbook_at_as_of_gaps,
    _served_over,
    _set_aside_text,
    _text_owner_gap,
    _text_runbook_owners,
    _undated_in_force,
    _undated_then,
)
from investigator.claims.status import (
    StatusReads,
    _incident_list_claims,
    _service_status_claims,
    _written_list_span,
    deploy_safety_gaps,
)
from investigator.claims.timeline import response_metric_claims, timeline_claims
from investigator.claims.traces import (
    TraceRead,
    answered_by_traces,
    trace_gaps,
    trace_list_claims,
    words_left_by_traces,
)
from investigator.claims.wording import (
    _FIRST_SEEN_KEYS,
    UNKNOWN_NOT_ABSENT,
    _claim,
    _holds_text,
    _human,
    _instant,
    _label,
    _span_text,
    _through,
    _title,
    _unfinished_why,
    _valid_text,
    _validity,
    _versioned,
    _was,
    _when,
    _with,
    checks_not_run_words,
)
from investigator.evidence import (
    Evidence,
    as_held,
    iso_utc,
    supported_evidence_types,
    version_named,
)
from investigator.gate import Conflict
from investigator.incident_reference import speaks_of_incident
from investigator.ownership_history import (
    SINCE_THEN,
    OwnershipPeriod,
    asked_kinds,
    asks_team_firings,
    entity_cut_text,
    history_cut_text,
)
from investigator.planner import (
    CompetingCauseChecks,
    asked_in_another_language,
    asks_changes_naming_nothing,
    asks_firings_anywhere,
    asks_incident_duration,
    asks_service_period_events,
    asks_severity_change,
    errors_read_only_for_then,
    extract_mentions,
    name_alone,
    period_events_asked,
    runbook_search_text,
    said_then_at_most,
    service_period_focus,
    unread_record_words,
    unread_words,
    unrecorded_asks,
)
from investigator.record_time import recorded_after, undated
from investigator.rubric import (
    MISSING_DESCRIPTIONS,
    Intent,
    MissingEvidence,
    missing_evidence,
    unread_question_gap,
    unread_records_gap,
    unrecorded_evidence,
)
from investigator.runbook_period import uncovered_by_versions
from investigator.runbook_sections import (
    SECTION_EXCERPT,
    SectionFocus,
    alert_section,
    budget_cut_words,
    card_focus,
    pointed_at,
    question_focus,
    runbook_steps,
)
from investigator.timeline import (
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    EPISODE,
    EventSide,
    ReferenceTime,
    holds_at,
    incident_span,
    instant,
    passed_over_error,
    reference_times,
    response_metrics,
    time_references,
)

# The `error_first_seen` gap of a question that names no service, alert or error code (and
# was given no --service): which errors it asks about is unknown, so none was looked for.
NO_ERRORS_NAMED = (
    "the question names no service, alert or error code, so no errors were looked for: "
    'name the service (--service X) or the error code ("What changed before the X '
    'errors?")'
)


# The ownership and mechanism gaps of a question that names nothing to look them up for
# ("who owned it then", "what broke", no --service): nothing was searched, so "no OWNS
# relationship" or "no mechanism evidence" would state a false reason.
NOTHING_NAMED = (
    "the question names no service, error code, release or incident (and no --service was "
    "given), so no {what} was looked for: name one (--service X, or e.g. "
    '"{example}")'
)


# The same gaps when what the question's words found had not started by as_of (the payments
# incident asked about at 09:00, before it began at 10:02): it names something, recorded
# later and not followed, so "names no service" would be false.
STARTED_LATER = (
    "what the question's words found had not started by as_of {as_of}: {later} "
    "(recorded later, not followed), so no {what} was looked for: ask at a later --as-of, or "
    "name what held then (--service X)"
)


# The gaps of what is read for a service when the one named (--service, or the question's
# words) resolved to nothing the subject may see and no other service was read: nothing was
# looked up for it, so "no release for the service" or "names no service" would be false.
NAME_UNRESOLVED = (
    "{names} resolved to nothing this subject may see (its close ids, if any, are suggested "
    "with it), so no {what} was looked for: ask with a visible id"
)


# The same under a --known-at before as_of: the KG as known then holds no record of the
# name that the subject may read; one made later is not read (the runbook card's words).
NAME_UNRECORDED = (
    "{names} matched nothing this subject may read that was recorded by known_at {known_at} "
    "(a record made later is not read then), so no {what} was looked for: ask with a later "
    "--known-at, or a visible id"
)


_UNRESOLVED_GAPS = {
    "deployment_time": "release",
    "error_first_seen": "first error",
    "affected_service": "error of a service",
    "ownership": "owner",
    "dependency": "dependency",
    "dependent": "dependent",
    "incident_report": "incident",
    "alert_firing": "alert firing",
}


NOTHING_NAMED_GAPS = {
    "ownership": ("owner", "who owned X then?"),
    "mechanism": ("mechanism", "what broke X?"),
    "alert_firing": ("alert firing", "which alerts fired on X?"),
}


# What a question's subject is read from: a service, incident, error, release, alert or a
# runbook its words found ("who owns the runbook for ledger sync lag?").
_SUBJECT_ID = re.compile(r"(?:^|\|)(?:svc|inc|err|deploy|alert|runbook):")


def _asks_a_time(question: str | None) -> bool:
    """Whether the question's words name a time, placed or not ("since the incident",
    "yesterday"), other than a bare "then" (the first error, else as_of)."""
    return not said_then_at_most(question or "")


def derive_claims(
    intents: Sequence[str],
    evidence: Sequence[Evidence],
    *,
    as_of: datetime,
    conflicts: Sequence[Conflict] = (),
    service_id: str | None = None,
    question: str | None = None,
    competing_checks: CompetingCauseChecks | None = None,
    references: Sequence[ReferenceTime] | None = None,
    found_by_text: Sequence[str] = (),
    runbook_services: Sequence[tuple[str, str]] = (),
    search_stopped_by: str | None = None,
    ownership_period: OwnershipPeriod | None = None,
    version_period: OwnershipPeriod | None = None,
    versions_cut: Sequence[tuple[str, int]] = (),
    event_period: EventPeriod | None = None,
    firing_period: EventPeriod | None = None,
    ownership_records: Sequence[Evidence] = (),
    ownership_cut: Sequence[tuple[str, int]] = (),
    owners_cut: Sequence[tuple[str, int, datetime | None]] = (),
    owners_asked: Sequence[str] = (),
    not_valid_then: Sequence[str] = (),
    owners_unread: Sequence[str] = (),
    alerts_unfound: Sequence[tuple[str, bool]] = (),
    owners_dropped: Sequence[Evidence] = (),
    team_words: str | None = None,
    teams: Sequence[str] = (),
    window_cuts: Sequence[WindowCut] = (),
    releases_unread: bool = False,
    cause_cuts: Sequence[WindowCut] = (),
    team_cuts: Sequence[WindowCut] = (),
    causes_dropped: Sequence[CausesDropped] = (),
    period_was_read: bool = False,
    services_read: Sequence[str] = (),
    unresolved_names: Sequence[str] = (),
    started_later: Mapping[str, datetime] | None = None,
    errors_later: Mapping[str, datetime] | None = None,
    known_at: datetime | None = None,
    walks_capped: Sequence[tuple[str, str, int, bool]] = (),
    incident_lists_cut: Sequence[tuple[str, str, int]] = (),
    firing_lists: Sequence[FiringListRead] = (),
    releases_taken: Sequence[str] = (),
    incident_records: Sequence[Evidence] = (),
    ended_before: Sequence[Evidence] = (),
    dependency_tombstones: Sequence[Evidence] = (),
    firings_read_of: Sequence[str] = (),
    trace_reads: Sequence[TraceRead] = (),
    period_retractions: Sequence[Evidence] = (),
    status_reads: StatusReads | None = None,
    failed_reads: Sequence[str] = (),
    cause_reads_failed: Sequence[str] = (),
) -> ClaimSet:
    """Apply the claim rules of each intent to the pack evidence (pure, deterministic).

    `question` resolves time words ("then" = the anchor event; investigator.timeline): a
    state claim then names the instant it holds at and why. `competing_checks` says which
    competing-cause checks ran; without all of them a correlation verdict stays `uncertain`.
    `found_by_text`: the runbooks the loop chose by the question's words alone (their claim
    says so, an `inference`, with their owner and what no record ties); `runbook_services`:
    (runbook, service) for the services those runbooks apply to, whose owner is theirs.
    `search_stopped_by`: the stop reason when the retrieval loop stopped with reads
    still planned (`RetrievalOutcome.cut_short`), or `READ_FAILED` when one of its reads
    failed: nothing is then said to be not known, and each required gap says that the
    search did not finish.
    `ownership_period`: the period the question asks the owners over (each owner
    is stated by its valid interval), `ownership_records` the older records of their OWNS
    edges (a correction of who was recorded is stated too; ownership_history.py); for a
    question about one time, every record of a service with a superseded one (each
    correction of who was recorded at an instant asked is stated);
    `ownership_cut`: (service, rows read) of each service whose owners over the period were
    more than one read holds (a required gap says where the history was cut); `owners_cut`
    the same of each alert or runbook version whose `owners_of` read (oldest first) was cut.
    A stretch of a period asked at which no owner is recorded is a required gap.
    `owners_asked`: the alerts and runbook versions whose own owners were read (`owners_of`),
    `not_valid_then` those whose own record the gate refused as not valid at as_of or a time
    asked: one with no owner admitted is a required gap (another entity's owner is no answer).
    `owners_unread`: those whose `owners_of` read failed: who owns them is unknown, never
    absent, a required gap each (the owner of a service it fires on is no answer either).
    `alerts_unfound`: (service, read failed) of each service whose alerts were read for a
    question asking the owner of an alert it does not name ("who owns the alert that fired
    on checkout?") and none was found (or the read failed): a required gap each, since the
    service's owner is not the alert's.
    `owners_dropped`: OWNS records the run read and admitted but the pack dropped for the
    evidence budget: an owner gap they would fill says so, never that no record holds.
    `version_period`: the period a runbook or policy question asks the versions over
    (runbook_period.py): each dated version in force at some instant of it is stated by its
    valid interval; `versions_cut`: (anchor, rows read) of each read of the versions cut at
    its row cap, a required gap each (versions of the period may be past it).
    `team_words`: the words naming the team a question asks about from its side
    (`asked_team`), `teams` the teams they linked to: what each owned is stated (its records
    say nothing of who owned the rest, so no owner gap is drawn from them); none linked is a
    required gap, said alike for a team that does not exist and one the subject may not read.
    `window_cuts`: each read of releases or change events cut at its row cap, a required gap
    each for a change question (change_period.py); `releases_unread`: no releases were read
    (the run stopped first), said beside a period's changes. `cause_cuts`: each read of the
    window before the first error (or of the earliest releases) cut at its row cap: a
    required gap each, and no correlation verdict stronger than `uncertain`. `causes_dropped`:
    the releases and change events of that window read but left out for the evidence budget,
    likewise a required gap each and no verdict stronger than `uncertain`. `team_cuts`:
    each read of a team's OWNS edges from its side cut at its row cap, a required gap each.
    `period_was_read`: the period a change question asks over was read, so its answer needs
    no first error (no `error_first_seen` gap of its own). In every answer the claims of
    releases and change events are listed by when they happened (then the record's id),
    ahead of the untimed claims of their intent and status.
    `ended_before`: Service and OWNS records the gate set aside only as ended before as_of
    (`EvidenceGate.ended_before`): the owner gap says why no owner holds then.
    `dependency_tombstones`: retracted DEPENDS_ON records between the services a dependency
    question walked from, each stated (`_retracted_dependency_claims`).
    `period_retractions`: the tombstones of DEPENDS_ON and OWNS records retracted in a change
    question's period, each a change of it (claims.changes._retractions_in_period), placed
    by its time among the releases as every record change of the period is
    (`period_change_times`).
    `services_read`: the services the run found (the question's words, `--service`, or a
    record in force at as_of): the question named one, so its gaps never say it named none.
    `started_later`: what the question's words found that starts after as_of (id -> its
    start), not followed: a gap of a question naming nothing else says so ("recorded later").
    `errors_later`: error codes whose first sighting the run read starts after as_of (code id
    -> that start): a mechanism record about those errors alone, none of them known at
    as_of, is held back (`_hindsight`), and a required `error_first_seen` gap says why.
    `unresolved_names`: the --service and the question's names that resolved to nothing the
    subject may see; with no service read and no first error, the service's gaps say so
    (nothing was looked up for them), not "none found" or "names no service".
    `known_at`: what the KG knew when the run read it, named in a gap that says no runbook
    version is in force at as_of (a later version may have been recorded since).
    `incident_records`: every record of each incident admitted known at known_at (read for a
    question asking how its severity changed): the severities they recorded are compared.
    `event_period`: the period a change or release question's words before or after an
    event name, its event placed ("the day before the incident"; change_period.py): the
    changes in it are listed, none outside it; "before the release" alone lists the last
    release of each service asked about by then and the other changes of the day before.
    `releases_taken`: the releases a correlation question naming no service was read as
    asking about, when several were (`RetrievalLoop._take_release`): each is stated.
    `status_reads`: the services a state at as_of was read for, part by part (`status_reads`
    of the run's tool calls); a part not read is unknown (None: none was read).
    `failed_reads`: the run's failed reads in plain words (`failed_reads_named`), named in a
    change period's unfinished-search gap, which is then their one gap;
    `cause_reads_failed` those of releases or changes: no correlation verdict above
    uncertain rests on them.
    """
    intent_set = {Intent(i) for i in intents}
    # "What happened to payment-api yesterday?": its firings and releases, not those of the
    # services its reads met on the way.
    evidence = service_period_evidence(evidence, _period_services(question, services_read))
    claims: list[Claim] = []
    confounders: list[Confounder] = []
    verdict: Verdict | None = None
    as_of_text = iso_utc(as_of)
    refs = (
        list(references)
        if references is not None
        else reference_times(
            time_references(question, as_of),
            evidence,
            as_of=as_of,
            services=[service_id] if service_id else (),
        )
        if question
        else []
    )

    def held_at(ev: Evidence) -> str:
        """Which instants a state record holds at: `as_of` alone, or labelled references."""
        if not refs:
            return f"At {as_of_text}"
        return _holds_text(ev, refs, as_of)

    def held_somewhere(ev: Evidence) -> bool:
        # A record admitted for an instant the answer no longer names (a stand-in "then"
        # dropped when the search stopped early) holds at nothing asked: no claim says so.
        return holds_at(ev, as_of) or any(holds_at(ev, r.at) for r in refs)

    # "Which services did X own?": the other kinds X owned are counted in a claim of their
    # own, not listed among the services.
    kinds = asked_kinds(question or "") if team_words is not None else None
    listed, other_kinds = _split_kinds(_with(evidence, "ownership"), kinds)
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is not None:
        owners = _with(evidence, "ownership")
        claims += _owners_in_period(listed, ownership_period, as_of, held_at)
        claims += _other_kinds_claims(
            other_kinds,
            kinds,
            lambda ev: (
                f"In the period asked ({ownership_period.why})"
                if ownership_period.overlaps(as_held(ev))
                else held_at(as_held(ev))
            ),
        )
        claims += _correction_claims(owners, ownership_records, ownership_period)
        claims += _period_retraction_claims(evidence, ownership_records, ownership_period)
    elif Intent.OWNERSHIP_AT_TIME in intent_set:
        named_instants = [r.at for r in refs if r.kind != "as_of"]

        def named_version_only(ev: Evidence) -> bool:
            # "Which team owned runbook:x@v3?" after v3 was superseded: said over its life.
            held = as_held(ev)
            return (
                not named_instants
                and not held_somewhere(held)
                and version_named(question or "", ev)
            )

        def stated_then(ev: Evidence) -> bool:
            held = as_held(ev)  # a team's record of a runbook version: no longer than it
            if named_version_only(ev):
                return True
            if not held_somewhere(held):
                return False
            # What the team owned at another time than the one asked is not stated.
            return not (
                ev.context.get("asked_team")
                and named_instants
                and not any(holds_at(held, at) for at in named_instants)
            )

        claims += _other_kinds_claims(
            [ev for ev in other_kinds if stated_then(ev)], kinds, lambda ev: held_at(as_held(ev))
        )
        for ev in listed:
            if not stated_then(ev):
                continue
            when = (
                f"While {ev.context.get('owned')} was in force"
                if named_version_only(ev)
                else held_at(as_held(ev))
            )
            claims.append(
                _claim(
                    f"{when}: {ev.content} ({_valid_text(ev)}{_version_end(ev)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.OWNERSHIP_AT_TIME.value,
                )
            )
        claims += _instant_correction_claims(
            _with(evidence, "ownership"), ownership_records, refs, as_of
        )
        claims += _instant_retraction_claims(evidence, ownership_records, refs, as_of)
        claims += _team_retraction_claims(evidence, ownership_records, refs, as_of)
    unknown_then: list[tuple[str, datetime]] = []
    text_gaps: list[MissingEvidence] = []
    firing_list_gaps: list[MissingEvidence] | None = None
    if Intent.APPLICABLE_RUNBOOK in intent_set:
        focus = question_focus(question or "")
        runbooks = _with(evidence, "runbook")
        for ev in runbooks:
            if pointed_at(ev, runbooks) is not None:
                continue  # a "moved to" stub: the runbook it points at is the one in force
            # A runbook of several alerts: the section of the alert the question names.
            section = alert_section(ev, focus)
            if section is None and SECTION_EXCERPT not in ev.transformations:
                # A whole file: where its steps are, as the card's Locator line gives them.
                section = runbook_steps(ev, card_focus(ev, focus)).locator
            where = f" [{section or ev.locator}]" if section or ev.locator else ""
            if (cut := budget_cut_words(ev)) is not None:
                # Too long for the budget: the part the card shows, and how to read the rest.
                where = f" [{ev.locator}: {cut}]"
            elif SECTION_EXCERPT in ev.transformations and "#" not in (ev.locator or ""):
                # The page's opening text (`alert_excerpt`): as the card, say none is about it.
                asked = ", ".join(focus.names)
                where = f" [{ev.locator}: its opening text; none of its sections is about {asked}]"
            tie = _named_only(ev, found_by_text)
            if undated(ev) and refs:
                # "Then", or a time written in the question: each version at the instants it
                # was in force (that time and as_of), by its record times.
                then = _undated_then(ev, refs, as_of, runbooks, tie, where)
                if then is not None:
                    claims += then[0]
                    unknown_then += [(ev.element_id, at) for at in then[1]]
                    continue
            over = _served_over(ev, runbooks, as_of)
            if recorded_after(ev, as_of):
                # An undated version recorded after as_of: nothing says it was the one in
                # force then (record_time.py), so no fact says so.
                claims.append(
                    _claim(
                        f"Runbook {_title(ev)} ({_versioned(ev)}){tie} states no validity and "
                        f"its earliest version was recorded at {_when(ev.recorded_at)}, after "
                        f"{iso_utc(as_of)}: this is that version; what it said at "
                        f"{iso_utc(as_of)} is not known{_set_aside_text(ev, over)}{where}",
                        EpistemicStatus.INFERENCE,
                        0.5,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                if over is None:
                    # (With a trusted runbook in force then claimed, which applies is known.)
                    unknown_then.append((ev.element_id, as_of))
                continue
            if over is not None and ev.trust != "trusted":
                # An untrusted page of the alert or error code beside the trusted runbook in
                # force on its service (e29-qa finding 3): never a fact over it.
                claims.append(
                    _claim(
                        f"Runbook {_title(ev)} ({_versioned(ev)}){tie} names it, recorded "
                        f"{_when(ev.recorded_at)}{_set_aside_text(ev, over)}{where}",
                        EpistemicStatus.INFERENCE,
                        0.5,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                continue
            by_text = ev.context.get("anchor") in found_by_text
            if version_period is not None and not by_text and _dated_in(ev, version_period):
                claims.append(
                    _claim(
                        f"{_span_text(ev, as_of)} ({version_period.why}): Runbook {_title(ev)} "
                        f"({_versioned(ev)}){tie} {_was(ev)} the version in force{where}",
                        EpistemicStatus.FACT,
                        0.95,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                continue
            when = _undated_in_force(ev, as_of) or _in_force(ev, refs, as_of, runbooks)
            if by_text and budget_cut_words(ev) is None:
                # Where its steps are, as the card's Locator line gives them.
                steps = runbook_steps(ev, SectionFocus(text=runbook_search_text(question or "")))
                where = f" [{steps.locator or ev.locator}]" if steps.locator or ev.locator else ""
            claims.append(
                _claim(
                    f"Runbook {_title(ev)} ({_versioned(ev)}){tie} is the version "
                    f"in force {when}{_validity(ev)}{where}"
                    + _rollback_step(ev, question or "")
                    + _escalation_step(ev, question or ""),
                    # That it applies rests on its words matching, not on a record.
                    EpistemicStatus.INFERENCE if by_text else EpistemicStatus.FACT,
                    0.7 if by_text else 0.95,
                    [ev],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
        text_owners = _text_runbook_owners(
            runbooks, evidence, found_by_text, runbook_services, held_at, question or ""
        )
        if Intent.OWNERSHIP_AT_TIME not in intent_set:
            claims += text_owners.claims  # else claimed as every owner is, below
        text_gaps = text_owners.missing
    # Each policy's "in force at as_of" fact, by its evidence id (dropped below when the
    # same record is stated governing the release asked about at its own time).
    policy_now: dict[str, Claim] = {}
    if Intent.APPLICABLE_POLICY in intent_set:
        policies = _with(evidence, "policy")
        for ev in policies:
            where = f" [{ev.locator}]" if ev.locator else ""
            if version_period is not None and _dated_in(ev, version_period):
                claims.append(
                    _claim(
                        f"{_span_text(ev, as_of)} ({version_period.why}): Policy {_title(ev)} "
                        f"({ev.element_id}) {_was(ev)} in force{where}",
                        EpistemicStatus.FACT,
                        0.95,
                        [ev],
                        Intent.APPLICABLE_POLICY.value,
                    )
                )
                continue
            ended = "" if refs else policy_ended_by(ev, policies, as_of)
            policy_now[ev.evidence_id] = _claim(
                f"Policy {_title(ev)} ({ev.element_id}) is not in force at {iso_utc(as_of)}"
                f"{_validity(ev)}{where}: {ended}"
                if ended
                else f"Policy {_title(ev)} ({ev.element_id}) is in force "
                f"{_in_force(ev, refs, as_of, policies)}{_validity(ev)}{where}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.APPLICABLE_POLICY.value,
            )
            claims.append(policy_now[ev.evidence_id])
    timed = _with(evidence, "deployment_time")
    # A rollout under way at an instant asked about is not "the release" then: said as such.
    rolling = _rollout_claims(timed, refs, as_of)
    release_record = ReleaseRecordAnswer()
    named_release_missing: list[MissingEvidence] = []
    if Intent.RELEASE_LOOKUP in intent_set:
        # Its finish lies after as_of: no fact states it.
        released = [ev for ev in timed if ev not in rolling[1]]
        asked_period = (
            event_period.named()
            if event_period is not None
            else time_references(question or "", as_of).period
        )
        if event_period is not None and event_period.last_only:
            # "What was deployed before release X?": the last release by then.
            released = _last_releases(released, event_period.end, services_read)
        elif asked_period is not None and asked_period[0].at <= as_of:
            # "Which releases of X in July 2026?": those finished in the period, not the
            # latest by as_of.
            released, release_gaps = _releases_in_period(released, asked_period, as_of)
            text_gaps = [*text_gaps, *release_gaps]
        else:
            claims += _last_release_claims(released, as_of, services_read, question or "")
        claims.extend(_release_claims(released))
        # What it changed, who deployed it, its approval: its own record's words, quoted.
        release_record = release_record_answer(released, question or "", as_of, services_read)
        claims += release_record.claims
        # Asked whether it was approved: the rule governing its service then, and whether
        # what it changed falls under it (h35).
        governing = release_policy_claims(
            released, _with(evidence, "policy"), question or "", as_of, services_read
        )
        # The rule in force at the release's time is what an auditor needs: the same record
        # "in force at as_of" only repeated it; a policy differing at as_of is still said.
        said = {
            i
            for c in governing
            if c.epistemic_status is EpistemicStatus.FACT
            for i in c.evidence_ids
        }
        claims = [c for c in claims if not any(c is policy_now.get(i) for i in said)]
        claims += governing
        named_release_missing = named_release_gaps(timed, question or "")
        text_gaps = [*text_gaps, *release_record.gaps, *named_release_missing]
    claims += rolling[0]
    # Each DEPENDS_ON record read either way states its direction (and, a dependent found
    # over several hops, through whom).
    for asked, etype in ((Intent.DEPENDENCIES, "dependency"), (Intent.DEPENDENTS, "dependent")):
        if asked not in intent_set:
            continue
        for ev in _with(evidence, etype):
            if not held_somewhere(ev):
                continue
            claims.append(
                _claim(
                    f"{held_at(ev)}: {ev.content} ({_valid_text(ev)}){_through(ev, etype)}",
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    asked.value,
                )
            )
    dependency_intent = next(
        (i for i in (Intent.DEPENDENCIES, Intent.DEPENDENTS) if i in intent_set), None
    )
    if dependency_intent is not None:
        claims += _retracted_dependency_claims(dependency_tombstones, dependency_intent.value)
    if Intent.ALERT_FIRING in intent_set:
        written = time_references(question or "", as_of)
        asked_period = written.period or (firing_period.named() if firing_period else None)
        # "Which alerts fired before the incident?": those by the instant its words name.
        before = (
            min((r.at for r in refs if r.kind == "event" and r.at <= as_of), default=None)
            if asked_period is None and written.side is EventSide.BEFORE
            else None
        )
        fired_claims, fired_gaps = (
            # "What alerts fired yesterday?" naming no service: every firing of its period.
            _firing_list_claims(
                _with(evidence, "alert_firing"), question or "", as_of, firing_lists, asked_period
            )
            if firing_lists
            else _alert_firing_claims(
                _with(evidence, "alert_firing"), question or "", as_of, asked_period, before
            )
        )
        firing_list_gaps = fired_gaps if firing_lists else None
        if (
            not firing_lists
            and not unresolved_names
            and asks_firings_anywhere(question or "", service_id)
        ):
            # Naming no service, its firings unread: its time after as_of, or not placed.
            firing_list_gaps = _firing_list_unread(question or "", as_of) or None
            if firing_list_gaps is not None:
                fired_claims = []  # a text-found service's firings are not of that time
        if team_words is not None and asks_team_firings(question or "", intent_set):
            # "Which alerts fired for the payments team?": its services' firings, each while
            # the team owned the service; never every firing read (h33b-firings).
            fired_claims, fired_gaps = team_firing_claims(
                fired_claims, evidence, teams, firings_read_of, as_of
            )
        if not fired_claims and not fired_gaps:
            fired_gaps = service_firing_gaps(
                question or "", as_of, _period_services(question, services_read)
            )
        claims.extend(fired_claims)
        text_gaps = [*text_gaps, *fired_gaps]
    if Intent.INCIDENT_LIST in intent_set:
        incidents_listed, list_gaps = _incident_list_claims(
            evidence,
            question or "",
            as_of,
            incident_lists_cut,
            _period_services(question, services_read),
        )
        claims.extend(incidents_listed)
        text_gaps = [*text_gaps, *list_gaps]
    if Intent.SERVICE_STATUS in intent_set:
        status_claims, status_gaps = _service_status_claims(
            evidence,
            service_id,
            as_of,
            known_at,
            services_read,
            search_stopped_by is not None,
            status_reads,
        )
        claims.extend(status_claims)
        safety = deploy_safety_gaps(
            question or "", evidence, service_id, as_of, services_read, status_reads
        )
        text_gaps = [*text_gaps, *status_gaps, *safety]
    # A timeline's claims keep the order they are listed in (time, then record id).
    timeline_order: dict[str, int] = {}
    if Intent.TIMELINE in intent_set:
        # One fact per event of the incident's window, in time order (claims.timeline).
        timeline_facts, timeline_gaps = (
            # "How long did it take to detect the incident?": the span between two events.
            response_metric_claims(
                evidence, as_of, metrics, search_stopped_by is not None, incident_records
            )
            if (metrics := response_metrics(question or ""))
            else timeline_claims(evidence, as_of)
        )
        timeline_order = {c.claim_id: i for i, c in enumerate(timeline_facts)}
        claims.extend(timeline_facts)
        text_gaps = [*text_gaps, *timeline_gaps]
    if Intent.ENTITY_LOOKUP in intent_set:
        for ev in _with(evidence, "entity"):
            # A relationship's text names its type and both ends ("svc:a AFFECTED_BY inc:b"):
            # said alone (before, after its type and key, the type printed twice:
            # "AFFECTED_BY AFFECTED_BY|svc:a|inc:b: svc:a AFFECTED_BY inc:b"; explorer e29 m9).
            statement = (
                ev.content
                if ev.kind == "relationship" and ev.content
                else f"{ev.type or 'Entity'} {ev.element_id}: {ev.content or _label(ev)}"
            )
            claims.append(
                _claim(
                    statement,
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    Intent.ENTITY_LOOKUP.value,
                )
            )
    if Intent.INCIDENT_LOOKUP in intent_set:
        for ev in _with(evidence, "incident_report"):
            if ev.type != "Incident":
                continue
            claims.append(
                _claim(
                    f"Incident {ev.element_id}: {_label(ev)}{_incident_facts(ev, as_of)} "
                    f"({_valid_by(ev, as_of)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.INCIDENT_LOOKUP.value,
                )
            )
        claims.extend(_affected_claims(_with(evidence, "affected_service"), as_of))
        if asks_incident_duration(question or ""):
            claims.extend(_incident_duration_claims(_with(evidence, "incident_report"), as_of))
        if asks_severity_change(question or ""):
            # "When was it upgraded to SEV1?": its records' severities compared.
            claims += severity_history_claims(
                _with(evidence, "incident_report"),
                incident_records,
                question or "",
                as_of,
                known_at,
                unread=search_stopped_by is not None,
            )
    firsts = _with(evidence, "error_first_seen")
    timeline = {Intent.INCIDENT_LOOKUP, Intent.ERROR_TIMELINE, Intent.DEPLOYMENT_CORRELATION}
    if intent_set & timeline:
        # A question naming no error is about the latest episode's errors: one first seen a day
        # or more before the latest one is of no episode of it, and is said to be so.
        by_as_of = [(t, ev) for t, ev in _sightings(firsts) if t <= as_of]
        latest, latest_ev = max(
            by_as_of, key=lambda p: (p[0], p[1].element_id), default=(None, None)
        )
        named_codes = _asked_error_codes(question)
        only_for_then = errors_read_only_for_then(question or "")
        # Read only to place the event of a period asked ("what was deployed the day before
        # the incident?"): the errors are no change of the period, so not stated.
        # Read only to place the words' event (the errors of "before the incident"): no answer
        # of their own to a change or an alert question.
        placing_only = only_for_then and (
            event_period is not None or Intent.ALERT_FIRING in intent_set
        )
        for ev in [] if placing_only else _firsts_said(firsts, question or ""):
            at = _instant(ev, _FIRST_SEEN_KEYS)
            when = f" first seen at {iso_utc(at)}" if at else ""
            if (taken := passed_over_error(ev, refs)) is not None:
                # The Time line says this error is "also found, not taken" for "then": read
                # only to place "then" ("who owned payment-api then?"), it is no answer (before,
                # the PAY-1002 error of 2025 was stated beside the owner at the rollout of
                # 09:55:12); asked for otherwise, it is said not to be that moment.
                if only_for_then:
                    continue
                words = taken.why.removeprefix("the question says ")
                when += f" (not what {words} is taken as)"
            if at and latest and latest_ev and not named_codes and latest - at > EPISODE:
                if speaks_of_incident(question or "") and not intent_set & (
                    timeline - {Intent.INCIDENT_LOOKUP}
                ):
                    continue  # "when did the incident end?": a year-old error is not of it
                when += (
                    f" ({_human(latest - at)} before {_label(latest_ev)} was first seen at "
                    f"{iso_utc(latest)}: an older error, not of that episode)"
                )
            claims.append(
                _claim(
                    f"{_label(ev)}{when}: {ev.content}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    sorted(i.value for i in intent_set & timeline)[0],
                )
            )
    mechanisms = [ev for ev in _with(evidence, "mechanism") if ev.trust == "trusted"]
    # Evidence about one error is no mechanism of another: only the mechanisms of the time of
    # the errors the question names are read (PAY-1002's cause is not PAY-4097's postmortem).
    mechanisms, unbound_mechanism_gap = _mechanisms_of_asked_errors(mechanisms, firsts, question)
    # A record explaining errors that had not happened at as_of is hindsight: not claimed.
    mechanisms, hindsight_gap = _hindsight(mechanisms, firsts, question, errors_later, as_of)
    # The trusted documents that record no mechanism yet name a change as the cause (a draft
    # postmortem), held to the same errors and times as the mechanism records.
    reports, _ = _mechanisms_of_asked_errors(_cause_reports(evidence), firsts, question)
    reports, _ = _hindsight(reports, firsts, question, errors_later, as_of)
    correlation_gaps: list[MissingEvidence] = []
    correlation_drawn = True
    if Intent.DEPLOYMENT_CORRELATION in intent_set:
        correlation = _correlation(
            evidence,
            firsts,
            mechanisms,
            conflicts,
            as_of,
            competing_checks,
            question,
            # No errors looked for (nothing named, no --service): "no first-seen error is
            # known" would state what was never searched (e31-qa finding 2); the gap says it.
            searched=search_stopped_by is None
            and not _no_errors_looked_for(firsts, service_id, question, services_read),
            then_rollout=_rollout_taken_as_then(evidence, refs, as_of),
            reports=reports,
            known_at=known_at,
            asked=services_read,
            cause_reads_failed=cause_reads_failed,
        )
        verdict, confounders = correlation.verdict, correlation.confounders
        correlation_drawn = correlation.drawn
        claims.extend(correlation.claims)
        claims.extend(_taken_release_facts(correlation.claims, evidence, releases_taken, as_of))
        correlation_gaps = correlation.missing
    if Intent.ROOT_CAUSE in intent_set:
        if unbound_mechanism_gap is not None and not mechanisms:
            text_gaps = [*text_gaps, unbound_mechanism_gap]
        for ev in mechanisms:
            claims.append(
                _claim(
                    f"Mechanism: {ev.content}",
                    EpistemicStatus.INFERENCE,
                    0.8,
                    [ev],
                    Intent.ROOT_CAUSE.value,
                )
            )
        if Intent.DEPLOYMENT_CORRELATION not in intent_set:
            causes = _candidate_causes(
                evidence,
                firsts,
                mechanisms,
                competing_checks,
                as_of,
                search_stopped_by,
                reports,
                failed_reads,
                cause_reads_failed,
            )
            claims.extend(causes.claims)
            confounders = causes.confounders
            correlation_gaps = causes.missing
    changes_by_as_of = None
    if Intent.CHANGE_HISTORY in intent_set and not intent_set & {
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ROOT_CAUSE,
    }:
        changes = _changes_before(
            evidence,
            firsts,
            mechanisms,
            competing_checks,
            as_of,
            search_stopped_by,
            event_period.named()
            if event_period is not None
            else time_references(question or "", as_of).period,
            releases_unread,
            names_an_error=_names_an_error(question),
            then_rollout=_rollout_taken_as_then(evidence, refs, as_of),
            reports=reports,
            services=services_read,
            retractions=period_retractions,
            failed_reads=failed_reads,
        )
        if event_period is not None and event_period.last_only:
            # "What changed before the release?": the last changes before it.
            changes = _last_changes_before(
                evidence, event_period, as_of, search_stopped_by, services_read, failed_reads
            )
        changes_by_as_of = (
            _changes_by_as_of(
                evidence,
                firsts,
                as_of,
                services_read,
                unnamed=asks_changes_naming_nothing(sorted(intent_set), question or "", service_id),
            )
            if not changes.claims
            and event_period is None
            and not _names_an_error(question)
            # A time asked ("since the incident", "then") is never answered by another's.
            and not _asks_a_time(question)
            else None
        )
        if changes_by_as_of is not None:
            # "What changed on risk-engine?", a service with no error known: what was read
            # before as_of, no first error dating it (its gap is said, not required).
            changes = changes_by_as_of
        claims.extend(changes.claims)
        # "Any config changes on X?": what each release listed changed, its record's words.
        claims += listed_release_contents(
            changes.claims, evidence, question or "", as_of, services_read
        )
        confounders = changes.confounders
        correlation_gaps = changes.missing
    supported = supported_evidence_types(evidence)
    missing = missing_evidence(sorted(i.value for i in intent_set), supported)
    missing += correlation_gaps
    missing += text_gaps
    if period_events_asked(question or ""):
        missing = precise_gaps_only(missing, text_gaps)
    if named_release_missing:
        # The release named and not found, by its name: the rubric's "no release time for
        # the service" beside it said less.
        missing = precise_gaps_only(missing, named_release_missing)
    if Intent.ROOT_CAUSE in intent_set:
        missing = [_with_change_records(m, evidence) for m in missing]
        if hindsight_gap is not None:
            missing = [
                m for m in missing if not (m.evidence_type == "error_first_seen" and m.required)
            ]
            missing.append(hindsight_gap)
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is not None:
        # A history cut by the row cap is no complete answer: the gap says where, and how
        # to ask for the rest.
        owners = _with(_owner_side(evidence), "ownership")
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=history_cut_text(service, owners, ownership_period, read),
                required=True,
            )
            for service, read in ownership_cut
        ]
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=entity_cut_text(entity, read, cut_at),
                required=True,
            )
            for entity, read, cut_at in owners_cut
        ]
        missing += _uncovered_period_gaps(owners, ownership_period, ownership_cut, owners_cut)
    if version_period is not None:
        # A read of the versions cut at its cap: versions of the period may lie past it.
        version_intents = [
            i.value
            for i in (Intent.APPLICABLE_RUNBOOK, Intent.APPLICABLE_POLICY)
            if i in intent_set
        ]
        missing += [
            MissingEvidence(
                evidence_type="runbook",
                intents=version_intents,
                description=f"the versions of the runbooks and policies of {anchor} were read "
                f"up to the read's cap, {read} rows: a version in force in the period asked "
                f"({version_period.why}) past them was not read; ask for a shorter period",
                required=True,
            )
            for anchor, read in versions_cut
        ]
        cut_anchors = {anchor for anchor, _ in versions_cut}
        missing += [
            MissingEvidence(
                evidence_type="runbook",
                intents=version_intents,
                description=f"no version of a runbook or policy of {anchor} is recorded in "
                f"force from {iso_utc(start)} to {iso_utc(end)} ({version_period.why}), in "
                "the records this subject may read: which one applied then is not known",
                required=True,
            )
            for anchor, start, end in uncovered_by_versions(
                [*_with(evidence, "runbook"), *_with(evidence, "policy")], version_period
            )
            # Its versions past the cap were not read: an apparent gap may be a cut.
            if anchor not in cut_anchors
        ]
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None:
        # A read cut before an instant asked (or as_of) may have left out its owner.
        instants = [as_of, *(r.at for r in refs)]
        for entity, read, cut_at in owners_cut:
            if cut_at is None or any(at >= cut_at for at in instants):
                missing.append(
                    MissingEvidence(
                        evidence_type="ownership",
                        intents=[Intent.OWNERSHIP_AT_TIME.value],
                        description=entity_cut_text(entity, read, cut_at),
                        required=True,
                    )
                )
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None:
        missing += _unowned_instant_gaps(
            _owner_side(evidence), refs, as_of, owners_dropped, team_side=evidence
        )
        unrecorded = _unrecorded_owned_gaps(
            evidence, owners_asked, not_valid_then, refs, as_of, owners_dropped
        )
        if unrecorded:
            # Said of the entity asked, with why: the rubric's generic line adds nothing, nor
            # does the would-strengthen line of a runbook found by its words (the same gap).
            generic = missing_evidence([Intent.OWNERSHIP_AT_TIME.value], set())[0]
            said = {generic.description, *(_text_owner_gap(e).description for e, _ in unrecorded)}
            missing = [m for m in missing if m.description not in said]
            missing += [gap for _, gap in unrecorded]
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None and ended_before:
        # Why no owner holds at as_of: the service ended, or its last owner recorded did.
        missing = _ended_record_gaps(missing, ended_before, evidence, as_of, known_at)
    since = SINCE_THEN.search(question or "")
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None and since:
        # Never silently one instant for a period: the owners answered are at the times
        # stated, and the period is asked for in dates.
        missing.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=f"the question says {since.group(0)!r}: a period that starts at an "
                "event is not placed for an owner question, so the owners over it are not "
                "answered (those stated are at the times they say): ask with 'between <date> "
                "and <date>'",
                required=True,
            )
        )
    if Intent.OWNERSHIP_AT_TIME in intent_set and team_words is not None:
        missing = _team_gaps(
            missing, listed, team_words, teams, refs, as_of, ownership_period, kinds
        )
    missing = _incident_not_recorded(missing, evidence, question, as_of)
    if Intent.INCIDENT_LOOKUP in intent_set:
        missing = _no_incident_found(
            missing, evidence, question, as_of, known_at, services_read, service_id
        )
        missing += incidents_outside_period_gaps(
            _with(evidence, "incident_report"), question, as_of
        )
    later = (
        ", ".join(f"{id_} starts {iso_utc(at)}" for id_, at in sorted(started_later.items()))
        if started_later
        else None
    )
    if not firsts and service_id is None and names_no_errors(question):
        # "What changed before the errors?" alone: whose errors is the one thing it lacks.
        unnamed = (
            NO_ERRORS_NAMED
            if later is None
            else STARTED_LATER.format(as_of=iso_utc(as_of), later=later, what="error")
        )
        missing = [
            m.model_copy(update={"description": unnamed})
            if m.evidence_type == "error_first_seen" and m.required
            else m
            for m in missing
        ]
    if (
        service_id is None
        and team_words is None  # a team asked about from its side is named (its own gap)
        and names_no_errors(question)
        and not any(_SUBJECT_ID.search(ev.element_id) for ev in evidence)
        # A service the question's words found ("errors on checkout") is named: its
        # mechanism was sought, none known at as_of (nothing ties its errors by then).
        and not services_read
    ):
        missing = [
            m.model_copy(
                update={
                    "description": NOTHING_NAMED.format(
                        what=NOTHING_NAMED_GAPS[m.evidence_type][0],
                        example=NOTHING_NAMED_GAPS[m.evidence_type][1],
                    )
                    if later is None
                    else STARTED_LATER.format(
                        as_of=iso_utc(as_of),
                        later=later,
                        what=NOTHING_NAMED_GAPS[m.evidence_type][0],
                    )
                }
            )
            if m.evidence_type in NOTHING_NAMED_GAPS and m.required
            else m
            for m in missing
        ]
    # A question from a team's side reads the team by its name: its gaps say what is known of
    # the team ("no team named ...", "no OWNS record of team:X holds at ..."), not a name.
    if unresolved_names and team_words is None and not firsts and not services_read:
        missing = _unresolved_name_gaps(missing, unresolved_names, _stale_known_at(known_at, as_of))
    if firing_list_gaps is not None:
        missing = _firing_list_gaps(missing, firing_list_gaps)
    if Intent.OWNERSHIP_AT_TIME in intent_set:
        missing += _unread_owner_gaps(evidence, owners_unread)
        missing += _alert_unfound_gaps(alerts_unfound, as_of)
    if search_stopped_by is not None:
        missing = _not_searched_to_the_end(missing, search_stopped_by)
    if intent_set & {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP, Intent.TIMELINE}:
        # A list cut at a read's row cap is no complete answer, whether or not the search
        # finished: said, with how to narrow it.
        missing += [
            MissingEvidence(
                evidence_type="deployment_time"
                if cut.template_id
                in (RELEASES_TEMPLATE, ROLLOUTS_TEMPLATE, TENANT_ROLLOUTS_TEMPLATE)
                else "change_event",
                intents=sorted(
                    i.value
                    for i in intent_set
                    & {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP, Intent.TIMELINE}
                ),
                description=cut.description(),
                required=True,
            )
            for cut in window_cuts
        ]
    if Intent.OWNERSHIP_AT_TIME in intent_set and team_words is not None:
        # A team's list cut at a read's row cap is no complete answer either.
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=cut.description(),
                required=True,
            )
            for cut in team_cuts
        ]
    # What the KG has no record of (who was on call, whether the runbook was followed) is
    # said, never skipped: the run is `partial`.
    # A dependency list cut at its walk's row cap is no whole blast radius: said, a gap.
    missing += _capped_walk_gaps(intent_set, walks_capped)
    missing += unrecorded_evidence(unrecorded_asks(question or ""))
    missing = release_record.reword_approval(missing)
    if "approval" in unrecorded_asks(question or ""):
        # The policy is read for the approval asked, beside it: none the subject may read is
        # said, never a gap of its own (a stated approval leaves the answer complete).
        missing = [
            m.model_copy(update={"required": False}) if m.evidence_type == "policy" else m
            for m in missing
        ]
    if "runbook_followed" in unrecorded_asks(question or ""):
        rollbacks = _rollbacks_recorded(evidence)
        claims += rollbacks
        if rollbacks:
            # The record says one action was taken: what is still unknown is the rest.
            missing = [
                m.model_copy(update={"description": ROLLBACK_ONLY_RECORDED})
                if m.evidence_type == "runbook_followed"
                else m
                for m in missing
            ]
    # What the incident's reports state was done (quoted as theirs), asked about an action.
    action_claims, missing = reported_action_claims(evidence, question or "", as_of, missing)
    claims += action_claims
    # "Should we fail over payment-db?": the step of the runbook in force on the action.
    step_claims, step_gaps = action_step_claims(evidence, question or "", as_of, refs)
    claims += step_claims
    missing += step_gaps
    # Asked whether the errors still happen or when they stopped: their last sighting.
    claims += error_state_claims(evidence, question, as_of)
    # Asked how many errors there were: the count each error record states, by as_of.
    claims += error_count_claims(evidence, question, as_of)
    # "Should we roll back?" once the incident is over: that first, no verdict on it.
    decision = rollback_decision(evidence, question, as_of)
    claims += decision.claims
    missing += decision.gaps
    if decision.over:
        verdict = None
    unread = unread_words(question or "", [Intent(i) for i in intents])
    if unread is not None:
        # Read as nothing but its names: a name read back is no answer to it (`partial`).
        missing.append(
            unread_question_gap(unread, other_language=asked_in_another_language(question or ""))
        )
    unread_records = unread_record_words(question or "", [Intent(i) for i in intents])
    if unread_records is not None:
        # Traces asked for are read (`traces_linked`): their words are answered below.
        unread_records = words_left_by_traces(unread_records, evidence, question or "")
    # "Show me the traces for PAY-4097": the traces read, listed, or the gap of none read.
    claims += trace_list_claims(evidence, question or "", intents)
    missing += trace_gaps(evidence, question or "", intents, trace_reads)
    if unread_records is not None:
        # "Show me the traces for PAY-4097" read as an incident lookup: the traces not read.
        missing.append(unread_records_gap(unread_records, intents))
    if Intent.APPLICABLE_RUNBOOK in intent_set and version_period is None:
        missing += _no_runbook_at_as_of_gaps(
            _with(evidence, "runbook"), refs, as_of, known_at, search_stopped_by
        )
    for at in sorted({at for _, at in unknown_then}):
        # The question asks what applied at that time and the KG cannot say: the run does not
        # answer it as asked, so it is `partial` (docs/runbooks.md).
        ids = sorted({element_id for element_id, t in unknown_then if t == at})
        missing.append(
            MissingEvidence(
                evidence_type="runbook",
                intents=[Intent.APPLICABLE_RUNBOOK.value],
                description=f"no version of {', '.join(ids)} was recorded by {iso_utc(at)}: "
                "what it said then is not known",
                required=True,
            )
        )
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and not mechanisms
        and not any(m.evidence_type == "mechanism" for m in missing)
    ):
        missing.append(
            MissingEvidence(
                evidence_type="mechanism",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description="no mechanism evidence (rollback or controlled comparison, "
                "config diff): the correlation is in time only"
                if correlation_drawn
                # No error after the release is known: there is no correlation to weigh.
                else "no mechanism is weighed: no correlation is drawn, no error first seen "
                "after the release being known at as_of",
                required=False,
            )
        )
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and verdict in (Verdict.CONFIRMED, Verdict.LIKELY)
        and not (competing_checks is not None and competing_checks.complete)
    ):
        # No verdict stronger than its search: the competing causes were not all checked.
        verdict = Verdict.UNCERTAIN
        not_run = competing_checks.not_run if competing_checks is not None else []
        missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description=checks_not_run_words(not_run) + ": the verdict stays uncertain",
                required=False,
            )
        )
    if cause_cuts:
        # Candidates past a read's row cap were never weighed: the list is not all of them,
        # so no verdict is drawn between those read.
        cause_intents = sorted(
            i.value
            for i in intent_set
            & {Intent.DEPLOYMENT_CORRELATION, Intent.ROOT_CAUSE, Intent.CHANGE_HISTORY}
        ) or sorted(i.value for i in intent_set)
        missing += [
            MissingEvidence(
                evidence_type="change_event"
                if cut.template_id == CHANGES_TEMPLATE
                else "deployment_time",
                intents=cause_intents,
                description=cut.description(),
                required=True,
            )
            for cut in cause_cuts
        ]
        if verdict in (Verdict.CONFIRMED, Verdict.LIKELY) and any(
            cut.purpose == "causes" for cut in cause_cuts
        ):
            verdict = Verdict.UNCERTAIN
    if causes_dropped:
        # Competing causes read but left out of the pack were never weighed either.
        missing += [
            MissingEvidence(
                evidence_type=dropped.evidence_type,
                intents=sorted(
                    i.value
                    for i in intent_set
                    & {Intent.DEPLOYMENT_CORRELATION, Intent.ROOT_CAUSE, Intent.CHANGE_HISTORY}
                )
                or sorted(i.value for i in intent_set),
                description=dropped.description(),
                required=True,
            )
            for dropped in causes_dropped
        ]
        if verdict in (Verdict.CONFIRMED, Verdict.LIKELY):
            verdict = Verdict.UNCERTAIN
    if changes_by_as_of is not None:
        missing = [m for m in missing if not (m.evidence_type == "error_first_seen" and m.required)]
    if period_was_read:
        # "What changed in the last 24 hours?": the period was read itself, no first error
        # is needed to answer it.
        missing = [
            m
            for m in missing
            if not (
                m.evidence_type == "error_first_seen"
                and set(m.intents) <= {Intent.CHANGE_HISTORY.value, Intent.RELEASE_LOOKUP.value}
            )
        ]
    if Intent.DEPLOYMENT_CORRELATION in intent_set and search_stopped_by is None:
        missing = _unseen_error_gaps(missing, question, firsts, errors_later, as_of)
    # "Any traces of the pool exhaustion?": the traces its words found are the answer.
    missing = [m for m in missing if not answered_by_traces(m, evidence, question or "")]
    alone = name_alone(question or "")
    # Still answered as a name: not one searched as words ("crash-loop": the search's gap).
    as_a_name = intent_set <= {Intent.SERVICE_STATUS, Intent.OWNERSHIP_AT_TIME}
    if alone is not None and not services_read and not claims and as_a_name:
        # A name typed alone that is no service the subject reads (a team, an unknown word, a
        # service it may not read: all said alike): one gap says so, not three of a service.
        asked_if_service = {Intent.SERVICE_STATUS.value, Intent.OWNERSHIP_AT_TIME.value}
        missing = [m for m in missing if not set(m.intents) <= asked_if_service]
        missing.insert(0, _not_a_service_gap(alone))
    unique = {c.claim_id: c for c in claims}
    # Readable and deterministic: per intent, facts first, then inferences, then hypotheses.
    rank = {EpistemicStatus.FACT: 0, EpistemicStatus.INFERENCE: 1, EpistemicStatus.HYPOTHESIS: 2}
    # Releases and change events read as a timeline, in every answer: by when each happened,
    # then its id, ahead of the untimed claims of their intent and status (those by their
    # text). Before (h29-claims), only a period's answer did; any other sorted its releases
    # by their text, `crowd-10` before `crowd-2`. Claims are not in the pack: its hash holds.
    change_times = _change_times(evidence)
    # Alert firings too, by when each fired: in their own intent's list (h33b-firings), and
    # for "what happened yesterday?" among the period's incidents, releases and changes, one
    # timeline across intents (h33b-period).
    fired_times = {**change_times, **firing_times(evidence)}
    period_events = period_events_asked(question or "")
    if period_events:
        change_times = fired_times
    # A change period's record changes (a handover, a runbook version, a retraction) by
    # their own times among its releases.
    record_times = (
        period_change_times(
            evidence,
            event_period.named()
            if event_period is not None
            else time_references(question or "", as_of).period,
            as_of,
            period_retractions,
            services_read,
        )
        if Intent.CHANGE_HISTORY in intent_set
        else {}
    )
    ordered = sorted(
        unique.values(),
        key=lambda c: (
            "" if period_events else c.intent,
            timeline_order.get(c.claim_id, -1),
            rank[c.epistemic_status],
            *(
                (0, *record_times[c.claim_id])
                if c.claim_id in record_times
                else _claim_time_key(
                    c, fired_times if c.intent == Intent.ALERT_FIRING.value else change_times
                )
            ),
            c.statement,
            c.claim_id,
        ),
    )
    # What the answer must say before the rest ("the incident is over") leads it.
    lead = {c.claim_id for c in decision.claims}
    ordered = [c for c in ordered if c.claim_id in lead] + [
        c for c in ordered if c.claim_id not in lead
    ]
    confounders = sorted(confounders, key=lambda c: (c.at, c.element_id))
    return ClaimSet(
        claims=ordered, verdict=verdict, confounders=confounders, missing_evidence=missing
    )


def _not_a_service_gap(name: str) -> MissingEvidence:
    """The gap of a name typed alone ("payments-core", "qzxv") that names no service the
    subject may read: a service's state and owner are what such a question gets."""
    return MissingEvidence(
        evidence_type="entity",
        intents=[Intent.SERVICE_STATUS.value, Intent.OWNERSHIP_AT_TIME.value],
        description=f"{name!r} names no service the subject may read: a service typed alone "
        "is answered with its incidents open, alerts firing and owner at as_of; ask about "
        "anything else in words (e.g. 'what did team X own then?', 'what is X?')",
        required=True,
    )


def _change_times(evidence: Sequence[Evidence]) -> dict[str, tuple[datetime, str]]:
    """(when it happened, element id) of each release and change event (and incident an
    incident list read: its start), by evidence id."""
    times: dict[str, tuple[datetime, str]] = {}
    for ev in evidence:
        if ev.type == "Incident" and (ev.template or "").startswith("incidents_in_period@"):
            # An incident list reads in start order too.
            started = incident_span(ev)[0]
            if started is not None:
                times[ev.evidence_id] = (started, ev.element_id)
            continue
        if ev.type not in ("Deployment", "ChangeEvent"):
            continue
        at = instant(ev, DEPLOY_TIME_KEYS if ev.type == "Deployment" else CHANGE_TIME_KEYS)
        if at is not None:
            times[ev.evidence_id] = (at, ev.element_id)
    return times


def _period_services(question: str | None, services_read: Sequence[str]) -> Sequence[str]:
    """The services a "what happened to payment-api yesterday?" question asks about (those
    the run found for its service word): its incident list keeps their incidents; () for
    another question (every incident of the period is listed)."""
    if not asks_service_period_events(question or ""):
        return ()
    return service_period_focus(services_read, question or "")


def service_period_evidence(
    evidence: Sequence[Evidence], services: Sequence[str]
) -> Sequence[Evidence]:
    """The evidence a "what happened to payment-api yesterday?" answer states from: the
    alert firings (FIRED_ON) on `services` and their releases only (a release record of
    another service is left out, and so is every document timing a release: one may stand
    for a release of another service, `candidates._candidates`); every record when no
    service is asked about. Its incidents are kept to those affecting it by the incident
    list (`status.affected_one_of`); change events are the tenant's, as a change question
    reads them."""
    if not services:
        return evidence
    kept = set(services)

    def of_the_service(ev: Evidence) -> bool:
        parts = ev.element_id.split("|")
        if parts[0] == "FIRED_ON":
            return len(parts) > 2 and parts[2] in kept
        if ev.type == "Deployment":
            return _release_service(ev) in kept
        return "deployment_time" not in ev.evidence_types

    return [ev for ev in evidence if of_the_service(ev)]


def service_firing_gaps(
    question: str, as_of: datetime, services: Sequence[str]
) -> list[MissingEvidence]:
    """The gap of "what happened to payment-db yesterday?" when no alert fired on it: what
    was read and found empty, over the period asked (before, the rubric's "no alert recorded
    as firing on it by as_of"); [] for another question."""
    if not services:
        return []
    period = time_references(question, as_of).period
    span = (
        f"from {iso_utc(period[0].at)} to {iso_utc(min(period[1].at, as_of))} ({period[0].words!r})"
        if period is not None and period[0].at <= as_of
        else _written_list_span(question, as_of) or f"by as_of {iso_utc(as_of)}"
    )
    return [
        MissingEvidence(
            evidence_type="alert_firing",
            intents=[Intent.ALERT_FIRING.value],
            description=f"no alert the subject may read fired on {', '.join(services)} {span} "
            "(no FIRED_ON record of it, as recorded by known_at)",
        )
    ]


def precise_gaps_only(
    missing: Sequence[MissingEvidence], precise: Sequence[MissingEvidence]
) -> list[MissingEvidence]:
    """The gaps with the rubric's bare one of a type ("incident_report (required): no
    incident report") left out when a precise gap of that type says what was read and
    found empty ("no incident ... was open from ... ('yesterday')"): one gap, the precise
    one (e32 m5)."""
    said = {m.evidence_type for m in precise}
    return [
        m
        for m in missing
        if not (
            m.evidence_type in said
            and m.description == MISSING_DESCRIPTIONS.get(m.evidence_type, m.evidence_type)
        )
    ]


def _claim_time_key(
    claim: Claim, timed: Mapping[str, tuple[datetime, str]]
) -> tuple[int, datetime, str]:
    """A claim's place on a timeline: its earliest release or change event (untimed last)."""
    held = sorted(timed[i] for i in claim.evidence_ids if i in timed)
    if not held:
        return (1, datetime.min.replace(tzinfo=UTC), "")
    return (0, *held[0])


def _firsts_said(firsts: Sequence[Evidence], question: str) -> list[Evidence]:
    """The first sightings stated beside the incident: asked when its severity changed ("when
    was severity raised?"), a report's text is no first sighting of an error (it was printed
    whole as one: noise beside the severity history); the error records stay."""
    if not asks_severity_change(question):
        return list(firsts)
    return [ev for ev in firsts if ev.type != "Document"]


def names_no_errors(question: str | None) -> bool:
    """Whether the question names nothing whose errors could be looked up (no id, error
    code, release, alert or name): "What changed before the errors?"."""
    return not extract_mentions(question or "").texts()


def _no_errors_looked_for(
    firsts: Sequence[Evidence],
    service_id: str | None,
    question: str | None,
    services_read: Sequence[str],
) -> bool:
    """No error was looked for: none read, no --service, and the question names nothing
    (no service, error code, alert or release) nor did the run take a service to read."""
    return not firsts and service_id is None and names_no_errors(question) and not services_read


def _stale_known_at(known_at: datetime | None, as_of: datetime) -> datetime | None:
    """`known_at` when it is before as_of (the KG read as it was known before the time
    asked: a record made later is not read), else None."""
    return known_at if known_at is not None and known_at < as_of else None


def _unresolved_name_gaps(
    missing: list[MissingEvidence], names: Sequence[str], stale: datetime | None = None
) -> list[MissingEvidence]:
    """The required gaps of what is read for a service, and those saying the question names
    none, said as not looked for: the service named resolved to nothing visible (under a
    `stale` known_at before as_of, nothing recorded by then: NAME_UNRECORDED)."""
    said = ", ".join(repr(n) for n in names)
    named_none = ("the question names no service", NO_ERRORS_NAMED)
    out = []
    for m in missing:
        what = _UNRESOLVED_GAPS.get(m.evidence_type)
        if what is None and m.description.startswith(named_none):
            what = NOTHING_NAMED_GAPS.get(m.evidence_type, (m.evidence_type,))[0]
        if what is not None and m.required:
            text = (
                NAME_UNRESOLVED.format(names=said, what=what)
                if stale is None
                else NAME_UNRECORDED.format(names=said, what=what, known_at=iso_utc(stale))
            )
            m = m.model_copy(update={"description": text})
        out.append(m)
    return out


def _not_searched_to_the_end(
    missing: Sequence[MissingEvidence], stopped_by: str
) -> list[MissingEvidence]:
    """Each required gap said as what it is when the loop stopped with reads still planned:
    not found yet, which is not the same as none (a gap, never a negative finding)."""
    why = _unfinished_why(stopped_by)
    return [
        m.model_copy(update={"description": f"{UNKNOWN_NOT_ABSENT}{why}"})
        # A gap already worded so names what is unknown: kept.
        if m.required and not m.description.startswith(UNKNOWN_NOT_ABSENT)
        else m
        for m in missing
    ]
