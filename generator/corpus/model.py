"""The corpus model: what the content says, typed, validated, and nothing more.

No rendering and no I/O here. Instances are built by :mod:`generator.corpus.load`
and never mutated afterwards by the pipeline.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Any


@dataclass(frozen=True)
class SourceRef:
    """Where something was written: content-relative POSIX path and 1-based line."""

    file: str
    line: int


@dataclass(frozen=True)
class Licence:
    """The licence the published site is under (shown in the footer and in JSON-LD)."""

    name: str
    url: str | None = None


@dataclass(frozen=True)
class SiteSettings:
    """``carnet.yaml``.

    Attributes:
        title: the site's title.
        base_url: absolute URL the site is published at, ending with ``/`` (canonical links).
        language: BCP 47 tag of the content (``fr``), set on every page.
        licence: the licence of the published content.
        description: one paragraph shown on the home page.
        contest_url: URL template of the "contest this claim" link ({claim}, {page}, {title}).
        extra: keys for later stages (``llm``, ``embeddings``), kept as written.
    """

    title: str
    base_url: str
    language: str
    licence: Licence
    description: str = ""
    contest_url: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def output_size(self, key: str, default: int) -> int:
        """``outputs.<key>`` (checked when the settings are read: a whole number above 0),
        or ``default`` when the settings do not say."""
        raw = self.extra.get("outputs")
        return int(raw.get(key, default)) if isinstance(raw, dict) else default


class Visibility(str, Enum):
    PUBLIC = "public"
    PRIVATE = "private"


class AuthorRule(str, Enum):
    """How a notebook shows the names of people (note authors, extraction and comment authors)."""

    FULL_NAME = "full"
    INITIALS = "initials"
    PSEUDONYM = "pseudonym"

    @property
    def protection(self) -> int:
        """Higher protects more; a note in several notebooks uses the most protective rule."""
        return {"full": 0, "initials": 1, "pseudonym": 2}[self.value]


@dataclass(frozen=True)
class Axis:
    """One independent list of categories of a notebook (theme, year, territory…).

    Attributes:
        key: identifier used in note memberships (``theme``).
        title: label shown to readers (``Thème``).
        categories: the allowed categories, in the order the notebook lists them.
    """

    key: str
    title: str
    categories: tuple[str, ...]


@dataclass(frozen=True)
class Notebook:
    """A notebook (*carnet*): a curated collection of notes with its own categories.

    Attributes:
        slug: file stem of ``notebooks/<slug>.yaml``.
        axes: up to three category axes; categories live on note↔notebook memberships.
        pinned: notes shown first, in this order.
        order: manual (narrative) order of the following notes; the rest by date.
        visibility: private notebooks appear in no output at all.
        author_rule: how people's names are published from this notebook.
        pseudonym_prefix: with the pseudonym rule, names become ``"<prefix> <n>"``.
        pseudonyms: fixed pseudonyms by person (a name mapped to itself stays public).
        item_lines: (list field, value) → line, for messages.
    """

    slug: str
    title: str
    description: str
    writing_guide: str
    axes: tuple[Axis, ...]
    pinned: tuple[str, ...]
    order: tuple[str, ...]
    visibility: Visibility
    author_rule: AuthorRule
    pseudonym_prefix: str
    pseudonyms: dict[str, str]
    source: SourceRef
    item_lines: dict[tuple[str, str], int] = field(default_factory=dict, compare=False)

    def line_of(self, key: str, value: str) -> int:
        """Line of ``value`` in list field ``key`` (``pinned``, ``order``)."""
        return self.item_lines.get((key, value), self.source.line)

    @property
    def is_public(self) -> bool:
        return self.visibility is Visibility.PUBLIC

    def axis(self, key: str) -> Axis | None:
        return next((axis for axis in self.axes if axis.key == key), None)


@dataclass(frozen=True)
class Base:
    """A knowledge base: groups notebooks (N-N: a notebook may sit in several bases).

    Attributes:
        item_lines: (list field, value) → line, for messages.
    """

    slug: str
    title: str
    description: str
    notebooks: tuple[str, ...]
    source: SourceRef
    item_lines: dict[tuple[str, str], int] = field(default_factory=dict, compare=False)

    def line_of(self, key: str, value: str) -> int:
        return self.item_lines.get((key, value), self.source.line)


class NoteType(StrEnum):  # StrEnum: str() and f-strings give the value, as for the other kinds
    NOTE = "note"
    WIKI = "wiki"
    SYNTHESIS = "synthesis"
    ANSWER = "answer"  # a question answered from the corpus, saved by ``carnet ask --save``


@dataclass(frozen=True)
class Membership:
    """A note's place in a notebook, with the categories it has *there* (INV-11).

    Attributes:
        notebook: the notebook's slug.
        categories: axis key → categories of that axis, in the order written.
        line: line of the membership in the note's front matter.
        axis_lines: line of each axis in the front matter (for messages).
    """

    notebook: str
    categories: dict[str, tuple[str, ...]]
    line: int
    axis_lines: dict[str, int] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Withdrawal:
    """A withdrawn comment: its text is no longer published; a tombstone is."""

    date: dt.date
    reason: str


class Stance(StrEnum):
    """A comment's position on its passage (a ``str``: it reads as its value everywhere)."""

    AGREE = "agree"
    DISAGREE = "disagree"
    NUANCE = "nuance"
    QUESTION = "question"
    NEUTRAL = "neutral"


