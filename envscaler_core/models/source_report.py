"""What reading the source files gave, per file: stored on the run so `status` can show it later.

Kept apart from the importers (which decide formats and extract utterances): these models only hold
the counts and the first problems the importers found, phrased for people."""

from __future__ import annotations

from pydantic import Field

from envscaler_core.models.base import Model


class SourceFileReport(Model):
    path: str
    dataset: str = Field(default="", description="Importer that read it ('api-bank', 'bfcl', 'jsonl', ...).")
    records: int = Field(default=0, description="Records seen: kept + duplicates + filtered + malformed.")
    kept: int = 0
    duplicates: int = 0
    filtered: int = 0
    filter_reasons: dict[str, int] = Field(default_factory=dict)
    malformed: int = 0
    problems: list[str] = Field(default_factory=list, description="The first few '<file>:<line>: <reason>'.")
    not_read: bool = Field(default=False, description="Skipped because `mine.max_tasks` was reached before it.")
    fatal: str | None = Field(default=None, description="Why this file cannot be used (no task in it), if so.")
    sha256: str | None = Field(default=None, description="Digest of the file's bytes when the run read it: a resume "
                               "refuses a file whose contents changed under the same path.")


class SourceReport(Model):
    files: list[SourceFileReport] = Field(default_factory=list)
    max_tasks: int | None = None

    @property
    def kept(self) -> int:
        return sum(f.kept for f in self.files)

    @property
    def malformed(self) -> int:
        return sum(f.malformed for f in self.files)
