"""Every node and relationship variable of every pattern, in every variant, is filtered by the
shared visibility macro; and every variant is read-only by Neo4j's own planner (EXPLAIN).

The coverage check parses the rendered Cypher: it fails when someone adds a pattern element
without the macro, an anonymous pattern element, a pattern outside MATCH, a subquery, or a
procedure outside the allowlist.
"""

from __future__ import annotations

import re

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from cypher_templates.registry import RenderedTemplate, TemplateRegistry

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


def current_allows(x: str) -> str:
    """The macro's one allowed subquery: the element's current record must be readable too."""
    return (
        f"NOT EXISTS {{ MATCH (_now:KG {{tenant: {x}.tenant, id: {x}.id}}) "
        "WHERE _now.superseded_at IS NULL AND _now.status = 'active' "
        "AND NOT (all(_acl IN _now.acl WHERE _acl IN $granted) AND $purpose IN _now.purposes) }"
    )


def authorized(x: str) -> str:
    return (
        f"{x}.tenant = $tenant AND all(_acl IN {x}.acl WHERE _acl IN $granted) "
        f"AND $purpose IN {x}.purposes AND NOT ({x}:Principal OR {x}:Source) "
        f"AND {current_allows(x)}"
    )


def visible(x: str) -> str:
    return (
        f"({authorized(x)} AND {x}.status = 'active' AND {x}.recorded_at <= $known_at "
        f"AND ({x}.superseded_at IS NULL OR $known_at < {x}.superseded_at))"
    )


def visible_history(x: str) -> str:
    return f"({authorized(x)} AND {x}.recorded_at <= $known_at)"


_CURRENT_ALLOWS = re.compile(re.escape(current_allows("XX")).replace("XX", r"\w+"))


def visible_path(p: str) -> str:
    return (
        f"all(_n IN nodes({p}) WHERE {visible('_n')}) "
        f"AND all(_r IN relationships({p}) WHERE {visible('_r')})"
    )


def coverage_problems(text: str, history: bool = False) -> list[str]:
    """Reasons `text` does not filter every pattern element (empty list = covered)."""
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    # The macro's own current-record subquery is the one subquery allowed; checked by text.
    code = _CURRENT_ALLOWS.sub("", code)
    problems: list[str] = []
    # Pattern subqueries in expressions hide patterns from this check; CALL () { ... UNION ... }
    # is fine: its MATCH clauses are checked like any other.
    if re.search(r"\b(EXISTS|COUNT|COLLECT)\s*\{", code):
        problems.append("pattern subqueries are not allowed in templates")
    for proc in re.findall(r"\bCALL\s+([A-Za-z_][\w.]*)", code):
        if proc not in ALLOWED_PROCEDURES:
            problems.append(f"procedure {proc} is not allowlisted")
    for index in re.findall(r"\bdb\.index\.fulltext\.queryNodes\(\s*([^,)]*)", code):
        if index.strip() != "$fulltext_index":
            problems.append("fulltext must read the tenant's own index ($fulltext_index)")
    if re.search(r"\b(CREATE|MERGE|DELETE|SET|REMOVE|LOAD\s+CSV|FOREACH)\b", code):
        problems.append("write or load clause")
    for node, alias in re.findall(r"\bYIELD\s+(\w+)(?:\s+AS\s+(\w+))?", code):
        var = alias or node
        if _CURRENT_ALLOWS.sub("", visible(var)) not in code:
            problems.append(f"yielded node {var} lacks the visibility macro")
    parts = _CLAUSE.split(code)
    pattern_bodies: list[str] = []
    for i in range(1, len(parts) - 1, 2):
        keyword, body = parts[i].upper(), parts[i + 1]
        if keyword.endswith("MATCH"):
            pattern_bodies.append(body)
        elif re.search(r"\)\s*<?-|-\s*\[|\]\s*-", body):
            problems.append(f"pattern outside MATCH in {keyword}: {body.strip()[:60]}")
    full = visible_history if history else visible

    def covered(var: str) -> str:
        return _CURRENT_ALLOWS.sub("", full(var))

    for body in pattern_bodies:
        path_vars = dict(re.findall(r"\b(\w+)\s*=\s*(\([^=]*)", body))
        for var in re.findall(r"\(\s*(\w*)\s*[:{)]", body):
            if not var:
                problems.append(f"anonymous node in MATCH {body.strip()[:60]}")
            elif covered(var) not in code:
                problems.append(f"node variable {var} lacks the visibility macro")
        for var, varlen in re.findall(r"\[\s*(\w*)\s*(?::[^\]*]*)?(\*?)", body):
            if not var:
                problems.append(f"anonymous relationship in MATCH {body.strip()[:60]}")
            elif varlen:
                owner = [p for p, pat in path_vars.items() if f"[{var}:" in pat]
                if not owner or _CURRENT_ALLOWS.sub("", visible_path(owner[0])) not in code:
                    problems.append(f"variable-length {var} is not inside a visible path")
            elif covered(var) not in code:
                problems.append(f"relationship variable {var} lacks the visibility macro")
    if "LIMIT $limit" not in code:
        problems.append("no LIMIT $limit")
    return problems


@pytest.mark.parametrize(("spec", "options"), VARIANTS)
def test_every_pattern_element_is_filtered(spec, options) -> None:  # type: ignore[no-untyped-def]
    rendered = REG.render(spec, options)
    assert coverage_problems(rendered.text, history=spec.history) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            f"MATCH (a:KG)-[r:OWNS]->(b:KG) WHERE {visible('a')} AND {visible('b')} "
            "RETURN a LIMIT $limit",
            "relationship variable r lacks",
        ),
        (
            f"MATCH (a:KG)-[r:OWNS]->(:KG) WHERE {visible('a')} AND {visible('r')} "
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


def test_history_predicate_is_only_accepted_where_declared() -> None:
    text = f"MATCH (x:KG {{id: $id}}) WHERE {visible_history('x')} RETURN x LIMIT $limit"
    assert coverage_problems(text, history=True) == []
    assert coverage_problems(text, history=False) != []


@pytest.mark.parametrize(("spec", "options"), VARIANTS)
def test_every_variant_is_read_only_by_explain(driver: neo4j.Driver, spec, options) -> None:  # type: ignore[no-untyped-def]
    executor = TemplateExecutor(driver, REG)
    rendered: RenderedTemplate = REG.render(spec, options)
    assert executor.explain(rendered) == "r"
