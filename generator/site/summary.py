"""The one-screen summary every build ends with: what was published and in what state.
Counted from the site model and the files, so it says what readers will see."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generator.anchoring import AnchorStatus
from generator.problems import Severity

if TYPE_CHECKING:
    from generator.pipeline import Analysis
    from generator.site.model import SiteModel


@dataclass
class BuildSummary:
    """Attributes:
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


def summarise(analysis: "Analysis", site: "SiteModel", files: dict[str, bytes]) -> BuildSummary:
    publication = site.publication
    statuses: Counter[AnchorStatus] = Counter()
    extractions = 0
    for slug, note in publication.notes.items():
        anchors = site.anchored[slug].anchors
        for extraction in note.extractions:
            extractions += 1
            statuses[anchors[extraction.id].status] += 1
    states = Counter(a.state.state for assessments in site.assessments.values() for a in assessments)
    severities = Counter(p.severity for p in analysis.problems)
    return BuildSummary(
        pages=sum(1 for path in files if path.endswith(".html")),
        notes=len(publication.notes),
        extractions=extractions,
        citations=dict(sorted(states.items())),
        detached=statuses[AnchorStatus.DETACHED],
        relocated=statuses[AnchorStatus.RELOCATED],
        rejected_operations=sum(d.decision == "rejected" for p in site.proposals for d in p.decisions),
        warnings=severities[Severity.WARNING],
        notices=severities[Severity.NOTICE],
    )