@dataclass(frozen=True)
class Comment:
    """A comment on an extraction (one debate per note, visible from every notebook).

    Attributes:
        text: the comment, or ``None`` when withdrawn and removed from the file.
        text_sha256: hash of the original text, kept for the integrity of adopted acts.
        stance: :class:`Stance`.
    """

    id: str
    extraction: str
    author: str
    date: dt.date
    stance: Stance
    text: str | None
    text_sha256: str
    withdrawn: Withdrawal | None
    source: SourceRef


@dataclass(frozen=True)
class Extraction:
    """An exact passage of a note (anchored later, never by offsets typed by hand).

    Attributes:
        quote: the exact text; may span several paragraphs.
        prefix, suffix: optional context to tell apart several occurrences.
        occurrence: 1-based hint used only when prefix/suffix do not decide.
        masked: a masked extraction appears in no output and counts nowhere.
        quote_span: where the quote is written in the extractions file (for
            ``check --fix-anchors --write``).
    """

    id: str
    note: str
    quote: str
    prefix: str
    suffix: str
    occurrence: int | None
    kind: str
    author: str
    date: dt.date | None
    masked: bool
    comments: tuple[Comment, ...]
    source: SourceRef
    quote_span: Any = field(default=None, compare=False)

    @property
    def live_comments(self) -> list[Comment]:
        """The debate as it stands: withdrawn comments left out."""
        return [c for c in self.comments if c.withdrawn is None]

    @property
    def disagreements(self) -> int:
        """Live comments that disagree with the passage — counted here once for every
        view (page, selection, context, ranking)."""
        return sum(c.stance is Stance.DISAGREE for c in self.live_comments)


@dataclass(frozen=True)
class Note:
    """A markdown note (``notes/**/<slug>.md``) with its extractions.

    Attributes:
        body: the markdown after the front matter (NFC, LF line ends).
        body_line: file line where ``body`` starts, to report body problems.
        media: content-relative path of the audio/video of a transcript.
        duration: length of the media in seconds (ends the last speaker turn).
        extra: front-matter keys owned by later stages (wiki perimeter, adoption…).
        field_lines: line of each front-matter field (for messages).
        article: for a wiki or a synthesis, its :class:`~generator.corpus.article.ArticleSpec`.
        aliases: former slugs of the note; their addresses redirect to it.
    """

    slug: str
    title: str
    type: NoteType
    date: dt.date | None
    authors: tuple[str, ...]
    summary: str
    memberships: tuple[Membership, ...]
    media: str | None
    duration: float | None
    body: str
    body_line: int
    extractions: tuple[Extraction, ...]
    source: SourceRef
    extra: dict[str, Any] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict, compare=False)
    article: Any = None
    aliases: tuple[str, ...] = ()

    def membership(self, notebook: str) -> Membership | None:
        return next((m for m in self.memberships if m.notebook == notebook), None)


def corpus_patched(last: Corpus, notes: dict[str, Note], sources: dict[str, str], changed: Iterable[str]) -> Corpus:
    """``last`` with ``notes`` and ``sources``, where the notes ``changed`` alone differ (parsed
    again: ``carnet serve``'s edit). Its index of the ids (:attr:`Corpus.holders`, made already)
    is carried, those notes' entries put in place, when they give the same ids in the same
    order (a body, a quote or a comment edited) and no id is given twice: at 5,000 notes with
    evidence, 100,000 ids not indexed again an edit. Otherwise made anew when asked for."""
    corpus = replace(last, notes=notes, sources=sources)
    made = last.__dict__.get("holders")  # a cached property: only if the last build made it
    if not isinstance(made, Holders) or not made.unique:
        return corpus
    edited = [(last.notes.get(slug), notes.get(slug)) for slug in changed]
    for old, new in edited:
        if old is None or new is None or note_ids(old) != note_ids(new):
            return corpus
    extraction, comment = dict(made.extraction), dict(made.comment)  # in their order: each id where it was
    for _old, new in edited:
        assert new is not None
        for item in new.extractions:
            extraction[item.id] = (new, item)
            for said in item.comments:
                comment[said.id] = (new, item)
    corpus.__dict__["holders"] = Holders(extraction, comment, made.extractions_given, made.comments_given)
    return corpus


