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
    """The counts every build ends with (see :func:`generator.engine.summary.summarise`).

    Attributes:
        pages: HTML pages written.
        notes: published notes (wikis and syntheses included).
        extractions: published extractions.
        citations: (claim, source) pairs of published articles, by verification state.
        detached: published extractions whose anchor is detached.
        relocated: published extractions whose anchor was relocated.
        rejected_operations: section operations ``carnet apply`` rejected, in published wikis' proposals.
        warnings, notices: problems of those severities.
        page_budget: the budget of an HTML page, gzipped, in bytes (``outputs.page_budget_kb``).
        over_budget: (path, gzipped size) of the pages over it, heaviest first.
        graph_pages: (path, size, gzipped size) of the graph pages (the site's, then each notebook's).
        uncompared: (wiki, extractions compared, extractions in its perimeter) of the selections
            whose cap on pairs stopped the comparison (generator.selection.groups.pair_cap).
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
    page_budget: int = 0
    over_budget: tuple[tuple[str, int], ...] = ()
    graph_pages: tuple[tuple[str, int, int], ...] = ()
    uncompared: tuple[tuple[str, int, int], ...] = ()

    def lines(self) -> list[str]:
        states = ", ".join(f"{count} {state}" for state, count in sorted(self.citations.items())) or "none"
        return [
            f"  pages        {self.pages}",
            f"  notes        {self.notes}",
            f"  extractions  {self.extractions} ({self.detached} detached, {self.relocated} relocated)",
            f"  citations    {sum(self.citations.values())} ({states})",
            f"  operations   {self.rejected_operations} rejected",
            f"  problems     {self.warnings} warning(s), {self.notices} notice(s)",
            *self.graph_lines(),
            *self.budget_lines(),
            *self.uncompared_lines(),
        ]

    def uncompared_lines(self) -> list[str]:
        """The selections that compared only part of their perimeter, named, with what to do."""
        return [f"  warning      the selection of {wiki} compared {compared} of its {total} extractions (its cap on "
                f"close pairs was reached); the {total - compared} others are listed alone, marked not compared. "
                "Narrow the wiki's perimeter" for wiki, compared, total in self.uncompared]

    def graph_lines(self) -> list[str]:
        """The graph pages' weight: the site's, and the heaviest notebook's."""
        if not self.graph_pages:
            return []
        (path, size, packed), *books = self.graph_pages
        line = f"  graph        {path} {size / 1024:.0f} KB ({packed / 1024:.0f} KB gzipped)"
        if books:
            heaviest = max(books, key=lambda b: (b[2], b[0]))
            line += (f"; {len(books)} notebook graph(s), the heaviest {heaviest[0]} {heaviest[1] / 1024:.0f} KB "
                     f"({heaviest[2] / 1024:.0f} KB gzipped)")
        return [line]

    def budget_lines(self) -> list[str]:
        """The pages over the byte budget, named (the heaviest five), with what to do."""
        if not self.over_budget:
            return []
        named = ", ".join(f"{path} ({size / 1024:.0f} KB)" for path, size in self.over_budget[:5])
        more = f" and {len(self.over_budget) - 5} more" if len(self.over_budget) > 5 else ""
        return [f"  warning      {len(self.over_budget)} page(s) over the page budget of {self.page_budget // 1024} KB "
                f"gzipped: {named}{more}. Narrow the article's perimeter, or raise outputs.page_budget_kb "
                "in carnet.yaml"]


@dataclass
class BuildResult:
    """What a build wrote and published.

    Attributes:
        files: files in the site (the marker included, the search bundle not).
        changed: files written or removed by this build (0 for a no-op rebuild).
        summary: the counts the build's closing summary shows.
        image_hosts: the hosts whose images its pages' policy allows (``csp: img_hosts``), for
            the headers ``carnet serve`` sends.
    """

    out_dir: Path
    files: int
    reports: list[NotebookReport]
    problems: list[Problem]
    language: str = "fr"
    changed: int = 0
    summary: BuildSummary = field(default_factory=BuildSummary)
    image_hosts: tuple[str, ...] = ()

    @property
    def what_changed(self) -> str:
        """The build's work in words, as ``build`` and ``serve`` print it."""
        if self.changed == 0:
            return "nothing changed"
        if self.changed >= self.files:
            return "full build"
        return f"{self.changed} file(s) rewritten"
