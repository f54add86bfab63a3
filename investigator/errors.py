"""Errors a user can act on; defined in graph_schema (the bottom layer), re-exported here."""

from __future__ import annotations

from graph_schema.errors import BadInput, InvestigatorError, Neo4jUnavailable, NotAuthorized

__all__ = ["BadInput", "InvestigatorError", "Neo4jUnavailable", "NotAuthorized"]
