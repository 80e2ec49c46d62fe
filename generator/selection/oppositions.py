"""Oppositions: extractions taking opposite positions on one question, found by one
pass over the whole perimeter (never group by group), through the LLM seam.

When the perimeter does not fit in one request (``budget`` characters), it is cut into
chunks and every pair of chunks is sent, so every pair of extractions is seen once —
never silently a subset. Results go to ``content/oppositions/<wiki>.yaml`` with their
provenance; a page without them says the pass was not run. An answer is untrusted:
each of its items is checked against the request that asked for it, and the items
refused are reported with the pass (:class:`OppositionPass`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from contextlib import closing
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import combinations
from typing import TYPE_CHECKING, Any

from generator.corpus.oppositions import Opposition, OppositionRecord
from generator.problems import Problem, Severity

if TYPE_CHECKING:  # the LLM seam is imported only when a pass actually runs (the build never does)
    from generator.llm import LLMClient
    from generator.llm.prompts import Prompt

BUDGET = 12000
MAX_QUESTION_CHARS = 500
OPPOSITION_TOKENS = 80
"""Tokens one opposition takes in an answer: two ids and a one-line question."""
"""Longest question recorded with an opposition; a longer one refuses its pair."""
SCHEMA = {"type": "object", "required": ["oppositions"],
          "properties": {"oppositions": {"type": "array", "items": {
              "type": "object", "required": ["a", "b", "question"],
              "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "question": {"type": "string"}}}}}}


def chunks(items: list[tuple[str, str]], budget: int = BUDGET) -> list[list[tuple[str, str]]]:
    """Consecutive chunks of (id, quote) holding at most half the budget each, so any two
    fit in one request."""
    result: list[list[tuple[str, str]]] = [[]]
    size = 0
    for item in items:
        length = len(item[1]) + len(item[0]) + 8
        if result[-1] and size + length > budget // 2:
            result.append([])
            size = 0
        result[-1].append(item)
        size += length
    return result


def requests(items: list[tuple[str, str]], budget: int = BUDGET) -> list[list[tuple[str, str]]]:
    """What to send: the whole perimeter at once when it fits, else every pair of chunks."""
    return [batch for _chunks, batch in numbered_requests(items, budget)]


def numbered_requests(items: list[tuple[str, str]], budget: int = BUDGET
                      ) -> list[tuple[tuple[int, ...], list[tuple[str, str]]]]:
    """:func:`requests`, each with the chunks it pairs (1-based; one number when the
    perimeter fits one request)."""
    if sum(len(q) + len(i) + 8 for i, q in items) <= budget:
        return [((1,), items)]
    parts = chunks(items, budget)
    if len(parts) == 1:
        return [((1,), parts[0])]
    return [((a + 1, b + 1), parts[a] + parts[b]) for a, b in combinations(range(len(parts)), 2)]


def request_key(prompt_version: str, batch: list[tuple[str, str]]) -> str:
    """What identifies a request across runs: the prompt and the extractions it holds, as
    they are (an edited quote, another prompt or language: another request)."""
    import hashlib

    text = prompt_version + "\n" + "\n".join(f"{i}\t{q}" for i, q in batch)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


MAX_PAIRS_PER_REQUEST = 12
"""Most oppositions one answer may hold: oppositions are few, and the bound caps the
completion a wandering model may run to (items × :data:`OPPOSITION_TOKENS`)."""


class OppositionFault(Enum):
    """Why one item of an answer was not kept."""

    UNKNOWN_ID = "names an extraction that was not in the request"
    SAME_ID = "opposes an extraction to itself"
    PLACEHOLDER = "has no question (empty or a placeholder)"
    TOO_LONG = "has an over-long question"
    CONFLICT = "answers a pair again with another question (the first is kept)"


@dataclass(frozen=True)
class RefusedOpposition:
    """One item of an answer refused (each pair stands alone).

    Attributes:
        request: the request's number (1-based) among those of the pass.
        a, b: the ids as the model wrote them.
        fault: what was wrong; detail: the question or the value at fault, shortened.
    """

    request: int
    a: str
    b: str
    fault: OppositionFault
    detail: str = ""

    def describe(self) -> str:
        from generator.llm.schema import shown

        detail = f": {self.detail}" if self.detail else ""
        return f"request {self.request}: the pair {shown(self.a)} ⟷ {shown(self.b)} {self.fault.value}{detail}"


@dataclass(frozen=True)
class Answered:
    """One request answered: its ``number`` in the pass, the ``chunks`` it paired, its
    ``key`` (:func:`request_key`), the pairs it found that the pass had not, and its provenance."""

    number: int
    chunks: tuple[int, ...]
    key: str
    found: list[Opposition]
    provenance: dict[str, Any]


@dataclass(frozen=True)
class OppositionPass:
    """What the pass found.

    Attributes:
        found: the oppositions kept, sorted by pair.
        provenance: the last answered request's provenance, with the usage of all of them
            and the number of requests.
        requests: how many requests the pass has (sent, skipped or not).
        refused: the items of the answers that were refused; the pass recorded
            without them is incomplete, and the command says so.
        failed: for each request that failed or was not sent, a line saying why; a failed
            request loses only itself.
        skipped: requests answered by an earlier run (their keys were given), not sent again.
    """

    found: list[Opposition]
    provenance: dict[str, Any]
    requests: int
    refused: list[RefusedOpposition] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: int = 0


def _check_item(item: dict[str, Any], sent: set[str], examples: frozenset[str]
                ) -> tuple[OppositionFault, str] | None:
    """Why one answered pair is refused, or None when it is usable."""
    from generator.llm.schema import placeholder, shown, too_long

    a, b, question = item["a"].strip(), item["b"].strip(), item["question"].strip()
    if a not in sent or b not in sent:
        return OppositionFault.UNKNOWN_ID, ""
    if a == b:
        return OppositionFault.SAME_ID, ""
    if too_long(question, MAX_QUESTION_CHARS):
        return OppositionFault.TOO_LONG, too_long(question, MAX_QUESTION_CHARS)
    if placeholder(question, examples):
        return OppositionFault.PLACEHOLDER, shown(question)
    return None


def completion_tokens(batch: list[tuple[str, str]]) -> int:
    """The completion a request of ``batch`` asks for at most."""
    from generator.llm.schema import answer_tokens

    return answer_tokens(min(len(batch), MAX_PAIRS_PER_REQUEST), OPPOSITION_TOKENS)


def find_oppositions(client: LLMClient, prompt: Prompt, items: list[tuple[str, str]],
                     budget: int = BUDGET, *, jobs: int = 1, skip: Collection[str] = (),
                     known: Collection[tuple[str, str]] = (),
                     on_answer: Callable[[Answered], None] | None = None) -> OppositionPass:
    """Run the pass. Each answer is checked against its own request, item by item: an
    id that was not sent, a pair of one extraction with itself, an empty, placeholder
    or over-long question are refused and returned as such; a pair answered twice —
    in one request or in two (chunks are sent in pairs, so they overlap) — with another
    question keeps the first and reports the conflict; a pair in ``known`` (recorded
    already) is not found again.

    Each request stands alone: its answer is handed to ``on_answer`` as it is checked (the
    command records it at once), a failed request loses only itself, and the requests whose
    key is in ``skip`` (answered by an earlier run) are not sent. After a transport failure
    (the endpoint down), or once the run's budget (the client's limits) does not cover the
    next request, nothing more is sent.

    Up to ``jobs`` requests are in flight at once; the answers are checked in the requests'
    order whatever order they arrive in, so the pass is the one a request at a time gives."""
    from generator.llm import LLMError, LLMTransportError, Provenance
    from generator.llm.concurrent import in_order
    from generator.llm.errors import BudgetSpent
    from generator.llm.schema import bounded, fold, prompt_examples, shown

    examples = prompt_examples(prompt.text).get("question", frozenset())
    found: dict[tuple[str, str], Opposition] = {}
    recorded = {tuple(sorted(pair)) for pair in known}
    refused: list[RefusedOpposition] = []
    failed: list[str] = []
    provenance: dict[str, Any] = {}
    planned = numbered_requests(items, budget)
    todo = [(number, chunks_, batch, key) for number, (chunks_, batch) in enumerate(planned, start=1)
            if (key := request_key(prompt.version, batch)) not in skip]
    stop = threading.Event()  # the endpoint failed, or the budget is spent: nothing more is sent

    def sender(number: int, batch: list[tuple[str, str]]) -> Callable[[], tuple[dict[str, Any], Provenance] | LLMError]:
        def send() -> tuple[dict[str, Any], Provenance] | LLMError:
            client.progress(f"request {number} of {len(planned)} ({len(batch)} extractions)")
            # at most a few pairs per request, naming only the extractions sent
            constraint = bounded(SCHEMA, "oppositions", max_items=min(len(batch), MAX_PAIRS_PER_REQUEST))
            ids = constraint["properties"]["oppositions"]["items"]["properties"]
            ids["a"]["enum"] = ids["b"]["enum"] = [i for i, _q in batch]
            try:
                return client.chat_json(prompt, SCHEMA, constraint=constraint, max_tokens=completion_tokens(batch),
                                        extractions=[{"id": i, "quote": q} for i, q in batch])
            except LLMError as exc:
                if isinstance(exc, (LLMTransportError, BudgetSpent)):
                    stop.set()
                return exc
        return send

    with closing(in_order([sender(number, batch) for number, _c, batch, _k in todo], jobs, stop)) as answers:
        for (number, chunks_, batch, key), answer in zip(todo, answers, strict=True):
            which = f"request {number} (chunks {'×'.join(map(str, chunks_))})"
            if answer is None:  # not sent: the endpoint failed or the budget ran out before it
                failed.append(f"{which}: not sent")
                continue
            if isinstance(answer, LLMError):
                failed.append(f"{which} failed: {answer}")
                continue
            data, record = answer
            provenance = record.as_record()
            sent = {i for i, _q in batch}
            new: list[Opposition] = []
            for item in data["oppositions"]:
                fault = _check_item(item, sent, examples)
                if fault is not None:
                    refused.append(RefusedOpposition(number, item["a"], item["b"], *fault))
                    continue
                a, b = sorted((item["a"].strip(), item["b"].strip()))
                question = item["question"].strip()
                if (a, b) in found:  # in this request or an earlier one (chunks overlap): the first stays
                    if fold(found[(a, b)].question) != fold(question):
                        refused.append(RefusedOpposition(number, a, b, OppositionFault.CONFLICT, shown(question)))
                    continue
                found[(a, b)] = Opposition(a, b, question)
                if (a, b) not in recorded:
                    new.append(found[(a, b)])
            if on_answer is not None:
                on_answer(Answered(number, chunks_, key, new, provenance))
    provenance["usage"] = dict(client.ledger.usage)
    provenance["requests"] = len(planned)
    return OppositionPass([found[k] for k in sorted(found)], provenance, len(planned), refused, failed,
                          len(planned) - len(todo))


def published_pairs(record: OppositionRecord, public: Collection[str]) -> OppositionRecord:
    """The record as it may be published: only the pairs of two published extractions
    (``public``). A pair touching a private, masked or unknown one goes whole — its
    question speaks of both sides (INV-12)."""
    return replace(record, oppositions=tuple(o for o in record.oppositions if o.a in public and o.b in public))


def private_opposition_problems(record: OppositionRecord, public: Collection[str],
                                known: Collection[str]) -> list[Problem]:
    """A pair of a published wiki that names an existing but unpublished extraction is left
    out of every output: said where it is written, so it is not dropped silently."""
    problems = []
    for item in record.oppositions:
        hidden = [i for i in (item.a, item.b) if i in known and i not in public]
        if hidden:
            problems.append(Problem(
                record.file, item.line or None, "private-opposition",
                f"this opposition pairs unpublished extraction(s) {', '.join(map(repr, hidden))}: "
                "it is published nowhere", "Remove the pair, or publish the extraction (a public notebook, unmasked).",
                Severity.WARNING))
    return problems
