"""The finished model the emitters render: the publication, anchored notes, resolved
links, backlinks and page addresses. Emitters decide nothing about evidence or privacy."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

from generator.anchoring import AnchoredNote, AnchorStatus
from generator.corpus.links import LinkTarget, LinkUse
from generator.corpus.model import Extraction, Note, Notebook, members_by_notebook, note_ids
from generator.corpus.oppositions import OppositionRecord
from generator.corpus.proposal import Proposal
from generator.corpus.publication import Publication
from generator.kinds import LinkKind, WikiKind
from generator.selection.select import Selection
from generator.site.graph_view import GraphInputs, NoteGraph, graph_patched
from generator.synthesis.audit import ArticleAudit, CitationLink, DiscardedItem
from generator.synthesis.coverage import Coverage
from generator.text import category_slug
from generator.verification.assess import Assessment
from generator.verification.tally import Tally

if TYPE_CHECKING:
    from generator.site.markdown_html import BodyTemplate


def note_path(slug: str) -> str:
    return f"notes/{slug}.html"


def source_address(link: CitationLink) -> str:
    """Where a citation lands, site-relative: its note's page at the extraction's highlight
    or the comment; for a saved answer's quote, at the element it starts in, with the
    note's text there in ``?quote=`` (what the page's script highlights)."""
    if link.marker.kind is not WikiKind.QUOTE:
        return f"{note_path(link.note)}#{link.fragment}"
    if not link.element:  # the quote no longer lands: the note's page, nowhere in it
        return note_path(link.note)
    return f"{note_path(link.note)}?{urlencode({'quote': link.text}, quote_via=quote)}#{link.fragment}"


def extraction_fragment(statuses: Mapping[str, AnchorStatus], extraction: str) -> str:
    """Where a link to an extraction lands on its note's page (``statuses``: the published
    extractions' anchor statuses, :attr:`SiteModel.statuses`): at its highlight when it
    lands, else at its entry in the note's list (a detached one has no passage)."""
    status = statuses.get(extraction)
    return f"ext-{extraction}" if status is not None and status.is_live else f"entry-{extraction}"


def discarded_fragment(item: DiscardedItem, statuses: Mapping[str, AnchorStatus]) -> str:
    """Where a discarded item lands on its note's page: a retrieved passage at its element,
    an extraction as :func:`extraction_fragment` says."""
    return item.extraction if item.passage else extraction_fragment(statuses, item.extraction)


def relative_address(address: str, page: str) -> str:
    """:func:`relative` for an address that may hold a ``?query``."""
    path, mark, rest = address.partition("?")
    if not mark:
        return relative(address, page)
    query, hash_mark, fragment = rest.partition("#")
    return f"{relative(path, page)}?{query}{hash_mark}{fragment}"


def text_path(slug: str) -> str:
    """The note's text projection: the text W3C annotation offsets count in."""
    return f"notes/{slug}.txt"


def annotations_path(slug: str) -> str:
    return f"notes/{slug}.annotations.jsonld"


def selection_path(slug: str, page: int = 1) -> str:
    """A wiki's selection page; a large one goes on over pages 2, 3… (:mod:`generator.site.paging`)."""
    return f"notes/{slug}.selection.html" if page == 1 else f"notes/{slug}.selection-{page}.html"


def discarded_path(slug: str, page: int = 1) -> str:
    """An article's discarded evidence on pages of its own, when it is too large for the article's page."""
    return f"notes/{slug}.discarded.html" if page == 1 else f"notes/{slug}.discarded-{page}.html"


_AUDIT_PAGE = re.compile(r"notes/(?P<slug>[a-z0-9_-]+)\.(?P<kind>selection|discarded)(?:-(?P<page>[1-9][0-9]*))?\.html")


def audit_page(path: str) -> tuple[str, str, int] | None:
    """``(article slug, "selection" or "discarded", page number)`` of an article's audit
    page, ``None`` for any other path (a slug has no dot, so no note's page is one)."""
    match = _AUDIT_PAGE.fullmatch(path)
    if match is None:
        return None
    return match["slug"], match["kind"], int(match["page"] or 1)


def reading_order(path: str) -> tuple[str, int]:
    """A sort key that puts an audit's pages in their order (by path, ``x.selection-2.html``
    would come before ``x.selection.html``), any other path by itself."""
    audit = audit_page(path)
    if audit is None:
        return path, 0
    slug, kind, number = audit
    return (selection_path(slug) if kind == "selection" else discarded_path(slug)), number


def notebook_path(slug: str) -> str:
    return f"notebooks/{slug}.html"


def category_path(notebook: str, axis: str, category: str) -> str:
    return f"notebooks/{notebook}/{axis}/{category_slug(category)}.html"


