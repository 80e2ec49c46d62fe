"""The judge measured before it changes a state (``carnet verify --calibrate``, DESIGN §9).

Carnet ships labelled (claim, passage) pairs in each language it speaks
(``calibration/<language>.yaml``, package data, written and labelled by people). The judge
reads them through the very requests and answer checks of ``carnet verify``
(:func:`generator.verification.judge.judge_batch`), and its balanced accuracy (the mean of
its recall on each label, so a judge that always says "supported" scores 1/3) is recorded
in ``content/verdicts/calibrations.yaml``. A pair the answer leaves out, or whose item is
refused, counts as wrong: a judge is measured on every pair sent.

A model's verdicts change a pair's state only when its latest calibration with the same
prompt reaches the site's bar (:func:`generator.verification.assess.qualification`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from generator.corpus.verdicts import CALIBRATIONS_FILE, VERDICTS, text_hash
from generator.llm import LLMClient, LLMError, LLMTransportError
from generator.llm.errors import BudgetSpent
from generator.llm.prompts import load_prompt, prompt_language
from generator.problems import CarnetError
from generator.verification.judge import RefusedPair, judge_batch
from generator.writes import appended, write_content

PAIR_SETS = Path(__file__).resolve().parent / "calibration"
"""The labelled pair sets, one per language (package data)."""
SOURCE = "calibration"
"""How a calibration pair's source is named in a request's records (it cites no extraction)."""


class PairSetError(CarnetError):
    """No labelled pair set for the site's language, or one that does not read."""


@dataclass(frozen=True)
class LabelledPair:
    """A (claim, passage) pair and the label a person gave it; it reads as the judge's
    :class:`~generator.verification.judge.Judgeable`.

    Attributes:
        id: its name in the set (``fr-07``).
        claim: a sentence of a synthesis; ``passage``: a quoted extraction.
        label: supported, partial or unsupported.
    """

    id: str
    claim: str
    passage: str
    label: str

    @property
    def claim_text(self) -> str:
        return self.claim

    @cached_property
    def claim_sha256(self) -> str:
        return text_hash(self.claim)

    @cached_property
    def source_sha256(self) -> str:
        return text_hash(self.passage)

    @property
    def source(self) -> str:
        return f"{SOURCE}:{self.id}"


@dataclass(frozen=True)
class PairSet:
    """Attributes:
        language: the language its pairs are written in.
        version: a hash of the file: a pair added, changed or relabelled is a new version.
        pairs: in the file's order.
    """

    language: str
    version: str
    pairs: tuple[LabelledPair, ...]


def load_pair_set(language: str, folder: Path = PAIR_SETS) -> PairSet:
    """The pair set in the language the judge is asked in for a site in ``language``
    (:func:`~generator.llm.prompts.prompt_language`: fr-CA → fr; one with no prompts → en)."""
    available = sorted(p.stem for p in folder.glob("*.yaml"))
    name = prompt_language(language)
    if name not in available:
        raise PairSetError(f"Carnet has no labelled pairs in {name!r}, the language of the judge's prompt for this "
                           f"site (it has pairs in: {', '.join(available)}): the judge cannot be calibrated")
    path = folder / f"{name}.yaml"
    data = path.read_bytes()
    value = yaml.safe_load(data.decode("utf-8"))
    pairs = []
    for number, item in enumerate(value.get("pairs", []) if isinstance(value, dict) else [], start=1):
        if not isinstance(item, dict) or item.get("label") not in VERDICTS or not all(
                isinstance(item.get(key), str) and item[key].strip() for key in ("id", "claim", "passage")):
            raise PairSetError(f"{path}: pair {number} needs an id, a claim, a passage and a label "
                               f"({', '.join(VERDICTS)})")
        pairs.append(LabelledPair(item["id"], " ".join(item["claim"].split()), " ".join(item["passage"].split()),
                                  item["label"]))
    if not pairs:
        raise PairSetError(f"{path}: no labelled pairs")
    return PairSet(name, "sha256:" + hashlib.sha256(data).hexdigest()[:16], tuple(pairs))


def sending_order(pair_set: PairSet) -> list[LabelledPair]:
    """The pairs in a fixed order that mixes them (seeded by the set's version): the file keeps
    a passage's claims together; a batch should not."""
    return sorted(pair_set.pairs, key=lambda p: hashlib.sha256(f"{pair_set.version}:{p.id}".encode()).hexdigest())


def calibration_batches(pair_set: PairSet, batch_size: int) -> list[tuple[str, list[LabelledPair]]]:
    """The requests of a calibration, in :func:`sending_order`: each a label ("pairs 9–16",
    the numbers its refusals are said with) and its pairs."""
    order = sending_order(pair_set)
    batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    return [(f"pairs {start + 1}–{start + len(batch)}", batch)
            for start, batch in zip(range(0, len(order), batch_size), batches, strict=True)]


@dataclass(frozen=True)
class Scores:
    """Attributes:
        sent: pairs sent; ``answered``: pairs with a usable verdict.
        recall: per label, the share of its pairs the judge labelled so (unanswered: wrong).
        balanced_accuracy: the mean of the recalls (1/3 for a judge that always says one label).
        accuracy: the share of all pairs labelled right.
    """

    sent: int
    answered: int
    recall: dict[str, float]
    balanced_accuracy: float
    accuracy: float


def score(pairs: Sequence[LabelledPair], answers: Mapping[str, str]) -> Scores:
    """The judge's figures: ``answers`` maps a pair's id to the verdict it got; a pair with
    none counts as wrong. Pure."""
    recall: dict[str, float] = {}
    for label in VERDICTS:
        of_label = [p for p in pairs if p.label == label]
        recall[label] = sum(answers.get(p.id) == label for p in of_label) / len(of_label) if of_label else 0.0
    present = [recall[label] for label in VERDICTS if any(p.label == label for p in pairs)]
    right = sum(answers.get(p.id) == p.label for p in pairs)
    return Scores(len(pairs), sum(p.id in answers for p in pairs), recall,
                  sum(present) / len(present) if present else 0.0, right / len(pairs) if pairs else 0.0)


