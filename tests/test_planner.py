"""The deterministic planner's intent detection, mention extraction and step building."""

from __future__ import annotations

from datetime import UTC, datetime

from cypher_templates.compiler import compile_step
from cypher_templates.registry import TemplateRegistry
from investigator.planner import (
    DeterministicPlanner,
    Known,
    PlanInput,
    detect_intents,
    extract_mentions,
    linking_steps,
    reads_as_symptom,
    steps_for,
    unread_words,
)
from investigator.rubric import Intent, useful_types

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)


def test_seed_question_has_three_intents() -> None:
    assert detect_intents(SEED) == [
        Intent.APPLICABLE_RUNBOOK,
        Intent.DEPLOYMENT_CORRELATION,
        Intent.OWNERSHIP_AT_TIME,
    ]
    assert Intent.ROOT_CAUSE in detect_intents("What was the root cause of PAY-4097?")
    assert detect_intents("PAY-4097") == [Intent.INCIDENT_LOOKUP]
    assert detect_intents("谁负责 payment-api？") == [Intent.OWNERSHIP_AT_TIME]
    assert detect_intents("tell me about svc:ledger") == [Intent.ENTITY_LOOKUP]
    assert detect_intents("When did release-2026.07.23.1 finish deploying?") == [
        Intent.RELEASE_LOOKUP
    ]
    assert detect_intents("When was PAY-4097 first seen?") == [Intent.ERROR_TIMELINE]
    assert detect_intents("Which policy governs payment-api?") == [Intent.APPLICABLE_POLICY]


def test_the_words_on_call_types_for_what_to_do_ask_for_the_runbook() -> None:
    # Before, each of these was an entity or incident lookup: no runbook was looked for.
    for question in (
        "TempoPollsFailing is firing, how do I fix it?",
        "How to fix KubePodCrashLooping?",
        "what should I do about TempoCompactionsFailing",
        "payment-api is failing, what should we do?",
        "How can we handle TargetDown?",
        "What are the recovery steps for service-00004?",
        "what to do when PAY-4097 shows up",
        "KubeAPIDown 怎么处理？",
    ):
        assert Intent.APPLICABLE_RUNBOOK in detect_intents(question), question
    # Asking about a fix that happened, or what a document says, is not asking what to do.
    assert detect_intents("Which release fixed PAY-4097?") == [Intent.RELEASE_LOOKUP]
    assert detect_intents("What did the fix change?") == [Intent.ENTITY_LOOKUP]
    assert Intent.APPLICABLE_RUNBOOK not in detect_intents("What do the postmortems say?")


def test_a_bare_symptom_reads_as_one_and_a_question_or_a_named_record_does_not() -> None:
    # What a hurried on-call engineer types: the loop asks the runbook search about it when
    # its words link nothing (tests/test_investigate_bare_symptom.py).
    for symptom in ("pgbouncer saturation", "etcd disk latency high", "kafka consumer lag"):
        assert reads_as_symptom(symptom), symptom
    for other in (
        "pgbouncer saturation, what do I do?",  # asks for the runbook already
        "DRAFT postmortem: risk rules broke payments",  # a document, a golden case
        "What happened to payments on 2026-07-23?",  # a question, with a date
        "pgbouncer saturation yesterday",  # a time word
        "payment-api latency high",  # a name the graph links
        "PAY-4097",  # an error code
        "KubeAPIDown",  # an alert
        "the payments incident",  # an incident
        "please help, anyone?",  # a question, nothing informative
        "seems down again?",  # one word that names something: "down"
        "any traces of the pool exhaustion?",  # asks whether there are any
        "checkout?",  # one word asked: a name
        "say likely?",  # asks for a record's words
        "Something else entirely?",  # a hedge first
    ):
        assert not reads_as_symptom(other), other


def test_a_symptom_asked_with_a_question_mark_reads_as_one() -> None:
    # Before, any question mark stopped the reading: "hikaricp pool exhausted?" was answered
    # with a gap saying its words ask something the run does not read.
    for asked in (
        "hikaricp pool exhausted?",
        "hikaricp pool exhausted ??",
        "db connections maxed out?",
        "pool exhausted pls?",
    ):
        assert reads_as_symptom(asked), asked
        assert unread_words(asked, detect_intents(asked)) is None, asked


def test_asking_what_else_could_have_caused_it_is_a_root_cause_question() -> None:
    # Before, these were incident, release or entity lookups: no competing cause was listed.
    for question in (
        "Could anything else have caused PAY-4097 on payment-api?",
        "What are the alternative explanations for PAY-4097?",
        "What else could have caused it?",
        "Could it have been something else?",
        "Can we rule out the risk rules?",
        "What other causes could there be?",
        "除了发布，还有其他原因吗？",
    ):
        assert Intent.ROOT_CAUSE in detect_intents(question), question
    # "Besides the release": the release's verdict and the other candidates.
    assert detect_intents("Besides the release, what could explain the PAY-4097 errors?") == [
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ROOT_CAUSE,
    ]
    # "Else" without a cause asked about is no cause question.
    assert detect_intents("Who else owned payment-api?") == [Intent.OWNERSHIP_AT_TIME]
    assert detect_intents("Is there anything else in the runbook?") == [Intent.APPLICABLE_RUNBOOK]


