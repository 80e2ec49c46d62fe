"""``carnet ask QUESTION``: an answer from the corpus, every citation anchored and checked.

Retrieval comes first. Through OpenAI tool calling where the endpoint takes it: the
model searches the published passages (``search_passages``, BM25) and reads them
(``read_passages``: their exact text, ids and note titles), within bounds of turns,
calls and passages; then answers in JSON, citing passages by id with the words quoted.
Without tool support (the endpoint refuses tools), or with a model that does not use them
(it answers without searching, calls them past the bound, or ends with no usable answer),
Carnet searches with the question itself and sends the passages in one request, once.
Which mode ran is said. Only what the site publishes is ever sent: no private note, no passage a
masked extraction covers (:mod:`generator.answering.passages`).

The answer is then assembled by the pure core (:mod:`generator.answering.answer`):
quotes anchored exactly or refused, pairs given their states. "Not in the corpus" is what
it is: nothing retrieved, or the model's reading that none of the passages it was given
answers (they are listed), never a claim that the notebooks hold nothing. An answer with
no statement that does not say ``not_in_corpus`` is refused, never shown or saved.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.answering.answer import (
    ANSWER_SCHEMA,
    MAX_STATEMENTS,
    Answer,
    Mode,
    assemble,
    bounds_problem,
    empty_problem,
    unjudged_pairs,
    with_verdicts,
)
from generator.answering.passages import Passage, Scope, check_scope, passages
from generator.answering.search import MAX_QUERY_CHARS, Index
from generator.corpus.verdicts import Verdict
from generator.llm import LLMAnswerError, LLMClient, LLMError, Provenance, ToolsRefused
from generator.llm.client import turn_characters
from generator.llm.plan import Limits, Plan, PlannedRequest
from generator.llm.prompts import load_prompt
from generator.llm.schema import answer_tokens, parse_answer, validate
from generator.pipeline import CheckedContent, blocking, check_content
from generator.problems import ContentError
from generator.synthesis.coverage import masked_elements
from generator.verification.judge import BATCH_SIZE, judge_batch

MAX_TURNS = 6
"""Turns of tool calls before the model is asked to answer with what it read."""
MAX_RESULTS = 8
"""Passages one search returns (and the passages Carnet sends itself without tools)."""
MAX_READ = 24
"""Passages the model may be given in all, searched or read."""
MAX_PASSAGE_CHARS = 4_000
"""Characters of one passage sent (a quote must still be found in the note's own text)."""
SNIPPET_CHARS = 300
"""Characters of a passage a search result shows."""
STATEMENT_TOKENS = 160
"""Tokens an answer's statement takes, with its citations (the answer's bound)."""
UNUSED_TOOLS = "the model did not use the tools: asking again with the passages sent (--no-tools)"

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "search_passages",
        "description": "Search the corpus's published passages by keywords; returns passage ids, note titles, "
                       "dates and the start of each passage, best first.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "a few keywords"}},
            "required": ["query"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "read_passages",
        "description": "Read passages by id: their exact text, with the note's title and date.",
        "parameters": {"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_RESULTS}},
            "required": ["ids"], "additionalProperties": False}}},
]


@dataclass
class Library:
    """What a question is answered from: the passages in scope and their index.

    Attributes:
        analysis: the checked content (its anchors land the quotes).
        passages: by id, in slug then reading order.
        searched: the notebooks searched (the scope's, or every public one).
        base_url: where the site is published (the citations' addresses).
    """

    analysis: CheckedContent
    passages: dict[str, Passage]
    index: Index
    searched: tuple[str, ...]
    base_url: str


def library(content: Path, scope: Scope) -> Library:
    analysis = check_content(content)
    stopping = blocking(analysis.problems, False)
    if stopping:
        raise ContentError(analysis.problems)
    publication = analysis.publication
    check_scope(scope, publication.notebooks)
    found = passages(publication.notes, analysis.anchored, masked_elements(analysis.corpus.notes, analysis.anchored),
                     scope)
    searched = (scope.notebook,) if scope.notebook else tuple(sorted(publication.notebooks))
    return Library(analysis, {p.id: p for p in found}, Index.of(found), searched, publication.settings.base_url)


