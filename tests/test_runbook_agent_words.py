"""An on-call engineer names a component as it is called (the compactor, the ingester, the
querier), while runbooks and alert texts often say what it does (compact, ingest, query).

The layout is Thanos' mixin `runbook.md` (a table of contents, then a table of each rule
group's alerts), in our own words; the alert rules link to it. Real Neo4j, real CLI.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as, runbook_json

from graph_schema.importers.dispatch import import_source_id
from investigator.runbook_search import _stem

CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "acme.yaml"


@pytest.fixture()
def vault(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    folder = tmp_path / "mixin"
    folder.mkdir()
    (folder / "runbook.md").write_text(
        "# Alerts\n\n## Rule Groups\n\n* [vault-compact](#vault-compact)\n"
        "* [vault-ingest](#vault-ingest)\n\n## vault-compact\n\n"
        "|Name|Summary|Description|Severity|\n|---|---|---|---|\n"
        "|VaultCompactMultipleRunning|Vault Compact runs twice.|More than one Vault Compact "
        "instance is running.|warning|\n"
        "|VaultCompactHalted|Vault Compact has failed to run and is now halted.|Vault Compact "
        "{{$labels.job}} has failed to run and now is halted.|warning|\n"
        "|VaultCompactHasNotRun|Vault Compact has not uploaded anything.|Vault Compact "
        "{{$labels.job}} has not uploaded anything for 24 hours.|warning|\n\n"
        "## vault-ingest\n\n|Name|Summary|Description|Severity|\n|---|---|---|---|\n"
        "|VaultIngestLagging|Vault Ingest lags behind.|Vault Ingest {{$labels.job}} is "
        "lagging by {{$value}} seconds.|critical|\n\n## vault-work\n\n"
        "|Name|Summary|Description|Severity|\n|---|---|---|---|\n"
        "|VaultWorkHalted|Vault Work has halted.|Vault Work {{$labels.job}} has halted.|warning|\n"
        "|VaultServeDown|Vault Serve is down.|Vault Serve {{$labels.job}} is down.|critical|\n"
        "|VaultControlStalled|Vault Control stalled.|Vault Control {{$labels.job}} stalled."
        "|warning|\n",
        encoding="utf-8",
    )
    rules = tmp_path / "vault-rules.yaml"
    url = "https://example.com/vault/tree/main/mixin/runbook.md#alert-name-"
    rules.write_text(
        "groups:\n- name: vault-compact\n  rules:\n"
        "  - alert: VaultCompactMultipleRunning\n    expr: count > 1\n    annotations:\n"
        "      summary: Vault Compact runs twice.\n"
        "      description: More than one Vault Compact instance is running.\n"
        f"      runbook_url: {url}vaultcompactmultiplerunning\n"
        "  - alert: VaultCompactHalted\n    expr: halted == 1\n    annotations:\n"
        "      summary: Vault Compact has failed to run and is now halted.\n"
        "      description: Vault Compact {{$labels.job}} has failed to run and now is halted.\n"
        f"      runbook_url: {url}vaultcompacthalted\n"
        "  - alert: VaultCompactHasNotRun\n    expr: uploads == 0\n    annotations:\n"
        "      summary: Vault Compact has not uploaded anything.\n"
        "      description: Vault Compact {{$labels.job}} has not uploaded anything for 24 hours.\n"
        f"      runbook_url: {url}vaultcompacthasnotrun\n"
        "- name: vault-ingest\n  rules:\n"
        "  - alert: VaultIngestLagging\n    expr: lag > 60\n    annotations:\n"
        "      summary: Vault Ingest lags behind.\n"
        "      description: Vault Ingest {{$labels.job}} is lagging by {{$value}} seconds.\n"
        f"      runbook_url: {url}vaultingestlagging\n"
        "- name: vault-work\n  rules:\n"
        + "".join(
            f"  - alert: {name}\n    expr: {name.lower()} == 1\n    annotations:\n"
            f"      summary: {summary}\n      runbook_url: {url}{name.lower()}\n"
            for name, summary in (
                ("VaultWorkHalted", "Vault Work has halted."),
                ("VaultServeDown", "Vault Serve is down."),
                ("VaultControlStalled", "Vault Control stalled."),
            )
        ),
        encoding="utf-8",
    )
    for path, fmt in ((folder, "markdown-runbooks"), (rules, "prometheus-rules")):
        source_id = import_source_id(fmt, path, None)
        ingest_as(invoke, path, fmt, "acme", "--trusted", "--source-id", source_id, acl="internal")
    return driver


def _ingest_runbooks(invoke, folder: Path):  # type: ignore[no-untyped-def]
    fmt = "markdown-runbooks"
    source_id = import_source_id(fmt, folder, None)
    return ingest_as(
        invoke, folder, fmt, "acme", "--trusted", "--source-id", source_id, acl="internal"
    )


def test_agent_nouns_meet_their_verbs_and_nothing_else() -> None:
    for forms in (
        ("compact", "compactor", "compactors", "compaction", "compacted"),
        ("ingest", "ingester", "ingesters", "ingestion"),
        ("schedule", "scheduler", "scheduling"),
        ("query", "querier", "queriers", "queries"),
        ("distribute", "distributor", "distributors"),
        ("ship", "shipper", "shipped"),
        ("control", "controller", "controllers", "controlling", "controlled"),
        ("work", "worker", "workers", "working"),
        ("serve", "server", "servers", "serving", "served"),
    ):
        assert len({_stem(w) for w in forms}) == 1, forms
    # Words of their own that only look like agent nouns stay apart.
    for word, other in (
        ("container", "contains"),
        ("counter", "count"),
        ("header", "head"),
        ("leader", "lead"),
        ("error", "err"),
        ("number", "numb"),
        ("descriptor", "description"),
        ("ready", "read"),
    ):
        assert _stem(word) != _stem(other), (word, other)


def test_the_component_named_as_an_engineer_says_it_finds_its_runbook(  # type: ignore[no-untyped-def]
    vault: neo4j.Driver, invoke
) -> None:
    # Before: "no runbook fits: the closest, runbook:runbook, covers ..." ("vault compact
    # halted" worked): compactor and compact did not meet.
    for text in ("vault compactor halted", "vault compact halted"):
        doc = runbook_json(invoke, text)
        assert doc["runbook"] is not None, (text, doc["note"])
        assert doc["runbook"]["id"] == "runbook:mixin"
    doc = runbook_json(invoke, "vault ingester lagging")
    assert doc["runbook"] is not None, doc["note"]
    # Before: "no runbook fits" for each (worker/work, server/serve, controller/control did
    # not meet); the card shows the named alert's row.
    for text, alert in (
        ("vault worker halted", "alert:VaultWorkHalted"),
        ("vault server is down", "alert:VaultServeDown"),
        ("vault controller stalled", "alert:VaultControlStalled"),
    ):
        doc = runbook_json(invoke, text)
        assert doc["runbook"] is not None, (text, doc["note"])
        assert doc["resolved"] == [alert], (text, doc["resolved"])


def test_a_pasted_alert_message_gets_the_card_of_that_alert(  # type: ignore[no-untyped-def]
    vault: neo4j.Driver, invoke
) -> None:
    # Alertmanager filled in the job: the description, as the page shows it.
    pasted = "Vault Compact vault-compact has failed to run and now is halted."
    by_text = invoke("runbook", pasted, "--subject", "user:oncall")
    by_alert = invoke("runbook", "--alert", "VaultCompactHalted", "--subject", "user:oncall")
    assert by_text.code == 0 and by_alert.code == 0, (by_text, by_alert)
    # Before: the whole vault-compact table (three alerts) under "a list of links or a table".
    assert "|VaultCompactHalted|" in by_text.out
    assert "VaultCompactMultipleRunning" not in by_text.out
    assert "VaultCompactHasNotRun" not in by_text.out
    assert "where section 'vault-compact' of it lists VaultCompactHalted" in by_text.out

    def card(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.startswith(("Steps", "Locator", " "))]

    assert card(by_text.out) == card(by_alert.out)
    doc = runbook_json(invoke, pasted)
    assert doc["resolved"] == ["alert:VaultCompactHalted"]


def test_a_runbook_file_of_a_generic_name_is_named_after_its_folder(  # type: ignore[no-untyped-def]
    vault: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    card = invoke("runbook", "--alert", "VaultIngestLagging", "--subject", "user:oncall")
    # Before: `[runbook:runbook, ...]`, the name every such file of every project has.
    assert "Runbook   Alerts  [runbook:mixin, " in card.out, card


def test_a_re_import_supersedes_the_record_of_the_generic_name(  # type: ignore[no-untyped-def]
    vault: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "tempo-mixin"
    folder.mkdir()
    text = "# Tempo\n\n## Polls failing\n\nRestart the poller.\n"
    # What an import before this change wrote: the same file as runbook:runbook.
    (folder / "runbook.md").write_text("---\nid: runbook\n---\n" + text, encoding="utf-8")
    _ingest_runbooks(invoke, folder)
    (folder / "runbook.md").write_text(text, encoding="utf-8")
    again = _ingest_runbooks(invoke, folder)
    assert (
        "ingest: renamed: runbook:runbook -> runbook:tempo-mixin "
        "(same file, new id: the new record supersedes the old)"
    ) in again.err.splitlines(), again
    doc = runbook_json(invoke, "tempo polls failing")
    assert doc["runbook"]["id"] == "runbook:tempo-mixin", doc
