"""What goes out (INV-12): the public part of the corpus, with names as each
notebook's rule shows them. Pure: corpus in, publication out.

Emitters only ever see a :class:`Publication`, never the corpus, so a private
notebook, a note only in private notebooks, a masked extraction or a withdrawn
comment's text cannot reach an output file by accident.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from generator.corpus.authors import NotePeople, display_names, governing_notebook, laxer_notebooks
from generator.corpus.model import Base, Corpus, Note, Notebook, SiteSettings, members_by_notebook, note_ids
from generator.kinds import LinkKind
from generator.problems import Problem
from generator.text import natural_key

if TYPE_CHECKING:  # a rebuild with nothing to do unpickles a publication's reports: no markdown parser for it
    from generator.corpus.links import LinkTarget, LinkUse


@dataclass(frozen=True)
class NotebookReport:
    """What publishing one notebook sends out: shown in every build's output."""

    notebook: str
    notes: int
    comments: int
    withdrawn: int
    authors: tuple[str, ...]
    stricter: tuple[str, ...] = ()
    """Its notes whose names another notebook they are also in shows by a stricter rule
    (that rule applies on the note's page, for every reader)."""


@dataclass
class Publication:
    """The public corpus.

    Attributes:
        notebooks: public notebooks.
        bases: bases holding at least one public notebook, listing only public ones.
        notes: notes in at least one public notebook; their memberships in private
            notebooks and their masked extractions are removed.
        names: note slug → (real name → published name) for that note's page.
        governing: note slug → slug of the notebook whose author rule applies.
        unpublished: slugs of the notes that are not published (for link checks).
        reports: one per public notebook.
        laxer: note slug → the public notebooks holding it whose rule protects less than
            its governing one's (only notes with some): their names are shown stricter.
        sources: published note slug → its files' digest (:attr:`Corpus.sources`); with the
            public notebooks, all a published note is a function of.
    """

    settings: SiteSettings
    notebooks: dict[str, Notebook]
    bases: dict[str, Base]
    notes: dict[str, Note]
    names: dict[str, dict[str, str]]
    governing: dict[str, str]
    unpublished: frozenset[str]
    reports: list[NotebookReport] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    laxer: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def source_of(self, slug: str) -> object:
        """What a key takes for a published note: its files' digest (or the note itself)."""
        return self.sources.get(slug) or self.notes[slug]

    def notes_of(self, notebook: str) -> list[Note]:
        return list(self._members.get(notebook, ()))

    @functools.cached_property
    def extraction_ids(self) -> frozenset[str]:
        """Ids of the extractions that go out (masked ones and private notes' are not here):
        made once, asked by the analysis and by the site model."""
        return frozenset(e.id for note in self.notes.values() for e in note.extractions)

    @functools.cached_property
    def shown_ids(self) -> frozenset[str]:
        """Ids of every extraction and comment that goes out (a comment withdrawn included: its
        tombstone is shown), made once: asked of every link to a passage and by the site model."""
        return self.extraction_ids | frozenset(
            c.id for note in self.notes.values() for e in note.extractions for c in e.comments)

    @functools.cached_property
    def _members(self) -> dict[str, list[Note]]:
        return members_by_notebook(self.notes.values())  # once: each notebook's report and names ask

    def name(self, note: str, person: str) -> str:
        return self.names.get(note, {}).get(person, "?")


