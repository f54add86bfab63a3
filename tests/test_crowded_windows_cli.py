"""Crowded windows, through the CLI against a real Neo4j (h27-periods): every competing
cause of the window before the first error is listed (item 1), a cut window read keeps
exactly its oldest rows (item 2), and a period's changes are listed in time order (item 3).

The demo's PAY-4097 was first seen at 2026-07-23T10:02:38Z. This module adds 12 releases of
payment-api in the 24 h before it (hourly from 2026-07-22T12:00Z) and 8 change events in
the 30 minutes before it. Before, the evidence gate kept five items per evidence type: a
"what changed before the errors" answer listed the three oldest releases beside the demo's
and dropped the nine closest to the error as `top_k_reached`, with no gap; now every one is
listed, and the ones the evidence budget leaves out are a required gap with no verdict.

When the budget cannot hold them all, those nearest the first error are kept and the gap
names the farthest left out (h28-budget item 1; before, the budget filled oldest first).
Eight change events no mechanism evidence rules out leave no verdict stronger than
`uncertain` (item 2; before, `likely`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import neo4j
import pytest
from conftest import change_line, ingest_text, investigate_json, release_line

RELEASES = 12
CHANGES = 8
AS_OF = ["--as-of", "2026-07-23T11:00:00Z", "--deadline-seconds", "600"]
ALICE = ["--subject", "acme/user:alice", *AS_OF]
BEFORE = "What changed on payment-api before the PAY-4097 errors?"
CORRELATION = "Did release-2026.07.23.1 cause the PAY-4097 errors on payment-api?"
CROWD_START = datetime(2026, 7, 22, 12, 0, tzinfo=UTC)
SUBJECT = "deploy:release-2026.07.23.1"
RISK_RULES = "change:risk-rules-RR-2026-07-23a"


def _release(n: int) -> str:
    at = (CROWD_START + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return release_line("crowd", n, at)


@pytest.fixture(scope="module")
def crowded_graph(demo_graph: neo4j.Driver) -> neo4j.Driver:
    return demo_graph


@pytest.fixture()
def crowded(crowded_graph, cli_env, invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The releases and change events above, recorded now (a second ingest of the same
    bundle changes nothing)."""
    bundle = "tenant: acme\nnodes:\n"
    bundle += "".join(_release(n) for n in range(RELEASES))
    bundle += "".join(change_line("crowd", n, f"2026-07-23T09:{40 + n:02d}:00Z") for n in range(8))
    ingest_text(invoke, tmp_path / "crowd.yaml", bundle)


