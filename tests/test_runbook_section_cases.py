"""The card of a section that splits into cases, names an error id, only says it is like
another, or is cut at the step limit, on a real Neo4j, with the words an on-call types.

Found on Mimir's runbooks page (our own sentences below, in its shape): a read-latency page
got the write-path steps (the first subsection with a steps label, the sentence saying to
choose dropped); an error id inside a log line found no section; "This alert is like X but
..." showed one line and no steps; a card cut at five lines gave no sign that more follows.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, runbook_json

PAGE = """---
title: Queue runbooks
---

# Queue runbooks

## Alerts

### QueueLatencyHigh

This alert fires when a queue route is slow for ten minutes.

The alert message names the job and the route. Establish if it is about publishing or
delivery from the job, then follow that case below.

#### Publish Latency

How to **investigate**:

- Open the `Queue / Publish` dashboard.
- Check the `broker-ingest` pods' CPU.

#### Delivery Latency

Slow deliveries usually come from a consumer group that fell behind.

How to **investigate**:

- Open the `Queue / Delivery` dashboard.
- Check the `delivery-worker` pods for throttling.

### QueueConsumerStalled

How to **investigate**:

- Read the `delivery-worker` logs for the partition that stopped.

### QueueConsumerStalledOnReplay

This alert is like [`QueueConsumerStalled`](#QueueConsumerStalled) but it fires while a
replay runs.

### QueueMirrorStalled

This alert is like [the broker's own runbook](https://broker.example.com/runbooks#stalled)
but for the mirror.

### QueueDiskFilling

How to **fix** it:

1. Find the topic that grows fastest on the `Queue / Disk` dashboard.
2. Lower that topic's retention to six hours.
3. Delete the segments older than the retention.
4. Check that the disk usage drops within ten minutes.
5. If it does not, add a volume to the broker.
6. Open a ticket to review the topic's producers.
7. Write the incident note.

## Errors

### err-queue-message-too-large

The broker refuses a message bigger than its limit.

How to **fix** it:

- Split the batch on the producer, or raise `max_message_bytes` for the topic.

### err-queue-offset-out-of-range

A consumer asked for an offset the broker has deleted.
"""

RULES = """groups:
- name: queue
  rules:
  - alert: QueueLatencyHigh
    expr: queue_latency_seconds > 2.5
    annotations:
      message: |
        {{ $labels.job }} {{ $labels.route }} is experiencing {{ printf "%.2f" $value }}s
        99th percentile latency.
      runbook_url: https://docs.example.com/queue/latest/queue-runbooks/#queuelatencyhigh
"""

LOCATOR = "queue-runbooks/_index.md"


@pytest.fixture()
def queue_page(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "docs" / "queue-runbooks"
    folder.mkdir(parents=True)
    (folder / "_index.md").write_text(PAGE, encoding="utf-8")
    import_runbook_folder(driver, invoke, tmp_path / "docs", "--trusted")
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    result = invoke(
        "ingest", str(tmp_path / "rules.yaml"), "--format", "prometheus-rules",
        "--tenant", "acme", "--acl", "internal",
    )  # fmt: skip
    assert result.code == 0, result


def _card(invoke, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, "--subject", "user:oncall")
    assert result.code == 0, result
    return result.out  # type: ignore[no-any-return]


def _cases(runbook: dict) -> list[tuple[str, str, bool]]:  # type: ignore[type-arg]
    return [(c["title"], c["locator"], c["shown"]) for c in runbook["section_cases"]]


def test_an_alert_whose_section_splits_into_cases_names_them_and_picks_none(  # type: ignore[no-untyped-def]
    queue_page: None, invoke
) -> None:
    # Before: the Publish Latency steps, for a slow delivery as well, and no word of it.
    runbook = runbook_json(invoke, "--alert", "QueueLatencyHigh")["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#queuelatencyhigh"
    assert runbook["steps"] == [
        "This alert fires when a queue route is slow for ten minutes.",
        "The alert message names the job and the route. Establish if it is about publishing "
        "or delivery from the job, then follow that case below.",
    ]
    assert _cases(runbook) == [
        ("Publish Latency", f"{LOCATOR}#publish-latency", False),
        ("Delivery Latency", f"{LOCATOR}#delivery-latency", False),
    ]
    assert "the words given name none" in runbook["steps_note"]
    card = _card(invoke, "--alert", "QueueLatencyHigh")
    assert (
        f"Cases     Publish Latency   {LOCATOR}#publish-latency\n"
        f"          Delivery Latency  {LOCATOR}#delivery-latency\n"
    ) in card
    assert "Queue / Publish" not in card


@pytest.mark.parametrize(
    "text",
    [
        # The alert's own message as paged: the job names the case.
        "queue-prod/delivery-worker consume_batch is experiencing 3.21s 99th percentile latency.",
        # The alert's name and a word of the case's title.
        "QueueLatencyHigh delivery latency",
    ],
)
def test_the_words_typed_choose_the_case_they_name(  # type: ignore[no-untyped-def]
    queue_page: None, invoke, text: str
) -> None:
    runbook = runbook_json(invoke, text)["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#delivery-latency"
    assert runbook["steps"] == [
        "Delivery Latency:",
        "How to investigate:",
        "- Open the `Queue / Delivery` dashboard.",
        "- Check the `delivery-worker` pods for throttling.",
    ]
    assert _cases(runbook) == [
        ("Publish Latency", f"{LOCATOR}#publish-latency", False),
        ("Delivery Latency", f"{LOCATOR}#delivery-latency", True),
    ]
    assert "Delivery Latency, whose steps are shown" in runbook["steps_note"]


def test_words_naming_two_cases_choose_none(  # type: ignore[no-untyped-def]
    queue_page: None, invoke
) -> None:
    runbook = runbook_json(invoke, "QueueLatencyHigh publish and delivery latency")["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#queuelatencyhigh"
    assert [shown for _, _, shown in _cases(runbook)] == [False, False]


@pytest.mark.parametrize(
    "text",
    [
        'level=error msg="produce failed" err="message of 2 MB refused '
        '(err-queue-message-too-large)" topic=orders',
        "what do I do about err-queue-message-too-large",
    ],
)
def test_an_error_id_inside_a_line_selects_the_section_it_heads(  # type: ignore[no-untyped-def]
    queue_page: None, invoke, text: str
) -> None:
    # Before: no runbook fitted the log line, and the question showed the page's opening.
    doc = runbook_json(invoke, text)
    runbook = doc["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#err-queue-message-too-large"
    assert runbook["steps"] == [
        "How to fix it:",
        "- Split the batch on the producer, or raise `max_message_bytes` for the topic.",
    ]
    assert doc["note"] == (
        "'err-queue-message-too-large' in the text heads a section of runbook:queue-runbooks: "
        "that section is shown (the heading is the only tie)"
    )
    # A subject who may not read the page gets nothing of it.
    hidden = runbook_json(invoke, text, subject="user:nolabel")
    assert hidden["runbook"] is None
    assert "err-queue-message-too-large" not in json.dumps(hidden["text_matches"])


def test_the_closest_sections_include_those_an_error_id_heads(  # type: ignore[no-untyped-def]
    queue_page: None, invoke
) -> None:
    # The words of an error id's heading, all of them: that section (a page of sections per
    # alert or per code lends no section's steps to another, and chooses among both).
    runbook = runbook_json(invoke, "queue offset out of range")["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#err-queue-offset-out-of-range"
    runbook = runbook_json(invoke, "consumer offset deleted")["runbook"]
    assert runbook["steps_locator"] is None
    note = runbook["steps_note"]
    # Nearest first, and how to ask for either kind of section.
    assert "closest sections: err-queue-offset-out-of-range, " in note, note
    assert note.endswith("(--alert NAME or --error-code CODE shows one)"), note


def test_a_section_like_another_shows_its_steps_and_says_so(  # type: ignore[no-untyped-def]
    queue_page: None, invoke
) -> None:
    # Before: the one sentence, and no steps.
    runbook = runbook_json(invoke, "--alert", "QueueConsumerStalledOnReplay")["runbook"]
    assert runbook["steps_locator"] == f"{LOCATOR}#queueconsumerstalled"
    assert runbook["steps"] == [
        "How to investigate:",
        "- Read the `delivery-worker` logs for the partition that stopped.",
    ]
    assert runbook["steps_note"] == (
        "the section QueueConsumerStalledOnReplay says it is like QueueConsumerStalled "
        "('This alert is like [`QueueConsumerStalled`](#QueueConsumerStalled) but it fires "
        "while a replay runs.'): the steps shown are those of QueueConsumerStalled"
    )
    # A link out of the file is not followed: the section's own line, as written.
    mirror = runbook_json(invoke, "--alert", "QueueMirrorStalled")["runbook"]
    assert mirror["steps_locator"] == f"{LOCATOR}#queuemirrorstalled"
    assert mirror["steps_note"] is None
    assert mirror["steps"][0].startswith("This alert is like [the broker's own runbook]")


def test_a_card_cut_at_the_step_limit_says_how_much_more_and_where(  # type: ignore[no-untyped-def]
    queue_page: None, invoke
) -> None:
    runbook = runbook_json(invoke, "--alert", "QueueDiskFilling")["runbook"]
    assert len(runbook["steps"]) == 5
    assert runbook["steps"][-1] == "4. Check that the disk usage drops within ten minutes."
    assert runbook["steps_more"] == {"lines": 3, "locator": f"{LOCATOR}#queuediskfilling"}
    card = _card(invoke, "--alert", "QueueDiskFilling")
    assert (
        "          4. Check that the disk usage drops within ten minutes.\n"
        f"          ... 3 more lines at {LOCATOR}#queuediskfilling\n"
    ) in card
    # Shown whole: nothing more is said.
    whole = runbook_json(invoke, "--alert", "QueueConsumerStalled")["runbook"]
    assert whole["steps_more"] is None
    assert "more line" not in _card(invoke, "--alert", "QueueConsumerStalled")
