"""What the runbook card and `investigate --json` show of imported Markdown, on a real Neo4j
(defects seen on GitLab's SRE runbooks and AWS GuardDuty's finding pages, reproduced with
small files this module writes):

- a claim in `investigate --json` carries its lowest evidence trust (`trust`) and the ids of
  its untrusted evidence (`untrusted_evidence_ids`); before, a consumer had to join
  `evidence_ids` to `evidence[]` to learn that a claim rests on untrusted imported text;
- `investigate` names a finding's runbook by its title (`Backdoor:EC2/DemoRelay`), as the
  card does, not by its file name (`backdoor-ec2-demorelay`);
- the card's steps are plain text: `**Stop** the relay` shows no asterisks, code spans keep
  their text as written (`` `systemctl stop demo_relay` ``);
- CommonMark: a ```` ```bash ```` inside an open fence is a line of its code, not its end
  (the rest of the script became headings and text, and the sections after it vanished);
  a paragraph of several lines underlined with `===` or `---` is one heading (it was no
  heading, and the page was titled by the next one);
- a re-import writes a new version of the pages whose reading changed, and only of those.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ACME_CATALOG, import_runbook_folder, wipe

FINDING = """\
Backdoor:EC2/DemoRelay
----------------------

### An EC2 instance relays mail for a host it never talked to.

**Default severity: Medium**

**Remediation recommendations:**

**Stop** the relay with `systemctl stop demo_relay`, then _isolate_ the instance.
"""

CHECKOUT = """\
---
services: [svc:checkout]
---
Checkout latency
is too high
===========

The checkout's p99 latency is above its objective.

Mitigation
----------

1. **Scale** the checkout pods: `kubectl scale deploy/checkout_api --replicas=6`.
2. If it stays high, *page* the SRE team.
"""

QUEUE = """\
# Queue backlog

## Mitigation

```bash
# drain the queue
queuectl drain --all
```bash
## then check nothing is left
queuectl verify
```

## Escalation

Page the queue on-call.
"""

DISK = """\
# Disk full

## Mitigation

Delete old logs.
"""


def _write(folder: Path) -> Path:
    folder.mkdir()
    for name, text in {
        "backdoor-ec2-demorelay.md": FINDING,
        "checkout-latency.md": CHECKOUT,
        "queue-backlog.md": QUEUE,
        "disk-full.md": DISK,
    }.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    return _write(tmp_path / "runbooks")


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke, folder: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, folder)  # untrusted, an imported folder's default
    return driver


def _json(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke(*args, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _read(driver: neo4j.Driver, runbook_id: str) -> list[tuple[int, str, list[str]]]:
    """Every record of `runbook_id`: (version, title, section titles), oldest first."""
    records, _, _ = driver.execute_query(
        "MATCH (r:Runbook {id: $id}) RETURN r.version AS version, r.title AS title, "
        "r.section_titles AS sections ORDER BY r.version",
        id=runbook_id,
    )
    return [(r["version"], r["title"], r["sections"]) for r in records]


def test_claims_in_json_carry_the_trust_of_their_evidence(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    document = _json(
        invoke, "investigate", "Who owns checkout and which runbook applies?",
        "--service", "svc:checkout",
    )  # fmt: skip
    trust = {ev["evidence_id"]: ev["trust"] for ev in document["evidence"]}
    [runbook] = [c for c in document["claims"] if "runbook:checkout-latency" in c["statement"]]
    assert runbook["trust"] == "untrusted"
    assert runbook["untrusted_evidence_ids"] == runbook["evidence_ids"]
    assert all(trust[e] == "untrusted" for e in runbook["evidence_ids"])
    # The owner comes from the catalog (a trusted source): the claim says so.
    [owner] = [c for c in document["claims"] if "team:sre OWNS svc:checkout" in c["statement"]]
    assert owner["trust"] == "trusted"
    assert owner["untrusted_evidence_ids"] == []
    # Additive: the fields a consumer read before are all still there.
    assert {"claim_id", "statement", "epistemic_status", "confidence", "evidence_ids"} <= set(owner)


def test_investigate_names_a_finding_runbook_by_its_title(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    document = _json(invoke, "investigate", "Backdoor:EC2/DemoRelay fired, what do I do?")
    [claim] = [c for c in document["claims"] if "runbook:backdoor-ec2-demorelay" in c["statement"]]
    # Named by its title; found by its words, so its version follows the id.
    assert claim["statement"].startswith(
        "Runbook Backdoor:EC2/DemoRelay (runbook:backdoor-ec2-demorelay, sha256:"
    ), claim["statement"]
    card = _json(invoke, "runbook", "--alert", "Backdoor:EC2/DemoRelay")
    assert card["runbook"]["title"] == "Backdoor:EC2/DemoRelay"


def test_card_steps_are_plain_text_with_code_spans_as_written(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    steps = _json(invoke, "runbook", "--alert", "Backdoor:EC2/DemoRelay")["runbook"]["steps"]
    assert steps == [
        "Remediation recommendations:",
        "Stop the relay with `systemctl stop demo_relay`, then isolate the instance.",
    ]
    card = invoke("runbook", "--service", "svc:checkout", "--subject", "user:oncall")
    assert card.code == 0, card
    assert "1. Scale the checkout pods: `kubectl scale deploy/checkout_api --replicas=6`." in (
        card.out
    )
    assert "2. If it stays high, page the SRE team." in card.out
    assert "**" not in card.out and "*page*" not in card.out


def test_a_fence_closes_only_at_a_bare_fence(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    [(_, title, sections)] = _read(imported, "runbook:queue-backlog")
    assert title == "Queue backlog"
    assert sections == ["Queue backlog", "Mitigation", "Escalation"]
    card = _json(invoke, "runbook", "queue backlog")["runbook"]
    assert card["steps_locator"] == "queue-backlog.md#mitigation"
    assert card["steps"] == [
        "# drain the queue",
        "queuectl drain --all",
        "```bash",
        "## then check nothing is left",
        "queuectl verify",
    ]


