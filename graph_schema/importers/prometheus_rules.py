"""Import Prometheus rule files: every alerting rule becomes an `Alert` node.

Format (the public one, as read by Prometheus and the prometheus-operator):

```yaml
groups:
  - name: kubernetes-apps
    interval: 1m
    rules:
      - alert: KubePodCrashLooping
        expr: kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff"} >= 1
        for: 15m
        labels: {severity: warning}
        annotations:
          summary: Pod is crash looping.
          runbook_url: https://runbooks.example.com/runbooks/kubernetes/kubepodcrashlooping
      - record: job:up:sum          # recording rules are skipped (and counted)
        expr: sum by (job) (up)
```

A `PrometheusRule` custom resource (`spec.groups`) is read too. Each alert keeps `expr`,
`for` (as `for_duration`), `keep_firing_for`, its group and file, `severity` and `summary`
(or, when it has none, the older `message` annotation) promoted from labels/annotations,
and the full `labels` / `annotations` maps as sorted JSON strings (`labels_json`,
`annotations_json`), because Neo4j properties cannot be maps.
The id is `alert:<alertname>`; an alertname defined more than once gets
`alert:<alertname>@<severity>` (or `@<n>` when severities repeat or one is no plain word),
all with the same name.
An alert's name may be any label value (Prometheus): one with spaces or punctuation
("Database backup failed") keeps it as its name and has the id `alert:Database-backup-failed`
(`alert_id_name`); empty names, control characters and names without a letter or digit are
refused. promtool unit-test files (`rule_files:` + `tests:`) beside the rules are skipped,
in one counted line.

`runbook_url` links the alert to the runbook it points at (an `APPLIES_TO` edge from the
runbook): the URL's path is matched, longest suffix first, against the runbooks' ids, names
and file paths in the tenant's KG. A URL that matches nothing is listed in
`ImportResult.unresolved` — the alert is still imported, the link is not invented — and
`ImportResult.hints` says what name the page would need (`url_link_hint`). A rule with no
`runbook_url` is linked by its `runbook`, `playbook` or `documentation` annotation (the Ceph
mixin's), the first that is a single word; the alert's `runbook_url` property is then that
link and `runbook_url_annotation` names the key, and the import's lines name it too. With
none of these, the same keys under `labels` are read (GitLab's cause alerts: key
`labels.runbook`). A link templated on labels (`docs/{{ $labels.type }}/README.md`) is filled
from the rule's own labels when they set every variable; else it is not linked, and one
`unresolved:` line per distinct template counts the rules naming it. Recording rules are one
counted `skipped:` line. An alert name with `_` gets that name without `_` as an alias
(`--alert postgresql-connections-too-high` finds `PostgreSQL_ConnectionsTooHigh`).

Each rule's `source_version` is the file's; on a re-import, a rule that did not change keeps
its current record's (`rule_versions.py`, applied by `dispatch.import_source`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from graph_schema.bundle import (
    Bundle,
    BundleProblem,
    EdgeSpec,
    NodeSpec,
    local_files,
    path_problem,
)
from graph_schema.importers.common import (
    ImportOptions,
    default_source_id,
    import_source_spec,
    listed_names,
    validation_text,
)
from graph_schema.importers.link_targets import LinkIndex, LinkTarget, url_link_hint
from graph_schema.importers.markdown_sections import load_yaml
from graph_schema.importers.result import ImportResult, LinkStatement, UnresolvedLink
from graph_schema.importers.source_version import file_source_version
from graph_schema.kg_types import NodeLabel, RelType
from graph_schema.local_files import InputTooLarge, read_local_file

RULE_SUFFIXES = (".yml", ".yaml")
# Prometheus' metric/label name rule, which most alert names follow; an alert's name may be
# any label value ("Database backup failed"), whose id is then `alert_id_name`'s.
ALERT_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
# What an id's name part keeps of an alert's name (metric-style characters and `-`); any other
# run becomes `-`: never `@` (the suffix of one of several rules of a name), `#`, `/` or `.`.
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_:-]+")
# Room left in an id (MAX_ID_LENGTH 200) for `alert:` and a suffix (`@critical`, `@2`).
MAX_ALERT_NAME = 150
# A severity that may name a rule's id (`@critical`, `@P1`): one plain word, as severity labels
# are. Any other value (a sentence, an instruction to an agent) would be read wherever the id
# is, outside the untrusted fence: such a rule is told apart by its position (`@2`).
_ID_SEVERITY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,19}")
MAX_FILE_BYTES = 5_000_000
# How to link an unresolved runbook_url, said for the first few (one page's rules share one).
_HINTS = 3
# Annotations other mixins put the runbook link in (Ceph's: `documentation`), tried in this
# order when a rule has no `runbook_url`; a value with whitespace is prose, not a link.
LINK_ANNOTATIONS = ("runbook", "playbook", "documentation")


class _Rule:
    """One alerting rule as read from a file."""

    def __init__(self, origin: Path, rel: str, group: str, raw: dict[str, Any], version: str):
        self.origin = origin
        self.rel = rel
        self.group = group
        self.name = str(raw["alert"])
        self.expr = str(raw["expr"])
        self.for_duration = raw.get("for")
        self.keep_firing_for = raw.get("keep_firing_for")
        self.labels = {str(k): str(v) for k, v in (raw.get("labels") or {}).items()}
        self.annotations = {str(k): str(v) for k, v in (raw.get("annotations") or {}).items()}
        self.source_version = version
        self.id = f"alert:{alert_id_name(self.name)}"

    def runbook_link(self) -> tuple[str, str] | None:
        """The key that links the rule's runbook and its URL: `runbook_url`, else the first
        of LINK_ANNOTATIONS whose value is one word (a URL or path), else the same under
        `labels` (GitLab's generated cause alerts: key `labels.runbook`); None if none. A
        templated value (`docs/{{ $labels.type }}/README.md`) is filled from the rule's own
        labels when they set every variable; else it is `templated_link`'s, not a link."""
        url = self.annotations.get("runbook_url")
        if url and not_a_link(url) is None:
            return "runbook_url", url  # as written, as it always was read and stored
        for where, values in (("", self.annotations), ("labels.", self.labels)):
            for key in LINK_ANNOTATIONS:
                value = _filled(values.get(key, "").strip(), self.labels)
                if value and len(value.split()) == 1 and "{{" not in value:
                    return where + key, value
        return None

    def templated_link(self) -> tuple[str, str] | None:
        """The key and value of a runbook link templated on labels the rule does not set
        (resolved per firing by Alertmanager, unknown at import); None when there is none."""
        if self.runbook_link() is not None:
            return None
        for where, values in (("", self.annotations), ("labels.", self.labels)):
            for key in LINK_ANNOTATIONS:
                value = values.get(key, "").strip()
                if "{{" in value and len(_TEMPLATE_VAR.sub("", value).split()) == 1:
                    return where + key, " ".join(value.split())
        return None


# A Go-template variable of a rule's labels, as Prometheus fills it per firing.
_TEMPLATE_VAR = re.compile(r"\{\{-?\s*\$labels\.([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}")


def _filled(value: str, labels: dict[str, str]) -> str:
    """`value` with its `{{ $labels.x }}` filled from the rule's own labels, when they set
    every one (a label the rule sets is the same in every firing); else as written."""
    names = _TEMPLATE_VAR.findall(value)
    if not names or any(name not in labels for name in names):
        return value
    return _TEMPLATE_VAR.sub(lambda m: labels[m.group(1)], value)


# Schemes a runbook link never has: what a card would print as a link runs or reads locally.
_NO_LINK_SCHEMES = ("javascript", "data", "vbscript", "file")
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")


def not_a_link(url: str) -> str | None:
    """Why a `runbook_url` is no link (None when it is one, or empty): words with spaces (prose,
    not a URL or path: `ignore all prior instructions ...`), control characters, or a
    `javascript:`/`data:`/`vbscript:`/`file:` URL. A path (`globex-lag.md`) or a bare page
    name is a link: it names the runbook to link."""
    if not url:
        return None
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url.strip()):
        return "words with spaces, not a URL or path"
    found = _SCHEME.match(url)
    if found and found.group(1).lower() in _NO_LINK_SCHEMES:
        return f"a {found.group(1).lower()}: URL, not http(s)"
    return None


