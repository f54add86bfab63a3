"""`investigator eval` end to end on a real Neo4j: setup from nothing, JSON report, gates.

Runs a handful of golden cases (the full set runs in CI as `investigator eval`), so the
whole file stays fast on a shared two-core machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import yaml

from investigator.evaluation.cases import DEFAULT_CASES_PATH

SUBSET = (
    "exact-error-code-runbook",  # runbook lookup: version, owner, rejected versions
    "temporal-owner-on-incident-day",  # investigate: owner at as_of
    "acl-purpose-not-allowed-for-subject",  # exit 3 is the expected outcome
)


def _subset(tmp_path: Path, ids: tuple[str, ...], edit: dict[str, dict] | None = None) -> Path:  # type: ignore[type-arg]
    raw = yaml.safe_load(DEFAULT_CASES_PATH.read_text(encoding="utf-8"))
    raw["cases"] = [c for c in raw["cases"] if c["id"] in ids]
    for case in raw["cases"]:
        case.update((edit or {}).get(case["id"], {}))
    used = {c.get("dataset", "payments-incident") for c in raw["cases"]}
    raw["datasets"] = [
        {**d, "path": str(DEFAULT_CASES_PATH.parents[1] / d["path"])}
        for d in raw["datasets"]
        if d["name"] in used
    ]
    raw["forbidden_everywhere"] = {
        k: v for k, v in raw.get("forbidden_everywhere", {}).items() if k in used
    }
    path = tmp_path / "subset.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_eval_sets_up_from_nothing_and_reports_both_systems(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    res = invoke("eval", "--cases", str(_subset(tmp_path, SUBSET)), "--json")
    report = json.loads(res.out)  # exactly one JSON document on stdout
    assert report["case_count"] == 3
    assert {c["case_id"] for c in report["product"]["cases"]} == set(SUBSET)
    assert {c["case_id"] for c in report["baseline"]["cases"]} == set(SUBSET)
    by_id = {c["case_id"]: c for c in report["product"]["cases"]}
    assert by_id["acl-purpose-not-allowed-for-subject"]["exit_code"] == 3
    assert by_id["acl-purpose-not-allowed-for-subject"]["metrics"]["status_accuracy"]["value"] == 1
    lookup = by_id["exact-error-code-runbook"]["metrics"]
    assert lookup["lookup_accuracy"]["value"] == 1.0
    assert lookup["deterministic_replay_rate"]["value"] == 1.0  # the lookup run replays
    safety = ("acl_violation_rate", "untrusted_admission_rate", "deleted_admission_rate")
    for name in safety:
        assert report["product"]["layers"]["pack"][name]["num"] == 0, name
    # The naive baseline hands the refused subject documents anyway: that is a violation.
    base = {c["case_id"]: c for c in report["baseline"]["cases"]}
    assert base["acl-purpose-not-allowed-for-subject"]["metrics"]["acl_violation_rate"]["num"] > 0
    assert report["passed"] is (res.code == 0)


def test_a_failing_gate_exits_non_zero_and_names_the_case(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    # A wrong expectation (as if the product had admitted the superseded runbook v2):
    # v3 is declared forbidden, so the product's correct answer counts as a temporal miss.
    wrong = {
        "exact-error-code-runbook": {
            "expect": {
                "evidence": ["runbook:payment-recovery@v2"],
                "forbidden": [{"id": "runbook:payment-recovery@v3", "why": "superseded"}],
            }
        }
    }
    res = invoke("eval", "--cases", str(_subset(tmp_path, SUBSET[:1], wrong)))
    assert res.code == 1, res
    assert "exact-error-code-runbook" in res.err.strip().splitlines()[-1]
    assert "temporal_accuracy" in res.err
    assert "| retriever | required_evidence_recall |" in res.out  # the table is still printed
