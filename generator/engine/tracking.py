"""Which notes an edit can reach: a rebuild makes again the keys (:func:`reads.note_key`)
of those alone, and takes the last build's for the others.

A plain note's reads (:mod:`generator.engine.reads`) consult the note itself and the notes
around it: its links' targets, its backlinks, its neighbours in the note graph (notes it
cites or links, notes citing or linking it) and the articles reusing its extractions
(:func:`consulted`). Everything else they read is shared by every note: the shell, the
assets, the names each notebook shows people by (:func:`world_digest`). So when the notes
whose files changed are ``C`` (edited, added, removed, published or not) and the shared
part is as it was, a note's reads can have changed only if

- it is in ``C``;
- it consulted a note of ``C`` in the last build (:attr:`KeyBook.readers`);
- a note of ``C`` consults it now: every relation above goes both ways (a link is a
  backlink of its target, an edge of the graph is the neighbours' both), so a note of ``C``
  that now points at it has it among the notes it consults. A broken link mended by a note
  added (or renamed, or given an alias) is one: the link is the new note's backlink. (Mended
  by a private note, it would be a link to a private page, which stops the build.)

An article (wiki or synthesis) reads more (:func:`reads.article_reads`): the files of
every note of its perimeter, of the notes it involves and of its selection's
(:func:`reads.article_notes`), which do not read it back, and what its audit, selection,
pairs and proposals come to (:func:`reads.article_inputs`). Its key is made again when
that digest changed, or a note of ``C`` is among those notes now or was in the last
build (a note added to its perimeter is one it did not consult then).

Every other note's key is the last build's. The rule is checked, not trusted: with
the engine's read check (:func:`generator.engine.reads.check_reads`, on in the test suite) every key is made again and compared
(:func:`check_tracked`), so an edit the rule misses fails any test that makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generator.digest import digest_of
from generator.engine import reads
from generator.kinds import LinkKind
from generator.site.model import SiteModel

if TYPE_CHECKING:
    from generator.engine.emitters import FiledOutputs


@dataclass
class KeyBook:
    """What a build keeps of its note keys for the next one.

    Attributes:
        world: :func:`world_digest` of that build.
        sources: every note of the corpus (published or not) → the digest of its files.
        keys: each keyed note → its key.
        readers: note → the keyed notes whose reads consulted it.
        consults: each keyed note → the notes its reads consulted (``readers`` the other
            way round: a rebuild takes a note made again out of its old notes' readers
            without looking at every note's).
        inputs: each keyed article → :func:`reads.article_inputs` (``None``: made each time).
        entries: (note, notebook) → the digest of the note's entry in the notebook's listings
            (:func:`reads.summary_reads`), as that build made them.
        involved: each keyed article with ``inputs`` → :func:`reads.article_notes`, a function
            of what its inputs digest (its audit and selection): taken again while they are the
            same, not walked (an article's discarded passages are thousands).
        filed: each keyed note → its outputs as that build filed them (as the build cache
            keeps them: :meth:`FiledOutputs.stored`), the value its key recalls. Only for a
            build of this process (never pickled): the next one carries those of the notes
            whose keys it takes from this book, not asking the cache note by note.
    """

    world: str
    sources: dict[str, str]
    keys: dict[str, str]
    readers: dict[str, frozenset[str]] = field(default_factory=dict)
    consults: dict[str, frozenset[str]] = field(default_factory=dict)
    inputs: dict[str, str | None] = field(default_factory=dict)
    entries: dict[tuple[str, str], str] = field(default_factory=dict)
    involved: dict[str, frozenset[str]] = field(default_factory=dict)
    filed: dict[str, FiledOutputs] = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "filed": {}}  # a property of the process that made it


@dataclass
class Tracking:
    """What a build gives :func:`tracked_keys` (through :func:`generator.pipeline.render_site`)
    and takes back.

    Attributes:
        sources: every note of the corpus → the digest of its files.
        assets: the content's assets.
        last: the last build's book (``None``: every key is made).
        book: this build's, once its keys are made.
    """

    sources: dict[str, str]
    assets: list[str]
    last: KeyBook | None
    book: KeyBook | None = None


def world_digest(site: SiteModel, shell: str, assets: Iterable[str]) -> str:
    """What every note's reads share beyond the notes: the shell, the content's assets (a
    link to one resolves or not), the published ones, and the names each governing
    notebook shows people by (a notebook-wide rule, made from all its members)."""
    publication = site.publication
    names = {rule: publication.names.get(slug, {}) for slug, rule in publication.governing.items()}
    return digest_of((shell, sorted(assets), site.published_assets,
                      sorted((rule, sorted(shown.items())) for rule, shown in names.items())))


def consulted(site: SiteModel, slug: str) -> set[str]:
    """The notes a note's reads consult besides itself (see the module's docstring)."""
    around: set[str] = set()
    for _use, target in site.links.get(slug, []):
        if target.kind is LinkKind.NOTE:
            around.add(target.key)
        elif target.note:
            around.add(target.note)
    around.update(site.backlinks.get(slug, []))
    for edge in site.note_graph.around.get(f"note:{slug}", ()):
        for end in (edge.source, edge.target):
            if end.startswith("note:"):
                around.add(end[len("note:"):])
    for extraction in site.publication.notes[slug].extractions:
        around.update(site.reuse.get(extraction.id, []))
    around.discard(slug)
    return around


def consults_of(site: SiteModel, slug: str, involved: Callable[[str], Iterable[str]] | None = None) -> set[str]:
    """The notes a keyed note's reads consult: :func:`consulted`, and for an article the
    notes whose files it reads (:func:`reads.article_notes`, or ``involved(slug)``: the same, known)."""
    around = consulted(site, slug)
    if slug in site.articles:
        around.update(reads.article_notes(site, slug) if involved is None else involved(slug))
        around.discard(slug)
    return around


def tracked_keys(site: SiteModel, keyed: list[str], sources: dict[str, str], world: str,
                 last: KeyBook | None, key: Callable[[str], str]) -> tuple[dict[str, str], KeyBook]:
    """Each of the ``keyed`` notes' key (``key(slug)`` makes one): made for the notes an
    edit since ``last`` can reach, the last build's for the others; with the book the
    next build takes. ``sources``: every note of the corpus → the digest of its files."""
    wanted = set(keyed)
    articles = [slug for slug in keyed if slug in site.articles]
    inputs = {slug: reads.article_inputs(site, slug) for slug in articles}
    notes_of: dict[str, frozenset[str]] = {}

    def involved(slug: str) -> frozenset[str]:
        """:func:`reads.article_notes`, the last book's when the article's inputs are the same."""
        if slug not in notes_of:
            kept = last.involved.get(slug) if last is not None and inputs[slug] is not None \
                and last.inputs.get(slug) == inputs[slug] else None
            notes_of[slug] = kept if kept is not None else frozenset(reads.article_notes(site, slug))
        return notes_of[slug]

    if last is None or last.world != world:
        fresh = wanted
        keys: dict[str, str] = {}
        readers: dict[str, frozenset[str]] = {}
        consults: dict[str, frozenset[str]] = {}
    else:
        # the book is mended, not made again: what a note made again consulted, and what consulted
        # it, is looked up by the note (each map the other's inverse); the rest is copied whole
        changed = {slug for slug, _source in sources.items() ^ last.sources.items()}
        fresh = set(changed)
        for slug in changed:
            fresh.update(last.readers.get(slug, ()))
            if slug in site.publication.notes:
                fresh.update(consulted(site, slug))
        fresh.update(wanted - last.keys.keys())
        for slug in articles:  # what it consults does not consult it back: asked of it
            if slug not in fresh and (inputs[slug] is None or last.inputs.get(slug) != inputs[slug]
                                      or not changed.isdisjoint(involved(slug))):
                fresh.add(slug)
        fresh &= wanted
        keys, readers, consults = dict(last.keys), dict(last.readers), dict(last.consults)
        for slug in fresh | (last.keys.keys() - wanted):  # made again, or keyed no more: out of the book
            keys.pop(slug, None)
            for note in consults.pop(slug, ()):
                left = readers[note] - {slug}
                if left:
                    readers[note] = left
                else:
                    del readers[note]
    for slug in keyed:
        if slug in fresh:
            keys[slug] = key(slug)
            around = consults[slug] = frozenset(consults_of(site, slug, involved))
            for note in around:
                readers[note] = readers.get(note, frozenset()) | {slug}
    book = KeyBook(world, sources, keys, readers, consults, inputs,
                   involved={slug: involved(slug) for slug in articles if inputs[slug] is not None})
    if reads.checking():
        check_tracked(keyed, keys, fresh, key)
        check_book(site, keyed, book)
    return keys, book


def carried_entries(site: SiteModel, tracking: Tracking) -> dict[tuple[str, str], str]:
    """The last build's listing entries (:func:`reads.summary_reads`) that an edit since
    cannot have changed. A plain note's entry shows the note's own files (title, date,
    summary, categories, counts of its passages and comments) through the shell (the
    notebook's axes, the theme's words) and the names its people are shown by: so, the
    shared part being as it was, one of a note whose files are unchanged is the same. An
    article's entry shows its audit's lifecycle and the titles of the acts around it: made
    again. Checked, not trusted: with the read check on, each is made again and compared
    (:func:`reads.give_entries`)."""
    last, book = tracking.last, tracking.book
    if last is None or book is None or last.world != book.world:
        return {}
    changed = {slug for slug, _source in tracking.sources.items() ^ last.sources.items()}
    return {key: digest for key, digest in last.entries.items()
            if key[0] not in changed and key[0] not in site.articles}


def check_book(site: SiteModel, keyed: list[str], book: KeyBook) -> None:
    """Refuse a book mended after an edit that is not the one made anew: every keyed note
    with what it consults now, and their readers; each article's notes involved."""
    consults = {slug: frozenset(consults_of(site, slug)) for slug in keyed}
    readers: dict[str, set[str]] = {}
    for slug, around in consults.items():
        for note in around:
            readers.setdefault(note, set()).add(slug)
    if book.keys.keys() != consults.keys() or book.consults != consults or \
            book.readers != {note: frozenset(slugs) for note, slugs in readers.items()} or \
            any(notes != frozenset(reads.article_notes(site, slug)) for slug, notes in book.involved.items()):
        raise reads.StaleOutputs("the notes each note consults, as the last build's book was mended, differ from "
                                 "what they consult now: generator/engine/tracking.py:tracked_keys")


def check_tracked(keyed: list[str], keys: Mapping[str, str], fresh: set[str], key: Callable[[str], str]) -> None:
    """Refuse a key taken from the last build that making it again changes."""
    for slug in keyed:
        if slug not in fresh and keys[slug] != key(slug):
            raise reads.StaleOutputs(f"the key of note {slug!r} was taken from the last build, but an edit "
                                     "changed what it reads: a relation is missing from "
                                     "generator/engine/tracking.py:consulted")
