"""The latest instant a tenant's recorded runs saw the KG at (the ingest's backdating check
reads it; `investigator runs` and the recorder do not need the bundle models for it)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class RecordFloor(BaseModel):
    """The latest instant a tenant's recorded runs saw the KG at, and which run that is."""

    model_config = ConfigDict(frozen=True)

    at: datetime
    run_id: str
