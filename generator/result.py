"""What a build returns (kept light: a rebuild with nothing to do reads it back from
the build cache without loading the pipeline)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from generator.problems import Problem

if TYPE_CHECKING:
    from generator.corpus.publication import NotebookReport


@dataclass
class BuildSummary:
    """The counts every build ends with (see :func:`generator.site.summary.summarise`).

    Attributes:
        pages: HTML pages written.
        notes: published notes (wikis and syntheses included).
        extractions: published extractions.
        citations: (claim, source) pairs of published articles, by verification state.
        detached: published extractions whose anchor is detached.
        relocated: published extractions whose anchor was relocated.
        rejected_operations: section operations ``carnet apply`` rejected, in published wikis' proposals.
        warnings, notices: problems of those severities.
    """

    pages: int = 0
    notes: int = 0
    extractions: int = 0
    citations: dict[str, int] = field(default_factory=dict)
    detached: int = 0
    relocated: int = 0
    rejected_operations: int = 0
    warnings: int = 0
    notices: int = 0

    def lines(self) -> list[str]:
        states = ", ".join(f"{count} {state}" for state, count in sorted(self.citations.items())) or "none"
        return [
            f"  pages        {self.pages}",
            f"  notes        {self.notes}",
            f"  extractions  {self.extractions} ({self.detached} detached, {self.relocated} relocated)",
            f"  citations    {sum(self.citations.values())} ({states})",
            f"  operations   {self.rejected_operations} rejected",
            f"  problems     {self.warnings} warning(s), {self.notices} notice(s)",
        ]


@dataclass
class BuildResult:
    """What a build wrote and published.

    Attributes:
        files: files in the site (the marker included, the search bundle not).
        changed: files written or removed by this build (0 for a no-op rebuild).
        summary: the counts the build's closing summary shows.
    """

    out_dir: Path
    files: int
    reports: list[NotebookReport]
    problems: list[Problem]
    language: str = "fr"
    changed: int = 0
    summary: BuildSummary = field(default_factory=BuildSummary)

    @property
    def what_changed(self) -> str:
        """The build's work in words, as ``build`` and ``serve`` print it."""
        if self.changed == 0:
            return "nothing changed"
        if self.changed >= self.files:
            return "full build"
        return f"{self.changed} file(s) rewritten"
