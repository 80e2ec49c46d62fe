"""An answer as Carnet shows it: statements, each citing quotes anchored in the notes, each
(statement, passage) pair with the state articles' pairs get. Pure: the model's answer
(untrusted data) and the passages it was given in, an :class:`Answer` out.

Citations cannot lie: a quote is anchored with the anchoring engine in the note of the
passage it names, exactly and once (INV-6: never guessed). A quote that names a passage
the model was not given, or that is not found as written, or more than once, is refused
and reported, never shown as a citation. A statement left with no citation is unsourced.
Display numbers are given by first appearance (INV-1); a passage quoted twice keeps one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import quote as percent

from generator.anchoring import AnchoredNote
from generator.anchoring.resolve import AnchorStatus, Portion, portions_text, project, resolve_quote
from generator.answering.passages import Passage
from generator.corpus.verdicts import Verdict, text_hash
from generator.kinds import WikiKind
from generator.synthesis.audit import SourceState
from generator.synthesis.claims import claim_text
from generator.text import model_words
from generator.verification.states import PairState, Reason, pair_state, verbatim

MAX_STATEMENTS = 20
MAX_CITATIONS = 6
"""Citations read per statement."""
MAX_STATEMENT_CHARS = 2_000
MAX_QUOTE_CHARS = 1_500
MAX_ID_CHARS = 300

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "not_in_corpus": {"type": "boolean"},
        "statements": {"type": "array", "maxItems": MAX_STATEMENTS, "items": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": MAX_STATEMENT_CHARS},
                "citations": {"type": "array", "maxItems": MAX_CITATIONS, "items": {
                    "type": "object",
                    "properties": {"passage": {"type": "string", "maxLength": MAX_ID_CHARS},
                                   "quote": {"type": "string", "maxLength": MAX_QUOTE_CHARS}},
                    "required": ["passage", "quote"], "additionalProperties": False}},
            },
            "required": ["text", "citations"], "additionalProperties": False}},
    },
    "required": ["not_in_corpus", "statements"],
    "additionalProperties": False,
}
"""What the model answers: statements, each citing passages by id with the words quoted."""


class Mode(StrEnum):
    """How the passages reached the model."""

    TOOLS = "tools"  # the model searched and read through tool calls
    RETRIEVAL = "retrieval"  # Carnet searched with the question and sent the passages in one request


class Refusal(StrEnum):
    """Why a quote is not a citation."""

    NOT_GIVEN = "not-given"  # names a passage the model was not given
    NOT_FOUND = "not-found"  # not in the note as written
    AMBIGUOUS = "ambiguous"  # in the note more than once
    EMPTY = "empty"


@dataclass(frozen=True)
class Citation:
    """A quote anchored in its note: what ``[n]`` points to.

    Attributes:
        number: display number, by first appearance.
        note, title: the cited note's slug and title.
        passages: ids of the passages (elements) the quote lands in, in reading order.
        element: the first one's element id (where the link lands).
        portions: the anchor's portions (element index, offsets).
        text: the note's own text over the portions (what the reader is shown).
    """

    number: int
    note: str
    title: str
    passages: tuple[str, ...]
    element: str
    portions: tuple[Portion, ...]
    text: str


@dataclass(frozen=True)
class RefusedQuote:
    """A quote of the answer that is no citation, and why (``detail``: the engine's words)."""

    statement: int
    passage: str
    quote: str
    refusal: Refusal
    detail: str = ""


@dataclass(frozen=True)
class Statement:
    """One statement of the answer with its citations (display numbers) and, per
    citation, the (statement, passage) pair's state."""

    text: str
    citations: tuple[int, ...]
    states: tuple[PairState, ...]

    @property
    def sourced(self) -> bool:
        return bool(self.citations)


@dataclass(frozen=True)
class Answer:
    """Attributes:
        question: as asked.
        mode: :class:`Mode`.
        not_in_corpus: nothing was retrieved, or the model said the passages it was given
            do not answer (its reading of those passages, never a fact about the notebooks):
            no statement is shown as the corpus's.
        searched: the notebooks searched.
        statements, citations, refused: see the classes.
        retrieved: ids of every passage the model was given (the answer's perimeter);
            ``discarded``: those no citation lands in.
        dropped: statements the model wrote that are not shown (the answer is "not in
            the corpus").
        verdicts: the judge's verdict records on its pairs, as ``content/verdicts/`` keeps them.
    """

    question: str
    mode: Mode
    not_in_corpus: bool
    searched: tuple[str, ...]
    statements: tuple[Statement, ...] = ()
    citations: tuple[Citation, ...] = ()
    refused: tuple[RefusedQuote, ...] = ()
    retrieved: tuple[str, ...] = ()
    dropped: int = 0
    provenance: dict[str, Any] = field(default_factory=dict)
    verdicts: tuple[dict[str, Any], ...] = ()

    @property
    def discarded(self) -> tuple[str, ...]:
        cited = {p for c in self.citations for p in c.passages}
        return tuple(p for p in self.retrieved if p not in cited)


def bounds_problem(data: Mapping[str, Any]) -> str:
    """Why an answer (checked against :data:`ANSWER_SCHEMA`) is refused for its size, or "":
    more statements or citations than asked, or a text, quote or id past its bound."""
    statements = list(data.get("statements", []))
    if len(statements) > MAX_STATEMENTS:
        return f"{len(statements)} statements, more than the {MAX_STATEMENTS} asked for"
    for number, item in enumerate(statements, 1):
        cited = list(item.get("citations", []))
        sizes = [("text", len(item.get("text", "")), MAX_STATEMENT_CHARS)]
        sizes += [(f"citation {k}'s {name}", len(c.get(name, "")), bound) for k, c in enumerate(cited, 1)
                  for name, bound in (("quote", MAX_QUOTE_CHARS), ("passage", MAX_ID_CHARS))]
        if len(cited) > MAX_CITATIONS:
            return f"statement {number} has {len(cited)} citations, more than the {MAX_CITATIONS} allowed"
        for what, size, bound in sizes:
            if size > bound:
                return f"statement {number}'s {what} holds {size:,} characters, more than the {bound:,} allowed"
    return ""


def empty_problem(data: Mapping[str, Any]) -> str:
    """Why an answer (checked against :data:`ANSWER_SCHEMA`) is refused for saying nothing,
    or "": no statement with words in it (as :func:`assemble` reads them), yet not
    ``not_in_corpus``. Shown, it would be an empty page: neither an answer nor "no answer
    found"."""
    if data.get("not_in_corpus") or any(claim_text(str(item.get("text", "")))
                                        for item in list(data.get("statements", []))[:MAX_STATEMENTS]):
        return ""
    return ("it has no statement and does not say not_in_corpus (an empty answer is neither an answer nor "
            "'no answer found')")


def assemble(question: str, data: Mapping[str, Any], given: Mapping[str, Passage],
             anchored: Mapping[str, AnchoredNote], mode: Mode, searched: Sequence[str],
             provenance: Mapping[str, Any] | None = None) -> Answer:
    """The answer ``data`` (checked against :data:`ANSWER_SCHEMA`) to ``question``, its
    quotes anchored in the notes of the passages ``given`` to the model (id → passage)."""
    retrieved = tuple(given)
    base = Answer(question, mode, True, tuple(searched), retrieved=retrieved, provenance=dict(provenance or {}))
    written = list(data.get("statements", []))[:MAX_STATEMENTS]
    if not given or data.get("not_in_corpus"):
        return dataclasses.replace(base, dropped=len(written))
    citations: dict[tuple[str, tuple[Portion, ...]], Citation] = {}
    refused: list[RefusedQuote] = []
    statements: list[Statement] = []
    for number, item in enumerate(written, 1):
        # as a saved answer's claims will be read; a model's controls and bidi as escapes, as everywhere
        text = claim_text(model_words(str(item.get("text", ""))))
        numbers: list[int] = []
        for cited in list(item.get("citations", []))[:MAX_CITATIONS]:
            passage_id, quote = str(cited.get("passage", "")).strip(), str(cited.get("quote", ""))
            landed = _anchor(passage_id, quote, given, anchored)
            if isinstance(landed, RefusedQuote):
                refused.append(RefusedQuote(number, model_words(passage_id), model_words(quote), landed.refusal,
                                            landed.detail))
                continue
            note, portions = landed
            key = (note, portions)
            if key not in citations:
                elements = anchored[note].document.elements
                ids = tuple(f"{note}#{elements[p.element].id}" for p in portions)
                citations[key] = Citation(len(citations) + 1, note, given[passage_id].title, ids,
                                          elements[portions[0].element].id, portions,
                                          portions_text(elements, portions))
            if citations[key].number not in numbers:
                numbers.append(citations[key].number)
        if text:
            statements.append(Statement(text, tuple(numbers), ()))
    by_number = {c.number: c for c in citations.values()}
    statements = [Statement(s.text, s.citations, _states(s, by_number)) for s in statements]
    return Answer(question, mode, False, tuple(searched), tuple(statements), tuple(by_number[n] for n in sorted(by_number)),
                  tuple(refused), retrieved, 0, dict(provenance or {}))


def _anchor(passage_id: str, quote: str, given: Mapping[str, Passage],
            anchored: Mapping[str, AnchoredNote]) -> tuple[str, tuple[Portion, ...]] | RefusedQuote:
    """Where the quote lands in the note of ``passage_id``, or why it is refused."""
    if passage_id not in given:
        return RefusedQuote(0, passage_id, quote, Refusal.NOT_GIVEN,
                            "the answer names a passage it was not given")
    if not quote.strip():
        return RefusedQuote(0, passage_id, quote, Refusal.EMPTY, "the quote is empty")
    note = given[passage_id].note
    elements = anchored[note].document.elements
    anchor = resolve_quote(project(elements), elements, quote)
    if anchor.status is AnchorStatus.ANCHORED:
        return note, anchor.portions
    if anchor.status is AnchorStatus.RELOCATED:  # close to the note's words is not its words
        return RefusedQuote(0, passage_id, quote, Refusal.NOT_FOUND,
                            "not in the note as written (a close passage exists: a citation quotes it exactly)")
    kind = Refusal.AMBIGUOUS if anchor.candidates > 1 else Refusal.NOT_FOUND
    return RefusedQuote(0, passage_id, quote, kind, anchor.reason)


def _states(statement: Statement, citations: Mapping[int, Citation]) -> tuple[PairState, ...]:
    """Each (statement, passage) pair's state, as an article's pair gets it with no verdict
    recorded: verbatim first (words the statement quotes must be in its sources), then
    "not judged" until a judge says."""
    texts = [citations[n].text for n in statement.citations]
    ok = verbatim(statement.text, "", texts)
    return tuple(pair_state(WikiKind.EXT, SourceState.PRESENT, False, ok, None, None) for _ in statement.citations)


@dataclass(frozen=True)
class AnswerPair:
    """A (statement, passage) pair of an answer as the judge reads it (see
    :class:`generator.verification.judge.Judgeable`): ``statement`` its index,
    ``citation`` its source's display number."""

    statement: int
    citation: int
    claim_text: str
    passage: str

    @property
    def claim_sha256(self) -> str:
        return text_hash(self.claim_text)

    @property
    def source_sha256(self) -> str:
        return text_hash(self.passage)

    @property
    def source(self) -> str:
        return f"quote:{quote_id(self.citation)}"


def quote_id(number: int) -> str:
    """A citation's quote id in a saved answer (``[[quote:q1]]``): its display number's."""
    return f"q{number}"


def unjudged_pairs(answer: Answer) -> list[AnswerPair]:
    """The pairs a judge is to read: those that passed the verbatim check, not judged yet."""
    by_number = {c.number: c for c in answer.citations}
    return [AnswerPair(index, number, statement.text, by_number[number].text)
            for index, statement in enumerate(answer.statements)
            for number, state in zip(statement.citations, statement.states, strict=True)
            if state.reason is Reason.NOT_JUDGED]


def with_verdicts(answer: Answer, verdicts: Mapping[tuple[str, str], Verdict]) -> Answer:
    """``answer`` with each pair's state from its verdict (by claim and source hash), as an
    article's pair gets it; pairs without one keep theirs."""
    by_number = {c.number: c for c in answer.citations}
    statements = []
    for statement in answer.statements:
        states = []
        for number, state in zip(statement.citations, statement.states, strict=True):
            verdict = verdicts.get((text_hash(statement.text), text_hash(by_number[number].text)))
            states.append(pair_state(WikiKind.EXT, SourceState.PRESENT, False, True, verdict, None)
                          if verdict is not None and state.reason is Reason.NOT_JUDGED else state)
        statements.append(dataclasses.replace(statement, states=tuple(states)))
    return dataclasses.replace(answer, statements=tuple(statements))


def landing(base_url: str, page: str, citation: Citation) -> str:
    """The address of a citation's passage on the site: its element, with a text fragment
    (``#:~:text=``) that browsers highlight."""
    words = citation.text.split()
    if len(citation.text) <= 80:
        directive = _fragment(" ".join(words))
    else:
        directive = f"{_fragment(' '.join(words[:5]))},{_fragment(' '.join(words[-5:]))}"
    return f"{base_url}{page}#{citation.element}:~:text={directive}"


def _fragment(text: str) -> str:
    # ",", "&" and "-" are the directive's own delimiters (quote leaves "-" as it is)
    return percent(text, safe="").replace("-", "%2D")
