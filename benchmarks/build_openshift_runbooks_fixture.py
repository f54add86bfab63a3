"""Rebuild tests/fixtures/openshift-runbooks/ from bare git copies of the public sources.

The fixture is a small, licensed slice of real-world runbooks and the alert rules that link
to them, so runbook retrieval is measured on text nobody here wrote (docs/runbooks.md):

- openshift/runbooks (Apache-2.0): every Markdown file under
  `alerts/openshift-container-storage-operator`, `alerts/cluster-etcd-operator` and
  `alerts/cluster-network-operator` (helpers included, images left out);
- red-hat-storage/ocs-operator (Apache-2.0): the ODF and Ceph PrometheusRule manifests;
- openshift/cluster-etcd-operator (Apache-2.0): the etcd PrometheusRule manifest.

`queries.yaml` is derived, never written by hand:

- `alert_name`: every alertname of the rule files (but one whose `runbook_url` is a template
  choosing between two runbooks); expected is the runbook its
  `runbook_url` names, or null when that file is not in openshift/runbooks (a dangling link);
- `summary`: each distinct `summary` (etcd) or `message` (ODF, the one-line text its alerts
  page with) of an alert whose runbook exists, `{{ $labels.namespace }}` and `managedBy`
  rendered with ODF's defaults and other template expressions dropped;
- `meaning`: the first sentence of each runbook's "Meaning" section (but a sentence that
  several runbooks share word for word);
- `no_fit`: the first "Meaning" sentence of openshift-virtualization runbooks (the same
  repository, a domain the slice does not contain): nothing in the fixture fits them.

Usage (paths are bare git directories, e.g. from a `git clone --bare`):
    .venv/bin/python benchmarks/build_openshift_runbooks_fixture.py \
        --runbooks RUNBOOKS.git --ocs OCS_OPERATOR.git --etcd CLUSTER_ETCD_OPERATOR.git
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "openshift-runbooks"
FOLDERS = (
    "alerts/openshift-container-storage-operator",
    "alerts/cluster-etcd-operator",
    "alerts/cluster-network-operator",
)
NO_FIT_FOLDER = "alerts/openshift-virtualization-operator"
NO_FIT_COUNT = 30
RULE_FILES = (
    ("ocs", "metrics/deploy/prometheus-ocs-rules.yaml", "rules/odf-ocs-rules.yaml"),
    (
        "ocs",
        "internal/controller/storagecluster/prometheus/localcephrules.yaml",
        "rules/odf-ceph-rules.yaml",
    ),
    ("etcd", "manifests/0000_90_etcd-operator_03_prometheusrule.yaml", "rules/etcd-rules.yaml"),
)
_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}", re.DOTALL)
_RENDERED = {"$labels.namespace": "openshift-storage", "$labels.managedBy": "ocs-storagecluster"}


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True
    ).stdout


def _render(text: str) -> str:
    rendered = _TEMPLATE.sub(lambda m: _RENDERED.get(m.group(1), ""), text)
    return " ".join(rendered.split())


def _meaning_sentence(markdown: str) -> str | None:
    match = re.search(r"^##\s+Meaning\s*$(.*?)(?=^#{1,6}\s|\Z)", markdown, re.M | re.S)
    if not match:
        return None
    paragraph = " ".join(match.group(1).split())
    if not paragraph:
        return None
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z`])", paragraph)[0]
    return sentence.strip() or None


def _runbook_id(path: str) -> str:
    return "runbook:" + Path(path).stem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runbooks", type=Path, required=True)
    parser.add_argument("--ocs", type=Path, required=True)
    parser.add_argument("--etcd", type=Path, required=True)
    args = parser.parse_args()
    repos = {"runbooks": args.runbooks, "ocs": args.ocs, "etcd": args.etcd}
    commits = {name: _git(path, "rev-parse", "HEAD").strip() for name, path in repos.items()}
    files = [
        line
        for folder in FOLDERS
        for line in _git(args.runbooks, "ls-tree", "-r", "--name-only", "HEAD", folder).split()
        if line.endswith(".md")
    ]
    present = set(files)
    for path in files:
        target = OUT / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_git(args.runbooks, "show", f"HEAD:{path}"))
    (OUT / "LICENSE").write_text(_git(args.runbooks, "show", "HEAD:LICENSE"))

    queries: list[dict[str, str | None]] = []
    seen_names: set[str] = set()
    seen_summaries: set[str] = set()
    for repo, source, target_name in RULE_FILES:
        text = _git(repos[repo], "show", f"HEAD:{source}")
        target = OUT / target_name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        for group in yaml.safe_load(text)["spec"]["groups"]:
            for rule in group.get("rules") or []:
                name = rule.get("alert")
                if not name:
                    continue
                annotations = rule.get("annotations") or {}
                url = str(annotations.get("runbook_url") or "")
                if "{{" in url:
                    continue  # a templated URL names two runbooks: no single right answer
                path = url.split("/blob/master/", 1)[1] if "/blob/master/" in url else ""
                expected = _runbook_id(path) if path in present else None
                if name not in seen_names:
                    seen_names.add(name)
                    queries.append({"kind": "alert_name", "text": name, "expected": expected})
                summary = annotations.get("summary") or annotations.get("message")
                if expected and summary:
                    summary = _render(str(summary))
                    if summary not in seen_summaries:
                        seen_summaries.add(summary)
                        queries.append({"kind": "summary", "text": summary, "expected": expected})
    meanings = {
        path: _meaning_sentence((OUT / path).read_text())
        for path in files
        if "/helpers/" not in path
    }
    shared = Counter(s for s in meanings.values() if s)
    for path, sentence in meanings.items():
        # A sentence several runbooks open with identically has no single right answer.
        if sentence and shared[sentence] == 1:
            queries.append({"kind": "meaning", "text": sentence, "expected": _runbook_id(path)})
    no_fit = sorted(
        line
        for line in _git(
            args.runbooks, "ls-tree", "-r", "--name-only", "HEAD", NO_FIT_FOLDER
        ).split()
        if line.endswith(".md")
    )[:NO_FIT_COUNT]
    for path in no_fit:
        sentence = _meaning_sentence(_git(args.runbooks, "show", f"HEAD:{path}"))
        if sentence:
            queries.append({"kind": "no_fit", "text": sentence, "expected": None})
    header = {
        "sources": {
            "openshift/runbooks": commits["runbooks"],
            "red-hat-storage/ocs-operator": commits["ocs"],
            "openshift/cluster-etcd-operator": commits["etcd"],
        },
        "queries": queries,
    }
    (OUT / "queries.yaml").write_text(
        "# Generated by benchmarks/build_openshift_runbooks_fixture.py; do not edit.\n"
        + yaml.safe_dump(header, sort_keys=False, width=100, allow_unicode=True)
    )
    print(f"{len(files)} runbooks, {len(queries)} queries -> {OUT}")


if __name__ == "__main__":
    main()