def note_ids(note: Note) -> list[tuple[str, list[str]]]:
    """The ids a note gives, in order: each extraction's with its comments'. An edit that keeps
    them (a body, a quote, a kind, a comment's text) leaves every index by id in place."""
    return [(item.id, [said.id for said in item.comments]) for item in note.extractions]


def members_by_notebook(notes: Iterable[Note]) -> dict[str, list[Note]]:
    """Notebook slug → its notes, in the order given (each note once)."""
    members: dict[str, dict[str, Note]] = {}
    for note in notes:
        for membership in note.memberships:
            members.setdefault(membership.notebook, {})[note.slug] = note
    return {notebook: list(members_of.values()) for notebook, members_of in members.items()}


@dataclass(frozen=True)
class Holders:
    """Which note holds each extraction and comment id: the first note (in content order)
    giving it. An id given twice is an error validation reports; until it is mended,
    everything that reads an extraction or comment by id reads the holder's.

    Attributes:
        extraction: extraction id → (the note holding it, the extraction).
        comment: comment id → (the note holding it, the extraction it comments on).
        extractions_given, comments_given: how many the notes give (more than are held
            when an id is given twice).
    """

    extraction: dict[str, tuple[Note, Extraction]]
    comment: dict[str, tuple[Note, Extraction]]
    extractions_given: int
    comments_given: int

    @property
    def unique(self) -> bool:
        """No id given twice: each extraction and comment is held by the note giving it."""
        return len(self.extraction) == self.extractions_given and len(self.comment) == self.comments_given


@dataclass(frozen=True)
class Corpus:
    """Everything under the content directory, loaded and type-checked.

    Attributes:
        assets: content-relative paths of every file under ``assets/`` that may be published
            (NFC; :mod:`generator.corpus.assets` refuses active ones).
        asset_paths: each of ``assets`` → its path on disk (a name may be stored decomposed).
        proposals: section-operation proposals (:class:`~generator.corpus.proposal.Proposal`).
        verification: verdicts and contestations
            (:class:`~generator.corpus.verdicts.VerificationRecords`).
        sources: note slug → sha256 of its files (note and sidecar, with their paths). A
            note is a function of these bytes alone, so a build's keys take this digest
            rather than pickling the note (a note with many extractions is slow to pickle).
    """

    settings: SiteSettings
    bases: dict[str, Base]
    notebooks: dict[str, Notebook]
    notes: dict[str, Note]
    assets: frozenset[str]
    asset_paths: dict[str, str] = field(default_factory=dict)
    proposals: tuple[Any, ...] = ()
    verification: Any = None
    oppositions: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def source_of(self, slug: str) -> object:
        """What a key takes for a note: its files' digest, or the note itself where the
        corpus was not read from files (tests build some in memory)."""
        return self.sources.get(slug) or self.notes[slug]

    def notes_of(self, notebook: str) -> list[Note]:
        return list(self._members.get(notebook, ()))

    @functools.cached_property
    def _members(self) -> dict[str, list[Note]]:
        return members_by_notebook(self.notes.values())  # once: every perimeter asks for one notebook's

    @functools.cached_property
    def holders(self) -> Holders:
        """Which note holds each id (computed once: the corpus never changes after loading;
        validation, the audits and the selections all ask)."""
        extraction: dict[str, tuple[Note, Extraction]] = {}
        comment: dict[str, tuple[Note, Extraction]] = {}
        given = comments = 0
        for note in self.notes.values():
            given += len(note.extractions)
            for item in note.extractions:
                extraction.setdefault(item.id, (note, item))
                if item.comments:
                    comments += len(item.comments)
                    for said in item.comments:
                        comment.setdefault(said.id, (note, item))
        return Holders(extraction, comment, given, comments)

    @functools.cached_property
    def extractions(self) -> dict[str, Extraction]:
        """Every extraction by id, the holder's (:attr:`holders`): what reads one by id is then
        a function of the notes an audit's key digests."""
        return {key: item for key, (_note, item) in self.holders.extraction.items()}