def publish(corpus: Corpus) -> Publication:
    notebooks = {slug: nb for slug, nb in corpus.notebooks.items() if nb.is_public}
    bases = {}
    for slug, base in corpus.bases.items():
        public = tuple(nb for nb in base.notebooks if nb in notebooks)
        if public:
            bases[slug] = replace(base, notebooks=public)

    notes: dict[str, Note] = {}
    for slug, note in corpus.notes.items():
        published = _published(note, notebooks)
        if published is not None:
            notes[slug] = published

    members = members_by_notebook(notes.values())
    people = {slug: NotePeople.of(note) for slug, note in notes.items()}  # each note's part, for every notebook
    shown_by_notebook = {slug: display_names(nb, members.get(slug, []), people) for slug, nb in notebooks.items()}
    names: dict[str, dict[str, str]] = {}
    governing: dict[str, str] = {}
    laxer: dict[str, tuple[str, ...]] = {}
    rules: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {}  # a few combinations of notebooks, not one a note
    for slug, note in notes.items():
        held = tuple(m.notebook for m in note.memberships)
        if held not in rules:
            holding = [notebooks[notebook] for notebook in held]
            rules[held] = (governing_notebook(holding).slug, tuple(nb.slug for nb in laxer_notebooks(holding)))
        rule, others = rules[held]
        governing[slug] = rule
        names[slug] = shown_by_notebook[rule]
        if others:
            laxer[slug] = others

    publication = Publication(
        settings=corpus.settings, notebooks=notebooks, bases=bases, notes=notes, names=names,
        governing=governing, unpublished=frozenset(set(corpus.notes) - set(notes)),
        sources={slug: corpus.sources[slug] for slug in notes if slug in corpus.sources}, laxer=laxer,
    )
    publication.reports = [_report(publication, slug, people) for slug in notebooks]
    return publication


def _published(note: Note, notebooks: Mapping[str, Notebook]) -> Note | None:
    """``note`` as it goes out: without its memberships of private notebooks and its masked
    extractions; ``None`` in no public notebook (``notebooks``: the public ones)."""
    memberships = tuple(m for m in note.memberships if m.notebook in notebooks)
    if not memberships:
        return None
    extractions = tuple(e for e in note.extractions if not e.masked)
    if len(memberships) == len(note.memberships) and len(extractions) == len(note.extractions):
        return note  # nothing private in it: the note as it is (a copy costs 20 µs a note)
    return replace(note, memberships=memberships, extractions=extractions)


CARRIED_IDS: Final = ("extraction_ids", "shown_ids")
"""The sets of ids a :class:`Publication` makes once (cached properties), which
:func:`publication_patched` carries while the notes changed give the same ids."""


def publication_patched(last: Publication, before: Corpus, corpus: Corpus, changed: Iterable[str]) -> Publication | None:
    """:func:`publish` of ``corpus``, from ``last`` (``publish(before)``), when the notes ``changed``
    alone differ and each keeps its notebooks, its date, which of its passages are masked and
    the people on it (a body, a title, a quote edited: ``carnet serve``'s edit): they are put in
    their places, every name, rule and report taken as it was (each is a function of those alone).
    ``None`` (publish in full) otherwise: a note added or removed, a notebook or the settings changed."""
    changed = list(changed)
    if (corpus.settings, corpus.notebooks, corpus.bases) != (before.settings, before.notebooks, before.bases) \
            or not all(slug in before.notes and slug in corpus.notes for slug in changed):
        return None
    notes, sources = dict(last.notes), dict(last.sources)
    ids = True  # the ids going out are the same: their sets are carried
    for slug in changed:
        old, new = before.notes[slug], corpus.notes[slug]
        if old.memberships != new.memberships or old.date != new.date \
                or [e.masked for e in old.extractions] != [e.masked for e in new.extractions]:
            return None
        if slug not in last.notes:  # in no public notebook, then as now
            continue
        published = _published(new, last.notebooks)
        assert published is not None  # its notebooks are those it was published by
        if NotePeople.of(published) != NotePeople.of(last.notes[slug]):
            return None
        ids = ids and note_ids(published) == note_ids(last.notes[slug])
        notes[slug] = published
        if slug in corpus.sources:
            sources[slug] = corpus.sources[slug]
        else:
            sources.pop(slug, None)
    patched = replace(last, notes=notes, sources=sources)
    for name in CARRIED_IDS if ids else ():
        if name in last.__dict__:  # a cached property, made by the last build
            patched.__dict__[name] = last.__dict__[name]
    return patched


