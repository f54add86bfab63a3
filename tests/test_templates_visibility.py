"""Every node and relationship variable of every pattern, in every variant, is filtered by the
shared visibility macro; and every variant is read-only by Neo4j's own planner (EXPLAIN).

The coverage check parses the rendered Cypher: it fails when someone adds a pattern element
without the macro, an anonymous pattern element, a pattern outside MATCH, a subquery, or a
procedure outside the allowlist.
"""

from __future__ import annotations

import re
from pathlib import Path

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from cypher_templates.registry import TEMPLATES_DIR, RenderedTemplate, TemplateRegistry
from graph_schema.kg_types import RelType

REG = TemplateRegistry.load()
VARIANTS = [
    pytest.param(spec, options, id=f"{spec.ref}-{'-'.join(str(v) for v in options.values())}")
    for spec in REG.specs()
    for options in spec.variants()
]
ALLOWED_PROCEDURES = {"db.index.fulltext.queryNodes"}
# `USING INDEX x:L(prop)` is a planner hint, not a pattern: its own clause, so `(prop)` is not
# read as a node variable.
_CLAUSE = re.compile(
    r"\b(OPTIONAL\s+MATCH|MATCH|WHERE|WITH|RETURN|UNWIND|CALL|YIELD|ORDER\s+BY|LIMIT|UNION"
    r"|USING\s+(?:INDEX|SCAN))\b"
)


# The predicate each version's `acl_ceiling` renders, written out here independently of the
# macro file (templates/_visibility.j2), so a change to the macro must change this spec too.


def readable(x: str) -> str:
    return f"all(_acl IN {x}.acl WHERE _acl IN $granted) AND $purpose IN {x}.purposes"


def node_ceiling(x: str) -> str:
    """The node's latest record (any status) must be readable too: found by (tenant, id)."""
    return (
        f"NOT EXISTS {{ MATCH (_now:KG {{tenant: {x}.tenant, id: {x}.id}}) "
        f"WHERE _now.superseded_at IS NULL AND NOT ({readable('_now')}) }}"
    )


def rel_ceiling(r: str, types: str) -> str:
    """The relationship's latest record must be readable too: found by (tenant, key) within
    exactly the types its pattern names (each type's kg_rel_<type>_key index)."""
    return (
        f"NOT EXISTS {{ MATCH ()-[_now:{types} {{tenant: {r}.tenant, key: {r}.key}}]->() "
        f"WHERE _now.superseded_at IS NULL AND NOT ({readable('_now')}) }}"
    )


def at_known_at(x: str) -> str:
    return (
        f"{x}.status = 'active' AND {x}.recorded_at <= $known_at "
        f"AND ({x}.superseded_at IS NULL OR $known_at < {x}.superseded_at)"
    )


def visible(x: str) -> str:
    return (
        f"({x}.tenant = $tenant AND {readable(x)} AND NOT ({x}:Principal OR {x}:Source) "
        f"AND {at_known_at(x)} AND {node_ceiling(x)})"
    )


def visible_rel(r: str, types: str) -> str:
    return (
        f"({r}.tenant = $tenant AND {readable(r)} AND {at_known_at(r)} AND {rel_ceiling(r, types)})"
    )


def visible_history(x: str) -> str:
    return (
        f"({x}.tenant = $tenant AND {readable(x)} AND NOT ({x}:Principal OR {x}:Source) "
        f"AND {x}.recorded_at <= $known_at AND {node_ceiling(x)})"
    )


def visible_history_rel(r: str, types: str) -> str:
    return (
        f"({r}.tenant = $tenant AND {readable(r)} AND {r}.recorded_at <= $known_at "
        f"AND {rel_ceiling(r, types)})"
    )


def visible_path(p: str, types: str) -> str:
    return (
        f"all(_n IN nodes({p}) WHERE {visible('_n')}) "
        f"AND all(_r IN relationships({p}) WHERE {visible_rel('_r', types)})"
    )


