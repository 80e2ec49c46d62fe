"""The NLI judge: the only part of verification that calls a model (``carnet verify``).

Pairs that passed the verbatim check and have no verdict are sent in batches of N
pairs per request; each batch's verdicts are appended to
``content/verdicts/<article>.yaml`` as soon as it succeeds, so a failing batch keeps
the batches before it. What could not be judged is reported; other work goes on, except
after a transport failure (endpoint down, or failing after its retries): the remaining
batches are then reported unjudged without being sent.

With ``jobs`` above one, up to that many batches are in flight at once (:func:`in_order`);
their answers are checked and written in the batches' order, whatever order they arrive
in, so the files are byte for byte those of one batch at a time. After a transport
failure or a failed write no batch is started; those already in flight complete, and
what they judged is kept (after a failed write, only reported: nothing more is written).

An answer is checked against its request, pair by pair (pairs are independent): an
item naming no pair of the batch, a pair answered twice, a placeholder or over-long
rationale are refused, and a pair the answer leaves out stays unjudged; each is
reported with its article and pair number. A batch none of whose items is usable is
reported as refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypedDict

from generator.llm import LLMAnswerError, LLMClient, LLMError, LLMTransportError
from generator.llm.concurrent import in_order
from generator.llm.errors import BudgetSpent
from generator.llm.plan import Limits, Plan, PlannedRequest
from generator.llm.prompts import Prompt, load_prompt
from generator.llm.schema import answer_tokens, bounded, placeholder, prompt_examples, schema_fault, shown, too_long
from generator.verification.assess import Assessment
from generator.writes import WriteError, appended, write_content

BATCH_SIZE = 8
SCHEMA = {"type": "object", "required": ["verdicts"],
          "properties": {"verdicts": {"type": "array", "items": {
              "type": "object", "required": ["pair", "verdict", "rationale"],
              "properties": {"pair": {"type": "string"},
                             "verdict": {"type": "string", "enum": ["supported", "partial", "unsupported"]},
                             "rationale": {"type": "string"}}}}}}


RATIONALE_PATTERN = '^[A-Za-zÀ-ÖØ-öø-ÿ][^"\\\\]{10,300}$'
"""What the server is asked a rationale to be: a sentence, starting with a letter, of 11 to
301 characters (a small model copies the prompt's "…" back otherwise, or runs on). An answer
is held to it whatever the server promised: a rationale outside it refuses its pair."""
MAX_RATIONALE_CHARS = 301
"""Longest rationale recorded with a verdict, the pattern's own bound; a longer one refuses its pair."""
VERDICT_TOKENS = 200
"""Tokens one verdict takes: its pair key, the verdict and a sentence of rationale (a bound of
the answer, not the longest rationale accepted)."""


class PairFault(Enum):
    """Why one answer of a batch was not recorded (each pair stands alone)."""

    UNKNOWN_PAIR = "names no pair of the batch"
    ANSWERED_TWICE = "is answered more than once"
    MISSING = "is missing from the answer"
    PLACEHOLDER = "has a placeholder for a rationale"
    TOO_LONG = "has an over-long rationale"
    OUTSIDE_REQUEST = ("has a rationale outside what the request asked (a sentence of 11 to 301 characters, "
                       "starting with a letter, without quotes or backslashes)")


class VerdictRecord(TypedDict):
    """One verdict as ``verdicts/<article>.yaml`` records it, keys in the file's order."""

    claim: str
    claim_sha256: str
    source: str
    source_sha256: str
    verdict: str
    rationale: str
    provenance: dict[str, Any]


@dataclass(frozen=True)
class RefusedPair:
    """One item of an answer refused, or one pair it left out.

    Attributes:
        article: the article the batch came from.
        pair: the pair's number in the article (1-based, as in "pairs 3–4"); 0 when the
            answer named no pair of the batch.
        fault: what was wrong.
        said: the pair id as the model wrote it (for an unknown one), or a detail.
    """

    article: str
    pair: int
    fault: PairFault
    said: str = ""

    def describe(self) -> str:
        which = f"pair {self.pair}" if self.pair else f"an answer for pair {shown(self.said)}"
        detail = f" ({self.said})" if self.said and self.pair else ""
        return f"{self.article} {which} {self.fault.value}{detail}: left unjudged"


@dataclass
class JudgeReport:
    """What ``carnet verify`` did.

    Attributes:
        judged: pairs whose verdict was written.
        failed_batches: one line per batch that failed (transport, unusable answer) or
            whose every item was refused.
        refused: the answers refused item by item, and the pairs an answer left out.
        unjudged: pairs without a verdict after the run (to send again).
        usage: tokens the server reported, failed and refused answers included.
        stopped: the endpoint failed to answer: later batches were not sent.
        budget_spent: the run's budget would have been spent: later batches were not sent.
        refused_batches: batches whose answer was unusable as a whole (at temperature 0 the
            same batch gets the same answer: a smaller batch is another request).
        write_error: why a batch's verdicts could not be written (a full or read-only
            disk, a file that cannot be extended safely): nothing more was sent.
    """

    judged: int = 0
    failed_batches: list[str] = field(default_factory=list)
    refused: list[RefusedPair] = field(default_factory=list)
    unjudged: list[Assessment] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    stopped: bool = False
    write_error: str = ""
    budget_spent: bool = False
    refused_batches: int = 0

    @property
    def complete(self) -> bool:
        """Every pair sent got its verdict."""
        return not self.failed_batches and not self.refused and not self.stopped

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value


@dataclass(frozen=True)
class BatchVerdicts:
    """One batch's answer, checked against its request.

    Attributes:
        records: the verdicts to write, one per pair answered well, in the batch's order.
        provenance: the request's provenance record (its usage included).
        refused: the items refused and the pairs left out; ``answered`` counts the
            items the answer held.
    """

    records: list[VerdictRecord]
    provenance: dict[str, Any]
    refused: list[RefusedPair]
    answered: int


def _pair_key(value: str) -> str:
    return value.strip().lower()


def verdicts_constraint(keys: list[str]) -> dict[str, Any]:
    """What the server is asked to answer for the pairs ``keys``: one verdict per pair,
    naming a pair of the batch, with a rationale that is a sentence (not the prompt's "…"
    copied back, nor text that runs on to the token bound)."""
    constraint = bounded(SCHEMA, "verdicts", max_items=len(keys), min_items=len(keys))
    item = constraint["properties"]["verdicts"]["items"]["properties"]
    item["pair"]["enum"] = list(keys)
    item["rationale"]["pattern"] = RATIONALE_PATTERN
    return constraint


class Judgeable(Protocol):
    """A (claim, source) pair as the judge reads it: an article's :class:`Assessment`, or a
    pair of an answer (``carnet ask``)."""

    @property
    def claim_text(self) -> str: ...
    @property
    def passage(self) -> str: ...
    @property
    def claim_sha256(self) -> str: ...
    @property
    def source_sha256(self) -> str: ...
    @property
    def source(self) -> str: ...


def judge_batch(client: LLMClient, prompt: Prompt, batch: Sequence[Judgeable], article: str = "",
                first: int = 1) -> BatchVerdicts:
    """One request for ``batch``, whose first pair is number ``first`` of ``article``.
    Every item of the answer must name a pair of the batch, once, with a verdict and a
    rationale that says something; the others are refused one by one."""
    keys = {f"p{number + 1}": item for number, item in enumerate(batch)}
    # one verdict per pair sent, naming a pair of the batch, in no more tokens than that takes
    constraint = verdicts_constraint(list(keys))
    data, provenance = client.chat_json(prompt, SCHEMA, constraint=constraint,
                                        max_tokens=answer_tokens(len(batch), VERDICT_TOKENS), pairs=pairs_of(batch))
    # what the request asked a rationale to be, held to whatever the server promised
    asked = constraint["properties"]["verdicts"]["items"]["properties"]["rationale"]
    number = {key: first + index for index, key in enumerate(keys)}
    # the request's usage is recorded once, on its first verdict; every verdict names its request,
    # so summing the records' usage counts each request once (a batch of 8 is not 8 × its tokens)
    request = request_id([(item.claim_sha256, item.source_sha256) for item in batch], provenance.date)
    shared = {key: value for key, value in provenance.as_record().items() if key != "usage"}
    examples = prompt_examples(prompt.text).get("rationale", frozenset())
    refused: list[RefusedPair] = []
    answers: dict[str, list[dict[str, Any]]] = {}  # the answer's items (JSON objects), by pair
    for answer in data["verdicts"]:
        key = _pair_key(answer["pair"])
        if key in keys:
            answers.setdefault(key, []).append(answer)
        else:
            refused.append(RefusedPair(article, 0, PairFault.UNKNOWN_PAIR, answer["pair"]))
    records: list[VerdictRecord] = []
    for key, item in keys.items():
        given = answers.get(key, [])
        rationale = given[0]["rationale"].strip() if len(given) == 1 else ""
        outside = schema_fault(given[0]["rationale"], asked, "rationale") if len(given) == 1 else ""
        fault = (PairFault.MISSING if not given else PairFault.ANSWERED_TWICE if len(given) > 1
                 else PairFault.TOO_LONG if too_long(rationale, MAX_RATIONALE_CHARS)
                 else PairFault.PLACEHOLDER if placeholder(rationale, examples)
                 else PairFault.OUTSIDE_REQUEST if outside else None)
        if fault is not None:
            detail = too_long(rationale, MAX_RATIONALE_CHARS) if fault is PairFault.TOO_LONG else \
                f"{len(given)} times; a pair gets exactly one verdict" if fault is PairFault.ANSWERED_TWICE else \
                shown(rationale) if fault in (PairFault.PLACEHOLDER, PairFault.OUTSIDE_REQUEST) else ""
            refused.append(RefusedPair(article, number[key], fault, detail))
            continue
        own = dict(shared, threshold="supported", request=request)
        if not records and provenance.usage:
            own["usage"] = dict(provenance.usage)
        records.append({
            "claim": item.claim_text, "claim_sha256": item.claim_sha256,
            "source": item.source, "source_sha256": item.source_sha256,
            "verdict": given[0]["verdict"], "rationale": rationale,
            "provenance": own,
        })
    return BatchVerdicts(records, provenance.as_record(), refused, len(data["verdicts"]))


def request_id(pairs: Sequence[tuple[str, str]], date: str) -> str:
    """The id its verdicts give a request: its date and a digest of the pairs it held."""
    import hashlib

    digest = hashlib.sha256("".join(a + b for a, b in pairs).encode("utf-8")).hexdigest()[:10]
    return f"{date}-{digest}" if date else digest


def pairs_of(batch: Sequence[Judgeable]) -> list[dict[str, str]]:
    """What a request sends of its pairs (the prompt's ``pairs``)."""
    return [{"key": f"p{number + 1}", "claim": item.claim_text, "passage": item.passage}
            for number, item in enumerate(batch)]


def batches_plan(command: str, batches: Sequence[tuple[str, Sequence[Judgeable]]], client: LLMClient,
                 prompt: Prompt, limits: Limits) -> Plan:
    """The plan of sending ``batches`` (each a label and its pairs), one request each."""
    return Plan(command, tuple(PlannedRequest(label, client.request_characters(prompt, pairs=pairs_of(batch)),
                                              answer_tokens(len(batch), VERDICT_TOKENS))
                               for label, batch in batches), limits)


def append_verdicts(content: Path, article: str, records: list[VerdictRecord]) -> None:
    """Append records to ``verdicts/<article>.yaml`` (made when missing) in the file's own
    layout, through the write seam: the file must read back as its old verdicts, byte for
    byte, plus exactly these."""
    rel = f"verdicts/{article}.yaml"
    write_content(content, f"carnet verify {article}", appended(content, rel, "verdicts", records))


def verify_batches(pending: dict[str, list[Assessment]], batch_size: int) -> list[tuple[str, int, list[Assessment]]]:
    """The requests of ``carnet verify``: (article, index of its first pair, pairs)."""
    return [(article, start, items[start:start + batch_size])
            for article, items in sorted(pending.items()) for start in range(0, len(items), batch_size)]


def _pairs_label(article: str, start: int, batch: Sequence[object]) -> str:
    return f"{article} pairs {start + 1}–{start + len(batch)}"


def verify_plan(pending: dict[str, list[Assessment]], batch_size: int, client: LLMClient, language: str,
                limits: Limits) -> Plan:
    """What ``carnet verify`` will send."""
    return batches_plan("carnet verify", [(_pairs_label(article, start, batch), batch)
                                          for article, start, batch in verify_batches(pending, batch_size)],
                        client, load_prompt("verify_pairs", language), limits)


def judge(content: Path, pending: dict[str, list[Assessment]], client: LLMClient,
          batch_size: int = BATCH_SIZE, *, jobs: int = 1, language: str = "fr") -> JudgeReport:
    """Judge the ``pending`` pairs of each article, ``batch_size`` pairs per request, up to
    ``jobs`` requests at once. Answers are checked and written in the batches' order, so the
    files are those of ``--jobs 1`` — except after a transport failure, when the batches that
    were in flight at that moment (which depends on timing) are kept as well. ``language``:
    the site's (the prompt is in it). A batch the run's budget (the client's limits) cannot
    pay for is not sent, nor any after it."""
    prompt = load_prompt("verify_pairs", language)
    report = JudgeReport()
    batches = verify_batches(pending, batch_size)
    # set by a transport failure (don't wait out every batch's retries), the budget spent, or a
    # failed write (don't pay for answers that could not be kept): no batch is started after it
    stop = threading.Event()

    def sender(number: int, article: str, start: int, batch: list[Assessment]) -> Callable[[], BatchVerdicts | LLMError]:
        def send() -> BatchVerdicts | LLMError:
            client.progress(f"request {number} of {len(batches)}: {_pairs_label(article, start, batch)}")
            try:
                return judge_batch(client, prompt, batch, article, start + 1)
            except LLMError as exc:
                if isinstance(exc, (LLMTransportError, BudgetSpent)):
                    stop.set()
                return exc
        return send

    with closing(in_order([sender(number, *batch) for number, batch in enumerate(batches, start=1)], jobs,
                          stop)) as answers:
        for (article, start, batch), answer in zip(batches, answers, strict=True):
            pairs = _pairs_label(article, start, batch)
            if answer is None:  # not sent: a transport failure or a failed write came first
                report.unjudged += batch
                continue
            if isinstance(answer, LLMError):
                report.failed_batches.append(f"{pairs}: {answer}")
                report.unjudged += batch
                report.add_usage(answer.usage)  # an unusable answer still cost its tokens
                report.stopped = report.stopped or isinstance(answer, LLMTransportError)
                report.budget_spent = report.budget_spent or isinstance(answer, BudgetSpent)
                report.refused_batches += isinstance(answer, LLMAnswerError)
                continue
            report.add_usage(answer.provenance.get("usage", {}))
            if report.write_error:  # answered while in flight, but nothing more is written
                report.unjudged += batch
                continue
            records = answer.records
            report.refused += answer.refused
            judged = {r["claim_sha256"] + r["source_sha256"] for r in records}
            report.unjudged += [item for item in batch if item.claim_sha256 + item.source_sha256 not in judged]
            if not records:  # nothing usable: the batch is refused, and nothing is written
                report.refused_batches += 1
                report.failed_batches.append(f"{pairs}: refused, no item of the answer could be recorded "
                                             f"({answer.answered} item(s) for {len(batch)} pair(s))")
                continue
            try:
                append_verdicts(content, article, records)
            except WriteError as exc:  # the file is left as it was: those pairs stay unjudged
                report.write_error = str(exc)
                stop.set()
                report.unjudged += [item for item in batch if item.claim_sha256 + item.source_sha256 in judged]
                continue
            report.judged += len(records)
    return report

