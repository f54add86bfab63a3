"""A table of questions -> intents (the planner's `detect_intents`), one row per way of
asking, covering every intent and the ties between rules: the next rule that reads another's
words away changes a row here and fails loudly. Read it as a reviewer would; a row changed on
purpose is changed here with the reason in the commit.

The whole list of questions the project asks itself (eval/golden.yaml and tests/) is printed
by benchmarks/intent_table.py, and compared between two commits with its --diff.

Rows changed by h32-intents (each failed before): "why?" (an entity lookup: now the cause),
"whats going on" / "status?" (entity lookups: now the incidents open at as_of, or with a
service named or given its state), "did anything change then?" / "has anything changed on
payment-api?" (entity lookups: now change questions, as "what changed then?"), "was it the
risk rules?" / "was it the risk rule change?" (entity lookups: now cause questions), "is
risk-engine to blame for the outage?" (an incident lookup: the cause), "was it payment-db or
the release?" (a release lookup) and "was it the deploy or the risk rules" (the release's
verdict alone: now both, as "was release X the cause, or the risk rule change?"), "is checkout
affected by the release?" (a release lookup: now the release's verdict).

Rows added by h33-typos (the slips failed before: entity lookups, "waht casued PAY-4097?" an
incident lookup): "whos the ownr of payment api", "who onws payment-api?", "whats the runbok
...", "did the deploi cause it", "should we rolback", "what casued the incidnet", "any
dependncies ...", "what changed before the relase?", "waht casued PAY-4097?"; "what is known
about ...", "was the job paused?" pin words that are no slip ("known" is no "owner", "paused"
no "caused").

Rows added by h33b-firings: "alerts firing on checkout" (a runbook lookup before: now the
firings, as "which alerts are firing on checkout?"); "which alerts fired for the payments
team?" (its intents unchanged: the team is now read, its services' firings listed).

Rows added by h34-period-service: "what happened to payment-api yesterday?" (an entity lookup
before) and "payment-api timeline for 2026-07-23" (an incident timeline before) are the
service's events of the period; with no period named, "what happened to payment-api?" and
"payment-api timeline" keep their readings.

Rows changed in session 34: a service typed alone ("checkout?", "payment-api", "payment-api
down", "svc:payment-db status": entity lookups, the name read back) asks its state and owner
at as_of; "is firing" (no name first), "checkout down" and "banana" (a plain word not asked
alone with "?": a symptom typed) stay lookups.
"""

from __future__ import annotations

import pytest

from investigator.planner import detect_intents, intents_with_service
from investigator.rubric import Intent