# The only subqueries a template may contain: the ceilings of the macro, by their exact text.
_CEILINGS = re.compile(
    "|".join(
        re.escape(text).replace("XX", r"\w+").replace("TT", r"[A-Z_]+(?:\|[A-Z_]+)*")
        for text in (node_ceiling("XX"), rel_ceiling("XX", "TT"))
    )
)


# Versions 1 and 2 (`acl_ceiling: active_node`), as recorded runs name them: the ceiling looks
# up the current ACTIVE record by (tenant, id), so it never holds for a relationship.
def legacy_current_allows(x: str) -> str:
    return (
        f"NOT EXISTS {{ MATCH (_now:KG {{tenant: {x}.tenant, id: {x}.id}}) "
        "WHERE _now.superseded_at IS NULL AND _now.status = 'active' "
        "AND NOT (all(_acl IN _now.acl WHERE _acl IN $granted) AND $purpose IN _now.purposes) }"
    )


def legacy_authorized(x: str) -> str:
    return (
        f"{x}.tenant = $tenant AND all(_acl IN {x}.acl WHERE _acl IN $granted) "
        f"AND $purpose IN {x}.purposes AND NOT ({x}:Principal OR {x}:Source) "
        f"AND {legacy_current_allows(x)}"
    )


def legacy_visible(x: str, types: str | None = None) -> str:
    return (
        f"({legacy_authorized(x)} AND {x}.status = 'active' AND {x}.recorded_at <= $known_at "
        f"AND ({x}.superseded_at IS NULL OR $known_at < {x}.superseded_at))"
    )


def legacy_visible_history(x: str, types: str | None = None) -> str:
    return f"({legacy_authorized(x)} AND {x}.recorded_at <= $known_at)"


def legacy_visible_path(p: str, types: str | None = None) -> str:
    return (
        f"all(_n IN nodes({p}) WHERE {legacy_visible('_n')}) "
        f"AND all(_r IN relationships({p}) WHERE {legacy_visible('_r')})"
    )


_LEGACY_CEILING = re.compile(re.escape(legacy_current_allows("XX")).replace("XX", r"\w+"))


class _Predicates:
    """The macro texts one `acl_ceiling` requires of nodes, relationships and paths."""

    def __init__(self, ceiling: str, history: bool) -> None:
        self.legacy = ceiling == "active_node"
        if self.legacy:
            self.node = legacy_visible_history if history else legacy_visible
            self.rel = legacy_visible_history if history else legacy_visible
            self.path = legacy_visible_path
            self.subqueries = _LEGACY_CEILING
        else:
            self.node = visible_history if history else visible
            self.rel = visible_history_rel if history else visible_rel
            self.path = visible_path
            self.subqueries = _CEILINGS


def _segments(code: str) -> list[str]:
    # Each UNION branch binds its own variables: a variable must be filtered in its branch.
    return re.split(r"\bUNION(?:\s+ALL)?\b", code)


def coverage_problems(
    text: str, history: bool = False, ceiling: str = "latest_record"
) -> list[str]:
    """Reasons `text` does not filter every pattern element (empty list = covered).

    With `ceiling="latest_record"` every node variable needs `visible` (its latest record
    found by (tenant, id)) and every relationship variable `visible_rel` naming exactly the
    types of its pattern (its latest record found by (tenant, key) within them); an untyped
    relationship cannot have its latest record found and is refused.
    """
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    predicates = _Predicates(ceiling, history)
    problems: list[str] = []
    for segment in _segments(code):
        problems += _segment_problems(segment, predicates)
    # The macro's own ceiling subqueries are the only subqueries allowed; checked by text.
    rest = predicates.subqueries.sub("", code)
    # Pattern subqueries in expressions hide patterns from this check; CALL () { ... UNION ... }
    # is fine: its MATCH clauses are checked like any other.
    if re.search(r"\b(EXISTS|COUNT|COLLECT)\s*\{", rest):
        problems.append("pattern subqueries are not allowed in templates")
    for proc in re.findall(r"\bCALL\s+([A-Za-z_][\w.]*)", rest):
        if proc not in ALLOWED_PROCEDURES:
            problems.append(f"procedure {proc} is not allowlisted")
    for index in re.findall(r"\bdb\.index\.fulltext\.queryNodes\(\s*([^,)]*)", rest):
        if index.strip() != "$fulltext_index":
            problems.append("fulltext must read the tenant's own index ($fulltext_index)")
    if re.search(r"\b(CREATE|MERGE|DELETE|SET|REMOVE|LOAD\s+CSV|FOREACH)\b", rest):
        problems.append("write or load clause")
    if "LIMIT $limit" not in rest:
        problems.append("no LIMIT $limit")
    return problems


