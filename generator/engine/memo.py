"""The one seam between a build's pure steps and the build cache: a :class:`Memo`.

A step that is worth remembering asks ``memo.memo(kind, key, compute)``. ``key`` is a
function, so the do-nothing memo of a full build (:data:`NO_MEMO`) never pays for
hashing the inputs; the build cache (:class:`generator.engine.cache.BuildCache`) calls it and
returns the remembered value when it holds one. A step never knows which one it got:
the output is the same bytes either way.

:func:`generator.digest.digest_of` is the key most steps use: a sha256 of a value's content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Final, Protocol, TypeVar

T = TypeVar("T")


class Kind(StrEnum):
    """What a remembered value is: the steps a build remembers, each under its own keys."""

    NOTES = "notes"  # a note's parse
    ANCHORS = "anchors"  # a note's parsed body and anchors
    NOTE_FACTS = "note-facts"  # what every build reads of a note's anchoring and links
    CLAIMS = "claims"  # an article's claims
    AUDIT = "audit"  # an article's audit
    PAIRS = "pairs"  # an article's (claim, source) pairs with their states
    LIKENESS = "likeness"  # a perimeter's grouping and map
    SELECTION = "selection"  # a wiki's selection
    BODIES = "bodies"  # a note's body's HTML
    PAGES = "pages"  # a page rendered from its template and context
    LISTINGS = "listings"  # a notebook's or a category's listing page
    NOTE_OUTPUTS = "note-outputs"  # a note's own outputs, by their digests
    SIBLINGS = "siblings"  # a page's .txt and .json
    NOTE_CHUNK = "note-chunk"  # a note's part of llms-full.txt
    FULL_CHUNK = "full-chunk"  # another page's part of llms-full.txt
    FULL_ORDER = "full-order"  # the order of llms-full.txt
    LLMS_TXT = "llms-txt"
    SITEMAP = "sitemap"
    FEEDS = "feeds"
    GRAPH = "graph"  # a note's part of the graph
    GRAPH_ARTICLE = "graph-article"  # an article's part of the graph
    GRAPH_LAYOUT = "graph-layout"  # where each part lies in the last build's graph files
    GRAPH_DRAWING = "graph-drawing"  # a graph page's drawing
    GRAPH_PAGES = "graph-pages"  # a graph page
    DISC_LAYOUT = "disc-layout"  # a disc of a graph drawing, laid out
    GZIPPED_SIZE = "gzipped-size"  # a heavy page's gzipped size
    PAGE_MIRROR = "page-mirror"  # a page's Markdown mirror
    ANNOTATIONS = "annotations"  # a note's W3C annotations
    GRAPH_FILES = "graph-files"  # graph.json and graph.jsonld, whole


class Memo(Protocol):
    """Remembers what pure steps computed, by a key of everything they read."""

    def memo(self, kind: Kind, key: Callable[[], str], compute: Callable[[], T]) -> T:
        """The value ``compute()`` gives for ``key()`` (of step ``kind``), computed or recalled."""
        ...

    def holds(self, kind: Kind, key: Callable[[], str]) -> bool:
        """Whether :meth:`memo` would recall ``key()`` without computing (a build sends only
        the rest to its worker processes)."""
        ...

    def keep(self, kind: Kind, key: Callable[[], str]) -> bool:
        """Whether the memo holds ``key()``; if so, it is kept for the next build as if it
        had been recalled, without being read (a value a build may never ask for)."""
        ...

    def keep_all(self, kind: Kind, digests: Iterable[str]) -> None:
        """:meth:`keep` of each of ``digests`` (keys made already), at once: what a build
        carries from the last one of its process, thousands of entries, is kept for the next."""
        ...


class NoMemo:
    """Remembers nothing: every step is computed (a full build, ``--no-cache``)."""

    def memo(self, kind: Kind, key: Callable[[], str], compute: Callable[[], T]) -> T:
        return compute()

    def holds(self, kind: Kind, key: Callable[[], str]) -> bool:
        return False

    def keep(self, kind: Kind, key: Callable[[], str]) -> bool:
        return False

    def keep_all(self, kind: Kind, digests: Iterable[str]) -> None:
        return None


NO_MEMO: Final = NoMemo()


def same(value: T) -> T:
    """``value`` itself: with ``partial``, a key or a value known already, given where a
    :class:`Memo` asks for a function."""
    return value


class KindsOnly:
    """A memo that remembers only the given kinds of step and computes the others: a
    note's outputs kept whole need not be kept a second time page by page (its body,
    the costly part that another page's edit leaves as it was, is kept)."""

    def __init__(self, inner: Memo, kinds: frozenset[str]) -> None:
        self.inner = inner
        self.kinds = kinds

    def memo(self, kind: Kind, key: Callable[[], str], compute: Callable[[], T]) -> T:
        return self.inner.memo(kind, key, compute) if kind in self.kinds else compute()

    def holds(self, kind: Kind, key: Callable[[], str]) -> bool:
        return kind in self.kinds and self.inner.holds(kind, key)

    def keep(self, kind: Kind, key: Callable[[], str]) -> bool:
        return kind in self.kinds and self.inner.keep(kind, key)

    def keep_all(self, kind: Kind, digests: Iterable[str]) -> None:
        if kind in self.kinds:
            self.inner.keep_all(kind, digests)
