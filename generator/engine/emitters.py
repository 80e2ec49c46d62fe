"""One emitter per output: each reads the finished site model and yields ``(site path,
bytes)`` pairs. What an incremental build redoes: a note's own outputs (:func:`note_outputs`)
and the listings are recalled by what they read (:mod:`generator.engine.reads`, checked in the
tests by making every recalled note again); other pages are rendered again only when their
template, whole context or theme changed (the keys of the :class:`generator.engine.memo.Memo` they
are given). The writer replaces only the files whose bytes changed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

from generator.digest import digest_of
from generator.engine import reads
from generator.engine.graph_files import (
    AssemblyKeeper,
    NotePart,
    Splicing,
    encoded_note_part,
    graph_outputs,
    part_digest,
    read_layout,
)
from generator.engine.manifest import ManifestKeeper, manifest_of_build
from generator.engine.memo import NO_MEMO, Kind, Memo, same
from generator.engine.output import SiteFiles, Staged
from generator.site import pages
from generator.site.annotations import note_annotations
from generator.site.jsonout import dumps
from generator.site.machine import (
    DEFAULT_FULL_CAP,
    chunk_reads,
    feeds,
    feeds_reads,
    full_order,
    full_order_reads,
    llms_full,
    llms_txt,
    llms_txt_reads,
    manifest,
    manifest_lines,
    manifest_text,
    not_found_page,
    note_body_lines,
    page_citations,
    page_evidence,
    page_kind,
    page_siblings,
    robots,
    site_pages,
    sitemap,
    sitemap_reads,
    strings_of,
)
from generator.site.mirrors import mirror_path, mirrors, note_mirror, page_mirror_text
from generator.site.model import (
    SiteModel,
    annotations_path,
    base_path,
    category_path,
    note_path,
    notebook_path,
    text_path,
)
from generator.site.selection_page import selection_pages
from generator.site.theme import Theme

Output = Iterator[tuple[str, bytes]]
T = TypeVar("T")

if TYPE_CHECKING:
    from generator.site.graph_view import Drawing, NoteGraph


def siblings(site: SiteModel, files: Mapping[str, bytes], memo: Memo = NO_MEMO,
             skip: Container[str] = (), digests: Mapping[str, str] | None = None,
             lines_of: Callable[[str], tuple[str, ...]] | None = None,
             pages: Sequence[str] | None = None) -> Iterator[tuple[str, bytes]]:
    """``x.txt`` (unless a note's text projection is already there) and ``x.json`` for
    every ``x.html`` (but those whose ``x.json`` is in ``skip``: made already); with a
    build cache, a page whose bytes and citations are unchanged reuses its siblings
    (``digests``: the pages' sha256, when the caller has them; ``lines_of``: a page's
    :func:`note_body_lines`, when the caller has them; ``pages``: :func:`site_pages` of
    ``files``, when the caller has them: not every file sorted again)."""
    for path in sorted(files) if pages is None else pages:
        if not path.endswith(".html") or path == "404.html" or path[: -len(".html")] + ".json" in skip:
            continue
        stem = path[: -len(".html")]
        kind = page_kind(site, path)
        citations = page_citations(site, path)
        evidence = page_evidence(site, path)
        has_text = f"{stem}.txt" in files
        def key(path: str = path, kind: str = kind, citations: list[dict[str, str]] = citations,
                has_text: bool = has_text, evidence: dict[str, Any] = evidence) -> str:
            page = digests[path] if digests is not None else hashlib.sha256(files[path]).hexdigest()
            return hashlib.sha256(repr((path, site.base_url, kind, citations, has_text, evidence)).encode("utf-8")
                                  + page.encode()).hexdigest()

        # the memo calls both at once; this page's values are bound all the same, as in ``key``
        def compute(path: str = path, kind: str = kind, citations: list[dict[str, str]] = citations,
                    has_text: bool = has_text, evidence: dict[str, Any] = evidence) -> list[tuple[str, bytes]]:
            return list(page_siblings(site, path, files[path], kind, citations, has_text, evidence, lines_of))

        yield from memo.memo(Kind.SIBLINGS, key, compute)


def disc_recalled(memo: Memo, graph: NoteGraph, centre: str, members: list[str]) -> dict[str, tuple[float, float]]:
    """A disc of a graph drawing laid out, recalled from ``memo`` by what it is made from."""
    from generator.site.graph_view import disc_key, disc_layout  # as the graph pages' emitter: loaded when drawn

    return memo.memo(Kind.DISC_LAYOUT, partial(disc_key, graph, centre, members),
                     partial(disc_layout, graph, centre, members))


def body_recalled(memo: Memo, work: pages.BodyWork) -> str:
    """A note's body's HTML, recalled from ``memo`` by what it is a function of."""
    return memo.memo(Kind.BODIES, lambda: digest_of(work.inputs), work.render)


def rendered(memo: Memo, theme: Theme, template: str, **context: object) -> bytes:
    """A page: ``template`` rendered with ``context``, recalled from ``memo`` when its template,
    context and theme are unchanged."""
    return memo.memo(Kind.PAGES, lambda: digest_of((template, theme.fingerprint, context)),
                     lambda: theme.render(template, **context))


class Emitter(Protocol):
    # read-only: the emitters are frozen dataclasses, whose fields cannot be set, so a
    # settable ``name: str`` member would not match them
    @property
    def name(self) -> str: ...

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output: ...


@dataclass(frozen=True)
class ThemeStatic:
    name: str = "theme-static"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        yield from theme.static.values()  # each value is a (published path, bytes) pair


@dataclass(frozen=True)
class ContentAssets:
    """Copies the assets published notes use (links, images, media) — and only those:
    a file only a private note uses is never published."""

    name: str = "content-assets"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        for path, on_disk in site.published_assets.items():  # the name on disk may be decomposed (NFD)
            yield path, (site.content_dir / on_disk).read_bytes()


@dataclass(frozen=True)
class HomePage:
    name: str = "home"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        yield "index.html", rendered(memo, theme, "home.html", **pages.home_context(site, theme))


@dataclass(frozen=True)
class BasePages:
    name: str = "base-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        for slug in site.publication.bases:
            yield base_path(slug), rendered(memo, theme, "base.html", **pages.base_context(site, theme, slug))


@dataclass(frozen=True)
class NotebookPages:
    """A notebook's listing; recalled by what its entries show (:func:`reads.listing_key`),
    without building its context."""

    name: str = "notebook-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        shell = reads.shell_digest(site, theme, ())
        for slug in site.publication.notebooks:
            path = notebook_path(slug)
            key = partial(reads.listing_key, shell, site, theme, path, slug, pages.ordered_notes(site, slug))
            yield path, memo.memo(Kind.LISTINGS, key, partial(_render, theme, "notebook.html", pages.notebook_context,
                                                           site, theme, slug))


@dataclass(frozen=True)
class CategoryPages:
    """A category's listing, recalled as a notebook's is."""

    name: str = "category-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        shell = reads.shell_digest(site, theme, ())
        for slug, notebook in site.publication.notebooks.items():
            for axis in notebook.axes:
                for category in axis.categories:
                    path = category_path(slug, axis.key, category)
                    key = partial(reads.listing_key, shell, site, theme, path, slug,
                                  pages.category_notes(site, slug, axis.key, category))
                    yield path, memo.memo(Kind.LISTINGS, key, partial(_render, theme, "category.html",
                                                                   pages.category_context, site, theme, slug,
                                                                   axis.key, category))


def _render(theme: Theme, template: str, context: Callable[..., dict[str, Any]], *args: Any) -> bytes:
    # the listing is kept whole under its key: not a second time under its context's
    return theme.render(template, **context(*args))


@runtime_checkable
class PerNote(Emitter, Protocol):
    """An emitter whose outputs each belong to one note: a build may emit them note by
    note, in worker processes (``emit`` is ``emit_notes`` of every published note)."""

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output: ...


@dataclass(frozen=True)
class NotePages:
    name: str = "note-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        return self.emit_notes(site, theme, memo, site.publication.notes)

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output:
        for slug in slugs:
            yield note_path(slug), rendered(memo, theme, "note.html", **pages.note_context(site, theme, slug, partial(body_recalled, memo)))
            site.anchored[slug].document.drop_tokens()  # its page is made: the largest part of the note can go


@dataclass(frozen=True)
class TextProjections:
    """``notes/<slug>.txt``: element texts joined by blank lines, the text that
    annotation offsets count in (code points)."""

    name: str = "text-projections"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        return self.emit_notes(site, theme, memo, site.anchored)

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output:
        for slug in slugs:
            yield text_path(slug), (site.anchored[slug].document.projection + "\n").encode("utf-8")


@dataclass(frozen=True)
class WebAnnotations:
    """``notes/<slug>.annotations.jsonld``: W3C Web Annotations of each note."""

    name: str = "web-annotations"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        return self.emit_notes(site, theme, memo, site.publication.notes)

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output:
        for slug in slugs:
            data = note_annotations(site, slug)
            # pickling for the key is several times faster than the JSON layout. The memo calls
            # both at once; partial binds this note's ``data`` all the same (typed, unlike a lambda
            # with a default argument)
            yield annotations_path(slug), memo.memo(Kind.ANNOTATIONS, partial(digest_of, data),
                                                    partial(dumps, data, levels=3))


@dataclass(frozen=True)
class SelectionPages:
    """``notes/<wiki>.selection.html`` (then ``-2``, ``-3``… past the page budget): groups,
    explanations, warnings, oppositions, map."""

    name: str = "selection-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        return self.emit_notes(site, theme, memo, site.selections)

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output:
        for slug in slugs:
            if slug in site.selections:  # a wiki's: the heaviest page of a large perimeter, made beside its note
                for path, context in selection_pages(site, theme, slug):
                    yield path, rendered(memo, theme, "selection.html", **context)


@dataclass(frozen=True)
class DiscardedPages:
    """``notes/<article>.discarded.html`` (then ``-2``, ``-3``…): an article's discarded
    evidence when it is too large for the article's page, enumerated whole over pages under
    the page budget."""

    name: str = "discarded-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        return self.emit_notes(site, theme, memo, site.articles)

    def emit_notes(self, site: SiteModel, theme: Theme, memo: Memo, slugs: Iterable[str]) -> Output:
        for slug in slugs:
            for path, context in pages.discarded_pages(site, theme, slug):
                yield path, rendered(memo, theme, "discarded.html", **context)


@dataclass(frozen=True)
class GraphPages:
    """``graph.html`` and ``notebooks/<slug>.graph.html``: the graph drawn, laid out at build;
    rendered again only when what they draw changed. A page's key is its drawing's digest
    (recalled by the graph but its titles, which decides where each node goes), the titles
    of the nodes it draws and the notebooks' titles: a note retitled that a page does not
    draw (most, past :data:`~generator.site.graph_view.MAX_DRAWN` nodes) leaves it as it
    was, not laid out again; a note added that it does not draw is laid out, not rendered."""

    name: str = "graph-pages"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        from generator.site.graph_pages import SITE_GRAPH, notebook_graph_path
        from generator.site.graph_view import drawing_digest, layout_digest, page_drawing

        graph = site.note_graph
        drawings: dict[str, Drawing] = {}

        def drawing(notebook: str) -> Drawing:  # laid out once a build: for the key, then the page
            if notebook not in drawings:
                drawings[notebook] = page_drawing(graph, notebook, lay_out=partial(disc_recalled, memo))
            return drawings[notebook]

        @functools.cache
        def shell() -> str:  # made only with a build cache, once for every page
            return reads.shell_digest(site, theme, ())

        def drawn(notebook: str) -> tuple[list[str], str]:
            laid = drawing(notebook)
            return [node.key for node in laid.nodes], drawing_digest(laid)

        def key(notebook: str, path: str) -> str:
            # the drawing's digest was made with the titles of then: the key takes those of now
            # what a drawing reads (the page's key adds the shell), digested once a graph
            shown, digest = memo.memo(Kind.GRAPH_DRAWING, lambda: digest_of((layout_digest(graph), notebook)),
                                      partial(drawn, notebook))
            return digest_of((shell(), path, digest,
                              [graph.nodes[k].title for k in shown if k in graph.nodes],
                              [(s, book.title) for s, book in site.publication.notebooks.items()]))

        for slug, path in [("", SITE_GRAPH), *((s, notebook_graph_path(s)) for s in site.publication.notebooks)]:
            yield path, memo.memo(Kind.GRAPH_PAGES, partial(key, slug, path),
                                  partial(_render, theme, "graph.html", _graph_page, site, theme, slug,
                                          partial(drawing, slug)))


def _graph_page(site: SiteModel, theme: Theme, notebook: str, drawing: Callable[[], Drawing]) -> dict[str, Any]:
    from generator.site.graph_pages import graph_context, graph_path, graph_title

    context = pages.common(site, theme, graph_path(notebook), graph_title(site, theme, notebook), "graph")
    return graph_context(site, theme, context, notebook, drawing())


@dataclass(frozen=True)
class NotFoundPage:
    name: str = "not-found"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        yield "404.html", not_found_page(site, theme)


@dataclass(frozen=True)
class SearchPage:
    name: str = "search-page"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        from generator.site.pages import common, search_facets
        context = common(site, theme, "search.html", theme.tr("search"), "search")
        context["results_label"] = theme.tr("search_results", n=2)
        context["facets"] = [list(facet) for facet in search_facets(site, theme)]
        yield "search.html", rendered(memo, theme, "search.html", **context)


@dataclass(frozen=True)
class Feeds:
    """The Atom feeds, recalled by what they read (:func:`~generator.site.machine.feeds_reads`):
    a note's body or passages edited leave them as they were."""

    name: str = "feeds"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        yield from recalled(memo, Kind.FEEDS, partial(feeds_reads, site, theme), lambda: list(feeds(site, theme)),
                            "feeds_reads")


@dataclass(frozen=True)
class Robots:
    name: str = "robots"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        yield "robots.txt", robots(site)


@dataclass(frozen=True)
class Redirects:
    """Former slugs (``aliases:``) keep working: ``_redirects`` for Netlify, and a small
    HTML page at each old address for other hosts (and file://). The rules are forced
    (``301!``): Netlify serves an existing file before a plain rule, so with the page
    there a plain 301 would never fire."""

    name: str = "redirects"

    def emit(self, site: SiteModel, theme: Theme, memo: Memo) -> Output:
        root = urlsplit(site.base_url).path  # "/" or "/wiki/"
        lines = []
        for slug, note in site.publication.notes.items():
            for alias in sorted(note.aliases):
                lines.append(f"{root}{note_path(alias)} {root}{note_path(slug)} 301!")
                target = f"{slug}.html"
                yield note_path(alias), rendered(memo, theme, "redirect.html", target=target, title=note.title,
                                                     canonical=site.base_url + note_path(slug),
                                                     language=site.publication.settings.language)
        if lines:
            yield "_redirects", ("\n".join(sorted(lines)) + "\n").encode("utf-8")



EMITTERS: tuple[Emitter, ...] = (
    ThemeStatic(), ContentAssets(), HomePage(), BasePages(), NotebookPages(), CategoryPages(), NotePages(),
    TextProjections(), WebAnnotations(), SelectionPages(), DiscardedPages(), GraphPages(), NotFoundPage(), SearchPage(),
    Feeds(), Robots(), Redirects(),
)


@dataclass
class NoteOutputs:
    """Everything of one note a build can make apart from the rest of the site (what a
    worker process returns: bytes and small parts, never parsed trees).

    Attributes:
        emitted: (emitter name, path, bytes) of each file the per-note emitters wrote.
        derived: the siblings and mirror of the note's page, by path.
        graph: the note's part of graph.json and graph.jsonld.
        full_chunk: the page's text in llms-full.txt, UTF-8 (``None`` without a page).
        gzipped: path → gzipped size of each of its pages larger than the page budget as
            they are, weighed by the worker process that made them (:func:`summary.weighed`).
        staged: (emitter name, or ``""`` for a derived output; path; the file) of each file a
            worker process wrote into the staging tree itself (:meth:`SiteFiles.stage`), in
            the order of ``emitted`` then ``derived``, which it then leaves empty.
    """

    emitted: list[tuple[str, str, bytes]]
    derived: dict[str, bytes]
    graph: NotePart
    full_chunk: bytes | None
    gzipped: dict[str, int] = field(default_factory=dict)
    staged: list[tuple[str, str, Staged]] = field(default_factory=list)

    def stage(self, files: SiteFiles) -> None:
        """Each file written into ``files``' staging tree here (a worker process), its bytes dropped."""
        self.staged = [(name, path, files.stage(path, data)) for name, path, data in self.emitted]
        self.staged += [("", path, files.stage(path, data)) for path, data in self.derived.items()]
        self.emitted, self.derived = [], {}


@dataclass(frozen=True)
class FiledOutputs:
    """A note's outputs as the build cache keeps them: each file by its digest, not its
    bytes (a rebuild keeps the last build's file, linked from the live tree, when the
    digest is the one it left there), and what the site-wide outputs still read.

    Attributes:
        files: (emitter name, or ``""`` for a derived output; path; sha256) of each file.
        graph: the note's part of graph.json and graph.jsonld.
        full_chunk: the page's text in llms-full.txt, UTF-8 (``None`` without a page, or
            when filed in the build cache: see :meth:`stored`).
        graph_digest: the part's :func:`~generator.site.graph.part_digest` (what graph.json's key is made of).
        chunk_digest: the sha256 of the page's text in llms-full.txt (``""`` without a page):
            the build cache's key for it (memo kind ``note-chunk``).
        chunk_size: its size in bytes.
    """

    files: tuple[tuple[str, str, str], ...]
    graph: NotePart
    full_chunk: bytes | None
    graph_digest: str = ""
    chunk_digest: str = ""
    chunk_size: int = 0

    @classmethod
    def of(cls, outputs: NoteOutputs, digests: Mapping[str, str] | None = None) -> FiledOutputs:
        """``outputs`` filed; ``digests``: path → sha256 of their files, when known already."""
        def digest(path: str, data: bytes) -> str:
            return digests[path] if digests is not None else hashlib.sha256(data).hexdigest()

        files = [(name, path, digest(path, data)) for name, path, data in outputs.emitted]
        files += [("", path, digest(path, data)) for path, data in outputs.derived.items()]
        files += [(name, path, staged.digest) for name, path, staged in outputs.staged]
        chunk = outputs.full_chunk
        return cls(tuple(files), outputs.graph, chunk, part_digest(outputs.graph),
                   "" if chunk is None else hashlib.sha256(chunk).hexdigest(), 0 if chunk is None else len(chunk))

    def stored(self) -> FiledOutputs:
        """As the build cache files it: without the text of its page, kept apart (memo kind
        ``note-chunk``, by :attr:`chunk_digest`). Every rebuild recalls every note's filed
        outputs, and llms-full.txt reads only the first pages' texts, up to its cap (at
        5,000 notes, 5.3 of the 17.7 MB of texts, which weighed 18 of those outputs' 62 MB)."""
        return replace(self, full_chunk=None)


def note_outputs(site: SiteModel, theme: Theme, memo: Memo, emitters: Iterable[PerNote], slug: str) -> NoteOutputs:
    emitted = [(emitter.name, path, data) for emitter in emitters
               for path, data in emitter.emit_notes(site, theme, memo, [slug])]
    files = {path: data for _name, path, data in emitted}
    derived: dict[str, bytes] = {}
    page = note_path(slug)
    chunk = None
    if page in files:
        lines = note_body_lines(files[page])  # read from the page once: its .json shows them
        derived.update(siblings(site, files, memo, lines_of={page: lines}.__getitem__))
        mirror = note_mirror(site, strings_of(site, theme), slug, files[page])
        derived.update([mirror])
        chunk = mirror[1] + b"\n"  # llms-full.txt is made of the mirrors: each chunk its mirror and a blank line
    return NoteOutputs(emitted, derived, encoded_note_part(site, slug), chunk)


def derived_outputs(site: SiteModel, files: SiteFiles, graph: Pending, memo: Memo = NO_MEMO,
                    theme: Theme | None = None, made: Mapping[str, FiledOutputs] | None = None,
                    meanwhile: Callable[[], None] | None = None) -> tuple[dict[str, bytes], dict[str, str]]:
    """Outputs read from the pages themselves, in order, with the sha256 of each: siblings of every page, llms.txt,
    llms-full.txt, the sitemap — then the graph (as :func:`graph_started` began it) is
    added to ``files``, and the manifest of everything made. ``theme`` words llms.txt and
    llms-full.txt (the default theme's, without one); ``made``: note → what was made of it
    already, note by note (:func:`note_outputs`; its siblings and mirror are in
    ``files``). A page's bytes are read from ``files`` only when an output made here
    reads them. ``meanwhile`` is called before waiting for the graph, every page being made
    (what the build does while the graph's child works). On failure the caller stops ``graph``."""
    derived = _read_from_pages(site, files, memo, theme, made or {})
    made_digests = {path: hashlib.sha256(data).hexdigest() for path, data in derived.items()}
    # ``carnet serve``: the manifest the last build wrote is at hand, patched with the files that changed
    resident = memo if isinstance(memo, ManifestKeeper) and memo.resident else None
    kept = resident.take_manifest(files.previous) if resident is not None else None
    # made in full: every file's line but the graph's, made meanwhile (not when a patch is at hand)
    lines = None if kept is not None else manifest_lines(
        {**files.sizes, **{path: len(data) for path, data in derived.items()}}, {**files.digests, **made_digests})
    if meanwhile is not None:
        meanwhile()
    graph.finish()
    this, patched = manifest_of_build(kept, lines, files, derived, made_digests)
    if resident is not None:
        resident.manifest_made = this
    derived["manifest.json"] = manifest_text(this.lines)
    made_digests["manifest.json"] = hashlib.sha256(derived["manifest.json"]).hexdigest()
    if patched and reads.checking() and derived["manifest.json"] != manifest(
            {**files.sizes, **{path: len(data) for path, data in derived.items() if path != "manifest.json"}},
            {**files.digests, **made_digests}):
        raise reads.StaleOutputs("manifest.json was patched from the last build's but differs from the one made in "
                                 "full: generator/engine/manifest.py:manifest_patched missed a change")
    return derived, made_digests


def _read_from_pages(site: SiteModel, files: SiteFiles, memo: Memo, theme: Theme | None,
                     made: Mapping[str, FiledOutputs]) -> dict[str, bytes]:
    redirects = {note_path(alias) for note in site.publication.notes.values() for alias in note.aliases}
    pages = _Filtered(files, redirects)  # redirects are not pages
    # siblings and mirrors a note's outputs made already are in ``files``
    listed = site_pages(pages)  # no derived output is a page
    derived = dict(siblings(site, pages, memo, skip=files, digests=files.digests, pages=listed))
    strings = strings_of(site, theme)
    with_mirror = {path[: -len(".md")] for path in files.digests if path.endswith(".md")}  # as mirror_path finds them
    derived.update(mirrors(site, _Filtered(pages, with_mirror), strings))

    def page_mirror(page: str) -> bytes:
        return page_mirror_text(site, strings, page, pages[page]).encode("utf-8")

    for page in listed:  # every other page's mirror (home, notebooks, categories, bases, selections…)
        if mirror_path(page) in files or mirror_path(page) in derived:
            continue
        # a function of the page's bytes, its address and the words of its header
        derived[mirror_path(page)] = memo.memo(
            Kind.PAGE_MIRROR, partial(digest_of, (page, files.digests[page], site.base_url, strings.memo_key())),
            partial(page_mirror, page))
    everything = _Both(derived, pages)
    cap = site.publication.settings.output_size("llms_full_cap", DEFAULT_FULL_CAP)
    derived["llms.txt"] = recalled(memo, Kind.LLMS_TXT,
                                   partial(llms_txt_reads, site, everything, files.digests, theme, listed),
                                   partial(llms_txt, site, everything, theme, listed), "llms_txt_reads")

    def chunk(path: str, make: Callable[[], str]) -> str:
        # a page that is not a note's (a listing, an article's selection): its mirror as its bytes
        # give it, recalled by them
        what = chunk_reads(site, path, strings)
        if what is None:
            return make()
        return recalled(memo, Kind.FULL_CHUNK, lambda: (what, files.digests[path]), make, "chunk_reads")

    order = recalled(memo, Kind.FULL_ORDER, partial(full_order_reads, site, listed),
                     partial(full_order, site, everything, listed), "full_order_reads")
    texts = {note_path(slug): o for slug, o in made.items() if o.chunk_digest}
    # kept for the next build, read or not (only those under the cap are)
    memo.keep_all(Kind.NOTE_CHUNK, [filed.chunk_digest for filed in texts.values()])

    def mirrored(page: str) -> str:
        """A page's chunk of llms-full.txt: its mirror, made above or with its note, then a blank line."""
        return everything[mirror_path(page)].decode("utf-8") + "\n"

    def text(page: str) -> bytes:
        filed = texts[page]
        if filed.full_chunk is not None:
            return filed.full_chunk
        # the text of a page is a function of its files: read again from its mirror if the cache lost it
        return memo.memo(Kind.NOTE_CHUNK, partial(same, filed.chunk_digest), lambda: mirrored(page).encode("utf-8"))

    derived["llms-full.txt"] = llms_full(site, everything, mirrored, cap, theme,
                                         {page: f.chunk_size for page, f in texts.items()}, text, chunk, order)
    derived["sitemap.xml"] = recalled(memo, Kind.SITEMAP, partial(sitemap_reads, site, listed),
                                      partial(sitemap, site, everything, listed), "sitemap_reads")
    return derived


def recalled(memo: Memo, kind: Kind, what: Callable[[], object], make: Callable[[], T], reads_name: str) -> T:
    """A site-wide output (or a step of one) recalled by the digest of what it reads,
    ``what()``: an edit that changes none of it costs the digest, not the output, which
    walks every page or note. With the engine's read check on a recalled one is made again
    and compared (``reads_name``: the function of :mod:`generator.site.machine` that
    lists the reads, named when one is missing)."""
    value = memo.memo(kind, lambda: digest_of(what()), make)
    if memo is not NO_MEMO and reads.checking() and value != make():
        raise reads.StaleOutputs(f"{kind} was recalled but differs from the one made again: a read is missing "
                                 f"from generator/site/machine.py:{reads_name}")
    return value


@dataclass
class Pending:
    """Files of the site being made meanwhile: :attr:`finish` adds them to the site's files
    (waiting for them), :attr:`stop` drops them (the build failed meanwhile)."""

    finish: Callable[[], None]
    stop: Callable[[], None]


def graph_started(site: SiteModel, files: SiteFiles, memo: Memo = NO_MEMO,
                  made: Mapping[str, FiledOutputs] | None = None, jobs: int = 1,
                  keys: Mapping[str, str] | None = None) -> Pending:
    """graph.json and graph.jsonld, begun: the last build's kept when every part is as it
    was, else made by a child process while this one renders the rest of the site (they
    read the notes' parts alone: ``made``, as :func:`derived_outputs` has it; the articles'
    parts are made first, in ``jobs`` worker processes when there are enough). With a build
    cache, an article's part is recalled by its outputs' key (``keys``: note → its
    :func:`reads.note_key`, which digests all its part reads and more; else by
    :func:`reads.article_digest`), and what is as the last build wrote it is spliced from
    its files."""
    made = made or {}
    splicing = _splicing(files, memo)
    graph = graph_outputs(site, memo, {slug: o.graph for slug, o in made.items()},
                          {slug: o.graph_digest for slug, o in made.items() if o.graph_digest},
                          None if memo is NO_MEMO else partial(_article_key, site, keys or {}),
                          reads.check_graph_part if reads.checking() else None, jobs, splicing,
                          memo if isinstance(memo, AssemblyKeeper) and memo.resident else None)
    # 330 MB at 50,000 notes: streamed
    return _kept_or_started(files, memo, Kind.GRAPH_FILES, graph.key, graph.streams, graph.prepare, splicing,
                            graph.ahead)


def _article_key(site: SiteModel, keys: Mapping[str, str], slug: str) -> str:
    # a tracked article's key is the last build's when no edit reached it: its reads not digested again
    return keys[slug] if slug in keys else reads.article_digest(site, slug)


GRAPH_FILES = ("graph.json", "graph.jsonld")


def _layout_key(digests: Mapping[str, str]) -> str | None:
    """The key of the layout of the graph files of these digests (``None``: one is missing)."""
    if not all(path in digests for path in GRAPH_FILES):
        return None
    return digest_of(("graph-layout", [digests[path] for path in GRAPH_FILES]))


def _splicing(files: SiteFiles, memo: Memo) -> Splicing | None:
    """How the graph files are spliced: from the last build's, when the cache holds their
    layout and they are in the live tree as it wrote them; only laid out otherwise (for the
    next build). Without a cache or a tree, neither."""
    if memo is NO_MEMO or files.tree is None:
        return None
    key = _layout_key({path: files.previous[path][0] for path in GRAPH_FILES if path in files.previous})
    where = {path: files.last_file(path) for path in GRAPH_FILES}
    last = None
    if key is not None and all(where.values()) and memo.holds(Kind.GRAPH_LAYOUT, lambda: key):
        last = memo.memo(Kind.GRAPH_LAYOUT, lambda: key, _no_layout)
    return Splicing(last, {path: str(place) for path, place in where.items() if place}, {}, reads.checking())


def _no_layout() -> None:
    return None


def _kept_or_started(files: SiteFiles, memo: Memo, kind: Kind, key: str,
                     streams: Mapping[str, Iterable[bytes]], prepare: Callable[[], object] | None = None,
                     splicing: Splicing | None = None, ahead: Callable[[], object] | None = None) -> Pending:
    """Files made from what ``key`` digests: the last build's kept when it made them from
    the same (and left them in the live tree), else their chunks written as they are made
    (``prepare``: what they share, see :meth:`SiteFiles.start_streams`; ``splicing``: their
    layout noted, for the next build, see :func:`graph_started`; ``ahead``: made here first,
    see :class:`GraphFiles`)."""
    last: dict[str, str] = memo.memo(kind, lambda: key, dict) if memo.holds(kind, lambda: key) else {}
    if last.keys() == streams.keys() and all(files.can_keep(path, digest) for path, digest in last.items()):
        if splicing is not None and (kept := _layout_key(last)) is not None:
            memo.keep(Kind.GRAPH_LAYOUT, lambda: kept)  # the files kept: their layout too
        return Pending(partial(_keep_all, files, sorted(last)), _nothing)
    folder = None
    if splicing is not None:
        folder = tempfile.mkdtemp(prefix="carnet-graph-layout-")
        splicing.laid_out.update({path: f"{folder}/{n}" for n, path in enumerate(sorted(streams))})
    try:
        if ahead is not None:
            ahead()
        streaming = files.start_streams(streams, prepare)
    except BaseException:  # no writer started: nobody will read the folder
        _removed(folder, splicing)
        raise

    def finish() -> None:
        try:
            streaming.finish()
            if not last:
                memo.memo(kind, lambda: key, lambda: {path: files.digests[path] for path in streams})
            if splicing is not None and (layout := read_layout(splicing)) is not None \
                    and (laid := _layout_key(files.digests)) is not None:
                memo.memo(Kind.GRAPH_LAYOUT, lambda: laid, lambda: layout)
        finally:
            _removed(folder, splicing)

    def stop() -> None:
        try:
            streaming.stop()
        finally:
            _removed(folder, splicing)

    return Pending(finish, stop)


def _removed(folder: str | None, splicing: Splicing | None) -> None:
    """The folder the graph's writers laid their layouts out in, gone (read, or not wanted)."""
    if folder is None or splicing is None:
        return
    for path in splicing.laid_out.values():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _keep_all(files: SiteFiles, paths: list[str]) -> None:
    for path in paths:
        files.keep(path)


def _nothing() -> None:
    pass


class _Both(Mapping[str, bytes]):
    """The files of ``first`` and of ``second`` (none in both), read only when asked."""

    def __init__(self, first: Mapping[str, bytes], second: Mapping[str, bytes]) -> None:
        self.first, self.second = first, second

    def __getitem__(self, path: str) -> bytes:
        return self.first[path] if path in self.first else self.second[path]

    def __contains__(self, path: object) -> bool:
        return path in self.first or path in self.second

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self.first, *self.second}))

    def __len__(self) -> int:
        return len({*self.first, *self.second})


class _Filtered(Mapping[str, bytes]):
    """The files of ``files`` but those at the paths of ``without``, read only when asked
    (in the order of ``files``). A set, not a test per path: the site's 25,000 paths are
    walked several times a rebuild, at the speed of the set's own lookups."""

    def __init__(self, files: Mapping[str, bytes], without: AbstractSet[str]) -> None:
        self.files, self.without = files, without

    def __getitem__(self, path: str) -> bytes:
        if path in self.without:
            raise KeyError(path)
        return self.files[path]

    def __contains__(self, path: object) -> bool:
        return path in self.files and path not in self.without

    def __iter__(self) -> Iterator[str]:
        return itertools.filterfalse(self.without.__contains__, self.files)

    def __len__(self) -> int:
        return sum(1 for _path in self)
