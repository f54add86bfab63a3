"""`investigator runbook` against a real Neo4j: the version valid at as_of, the owner then,
the other versions rejected with their reason, tenants and ACLs enforced, runs recorded.

The world: tests/fixtures/runbooks/catalogs (services, teams, an ownership move of
svc:card-auth on 2026-07-24, principals), the Markdown runbooks of acme (card-auth-recovery
v1 2026-01-01..06-01, v2 06-01..09-01, v3 from 09-01; KubePodCrashLooping) and of globex,
and both tenants' Prometheus rule files. Everything is ingested through the importers and
the one bundle writer, exactly as `investigator ingest` does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.importers.common import ImportOptions
from graph_schema.importers.dispatch import import_source
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.runbook_lookup import (
    LookupTarget,
    RunbookAnswer,
    RunbookLookup,
    RunbookQuery,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def wipe(drv: neo4j.Driver) -> None:
    """Delete everything in batches; `CALL ... IN TRANSACTIONS` needs an implicit transaction
    (conftest's `wipe` runs it in a managed one, which Neo4j refuses once there is data)."""
    with drv.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


def build_world(drv: neo4j.Driver) -> None:
    """Wipe the graph and ingest the runbook world (both tenants)."""
    wipe(drv)
    apply_schema(drv)
    for name in ("acme.yaml", "globex.yaml"):
        ingest_bundle(drv, load_bundle(FIXTURES / "runbooks" / "catalogs" / name))
    for tenant, runbooks, rules in (
        ("acme", "acme", "acme-rules.yaml"),
        ("globex", "globex", "globex-rules.yaml"),
    ):
        options = ImportOptions(tenant=tenant, acl=["internal"])
        for fmt, path in (
            ("markdown-runbooks", FIXTURES / "runbooks" / runbooks),
            ("prometheus-rules", FIXTURES / "prometheus" / rules),
        ):
            result = import_source(fmt, path, options, drv)
            assert result.problems == [], result.problems
            ingest_bundle(drv, result.loaded())


@pytest.fixture(scope="module")
def world(driver: neo4j.Driver) -> Iterator[RunbookLookup]:
    build_world(driver)
    yield RunbookLookup(driver)


def ask(
    lookup: RunbookLookup,
    target: LookupTarget,
    value: str,
    as_of: str,
    subject: str = "acme/user:oncall",
) -> RunbookAnswer:
    return lookup.lookup(
        RunbookQuery(target=target, value=value, subject_id=subject, as_of=_t(as_of))
    )


def _rejected(answer: RunbookAnswer) -> dict[str, tuple[str, str | None]]:
    return {r.element_id: (r.reason.value, r.replacement) for r in answer.rejected}


V1, V2, V3 = (f"runbook:card-auth-recovery@v{n}" for n in (1, 2, 3))


@pytest.mark.parametrize(
    ("as_of", "version", "owner", "rejected"),
    [
        (
            "2026-03-01T00:00:00Z",
            V1,
            "team:cards",
            {V2: ("rejected_temporal", None), V3: ("rejected_temporal", None)},
        ),
        (
            "2026-07-01T00:00:00Z",
            V2,
            "team:cards",
            {V1: ("rejected_superseded", V2), V3: ("rejected_temporal", None)},
        ),
        (
            # Same runbook version, but card-auth changed hands on 2026-07-24.
            "2026-08-01T00:00:00Z",
            V2,
            "team:card-platform",
            {V1: ("rejected_superseded", V2), V3: ("rejected_temporal", None)},
        ),
        (
            "2026-10-01T00:00:00+02:00",
            V3,
            "team:card-platform",
            {V1: ("rejected_superseded", V2), V2: ("rejected_superseded", V3)},
        ),
    ],
)
def test_service_lookup_gives_version_and_owner_valid_at_as_of(
    world: RunbookLookup,
    as_of: str,
    version: str,
    owner: str,
    rejected: dict[str, tuple[str, str | None]],
) -> None:
    answer = ask(world, LookupTarget.SERVICE, "svc:card-auth", as_of)
    assert answer.runbook is not None
    assert answer.runbook.id == version
    assert answer.runbook.version == int(version[-1])
    assert answer.owner == owner
    assert answer.owner_detail is not None
    assert answer.owner_detail.basis == "service svc:card-auth"
    assert _rejected(answer) == rejected


def test_service_can_be_named_by_name_or_alias(world: RunbookLookup) -> None:
    for name in ("card-auth", "card authorisation"):
        answer = ask(world, LookupTarget.SERVICE, name, "2026-07-01T00:00:00Z")
        assert answer.runbook is not None and answer.runbook.id == V2, name


@pytest.mark.parametrize(
    ("as_of", "version"),
    [
        ("2026-02-01T00:00:00Z", V1),
        ("2026-06-01T00:00:00Z", V2),  # valid_from is inclusive, the old valid_to exclusive
        ("2026-09-02T00:00:00Z", V3),
    ],
)
def test_alert_lookup_follows_runbook_url_links(
    world: RunbookLookup, as_of: str, version: str
) -> None:
    answer = ask(world, LookupTarget.ALERT, "CardAuthErrorsHigh", as_of)
    assert answer.resolved == ["alert:CardAuthErrorsHigh"]
    assert answer.runbook is not None and answer.runbook.id == version
    # The alert has no owner of its own: the runbook's OWNS edge valid then names it.
    assert answer.owner == "team:cards"
    assert answer.owner_detail is not None
    assert answer.owner_detail.basis == f"runbook {version}"


def test_error_code_lookup_and_card_fields(world: RunbookLookup) -> None:
    answer = ask(world, LookupTarget.ERROR_CODE, "CARD-502", "2026-07-15T03:12:00Z")
    rb = answer.runbook
    assert rb is not None and rb.id == V2
    assert rb.title == "Card authorisation recovery"
    assert rb.locator == "cards/card-auth-recovery-v2.md"
    assert rb.steps_locator == "cards/card-auth-recovery-v2.md#steps"
    assert rb.steps[0].startswith("1. Check the acquirer dashboard")
    assert rb.valid_from == _t("2026-06-01T00:00:00Z")
    assert rb.valid_to == _t("2026-09-01T00:00:00Z")
    assert rb.evidence_id.startswith("ev:")
    assert rb.source_id == "src:runbooks:acme"
    assert rb.source_version is not None and rb.content_hash is not None  # full provenance
    assert rb.content_hash.startswith("sha256:")


def test_alert_runbook_without_front_matter_is_found_by_url(world: RunbookLookup) -> None:
    answer = ask(world, LookupTarget.ALERT, "KubePodCrashLooping", "2026-07-23T03:12:00Z")
    assert answer.runbook is not None
    assert answer.runbook.id == "runbook:KubePodCrashLooping"
    assert answer.runbook.steps_locator == "kubernetes/KubePodCrashLooping.md#mitigation"
    assert answer.rejected == []


def test_another_tenants_same_named_alert_never_appears(world: RunbookLookup) -> None:
    acme = ask(world, LookupTarget.ALERT, "KubePodCrashLooping", "2026-07-23T03:12:00Z")
    globex = ask(
        world,
        LookupTarget.ALERT,
        "KubePodCrashLooping",
        "2026-07-23T03:12:00Z",
        "globex/user:mallory",
    )
    assert acme.runbook is not None and globex.runbook is not None
    assert acme.runbook.id == "runbook:KubePodCrashLooping"
    assert globex.runbook.id == "runbook:globex-crashloop"
    acme_text = acme.model_dump_json()
    assert "globex" not in acme_text.lower()
    assert "Roll back the last deployment" not in globex.model_dump_json()
    # Nor through free text, nor for names only the other tenant has.
    text = ask(world, LookupTarget.TEXT, "restart the whole node pool", "2026-07-23T00:00:00Z")
    assert text.runbook is None or "globex" not in text.runbook.id
    card = ask(
        world,
        LookupTarget.ALERT,
        "CardAuthErrorsHigh",
        "2026-07-01T00:00:00Z",
        "globex/user:mallory",
    )
    assert card.runbook is None and card.resolved == []


def test_subject_without_the_label_gets_no_runbook(world: RunbookLookup) -> None:
    answer = ask(
        world, LookupTarget.SERVICE, "svc:card-auth", "2026-07-01T00:00:00Z", "acme/user:nolabel"
    )
    assert answer.runbook is None
    assert answer.owner is None and answer.owner_detail is None
    assert answer.rejected == []  # invisible items are never candidates, not even rejected
    assert "runbook" not in (answer.note or "").lower() or answer.resolved == []


def test_free_text_goes_through_fulltext_and_the_same_gates(world: RunbookLookup) -> None:
    answer = ask(world, LookupTarget.TEXT, "acquirer failover", "2026-07-01T00:00:00Z")
    assert answer.runbook is not None and answer.runbook.id == V2
    assert _rejected(answer)[V1] == ("rejected_superseded", V2)
    assert _rejected(answer)[V3][0] == "rejected_temporal"
    nothing = ask(world, LookupTarget.TEXT, "zzzz-no-such-words", "2026-07-01T00:00:00Z")
    assert nothing.runbook is None and nothing.note


def test_hostile_text_is_a_literal_search(world: RunbookLookup, driver: neo4j.Driver) -> None:
    before, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    for text in ('"; MATCH (n) DETACH DELETE n //', "*:*", "title:(a OR b)~ AND \\"):
        answer = ask(world, LookupTarget.TEXT, text, "2026-07-01T00:00:00Z")
        assert answer.runbook is None or answer.runbook.id.startswith("runbook:")
    after, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    assert before[0]["c"] == after[0]["c"]


def test_lookup_is_recorded_as_a_run(world: RunbookLookup, driver: neo4j.Driver) -> None:
    answer = ask(world, LookupTarget.SERVICE, "svc:card-auth", "2026-07-01T00:00:00Z")
    records, _, _ = driver.execute_query(
        "MATCH (n) WHERE n.run_id = $run_id RETURN labels(n) AS labels, properties(n) AS p",
        run_id=answer.run_id,
    )
    kinds = sorted({label for r in records for label in r["labels"]})
    assert "CtxRun" in kinds and "CtxToolCall" in kinds and "CtxRejection" in kinds
    run = next(r["p"] for r in records if "CtxRun" in r["labels"])
    assert run["command"] == "runbook"
    assert run["subject_id"] == "user:oncall"
    assert run["as_of"].startswith("2026-07-01T00:00:00")
    # Nothing of the Context Graph carries the KG label.
    assert not any("KG" in r["labels"] for r in records)


def test_lookup_needs_no_clock_in_the_answer_body(world: RunbookLookup) -> None:
    first = ask(world, LookupTarget.SERVICE, "svc:card-auth", "2026-07-01T00:00:00Z")
    second = ask(world, LookupTarget.SERVICE, "svc:card-auth", "2026-07-01T00:00:00Z")
    strip = {"run_id", "known_at"}
    assert first.model_dump(exclude=strip) == second.model_dump(exclude=strip)
    assert first.run_id != second.run_id


# -- through the CLI ----------------------------------------------------------------------


def test_cli_card_is_short_and_readable(world: RunbookLookup, cli_env: object, invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke(
        "runbook", "--service", "svc:card-auth", "--as-of", "2026-08-01T00:00:00Z",
        "--subject", "user:oncall",
)  # fmt: skip
    assert result.code == 0, result
    out = result.out
    assert "Card authorisation recovery" in out and "v2" in out
    assert "team:card-platform" in out
    assert "cards/card-auth-recovery-v2.md#steps" in out
    assert "Check the acquirer dashboard" in out
    assert "rejected_superseded -> runbook:card-auth-recovery@v2" in out
    assert "rejected_temporal" in out
    assert len(out.splitlines()) <= 15
    assert result.err == ""


def test_cli_json_is_one_document_with_the_contract_fields(  # type: ignore[no-untyped-def]
    world: RunbookLookup, cli_env: object, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INVESTIGATOR_SUBJECT", "user:oncall")
    result = invoke(
        "runbook", "--error-code", "CARD-502", "--as-of", "2026-10-01T00:00:00Z", "--json"
    )
    assert result.code == 0, result
    doc = json.loads(result.out)  # exactly one document: anything else fails to parse
    for key in ("id", "version", "title", "locator", "valid_from", "valid_to", "evidence_id"):
        assert key in doc["runbook"], key
    assert doc["runbook"]["id"] == V3 and doc["runbook"]["version"] == 3
    # The team id, as docs/design.md section 9 says: an error code's owner is the owner at
    # as_of of its service (card-auth moved to card-platform on 07-24), the team to page;
    # the runbook's own OWNS edge is shown as runbook_owner.
    assert doc["owner"] == "team:card-platform"
    assert doc["owner_detail"]["basis"] == (
        "service svc:card-auth (runbook:card-auth-recovery@v3 applies to it)"
    )
    assert doc["runbook_owner"]["team"] == "team:cards"
    assert doc["runbook_owner"]["basis"] == "runbook runbook:card-auth-recovery@v3"
    assert {r["element_id"] for r in doc["rejected"]} == {V1, V2}
    assert all(r["reason"] == "rejected_superseded" for r in doc["rejected"])
    assert doc["run_id"].startswith("run-")
    none = invoke("runbook", "--alert", "NoSuchAlert", "--json")
    assert none.code == 0
    assert json.loads(none.out)["runbook"] is None and json.loads(none.out)["owner"] is None


def test_default_as_of_is_now(world: RunbookLookup) -> None:
    answer = world.lookup(
        RunbookQuery(
            target=LookupTarget.ALERT,
            value="KubePodCrashLooping",
            subject_id="acme/user:oncall",
            as_of=datetime.now(UTC),
        )
    )
    assert answer.runbook is not None
