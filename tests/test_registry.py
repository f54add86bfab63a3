"""The allowlist refuses what it does not know, clearly, before anything reaches Neo4j."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from cypher_templates.compiler import compile_step, lucene_fuzzy, lucene_literal, lucene_prefix
from cypher_templates.plan import PlanStep, QueryPlan
from cypher_templates.registry import TemplateRefused, TemplateRegistry, UnknownTemplate
from investigator.errors import BadInput

REG = TemplateRegistry.load()

HOSTILE = [
    "x' OR 1=1 //",
    'x" }) DETACH DELETE n //',
    "`KG`) DETACH DELETE (n",
    "}) DETACH DELETE n WITH 1 AS x MATCH (m",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "CALL dbms.security.listUsers()",
    "CALL apoc.load.json('file:///etc/passwd')",
    "svc:payment\u2010api",  # unicode hyphen look-alike
    "\uff5d) DETACH DELETE n",  # fullwidth brace
    "$tenant_injected) RETURN 1 //",
    "{{ 7*7 }}",
]


def step(template_id: str, evidence: str = "entity", **kw: object) -> PlanStep:
    return PlanStep(template_id=template_id, evidence_type=evidence, **kw)  # type: ignore[arg-type]


def test_manifest_lists_the_required_templates() -> None:
    ids = {s.id for s in REG.specs()}
    assert {
        "entity_resolution",
        "fulltext_search",
        "ownership_over_time",
        "deployments_in_window",
        "incident_context",
        "runbooks_for",
        "change_events_in_window",
        "dependency_neighbourhood",
        "documents_about",
        "version_history",
    } <= ids
    for spec in REG.specs():
        assert spec.row_cap >= 1 and spec.timeout_s > 0 and spec.evidence_types


def test_unknown_template_is_refused() -> None:
    with pytest.raises(UnknownTemplate, match="unknown template 'drop_everything'"):
        compile_step(REG, step("drop_everything", params={"x": "y"}))


def test_unknown_version_is_refused() -> None:
    with pytest.raises(UnknownTemplate, match="unknown version 99 of template 'entity_resolution'"):
        compile_step(REG, step("entity_resolution", template_version=99, params={"text": "a"}))


def test_hops_four_is_refused() -> None:
    s = step(
        "dependency_neighbourhood", "dependency", params={"start_id": "svc:a"}, options={"hops": 4}
    )
    with pytest.raises(
        TemplateRefused, match=r"option hops=.4. refused: must be an integer in 1..3"
    ):
        compile_step(REG, s)


def test_hops_above_plan_max_hops_is_refused() -> None:
    s = step(
        "dependency_neighbourhood", "dependency", params={"start_id": "svc:a"}, options={"hops": 3}
    )
    with pytest.raises(TemplateRefused, match="exceeds the plan's max_hops=2"):
        compile_step(REG, s, QueryPlan(steps=[s], max_hops=2))


def test_negative_limit_is_refused_by_the_plan_model() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        step("entity_resolution", params={"text": "a"}, limit=-1)


def test_limit_above_row_cap_is_refused() -> None:
    with pytest.raises(TemplateRefused, match="exceeds its row cap 25"):
        compile_step(REG, step("entity_resolution", params={"text": "a"}, limit=26))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "text: Field required"),
        ({"text": "a", "tenant": "globex"}, "tenant: Extra inputs are not permitted"),
        ({"text": "a", "granted": ["pii"]}, "granted: Extra inputs are not permitted"),
        ({"text": ""}, "at least 1 character"),
        ({"text": "x" * 1_000_000}, "at most 200 characters"),
        ({"text": 5}, "valid string"),
        ({"text": ["a"]}, "valid string"),
        ({"text": "a\x00b"}, "control character U\\+0000"),
    ],
)
def test_bad_params_are_refused(params: dict[str, object], message: str) -> None:
    with pytest.raises(TemplateRefused, match=message):
        compile_step(REG, step("entity_resolution", params=params))  # type: ignore[arg-type]


def test_naive_datetime_is_refused() -> None:
    s = step(
        "deployments_in_window",
        "deployment_time",
        params={"service_id": "svc:a", "from": "2026-07-23T10:00:00", "to": "2026-07-24T00:00:00Z"},
    )
    with pytest.raises(TemplateRefused, match="from: Input should have timezone info"):
        compile_step(REG, s)


def test_unknown_option_and_value_are_refused() -> None:
    with pytest.raises(TemplateRefused, match="unknown option"):
        compile_step(REG, step("entity_resolution", params={"text": "a"}, options={"x": "y"}))
    with pytest.raises(TemplateRefused, match="must be one of"):
        compile_step(
            REG,
            step(
                "dependency_neighbourhood",
                "dependency",
                params={"start_id": "a"},
                options={"rel_type": "DEPENDS_ON]->() DETACH DELETE (n"},
            ),
        )


def test_evidence_type_the_template_does_not_supply_is_refused() -> None:
    with pytest.raises(TemplateRefused, match="does not supply evidence type 'ownership'"):
        compile_step(REG, step("entity_resolution", "ownership", params={"text": "a"}))


def test_refusals_are_bad_input_exit_2() -> None:
    assert issubclass(TemplateRefused, BadInput) and BadInput.exit_code == 2


@pytest.mark.parametrize("value", HOSTILE)
def test_rendered_text_never_contains_a_parameter_value(value: str) -> None:
    for spec in REG.specs():
        for options in spec.variants():
            baseline = REG.render(spec, options)
            params: dict[str, object] = {}
            for name, p in spec.params.items():
                if p.type in ("id", "text", "lucene"):
                    params[name] = value[: p.max_length]
                elif p.type == "datetime":
                    params[name] = "2026-07-23T10:00:00Z"
            evidence = spec.evidence_types[0]
            try:
                compiled = compile_step(
                    REG,
                    step(
                        spec.id,
                        evidence,
                        template_version=spec.version,
                        params=params,
                        options=options,  # type: ignore[arg-type]
                    ),
                )
            except TemplateRefused:
                # Fuzzy and prefix terms are words only: a value with none is refused, never
                # rendered.
                assert {d.transform for d in spec.derived.values()} <= {
                    "lucene_fuzzy",
                    "lucene_prefix",
                }
                continue
            # The text depends on the structural options only, never on the values.
            assert compiled.text == baseline.text
            assert compiled.template_hash == baseline.template_hash
            assert value not in compiled.text


def test_render_is_strict_about_undefined_options(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.cypher").write_text("MATCH (n:KG) WHERE n.x = {{ missing }}")
    (tmp_path / "manifest.yaml").write_text(
        "templates:\n  - {id: t, version: 1, file: t.cypher, description: d,"
        " evidence_types: [entity], row_cap: 1, timeout_s: 1}\n"
    )
    reg = TemplateRegistry.load(tmp_path / "manifest.yaml")
    with pytest.raises(ValueError, match="'missing' is undefined"):
        reg.render(reg.get("t"), {})


def test_manifest_with_reserved_param_or_odd_option_value_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.cypher").write_text("RETURN 1")
    entry = (
        "templates:\n  - {id: t, version: 1, file: t.cypher, description: d,"
        " evidence_types: [entity], row_cap: 1, timeout_s: 1, %s}\n"
    )
    (tmp_path / "manifest.yaml").write_text(entry % "params: {tenant: {type: id}}")
    with pytest.raises(ValueError, match="reserved for the executor"):
        TemplateRegistry.load(tmp_path / "manifest.yaml")
    (tmp_path / "manifest.yaml").write_text(
        entry % "options: {rel: {enum: ['A]-() DELETE'], default: 'A]-() DELETE'}}"
    )
    with pytest.raises(ValueError, match="is not an identifier"):
        TemplateRegistry.load(tmp_path / "manifest.yaml")


def test_manifest_derived_param_needs_a_declared_source(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.cypher").write_text("RETURN 1")
    (tmp_path / "manifest.yaml").write_text(
        "templates:\n  - {id: t, version: 1, file: t.cypher, description: d,"
        " evidence_types: [entity], row_cap: 1, timeout_s: 1,"
        " derived: {q: {from: nope, transform: lucene_phrase}}}\n"
    )
    with pytest.raises(ValueError, match="needs a declared string parameter"):
        TemplateRegistry.load(tmp_path / "manifest.yaml")


def test_derived_phrase_is_a_parameter_not_text() -> None:
    compiled = compile_step(REG, step("entity_resolution", params={"text": 'a" OR b'}))
    assert compiled.cypher_parameters["text_phrase"] == '"a\\" or b"'
    assert compiled.parameters == {"text": 'a" OR b'}  # recorded: the plan's value only


def test_template_hash_is_stable_and_differs_per_variant() -> None:
    spec = REG.get("dependency_neighbourhood")
    hashes = {REG.render(spec, o).template_hash for o in spec.variants()}
    assert len(hashes) == len(list(spec.variants()))
    again = TemplateRegistry.load().render(spec, {"hops": 2})
    assert again.template_hash == REG.render(spec, {"hops": 2}).template_hash
    assert again.template_hash.startswith("sha256:") and len(again.template_hash) == 71


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("payment-api", r"payment\-api"),
        ('a" OR b:* AND (c)', r"a\" or b\:\* and \(c\)"),
        ("NOT secret", "not secret"),
        ("x\\y/z", r"x\\y\/z"),
    ],
)
def test_lucene_literal_escapes_query_syntax(text: str, expected: str) -> None:
    assert lucene_literal(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PaymentApiHighErrrorRate", "paymentapihigherrrorrate~2"),
        ("svc:paymnet-api", "svc~1 paymnet~2 api~1"),
        # Syntax never reaches Lucene: only letters and digits, so no field, wildcard,
        # range or operator (lower-case `and` is a plain term).
        ('payment* OR tenant:globex AND "x" [a TO z]', "payment~2 tenant~2 globex~2 and~1"),
    ],
)
def test_lucene_fuzzy_keeps_only_words(text: str, expected: str) -> None:
    assert lucene_fuzzy(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pay", "pay*"),
        ("svc:Payment", "svc* payment*"),
        # Only letters and digits, each a prefix term of its own: no field, range, operator
        # or wildcard of the text's reaches Lucene.
        ('payment* OR tenant:globex AND "x" [a TO z]', "payment* tenant* globex* and*"),
    ],
)
def test_lucene_prefix_keeps_only_words(text: str, expected: str) -> None:
    assert lucene_prefix(text) == expected


def test_a_fuzzy_search_without_a_word_is_refused() -> None:
    with pytest.raises(TemplateRefused, match="no word of 3 or more"):
        compile_step(REG, step("name_suggestions", "entity", params={"text": "x' OR 1=1 //"}))


def test_lucene_query_without_terms_is_refused() -> None:
    with pytest.raises(TemplateRefused, match="has no terms"):
        compile_step(REG, step("fulltext_search", "document", params={"query": "   "}))


def test_query_plan_refuses_reversed_window_bad_intent_and_max_hops_four() -> None:
    with pytest.raises(ValidationError, match="'from' is after 'to'"):
        QueryPlan.model_validate(
            {"time_scope": {"from": "2026-07-24T00:00:00Z", "to": "2026-07-23T00:00:00Z"}}
        )
    with pytest.raises(ValidationError, match="not a lower_snake_case name"):
        QueryPlan(intents=["MATCH (n) DETACH DELETE n"])
    with pytest.raises(ValidationError, match="less than or equal to 3"):
        QueryPlan(max_hops=4)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        QueryPlan.model_validate({"steps": [], "cypher": "MATCH (n) RETURN n"})
    with pytest.raises(ValidationError, match="should have timezone info"):
        QueryPlan.model_validate({"known_at": "2026-07-23T10:00:00"})


def test_evidence_type_vocabulary_is_one_vocabulary() -> None:
    """The plan's typed vocabulary, the bundle's enum and the gate's list never drift apart."""
    from cypher_templates.plan import EVIDENCE_TYPES
    from graph_schema.kg_types import EvidenceType as BundleEvidenceType
    from investigator.evidence import EVIDENCE_TYPES as GATE_EVIDENCE_TYPES

    assert set(EVIDENCE_TYPES) == {member.value for member in BundleEvidenceType}
    assert GATE_EVIDENCE_TYPES == EVIDENCE_TYPES