def _segment_problems(segment: str, predicates: _Predicates) -> list[str]:
    """Coverage problems of one UNION branch (its variables must be filtered in it)."""
    problems: list[str] = []
    for node, alias in re.findall(r"\bYIELD\s+(\w+)(?:\s+AS\s+(\w+))?", segment):
        var = alias or node
        if predicates.node(var) not in segment:
            problems.append(f"yielded node {var} lacks the visibility macro")
    # Patterns are read with the ceilings' own (allowed) patterns taken out.
    parts = _CLAUSE.split(predicates.subqueries.sub("", segment))
    pattern_bodies: list[str] = []
    for i in range(1, len(parts) - 1, 2):
        keyword, body = parts[i].upper(), parts[i + 1]
        if keyword.endswith("MATCH"):
            pattern_bodies.append(body)
        elif re.search(r"\)\s*<?-|-\s*\[|\]\s*-", body):
            problems.append(f"pattern outside MATCH in {keyword}: {body.strip()[:60]}")
    for body in pattern_bodies:
        path_vars = dict(re.findall(r"\b(\w+)\s*=\s*(\([^=]*)", body))
        for var in re.findall(r"\(\s*(\w*)\s*[:{)]", body):
            if not var:
                problems.append(f"anonymous node in MATCH {body.strip()[:60]}")
            elif predicates.node(var) not in segment:
                problems.append(f"node variable {var} lacks the visibility macro")
        for var, types, varlen in re.findall(
            r"\[\s*(\w*)\s*(?::\s*([A-Za-z_][\w|]*))?[^\]*]*(\*?)", body
        ):
            if not var:
                problems.append(f"anonymous relationship in MATCH {body.strip()[:60]}")
            elif not types and not predicates.legacy:
                problems.append(f"relationship variable {var} has no type: no ceiling lookup")
            elif varlen:
                owner = [p for p, pat in path_vars.items() if f"[{var}:" in pat]
                if not owner or predicates.path(owner[0], types) not in segment:
                    problems.append(f"variable-length {var} is not inside a visible path")
            elif predicates.rel(var, types) not in segment:
                problems.append(f"relationship variable {var} lacks the visibility macro")
    return problems


