"""Template rows carry typed contexts: declared per template, refused when a template
returns an undeclared key, and serialised exactly as the template returned them (so the
rows hash recorded for replay and the evidence built from rows do not move)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from cypher_templates.contexts import (
    CONTEXT_SHAPES,
    IncidentContext,
    OpenContext,
    OwnershipContext,
    context_shape,
)
from cypher_templates.executor import Element, TemplateRow
from cypher_templates.registry import TemplateRegistry
from investigator.context_graph.chain import rows_hash
from investigator.evidence import normalise_row

ELEMENT = Element(
    element_id="err:PAY-4097",
    kind="node",
    type="ErrorCode",
    version=1,
    recorded_at=datetime(2026, 7, 1, tzinfo=UTC),
    status="active",
)


class _DictRow(BaseModel):
    """The row shape before contexts were typed."""

    element: Element
    context: dict[str, Any]
    score: float | None = None


def test_every_template_of_the_manifest_declares_its_context_shape() -> None:
    ids = {spec.id for spec in TemplateRegistry.load().specs()}
    assert ids <= set(CONTEXT_SHAPES), sorted(ids - set(CONTEXT_SHAPES))


def test_a_context_reads_as_typed_fields_and_refuses_undeclared_keys() -> None:
    ctx = context_shape("ownership_over_time").model_validate(
        {"service": "svc:payment-api", "team": "team:payments-core", "team_name": None}
    )
    assert isinstance(ctx, OwnershipContext) and ctx.team == "team:payments-core"
    with pytest.raises(ValidationError):
        OwnershipContext.model_validate({"service": "svc:a", "owner": "team:x"})
    assert isinstance(context_shape("a_template_without_a_shape"), type(OpenContext))


def test_typed_rows_hash_and_normalise_exactly_as_the_returned_dict() -> None:
    returned = {
        "incident": "inc:PAY-4097",
        "part": "error_code",
        "error_code": "err:PAY-4097",
        "first_seen": datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC),
        "service": None,
    }
    typed = TemplateRow(element=ELEMENT, context=IncidentContext.model_validate(returned))
    plain = _DictRow(element=ELEMENT, context=dict(sorted(returned.items())))
    assert rows_hash([typed]) == rows_hash([plain])
    assert normalise_row(typed, channel="c", rank=1) == normalise_row(plain, channel="c", rank=1)
    assert set(typed.model_dump()["context"]) == set(returned)  # only the returned keys