# Every version-1 (and version-2) variant's template_hash, as recorded runs know them: sha256
# of the sorted JSON list of [id, version, options, template_hash] (version 2 added no byte to
# version 1, version 3 none to either: they render the predicate they were recorded with).
PINNED_V1_HASHES = "sha256:f0fbbbec597f618a73c149f7d1217f829367c54e436f5664c5ff3f1bb507b36c"
PINNED_V2_HASHES = "sha256:cbff7c9d1de128cc8bb7d23a0476c0beacbb2c41e6344d87b211084457d1611b"
# Variants published after these versions' texts were recorded: no recorded run names them,
# and every version offers them so that a replay re-planning an older run can run them.
LATER_VARIANTS = {("runbooks_for", (("anchor", "runbook"),))}
LATER_TEMPLATES = {
    "name_suggestions",
    "name_prefixes",
    "latest_deployments",
    "owners_of",
    "incidents_at",
    "incidents_in_period",
    "alert_firings_in_period",
    "traces_linked",
    "retractions_in_period",
    "ownership_in_period",
    "ownership_records",
    "owners_of_records",
    "owned_by_team",
    "owned_by_team_records",
    "runbook_version_at",
    "rollouts_under_way",
    "deployments_in_window_tenant",
    "rollouts_under_way_tenant",
    "latest_deployments_tenant",
}