@dataclass
class CalibrationReport:
    """What ``carnet verify --calibrate`` did.

    Attributes:
        scores: the judge's figures (None when nothing could be measured).
        record: the calibration written (None: nothing was written, ``why_not`` says why).
        failed_batches: one line per batch whose answer was refused whole (its pairs count
            as wrong).
        refused: the items refused one by one, and the pairs answers left out.
        usage: tokens the server reported, failed answers included.
        stopped: the endpoint failed: nothing was recorded.
    """

    scores: Scores | None = None
    record: dict[str, Any] | None = None
    why_not: str = ""
    failed_batches: list[str] = field(default_factory=list)
    refused: list[RefusedPair] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    stopped: bool = False

    def add_usage(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value


def calibrate(content: Path, pair_set: PairSet, client: LLMClient, batch_size: int,
              language: str) -> CalibrationReport:
    """Send ``pair_set`` to the judge, ``batch_size`` pairs per request, and append its figures
    to ``verdicts/calibrations.yaml``. Nothing is written when the endpoint failed (the figures
    would measure the network, not the judge), when no answer came back at all, or when the
    server named more than one model (the figures would mix them). ``language``: the site's
    (the prompt is the one ``carnet verify`` sends it, :func:`generator.verification.judge.judge`)."""
    prompt = load_prompt("verify_pairs", language)
    report = CalibrationReport()
    order = sending_order(pair_set)
    by_source = {p.source: p for p in order}
    answers: dict[str, str] = {}
    provenances: list[dict[str, Any]] = []
    for number, (label, batch) in enumerate(calibration_batches(pair_set, batch_size)):
        try:
            answer = judge_batch(client, prompt, batch, SOURCE, number * batch_size + 1)
        except (LLMTransportError, BudgetSpent) as exc:  # figures of part of the pairs would mislead
            report.add_usage(exc.usage)
            report.failed_batches.append(f"{label}: {exc}")
            report.stopped = True
            report.why_not = ("the endpoint failed: the figures would measure it, not the judge"
                              if isinstance(exc, LLMTransportError) else
                              "the run's budget was spent before every pair was read")
            return report
        except LLMError as exc:  # an unusable answer: the judge's own failure, its pairs count as wrong
            report.add_usage(exc.usage)
            report.failed_batches.append(f"{label}: {exc}")
            continue
        report.add_usage(answer.provenance.get("usage", {}))
        provenances.append(answer.provenance)
        report.refused += answer.refused
        for verdict in answer.records:
            answers[by_source[verdict["source"]].id] = verdict["verdict"]
    report.scores = score(order, answers)
    models = sorted({str(p.get("model", "")) for p in provenances})
    if not provenances:
        report.why_not = "no answer of the judge could be read"
        return report
    if len(models) > 1:
        report.why_not = f"the server named several models ({', '.join(models)}): the figures would mix them"
        return report
    first = provenances[0]
    scores = report.scores
    record: dict[str, Any] = {
        "method": "llm", "model": models[0], "endpoint": first.get("endpoint", ""),
        "prompt": first.get("prompt", prompt.name), "prompt_version": first.get("prompt_version", prompt.version),
        "date": first.get("date") or dt.date.today().isoformat(), "language": pair_set.language, "pair_set": pair_set.version,
        "pairs": scores.sent, "answered": scores.answered, "batch": batch_size,
        "balanced_accuracy": round(scores.balanced_accuracy, 4),
        "recall": {label: round(value, 4) for label, value in scores.recall.items()},
    }
    if report.usage:
        record["usage"] = dict(report.usage)
    write_content(content, "carnet verify --calibrate", appended(content, CALIBRATIONS_FILE, "calibrations", [record]))
    report.record = record
    return report


def describe(report: CalibrationReport, pair_set: PairSet, bar: float) -> tuple[list[str], list[str]]:
    """What ``carnet verify --calibrate`` prints: its figures and whether the judge qualifies
    (stdout), and what failed or was refused (stderr)."""
    errors = [f"failed batch: {line}" for line in report.failed_batches]
    errors += [f"refused: {refused.describe()} (counted as wrong)" for refused in report.refused]
    lines: list[str] = []
    scores = report.scores
    if scores is not None:
        model = report.record["model"] if report.record else "the judge"
        lines.append(f"calibrated {model} on {scores.sent} labelled pairs ({pair_set.language}, pair set "
                     f"{pair_set.version}): {scores.answered} answered; a pair left out counts as wrong")
        recall = ", ".join(f"{label} {value:.3f}" for label, value in scores.recall.items())
        lines.append(f"balanced accuracy {scores.balanced_accuracy:.3f} (recall: {recall}; accuracy "
                     f"{scores.accuracy:.3f}); the bar (verification.min_balanced_accuracy) is {bar:.3f}")
    if report.record is None:
        errors.append(f"nothing recorded: {report.why_not}; run 'carnet verify --calibrate' again")
    elif report.record["balanced_accuracy"] >= bar:  # as recorded (rounded), as the build will read it
        lines.append(f"the judge qualifies: its verdicts change pair states, shown with its balanced accuracy "
                     f"(recorded in content/{CALIBRATIONS_FILE})")
    else:
        lines.append(f"the judge does NOT qualify: its verdicts are published as suggestions and change no state "
                     f"(recorded in content/{CALIBRATIONS_FILE})")
    return lines, errors  # the tokens spent: the run's summary says them (generator/cli.py, _spent)