def test_a_paragraph_of_several_lines_over_an_underline_is_one_heading(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    [(_, title, sections)] = _read(imported, "runbook:checkout-latency")
    assert title == "Checkout latency is too high"
    assert sections == ["Checkout latency is too high", "Mitigation"]
    card = _json(invoke, "runbook", "--service", "svc:checkout")["runbook"]
    assert card["title"] == "Checkout latency is too high"
    assert card["steps_locator"] == "checkout-latency.md#mitigation"


def test_a_reimport_writes_new_versions_only_of_pages_read_otherwise(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, folder: Path
) -> None:
    from graph_schema.importers.common import ImportOptions
    from graph_schema.importers.markdown_runbooks import import_markdown_runbooks
    from graph_schema.writer import ingest_bundle

    wipe(driver)
    assert invoke("ingest", str(ACME_CATALOG)).code == 0
    # The records an import before this change wrote: the same files, read as it read them.
    earlier = {
        "runbook:queue-backlog": (
            "Queue backlog",
            ["Queue backlog", "Mitigation", "then check nothing is left"],
            ["queue-backlog", "mitigation", "then-check-nothing-is-left"],
        ),
        "runbook:checkout-latency": ("Mitigation", ["Mitigation"], ["mitigation"]),
    }
    result = import_markdown_runbooks(folder, ImportOptions(tenant="acme", acl=["internal"]))
    assert result.bundle is not None and not result.problems, result.problems
    documents = []
    for doc in result.bundle.documents:
        if doc.id in earlier:
            title, sections, anchors = earlier[doc.id]
            path = str(doc.props["path"])
            props = {
                **doc.props,
                "section_titles": sections,
                "section_locators": [f"{path}#{a}" for a in anchors],
            }
            doc = doc.model_copy(update={"title": title, "props": props})
        documents.append(doc)
    result.bundle = result.bundle.model_copy(update={"documents": documents})
    ingest_bundle(driver, result.loaded())

    again = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal",
    )  # fmt: skip
    assert again.code == 0, again
    assert "created 2 node" in again.out + again.err, again
    assert _read(driver, "runbook:queue-backlog")[-1] == (
        2,
        "Queue backlog",
        ["Queue backlog", "Mitigation", "Escalation"],
    )
    assert _read(driver, "runbook:checkout-latency")[-1] == (
        2,
        "Checkout latency is too high",
        ["Checkout latency is too high", "Mitigation"],
    )
    # Pages read alike keep their one record.
    assert [v for v, _, _ in _read(driver, "runbook:disk-full")] == [1]
    assert [v for v, _, _ in _read(driver, "runbook:backdoor-ec2-demorelay")] == [1]
    # And a re-import of what is now read writes nothing.
    third = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal",
    )  # fmt: skip
    assert third.code == 0, third
    assert "nothing written" in third.out, third