def base_path(slug: str) -> str:
    return f"bases/{slug}.html"


SITE_FEEDS = ("notes", "articles")
"""The site-wide feeds, beside each notebook's: a notebook cannot take their names."""


def feed_path(name: str) -> str:
    """A feed: a notebook's (its slug) or a site-wide one (one of :data:`SITE_FEEDS`)."""
    return f"feeds/{name}.xml"


def relative(target: str, page: str) -> str:
    """A link from ``page`` to ``target`` (both site-relative paths) that works from any
    base URL and from ``file://``."""
    path, hash_mark, fragment = target.partition("#")
    rel = _relative_path(path, posixpath.dirname(page) or ".") if path else ""
    return rel + (hash_mark + fragment if hash_mark else "")


def _relative_path(path: str, directory: str) -> str:
    head, _, name = path.rpartition("/")
    if head == directory:  # the common case (a note to a note): no relpath, no cache entry
        return name
    return _relpath(path, directory)


@functools.lru_cache(maxsize=1 << 16)
def _relpath(path: str, directory: str) -> str:
    # cached: pages link to the same few directories over and over (relpath is slow)
    return posixpath.relpath(path, directory)


@dataclass(frozen=True)
class ListedBefore:
    """A build before's published notes and notebooks, with the indices that list notes it
    made of them (:data:`LISTED`, by name): this build's are patched from them where the
    notes are listed as they were (:meth:`SiteModel.listed_changes`)."""

    notes: Mapping[str, Note]
    notebooks: Mapping[str, Notebook]
    indices: Mapping[str, object]
    selections: Mapping[str, Selection] = field(default_factory=dict)


LISTED = ("members", "listings", "category_members", "dates", "extractions", "selection_notes")
"""The derived indices of :class:`SiteModel` that list notes or their ids (patched from a build before's)."""