@pytest.mark.parametrize(("version", "pinned"), [(1, PINNED_V1_HASHES), (2, PINNED_V2_HASHES)])
def test_recorded_versions_texts_are_pinned(version: int, pinned: str) -> None:
    rows = [
        [spec.id, spec.version, REG.render(spec, o).options, REG.render(spec, o).template_hash]
        for spec in REG.specs()
        if spec.version == version
        for o in spec.variants()
        if (spec.id, tuple(sorted(o.items()))) not in LATER_VARIANTS
        and spec.id not in LATER_TEMPLATES
    ]
    assert len(rows) == 170
    digest = "sha256:" + hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    assert digest == pinned, f"a version-{version} text changed: recorded runs would not replay"


def test_each_template_has_a_datetime_version_1_and_an_epoch_micros_version_2() -> None:
    for template_id in {s.id for s in REG.specs()}:
        v1, v2, v3 = (REG.get(template_id, v) for v in (1, 2, 3))
        newest = REG.get(template_id)  # a plan without a version takes the newest
        # 4: also when a runbook's file, or an alert's rule, went missing from its import.
        if template_id == "runbooks_for":
            # 5: also why a file the import had could not be read.
            v4 = REG.get(template_id, 4)
            assert newest.version == 5 and newest.unreadable_files and not v4.unreadable_files
            assert v4.missing_files and not v3.missing_files
            assert newest.model_dump(
                exclude={"version", "missing_files", "unreadable_files"}
            ) == v3.model_dump(exclude={"version", "missing_files", "unreadable_files"})
        elif template_id == "entity_resolution":
            # 5: also the rules a runbook is linked to first, with the matches counted; 6 (h39):
            # also a release found by its version alone.
            v4, v5 = REG.get(template_id, 4), REG.get(template_id, 5)
            assert v5.linked_first and not v4.linked_first and not v5.release_versions
            assert newest.version == 6 and newest.release_versions and newest.linked_first
            assert v4.missing_files and not v3.missing_files
            changed = {"version", "missing_files", "linked_first", "release_versions"}
            assert newest.model_dump(exclude=changed) == v3.model_dump(exclude=changed)
        elif template_id == "latest_deployments":
            # 4: also a rollout started by `to` and not finished then (a release in progress).
            assert newest.version == 4 and newest.under_way and not v3.under_way
            assert newest.model_dump(exclude={"version", "under_way"}) == v3.model_dump(
                exclude={"version", "under_way"}
            )
        elif template_id == "deployments_in_window":
            # 4: one order and one limit over both ways to the releases (a cut keeps the oldest).
            assert newest.version == 4 and newest.one_cut and not v3.one_cut
            assert newest.model_dump(exclude={"version", "one_cut"}) == v3.model_dump(
                exclude={"version", "one_cut"}
            )
        elif template_id in ("deployments_in_window_tenant", "latest_deployments_tenant"):
            # 4: the window (the newest by `to`) sought within the tenant on (tenant, time
            # field), no read of every deployment; 5 (the window): each field's seek cut in
            # index order.
            v4 = REG.get(template_id, 4)
            assert v4.time_seeks and not v3.time_seeks and not v4.ordered_window
            assert v4.model_dump(exclude={"version", "time_seeks"}) == v3.model_dump(
                exclude={"version", "time_seeks"}
            )
            if template_id == "deployments_in_window_tenant":
                # 6: each later field sought only up to the cut the earlier fields fill.
                v5 = REG.get(template_id, 5)
                assert v5.ordered_window and not v5.window_ceilings
                assert v5.model_dump(exclude={"version", "ordered_window"}) == v4.model_dump(
                    exclude={"version", "ordered_window"}
                )
                assert newest.version == 6 and newest.ordered_window and newest.window_ceilings
                assert newest.model_dump(exclude={"version", "window_ceilings"}) == v5.model_dump(
                    exclude={"version", "window_ceilings"}
                )
            else:
                assert newest.version == 4
        elif template_id == "version_history":
            # 4: a relationship record's row is its latest-ending copy (a current one first).
            assert newest.version == 4 and newest.latest_copy and not v3.latest_copy
            assert newest.model_dump(exclude={"version", "latest_copy"}) == v3.model_dump(
                exclude={"version", "latest_copy"}
            )
        elif template_id == "fulltext_search":
            # 4: a hit another document's record supersedes (a renamed file) names it; 5: a
            # config key typed also asks the tokens ending with it (`*max_size`).
            v4 = REG.get(template_id, 4)
            assert newest.version == 5 and newest.key_suffixes and not v4.key_suffixes
            assert v4.renamed_to and not v3.renamed_to
            assert newest.model_dump(
                exclude={"version", "renamed_to", "key_suffixes"}
            ) == v3.model_dump(exclude={"version", "renamed_to", "key_suffixes"})
        elif template_id == "dependency_neighbourhood":
            # 4: the row cap counts services reached (DEPENDS_ON) and keeps the latest firings.
            assert newest.version == 4 and newest.ordered_cut and not v3.ordered_cut
            assert newest.model_dump(exclude={"version", "ordered_cut"}) == v3.model_dump(
                exclude={"version", "ordered_cut"}
            )
        elif template_id in ("owned_by_team", "owners_of"):
            # 4: the kind owned, and a runbook version's end (its record holds no longer).
            assert newest.version == 4 and newest.owned_kind and not v3.owned_kind
            assert newest.model_dump(exclude={"version", "owned_kind"}) == v3.model_dump(
                exclude={"version", "owned_kind"}
            )
        else:
            assert newest == v3
        assert (v1.row_times, v2.row_times, v3.row_times) == (
            "datetime",
            "epoch_micros",
            "epoch_micros",
        )
        assert (v1.acl_ceiling, v2.acl_ceiling, v3.acl_ceiling) == (
            "active_node",
            "active_node",
            "latest_record",
        )
        settings = {"version", "row_times", "acl_ceiling", "missing_files", "under_way"}
        assert v1.model_dump(exclude=settings) == v2.model_dump(exclude=settings)
        assert v2.model_dump(exclude=settings) == v3.model_dump(exclude=settings)
        for options in v2.variants():
            old, new = REG.render(v1, options).text, REG.render(v2, options).text
            assert "epochMillis" not in old and "{us:" not in old
            assert new.count(".epochMillis") > old.count(".epochMillis")
    for version, row_times in ((1, "datetime"), (None, "epoch_micros")):
        owners = step("ownership_over_time", "ownership", template_version=version)
        compiled = compile_step(REG, owners.model_copy(update={"params": {"service_id": "s"}}))
        assert compiled.row_times == row_times


