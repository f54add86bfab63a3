"""An on-call engineer asking whether a deploy caused errors that began while it was still
rolling out (real Neo4j, a small bundle of its own: release orders-2026.07.23.1 of
orders-api rolled out 09:55:12Z-10:02:00Z, the one before it finished 2026-07-20T14:00Z).

An error first seen at or after a rollout's start can be evidence about that release (the
start instant itself counts: the rollout is under way from it); one first seen before it
never is. Three tenants, one per first-seen time: during the rollout, at its start, 1 s
before it."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import investigate_json, wipe

ROLLING = "deploy:orders-2026.07.23.1"
STARTED = "2026-07-23T09:55:12Z"
FINISHED = "2026-07-23T10:02:00Z"
# tenant -> the first-seen time of ORD-500 in it.
FIRST_SEEN = {
    "rolldur": "2026-07-23T09:58:00Z",  # during the rollout
    "rollstart": STARTED,  # at the very instant it started
    "rollpre": "2026-07-23T09:55:11Z",  # 1 s before it started
}

_BUNDLE = """tenant: {tenant}
sources:
  - {{source_id: src:cicd, source_type: ci_cd, owner_team: team:core, classification: internal,
     trust: trusted, authority: 95, allowed_purposes: [incident_investigation, audit]}}
  - {{source_id: src:obs, source_type: observability, owner_team: team:core,
     classification: internal, trust: trusted, authority: 90,
     allowed_purposes: [incident_investigation, audit]}}
principals:
  - {{id: user:dana, labels: [internal], purposes: [incident_investigation, audit]}}
nodes:
  - {{id: svc:orders-api, label: Service, name: orders-api, acl: [internal], source_id: src:cicd,
     valid_from: "2025-01-01T00:00:00Z"}}
  - {{id: deploy:orders-2026.07.23.1, label: Deployment, name: orders-2026.07.23.1,
     acl: [internal], source_id: src:cicd, valid_from: "{finished}",
     props: {{service: svc:orders-api, release: "2026.07.23.1", started_at: "{started}",
             finished_at: "{finished}"}}}}
  - {{id: deploy:orders-2026.07.20.1, label: Deployment, name: orders-2026.07.20.1,
     acl: [internal], source_id: src:cicd, valid_from: "2026-07-20T14:00:00Z",
     props: {{service: svc:orders-api, release: "2026.07.20.1",
             started_at: "2026-07-20T13:51:00Z", finished_at: "2026-07-20T14:00:00Z"}}}}
  - {{id: err:ORD-500, label: ErrorCode, name: ORD-500, acl: [internal], source_id: src:obs,
     valid_from: "2025-01-01T00:00:00Z", props: {{code: ORD-500, description: "write timed out"}}}}
  - {{id: inc:orders, label: Incident, name: "Order write timeouts", acl: [internal],
     source_id: src:obs, valid_from: "{first}", valid_to: "2026-07-23T10:30:00Z",
     props: {{severity: SEV2, started_at: "{first}", resolved_at: "2026-07-23T10:30:00Z"}}}}
edges:
  - {{type: DEPLOYED_TO, from: deploy:orders-2026.07.23.1, to: svc:orders-api, acl: [internal],
     source_id: src:cicd, valid_from: "{finished}"}}
  - {{type: DEPLOYED_TO, from: deploy:orders-2026.07.20.1, to: svc:orders-api, acl: [internal],
     source_id: src:cicd, valid_from: "2026-07-20T14:00:00Z"}}
  - {{type: EMITTED, from: svc:orders-api, to: err:ORD-500, acl: [internal], source_id: src:obs,
     valid_from: "{first}", valid_to: "2026-07-23T10:30:00Z", props: {{first_seen: "{first}"}}}}
  - {{type: AFFECTED_BY, from: svc:orders-api, to: inc:orders, acl: [internal],
     source_id: src:obs, valid_from: "{first}", valid_to: "2026-07-23T10:30:00Z"}}
  - {{type: MENTIONS, from: inc:orders, to: err:ORD-500, acl: [internal], source_id: src:obs,
     valid_from: "{first}"}}
"""


@pytest.fixture(scope="module")
def rollout_graph(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The three tenants' bundles in an otherwise empty graph, ingested once."""
    from graph_schema.bundle import load_bundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    folder: Path = tmp_path_factory.mktemp("error-during-rollout")
    for tenant, first in FIRST_SEEN.items():
        text = _BUNDLE.format(tenant=tenant, first=first, started=STARTED, finished=FINISHED)
        (folder / f"{tenant}.yaml").write_text(text, encoding="utf-8")
    wipe(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(folder))
    driver.execute_query("CALL db.awaitIndexes(300)")
    return driver


def _ask(invoke, tenant: str, question: str, as_of: str | None) -> dict:  # type: ignore[no-untyped-def,type-arg]
    flags = ["--service", "svc:orders-api", "--subject", f"{tenant}/user:dana"]
    flags += ["--deadline-seconds", "600", *(["--as-of", as_of] if as_of else [])]
    return investigate_json(invoke, question, *flags)  # type: ignore[no-any-return]


def _during(lag: str, finish: str) -> str:
    return (
        f"ORD-500 was first seen {lag} after release {ROLLING} started at {STARTED}, during "
        f"its rollout ({finish}): a time correlation, not by itself a root cause"
    )


