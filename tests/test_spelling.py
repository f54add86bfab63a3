"""Which typed words are read as the intent vocabulary's (investigator.spelling), and which stay
as typed. The answers these readings give are tested through the CLI on a real Neo4j in
tests/test_spelling_slips_cli.py; this file pins the rule word by word (no server)."""

from __future__ import annotations

import pytest

from investigator.spelling import INTENT_WORDS, NOT_SLIPS, read_question, vocabulary_word


@pytest.mark.parametrize(
    ("typed", "word"),
    [
        ("ownr", "owner"),
        ("onwer", "owner"),
        ("onws", "owns"),
        ("runbok", "runbook"),
        ("deploi", "deploy"),
        ("rolback", "rollback"),
        ("incidnet", "incident"),
        ("casued", "caused"),
        ("relase", "release"),
        ("dependncies", "dependencies"),
        ("depndencis", "dependencies"),  # two slips in a long word
        ("postmortm", "postmortem"),
        ("waht", "what"),
        ("whcih", "which"),
        ("shoud", "should"),
    ],
)
def test_slips_read_as_the_word(typed: str, word: str) -> None:
    assert vocabulary_word(typed) == word


@pytest.mark.parametrize(
    "typed",
    [
        # English words one slip from a vocabulary word: they mean themselves.
        "known",  # "owner"? another first letter
        "down",  # "owns"? another first letter
        "owes",  # "owns": a four-letter word reads a swap only
        "owed",
        "paused",  # "caused"
        "charge",
        "chance",  # "change"
        "fined",
        "fires",  # "fired"
        "police",  # "policy"
        "recover",
        "trigger",
        # Forms of vocabulary words, and names a tenant gives a service.
        "firings",
        "remediated",
        "deployer",
        "incidentio",
        "alerta",
        # Stop words and short words.
        "were",  # "where"
        "own",
        "cause",
        "team",
        "root",
        "ownd_x",
    ],
)
def test_words_that_are_no_slip(typed: str) -> None:
    assert vocabulary_word(typed) is None


def test_a_word_as_close_to_two_words_stays() -> None:
    # "owne": owner (a letter left out) and owned alike.
    assert vocabulary_word("owne") is None


@pytest.mark.parametrize(
    "question",
    [
        "who owns payment-ownr?",  # part of a hyphenated name
        "what is svc:deploi?",  # part of an id
        "open runbok.md",  # a file name
        "OWNR of payment-api",  # upper case: a name or an acronym
        "is the service known to be down?",
        "What caused the PAY-4097 errors?",
        "Why did payment authorization fail with no database connection available on payment-api?",
    ],
)
def test_questions_read_as_typed(question: str) -> None:
    read = read_question(question)
    assert read.text == question
    assert read.notes() == []


def test_contractions_without_apostrophe() -> None:
    read = read_question("whos the onwer of payment api, whats the runbok? Didnt we deploi")
    assert read.text == ("who is the owner of payment api, what is the runbook? Didn't we deploy")
    # Said once, in the order typed; a contraction is no slip.
    assert read.notes() == [
        "'onwer' read as 'owner', 'runbok' read as 'runbook', 'deploi' read as 'deploy'"
    ]


def test_a_capitalised_slip_keeps_its_capital() -> None:
    read = read_question("Ownr of payment-api? ownr")
    assert read.text == "Owner of payment-api? owner"
    assert read.notes() == ["'Ownr' read as 'owner', 'ownr' read as 'owner'"]


def test_the_reading_is_read_again_unchanged() -> None:
    once = read_question("whos the ownr, what casued the incidnet, should we rolback").text
    assert read_question(once).text == once


def test_no_english_neighbour_is_a_vocabulary_word() -> None:
    assert not NOT_SLIPS & INTENT_WORDS
