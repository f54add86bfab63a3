"""A runbook file with one section per alert (the layout of grafana/tempo's and Mimir's
runbooks) shows each alert the steps of its own section, on a real Neo4j.

Before, every alert linked to such a file got the same steps: the first section whose
title contained a steps-like word anywhere, here `StorageCompactionsFailing` ("action" in
"Compactions"), whatever alert was asked about.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest
from conftest import runbook_json

from graph_schema.importers.dispatch import import_source_id

FIXTURES = Path(__file__).parent / "fixtures"
SECTIONED = FIXTURES / "sectioned-runbooks"
CATALOG = FIXTURES / "runbooks" / "catalogs" / "acme.yaml"


@pytest.fixture()
def sectioned(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    _ingest(invoke, SECTIONED / "runbooks", SECTIONED / "rules")
    return driver


def _source_id(fmt: str, path: Path) -> str:
    # The default source id, said explicitly: a test's `rules.yaml` joins the fixture's
    # `rules` source on purpose (by default another folder of that name is refused).
    return import_source_id(fmt, path, None)


def _ingest(invoke, runbooks: Path, rules: Path) -> None:  # type: ignore[no-untyped-def]
    """Ingest Markdown runbooks, then alert rules, into acme (trusted, label internal)."""
    for path, fmt in ((runbooks, "markdown-runbooks"), (rules, "prometheus-rules")):
        result = invoke(
            "ingest", str(path), "--format", fmt, "--tenant", "acme", "--acl", "internal",
            "--trusted", "--source-id", _source_id(fmt, path),
        )  # fmt: skip
        assert result.code == 0, result


def _ingest_runbooks(invoke, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """Ingest a folder of Markdown runbooks into acme (trusted, label internal)."""
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", "--trusted",
        "--source-id", _source_id("markdown-runbooks", folder),
    )  # fmt: skip
    assert result.code == 0, result


def test_each_alert_gets_the_steps_of_its_own_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    polls = runbook_json(invoke, "--alert", "StoragePollsFailing")["runbook"]
    assert polls["id"] == "runbook:storage"
    assert polls["steps_locator"] == "storage.md#how-to-fix"
    assert polls["steps"][0] == "1. Check the bucket's error rate in the cloud console."
    # The second "How to fix" of the file, by its own anchor.
    index = runbook_json(invoke, "--alert", "StorageIndexTooOld")["runbook"]
    assert index["steps_locator"] == "storage.md#how-to-fix-1"
    assert index["steps"][0] == "1. Confirm an index builder is running."
    # No steps-like subsection: the section's own text, never a sibling's "How to fix".
    compactions = runbook_json(invoke, "--alert", "StorageCompactionsFailing")["runbook"]
    assert compactions["steps_locator"] == "storage.md#storagecompactionsfailing"
    assert compactions["steps"][0].startswith("Compactions fail when a worker runs out")
    assert compactions["steps_note"] is None

    card = invoke("runbook", "--alert", "StoragePollsFailing", "--subject", "user:oncall")
    assert card.code == 0, card
    assert "Locator   storage.md#how-to-fix\n" in card.out
    assert "Steps     1. Check the bucket's error rate in the cloud console." in card.out
    assert "Raise the worker memory limit" not in card.out


def test_a_runbook_url_naming_a_sibling_section_is_followed(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # StorageIndexBuilderLagCritical's runbook_url points at #StorageIndexTooOld.
    doc = runbook_json(invoke, "--alert", "StorageIndexBuilderLagCritical")
    assert doc["runbook"]["steps_locator"] == "storage.md#how-to-fix-1"
    assert doc["runbook"]["steps"][0] == "1. Confirm an index builder is running."
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_an_alert_with_no_section_gets_no_other_alerts_steps(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # StorageQueueDepthHigh's runbook_url points at a section the file does not have.
    doc = runbook_json(invoke, "--alert", "StorageQueueDepthHigh")
    runbook = doc["runbook"]
    assert runbook["id"] == "runbook:storage"
    # One sentence, hard-wrapped in the file: one step line, as it reads rendered.
    assert runbook["steps"] == [
        "Alerts of the block storage service. Check the storage dashboard first; every alert "
        "below links here.",
    ]
    assert runbook["steps_locator"] is None
    assert runbook["steps_note"] == (
        "the runbook has 3 sections headed by an alert's name and none is about "
        "StorageQueueDepthHigh: the steps shown are its opening text"
    )
    card = invoke("runbook", "--alert", "StorageQueueDepthHigh", "--subject", "user:oncall")
    assert "Locator   storage.md\n" in card.out
    note = "          (the runbook has 3 sections headed by an alert's name and none is about"
    assert note in card.out
    assert "Check the bucket" not in card.out and "Confirm an index builder" not in card.out


def test_free_text_finds_the_section_of_the_alert_it_matches(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # The index builder alert's summary, pasted: its runbook_url's section, not the section
    # whose title shares most words with the text (StorageIndexTooOld by name, here too).
    doc = runbook_json(invoke, "The storage index builder lags by hours")
    assert doc["text_matches"][0]["matched_alert"] == "alert:StorageIndexBuilderLagCritical"
    assert doc["runbook"]["steps_locator"] == "storage.md#how-to-fix-1"
    polls = runbook_json(invoke, "storage bucket polls are failing")
    assert polls["runbook"]["steps_locator"] == "storage.md#how-to-fix"


def test_an_investigation_cites_the_section_of_the_alert_it_names(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    def runbook_claim(question: str) -> tuple[str, str]:
        result = invoke("investigate", question, "--subject", "user:oncall", "--json")
        assert result.code == 0, result
        doc = json.loads(result.out)
        [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
        return claim["statement"], doc["run_id"]

    statement, run_id = runbook_claim("Which runbook applies to StoragePollsFailing?")
    # The version named as the card names it (the commit of an import from git).
    assert re.match(
        r"Runbook Storage runbook \(runbook:storage, git:[0-9a-f]{12}\) is the version in force",
        statement,
    ), statement
    assert statement.endswith("[storage.md#storagepollsfailing]")
    replay = invoke("replay", run_id, "--subject", "user:oncall", "--json")
    assert json.loads(replay.out)["verified"] is True
    # No section of that alert: the file's opening text, said so; never a sibling's section.
    statement, _ = runbook_claim("Which runbook applies to StorageQueueDepthHigh?")
    assert statement.endswith(
        "[storage.md: its opening text; none of its sections is about StorageQueueDepthHigh]"
    ), statement


@pytest.mark.parametrize(
    "question",
    [
        "Which runbook applies to StorageIndexBuilderLagCritical?",
        # Spelled out in words: before, the whole file (no section is named so).
        "The storage index builder lag is critical, how do I fix it?",
    ],
)
def test_an_investigation_reads_the_section_its_alerts_runbook_url_points_at(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, question: str
) -> None:
    # StorageIndexBuilderLagCritical has no section of its name; its runbook_url points at
    # #StorageIndexTooOld. Before, the claim cited the file and the pack held all of it.
    result = invoke("investigate", question, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    [runbook] = [ev for ev in doc["evidence"] if ev["type"] == "Runbook"]
    assert runbook["locator"] == "storage.md#storageindextooold"
    assert runbook["transformations"] == ["section_excerpt"]
    assert runbook["content"].startswith("## StorageIndexTooOld\n")
    assert "StoragePollsFailing" not in runbook["content"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith("[storage.md#storageindextooold]")
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
    # A subject of another tenant asking the same gets no part of it.
    assert invoke("ingest", str(CATALOG.with_name("globex.yaml"))).code == 0
    other = invoke("investigate", question, "--subject", "globex/user:mallory", "--json")
    assert other.code == 0, other
    assert json.loads(other.out)["status"] == "partial"
    assert "runbook:storage" not in other.out and "storage.md" not in other.out


def test_how_do_i_fix_an_alert_gets_its_runbook_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # The words on-call types; before, an entity lookup that claimed only the alert.
    result = invoke(
        "investigate", "StoragePollsFailing is firing, how do I fix it?",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "complete"
    assert "applicable_runbook" in doc["intents"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith("[storage.md#storagepollsfailing]")


def test_a_file_named_after_its_one_alert_is_read_whole_as_before(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Its only heading is the alert's name: the whole file is the section, and the card
    # points at the file (an answer recorded before reads the same on replay).
    (tmp_path / "StorageDiskFull.md").write_text(
        "# StorageDiskFull\n\nFree space on the volume, then expand it.\n", encoding="utf-8"
    )
    _ingest_runbooks(invoke, tmp_path)
    runbook = runbook_json(invoke, "--alert", "StorageDiskFull")["runbook"]
    assert runbook["id"] == "runbook:StorageDiskFull"
    assert runbook["steps"] == ["Free space on the volume, then expand it."]
    assert runbook["steps_locator"] is None and runbook["steps_note"] is None


def test_steps_under_subsections_or_troubleshooting_are_the_steps(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # openshift/runbooks writes "## Mitigation" holding only "### <case>" subsections (14 of
    # its files); the card skipped the empty heading and showed "Meaning" as the steps. And
    # "## Troubleshooting" was no steps heading at all.
    (tmp_path / "StorageFsyncSlow.md").write_text(
        "# StorageFsyncSlow\n\n## Meaning\n\nThe 99th percentile of fsync is too high.\n\n"
        "## Mitigation\n\n### Slow disk\n\nMove the store to faster storage.\n\n"
        "### Noisy neighbour\n\nIsolate the node.\n",
        encoding="utf-8",
    )
    (tmp_path / "StorageReadsSlow.md").write_text(
        "# StorageReadsSlow\n\n## Impact\n\nReads time out.\n\n"
        "## Troubleshooting\n\nCheck the read path's latency panel first.\n",
        encoding="utf-8",
    )
    _ingest_runbooks(invoke, tmp_path)
    fsync = runbook_json(invoke, "--alert", "StorageFsyncSlow")["runbook"]
    assert fsync["steps"][:2] == ["Slow disk:", "Move the store to faster storage."]
    assert fsync["steps_locator"].endswith("#mitigation")
    reads = runbook_json(invoke, "--alert", "StorageReadsSlow")["runbook"]
    assert reads["steps"] == ["Check the read path's latency panel first."]


def test_a_steps_section_saying_there_is_none_gives_way_to_troubleshooting(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # stolostron/managed-service-runbooks: "## Mitigation" says "there is no prescriptive way
    # to fix it" above a "## Troubleshooting" of real steps, and an SOP's "## Actions" says
    # "None" above a Markdown rule: the card showed "no prescriptive way" and "None", "---"
    # as the steps, read at 3 a.m. as "nothing to do".
    (tmp_path / "StorageSyncStuck.md").write_text(
        "# StorageSyncStuck\n\n## Mitigation\n\nThis is not expected to occur, therefore, "
        "there is no prescriptive way to fix it.\n\n## Troubleshooting\n\n"
        "1. Check the sync controller's logs.\n2. Restart the sync controller pod.\n",
        encoding="utf-8",
    )
    (tmp_path / "StorageInstallFailing.md").write_text(
        "# StorageInstallFailing\n\n## Actions\n\nNone\n\n---\n\n## Diagnosis\n\n"
        "Read the install job's events.\n",
        encoding="utf-8",
    )
    (tmp_path / "StorageNothingToDo.md").write_text(
        "# StorageNothingToDo\n\n## Meaning\n\nInformational.\n\n## Mitigation\n\nNone.\n",
        encoding="utf-8",
    )
    _ingest_runbooks(invoke, tmp_path)
    stuck = runbook_json(invoke, "--alert", "StorageSyncStuck")["runbook"]
    assert stuck["steps"] == [
        "1. Check the sync controller's logs.",
        "2. Restart the sync controller pod.",
    ], stuck["steps"]
    assert stuck["steps_locator"].endswith("#troubleshooting")
    install = runbook_json(invoke, "--alert", "StorageInstallFailing")["runbook"]
    assert install["steps"] == ["Read the install job's events."], install["steps"]
    # With nothing else to show, what the runbook says is shown, as it says it.
    nothing = runbook_json(invoke, "--alert", "StorageNothingToDo")["runbook"]
    assert nothing["steps"] == ["None."], nothing["steps"]


def test_a_word_many_runbooks_fit_alike_is_said_on_the_card(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # "etcd" over openshift/runbooks: one of 18 etcd runbooks was shown as *the* runbook,
    # with no sign that the word chose nothing.
    for name, what in (
        ("VaultSealed", "sealed"), ("VaultLeaderLost", "leaderless"),
        ("VaultTokensExpiring", "expiring tokens"), ("VaultAuditBlocked", "a blocked audit"),
    ):  # fmt: skip
        (tmp_path / f"{name}.md").write_text(
            f"# {name}\n\n## Mitigation\n\nA vault with {what}: restart the vault pod.\n",
            encoding="utf-8",
        )
    _ingest_runbooks(invoke, tmp_path)
    vague = runbook_json(invoke, "vault")
    assert "runbooks fit 'vault' alike" in (vague["note"] or ""), vague["note"]
    assert "use --alert NAME" in vague["note"]
    precise = runbook_json(invoke, "vault tokens expiring")
    assert precise["runbook"]["id"] == "runbook:VaultTokensExpiring"
    assert "alike" not in (precise["note"] or "")


def test_a_docs_site_runbooks_page_answers_each_alert_with_its_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Mimir's layout: the runbooks are the sections of a Hugo page, `<folder>/_index.md`, and
    # each rule's runbook_url is the page's URL with the alert's anchor.
    page = tmp_path / "docs" / "store-runbooks"
    page.mkdir(parents=True)
    (page / "_index.md").write_text(
        "---\ntitle: Store runbooks\n---\n\n# Store runbooks\n\n## Alerts\n\n"
        "### StoreIngesterRestarts\n\nCheck whether one ingester or several restart.\n\n"
        "### StoreRequestLatency\n\nHow to **fix** it:\n\n1. Scale the queriers.\n",
        encoding="utf-8",
    )
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "groups:\n- name: store\n  rules:\n"
        "  - alert: StoreRequestLatency\n    expr: latency > 1\n    annotations:\n"
        "      runbook_url: https://docs.example.com/store/latest/store-runbooks/"
        "#storerequestlatency\n",
        encoding="utf-8",
    )
    _ingest(invoke, tmp_path / "docs", rules)
    runbook = runbook_json(invoke, "--alert", "StoreRequestLatency")["runbook"]
    assert runbook["id"] == "runbook:store-runbooks"
    assert runbook["steps_locator"] == "store-runbooks/_index.md#storerequestlatency"
    assert runbook["steps"] == ["How to fix it:", "1. Scale the queriers."]


def _large_sectioned_runbook(folder: Path) -> list[str]:
    """A runbook file of 30 alert sections, about 45 KB (Tempo's is 33 KB), and the rules
    whose runbook_url points at each section; our own text. Returns the alert names."""
    alerts = [
        f"Vault{part}{kind}Failing"
        for part in ("Backup", "Cache", "Disk", "Index", "Queue")
        for kind in ("Lease", "Mirror", "Raft", "Seal", "Shard", "Token")
    ]
    filler = "Read the dashboard of this component before acting on it. " * 20
    sections = [
        f"## {alert}\n\nThe {alert} alert fires when the component stops.\n\n{filler}\n\n"
        f"### How to fix\n\n1. Restart the {alert} component.\n"
        for alert in alerts
    ]
    (folder / "runbooks").mkdir()
    (folder / "runbooks" / "vault.md").write_text(
        "# Vault runbook\n\nEvery Vault alert links here.\n\n" + "\n".join(sections),
        encoding="utf-8",
    )
    rules = "".join(
        f"  - alert: {alert}\n    expr: vault_up == 0\n    annotations:\n"
        f"      runbook_url: https://git.example.com/vault/blob/main/runbooks/vault.md#{alert}\n"
        for alert in alerts
    )
    (folder / "rules.yaml").write_text(
        f"groups:\n- name: vault\n  rules:\n{rules}", encoding="utf-8"
    )
    return alerts


def _admitted_section(doc: dict, asked: str, alerts: list[str]) -> dict:  # type: ignore[type-arg]
    """The vault runbook as the complete run `doc` admitted it: `asked`'s section alone."""
    assert doc["status"] == "complete"
    [runbook] = [ev for ev in doc["evidence"] if ev["element_id"] == "runbook:vault"]
    assert runbook["transformations"] == ["section_excerpt"]
    assert runbook["locator"] == f"vault.md#{asked.lower()}"
    assert not any(other in runbook["content"] for other in alerts if other != asked)
    return runbook  # type: ignore[no-any-return]


def test_a_large_runbook_of_many_alerts_fits_the_default_budget_as_one_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Before, the whole 45 KB file was one piece of required evidence: "--budget-tokens 8000
    # is too small" (exit 2) for any question about any of its alerts.
    alerts = _large_sectioned_runbook(tmp_path)
    _ingest(invoke, tmp_path / "runbooks", tmp_path / "rules.yaml")
    asked = alerts[7]  # VaultCacheMirrorFailing
    result = invoke(
        "investigate", f"Which runbook applies to {asked}?", "--subject", "user:oncall", "--json"
    )
    assert result.code == 0, result
    doc = json.loads(result.out)
    runbook = _admitted_section(doc, asked, alerts)
    assert runbook["content"].startswith(f"## {asked}\n")
    assert runbook["content"].endswith(f"1. Restart the {asked} component.")
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith(f"[vault.md#{asked.lower()}]")
    assert claim["evidence_ids"] == [runbook["evidence_id"]]
    # The card says the evidence is a part of the record.
    card = invoke("investigate", f"Which runbook applies to {asked}?", "--subject", "user:oncall")
    assert card.code == 0, card
    assert f"{runbook['evidence_id']}  runbook:vault  (runbook) [section_excerpt]" in card.out
    # Replay cuts the same section from the re-read text: every evidence item matches.
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    report = json.loads(replay.out)
    assert report["verified"] is True and report["pack_hash_match"] is True
    # Two of its alerts in one question: the whole file holds both. At the default budget
    # it is cut to the part the card shows, said so (test_big_runbook_pages); a budget
    # that holds the file reads it whole.
    both = f"Which runbooks apply to {alerts[0]} and {alerts[1]}?"
    cut = invoke("investigate", both, "--subject", "user:oncall", "--json")
    assert cut.code == 0, cut
    [runbook] = [ev for ev in json.loads(cut.out)["evidence"] if ev["type"] == "Runbook"]
    assert "budget_cut" in runbook["transformations"], runbook
    result = invoke("investigate", both, "--subject", "user:oncall", "--json",
                    "--budget-tokens", "100000")  # fmt: skip
    assert result.code == 0, result
    [runbook] = [ev for ev in json.loads(result.out)["evidence"] if ev["type"] == "Runbook"]
    assert runbook["transformations"] == [] and runbook["locator"] == "vault.md"


def test_a_question_in_words_gets_the_section_of_the_alert_it_spells_out(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # On-call types "the vault cache mirror is failing", not VaultCacheMirrorFailing. Before,
    # the whole 45 KB file was required evidence: exit 2 at the default budget.
    alerts = _large_sectioned_runbook(tmp_path)
    _ingest(invoke, tmp_path / "runbooks", tmp_path / "rules.yaml")
    asked = "VaultCacheMirrorFailing"
    question = "The vault cache mirror is failing, how do I fix it?"
    result = invoke("investigate", question, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    _admitted_section(doc, asked, alerts)
    # The alert it spells out is the one whose runbooks are read, not others that share
    # "vault", "mirror" or "failing".
    anchors = [c["params"] for c in doc["tool_calls"] if c["template_id"] == "runbooks_for"]
    assert anchors == [{"anchor_id": f"alert:{asked}"}]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith(f"[vault.md#{asked.lower()}]")
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["pack_hash_match"] is True
    # Words of no one alert ("the vault cache is failing": six alerts) name none: no alert
    # that merely shares words lends its runbook (before, the top text hits were linked, and
    # a storage alert's runbook could be claimed for a vault question).
    vague = invoke("investigate", "The vault cache is failing, how do I fix it?",
                   "--subject", "user:oncall", "--json")  # fmt: skip
    assert vague.code == 0, vague
    answer = json.loads(vague.out)
    assert answer["status"] == "partial" and answer["claims"] == []
    assert [m["evidence_type"] for m in answer["missing_evidence"]] == ["runbook"]


def test_an_alert_spelled_out_in_words_is_found_as_if_named(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Before: "partial ... entity (required): no matching entity in the knowledge graph",
    # with the alert itself among the evidence.
    _large_sectioned_runbook(tmp_path)
    _ingest(invoke, tmp_path / "runbooks", tmp_path / "rules.yaml")
    result = invoke("investigate", "vault disk raft failing", "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "complete" and doc["missing_evidence"] == []
    [named] = [ev for ev in doc["evidence"] if "entity" in ev["evidence_types"]]
    assert named["element_id"] == "alert:VaultDiskRaftFailing"
    assert any(named["evidence_id"] in c["evidence_ids"] for c in doc["claims"])
    # Another tenant's subject: nothing of acme's, by words either.
    assert invoke("ingest", str(CATALOG.with_name("globex.yaml"))).code == 0
    theirs = invoke("investigate", "vault disk raft failing", "--subject", "globex/user:mallory",
                    "--json")  # fmt: skip
    assert theirs.code == 0, theirs
    assert json.loads(theirs.out)["status"] == "partial"
    assert "VaultDiskRaftFailing" not in theirs.out


def test_a_runbook_imported_before_its_rules_answers_by_the_heading_of_its_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # A team imports Tempo's runbook.md before its alert rules: no alert record to link it.
    # Before, "partial: no runbook version valid at as_of", typed name or words alike.
    alerts = _large_sectioned_runbook(tmp_path)
    _ingest_runbooks(invoke, tmp_path / "runbooks")
    asked = "VaultIndexShardFailing"
    typed, worded = f"Which runbook applies to {asked}?", "vault index shard failing, how to fix?"
    for question in (typed, worded):
        result = invoke("investigate", question, "--subject", "user:oncall", "--json")
        assert result.code == 0, result
        doc = json.loads(result.out)
        _admitted_section(doc, asked, alerts)
        [claim] = doc["claims"]
        assert re.search(
            r"\(runbook:vault, sha256:[0-9a-f]{12}\), found by the heading of its section alone",
            claim["statement"],
        ), claim["statement"]
        assert claim["statement"].endswith(f"[vault.md#{asked.lower()}]")
    # The typed name matched no record: the line says what it matched (before: "The answer
    # does not cover it.").
    report = invoke("investigate", typed, "--subject", "user:oncall")
    assert report.code == 0, report
    assert (
        f"{asked!r} in the question matched the heading of the section "
        f"vault.md#{asked.lower()} of runbook:vault, which the answer cites; it is the name of "
        "no record visible to acme/user:oncall."
    ) in report.out, report.out
    # The card's `--alert` finds it the same way, and shows that alert's section.
    card = runbook_json(invoke, "--alert", asked)
    assert card["runbook"]["id"] == "runbook:vault"
    assert card["runbook"]["steps"] == [f"1. Restart the {asked} component."]
    assert "runbook:vault has a section headed by its name" in card["note"]
    assert invoke("ingest", str(CATALOG.with_name("globex.yaml"))).code == 0
    theirs = invoke("runbook", "--alert", asked, "--subject", "globex/user:mallory", "--json")
    assert theirs.code == 0, theirs
    assert json.loads(theirs.out)["runbook"] is None and "runbook:vault" not in theirs.out
    # Words that head no one section name nothing, and the storage alerts that share
    # "index" and "failing" lend it no runbook either (before: the storage runbook, complete).
    vague = invoke("investigate", "vault index failing, how to fix?", "--subject", "user:oncall",
                   "--json")  # fmt: skip
    assert vague.code == 0, vague
    assert json.loads(vague.out)["status"] == "partial"
    assert json.loads(vague.out)["claims"] == []


def test_a_word_every_alert_shares_shows_no_one_alerts_steps(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # `runbook "vault"`: every Vault alert matches the word alike. Before, the card showed
    # the steps of the first of them by id (VaultBackupLeaseFailing) as the vault steps.
    _large_sectioned_runbook(tmp_path)
    _ingest(invoke, tmp_path / "runbooks", tmp_path / "rules.yaml")
    runbook = runbook_json(invoke, "vault")["runbook"]
    assert runbook["id"] == "runbook:vault"
    assert runbook["steps_locator"] is None
    assert runbook["steps"] == ["Every Vault alert links here."]
    assert "the steps shown are its opening text" in runbook["steps_note"]
    # One alert's words still pick its section.
    assert runbook_json(invoke, "vault backup lease failing")["runbook"]["steps_locator"] == (
        "vault.md#how-to-fix"
    )


def test_a_long_command_step_is_shown_whole_on_the_card(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # stolostron/managed-service-runbooks: an `oc get ... -o=jsonpath=...` step was cut with
    # "…" at 110 characters on the card, so it could not be copied (the JSON had it whole).
    command = (
        "oc get managedcluster <name> -o=jsonpath='{.status.conditions[?(@.type==\"Managed"
        "ClusterConditionAvailable\")].message}' --context hub-cluster-admin"
    )
    (tmp_path / "StorageHubUnavailable.md").write_text(
        f"# StorageHubUnavailable\n\n## Mitigation\n\n{command}\n", encoding="utf-8"
    )
    _ingest_runbooks(invoke, tmp_path)
    card = invoke("runbook", "--alert", "StorageHubUnavailable", "--subject", "user:oncall")
    assert card.code == 0, card
    assert f"Steps     {command}\n" in card.out, card.out


def test_two_files_of_one_name_fitting_alike_are_said_on_the_card(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # stolostron/managed-service-runbooks has two often-restarted.md: "often restarted" showed
    # one (scores 4.20 and 4.19) with no sign of the other; the note started at three alike.
    for folder, what in (("hub", "the hub operator"), ("addon", "the addon agent")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "often-restarted.md").write_text(
            f"# Often restarted\n\n## Mitigation\n\nCount the restarts of {what}.\n",
            encoding="utf-8",
        )
    _ingest_runbooks(invoke, tmp_path)
    card = runbook_json(invoke, "often restarted")
    assert card["note"] == (
        "2 runbooks named 'often-restarted' fit 'often restarted' alike "
        "(runbook:addon/often-restarted, runbook:hub/often-restarted); the card shows the "
        "first: name the one you mean with --alert ID"
    ), card["note"]


def test_code_fence_markers_are_not_steps(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # A hurried user's finding: a Mitigation section opening with a ```bash fence showed the
    # fence markers as two of the card's five step lines, and cut the last command off.
    (tmp_path / "StorageQueueStuck.md").write_text(
        "# StorageQueueStuck\n\n## Mitigation\n\n```bash\nkubectl -n store describe pod $POD\n"
        "kubectl -n store logs $POD --previous\n```\n\n~~~\nkubectl -n store rollout undo\n"
        "~~~\n\nThen page the storage team.\n",
        encoding="utf-8",
    )
    _ingest_runbooks(invoke, tmp_path)
    steps = runbook_json(invoke, "--alert", "StorageQueueStuck")["runbook"]["steps"]
    assert steps == [
        "kubectl -n store describe pod $POD",
        "kubectl -n store logs $POD --previous",
        "kubectl -n store rollout undo",
        "Then page the storage team.",
    ]


def test_a_file_whose_only_heading_is_its_alert_is_titled_by_it(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # A hurried user's finding: `ledger-queue.md` whose one top heading is
    # "## StorageLedgerStuck" was carded as "ledger-queue", its file name.
    (tmp_path / "ledger-queue.md").write_text(
        "## StorageLedgerStuck\n\nThe ledger queue does not drain.\n\n### Mitigation\n\n"
        "Restart the ledger consumer.\n",
        encoding="utf-8",
    )
    (tmp_path / "two-topics.md").write_text(
        "## Overview\n\nStorage notes.\n\n## Steps\n\nRead the dashboard.\n", encoding="utf-8"
    )
    _ingest_runbooks(invoke, tmp_path)
    card = invoke("runbook", "--alert", "StorageLedgerStuck", "--subject", "user:oncall")
    assert card.code == 0, card
    assert card.out.startswith("Runbook   StorageLedgerStuck  [runbook:ledger-queue,"), card.out
    # Two headings at the top level: neither names the file, the file name still does.
    found = runbook_json(invoke, "storage notes dashboard overview")
    titles = [m["title"] for m in found["text_matches"] if m["id"] == "runbook:two-topics"]
    assert titles == ["two-topics"], found["text_matches"]


# Mimir's layout of its steps: a bold label line, not a heading ("How to **fix** it:"), and
# sub-headings for the cases of one alert. My own sentences, in that style.
_LABELLED_PAGE = """---
title: Queue runbooks
---

# Queue runbooks

## Alerts

### QueueBacklogGrowing

This alert fires when the backlog of a queue grows for longer than ten minutes.
Producers keep writing while the consumers fall behind.
The alert names the queue and its cluster.
A backlog can also follow a deploy of the consumers.
Most backlogs drain by themselves within the hour.

How to **investigate**:

- Compare the produce and consume rates on the `Queue / Overview` dashboard.

How to **fix** it:

- Scale the consumers of the queue up by two replicas.
- Check the consumer error rate once they run.

### QueueConsumerStalled

The consumer has read nothing for five minutes.

In case of **emergency**:

- Restart the stalled consumer: `kubectl rollout restart deployment/consumer`

How the timeout is **configured**:

- In the consumer's config file, `stall_timeout`.

### QueueLatencyHigh

This alert fires when a queue is slow; its message says whether publishing or delivery is.

#### Publish Latency

How to **investigate**:

- Check the `Queue / Publish` dashboard.

#### Delivery Latency

How to **investigate**:

- Check the `Queue / Delivery` dashboard.

### QueueRebalanceStuck

Rebalances should finish within a minute.

#### How to Investigate

Read the coordinator's logs for the generation that does not finish.

### QueueClockSkewed

Samples arrive with timestamps from the future.
The producer's clock is usually the cause.

How to **investigate**

- Compare the producer's clock with the broker's.

### QueueLabelOnly

Nothing is labelled here but the end.

How to **fix** it:
"""


def test_a_bold_label_line_starts_the_steps_as_a_steps_heading_does(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Mimir's runbooks page: the card showed the first five lines of each section (its
    # explanation) and never reached "How to **fix** it:", or ended on that label with
    # nothing after it; "#### How to Investigate" was no steps heading.
    page = tmp_path / "docs" / "queue-runbooks"
    page.mkdir(parents=True)
    (page / "_index.md").write_text(_LABELLED_PAGE, encoding="utf-8")
    _ingest_runbooks(invoke, tmp_path / "docs")

    def card(alert: str) -> dict:  # type: ignore[type-arg]
        return runbook_json(invoke, "--alert", alert)["runbook"]  # type: ignore[no-any-return]

    backlog = card("QueueBacklogGrowing")
    # The fix, before the investigation (as "Mitigation" before "Diagnosis").
    assert backlog["steps"] == [
        "How to fix it:",
        "- Scale the consumers of the queue up by two replicas.",
        "- Check the consumer error rate once they run.",
    ], backlog["steps"]
    assert backlog["steps_locator"] == "queue-runbooks/_index.md#queuebackloggrowing"
    # The steps end at the next label, of steps or not.
    assert card("QueueConsumerStalled")["steps"] == [
        "In case of emergency:",
        "- Restart the stalled consumer: `kubectl rollout restart deployment/consumer`",
    ]
    # Steps under sub-headings, one per case, are no one case's to show when nothing asked
    # names one: the section's own text, and the cases named (test_runbook_section_cases.py).
    latency = card("QueueLatencyHigh")
    assert latency["steps"] == [
        "This alert fires when a queue is slow; its message says whether publishing or delivery is."
    ], latency["steps"]
    assert latency["steps_locator"] == "queue-runbooks/_index.md#queuelatencyhigh"
    assert [c["title"] for c in latency["section_cases"]] == [
        "Publish Latency",
        "Delivery Latency",
    ]
    rebalance = card("QueueRebalanceStuck")
    assert rebalance["steps"] == [
        "Read the coordinator's logs for the generation that does not finish."
    ]
    assert rebalance["steps_locator"] == "queue-runbooks/_index.md#how-to-investigate"
    # Without its colon, a short line is a label all the same.
    assert card("QueueClockSkewed")["steps"] == [
        "How to investigate",
        "- Compare the producer's clock with the broker's.",
    ]
    # A label with nothing after it marks no steps: the section's text is shown.
    assert card("QueueLabelOnly")["steps"] == [
        "Nothing is labelled here but the end.",
        "How to fix it:",
    ]


def test_the_card_never_cuts_a_command_in_its_code_fence(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Mimir's MimirInconsistentRuntimeConfig: the five lines ended on the first line of a
    # fenced command, the rest of it missing. A short command is shown whole; a long listing
    # is left out (the card stops before it).
    command = ["queuectl index verify \\", "  --all-segments \\", "  --repair \\", "  --verbose"]
    listing = [f"segment-{n:02d} ok" for n in range(12)]
    (tmp_path / "QueueIndexCorrupted.md").write_text(
        "# QueueIndexCorrupted\n\nThe queue's index failed its checksum.\n\n"
        "## Mitigation\n\nStop the writers first.\nThen verify and repair the index:\n\n"
        "  ```bash\n" + "\n".join(f"  {line}" for line in command) + "\n  ```\n",
        encoding="utf-8",
    )
    (tmp_path / "QueueSegmentsMissing.md").write_text(
        "# QueueSegmentsMissing\n\n## Mitigation\n\nList the segments.\n"
        "Compare them with the index.\nA healthy store prints:\n\n```\n"
        + "\n".join(listing)
        + "\n```\n\nRestore the missing ones from the backup.\n",
        encoding="utf-8",
    )
    _ingest_runbooks(invoke, tmp_path)
    index = runbook_json(invoke, "--alert", "QueueIndexCorrupted")["runbook"]
    # One paragraph is one step line; the fence's own indentation (2) is not the command's.
    assert index["steps"] == [
        "Stop the writers first. Then verify and repair the index:",
        *command,
    ], index["steps"]
    segments = runbook_json(invoke, "--alert", "QueueSegmentsMissing")["runbook"]
    assert segments["steps"] == [
        "List the segments. Compare them with the index. A healthy store prints:",
    ], segments["steps"]


def test_a_runbook_of_only_links_and_tables_says_it_has_no_steps(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Thanos' mixin runbook.md: a table of contents, then a table of each group's alerts. The
    # card showed the contents as the "Steps", steps_note null, read as a procedure.
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "runbook.md").write_text(
        "# Alerts\n\n## Rule Groups\n\n* [cache-get](#cache-get)\n* [cache-put](#cache-put)\n\n"
        "## cache-get\n\n|Name|Summary|Severity|\n|---|---|---|\n"
        "|CacheGetSlow|Cache reads are slow.|warning|\n\n"
        "## cache-put\n\n|Name|Summary|Severity|\n|---|---|---|\n"
        "|CachePutFailing|Cache writes fail.|critical|\n",
        encoding="utf-8",
    )
    (tmp_path / "rules.yaml").write_text(
        "groups:\n- name: cache\n  rules:\n"
        "  - alert: CacheGetSlow\n    expr: latency > 1\n    annotations:\n"
        "      runbook_url: https://git.example.com/cache/blob/main/runbooks/runbook.md"
        "#alert-name-cachegetslow\n",
        encoding="utf-8",
    )
    _ingest(invoke, tmp_path / "runbooks", tmp_path / "rules.yaml")
    runbook = runbook_json(invoke, "--alert", "CacheGetSlow")["runbook"]
    # The alert is listed in one section: its row there, with the table's header (before
    # 2026-12-04: the table of contents, "a list of links or a table").
    assert runbook["steps"] == [
        "|Name|Summary|Severity|",
        "|CacheGetSlow|Cache reads are slow.|warning|",
    ]
    assert runbook["steps_locator"] == "runbook.md#cache-get"
    assert runbook["steps_note"] == (
        "the runbook has no steps: what is shown is where section 'cache-get' of it lists "
        "CacheGetSlow"
    )
    text = invoke("runbook", "--alert", "CacheGetSlow", "--subject", "user:oncall")
    assert "where section 'cache-get' of it lists CacheGetSlow)" in text.out


@pytest.mark.parametrize(
    "question",
    [
        "help with StoragePollsFailing",
        "alert StoragePollsFailing is paging me",
        "StoragePollsFailing what now",
        "why is StoragePollsFailing firing?",
        "StoragePollsFailing is firing, how do I fix it?",
        # Typed in another case: before, the whole file (on Mimir's 100 sections, more than
        # the default budget: exit 2).
        "storagepollsfailing fired, what do I do?",
        # With no runbook words, in another case or in its words in order: before, an entity
        # lookup (an incident lookup for "... alert"), no runbook in the answer.
        "help with storagepollsfailing",
        "STORAGEPOLLSFAILING",
        "why is storagepollsfailing firing?",
        "storage polls failing alert",
    ],
)
def test_a_question_naming_an_alert_gets_the_section_runbook_lookup_shows(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, question: str
) -> None:
    # Before, only a question with a runbook word asked for the runbook: "help with X" was an
    # entity lookup, "alert X is paging me" an incident lookup, "why is X firing?" a
    # root-cause search, and the section `runbook --alert X` shows was rejected as
    # `low_relevance`, no runbook in the answer.
    result = invoke("investigate", question, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    runbook_claims = [
        c["statement"] for c in doc["claims"] if c["statement"].startswith("Runbook ")
    ]
    assert [s.endswith("[storage.md#storagepollsfailing]") for s in runbook_claims] == [True]
    # The runbook is in the answer, so it is not also listed as rejected for relevance (its
    # whole text, hit by the fulltext channel before the alert was known).
    assert not [
        r for r in doc["rejected"]
        if r["element_id"] == "runbook:storage" and r["reason"] == "low_relevance"
    ]  # fmt: skip


def test_an_alert_hidden_by_its_label_is_answered_as_an_unknown_name(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # An alert of the subject's tenant under a label it lacks, typed in another case or in
    # its words, reads like a name nothing has: no runbook, no hint that it exists.
    rules = tmp_path / "restricted-rules.yaml"
    rules.write_text(
        "groups:\n  - name: vault\n    rules:\n      - alert: VaultSealDrifting\n"
        "        expr: vault_seal_drift > 0\n        annotations:\n"
        "          summary: Vault seal is drifting.\n"
    )
    result = invoke(
        "ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
        "--acl", "restricted", "--trusted",
    )  # fmt: skip
    assert result.code == 0, result

    def answer(text: str) -> dict:  # type: ignore[type-arg]
        result = invoke("investigate", text, "--subject", "user:oncall", "--json")
        assert result.code == 0, result
        doc = json.loads(result.out)
        return {k: doc[k] for k in ("status", "claims", "evidence", "rejected",
                                    "missing_evidence", "intents", "rounds")}  # fmt: skip

    assert answer("help with vaultsealdrifting") == answer("help with vaultsealdriftinx")
    # The runbook search's gap quotes the question's own words: only those may differ.
    said = json.dumps(answer("vault seal drifting alert")).replace("drifting", "floating")
    assert json.loads(said) == answer("vault seal floating alert")


def test_a_question_about_an_alerts_incident_is_not_a_runbook_question(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # The gate stays as strict for what does not ask about the alert alone.
    result = invoke(
        "investigate", "Which incident did StoragePollsFailing trigger?",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert not [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]


def _table_runbook(folder: Path) -> Path:
    """Thanos' mixin layout, our own text: a table of contents linking the file's own
    headings, then one table of alerts per group, and rules whose runbook_url points at an
    anchor the file does not have."""
    folder.mkdir(parents=True)
    (folder / "runbook.md").write_text(
        "# Alerts\n\n## Rule Groups\n\n* [vault-cache](#vault-cache)\n"
        "* [vault-store](#vault-store)\n\n## vault-cache\n\n"
        "|Name|Summary|Severity|\n|---|---|---|\n"
        "|VaultCacheMissesHigh|The cache misses too often.|warning|\n\n## vault-store\n\n"
        "|Name|Summary|Severity|\n|---|---|---|\n"
        "|VaultStoreIsDown|The store has disappeared.|critical|\n",
        encoding="utf-8",
    )
    rules = folder.parent / "vault-rules.yaml"
    rules.write_text(
        "groups:\n- name: vault\n  rules:\n"
        "  - alert: VaultStoreIsDown\n    expr: up == 0\n    annotations:\n"
        "      runbook_url: https://example.com/mixin/runbook.md#alert-name-vaultstoreisdown\n"
        "  - alert: VaultIndexIsStale\n    expr: age > 1\n    annotations:\n"
        "      runbook_url: https://example.com/mixin/runbook.md#alert-name-vaultindexisstale\n",
        encoding="utf-8",
    )
    return rules


def test_a_table_of_contents_card_shows_the_row_of_the_alert_in_its_section(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    rules = _table_runbook(tmp_path / "mixin")
    _ingest(invoke, tmp_path / "mixin", rules)
    card = invoke("runbook", "--alert", "VaultStoreIsDown", "--subject", "user:oncall")
    assert card.code == 0, card
    # Before: the table of contents, `* [vault-cache](#vault-cache)`, as if other runbooks.
    assert "Locator   runbook.md#vault-store\n" in card.out
    assert "Steps     |Name|Summary|Severity|\n" in card.out
    assert "          |VaultStoreIsDown|The store has disappeared.|critical|\n" in card.out
    assert "where section 'vault-store' of it lists VaultStoreIsDown" in card.out
    assert "#vault-cache" not in card.out


def test_a_table_of_contents_is_said_to_link_the_runbooks_own_sections(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    rules = _table_runbook(tmp_path / "mixin")
    _ingest(invoke, tmp_path / "mixin", rules)
    # Listed in no section of the file: its table of contents, said to be one.
    runbook = runbook_json(invoke, "--alert", "VaultIndexIsStale")["runbook"]
    assert runbook["id"] == "runbook:mixin"  # `mixin/runbook.md`, named after its folder
    assert runbook["steps"][0] == "* [vault-cache](#vault-cache)"
    assert runbook["steps_note"] == (
        "the runbook has no steps: what is shown is its table of contents, links to sections "
        "of this same runbook (#vault-cache, #vault-store), not to other runbooks"
    )
    # An imported file states no version of its own: the card names its content hash or
    # commit, short (before: `v1`, the record version).
    card = invoke("runbook", "--alert", "VaultIndexIsStale", "--subject", "user:oncall")
    assert re.search(r"\[runbook:mixin, (git|sha256):[0-9a-f]{12}, trusted\]", card.out), card