def test_version_2_returns_every_declared_context_instant_tagged() -> None:
    """The executor reads `{us: n}` in exactly the keys the context shape declares `Instant`."""
    from cypher_templates.contexts import context_shape, instant_fields

    for spec in REG.specs():
        if spec.version not in (2, 4, 5):
            continue
        instants = instant_fields(context_shape(spec.id))
        if not spec.missing_files:  # runbooks_for 4 and entity_resolution 4 return it, not 2
            instants = [name for name in instants if name != "file_missing_since"]
        if not spec.owned_kind:  # owned_by_team 4 and owners_of 4 return it, not 2
            instants = [name for name in instants if name != "owned_until"]
        for options in spec.variants():
            text = REG.render(spec, options).text
            returned = set(re.findall(r"\b(\w+): CASE WHEN [^|:]*? IS :: ZONED DATETIME", text))
            assert returned == set(instants), spec.ref
            for name in instants:
                assert re.search(rf"\b{name}: CASE WHEN ", text), (spec.ref, name)


def _manifest(tmp_path: Path, entry: str) -> Path:
    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates" / "t.cypher").write_text("RETURN '{{ row_times }}' AS x")
    path = tmp_path / "manifest.yaml"
    path.write_text(
        "templates:\n  - {id: t, file: t.cypher, description: d,"
        f" evidence_types: [entity], row_cap: 1, timeout_s: 1, {entry}}}\n"
    )
    return path


