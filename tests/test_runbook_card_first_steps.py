"""The first steps a runbook card shows, on a real Neo4j (defects seen on KubeVirt's runbooks,
reproduced with small files this module writes):

- a `## Mitigation` with no text of its own, only subsections, is read as they are, in order,
  and names them under Cases; before, the card jumped to a later subsection because its title
  had a steps word ("Node Issues Resolution": a `kubectl drain`) and nothing said the others
  existed, and renamed, to the next one ("VM-Level Resolution": a force-delete);
- a Mitigation that only says where to get help ("If you cannot resolve the issue, see the
  following resources:" and links) gives way to the Diagnosis steps; before, it was all the
  card showed;
- a command in a fence inside a list item keeps its indentation (it printed flush left);
- the cut at the card's line limit never ends on a subsection's title with none of its
  lines ("Resolution:" over "... 1 more line", its one step hidden), and a case is "shown"
  only when a step line of it is on the card (it was, for that bare title);
- a Mitigation that only asks someone for help ("Ask in #queue-help or page the queue
  on-call for help.") gives way to the Diagnosis steps as well; one that asks and also does
  something ("Page the on-call and restart the consumers.") stays the steps;
- free text several runbooks cover alike, none fitting, is said to tie, each named; before,
  one was "the closest" and covered "100% of the query" next to "no runbook fits".
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

STUCK = """\
# GuestStuckOnHost

## Meaning

The guest does not come up on its host.

## Mitigation

<!--DS: Open a support case.-->

### Pod issues
- **Restart the launcher pod**:
   ```bash
   $ kubectl delete pod <launcher-pod> -n <namespace>
   ```

### Storage issues
- Check the claim: `kubectl get pvc -n <namespace>`

### {node_title}
- **Drain the node**:
   ```bash
   $ kubectl drain <node> --ignore-daemonsets
   ```

### Guest-Level Resolution
- **Force-delete the instance**:
   ```bash
   $ kubectl delete vmi <name> --force --grace-period=0
   ```
"""

HELP_ONLY = """\
# QueueOperatorDown

## Diagnosis

1. Check the operator pods:
   ```bash
   $ kubectl -n queue get pods -l name=queue-operator
   ```
2. Read the operator's logs for errors.

## Mitigation

<!--DS: If you cannot resolve the issue, open a support case.-->
{root_cause}If you cannot resolve the issue, see the following resources:

