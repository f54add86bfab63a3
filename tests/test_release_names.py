"""How a question names a release (investigator/release_names.py, h39): the planner's words,
no server. What a user sees of it: tests/test_release_version_named_cli.py."""

from __future__ import annotations

import pytest

from investigator.planner import detect_intents, extract_mentions, release_record_asks
from investigator.release_names import release_named, release_version, with_release_word


@pytest.mark.parametrize(
    "question",
    [
        "did 2026.07.23.4 follow the change policy?",
        "did v2026.07.23.4 follow the change policy?",
        "did release 2026.07.23.4 follow the change policy?",
        "did the 2026.07.23.4 release follow the change policy?",
        "did release-2026.07.23.4 follow the change policy?",
        "deploy 2026.07.23.4",
    ],
)
def test_every_way_of_writing_a_version_names_one_release(question: str) -> None:
    assert extract_mentions(question).release_names() == ["release-2026.07.23.4"]


@pytest.mark.parametrize(
    "question",
    ["is 10.0.0.1 reachable?", "upgrade to 1.4.2", "the 2026.07.23 incident", "v2026.07.23.4.1"],
)
def test_other_dotted_numbers_name_no_release(question: str) -> None:
    assert extract_mentions(question).release_names() == []


def test_an_id_is_kept_as_it_is() -> None:
    named = extract_mentions("did deploy:risk-engine-2026.07.23.4 break it?").release_names()
    assert named == ["deploy:risk-engine-2026.07.23.4"]
    assert release_version(named[0]) is None


def test_a_version_alone_is_read_as_a_release_by_the_intent_rules() -> None:
    assert with_release_word("what changed in 2026.07.23.1?") == (
        "what changed in release 2026.07.23.1?"
    )
    assert with_release_word("the 2026.07.23.1 release") == "the 2026.07.23.1 release"
    assert with_release_word("release 2026.07.23.1") == "release 2026.07.23.1"
    assert [i.value for i in detect_intents("what changed in 2026.07.23.1?")] == ["release_lookup"]
    assert release_record_asks("what changed in 2026.07.23.1?") == ["contents"]
    assert [i.value for i in detect_intents("when did 2026.07.22.3 finish?")] == ["release_lookup"]


def test_a_release_record_is_named_by_its_id_name_or_version() -> None:
    names = ["release-2026.07.23.4"]
    # Its `release`, else the version ending its id or name as its own word.
    assert release_named(names, "deploy:x", None, "2026.07.23.4")
    assert release_named(names, "deploy:risk-engine-2026.07.23.4", "risk-engine", None)
    assert release_named(names, "deploy:l", "ledger 2026.07.23.4", None)
    assert release_named(names, "deploy:release-2026.07.23.4", "release-2026.07.23.4", None)
    # Another version, or the version as part of a longer number: not named.
    assert not release_named(names, "deploy:x", None, "2026.07.23.41")
    assert not release_named(names, "deploy:x-12026.07.23.4", None, None)
    assert not release_named(names, "deploy:release-2026.07.23.1", None, "2026.07.23.1")
    # An id names its record only.
    assert release_named(["deploy:a-2026.07.23.4"], "deploy:a-2026.07.23.4", None, None)
    assert not release_named(["deploy:a-2026.07.23.4"], "deploy:b-2026.07.23.4", None, None)
