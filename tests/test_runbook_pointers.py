"""A runbook that only points at another ("This alert has been moved to ...", "Refer to the
[X][1] runbook.") answers with the runbook it points at, whichever was imported first, on a
real Neo4j.

The layout is openshift/runbooks': `cluster-monitoring-operator/KubeAPIDown.md` is a
one-line pointer to the operator that owns the alert now, and the alert's `runbook_url`
still names the pointer. Imported runbooks first, then the rules, only the pointer was
linked to the alert: the card showed the pointer as the steps, and the real runbook only
after the runbooks were imported again.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
BASE = "https://git.example.com/runbooks/blob/main/alerts"

POINTER = "runbook:cluster-monitoring-operator/KubeAPIDown"
REAL = "runbook:cluster-apiserver-operator/KubeAPIDown"
STATIC = "runbook:NodeFilesystemAlmostOutOfSpace"
FILLING = "runbook:NodeFilesystemSpaceFillingUp"


def _write_corpus(root: Path, real_acl: str | None = None, moved_at: str | None = None) -> Path:
    """Our own small copy of the layout: two pointers and the runbooks they point at."""
    monitoring = root / "rb" / "alerts" / "cluster-monitoring-operator"
    apiserver = root / "rb" / "alerts" / "cluster-apiserver-operator"
    for folder in (monitoring, apiserver):
        folder.mkdir(parents=True)
    moved = f"---\nvalid_from: {moved_at}\n---\n" if moved_at else ""
    (monitoring / "KubeAPIDown.md").write_text(
        f"{moved}# KubeAPIDown\n\nThis alert has been moved to "
        f"[alerts/cluster-apiserver-operator/KubeAPIDown.md]({BASE}/cluster-apiserver-operator/"
        "KubeAPIDown.md)\n",
        encoding="utf-8",
    )
    front = f"---\nacl: [{real_acl}]\n---\n" if real_acl else ""
    (apiserver / "KubeAPIDown.md").write_text(
        f"{front}# KubeAPIDown\n\n## Diagnosis\n\nCheck the control plane nodes.\n\n"
        "## Mitigation\n\nRestart the API server pods one at a time.\n",
        encoding="utf-8",
    )
    # A runbook of its own whose steps only refer to another (a reference-style link).
    (monitoring / "NodeFilesystemAlmostOutOfSpace.md").write_text(
        "# NodeFilesystemAlmostOutOfSpace\n\n## Meaning\n\nLike the\n"
        "[NodeFilesystemSpaceFillingUp][1] alert, but on static thresholds:\n"
        "5 % of space left warns, 3 % is critical.\n\n"
        "## Mitigation\n\nRefer to the [NodeFilesystemSpaceFillingUp][1] runbook.\n\n"
        f"[1]: {BASE}/cluster-monitoring-operator/NodeFilesystemSpaceFillingUp.md\n",
        encoding="utf-8",
    )
    (monitoring / "NodeFilesystemSpaceFillingUp.md").write_text(
        "# NodeFilesystemSpaceFillingUp\n\n## Mitigation\n\n"
        "Find the largest directories with `du` and remove old logs.\n",
        encoding="utf-8",
    )
    rules = root / "rules.yaml"
    rules.write_text(
        "groups:\n- name: cmo\n  rules:\n"
        '  - alert: KubeAPIDown\n    expr: absent(up{job="apiserver"} == 1)\n'
        "    annotations:\n      summary: Target disappeared from Prometheus target discovery.\n"
        f"      runbook_url: {BASE}/cluster-monitoring-operator/KubeAPIDown.md\n"
        "  - alert: NodeFilesystemAlmostOutOfSpace\n"
        "    expr: node_filesystem_avail_bytes / node_filesystem_size_bytes * 100 < 5\n"
        "    annotations:\n      summary: Filesystem has less than 5% space left.\n"
        f"      runbook_url: {BASE}/cluster-monitoring-operator/"
        "NodeFilesystemAlmostOutOfSpace.md\n",
        encoding="utf-8",
    )
    return rules


def _ingest(invoke, root: Path, rules: Path, order: str) -> None:  # type: ignore[no-untyped-def]
    assert invoke("ingest", str(FIXTURES / "runbooks" / "catalogs" / "acme.yaml")).code == 0
    runbooks = [
        "ingest", str(root / "rb"), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", "--trusted",
    ]  # fmt: skip
    alerts = ["ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
              "--acl", "internal"]  # fmt: skip
    for args in (runbooks, alerts) if order == "runbooks first" else (alerts, runbooks):
        result = invoke(*args)
        assert result.code == 0, result


@pytest.fixture()
def empty(driver: neo4j.Driver, cli_env: object) -> neo4j.Driver:
    from test_runbook_lookup import wipe

    wipe(driver)
    return driver


def test_an_investigation_claims_the_runbook_a_pointer_points_at_not_the_pointer(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # Both were claimed "the version in force": the one-line "moved to" stub as well.
    _ingest(invoke, tmp_path, _write_corpus(tmp_path), "rules first")
    doc = json.loads(
        invoke("investigate", "Which runbook applies to KubeAPIDown?", "--subject",
               "user:oncall", "--json").out
    )  # fmt: skip
    in_force = [
        c["statement"] for c in doc["claims"] if "is the version in force" in c["statement"]
    ]
    assert len(in_force) == 1 and f"({REAL}, sha256:" in in_force[0], in_force


@pytest.mark.parametrize("order", ["runbooks first", "rules first"])
def test_a_pointer_answers_with_the_runbook_it_points_at_in_either_import_order(  # type: ignore[no-untyped-def]
    order: str, empty: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    _ingest(invoke, tmp_path, _write_corpus(tmp_path), order)
    card = invoke("runbook", "--alert", "KubeAPIDown", "--subject", "user:oncall")
    assert card.code == 0, card
    lines = card.out.splitlines()
    # Runbooks first, the card was the pointer: "Steps     This alert has been moved to ...".
    assert lines[0].startswith(f"Runbook   KubeAPIDown  [{REAL}, ")
    assert "Steps     Restart the API server pods one at a time." in lines
    assert f"Also      KubeAPIDown  [{POINTER}]" in lines
    note = next(line for line in lines if line.startswith("Note      "))
    assert f"{POINTER} only points at {REAL}" in note
    doc = json.loads(
        invoke("runbook", "--alert", "KubeAPIDown", "--subject", "user:oncall", "--json").out
    )
    assert doc["runbook"]["id"] == REAL
    assert [alt["id"] for alt in doc["alternatives"]] == [POINTER]
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True

    # Steps that only refer to another runbook ("Refer to the [X][1] runbook.") are a pointer.
    static = json.loads(
        invoke(
            "runbook", "--alert", "NodeFilesystemAlmostOutOfSpace", "--subject", "user:oncall",
            "--json",
        ).out
    )  # fmt: skip
    assert static["runbook"]["id"] == FILLING
    assert static["runbook"]["steps"] == [
        "Find the largest directories with `du` and remove old logs."
    ]
    assert [alt["id"] for alt in static["alternatives"]] == [STATIC]
    assert f"{STATIC} only points at {FILLING}" in static["note"]


def test_a_pointer_to_a_runbook_the_subject_may_not_read_stays_the_answer(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # The real runbook is readable with the `restricted` label only; user:oncall holds
    # `internal`: the card is the pointer, as before, and names nothing it may not read.
    _ingest(invoke, tmp_path, _write_corpus(tmp_path, real_acl="restricted"), "runbooks first")
    result = invoke("runbook", "--alert", "KubeAPIDown", "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["runbook"]["id"] == POINTER
    assert doc["alternatives"] == []
    assert doc["note"] is None
    assert REAL not in json.dumps({k: v for k, v in doc.items() if k != "runbook"})


def test_a_pointer_not_in_force_at_as_of_points_nowhere(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # The alert's runbook became a pointer on 2026-08-01: asked about July, there is no
    # version of it in force, and what it points at later is not the answer then.
    _ingest(
        invoke, tmp_path, _write_corpus(tmp_path, moved_at="2026-08-01T00:00:00Z"), "runbooks first"
    )
    july = invoke(
        "runbook", "--alert", "KubeAPIDown", "--as-of", "2026-07-01T00:00:00Z",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert july.code == 0, july
    doc = json.loads(july.out)
    assert doc["runbook"] is None
    assert [r["element_id"] for r in doc["rejected"]] == [POINTER]
    later = invoke(
        "runbook", "--alert", "KubeAPIDown", "--as-of", "2026-09-01T00:00:00Z",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert json.loads(later.out)["runbook"]["id"] == REAL