- [Queue help](https://example.org/help)
- [#queue Slack channel](https://example.org/slack)
"""

OWN_STEP = """\
# QueueWorkerDown

## Diagnosis

1. List the workers.

## Mitigation

Restart the queue worker deployment.

If you cannot resolve the issue, see the following resources:

- [Queue help](https://example.org/help)
"""

# Two cases, the first's command filling the card to its last line: the second's title
# came next, alone.
CUT_AT_CASE = """\
# NodeDiskFull

## Meaning
The disk of a node is almost full.

## Mitigation

### Check usage
1. Look at the usage:
   ```
   df -h /var
     du -sh /var/log/*
   ```

### Resolution
Drain the node with `kubectl drain node`.
"""

ASK_FOR_HELP = """\
# {name}

## Diagnosis
- Check consumer lag with `kafka-consumer-groups --describe --group worker`.
- Restart stuck consumers.

## Mitigation
{mitigation}
"""

# Every word of "VM stuck in starting state" in each, never two of them side by side, and
# no runbook named by them: none fits, three alike.
APART = """\
# {name}

## Meaning

The VM does not respond. Its launcher is stuck in a loop. Check the state of the node,
then try starting the guest. ({which})
"""


# Mitigations that only ask someone for help, and ones that also do something.
ASKING = {
    "QueueBacklog": "Ask in #queue-help or page the queue on-call for help.",
    "QueueLagging": "- Escalate to the platform team.\n- Reach out to @queue-oncall.",
    "QueueStalled": "Page the on-call and restart the consumers.",
    "QueueFull": "Ask the cluster admin to add a partition.",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("first-steps")
    (root / "GuestStuckOnHost.md").write_text(
        STUCK.format(node_title="Node Issues Resolution"), encoding="utf-8"
    )
    # The same runbook with that subsection renamed: the next steps-worded one was shown.
    (root / "GuestStuckRenamed.md").write_text(
        STUCK.replace("GuestStuckOnHost", "GuestStuckRenamed").format(node_title="Node Issues"),
        encoding="utf-8",
    )
    (root / "QueueOperatorDown.md").write_text(HELP_ONLY.format(root_cause=""), encoding="utf-8")
    (root / "QueueApiDown.md").write_text(
        HELP_ONLY.replace("QueueOperatorDown", "QueueApiDown").format(
            root_cause="Try to identify the root cause and resolve the issue.\n\n"
        ),
        encoding="utf-8",
    )
    (root / "QueueWorkerDown.md").write_text(OWN_STEP, encoding="utf-8")
    (root / "NodeDiskFull.md").write_text(CUT_AT_CASE, encoding="utf-8")
    for name, mitigation in ASKING.items():
        (root / f"{name}.md").write_text(
            ASK_FOR_HELP.format(name=name, mitigation=mitigation), encoding="utf-8"
        )
    for name in ("GuestHangs", "LauncherLoops", "PhaseUnhealthy"):
        (root / f"{name}.md").write_text(APART.format(name=name, which=name), encoding="utf-8")
    return root


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke, folder: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, folder, "--trusted")
    return driver


def _runbook(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)["runbook"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", ["GuestStuckOnHost", "GuestStuckRenamed"])
def test_a_section_made_of_subsections_shows_them_in_order_and_names_them(  # type: ignore[no-untyped-def]
    imported, invoke, name: str
) -> None:
    runbook = _runbook(invoke, "--alert", name)
    assert runbook["steps_locator"] == f"{name}.md#mitigation"
    assert runbook["steps"][:3] == [
        "Pod issues:",
        "- Restart the launcher pod:",
        "   $ kubectl delete pod <launcher-pod> -n <namespace>",
    ]
    # Never the drain or the force-delete of a later subsection as the first steps.
    assert not any("drain" in s or "--force" in s for s in runbook["steps"])
    node = "Node Issues Resolution" if name == "GuestStuckOnHost" else "Node Issues"
    assert [(c["title"], c["shown"]) for c in runbook["section_cases"]] == [
        ("Pod issues", True),
        ("Storage issues", True),
        (node, False),
        ("Guest-Level Resolution", False),
    ]
    assert runbook["section_cases"][3]["locator"] == f"{name}.md#guest-level-resolution"
    assert "has no text of its own, only 4 subsections" in runbook["steps_note"]


def test_the_card_lists_the_subsections_and_keeps_a_list_items_command_indented(  # type: ignore[no-untyped-def]
    imported, invoke
) -> None:
    card = invoke("runbook", "--alert", "GuestStuckOnHost", "--subject", "user:oncall")
    assert card.code == 0, card
    lines = card.out.splitlines()
    # The command under its bullet, indented as in the item (it was flush left).
    at = lines.index("          - Restart the launcher pod:")
    assert lines[at + 1] == "             $ kubectl delete pod <launcher-pod> -n <namespace>"
    start = next(i for i, line in enumerate(lines) if line.startswith("Cases     "))
    cases = lines[start : start + 4]
    assert cases[0].startswith("Cases     Pod issues")
    assert cases[0].endswith("(shown)")
    assert "Guest-Level Resolution" in cases[-1] and not cases[-1].endswith("(shown)")


@pytest.mark.parametrize("name", ["QueueOperatorDown", "QueueApiDown"])
def test_a_mitigation_that_only_sends_for_help_gives_way_to_diagnosis(  # type: ignore[no-untyped-def]
    imported, invoke, name: str
) -> None:
    runbook = _runbook(invoke, "--alert", name)
    assert runbook["steps_locator"] == f"{name}.md#diagnosis"
    assert runbook["steps"] == [
        "1. Check the operator pods:",
        "   $ kubectl -n queue get pods -l name=queue-operator",
        "2. Read the operator's logs for errors.",
    ]
    assert runbook["steps_note"] == (
        "the section Mitigation only says where to get help if the issue is not resolved: "
        "the steps shown are those of Diagnosis"
    )


def test_a_mitigation_with_a_step_of_its_own_stays_the_steps(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    runbook = _runbook(invoke, "--alert", "QueueWorkerDown")
    assert runbook["steps_locator"] == "QueueWorkerDown.md#mitigation"
    assert runbook["steps"][0] == "Restart the queue worker deployment."
    assert runbook["steps_note"] is None


def test_free_text_that_runbooks_cover_alike_without_fitting_says_they_tie(  # type: ignore[no-untyped-def]
    imported, invoke
) -> None:
    card = invoke("runbook", "VM stuck in starting state", "--subject", "user:oncall")
    assert card.code == 0, card
    first = card.out.splitlines()[0]
    assert first.startswith("No runbook: no runbook fits: 3 runbooks tie, each covering 100%")
    for name in ("GuestHangs", "LauncherLoops", "PhaseUnhealthy"):
        assert f"runbook:{name}" in first
    assert "the closest" not in first
    assert first.endswith("add words, or use --alert NAME")


def test_the_cut_never_ends_on_a_case_title_with_none_of_its_lines(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    runbook = _runbook(invoke, "--alert", "NodeDiskFull")
    assert runbook["steps"] == [
        "Check usage:",
        "1. Look at the usage:",
        "   df -h /var",
        "     du -sh /var/log/*",
    ]
    assert [(c["title"], c["shown"]) for c in runbook["section_cases"]] == [
        ("Check usage", True),
        ("Resolution", False),
    ]
    card = invoke("runbook", "--alert", "NodeDiskFull", "--subject", "user:oncall")
    assert card.code == 0, card
    lines = card.out.splitlines()
    at = lines.index("          ... 2 more lines at NodeDiskFull.md#mitigation")
    assert lines[at - 1] == "               du -sh /var/log/*"
    resolution = next(line for line in lines if "NodeDiskFull.md#resolution" in line)
    assert not resolution.endswith("(shown)")


@pytest.mark.parametrize("name", ["QueueBacklog", "QueueLagging"])
def test_a_mitigation_that_only_asks_for_help_gives_way_to_diagnosis(  # type: ignore[no-untyped-def]
    imported, invoke, name: str
) -> None:
    runbook = _runbook(invoke, "--alert", name)
    assert runbook["steps_locator"] == f"{name}.md#diagnosis"
    assert runbook["steps"] == [
        "- Check consumer lag with `kafka-consumer-groups --describe --group worker`.",
        "- Restart stuck consumers.",
    ]
    assert runbook["steps_note"].startswith("the section Mitigation only says where to get help")


@pytest.mark.parametrize("name", ["QueueStalled", "QueueFull"])
def test_a_mitigation_that_asks_and_acts_stays_the_steps(  # type: ignore[no-untyped-def]
    imported, invoke, name: str
) -> None:
    runbook = _runbook(invoke, "--alert", name)
    assert runbook["steps_locator"] == f"{name}.md#mitigation"
    assert runbook["steps"] == [ASKING[name]]
    assert runbook["steps_note"] is None