def test_mentions_pick_ids_codes_releases_alerts_and_names() -> None:
    m = extract_mentions(
        "Did release-2026.07.23.1 on svc:payment-api cause PAY-4097 and KubePodCrashLooping "
        "on checkout-web?"
    )
    assert m.ids == ["svc:payment-api"]
    assert m.error_codes == ["PAY-4097"]
    assert m.releases == ["release-2026.07.23.1"]
    assert m.alerts == ["KubePodCrashLooping"]
    assert "checkout-web" in m.names


def test_alert_names_with_acronyms_a_lowercase_start_or_two_parts_are_mentions() -> None:
    # Real alert names (openshift/runbooks) the question gives; before, only names of three
    # capitalised words were (KubePodCrashLooping), and these questions resolved nothing.
    question = (
        "Why did KubeAPIDown, etcdNoLeader, CPUThrottlingHigh, ODFNodeMTULessThan9000, "
        "TargetDown and alert:KubeletDown fire on OpenShift with PostgreSQL and the Watchdog?"
    )
    m = extract_mentions(question)
    assert m.alerts == [
        "KubeAPIDown",
        "etcdNoLeader",
        "CPUThrottlingHigh",
        "ODFNodeMTULessThan9000",
        "TargetDown",
    ]
    assert m.ids == ["alert:KubeletDown"]  # an id is not read again as a name


def test_every_planned_step_compiles_against_the_allowlist() -> None:
    registry = TemplateRegistry.load()
    known = Known(
        services=["svc:a"],
        error_codes=["err:E-1"],
        incidents=["inc:1"],
        deployments=["deploy:r"],
        alerts=["alert:A"],
        first_seen=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC),
    )
    all_types = useful_types(list(Intent))
    steps = steps_for(all_types, known, as_of=AS_OF)
    planner = DeterministicPlanner()
    inp = PlanInput(question=SEED, service_id="svc:payment-api", as_of=AS_OF, known_at=AS_OF)
    steps += planner.initial_plan(inp, planner.intents(inp)).steps
    assert {s.template_id for s in steps} >= {
        "ownership_over_time",
        "runbooks_for",
        "deployments_in_window",
        "incident_context",
        "change_events_in_window",
        "documents_about",
        "entity_resolution",
        "fulltext_search",
    }
    for step in steps:
        compile_step(registry, step)  # raises on anything not allowlisted


def test_deployment_window_is_anchored_on_the_first_error_once_known() -> None:
    known = Known(services=["svc:a"], first_seen=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC))
    (step,) = [
        s
        for s in steps_for(["deployment_time"], known, as_of=datetime(2026, 11, 1, tzinfo=UTC))
        if s.template_id == "deployments_in_window"
    ]
    assert step.params["to"] == "2026-07-23T10:02:38+00:00"


