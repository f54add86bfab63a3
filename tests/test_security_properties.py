"""Property suite (hypothesis, CI size) of issue 11: random plans x subjects x known_at x the
audit commands never leak.

The world and the oracle are `benchmarks/security_leaks.py`'s (which runs 10,000+
combinations): two tenants with the same document and principal ids, random ACLs, purposes and
PII, runs recorded for random subjects, then a revoked `pii` label, a retracted principal and
ACLs tightened by later records. The oracle is computed from the generated bundles.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cypher_templates.executor import TemplateExecutor
from cypher_templates.registry import TemplateRegistry
from investigator.settings import ConnectionSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import security_leaks as world_kit

PURPOSES = [None, "audit", "incident_investigation", "runbook_lookup"]
_SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


class _State:
    world: Any
    driver: neo4j.Driver
    executor: TemplateExecutor


STATE = _State()


@pytest.fixture(scope="module")
def world(driver: neo4j.Driver, neo4j_settings: ConnectionSettings) -> Iterator[_State]:
    mp = pytest.MonkeyPatch()
    mp.setenv("NEO4J_URI", neo4j_settings.uri)
    mp.setenv("NEO4J_USER", neo4j_settings.user)
    mp.setenv("NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    try:
        rng = random.Random(11)
        world_kit.wipe(driver)
        assert world_kit._cli("schema", "apply")[0] == 0
        built = world_kit.build_world(rng)
        world_kit.record_runs(driver, built, rng, 1)
        world_kit.change_world(built, rng)
        STATE.world = built
        STATE.driver = driver
        STATE.executor = TemplateExecutor(driver, TemplateRegistry.load())
        yield STATE
    finally:
        mp.undo()


def test_the_world_has_runs_changes_and_both_tenants(world: _State) -> None:
    assert {r.tenant for r in world.world.runs} == {"t1", "t2"}
    assert any(p.retracted for p in world.world.principals.values())
    assert any(d.acl_now != d.acl for d in world.world.docs.values())


@_SETTINGS
@given(data=st.data())
def test_audit_commands_never_leak(world: _State, data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(world.world.principals)))
    purpose = data.draw(st.sampled_from(PURPOSES))
    run = data.draw(st.sampled_from(world.world.runs))
    tally = world_kit.Tally()
    world_kit.audit_one(world.driver, world.executor, world.world, key, purpose, [run], tally)
    assert tally.leaks == []
    assert tally.false_refusals == 0


@_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_plans_subjects_and_known_at_never_leak(world: _State, seed: int) -> None:
    tally = world_kit.Tally()
    world_kit.template_combinations(
        world.driver, world.world, random.Random(seed), 3, tally, world.executor
    )
    assert tally.tried == 3
    assert tally.leaks == []


def test_the_oracle_sees_leaks_when_the_filter_withholds_nothing(
    world: _State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite can fail: with re-filtering switched off, revoked and tightened grants leak."""
    from investigator.context_graph.audit import ContentFilter

    monkeypatch.setattr(ContentFilter, "_reason", lambda self, ev, records: None)
    tally = world_kit.Tally()
    world_kit.audit_combinations(world.driver, world.world, tally)
    assert tally.leaks, "the oracle found nothing to object to"
