"""What an importer hands back: a bundle for the writer, plus what it could not link."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graph_schema.bundle import Bundle, BundleProblem, LoadedBundle


class UnresolvedLink(BaseModel):
    """A reference in the source that points at nothing the KG or the import knows."""

    model_config = ConfigDict(frozen=True)

    origin: str  # file the reference was read from
    element: str  # the element that carries the reference (e.g. alert:KubePodCrashLooping)
    field: str  # where the reference sits (e.g. annotations.runbook_url, front matter alert)
    target: str  # the reference as written
    reason: str

    def line(self) -> str:
        """One line for the ingest output."""
        return (
            f"{self.origin}: {self.element}: {self.field} {self.target!r} "
            f"not linked ({self.reason})"
        )


class ImportResult(BaseModel):
    """The bundle an importer built, and everything the user should hear about it.

    `problems` are fatal (the CLI writes nothing when there is one); `unresolved` and
    `skipped` are reported in the ingest output but do not stop the write.
    """

    origin: str
    bundle: Bundle | None = None
    problems: list[BundleProblem] = Field(default_factory=list)
    unresolved: list[UnresolvedLink] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    linked: list[str] = Field(default_factory=list)

    def loaded(self) -> LoadedBundle:
        """The bundle wrapped for the writer (`graph_schema.writer.ingest_bundle`)."""
        parts = [(self.origin, self.bundle)] if self.bundle is not None else []
        return LoadedBundle.from_bundles(parts)

    def report_lines(self) -> list[str]:
        """What the ingest output says besides the write counts: links, skips, unresolved."""
        lines = [f"linked: {line}" for line in self.linked]
        lines += [f"skipped: {line}" for line in self.skipped]
        lines += [f"unresolved: {link.line()}" for link in self.unresolved]
        return lines