TABLE: list[tuple[str, str]] = [
    (
        "Was release-2026.07.23.1 related to PAY-4097? Who owned payment-api then? "
        "Which runbook applied?",
        "applicable_runbook deployment_correlation ownership_at_time",
    ),
    ("Was the release related to the PAY-4097 errors?", "deployment_correlation"),
    ("Did the release cause it?", "deployment_correlation"),
    ("was it the release", "deployment_correlation"),
    ("was it the deploy?", "deployment_correlation"),
    ("Which release was deployed shortly before the errors?", "deployment_correlation"),
    ("When did release-2026.07.23.1 finish deploying?", "release_lookup"),
    # h39: a version typed alone names the release ("what changed in 2026.07.23.1?" was a
    # change list, "when did 2026.07.22.3 finish?" an entity lookup; the auditor's question
    # kept its intents, now about the release it names).
    ("what changed in 2026.07.23.1?", "release_lookup"),
    ("when did 2026.07.22.3 finish?", "release_lookup"),
    ("did 2026.07.23.4 follow the change policy?", "applicable_policy release_lookup"),
    ("When was it released?", "release_lookup"),
    ("last deploy of payment-api?", "release_lookup"),
    ("Which releases of payment-api went out yesterday?", "release_lookup"),
    ("recent deploys payments", "release_lookup"),
    ("Who owns payment-api?", "ownership_at_time"),
    ("Who owned payment-api then?", "error_timeline ownership_at_time"),
    (
        "Who owned payment-api before the release?",
        "error_timeline ownership_at_time release_lookup",
    ),
    ("Which services belong to payments-core?", "ownership_at_time"),
    # Past tense: read at the incident's start (h32-then), as "then" is: its error first.
    ("Who was on call for PAY-4097?", "error_timeline ownership_at_time"),
    ("Which runbook applies to payment-api?", "applicable_runbook"),
    ("how do I fix PAY-4097?", "applicable_runbook"),
    ("how do I fail over payment-db?", "applicable_runbook"),
    ("PaymentApiHighErrorRate?", "applicable_runbook entity_lookup"),
    ("Which policy governs payment-api?", "applicable_policy"),
    ("What was the root cause of PAY-4097?", "root_cause"),
    ("What caused the PAY-4097 errors?", "root_cause"),
    ("why r payments failing", "root_cause"),
    ("why?", "root_cause"),
    ("Why is PaymentApiHighErrorRate firing?", "applicable_runbook root_cause"),
    ("What else could have caused it?", "root_cause"),
    ("Can we rule out the risk rules?", "root_cause"),
    ("was it payment-db?", "root_cause"),
    ("is risk-engine to blame?", "root_cause"),
    ("is risk-engine to blame for the outage?", "error_timeline root_cause"),
    ("was it the risk rules?", "root_cause"),
    ("was it the risk rule change?", "root_cause"),
    ("was it payment-db or the release?", "deployment_correlation root_cause"),
    ("was it the deploy or the risk rules", "deployment_correlation root_cause"),
    (
        "Was release-2026.07.23.1 the cause of the PAY-4097 errors, or the risk rule change?",
        "deployment_correlation root_cause",
    ),
    ("What changed before the PAY-4097 errors?", "change_history"),
    ("What changed on payment-api?", "change_history"),
    ("what changed on risk-engine?", "change_history"),
    ("what changed yesterday?", "change_history"),
    ("what changed in the last hour", "change_history"),
    ("what changed then?", "change_history"),
    ("did anything change then?", "change_history"),
    ("has anything changed on payment-api?", "change_history"),
    ("what else changed around the release?", "change_history release_lookup"),
    ("any config changes on payment-api?", "change_history"),
    ("What changed on payment-api before the release?", "change_history"),
    ("When was PAY-4097 first seen?", "error_timeline"),
    ("Since when does payment-api emit PAY-1002?", "error_timeline"),
    ("PAY-4097", "incident_lookup"),
    ("was it PAY-4097?", "incident_lookup"),
    ("Which incident affected checkout?", "incident_lookup"),
    ("What was the impact of the payments outage?", "incident_lookup"),
    ("how long did the incident last?", "incident_lookup"),
    ("is checkout affected?", "incident_lookup"),
    ("is ledger affected?", "incident_lookup"),
    ("is payment-api affected?", "incident_lookup"),
    ("is checkout affected by the incident?", "incident_lookup"),
    ("is checkout affected by the release?", "deployment_correlation"),
    ("What does payment-api depend on?", "dependencies"),
    ("What depends on payment-db?", "dependents"),
    ("what breaks if payment-db goes down?", "dependents"),
    ("What is upstream of payment-api?", "dependencies dependents"),
    ("Which alerts fired on payment-api?", "alert_firing"),
    ("What alerts fired on payment-api yesterday?", "alert_firing"),
    ("is PaymentApiHighErrorRate still firing?", "alert_firing"),
    ("Which alerts fired on payment-api before the incident?", "alert_firing error_timeline"),
    ("alerts firing on checkout", "alert_firing"),
    ("which alerts fired for the payments team?", "alert_firing ownership_at_time"),
    ("is payment-api healthy now?", "service_status"),
    ("is payment-api ok?", "service_status"),
    ("what's the status of payment-api?", "service_status"),
    ("is payment-api still down?", "service_status"),
    ("any ongoing incidents on checkout?", "service_status"),
    ("what's going on with payment-api?", "service_status"),
    ("whats going on", "incident_list"),
    ("status?", "incident_list"),
    ("any ongoing incidents?", "incident_list"),
    ("list all incidents in July 2026", "incident_list"),
    ("what incidents did we have in June 2026?", "incident_list"),
    ("show me the timeline of PAY-4097", "timeline"),
    ("what happened during the payments incident?", "timeline"),
    ("what happened and when?", "timeline"),
    ("timeline of the incident, and did the release cause it?", "deployment_correlation timeline"),
    ("did we roll back?", "applicable_runbook incident_lookup"),
    ("did we roll back payment-api?", "applicable_runbook incident_lookup"),
    ("when was the rollback?", "applicable_runbook incident_lookup"),
    ("was the rollback successful?", "applicable_runbook incident_lookup"),
    ("what fixed it?", "applicable_runbook incident_lookup"),
    ("should we roll back", "applicable_runbook deployment_correlation"),
    ("rollback payment-api?", "applicable_runbook deployment_correlation"),
    ("tell me about svc:ledger", "entity_lookup"),
    ("checkout?", "ownership_at_time service_status"),
    ("payment-api", "ownership_at_time service_status"),
    ("payment-api down", "ownership_at_time service_status"),
    ("checkout down", "entity_lookup"),
    ("banana", "entity_lookup"),
    ("svc:payment-db status", "ownership_at_time service_status"),
    ("is firing", "entity_lookup"),
    ("hikaricp pool exhausted", "entity_lookup"),
    ("what happened last week", "alert_firing change_history incident_list"),
    ("what happened to payment-api yesterday?", "alert_firing change_history incident_list"),
    ("payment-api timeline for 2026-07-23", "alert_firing change_history incident_list"),
    ("what happened to payment-api?", "entity_lookup"),
    ("payment-api timeline", "timeline"),
    ("Wem gehörte payment-api?", "entity_lookup"),
    ("PAY-4097 之前改了什么？", "change_history"),
    ("谁负责 payment-api？", "ownership_at_time"),
    # Slips read as the words they miss (h33-typos: each was an entity lookup), and words
    # that are no slip kept as typed.
    ("whos the ownr of payment api", "ownership_at_time"),
    ("who onws payment-api?", "ownership_at_time"),
    ("whats the runbok for payment-api", "applicable_runbook"),
    ("did the deploi cause it", "deployment_correlation"),
    ("should we rolback", "applicable_runbook deployment_correlation"),
    ("what casued the incidnet", "root_cause"),
    ("any dependncies of payment-api?", "dependencies"),
    ("what changed before the relase?", "change_history"),
    ("waht casued PAY-4097?", "root_cause"),
    ("is it the db", "entity_lookup"),
    ("what is known about payment-db?", "entity_lookup"),
    ("was the job paused?", "entity_lookup"),
]