@pytest.mark.parametrize(("spec", "options"), VARIANTS)
def test_every_pattern_element_is_filtered(spec, options) -> None:  # type: ignore[no-untyped-def]
    rendered = REG.render(spec, options)
    assert coverage_problems(rendered.text, spec.history, spec.acl_ceiling) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            f"MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
            "RETURN a LIMIT $limit",
            "relationship variable r lacks",
        ),
        (
            f"MATCH (a:KG)-[r:OWNS]->(:KG) WHERE {visible('a')} AND {visible_rel('r', 'OWNS')} "
            "RETURN a LIMIT $limit",
            "anonymous node",
        ),
        (
            f"MATCH (a:KG) WHERE {visible('a')} AND (a)-[:OWNS]->() RETURN a LIMIT $limit",
            "pattern outside MATCH",
        ),
        (
            f"MATCH p = (a:KG)-[rs:DEPENDS_ON*1..3]->(b:KG) WHERE {visible('a')} "
            f"AND {visible('b')} RETURN a LIMIT $limit",
            "variable-length rs",
        ),
        (f"MATCH (a:KG) WHERE {visible('a')} RETURN a", "no LIMIT"),
        ("CALL apoc.load.json('file:///x') YIELD value RETURN value LIMIT $limit", "apoc"),
        (f"MATCH (a:KG) WHERE {visible('a')} DETACH DELETE a", "write"),
        (
            f"MATCH (a:KG) WHERE {visible('a')} AND EXISTS {{ (a)-[:OWNS]->() }} "
            "RETURN a LIMIT $limit",
            "pattern subqueries",
        ),
        (
            f"CALL () {{ MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
            "RETURN a } RETURN a LIMIT $limit",
            "relationship variable r lacks",
        ),
        (
            "CALL db.index.fulltext.queryNodes('kg_fulltext', $q) YIELD node AS hit "
            f"WHERE {visible('node')} RETURN hit LIMIT $limit",
            "yielded node hit",
        ),
        (
            "CALL db.index.fulltext.queryNodes('kg_fulltext', $q) YIELD node, score "
            "RETURN node LIMIT $limit",
            "yielded node node",
        ),
        (
            "CALL db.index.fulltext.queryNodes('kg_fulltext', $q) YIELD node, score "
            f"WHERE {visible('node')} RETURN node LIMIT $limit",
            "tenant's own index",
        ),
    ],
)
def test_the_coverage_check_catches_a_forgotten_macro(text: str, problem: str) -> None:
    assert any(problem in p for p in coverage_problems(text)), coverage_problems(text)


_OWNS = "MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {a} AND {r} AND {b} RETURN r LIMIT $limit"


def test_a_relationship_needs_the_ceiling_of_its_own_latest_record() -> None:
    """Issue: a relationship's ceiling looked records up by `id`, which relationships lack, so
    an ACL tightened later never hid an older record of it. Now the check insists on the
    relationship macro, naming the pattern's types, for that very variable."""
    a, b = visible("a"), visible("b")
    assert coverage_problems(_OWNS.format(a=a, r=visible_rel("r", "OWNS"), b=b)) == []
    wrong = {
        "the node macro (looks up an id)": visible("r"),
        "another type's index": visible_rel("r", "DEPENDS_ON"),
        "another variable's record": visible_rel("r", "OWNS").replace("{tenant: r.", "{tenant: a."),
        "the versions 1-2 macro": legacy_visible("r"),
    }
    for why, r in wrong.items():
        problems = coverage_problems(_OWNS.format(a=a, r=r, b=b))
        assert any("relationship variable r lacks" in p for p in problems), (why, problems)


def test_the_ceiling_of_any_status_is_required_of_nodes_and_paths() -> None:
    """Issue: a node retracted after its ACL was tightened came back at an earlier known_at:
    the ceiling skipped non-active records (the tombstone). A ceiling that filters on status
    is not the macro."""
    only_active = visible("a").replace(
        "_now.superseded_at IS NULL AND",
        "_now.superseded_at IS NULL AND _now.status = 'active' AND",
    )
    text = f"MATCH (a:KG) WHERE {only_active} RETURN a LIMIT $limit"
    assert "node variable a lacks the visibility macro" in coverage_problems(text)
    path = (
        "MATCH p = (a:KG)-[rs:DEPENDS_ON*1..3]->(b:KG) WHERE {a} AND {b} AND {p} "
        "RETURN a LIMIT $limit"
    )
    ok = path.format(a=visible("a"), b=visible("b"), p=visible_path("p", "DEPENDS_ON"))
    assert coverage_problems(ok) == []
    other = path.format(a=visible("a"), b=visible("b"), p=visible_path("p", "OWNS"))
    assert any("variable-length rs" in p for p in coverage_problems(other))


