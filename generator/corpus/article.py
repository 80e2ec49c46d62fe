"""Front matter of wiki articles, directed syntheses and saved answers: perimeter,
recorded (frozen) perimeter, adoption, status history, supersedes; an answer's question,
retrieved passages and quotes. Parsed into typed values; checks that need the whole
corpus live in :mod:`generator.synthesis`."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList, YamlMap, plain
from generator.problems import Problem
from generator.text import provenance_shown


class ActStatus(StrEnum):
    """Where an article stands: a wiki and a saved answer have one status each; a
    synthesis goes draft → adopted, and is superseded by a newer act's ``supersedes:``."""

    WIKI = "wiki"
    ANSWER = "answer"
    DRAFT = "draft"
    ADOPTED = "adopted"
    SUPERSEDED = "superseded"


STATUSES = (ActStatus.DRAFT, ActStatus.ADOPTED)
"""Statuses written in a history; "superseded" is derived, never written."""


@dataclass(frozen=True)
class PerimeterSpec:
    """The notes an article covers: the ordinary notes of ``notebook`` having, on every
    listed axis, at least one listed category (OR within an axis, AND across axes)."""

    notebook: str
    categories: dict[str, tuple[str, ...]]
    line: int


@dataclass(frozen=True)
class FrozenExtraction:
    """An extraction as it was proposed to a synthesis: id, note, quote and its hash."""

    id: str
    note: str
    quote: str
    sha256: str


@dataclass(frozen=True)
class RecordedPerimeter:
    """What the synthesis was given, frozen in its file (at production or adoption)."""

    notes: tuple[str, ...]
    extractions: tuple[FrozenExtraction, ...]
    line: int


@dataclass(frozen=True)
class Adoption:
    """Who adopted the act, when, and the integrity hash of body + adoption block."""

    by: str
    date: dt.date
    hash: str
    line: int


@dataclass(frozen=True)
class StatusEntry:
    status: ActStatus
    date: dt.date | None
    line: int


ANSWER_MODES = ("tools", "retrieval")
"""How the passages reached the model (:class:`generator.answering.answer.Mode`)."""


@dataclass(frozen=True)
class RetrievedPassage:
    """A passage the model was given: ``<note>#<element id>``, and the hash of its text then."""

    passage: str
    sha256: str
    line: int

    @property
    def note(self) -> str:
        return self.passage.partition("#")[0]

    @property
    def element(self) -> str:
        return self.passage.partition("#")[2]


@dataclass(frozen=True)
class AnswerQuote:
    """A quote an answer cites (``[[quote:ID]]``): the passage it was anchored in when the
    answer was saved, the words quoted, and the hash of the text it landed on then."""

    id: str
    passage: str
    quote: str
    sha256: str
    line: int

    @property
    def note(self) -> str:
        return self.passage.partition("#")[0]


@dataclass(frozen=True)
class RefusedCitation:
    """A quote the model wrote that was refused as a citation, and why (``refusal``)."""

    passage: str
    quote: str
    refusal: str


@dataclass(frozen=True)
class AnswerRecord:
    """What ``carnet ask --save`` recorded of an answer (everything else is recomputed).

    Attributes:
        question: as asked.
        mode: ``tools`` or ``retrieval``.
        searched: the notebooks searched; ``categories``: the categories asked for.
        not_in_corpus: the answer is "not in the corpus" (its body says nothing as the corpus's).
        retrieved: the passages the model was given, its perimeter.
        quotes: the anchored quotes, by id.
        provenance: who answered: ``method`` (``llm``, ``scripted``, ``human``), model, usage…
        refused: the model's quotes that are no citation (not found as written, twice, or
            naming a passage it was not given), kept for review.
    """

    question: str
    mode: str
    searched: tuple[str, ...]
    categories: tuple[tuple[str, str], ...]
    not_in_corpus: bool
    retrieved: tuple[RetrievedPassage, ...]
    quotes: tuple[AnswerQuote, ...]
    provenance: dict[str, Any]
    line: int
    refused: tuple[RefusedCitation, ...] = ()


@dataclass(frozen=True)
class ArticleSpec:
    """Attributes:
        perimeter: the perimeter's definition (``None``: never stated).
        recorded: the frozen perimeter of a synthesis (``None``: never recorded).
        adoption: for an adopted synthesis.
        history: the status history, oldest first (empty: a draft).
        supersedes: slug of the act this one replaces.
        raw: the front-matter values the integrity hash covers, as written.
        answer: for a saved answer, what was asked and cited.
    """

    perimeter: PerimeterSpec | None
    recorded: RecordedPerimeter | None
    adoption: Adoption | None
    history: tuple[StatusEntry, ...]
    supersedes: str | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    answer: AnswerRecord | None = None

    @property
    def adopted(self) -> bool:
        return any(entry.status is ActStatus.ADOPTED for entry in self.history)