def test_followup_steps_keep_their_order_and_parameters() -> None:
    """The lookups repeated at reference times and the competing-cause checks, exactly.

    Plans are hashed and replayed: the same inputs must give the same steps in the same
    order with the same parameters (key order included).
    """
    from investigator.planner import competing_cause_steps, reference_steps

    first = datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC)
    known = Known(
        services=["svc:a", "svc:b"],
        error_codes=["PAY-1", "PAY-2"],
        first_seen=first,
        upstream=["svc:b", "svc:db"],
    )
    intents = [Intent.APPLICABLE_RUNBOOK, Intent.DEPLOYMENT_CORRELATION, Intent.OWNERSHIP_AT_TIME]
    focus = ["svc:a", "svc:b"]
    steps = [
        *reference_steps(
            intents, known, references=[datetime(2026, 7, 23, 9, tzinfo=UTC), first], focus=focus
        ),
        *competing_cause_steps(intents, known, as_of=AS_OF, focus=focus),
    ]
    shown = [
        (s.step_id, s.template_id, list(s.params.items()), list(s.options.items())) for s in steps
    ]
    at_9 = "at-2026-07-23T09:00:00Z"
    at_first = "at-2026-07-23T10:02:38Z"
    service = [("anchor", "service")]
    code = [("anchor", "error_code")]
    repeated = [
        [
            (at, "ownership_over_time", [("service_id", "svc:a")], []),
            (at, "runbooks_for", [("anchor_id", "svc:a")], service),
            (at, "ownership_over_time", [("service_id", "svc:b")], []),
            (at, "runbooks_for", [("anchor_id", "svc:b")], service),
            (at, "runbooks_for", [("anchor_id", "PAY-1")], code),
            (at, "runbooks_for", [("anchor_id", "PAY-2")], code),
        ]
        for at in (at_9, at_first)
    ]
    upstream = [("rel_type", "DEPENDS_ON"), ("direction", "out"), ("hops", 1)]
    to = ("to", "2026-07-23T10:02:38+00:00")
    at_error = ("at", "2026-07-23T10:02:38+00:00")
    day_before = ("from", "2026-07-22T10:02:38+00:00")
    half_hour = ("from", "2026-07-23T09:32:38+00:00")
    assert shown == [
        *repeated[0],
        *repeated[1],
        ("check-upstream", "dependency_neighbourhood", [("start_id", "svc:a")], upstream),
        ("check-upstream", "dependency_neighbourhood", [("start_id", "svc:b")], upstream),
        ("check-changes", "change_events_in_window", [half_hour, to], [("scope", "all")]),
        (
            "check-deployments",
            "deployments_in_window",
            [("service_id", "svc:a"), day_before, to],
            [],
        ),
        (
            "check-deployments",
            "deployments_in_window",
            [("service_id", "svc:b"), day_before, to],
            [],
        ),
        (
            "check-upstream-deployments",
            "deployments_in_window",
            [("service_id", "svc:db"), half_hour, to],
            [],
        ),
        # A release still rolling out at the first error (its finish after it) is read too.
        ("check-rollouts", "rollouts_under_way", [("service_id", "svc:a"), at_error], []),
        ("check-rollouts", "rollouts_under_way", [("service_id", "svc:b"), at_error], []),
    ]


def test_the_fulltext_query_leaves_out_function_words() -> None:
    # "the" and "is" matched every short alert summary alike, and ranked "The storage index
    # is too old." above the alert the question was about.
    [step] = linking_steps(
        extract_mentions("The vault cache mirror is failing, how do I fix it?"), None,
        "The vault cache mirror is failing, how do I fix it?",
    )  # fmt: skip
    assert step.template_id == "fulltext_search"
    assert step.params == {"query": "vault cache mirror failing fix"}
    # A question of function words only still searches with what it has.
    [only] = linking_steps(extract_mentions("What was it?"), None, "What was it?")
    assert only.params == {"query": "What was it"}


def test_asks_the_kg_has_no_record_type_for_are_named() -> None:
    from investigator.planner import unrecorded_asks

    # Before, "on call" (with a space) and "paged" were incident lookups, and "did they follow
    # the runbook" was answered as "which runbook applies", the ask dropped.
    assert unrecorded_asks("Who was on call for payment-api?") == ["on_call"]
    # Past tense, no time named: read at the errors' time, as "then" (h32-then), so the error
    # timeline is read first.
    assert detect_intents("Who was on call for payment-api?") == [
        Intent.ERROR_TIMELINE,
        Intent.OWNERSHIP_AT_TIME,
    ]
    assert unrecorded_asks("Who should have been paged for PAY-4097?") == ["on_call"]
    assert unrecorded_asks("Did the responders follow runbook v3?") == ["runbook_followed"]
    assert unrecorded_asks("Was the runbook followed?") == ["runbook_followed"]
    assert unrecorded_asks("Who approved release 2026.07.23.1?") == ["approval"]
    assert unrecorded_asks("Who signed off the payment-api rollout?") == ["approval"]
    # Asking which runbook to follow, or whether the errors followed a release, is not.
    for question in (
        "Which runbook should I follow?",
        "Did PAY-4097 follow the release?",
        "Which alert paged?",
        "Did the team follow up on PAY-4097?",
        "Which release fixed PAY-4097?",
    ):
        assert unrecorded_asks(question) == [], question


def test_an_alert_the_graph_names_is_read_as_named_in_any_case_or_in_its_words() -> None:
    from graph_schema.alert_names import as_named

    names = ["PaymentApiHighErrorRate", "Watchdog"]
    assert as_named("help with paymentapihigherrorrate", names) == (
        "help with PaymentApiHighErrorRate"
    )
    assert as_named("PAYMENTAPIHIGHERRORRATE firing", names) == "PaymentApiHighErrorRate firing"
    assert as_named("payment api high error rate alert.", names) == (
        "PaymentApiHighErrorRate alert."
    )
    # Not an id, a hyphenated name, words out of order or a plural, nor a one-word name.
    for text in (
        "alert:paymentapihigherrorrate",
        "payment-api high error rate",
        "high error rate on payment api",
        "payment api high error rates",
        "is the watchdog ok?",
    ):
        assert as_named(text, names) == text
    assert detect_intents(as_named("help with paymentapihigherrorrate", names)) == [
        Intent.APPLICABLE_RUNBOOK,
        Intent.ENTITY_LOOKUP,
    ]