@dataclass
class Conversation:
    """What the model was given so far, within the bounds."""

    library: Library
    given: dict[str, Passage] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)

    def give(self, passage: Passage) -> bool:
        if passage.id in self.given:
            return True
        if len(self.given) >= MAX_READ:
            return False
        self.given[passage.id] = passage
        return True

    def search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return {"error": "search_passages takes a query: a few keywords"}
        self.queries.append(query[:MAX_QUERY_CHARS])
        results = []
        for passage, _score in self.library.index.search(query, MAX_RESULTS):
            if not self.give(passage):
                break
            results.append({"id": passage.id, "note": passage.title, "date": passage.date,
                            "text": _cut(passage.text, SNIPPET_CHARS)})
        return {"results": results} if results else {"results": [], "note": "no passage matches these words"}

    def read(self, arguments: dict[str, Any]) -> dict[str, Any]:
        ids = arguments.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return {"error": "read_passages takes ids: a list of passage ids from search_passages"}
        read, unknown, over = [], [], []
        for passage_id in ids[:MAX_RESULTS]:
            passage = self.library.passages.get(passage_id)
            if passage is None:
                unknown.append(passage_id[:100])
            elif not self.give(passage):
                over.append(passage_id[:100])
            else:
                read.append(_shown(passage))
        return {"passages": read, **({"unknown": unknown} if unknown else {}),
                **({"not_read": over, "note": f"at most {MAX_READ} passages in all: answer with those read"}
                   if over else {})}


def ask_plan(library: Library, client: LLMClient, question: str, tools: bool, judge: bool, limits: Limits) -> Plan:
    """What ``carnet ask`` will send at least, and what it may add (said in notes): with
    tools, the first turn (later turns carry the conversation so far, within the context);
    the request with the passages Carnet found (the ``--no-tools`` way, and the fallback of a
    model that does not use the tools); the judge's batches, one per 8 pairs."""
    completion = answer_tokens(MAX_STATEMENTS, STATEMENT_TOKENS)
    language = library.analysis.corpus.settings.language
    requests: list[PlannedRequest] = []
    notes: list[str] = []
    if tools:
        prompt = load_prompt("ask_tools", language)
        first = turn_characters([{"role": "user", "content": prompt.render(
            question=question, notebooks=", ".join(library.searched))}], TOOLS)
        requests.append(PlannedRequest("turn 1 with tools (search_passages, read_passages)", first, completion))
        notes.append(f"with tools, the model may take up to {MAX_TURNS} more turns, each carrying the conversation "
                     "so far; each is sent only while the run's budget covers it")
    hits = [passage for passage, _score in library.index.search(question, MAX_RESULTS)]
    if hits:
        prompt = load_prompt("ask_passages", language)
        characters = client.request_characters(prompt, question=question, notebooks=", ".join(library.searched),
                                               passages=[_shown(p) for p in hits])
        label = (f"the {len(hits)} passages Carnet found, in one request" +
                 (" (only if the model does not use the tools)" if tools else ""))
        requests.append(PlannedRequest(label, characters, completion))
    else:
        notes.append("Carnet's own search finds no passage for the question: without tools, nothing is sent")
    if judge:
        notes.append(f"then the judge reads the answer's pairs, {BATCH_SIZE} a request (up to "
                     f"{-(-MAX_STATEMENTS * 3 // BATCH_SIZE)} requests)")
    return Plan("carnet ask", tuple(requests), limits, tuple(notes))