def parse_article(f: Fields) -> ArticleSpec:
    return ArticleSpec(
        perimeter=_perimeter(f),
        recorded=_recorded(f),
        adoption=_adoption(f),
        history=_history(f),
        supersedes=f.text("supersedes", "") or None,
        raw={key: f.data[key] for key in ("perimeter", "proposed", "adoption") if key in f.data},
    )


ANSWER_KEYS = ("question", "asked")
"""The front-matter fields of a saved answer (``type: answer``) and of nothing else."""


def parse_answer(f: Fields, body: str = "") -> ArticleSpec:
    """A saved answer: ``question`` and the ``asked`` block ``carnet ask --save`` writes
    (``body``: its statements, to refuse an empty answer that does not say so)."""
    return ArticleSpec(None, None, None, (), None, answer=_answer(f, body))


def _answer(f: Fields, body: str) -> AnswerRecord:
    question = f.text("question", hint="Write the question asked: 'question: …' (carnet ask --save writes it).")
    a = Fields(f.data.get("asked"), f.file, "the answer's 'asked' block", f.problems, line=f.line_of("asked"))
    if not f.has("asked"):
        f.error(None, "missing-field", "the answer has no 'asked' block (its retrieved passages and quotes)",
                "Let 'carnet ask --save' write the answer.")
    a.check_known(("mode", "searched", "categories", "not_in_corpus", "retrieved", "quotes", "refused", "provenance"))
    mode = a.text("mode", "retrieval")
    if mode not in ANSWER_MODES:
        a.error("mode", "invalid-value", f"'mode' is {mode!r}", f"Use one of: {', '.join(ANSWER_MODES)}.")
    categories: list[tuple[str, str]] = []
    raw_categories = a.data.get("categories")
    if isinstance(raw_categories, YamlMap):
        c = Fields(raw_categories, f.file, "the answer's categories", f.problems, line=a.line_of("categories"))
        categories = [(str(axis), value) for axis in c.data for value in c.text_list(axis)]
    elif raw_categories is not None:
        a.error("categories", "wrong-type", "'categories' must map axes to categories",
                "Write e.g. 'categories:\n    theme: [Budget]'.")
    retrieved = [RetrievedPassage(item.text("passage"), item.text("sha256"), item.line)
                 for item in _items(a, "retrieved", ("passage", "sha256"))]
    quotes = [AnswerQuote(item.text("id"), item.text("passage"), item.text("quote"), item.text("sha256"), item.line)
              for item in _items(a, "quotes", ("id", "passage", "quote", "sha256"))]
    refused = [RefusedCitation(item.text("passage", ""), item.text("quote", ""), item.text("refusal", ""))
               for item in _items(a, "refused", ("statement", "passage", "quote", "refusal"))]
    seen: set[str] = set()
    for quote in quotes:
        if quote.id in seen:
            f.problems.append(Problem(f.file, quote.line, "duplicate-id", f"quote id {quote.id!r} is given twice",
                                      "Give each quote of the answer its own id."))
        seen.add(quote.id)
    for passage, line in [(r.passage, r.line) for r in retrieved] + [(q.passage, q.line) for q in quotes]:
        if passage and not passage.partition("#")[2]:
            f.problems.append(Problem(f.file, line, "invalid-value",
                                      f"passage {passage!r} is not '<note>#<element id>'",
                                      "Let 'carnet ask --save' write the passages."))
    provenance = a.data.get("provenance")
    if not isinstance(provenance, YamlMap) or not isinstance(provenance.get("method"), str):
        a.error("provenance" if a.has("provenance") else None, "missing-provenance",
                "the answer does not say who answered it (provenance with a 'method')",
                "Write 'provenance: {method: llm, model: …}' (or 'scripted' / 'human' where no model ran).")
        provenance = {}
    not_in_corpus = a.flag("not_in_corpus", False)
    if f.has("asked") and not not_in_corpus and not body.strip():  # published, an empty page
        a.error("not_in_corpus" if a.has("not_in_corpus") else None, "empty-answer",
                "the answer has no statement and does not say 'not_in_corpus: true': its page would be empty",
                "Write its statements under the front matter (ask again with 'carnet ask --save'), or set "
                "'not_in_corpus: true' if the model found no answer in the passages retrieved.")
    return AnswerRecord(question, mode, tuple(a.text_list("searched")), tuple(categories),
                        not_in_corpus, tuple(retrieved), tuple(quotes), provenance_shown(plain(provenance)),
                        f.line_of("asked"), tuple(refused))


def _items(parent: Fields, key: str, known: tuple[str, ...]) -> list[Fields]:
    raw = parent.data.get(key)
    if raw is None:
        return []
    if not isinstance(raw, YamlList):
        parent.error(key, "wrong-type", f"{key!r} must be a list", "Let 'carnet ask --save' write it.")
        return []
    items = []
    for index, value in enumerate(raw):
        item = Fields(value, parent.file, f"{key} item {index + 1}", parent.problems, line=raw.line_of(index))
        item.check_known(known)
        items.append(item)
    return items