def _releases_listed(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return sorted(
        m.group(1)
        for c in doc["claims"]
        if (m := re.match(r"Release (deploy:crowd-\d+) ", c["statement"]))
    )


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_every_release_before_the_errors_is_listed(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, BEFORE, *ALICE)
    # Before: crowd-0, -1 and -2 (the oldest), the nine closest to the error `top_k_reached`.
    assert _releases_listed(doc) == sorted(f"deploy:crowd-{n}" for n in range(RELEASES)), doc[
        "claims"
    ]
    assert not [
        r
        for r in doc["rejected"]
        if r["element_id"].startswith(("deploy:", "change:")) and r["reason"] == "top_k_reached"
    ], doc["rejected"]
    assert not [g for g in _gaps(doc) if "did not fit the evidence budget" in g], _gaps(doc)


def _at(doc: dict, element_id: str) -> str:  # type: ignore[type-arg]
    """When a release (its finish) or a change event of the crowd took effect."""
    if element_id.startswith("change:crowd-"):
        return f"2026-07-23T09:{40 + int(element_id.rsplit('-', 1)[1]):02d}:00Z"
    if element_id == RISK_RULES:
        return "2026-07-23T10:02:21Z"
    if element_id.startswith("deploy:crowd-"):
        n = int(element_id.rsplit("-", 1)[1])
        return (CROWD_START + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert element_id == SUBJECT, element_id
    return "2026-07-23T10:02:00Z"


def _left_out_words(doc: dict, window: list[str]) -> tuple[int, str]:  # type: ignore[type-arg]
    """How many of `window` the evidence holds, and how the gap names the others: the
    farthest from the error, from the earliest to the latest, nearest first."""
    shown = {e["element_id"] for e in doc["evidence"]} & set(window)
    gone = sorted(set(window) - shown, key=lambda i: (_at(doc, i), i), reverse=True)
    said = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
    return len(shown), (
        f"the other {len(gone)} (the farthest from it, from {_at(doc, gone[-1])} to "
        f"{_at(doc, gone[0])}: {said}) did not fit the evidence budget (budget_exceeded)"
    )


def test_competing_causes_nearest_the_error_are_kept_for_the_budget(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, CORRELATION, *ALICE, "--budget-tokens", "1500")
    releases = [f"deploy:crowd-{n}" for n in range(RELEASES)] + [SUBJECT]
    changes = [f"change:crowd-{n}" for n in range(CHANGES)] + [RISK_RULES]
    in_evidence = {e["element_id"] for e in doc["evidence"]}
    # Before: the oldest kept (deploy:crowd-0 to -4, 20 h before the error), the risk rule
    # change 17 s before it and every crowd change left out.
    assert RISK_RULES in in_evidence and SUBJECT in in_evidence, in_evidence
    for window in (releases, changes):
        kept = [i for i in window if i in in_evidence]
        gone = [i for i in window if i not in in_evidence]
        assert gone, window
        assert max(_at(doc, i) for i in gone) < min(_at(doc, i) for i in kept), (kept, gone)
    shown, words = _left_out_words(doc, releases)
    assert (
        f"{RELEASES + 1} releases read in the 24 h before the first error "
        f"(2026-07-22T10:02:38Z to 2026-07-23T10:02:38Z); {shown} in the evidence (the "
        f"nearest to it), {words}, so the candidate causes listed are not all of them; no "
        "verdict between them; a larger --budget-tokens lists them"
    ) in _gaps(doc), doc["missing_evidence"]
    # The change events' gap names its own farthest (the CI/CD record of the release's time
    # is read among them).
    assert any(_left_out_words(doc, changes)[1] in g for g in _gaps(doc)), doc["missing_evidence"]
    assert doc["verdict"] == "uncertain"
    assert doc["status"] == "partial"


def test_a_named_release_stays_whatever_its_distance(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # The verdict is about deploy:crowd-0, the farthest release of the window: nearer ones
    # never take its room.
    doc = investigate_json(
        invoke,
        "Did deploy:crowd-0 cause the PAY-4097 errors on payment-api?",
        *ALICE,
        "--budget-tokens",
        "1500",
    )
    assert "deploy:crowd-0" in {e["element_id"] for e in doc["evidence"]}, doc["evidence"]
    assert any(
        c["statement"].startswith("PAY-4097 was first seen 22 h ")
        and "deploy:crowd-0" in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]


def test_many_unexplained_changes_leave_no_likely_verdict(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # Every competing cause fits: the postmortem names the release as the cause and rules
    # out the risk rule change, and says nothing of the eight others.
    doc = investigate_json(invoke, CORRELATION, *ALICE)
    assert not [g for g in _gaps(doc) if "did not fit the evidence budget" in g], _gaps(doc)
    unexplained = [c for c in doc["confounders"] if c["assessment"] == "no_mechanism_evidence"]
    assert len(unexplained) == CHANGES, doc["confounders"]
    # Before: `likely`, as with the risk rule change alone.
    assert doc["verdict"] == "uncertain", doc["verdict"]
    assert [
        c["statement"] for c in doc["claims"] if "not ruled out by any mechanism" in c["statement"]
    ] == [
        f"{CHANGES} other changes in the 30 min before PAY-4097 was first seen are not ruled "
        "out by any mechanism evidence: each could explain the errors as well, so the verdict "
        "is no stronger than uncertain"
    ], doc["claims"]


def test_a_periods_changes_are_listed_in_time_order(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "what changed on payment-api in the last 24 hours?", *ALICE)
    times = [
        m.group(1)
        for c in doc["claims"]
        if (m := re.search(r" (?:finished|happened) at (\S+Z),", c["statement"]))
    ]
    # Before: the change events first, then the releases by statement (crowd-10 before -2).
    assert len(times) == RELEASES + 1 + CHANGES + 1, doc["claims"]
    assert times == sorted(times), times


_CHANGE_FACT = re.compile(
    r"(?:Release (deploy:\S+)|Change .* \((change:\S+)\)) (?:finished|happened) at (\S+Z), "
)


def test_the_changes_before_the_errors_are_listed_in_time_order(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # Not a period: the window before the first error (h29-claims item 2).
    doc = investigate_json(invoke, BEFORE, *ALICE)
    listed = [
        (m.group(3), m.group(1) or m.group(2))
        for c in doc["claims"]
        if (m := _CHANGE_FACT.match(c["statement"]))
    ]
    assert len(listed) == RELEASES + 1 + CHANGES + 1, doc["claims"]
    # Before: by their text, the change events first, then the releases with deploy:crowd-10
    # and -11 before deploy:crowd-2.
    assert listed == sorted(listed), listed
    releases = [i for _, i in listed if i.startswith("deploy:crowd-")]
    assert releases[:3] == ["deploy:crowd-0", "deploy:crowd-1", "deploy:crowd-2"], releases


def _june_release(n: int, linked: bool) -> str:
    """Release june-n of payment-api on June (n // 6 + 1) at (n % 6) * 4 h, tied to the
    service by a DEPLOYED_AS edge (`linked`) or by its `service` property."""
    at = f"2026-06-{1 + n // 6:02d}T{(n % 6) * 4:02d}:00:00Z"
    props = f'finished_at: "{at}"' + ("" if linked else ", service: svc:payment-api")
    return (
        f"  - {{id: deploy:june-{n}, label: Deployment, name: june-{n}, acl: [internal], "
        f'source_id: src:cicd, locator: "cicd/june/{n}", valid_from: "{at}", '
        f"props: {{{props}}}}}\n"
    )


def test_a_cut_period_read_keeps_its_oldest_releases(  # type: ignore[no-untyped-def]
    crowded_graph, cli_env, invoke, tmp_path: Path
) -> None:
    # 60 releases named by their `service` property, then 60 later ones tied by an edge: the
    # read's cap (100) keeps the 100 oldest. Before, each UNION branch had its own LIMIT and
    # the edge branch's rows came first: the cut kept all 60 later ones and 40 of the oldest.
    bundle = "tenant: acme\nnodes:\n"
    bundle += "".join(_june_release(n, linked=n >= 60) for n in range(120))
    bundle += "edges:\n" + "".join(
        f"  - {{type: DEPLOYED_AS, from: svc:payment-api, to: deploy:june-{n}, "
        f'acl: [internal], source_id: src:cicd, valid_from: "2026-06-01T00:00:00Z"}}\n'
        for n in range(60, 120)
    )
    ingest_text(invoke, tmp_path / "june.yaml", bundle)
    doc = investigate_json(
        invoke,
        "what changed on payment-api in June 2026?",
        "--subject",
        "acme/user:alice",
        "--as-of",
        "2026-07-01T00:00:00Z",
        "--deadline-seconds",
        "600",
        "--budget-tokens",
        "60000",
    )
    listed = {
        m.group(1)
        for c in doc["claims"]
        if (m := re.match(r"Release deploy:june-(\d+) ", c["statement"]))
    }
    assert sorted(map(int, listed)) == list(range(100)), sorted(map(int, listed))
    assert any(g.startswith("more than 100 releases of svc:payment-api") for g in _gaps(doc))


def test_the_change_events_gap_counts_changes_over_their_own_window(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # h28-crowd2 items 1 and 2: the 8 crowd changes and the risk rule change are counted (the
    # CI/CD record of the release's time is no change of its own), over the 30 min the change
    # events are read in. Before: "10 change events read in the 24 h before the first error
    # (2026-07-22T10:02:38Z to ...".
    doc = investigate_json(invoke, CORRELATION, *ALICE, "--budget-tokens", "1500")
    changes = [g for g in _gaps(doc) if " change events read in the " in g]
    assert len(changes) == 1, _gaps(doc)
    assert changes[0].startswith(
        f"{CHANGES + 1} change events read in the 30 min before the first error "
        "(2026-07-23T09:32:38Z to 2026-07-23T10:02:38Z); "
    ), changes
    assert "doc:cicd-release-2026.07.23.1" not in changes[0], changes


def test_required_evidence_takes_the_room_of_the_farthest_causes(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # h28-crowd2 item 3: the runbook and the owner, read after the budget filled with the
    # crowd's changes, push the farthest of them out. Before: exit 2, "--budget-tokens 1500
    # is too small: required evidence (runbook) does not fit".
    question = CORRELATION.removesuffix("?") + "? Who owns payment-api and which runbook applies?"
    result = invoke("investigate", question, *ALICE, "--budget-tokens", "1500", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    in_evidence = {e["element_id"] for e in doc["evidence"]}
    supported = {t for e in doc["evidence"] for t in e["evidence_types"]}
    assert {"runbook", "ownership"} <= supported, supported
    assert SUBJECT in in_evidence and RISK_RULES in in_evidence, in_evidence
    # The changes left out are the farthest, and said so.
    _shown, words = _left_out_words(
        doc, [f"change:crowd-{n}" for n in range(CHANGES)] + [RISK_RULES]
    )
    assert any(words in g for g in _gaps(doc)), _gaps(doc)
    assert doc["verdict"] == "uncertain"
    assert doc["status"] == "partial"