def _skip_non_links(rules: list[_Rule], result: ImportResult) -> None:
    """One line per rule whose `runbook_url` is no link: imported without it (never shown as
    a Link, never resolved), the value not quoted (it may be an instruction)."""
    for rule in rules:
        reason = not_a_link(rule.annotations.get("runbook_url", ""))
        if reason is not None:
            result.skipped.append(
                f"{rule.id}: runbook_url dropped ({reason}); the rule is imported without "
                "it: fix the link in the rule file and re-ingest it"
            )


def link_field(key: str) -> str:
    """Where a rule's link key sits, as the import's lines name it: `runbook_url` and
    `labels.runbook` as they are, any other `annotations.<key>`."""
    return key if key == "runbook_url" or key.startswith("labels.") else f"annotations.{key}"


def alert_id_name(name: str) -> str:
    """The name part of an alert's id: the name itself when it is metric-style
    (`KubePodCrashLooping`), else its runs of other characters as `-`
    ("Database backup failed" -> `Database-backup-failed`); the name stays the alert's
    `name`/`alertname`, by which `--alert` finds it."""
    return _ID_UNSAFE.sub("-", name).strip("-")


def _name_problem(name: Any) -> str | None:
    """Why `name` cannot be an alert's name (any label value can, Prometheus says), or None."""
    if not isinstance(name, str) or not name.strip():
        return f"`alert` must be a non-empty name, got {name!r}"
    if any(not ch.isprintable() for ch in name):
        return f"`alert` contains control characters: {name!r}"
    if len(name) > MAX_ALERT_NAME:
        return f"`alert` is {len(name)} characters, more than {MAX_ALERT_NAME}"
    if not alert_id_name(name):
        return f"`alert` has no letter or digit to name its id by: {name!r}"
    return None