@pytest.mark.parametrize(
    ("tenant", "as_of", "lag"),
    [
        # Before: `uncertain`, set against the 07-20 release ("2 d 19 h 58 min after ...,
        # outside the 30 min correlation window"); the rollout under way never weighed.
        ("rolldur", "2026-07-23T10:05:00Z", "2 min 48 s"),
        ("rolldur", None, "2 min 48 s"),
        # The start instant counts: the rollout is under way from it.
        ("rollstart", "2026-07-23T10:05:00Z", "0 s"),
    ],
)
def test_an_error_first_seen_during_a_rollout_correlates_with_it(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke, tenant: str, as_of: str | None, lag: str
) -> None:
    doc = _ask(invoke, tenant, "Did the deploy cause it?", as_of)
    statements = [c["statement"] for c in doc["claims"]]
    assert doc["verdict"] == "likely", statements
    assert _during(lag, f"finished at {FINISHED}") in statements, statements
    assert not any("cannot have started it" in s for s in statements), statements
    assert not any("orders-2026.07.20.1 may have caused" in s for s in statements), statements


def test_what_changed_before_the_errors_lists_the_rollout_under_way(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Before: the rollout was left out (it finished after the first error); only the 07-20
    # release, 2 d 19 h 58 min before, was listed.
    doc = _ask(invoke, "rolldur", "What changed before the errors?", "2026-07-23T10:05:00Z")
    statements = [c["statement"] for c in doc["claims"]]
    assert (
        f"Release {ROLLING} started at {STARTED}, 2 min 48 s before ORD-500 was first seen, "
        f"and was still rolling out then (finished at {FINISHED})"
    ) in statements, statements
    assert ROLLING in {c["element_id"] for c in doc["confounders"]}


def test_an_error_first_seen_before_the_rollout_started_is_not_about_it(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = "Was release 2026.07.23.1 related to the ORD-500 errors?"
    doc = _ask(invoke, "rollpre", question, "2026-07-23T10:05:00Z")
    statements = [c["statement"] for c in doc["claims"]]
    assert doc["verdict"] == "refuted", statements
    # Judged on its start (before: "before release ... finished at 10:02:00Z").
    assert (
        f"ORD-500 was first seen at 2026-07-23T09:55:11Z, before release {ROLLING} started at "
        f"{STARTED}: the release cannot have started it"
    ) in statements, statements
    assert not any("during its rollout" in s for s in statements), statements


@pytest.mark.parametrize(
    ("as_of", "finish"),
    [
        # Before: `uncertain`, set against the 07-20 release: the rollout, under way at
        # as_of and at the first error, was read by no check (its finish is after both).
        ("2026-07-23T09:58:00Z", "not finished by as_of 2026-07-23T09:58:00Z"),
        ("2026-07-23T10:00:00Z", "not finished by as_of 2026-07-23T10:00:00Z"),
        (FINISHED, f"finished at {FINISHED}"),
    ],
)
def test_asked_before_the_rollout_finished_the_error_still_correlates_with_it(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke, as_of: str, finish: str
) -> None:
    for question in ("Did the deploy cause it?", "Was release 2026.07.23.1 related to the errors?"):
        doc = _ask(invoke, "rolldur", question, as_of)
        statements = [c["statement"] for c in doc["claims"]]
        assert doc["verdict"] == "likely", (question, statements)
        assert _during("2 min 48 s", finish) in statements, (question, statements)
        assert not any("orders-2026.07.20.1 may have caused" in s for s in statements)
        assert not any("outside the 30 min correlation window" in s for s in statements)


@pytest.mark.parametrize(
    "as_of", ["2026-07-23T09:50:00Z", STARTED, "2026-07-23T09:57:00Z"], ids=["pre", "start", "mid"]
)
def test_asked_before_the_first_error_nothing_correlates_yet(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke, as_of: str
) -> None:
    doc = _ask(invoke, "rolldur", "Did the deploy cause it?", as_of)
    statements = [c["statement"] for c in doc["claims"]]
    assert doc["verdict"] == "uncertain", statements
    assert f"No first-seen error is known at as_of {as_of}" in " ".join(statements), statements
    assert not any("during its rollout" in s or "may have caused" in s for s in statements)


def test_a_rollout_under_way_found_by_name_is_not_called_after_as_of(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Before: the name lookup's read of the rollout was `rejected_temporal` ("valid from
    # 10:02:00, after as_of"): judged on its finish, though under way since 09:55:12.
    question = f"Was release {ROLLING.removeprefix('deploy:')} related to the errors?"
    doc = _ask(invoke, "rolldur", question, "2026-07-23T10:00:00Z")
    assert doc["verdict"] == "likely"
    trace = invoke("trace", doc["run_id"], "--subject", "rolldur/user:dana")
    assert trace.code == 0, trace
    assert "rejected_temporal" not in trace.out, trace.out


@pytest.mark.parametrize(
    ("as_of", "finish"),
    [(FINISHED, f"finished at {FINISHED}"), ("2026-07-23T10:00:00Z", "not finished by as_of")],
)
def test_the_changes_section_shows_the_rollout_start_as_the_claims_do(  # type: ignore[no-untyped-def]
    rollout_graph: neo4j.Driver, cli_env, invoke, as_of: str, finish: str
) -> None:
    # Before: "deploy:orders-2026.07.23.1 at 2026-07-23T10:02:00Z", after the first error
    # (09:58), while the claim above it says the release started before it, at 09:55:12.
    flags = ["--service", "svc:orders-api", "--subject", "rolldur/user:dana"]
    flags += ["--deadline-seconds", "600", "--as-of", as_of]
    report = invoke("investigate", "What changed before the errors?", *flags)
    assert report.code == 0, report
    listed = report.out.split("Changes before the first error\n", 1)[1].split("\n\n", 1)[0]
    assert f"  {ROLLING} started at {STARTED}, {finish} (ev:" in listed, listed
    assert f"{ROLLING} at " not in listed, listed
    doc = investigate_json(invoke, "What changed before the errors?", *flags)
    rollout = next(c for c in doc["confounders"] if c["element_id"] == ROLLING)
    assert (rollout["started_at"], rollout["at"]) == (STARTED, FINISHED), rollout