def _perimeter(f: Fields) -> PerimeterSpec | None:
    raw = f.data.get("perimeter")
    if raw is None:
        return None
    p = Fields(raw, f.file, "the perimeter", f.problems, line=f.line_of("perimeter"))
    p.check_known(("notebook", "categories"))
    notebook = p.text("notebook", hint="Name the notebook whose notes the article covers.")
    categories: dict[str, tuple[str, ...]] = {}
    raw_categories = p.data.get("categories")
    if isinstance(raw_categories, YamlMap):
        c = Fields(raw_categories, f.file, "the perimeter's categories", f.problems, line=p.line_of("categories"))
        for axis in c.data:
            categories[str(axis)] = tuple(c.text_list(axis))
    elif raw_categories is not None:
        p.error("categories", "wrong-type", "the perimeter's 'categories' must map axes to categories",
                "Write e.g. 'categories:\\n    theme: [Budget]'.")
    return PerimeterSpec(notebook, categories, f.line_of("perimeter"))


def _recorded(f: Fields) -> RecordedPerimeter | None:
    raw = f.data.get("proposed")
    if raw is None:
        return None
    r = Fields(raw, f.file, "the recorded perimeter ('proposed')", f.problems, line=f.line_of("proposed"))
    r.check_known(("notes", "extractions"))
    extractions = []
    items = r.data.get("extractions")
    if isinstance(items, YamlList):
        for index, item in enumerate(items):
            e = Fields(item, f.file, f"proposed extraction {index + 1}", f.problems, line=items.line_of(index))
            e.check_known(("id", "note", "quote", "sha256"))
            extractions.append(FrozenExtraction(e.text("id"), e.text("note"), e.text("quote"), e.text("sha256")))
    elif items is not None:
        r.error("extractions", "wrong-type", "'extractions' of 'proposed' must be a list", "Let 'carnet adopt' write it.")
    return RecordedPerimeter(tuple(r.text_list("notes")), tuple(extractions), f.line_of("proposed"))


def _adoption(f: Fields) -> Adoption | None:
    raw = f.data.get("adoption")
    if raw is None:
        return None
    a = Fields(raw, f.file, "the adoption", f.problems, line=f.line_of("adoption"))
    a.check_known(("by", "date", "hash"))
    date = a.date("date", required=True) or dt.date.min
    return Adoption(a.text("by"), date, a.text("hash", hint="Let 'carnet adopt' record the adoption."),
                    f.line_of("adoption"))


def _history(f: Fields) -> tuple[StatusEntry, ...]:
    raw = f.data.get("history")
    if raw is None:
        return ()
    if not isinstance(raw, YamlList):
        f.error("history", "wrong-type", "'history' must be a list of {status, date}",
                "Write one '- {status: draft, date: YYYY-MM-DD}' per step.")
        return ()
    entries = []
    for index, item in enumerate(raw):
        h = Fields(item, f.file, f"history step {index + 1}", f.problems, line=raw.line_of(index))
        h.check_known(("status", "date"))
        status, date = h.text("status"), h.date("date")
        if status in STATUSES:
            entries.append(StatusEntry(ActStatus(status), date, raw.line_of(index)))
        elif status:  # an unknown step is reported and left out of the lifecycle
            hint = ("'superseded' is never written: it follows from a newer act's 'supersedes:'."
                    if status == ActStatus.SUPERSEDED else f"Use one of: {', '.join(STATUSES)}.")
            h.error("status", "invalid-value", f"status {status!r} cannot be written in a history", hint)
    return tuple(entries)


def history_problems(file: str, history: tuple[StatusEntry, ...]) -> list[Problem]:
    """The history must be a path of the lifecycle: draft → adopted, never back (INV-14)."""
    problems = []
    rank = {ActStatus.DRAFT: 0, ActStatus.ADOPTED: 1}
    previous: StatusEntry | None = None
    for entry in history:
        if previous is not None:
            if rank[entry.status] < rank[previous.status]:
                problems.append(Problem(
                    file, entry.line, "lifecycle", f"the status goes back from {previous.status} to {entry.status}",
                    "An adopted act is never re-opened: write a new synthesis that supersedes it."))
            elif rank[entry.status] == rank[previous.status]:
                problems.append(Problem(file, entry.line, "lifecycle", f"the status {entry.status} is repeated",
                                        "Each step of the history is written once."))
            elif entry.date and previous.date and entry.date < previous.date:
                problems.append(Problem(file, entry.line, "lifecycle", "the history goes back in time",
                                        "Steps are written oldest first, with their dates."))
        previous = entry
    return problems