def test_manifest_versions_publish_one_file_at_each_version(tmp_path: Path) -> None:
    reg = TemplateRegistry.load(
        _manifest(tmp_path, "versions: {1: {}, 3: {row_times: epoch_micros}}")
    )
    assert [(s.version, s.row_times) for s in reg.specs()] == [
        (1, "datetime"),
        (3, "epoch_micros"),
    ]
    assert reg.render(reg.get("t", 1), {}).text == "RETURN 'datetime' AS x"
    assert reg.render(reg.get("t"), {}).text == "RETURN 'epoch_micros' AS x"
    for entry, message in [
        ("version: 1, versions: {2: {}}", "either `version` or `versions`"),
        ("versions: {}", "maps each version"),
        ("versions: {1: {row_times: seconds}}", "row_times"),
        ("versions: {1: {colour: red}}", "colour"),
        ("versions: {1: {acl_ceiling: none}}", "acl_ceiling"),
        ("version: 1, options: {acl_ceiling: {enum: [a], default: a}}", "render setting"),
        ("version: 1, options: {row_times: {enum: [a], default: a}}", "render setting"),
    ]:
        with pytest.raises(ValueError, match=message):
            TemplateRegistry.load(_manifest(tmp_path, entry))


def test_a_pinned_registry_defaults_to_the_versions_a_run_recorded(tmp_path: Path) -> None:
    assert REG.pinned({"ownership_over_time": 1}).get("runbooks_for").version == 1  # cap 1
    assert REG.pinned({"ownership_over_time": 1}).get("ownership_over_time").version == 1
    assert REG.pinned({"ownership_over_time": 2}).get("runbooks_for").version == 2
    assert REG.pinned({}).get("runbooks_for").version == 5
    assert REG.pinned({"runbooks_for": 4}).get("runbooks_for").version == 4  # a run before 5
    assert REG.pinned({"owners_of": 3}).get("runbooks_for").version == 3  # a run before 4
    assert REG.pinned({"runbooks_for": 1}).get("runbooks_for", 2).version == 2  # explicit
    assert REG.get("runbooks_for").version == 5  # the registry itself is unchanged
    assert (
        REG.pinned({"runbooks_for": 4, "entity_resolution": 3}).get("entity_resolution").version
        == 3
    )  # a lookup recorded before entity_resolution 4 replays at 3
    reg = TemplateRegistry.load(_manifest(tmp_path, "versions: {1: {}, 3: {}}"))
    assert reg.pinned({"other": 2}).get("t").version == 1  # highest not above 2
    assert reg.pinned({"t": 9}).get("t").version == 3  # unknown: highest not above 9
    assert reg.pinned({"t": 3}).get("t").version == 3
