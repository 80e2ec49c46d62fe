"""The one-screen summary every build ends with: what was published and in what state.
Counted from the site model and the files, so it says what readers will see."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from generator.anchoring import AnchorStatus
from generator.problems import Problem, Severity
from generator.result import BuildSummary
from generator.site.model import SiteModel


def summarise(problems: list[Problem], site: SiteModel, files: Collection[str]) -> BuildSummary:
    """The counts of what ``site`` publishes in ``files``, with the build's ``problems``."""
    publication = site.publication
    statuses: Counter[AnchorStatus] = Counter()
    extractions = 0
    for slug, note in publication.notes.items():
        anchors = site.anchored[slug].anchors
        for extraction in note.extractions:
            extractions += 1
            statuses[anchors[extraction.id].status] += 1
    states = Counter(a.state.state for assessments in site.assessments.values() for a in assessments)
    severities = Counter(p.severity for p in problems)
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
