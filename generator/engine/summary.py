"""The one-screen summary every build ends with: what was published and in what state.
Counted from the site model and the files, so it says what readers will see."""

from __future__ import annotations

import gzip
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import partial

from generator.anchoring import AnchorStatus
from generator.engine.memo import NO_MEMO, Kind, Memo
from generator.engine.output import SiteFiles
from generator.problems import Problem, Severity
from generator.result import BuildSummary
from generator.site.model import SiteModel
from generator.site.paging import page_budget


def compressed_size(data: bytes) -> int:
    """``data``'s size once gzipped (level 6, as servers send it)."""
    return len(gzip.compress(data, 6, mtime=0))


def weighed(pages: Iterable[tuple[str, bytes]], budget: int, memo: Memo = NO_MEMO) -> dict[str, int]:
    """Path → gzipped size of each HTML page larger than ``budget`` as it is, that ``memo``
    does not hold already: what a worker process that made the pages measures for the
    summary (1,100 pages of a cold build at 5,000 notes with evidence, 2.7 s of the build's
    own process when it read them back to gzip them itself)."""
    return {path: compressed_size(data) for path, data in pages if path.endswith(".html") and len(data) > budget
            and not memo.holds(Kind.GZIPPED_SIZE, partial(_sha256, data))}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def gzipped_size(files: Mapping[str, bytes], path: str, memo: Memo = NO_MEMO,
                 digests: Mapping[str, str] | None = None, known: Mapping[str, int] | None = None) -> int:
    """The file's size once gzipped (:func:`compressed_size`). With ``digests`` (path →
    the file's sha256) and a build cache as ``memo``, a file the last build compressed is not
    compressed again (a rebuild keeps most heavy pages: the graph pages alone took 0.1 s);
    ``known``: sha256 → the size, measured where the file was made."""
    def size() -> int:
        if known is not None and digests is not None and digests[path] in known:
            return known[digests[path]]
        return compressed_size(files[path])

    return memo.memo(Kind.GZIPPED_SIZE, lambda: digests[path], size) if digests is not None else size()


def over_budget(files: Mapping[str, bytes], sizes: Mapping[str, int], budget: int, memo: Memo = NO_MEMO,
                digests: Mapping[str, str] | None = None, known: Mapping[str, int] | None = None
                ) -> list[tuple[str, int]]:
    """The HTML pages heavier than ``budget`` once gzipped, heaviest first. Only pages larger
    than the budget as they are can exceed it, so only those are compressed (and read back)."""
    # the few heavy pages sorted, not every file (100,000 at 5,000 notes with evidence)
    heavy = [(path, gzipped_size(files, path, memo, digests, known))
             for path, size in sorted((path, size) for path, size in sizes.items()
                                      if size > budget and path.endswith(".html"))]
    return sorted(((path, size) for path, size in heavy if size > budget), key=lambda item: (-item[1], item[0]))


def summarise(problems: list[Problem], site: SiteModel, files: SiteFiles, memo: Memo = NO_MEMO) -> BuildSummary:
    """The counts of what ``site`` publishes in ``files``, with the build's ``problems``
    (``memo``: the build cache, which remembers the heavy pages' gzipped sizes)."""
    publication = site.publication
    # one status per published extraction: its ids are unique in a build that gets here (an id
    # given twice stops it), so the statuses are counted as they are, not looked up 50,000 times
    statuses = Counter(site.statuses.values())
    extractions = sum(len(note.extractions) for note in publication.notes.values())
    states = Counter(a.state.state for assessments in site.assessments.values() for a in assessments)
    severities = Counter(p.severity for p in problems)
    budget = page_budget(site)
    return BuildSummary(
        pages=sum(1 for path in files.digests if path.endswith(".html")),  # counted, not sorted first
        notes=len(publication.notes),
        extractions=extractions,
        citations=dict(sorted(states.items())),
        detached=statuses[AnchorStatus.DETACHED],
        relocated=statuses[AnchorStatus.RELOCATED],
        rejected_operations=sum(d.decision == "rejected" for p in site.proposals for d in p.decisions),
        warnings=severities[Severity.WARNING],
        notices=severities[Severity.NOTICE],
        page_budget=budget,
        over_budget=tuple(over_budget(files, files.sizes, budget, memo, files.digests, files.gzipped)),
        graph_pages=tuple((path, files.sizes[path], gzipped_size(files, path, memo, files.digests))
                          for path in graph_paths(site) if path in files.sizes),
        uncompared=tuple((slug, len(selection.order) - alone, len(selection.order))
                         for slug, selection in sorted(site.selections.items())
                         if (alone := sum(not g.compared for g in selection.groups))),
    )


def graph_paths(site: SiteModel) -> list[str]:
    from generator.site.graph_pages import SITE_GRAPH, notebook_graph_path

    return [SITE_GRAPH, *(notebook_graph_path(slug) for slug in site.publication.notebooks)]