def ask(library: Library, client: LLMClient, question: str, notice: Callable[[str], None] = lambda _m: None,
        tools: bool = True) -> Answer:
    """The answer to ``question`` from ``library``, through ``client``.

    A model that does not use the tools (it answers without searching, calls them past the
    bound, or ends the conversation with no usable answer) is asked once more the
    ``--no-tools`` way, and that is said; the tokens of both attempts are the answer's (or,
    when the second fails too, the error's)."""
    spent: dict[str, int] = {}  # the tokens of tool turns given up on: the answer costs them too
    if tools:
        try:
            answered = _with_tools(library, client, question, spent)
        except ToolsRefused as exc:
            notice(f"{exc}; asking with the passages sent instead (--no-tools)")
        except LLMAnswerError as exc:  # a model that wandered: what the tools were for never came
            notice(f"{UNUSED_TOOLS} — {str(exc).removesuffix(': nothing was recorded')}")
        else:
            if answered is not None:
                return answered
            notice(f"{UNUSED_TOOLS} — it answered without searching")
    try:
        answer = _one_request(library, client, question)
    except LLMError as exc:
        exc.usage = _summed(spent, exc.usage)
        raise
    if not spent:
        return answer
    usage = dict(answer.provenance.get("usage", {}))
    _add(usage, spent)
    return dataclasses.replace(answer, provenance={**answer.provenance, "usage": usage,
                                                   "tool_turns": {"usage": dict(spent)}})


def judge_answer(answer: Answer, client: LLMClient, notice: Callable[[str], None] = lambda _m: None, *,
                 language: str = "fr") -> Answer:
    """The answer's pairs that passed the verbatim check, read by the judge articles' pairs
    get (``verify_pairs``, in batches): each takes its verdict's state. A pair the judge's
    answer leaves out, or answers badly, stays "not judged" (and is said). ``language``: the
    site's (the judge's prompt is in it)."""
    pairs = unjudged_pairs(answer)
    if not pairs:
        return answer
    prompt = load_prompt("verify_pairs", language)
    verdicts: dict[tuple[str, str], Verdict] = {}
    records: list[dict[str, Any]] = []
    usage: dict[str, int] = {}
    provenance: dict[str, Any] = {}
    for start in range(0, len(pairs), BATCH_SIZE):
        batch = judge_batch(client, prompt, pairs[start:start + BATCH_SIZE], "the answer", start + 1)
        _add(usage, batch.provenance.get("usage", {}))
        provenance = batch.provenance
        for refused in batch.refused:
            notice(f"the judge's answer was refused for a pair: {refused.describe()}")
        for record in batch.records:
            records.append(dict(record))
            verdicts[(record["claim_sha256"], record["source_sha256"])] = Verdict(
                record["claim_sha256"], record["source_sha256"], record["verdict"], record["rationale"],
                record["provenance"], "", 0)
    judged = with_verdicts(answer, verdicts)
    recorded = {**answer.provenance, "judge": {**provenance, **({"usage": usage} if usage else {})}}
    return dataclasses.replace(judged, provenance=recorded, verdicts=tuple(records))


def _with_tools(library: Library, client: LLMClient, question: str, spent: dict[str, int]) -> Answer | None:
    """The conversation with tools, or ``None`` when the model never searched."""
    prompt = load_prompt("ask_tools", library.analysis.corpus.settings.language)
    conversation = Conversation(library)
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt.render(
        question=question, notebooks=", ".join(library.searched))}]
    usage: dict[str, int] = {}
    provenance: Provenance | None = None
    for turn_number in range(MAX_TURNS + 1):
        last = turn_number == MAX_TURNS  # past the bound: answer with what was read
        try:
            turn, provenance = client.chat_tools(prompt, messages, TOOLS, tool_choice="none" if last else "auto",
                                                 max_tokens=answer_tokens(MAX_STATEMENTS, STATEMENT_TOKENS))
        except LLMError as exc:  # the failure costs the turns before it too
            _add(spent, exc.usage)
            exc.usage = dict(spent)
            raise
        _add(usage, turn.usage)
        _add(spent, turn.usage)
        if not turn.calls:
            if turn_number == 0:
                return None
            data = _answer_data(turn.content, usage)
            return assemble(question, data, conversation.given, library.analysis.anchored, Mode.TOOLS,
                            library.searched, _record(provenance, usage, Mode.TOOLS, conversation.queries))
        if last:
            raise LLMAnswerError(f"the model kept calling tools after {MAX_TURNS} turns: nothing was recorded", usage)
        messages.append({"role": "assistant", "content": turn.content or None, "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.raw}}
            for call in turn.calls]})
        for call in turn.calls:
            result = (conversation.search(call.arguments) if call.name == "search_passages" else
                      conversation.read(call.arguments) if call.name == "read_passages" else
                      {"error": "no such tool: use search_passages or read_passages"})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result, ensure_ascii=False)})
    raise AssertionError("unreachable")  # pragma: no cover


