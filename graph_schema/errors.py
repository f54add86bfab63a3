"""Errors a user can act on, each mapped to one documented exit code (docs/contracts.md).

They live in the bottom layer so every layer above can raise them without importing upward.
"""

from __future__ import annotations


class InvestigatorError(Exception):
    """Base class: a one-line message for the user and the exit code it maps to."""

    exit_code = 1


class BadInput(InvestigatorError):
    """Malformed, hostile or out-of-range input (exit 2)."""

    exit_code = 2


class NotAuthorized(InvestigatorError):
    """The subject is unknown or may not do this (exit 3)."""

    exit_code = 3


class Neo4jUnavailable(InvestigatorError):
    """Neo4j cannot be reached or a query timed out (exit 4)."""

    exit_code = 4


class InterruptedPartWay(KeyboardInterrupt):
    """Ctrl-C (exit 130) after part of a write: `line` says what was written and what to do.

    A KeyboardInterrupt, so everything that handles Ctrl-C (rolling back, recording a run as
    interrupted, the CLI's one line) handles it; the CLI prints `line` instead of its own."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line