@pytest.mark.parametrize(("question", "expected"), TABLE, ids=[q for q, _ in TABLE])
def test_intents_of_the_question(question: str, expected: str) -> None:
    assert " ".join(i.value for i in detect_intents(question)) == expected


def test_the_table_covers_every_intent() -> None:
    read = {i for _, intents in TABLE for i in intents.split()}
    assert read == {i.value for i in Intent}


# Beside --service: a question naming nothing that asks what is going on asks the state of
# the service given, not the incidents open anywhere; one naming its own place keeps it.
WITH_SERVICE: list[tuple[str, str]] = [
    ("whats going on", "service_status"),
    ("status?", "service_status"),
    ("any ongoing incidents?", "service_status"),
    ("what's going on with checkout?", "service_status"),
    ("why?", "root_cause"),
    ("did anything change then?", "change_history"),
    ("list all incidents in July 2026", "incident_list"),
    ("who owns it?", "ownership_at_time"),
]


@pytest.mark.parametrize(("question", "expected"), WITH_SERVICE, ids=[q for q, _ in WITH_SERVICE])
def test_intents_beside_a_service(question: str, expected: str) -> None:
    intents = intents_with_service(detect_intents(question), question, "svc:payment-api")
    assert " ".join(i.value for i in intents) == expected