def _one_request(library: Library, client: LLMClient, question: str) -> Answer:
    """Without tools: Carnet's own search with the question, the passages in one request
    (none found: "not in the corpus", and no request at all)."""
    hits = [passage for passage, _score in library.index.search(question, MAX_RESULTS)]
    given = {p.id: p for p in hits}
    if not given:
        return assemble(question, {"not_in_corpus": True, "statements": []}, {}, library.analysis.anchored,
                        Mode.RETRIEVAL, library.searched, {"method": "build", "mode": Mode.RETRIEVAL.value})
    prompt = load_prompt("ask_passages", library.analysis.corpus.settings.language)
    constraint = json.loads(json.dumps(ANSWER_SCHEMA))
    citation = constraint["properties"]["statements"]["items"]["properties"]["citations"]["items"]
    citation["properties"]["passage"]["enum"] = list(given)  # the server is asked to cite only what it was sent
    context = {"question": question, "notebooks": ", ".join(library.searched), "passages": [_shown(p) for p in hits]}
    data, provenance = client.chat_json(prompt, ANSWER_SCHEMA, constraint=constraint,
                                        max_tokens=answer_tokens(MAX_STATEMENTS, STATEMENT_TOKENS), **context)
    _bounded(data, dict(provenance.usage))
    return assemble(question, data, given, library.analysis.anchored, Mode.RETRIEVAL, library.searched,
                    _record(provenance, dict(provenance.usage), Mode.RETRIEVAL, [question]))


def _answer_data(content: str, usage: dict[str, int]) -> dict[str, Any]:
    data = parse_answer(content, usage)  # JSON, each object's keys once
    try:
        validate(data, ANSWER_SCHEMA)
    except LLMAnswerError as exc:
        exc.usage = dict(usage)
        raise
    assert isinstance(data, dict)
    _bounded(data, usage)
    return data


def _bounded(data: dict[str, Any], usage: dict[str, int]) -> None:
    """Refuse an answer past its bounds, or one that says nothing (INV-15: never recorded)."""
    problem = bounds_problem(data) or empty_problem(data)
    if problem:
        raise LLMAnswerError(f"the answer is refused: {problem}; nothing was recorded", usage)


def _shown(passage: Passage) -> dict[str, str]:
    return {"id": passage.id, "note": passage.title, "date": passage.date, "text": _cut(passage.text, MAX_PASSAGE_CHARS)}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " […]"


def _summed(first: dict[str, int], second: dict[str, int]) -> dict[str, int]:
    total = dict(first)
    _add(total, second)
    return total


def _add(total: dict[str, int], usage: dict[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + value


def _record(provenance: Provenance, usage: dict[str, int], mode: Mode, queries: list[str]) -> dict[str, Any]:
    """The answer's provenance: the model as the server named it, the tokens of every turn."""
    record = dict(provenance.as_record(), mode=mode.value, queries=[q[:MAX_QUERY_CHARS] for q in queries])
    if usage:
        record["usage"] = dict(usage)
    else:
        record.pop("usage", None)
    return record


def save(content: Path, library: Library, answer: Answer, slug: str, scope: Scope, day: dt.date) -> list[str]:
    """``--save SLUG``: the answer kept under ``content/`` (:mod:`generator.commands.save_answer`),
    listed in the scope's notebook, else in the public notebooks of the notes it cites, else
    in those searched."""
    from generator.commands.save_answer import save_answer

    publication = library.analysis.publication
    cited = sorted({c.note for c in answer.citations})
    listed = ([scope.notebook] if scope.notebook else
              sorted({m.notebook for note in cited for m in publication.notes[note].memberships
                      if m.notebook in publication.notebooks}) or list(library.searched))
    elements = {note: library.analysis.anchored[note].document.elements for note in cited}
    texts = {pid: library.passages[pid].text for pid in answer.retrieved if pid in library.passages}
    return save_answer(content, answer, slug, day, elements, texts, listed, scope.categories)