def test_an_untyped_relationship_is_refused_and_union_branches_are_checked_alone() -> None:
    untyped = (
        f"MATCH (a:KG)-[r {{key: $k}}]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
        f"AND {visible_rel('r', 'OWNS')} RETURN r LIMIT $limit"
    )
    assert any("r has no type" in p for p in coverage_problems(untyped))
    branches = (
        f"MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
        f"AND {visible_rel('r', 'OWNS')} RETURN r LIMIT $limit UNION "
        f"MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
        "RETURN r LIMIT $limit"
    )
    assert any("relationship variable r lacks" in p for p in coverage_problems(branches))


def test_versions_1_and_2_keep_their_recorded_predicate() -> None:
    """Recorded runs name versions 1 and 2: they render the predicate they were recorded with
    (`active_node`), version 3 and later the latest-record ceiling."""
    by_ceiling = {s.version: s.acl_ceiling for s in REG.specs() if s.id == "ownership_over_time"}
    assert by_ceiling == {1: "active_node", 2: "active_node", 3: "latest_record"}
    for spec in REG.specs():
        assert spec.acl_ceiling == ("active_node" if spec.version < 3 else "latest_record")
        assert REG.get(spec.id).acl_ceiling == "latest_record"  # what a new plan gets
    legacy = REG.render(REG.get("ownership_over_time", 2), {}).text
    assert legacy_visible("o") in legacy and rel_ceiling("o", "OWNS") not in legacy
    current = REG.render(REG.get("ownership_over_time"), {}).text
    assert visible_rel("o", "OWNS") in current


def test_the_macro_names_every_relationship_type_and_refuses_others(tmp_path: Path) -> None:
    """`rel_types` (the untyped lookups of version_history) lists exactly the KG's types, and
    a type the KG does not have fails to render rather than reach Cypher."""
    macros = (TEMPLATES_DIR / "_visibility.j2").read_text(encoding="utf-8")
    listed = re.search(r"set rel_types = '([A-Z_|]+)'", macros)
    assert listed is not None
    assert sorted(listed.group(1).split("|")) == sorted(t.value for t in RelType)
    (tmp_path / "_visibility.j2").write_text(macros, encoding="utf-8")
    (tmp_path / "t.cypher").write_text(
        "{% import '_visibility.j2' as v with context %}"
        "MATCH (a:KG)-[r:NOPE]->(b:KG) WHERE {{ v.visible_rel('r', 'OWNS|NOPE') }} "
        "RETURN r LIMIT $limit",
        encoding="utf-8",
    )
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        "templates:\n  - {id: t, version: 1, file: t.cypher, description: d,"
        " evidence_types: [entity], row_cap: 5, timeout_s: 1, acl_ceiling: latest_record}\n",
        encoding="utf-8",
    )
    reg = TemplateRegistry.load(manifest, tmp_path)
    with pytest.raises(ValueError, match="failed to render"):
        reg.render(reg.get("t"), {})


def test_history_predicate_is_only_accepted_where_declared() -> None:
    text = f"MATCH (x:KG {{id: $id}}) WHERE {visible_history('x')} RETURN x LIMIT $limit"
    assert coverage_problems(text, history=True) == []
    assert coverage_problems(text, history=False) != []
    legacy = f"MATCH (x:KG {{id: $id}}) WHERE {legacy_visible_history('x')} RETURN x LIMIT $limit"
    assert coverage_problems(legacy, True, "active_node") == []
    assert coverage_problems(legacy, True) != []  # not the latest-record ceiling


@pytest.mark.parametrize(("spec", "options"), VARIANTS)
def test_every_variant_is_read_only_by_explain(driver: neo4j.Driver, spec, options) -> None:  # type: ignore[no-untyped-def]
    executor = TemplateExecutor(driver, REG)
    rendered: RenderedTemplate = REG.render(spec, options)
    assert executor.explain(rendered) == "r"