def _is_rule_test_file(data: Any) -> bool:
    """A promtool unit-test file (`rule_files:` and `tests:`, `promtool test rules x_tests.yaml`),
    kept beside the rules it tests: not rules, skipped."""
    return isinstance(data, dict) and "groups" not in data and {"rule_files", "tests"} <= set(data)


def rule_files(root: Path) -> tuple[list[Path], list[BundleProblem]]:
    """The rule files at `root`: the file itself, or a folder's .yml/.yaml files (hidden ones
    skipped), sorted; and the links, FIFOs, sockets and devices among them (refused, see
    `local_files`)."""
    return local_files(root, RULE_SUFFIXES, skip_hidden=True)


def _groups_of(data: Any) -> Any:
    if isinstance(data, dict) and "groups" not in data and isinstance(data.get("spec"), dict):
        return data["spec"].get("groups")  # a PrometheusRule custom resource
    return data.get("groups") if isinstance(data, dict) else None


def _check_map(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"{what} must be a mapping"
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(item, dict | list):
            return f"{what} must map names to scalar values"
    return None


def _parse_file(
    path: Path, root: Path, result: ImportResult, tests: list[str], recording: list[str]
) -> list[_Rule]:
    origin = str(path)
    rel = path.name if root.is_file() else path.relative_to(root).as_posix()

    def problem(element: str, reason: str) -> None:
        result.problems.append(BundleProblem(origin=origin, element=element, reason=reason))

    try:
        data_bytes = read_local_file(path, MAX_FILE_BYTES)
    except InputTooLarge:
        problem("file", f"larger than {MAX_FILE_BYTES} bytes")
        return []
    except OSError as exc:
        problem("file", f"unreadable: {exc}")
        return []
    try:
        data = load_yaml(data_bytes.decode("utf-8"))
    except UnicodeDecodeError:
        problem("file", "not UTF-8 text")
        return []
    except yaml.YAMLError as exc:
        problem("file", "not parseable YAML: " + " ".join(str(exc).split()))
        return []
    if _is_rule_test_file(data):
        tests.append(rel)
        return []
    groups = _groups_of(data)
    if not isinstance(groups, list):
        problem("file", "not a Prometheus rule file (no `groups:` list)")
        return []
    version = file_source_version(path, data_bytes)
    rules: list[_Rule] = []
    for g_index, group in enumerate(groups):
        if not isinstance(group, dict) or not isinstance(group.get("name"), str):
            problem(f"groups[{g_index}]", "a group needs a `name` and `rules`")
            continue
        group_name = group["name"]
        raw_rules = group.get("rules") or []
        if not isinstance(raw_rules, list):
            problem(f"group {group_name}", "`rules` must be a list")
            continue
        for r_index, raw in enumerate(raw_rules):
            element = f"group {group_name} rules[{r_index}]"
            if not isinstance(raw, dict):
                problem(element, "a rule must be a mapping")
                continue
            if "record" in raw and "alert" not in raw:
                recording.append(str(raw["record"]))
                continue
            name = raw.get("alert")
            reason = _name_problem(name)
            if reason is not None:
                problem(element, reason)
                continue
            if not isinstance(raw.get("expr"), str | int | float) or not str(raw["expr"]).strip():
                problem(f"{element} {name}", "`expr` is required")
                continue
            for field in ("labels", "annotations"):
                reason = _check_map(raw.get(field), f"`{field}`")
                if reason:
                    problem(f"{element} {name}", reason)
                    break
            else:
                rules.append(_Rule(path, rel, group_name, raw, version))
    return rules


def _skip_tests(tests: list[str], result: ImportResult) -> None:
    """One counted line for the promtool test files skipped (one beside each rule file)."""
    if not tests:
        return
    s = "s" if len(tests) > 1 else ""
    result.skipped.append(f"{len(tests)} promtool test file{s}, not rules: {listed_names(tests)}")


def _skip_recording(recording: list[str], result: ImportResult) -> None:
    """One counted line for the recording rules skipped (GitLab's files hold 297: one line
    each buried the lines that matter), naming the first few series they record."""
    if not recording:
        return
    series = list(dict.fromkeys(recording))
    s = "s" if len(recording) > 1 else ""
    result.skipped.append(
        f"{len(recording)} recording rule{s}, not alerts (no runbook applies): "
        f"{listed_names(series)}" + (f" ({len(series)} series)" if len(series) > 1 else "")
    )


def _assign_ids(rules: list[_Rule]) -> None:
    # By id, not name: two names may share one (`Backup failed`, `Backup-failed`).
    counts = Counter(rule.id for rule in rules)
    for base, count in counts.items():
        if count == 1:
            continue
        same = [rule for rule in rules if rule.id == base]
        severities = Counter(rule.labels.get("severity", "") for rule in same)
        for position, rule in enumerate(same, start=1):
            severity = rule.labels.get("severity", "")
            plain = _ID_SEVERITY.fullmatch(severity.strip()) is not None
            suffix = severity.strip() if plain and severities[severity] == 1 else str(position)
            rule.id = f"{base}@{suffix}"


def _alert_node(rule: _Rule, options: ImportOptions, source_id: str) -> NodeSpec:
    props: dict[str, Any] = {
        "alertname": rule.name,
        "expr": rule.expr,
        "group": rule.group,
        "rule_file": rule.rel,
        "labels_json": json.dumps(rule.labels, sort_keys=True),
        "annotations_json": json.dumps(rule.annotations, sort_keys=True),
    }
    if rule.for_duration is not None:
        props["for_duration"] = str(rule.for_duration)
    if rule.keep_firing_for is not None:
        props["keep_firing_for"] = str(rule.keep_firing_for)
    for key, field in (("severity", "severity"),):
        if key in rule.labels:
            props[field] = rule.labels[key]
    for key in ("summary", "description", "runbook_url"):
        if key in rule.annotations:
            props[key] = rule.annotations[key]
    if not_a_link(str(props.get("runbook_url", ""))) is not None:
        # Prose or a script where a link belongs: dropped, said in the import's lines
        # (_skip_non_links); the annotation stays in annotations_json as written.
        del props["runbook_url"]
    link = rule.runbook_link() or rule.templated_link()
    if link is not None and link[0] != "runbook_url":
        # Another annotation's link, where cards look for it (its #fragment picks the
        # section), and which annotation it was.
        props["runbook_url"] = link[1]
        props["runbook_url_annotation"] = link[0]
    if "_" in rule.name.strip("_") and (joined := rule.name.replace("_", "")):
        # So `--alert postgresql-connections-too-high`, joined as `PostgresqlConnectionsTooHigh`
        # (names resolve in any case), finds `PostgreSQL_ConnectionsTooHigh`.
        props["aliases"] = [joined]
    # `message` is the older name of the one-line text an alert pages with (ODF, early
    # kube-prometheus): searchable as the summary when there is none.
    if "summary" not in props and isinstance(rule.annotations.get("message"), str):
        props["summary"] = rule.annotations["message"]
    return NodeSpec.model_validate(
        {
            "id": rule.id,
            "label": NodeLabel.ALERT.value,
            "name": rule.name,
            "acl": options.acl,
            "source_id": source_id,
            "source_version": rule.source_version,
            "method": "prometheus-rules",
            "props": props,
        }
    )


def _templated_line(key: str, value: str, ids: list[str]) -> str:
    """One line for the rules naming one templated runbook link, none of which is linked."""
    variables = ", ".join(dict.fromkeys(_TEMPLATE_VAR.findall(value))) or "its variables"
    rules = "1 rule names" if len(ids) == 1 else f"{len(ids)} rules name"
    return (
        f"{rules} a templated runbook link ({link_field(key)} {value!r}, e.g. "
        f"{ids[0]}): not linked (the alert's firing sets {variables}, the rule's own "
        "labels do not)"
    )


def import_prometheus_rules(
    root: Path | str, options: ImportOptions, known: Iterable[LinkTarget] = ()
) -> ImportResult:
    """Parse the Prometheus rule file(s) at `root` into a bundle for `options.tenant`.

    `known` are link targets already in the tenant's KG (see `load_link_targets`); runbook
    URLs are resolved against its runbooks. Fatal problems are in `result.problems` and
    `result.bundle` is then None; unresolved runbook links are in `result.unresolved`.
    """
    path = Path(root)
    result = ImportResult(origin=str(path), source_type="prometheus_rules")
    refused = path_problem(path)
    if refused is not None:
        result.problems.append(refused)
        return result
    files, not_read = rule_files(path)
    if not_read:
        result.problems.extend(not_read)
        return result
    if not files:
        result.problems.append(
            BundleProblem(origin=str(path), element="path", reason="no .yml or .yaml rule files")
        )
        return result
    rules: list[_Rule] = []
    tests: list[str] = []
    recording: list[str] = []
    for file in files:
        rules.extend(_parse_file(file, path, result, tests, recording))
    _skip_tests(tests, result)
    _skip_recording(recording, result)
    if not rules and not result.problems:
        result.problems.append(
            BundleProblem(origin=str(path), element="path", reason="no alerting rules")
        )
    if result.problems:
        return result
    _assign_ids(rules)
    _skip_non_links(rules, result)
    source_id = options.source_id or default_source_id("prometheus", path)
    known = list(known)
    index = LinkIndex(known)
    # Runbook versions a newer one supersedes: a linked: line counts them, not lists them.
    superseded = {t.id for t in known if t.superseded_by}
    nodes: list[NodeSpec] = []
    edges: list[EdgeSpec] = []
    # Templated links (key, value as written) -> the rules naming them: one line each.
    templates: dict[tuple[str, str], list[str]] = {}
    try:
        for rule in rules:
            nodes.append(_alert_node(rule, options, source_id))
            link = rule.runbook_link()
            if link is None:
                if (templated := rule.templated_link()) is not None:
                    templates.setdefault(templated, []).append(rule.id)
                continue
            key, url = link
            runbooks = index.resolve_url(NodeLabel.RUNBOOK, url)
            if not runbooks:
                result.unresolved.append(
                    UnresolvedLink(
                        origin=str(rule.origin),
                        element=rule.id,
                        field=link_field(key),
                        target=url,
                        reason="no runbook in the tenant has that path or name",
                    )
                )
                hint = url_link_hint(url, key)
                if hint not in result.hints and len(result.hints) < _HINTS:
                    result.hints.append(hint)
                continue
            result.linked.append(
                LinkStatement(
                    runbooks=tuple(runbooks),
                    targets=(rule.id,),
                    via=link_field(key),
                    superseded=tuple(r for r in runbooks if r in superseded),
                )
            )
            for runbook in runbooks:
                edges.append(
                    EdgeSpec.model_validate(
                        {
                            "type": RelType.APPLIES_TO.value,
                            "from": runbook,
                            "to": rule.id,
                            "acl": options.acl,
                            "source_id": source_id,
                            "source_version": rule.source_version,
                            "method": "prometheus-rules",
                        }
                    )
                )
        result.templated = [
            _templated_line(key, value, ids) for (key, value), ids in templates.items()
        ]
        result.source = import_source_spec(options, source_id, "prometheus_rules")
        result.bundle = Bundle(tenant=options.tenant, nodes=nodes, edges=edges)
    except ValidationError as exc:
        result.problems.append(
            BundleProblem(origin=str(path), element="import", reason=validation_text(exc))
        )
    return result