def _report(publication: Publication, notebook: str, people: Mapping[str, NotePeople]) -> NotebookReport:
    comments = withdrawn = 0
    authors: set[str] = set()
    members = publication.notes_of(notebook)
    for note in members:
        part = people[note.slug]
        comments += part.comments
        withdrawn += part.withdrawn
        shown = publication.names.get(note.slug, {})
        authors.update(shown.get(name, "?") for name in part.names)  # as Publication.name words them
    stricter = tuple(note.slug for note in members if notebook in publication.laxer.get(note.slug, ()))
    return NotebookReport(notebook, len(members), comments, withdrawn, tuple(sorted(authors, key=natural_key)),
                          stricter)


def private_link_problems(publication: Publication, corpus: Corpus,
                          links: Mapping[str, Sequence[tuple[LinkUse, LinkTarget]]]) -> list[Problem]:
    """A public page pointing at an unpublished note or a masked extraction is an error:
    either the link goes, or the target is published on purpose (INV-12)."""
    problems: list[Problem] = []
    # the ids a note shows: with no id given twice, those of every published note (made once), else
    # the target's own, made once for all the links to it (a wiki makes hundreds)
    everywhere = publication.shown_ids if corpus.holders.unique else None
    shown: dict[str, frozenset[str]] = {}
    for slug, note in publication.notes.items():
        for use, target in links.get(slug, []):
            if target.kind is LinkKind.NOTE and target.key in publication.unpublished:
                what = f"note {target.key!r}, which is in no public notebook"
            elif target.kind in (LinkKind.EXTRACTION, LinkKind.COMMENT, LinkKind.QUOTE) and target.note in publication.unpublished:
                what = f"{target.kind} {target.key!r} of note {target.note!r}, which is in no public notebook"
            elif target.kind in (LinkKind.EXTRACTION, LinkKind.COMMENT) and target.note in publication.notes and \
                    target.key not in (everywhere if everywhere is not None
                                       else _shown_ids(shown, publication.notes[target.note])):
                what = f"{target.kind} {target.key!r}, which is masked"
            else:
                continue
            problems.append(Problem(
                note.source.file, use.line, "private-link", f"this public page links to {what}",
                "Remove the link, or publish the target (add it to a public notebook, unmask it)."))
    return problems


def _shown_ids(shown: dict[str, frozenset[str]], note: Note) -> frozenset[str]:
    """The ids of the extractions and comments a published note shows, kept in ``shown``."""
    ids = shown.get(note.slug)
    if ids is None:
        ids = shown[note.slug] = frozenset({*(e.id for e in note.extractions),
                                            *(c.id for e in note.extractions for c in e.comments)})
    return ids


def shows(note: Note, key: str) -> bool:
    """A published note shows the extraction or comment ``key`` (asked for each link to a
    passage: no set made of every id of the note each time)."""
    return any(e.id == key or any(c.id == key for c in e.comments) for e in note.extractions)


def private_perimeter_problems(publication: Publication,
                               perimeters: Mapping[str, Sequence[str] | None]) -> list[Problem]:
    """A published article's audit panels list its perimeter (``perimeters``: article slug →
    the notes of its perimeter, ``None`` when unknown): it may hold only published notes, or
    the panels would leak private ones (INV-12)."""
    problems = []
    for slug, notes in perimeters.items():
        if slug not in publication.notes or not notes:
            continue
        hidden = [n for n in notes if n in publication.unpublished]
        if hidden:
            note = publication.notes[slug]
            problems.append(Problem(
                note.source.file, note.field_lines.get("perimeter", 1), "private-perimeter",
                f"the perimeter of this public article holds {len(hidden)} unpublished note(s)",
                "Define the perimeter on a public notebook, or publish those notes."))
    return problems
