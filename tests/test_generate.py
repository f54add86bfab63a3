"""`investigator generate`: deterministic synthetic bundles of the demo's shape."""

from __future__ import annotations

import json

from graph_schema.bundle import load_bundle
from graph_schema.synthetic import generate_bundle


def test_same_seed_same_bytes_other_seed_other_bytes(invoke, tmp_path) -> None:
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    assert invoke("generate", "--services", "12", "--seed", "3", "--out", str(a)).code == 0
    assert invoke("generate", "--services", "12", "--seed", "3", "--out", str(b)).code == 0
    assert invoke("generate", "--services", "12", "--seed", "4", "--out", str(c)).code == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_generated_bundle_loads_clean_and_has_the_demo_shape(invoke, tmp_path) -> None:
    out = tmp_path / "synth.yaml"
    result = invoke("generate", "--services", "40", "--seed", "1", "--out", str(out))
    assert result.code == 0, result
    loaded = load_bundle(out)
    assert loaded.problems == []
    bundle = loaded.parts[0].bundle
    labels = {n.label.value for n in bundle.nodes}
    assert {"Service", "Team", "Deployment", "ErrorCode", "Alert", "Incident"} <= labels
    types = {e.type.value for e in bundle.edges}
    assert {"OWNS", "DEPENDS_ON", "DEPLOYED_TO", "EMITTED", "FIRED_ON"} <= types
    assert any(d.supersedes for d in bundle.documents)
    assert any(d.redacted_content for d in bundle.documents)
    assert bundle.retractions
    # Scale is linear in --services.
    assert generate_bundle(80, 1).element_count() > 1.8 * bundle.element_count()


def test_generated_bundle_ingests_and_reingests_as_no_op(driver, cli_env, invoke, tmp_path) -> None:
    out = tmp_path / "synth.json"
    assert invoke("generate", "--services", "15", "--tenant", "gen", "--out", str(out)).code == 0
    driver.execute_query("MATCH (n:KG {tenant: 'gen'}) DETACH DELETE n")
    first = json.loads(invoke("ingest", str(out), "--json").out)
    assert first["node_records_created"] > 100
    second = json.loads(invoke("ingest", str(out), "--json").out)
    assert second["node_records_created"] == 0 and second["edge_records_created"] == 0
    driver.execute_query("MATCH (n:KG {tenant: 'gen'}) DETACH DELETE n")


def test_bad_arguments_are_exit_2_with_one_line(invoke, tmp_path) -> None:
    for args in (
        ["--services", "0", "--out", str(tmp_path / "x.json")],
        ["--services", "-5", "--out", str(tmp_path / "x.json")],
        ["--services", "ten", "--out", str(tmp_path / "x.json")],
        ["--services", "5", "--out", str(tmp_path / "x.csv")],
        ["--services", "5", "--tenant", "a b') //", "--out", str(tmp_path / "x.json")],
        ["--services", "5", "--out", str(tmp_path / "missing-dir" / "sub" / "\0x.json")],
    ):
        result = invoke("generate", *args)
        assert result.code == 2, (args, result)
        assert result.err.count("\n") == 1, result.err
    assert not (tmp_path / "x.json").exists()
