"""What a note's own outputs read of the site model: the key an incremental build
recalls them by, whole, without building the page's context again.

A plain note's page, text, annotations, siblings, mirror, llms-full chunk and graph part
(:func:`generator.engine.emitters.note_outputs`) are a function of the note itself (its
file and sidecars: body, front matter, extractions, comments, hence its anchors), of the
shell every page shares (:func:`shell_digest`: settings, the site's address, bases and
notebooks, the theme, which emitters run) and of what its page shows of the rest of the
site. That last part is not listed here: it is the page's context, made as the page makes
it (:func:`note_reads`), so whatever a page comes to show — its links as they resolve, its
backlinks, the articles citing its passages, the names its people are shown by, its
coverage, its local graph, or a field added tomorrow — is what its key reads.

An edit anywhere else changes none of them, so the note's outputs are recalled as they
were: one edited note costs its own outputs, plus those of the notes whose reads it
changes (a retitled note: the notes linking to it and linked from it). Which notes those
can be is known without gathering every note's reads: :mod:`generator.engine.tracking`.

A read forgotten here would publish a stale page. The list is enforced: with the engine's
test hook on (:func:`check_reads`; the test suite turns it on) every recalled
note is made again, without any memo, and compared with what was recalled
(:func:`check_recalled`), so any test that rebuilds after an edit fails on a missing read.

An article (wiki or synthesis) reads more (:func:`article_reads`): its audit, its
pairs' states, its selection and oppositions, the proposals made to it, and the files of
every note it involves (perimeter, citations, discarded, coverage, acts it supersedes or
that supersede it): their titles, passages and comments are on its pages. Its audit,
selection and pairs' states are read by the key they are a function of (``SiteModel.evidence_keys``:
what they read, from the build cache) rather than digested whole; :func:`article_digest` keys
the article's part of the graph too, checked the same way (:func:`check_graph_part`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

from generator.corpus.model import Note, NoteType
from generator.digest import digest_of
from generator.site import pages
from generator.site.model import SiteModel
from generator.site.pages import BodyWork
from generator.site.theme import Theme

_checking = False
"""Whether every recalled output is made again and compared (:func:`check_reads`)."""


def check_reads(on: bool = True) -> None:
    """The engine's test hook: with it on, every note's outputs, audit, pairs, selection and graph
    part an incremental build recalls is made again, without any memo, and compared with what was
    recalled (:class:`StaleOutputs` when they differ). Costly: for tests, never set by Carnet itself."""
    global _checking
    _checking = on


class StaleOutputs(AssertionError):
    """A note's recalled outputs differ from what making them again gives: a read is missing
    from :func:`note_reads` (a bug of Carnet's, found by a test)."""


def checking() -> bool:
    return _checking


def keyed(site: SiteModel, slug: str) -> bool:
    """Whether the note's outputs are recalled by :func:`note_key`: a plain note, or an
    article with its audit (an article the analysis could not audit is made each time)."""
    note = site.publication.notes[slug]
    if note.type is NoteType.NOTE:
        return slug not in site.articles and slug not in site.assessments and slug not in site.selections
    return slug in site.articles


def shell_digest(site: SiteModel, theme: Theme, emitters: Iterable[str]) -> str:
    """What every note's outputs read of the site as a whole."""
    publication = site.publication
    return digest_of((publication.settings, site.base_url, publication.bases, publication.notebooks,
                      theme.memo_key(), sorted(emitters)))


def note_reads(site: SiteModel, theme: Theme, slug: str) -> tuple[object, ...]:
    """Everything a plain note's outputs read beyond the shell, recorded rather than listed:
    the note's own files (its text projection, annotations, graph part and mirror read nothing
    else of it), and what its page reads of the rest of the site — its page's context itself,
    made as the page makes it, with its body's inputs in place of its HTML
    (:class:`~generator.site.pages.BodyWork`: the body is a function of them). A field the
    context gains (another note's date beside its link, say) is in the key with no word here."""
    return (site.publication.source_of(slug), pages.note_context(site, theme, slug, _body_inputs))


def _body_inputs(work: BodyWork) -> str:
    return digest_of(work.inputs)


def article_reads(site: SiteModel, slug: str) -> tuple[object, ...]:
    """What an article's outputs read beyond what a note's do (see the module's docstring):
    :func:`article_inputs`, and the files of the notes of :func:`article_notes`."""
    perimeter, involved = _article_notes(site, slug)
    return (
        *_article_inputs(site, slug),
        sources_digest(site, perimeter),
        _sources(site, involved),
        sources_digest(site, _selection_notes(site, slug)),
    )


def _article_notes(site: SiteModel, slug: str) -> tuple[frozenset[str], set[str]]:
    """The article's perimeter, and the other notes it involves (cites, discards, covers,
    supersedes or is superseded by)."""
    audit = site.articles[slug]
    perimeter = frozenset(audit.perimeter_notes or ())
    involved = {*(link.note for link in audit.links if link.note), *(item.note for item in audit.discarded or ()),
                *audit.coverage, *audit.superseded_by, *([audit.supersedes] if audit.supersedes else ())} - perimeter
    return perimeter, involved


def article_notes(site: SiteModel, slug: str) -> set[str]:
    """Every note whose files an article's outputs read (:func:`article_reads`): its
    perimeter, the notes it involves, the notes of its selection's extractions."""
    perimeter, involved = _article_notes(site, slug)
    return {*perimeter, *involved, *_selection_notes(site, slug)}


def _article_inputs(site: SiteModel, slug: str) -> tuple[object, ...]:
    audit = site.articles[slug]
    proposals = [p for p in site.proposals if p.target == slug]
    # the audit, selection and pairs (and their tally), by what they read: megabytes, not pickled
    evidence = site.evidence_keys.get(slug)
    return (
        evidence if evidence is not None else (audit, site.selections.get(slug), site.assessments.get(slug),
                                               site.tallies.get(slug)),
        site.oppositions.get(slug), proposals,
        # a marker of a proposal to an unpublished source is redacted: which ids are public
        sorted(site.public_ids) if proposals else None,
        site.publication.names.get(slug),
    )


def article_inputs(site: SiteModel, slug: str) -> str | None:
    """Digest of what an article's outputs read beyond the notes' files: its audit and
    selection by what they read, its pairs' states and tallies, its oppositions, the
    proposals made to it, the names it shows people by. ``None`` when the audit has no key
    (its outputs are then keyed by the audit itself, megabytes: always made again)."""
    if slug not in site.evidence_keys:
        return None
    return digest_of(_article_inputs(site, slug))


@dataclass
class _Made:
    """Digests of reads made once a build and asked for many times (the model is frozen:
    they are kept here, for as long as the model lives).

    Attributes:
        sources: a set of notes → :func:`sources_digest` (the wikis on one perimeter read its notes).
        articles: article → :func:`article_digest`.
        entries: (note, notebook) → :func:`summary_reads` (its notebook's listing and its
            categories' read it).
    """

    sources: dict[frozenset[str], str] = field(default_factory=dict)
    articles: dict[str, str] = field(default_factory=dict)
    entries: dict[tuple[str, str], str] = field(default_factory=dict)


_MADE: weakref.WeakKeyDictionary[SiteModel, _Made] = weakref.WeakKeyDictionary()


def _made(site: SiteModel) -> _Made:
    made = _MADE.get(site)
    if made is None:
        made = _MADE[site] = _Made()
    return made


def _selection_notes(site: SiteModel, slug: str) -> frozenset[str]:
    """The notes of a wiki's selection's extractions (its page quotes them)."""
    return site.selection_notes.get(slug, frozenset())


def sources_digest(site: SiteModel, notes: frozenset[str]) -> str:
    """Digest of each of ``notes`` with its files' digest (``None``: not published), made
    once a build for each set (the wikis on one perimeter read the same notes)."""
    made = _made(site).sources
    if notes not in made:
        made[notes] = digest_of(_sources(site, notes))
    return made[notes]


def _sources(site: SiteModel, notes: Iterable[str]) -> list[tuple[str, object]]:
    """Each note with its files' digest (``None``: not published), in slug order."""
    publication = site.publication
    return sorted((note, publication.source_of(note) if note in publication.notes else None) for note in notes)


def article_digest(site: SiteModel, slug: str) -> str:
    """Digest of :func:`article_reads`, made once a build: an article's pages and its part
    of the graph are both keyed by it (its audit and selection weigh megabytes)."""
    made = _made(site).articles
    if slug not in made:
        made[slug] = digest_of(article_reads(site, slug))
    return made[slug]


def note_key(shell: str, site: SiteModel, theme: Theme, slug: str) -> str:
    reads = note_reads(site, theme, slug)
    return digest_of((shell, slug, reads, article_digest(site, slug) if slug in site.articles else None))


def check_graph_part(slug: str, recalled: object, made: object) -> None:
    """Refuse an article's part of the graph recalled for ``slug`` that differs from ``made``."""
    if recalled != made:
        raise StaleOutputs(f"the part of the graph recalled for article {slug!r} differs from the one it gives "
                           "now: a read is missing from generator/engine/reads.py:article_reads")


def listing_key(shell: str, site: SiteModel, theme: Theme, page: str, notebook: str, notes: list[Note]) -> str:
    """What a notebook's listing page reads: the shell, and of each note it lists (in order)
    what its entry shows. An edit to a note's body or extractions' text leaves it unchanged."""
    return digest_of((shell, page, notebook, [summary_reads(site, theme, note, notebook) for note in notes]))


def entries_made(site: SiteModel) -> dict[tuple[str, str], str]:
    """The listing entries' digests (:func:`summary_reads`) made or given so far for ``site``."""
    return dict(_made(site).entries)


def give_entries(site: SiteModel, theme: Theme, entries: dict[tuple[str, str], str]) -> None:
    """Entries' digests known already (a rebuild's, carried from the last build by
    :func:`generator.engine.tracking.carried_entries`), taken as made for ``site``; with the
    read check on, each is made again and compared."""
    if _checking:
        notes = site.publication.notes
        for (slug, notebook), digest in entries.items():
            if slug in notes and notebook in site.publication.notebooks and notes[slug].membership(notebook) and \
                    digest != digest_of(pages.note_summary(site, theme, notes[slug], notebook, str)):
                raise StaleOutputs(f"the listing entry of note {slug!r} in {notebook!r} was taken from the last "
                                   "build, but an edit changed it: generator/engine/tracking.py:carried_entries")
    _made(site).entries.update(entries)


def summary_reads(site: SiteModel, theme: Theme, note: Note, notebook: str) -> str:
    """What a note's entry in a listing of ``notebook`` shows of it, recorded rather than listed:
    the digest of the entry itself, as :func:`pages.note_summary` makes it for the notebook's own
    page, addresses left site-relative (a category page's entry shows a part of the same
    categories, nothing else). Made once a build for each note and notebook: its notebook's
    listing and its categories' read it."""
    entries = _made(site).entries
    made = entries.get((note.slug, notebook))
    if made is None:
        made = entries[(note.slug, notebook)] = digest_of(pages.note_summary(site, theme, note, notebook, str))
    return made


def check_recalled(slug: str, recalled: object, made: object) -> None:
    """Refuse outputs recalled for ``slug`` that differ from ``made`` (made again, from scratch)."""
    if recalled != made:
        raise StaleOutputs(f"the outputs recalled for note {slug!r} differ from the ones it gives now: "
                           "a read is missing from generator/engine/reads.py:note_reads")