@dataclass(frozen=True, eq=False)  # eq=False: compared and hashed by identity (a build has one)
class SiteModel:
    """Attributes:
        publication: the public corpus.
        anchored: published note slug → its parsed body and anchors.
        links: published note slug → its links with their targets, in reading order.
        backlinks: note slug → published notes linking to it (sorted).
        base_url: absolute URL of the site (canonical links).
        content_dir: where asset files are read from.
        articles: published wiki or synthesis slug → its audit.
        reuse: extraction id → the published articles citing it (its reuse score).
        proposals: section-operation proposals of published wikis.
        assessments: article slug → its (claim, source) pairs with their verification states.
        coverage: published note slug → the elements its published extractions cover.
        statuses: published extraction id → its anchor's status.
        tallies: article slug → what its audit panel counts (pairs by state and reason,
            unsourced claims).
        evidence_keys: article slug → a digest its audit, selection, assessments and tally
            are a function of (what they read), when a build cache keyed its audit: what an
            incremental build's keys take in their place (generator.engine.reads.article_reads).

    Every evidence fact is decided here, by the core, before any page is made: ``site/``
    renders these fields and computes none of them (a test holds it to that).
    """

    publication: Publication
    anchored: Mapping[str, AnchoredNote]
    links: dict[str, list[tuple[LinkUse, LinkTarget]]]
    backlinks: dict[str, list[str]]
    base_url: str
    content_dir: Path
    published_assets: dict[str, str] = field(default_factory=dict)
    articles: dict[str, ArticleAudit] = field(default_factory=dict)
    reuse: dict[str, list[str]] = field(default_factory=dict)
    proposals: list[Proposal] = field(default_factory=list)
    assessments: dict[str, list[Assessment]] = field(default_factory=dict)
    selections: dict[str, Selection] = field(default_factory=dict)
    oppositions: dict[str, OppositionRecord] = field(default_factory=dict)
    coverage: dict[str, Coverage] = field(default_factory=dict)
    statuses: dict[str, AnchorStatus] = field(default_factory=dict)
    tallies: dict[str, Tally] = field(default_factory=dict)
    evidence_keys: dict[str, str] = field(default_factory=dict)
    # published note slug → its body rendered, links left as holes, by the worker process that
    # parsed it (generator.site.markdown_html.body_template): its page need not parse it again
    body_templates: Mapping[str, BodyTemplate] = field(default_factory=dict, repr=False)
    # the note graph of a build before, with what it was made of: this one's is patched from it
    # where it can be (generator.site.graph_view.graph_patched)
    graph_before: tuple[GraphInputs, NoteGraph] | None = field(default=None, repr=False)
    # the notes' listings of a build before: this one's are patched from them where they can be
    listed_before: ListedBefore | None = field(default=None, repr=False)

    # Derived indices below: each made once, when first asked for (a build that recalls every
    # page asks for few of them), and never changed after; the model itself is frozen.

    @functools.cached_property
    def note_graph(self) -> NoteGraph:
        """The note graph of the graph pages and local graphs: the published notes and
        notebooks, with the citations (article → note), body links (note → note, or to a
        note's extractions and comments) and memberships between them."""
        inputs = self.graph_inputs
        made = graph_patched(self.graph_before[1], self.graph_before[0], inputs) if self.graph_before else None
        return made if made is not None else inputs.graph()

    @functools.cached_property
    def graph_inputs(self) -> GraphInputs:
        """What :attr:`note_graph` is made of."""
        publication = self.publication
        notebooks = {slug: nb.title for slug, nb in publication.notebooks.items()}
        paths = {f"note:{slug}": note_path(slug) for slug in publication.notes}
        paths.update({f"notebook:{slug}": notebook_path(slug) for slug in notebooks})
        cites = [(slug, link.note) for slug, audit in self.articles.items() if slug in publication.notes
                 for link in audit.links if link.note and not link.broken]
        links = []
        for slug, uses in self.links.items():
            for _use, target in uses:
                if target.kind is LinkKind.NOTE:
                    links.append((slug, target.key))
                elif target.kind in (LinkKind.EXTRACTION, LinkKind.COMMENT) and target.note \
                        and slug not in self.articles:
                    links.append((slug, target.note))  # an article's markers are its citations, counted above
        return GraphInputs(publication.notes, notebooks, paths, cites, links)

    @functools.cached_property
    def listed_changes(self) -> dict[str, Note] | None:
        """The notes that are not the objects :attr:`listed_before` had, each listed as it was
        there (the same notebooks, the same date; a body, a title or a category edited),
        the notes and notebooks being the same otherwise: the indices that list notes are
        then the last build's with these in their places (an index of 5,000 notes walks them
        all). ``None`` when they cannot be patched."""
        before = self.listed_before
        notes = self.publication.notes
        if before is None or list(before.notes) != list(notes) or before.notebooks != self.publication.notebooks:
            return None
        changed = {slug: note for slug, note in notes.items() if note is not before.notes[slug]}
        for slug, note in changed.items():
            was = before.notes[slug]
            if [m.notebook for m in note.memberships] != [m.notebook for m in was.memberships] or note.date != was.date or \
                    [c.date for e in note.extractions for c in e.comments] != \
                    [c.date for e in was.extractions for c in e.comments]:
                return None
        return changed

    def _listed(self, name: str) -> object | None:
        """The index ``name`` of :attr:`listed_before`, when it can be patched."""
        before, changed = self.listed_before, self.listed_changes
        return before.indices.get(name) if before is not None and changed is not None else None

    def _swapped(self, notes: tuple[Note, ...] | list[Note]) -> tuple[Note, ...]:
        changed = self.listed_changes or {}
        return tuple(changed.get(note.slug, note) for note in notes)

    @functools.cached_property
    def _ids_kept(self) -> bool:
        """Whether the notes of :attr:`listed_changes` give the ids they gave (their extractions'
        and their comments', in order; an extraction's kind, a body or a comment's text
        edited): the indices by id are then the last build's, these notes in their places."""
        before, changed = self.listed_before, self.listed_changes
        return before is not None and changed is not None and \
            all(note_ids(note) == note_ids(before.notes[slug]) for slug, note in changed.items())

    @functools.cached_property
    def _changed_notebooks(self) -> frozenset[str]:
        """The notebooks the notes of :attr:`listed_changes` are members of."""
        return frozenset(m.notebook for note in (self.listed_changes or {}).values() for m in note.memberships)

    @functools.cached_property
    def listings(self) -> dict[str, tuple[Note, ...]]:
        """Published notebook → its notes in listing order: pinned first (in their order),
        then the manual order, then the rest newest first."""
        last = self._listed("listings")
        if isinstance(last, dict):
            touched = self._changed_notebooks
            return {slug: self._swapped(notes) if slug in touched else notes for slug, notes in last.items()}
        listed = {}
        for slug, notebook in self.publication.notebooks.items():
            notes = {n.slug: n for n in self.members.get(slug, ())}
            head = [s for s in dict.fromkeys((*notebook.pinned, *notebook.order)) if s in notes]
            rest = sorted((n for s, n in notes.items() if s not in head),
                          key=lambda n: (n.date.isoformat() if n.date else "", n.slug), reverse=True)
            listed[slug] = (*(notes[s] for s in head), *rest)
        return listed

    @functools.cached_property
    def category_members(self) -> dict[tuple[str, str], dict[str, tuple[Note, ...]]]:
        """(notebook, axis key) → category → its notes, in the notebook's listing order
        (a note naming a category twice is listed once)."""
        last, before = self._listed("category_members"), self.listed_before
        if isinstance(last, dict) and before is not None:
            changed = self.listed_changes or {}
            # a notebook where a note changed its categories: its axes listed again, from its listing
            moved = {m.notebook for slug, note in changed.items()
                     for m, was in zip(note.memberships, before.notes[slug].memberships, strict=True)
                     if m.categories != was.categories}
            touched = {(m.notebook, axis, category) for note in changed.values()
                       for m in note.memberships for axis, categories in m.categories.items() for category in categories}
            return {**{axis: {category: self._swapped(notes) if (*axis, category) in touched else notes
                              for category, notes in by_name.items()}
                       for axis, by_name in last.items() if axis[0] not in moved},
                    **self._categorised(moved)}
        return self._categorised(self.publication.notebooks)

    def _categorised(self, notebooks: Iterable[str]) -> dict[tuple[str, str], dict[str, tuple[Note, ...]]]:
        """:attr:`category_members` of ``notebooks``, from their listings."""
        found: dict[tuple[str, str], dict[str, list[Note]]] = {}
        for slug in notebooks:
            notebook = self.publication.notebooks[slug]
            for note in self.listings.get(slug, ()):
                membership = note.membership(slug)
                if membership is None:
                    continue
                for axis in notebook.axes:
                    for category in dict.fromkeys(membership.categories.get(axis.key, ())):
                        found.setdefault((slug, axis.key), {}).setdefault(category, []).append(note)
        return {axis: {category: tuple(notes) for category, notes in by_name.items()}
                for axis, by_name in found.items()}

    @functools.cached_property
    def selection_notes(self) -> dict[str, frozenset[str]]:
        """Wiki slug → the notes its selection's extractions are in."""
        extractions = self.extractions
        made: dict[int, frozenset[str]] = {}  # one selection for the wikis of a perimeter: by identity
        found = {}
        # the last build's, for a selection it had (the same object): the ids being where they were
        last = self._listed("selection_notes") if self._ids_kept else None
        before = self.listed_before.selections if self.listed_before is not None else {}
        for slug, selection in self.selections.items():
            if id(selection) not in made:
                if isinstance(last, dict) and slug in last and before.get(slug) is selection:
                    made[id(selection)] = last[slug]
                else:
                    made[id(selection)] = frozenset(extractions[i][0].slug for i in selection.order
                                                    if i in extractions)
            found[slug] = made[id(selection)]
        return found

    @functools.cached_property
    def extractions(self) -> dict[str, tuple[Note, Extraction]]:
        """Published extraction id → (its note, the extraction); computed once per build (an
        id given twice is the first note's, as :attr:`Corpus.extractions` has it)."""
        last = self._listed("extractions") if self._ids_kept else None
        if isinstance(last, dict):
            found: dict[str, tuple[Note, Extraction]] = dict(last)
            for slug, note in (self.listed_changes or {}).items():
                for extraction in reversed(note.extractions):  # an id given twice in a note: its first
                    held = found.get(extraction.id)
                    if held is not None and held[0].slug == slug:  # else an earlier note's
                        found[extraction.id] = (note, extraction)
            return found
        found = {}
        for note in self.publication.notes.values():
            for extraction in note.extractions:
                found.setdefault(extraction.id, (note, extraction))
        return found

    @functools.cached_property
    def dates(self) -> dict[str, str]:
        """Published note slug → the date its page is given (ISO): its own, else its newest
        comment's, else ``""``; computed once per build (llms-full.txt's order, the sitemap
        and the feeds each ask for every note's)."""
        last = self._listed("dates")
        if isinstance(last, dict):
            return last  # the notes changed have the dates they had
        dates = {}
        for slug, note in self.publication.notes.items():
            if note.date:
                dates[slug] = note.date.isoformat()
            else:
                commented = [c.date.isoformat() for e in note.extractions for c in e.comments]
                dates[slug] = max(commented) if commented else ""
        return dates

    @functools.cached_property
    def public_ids(self) -> frozenset[str]:
        """Ids of every published extraction and comment."""
        return self.publication.shown_ids

    @functools.cached_property
    def members(self) -> dict[str, list[Note]]:
        """Published notebook → its notes, in the publication's order; computed once per build
        (each listing asks for its notebook's notes)."""
        last = self._listed("members")
        if isinstance(last, dict):
            touched = self._changed_notebooks
            return {slug: list(self._swapped(notes)) if slug in touched else notes for slug, notes in last.items()}
        return members_by_notebook(self.publication.notes.values())

    def notes_of(self, notebook: str) -> list[Note]:
        return list(self.members.get(notebook, ()))

    def bases_of(self, notebook: str) -> list[str]:
        return [slug for slug, base in self.publication.bases.items() if notebook in base.notebooks]
