"""Verdict and contestation files, under ``content/verdicts/<article>.yaml`` and
``content/contestations/<article>.yaml``. A record applies only to the article its file
is named after, so a reader knows which file governs a pair. Within that article a
verdict is looked up by (claim text hash, source text hash): the model is provenance,
not key; a list per pair, the latest wins.

``content/verdicts/calibrations.yaml`` is not an article's: it holds the judge's
calibrations (``carnet verify --calibrate``), which say whether a model's verdicts may
change a state (DESIGN §9)."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList
from generator.problems import Problem
from generator.text import model_words, provenance_shown

VERDICTS = ("supported", "partial", "unsupported")
METHODS = ("llm", "scripted", "human")
CALIBRATIONS_FILE = "verdicts/calibrations.yaml"
"""The judge's calibrations: a name no article may take for its verdicts."""
CALIBRATION_FIELDS = ("method", "model", "endpoint", "prompt", "prompt_version", "date", "language", "pair_set",
                      "pairs", "answered", "batch", "balanced_accuracy", "recall", "usage")


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def article_of(rel: str) -> str:
    """The article a verdicts or contestations file belongs to: its name."""
    return PurePosixPath(rel).stem


@dataclass(frozen=True)
class Verdict:
    """Attributes:
        claim_sha256, source_sha256: the key (claim text, cited passage or comment text).
        verdict: supported, partial or unsupported; ``rationale``: one sentence.
        provenance: method, model, prompt_version, date, threshold…
        order: position in the files (ties on date: the later record wins).
    """

    claim_sha256: str
    source_sha256: str
    verdict: str
    rationale: str
    provenance: dict[str, Any]
    file: str
    line: int
    order: int = 0

    @property
    def date(self) -> str:
        return str(self.provenance.get("date", ""))

    @property
    def article(self) -> str:
        return article_of(self.file)


@dataclass(frozen=True)
class Contestation:
    """A person contests a claim (all its pairs, or one ``source``): shown over any state."""

    claim: str
    source: str
    author: str
    date: str
    reason: str
    file: str
    line: int

    @property
    def article(self) -> str:
        return article_of(self.file)


@dataclass(frozen=True)
class Calibration:
    """A judge measured on a labelled pair set shipped with Carnet (``carnet verify --calibrate``).

    Attributes:
        model: the model as the server named it; ``endpoint``: host[:port]/path.
        prompt, prompt_version: the judge's prompt (its name and hash).
        date: when (ISO); ``language``: the pair set's; ``pair_set``: its version (a hash).
        pairs: pairs sent; ``answered``: pairs that got a usable verdict (one left out
            counts as wrong in the figures).
        balanced_accuracy: the mean of the per-label recalls, 0 to 1.
        recall: per label (supported, partial, unsupported).
        usage: tokens the server reported.
        file, line, order: where it is written (ties on date: the later record wins).
    """

    model: str
    prompt_version: str
    date: str
    balanced_accuracy: float
    recall: dict[str, float]
    file: str
    line: int
    order: int = 0
    endpoint: str = ""
    prompt: str = ""
    language: str = ""
    pair_set: str = ""
    pairs: int = 0
    answered: int = 0


@dataclass
class VerificationRecords:
    """Attributes:
        verdicts: (article, claim hash, source hash) → the latest verdict of that file.
        records: every verdict as written, in file order (to report the stray ones).
        contestations: every contestation as written.
        calibrations: every calibration of a judge, in file order.
    """

    verdicts: dict[tuple[str, str, str], Verdict] = field(default_factory=dict)
    records: list[Verdict] = field(default_factory=list)
    contestations: list[Contestation] = field(default_factory=list)
    calibrations: list[Calibration] = field(default_factory=list)

    def verdict(self, article: str, claim_sha256: str, source_sha256: str) -> Verdict | None:
        return self.verdicts.get((article, claim_sha256, source_sha256))

    def calibration(self, model: str, prompt_version: str) -> Calibration | None:
        """The latest calibration of this model with this prompt (by date, then file order),
        as the latest verdict of a pair wins: a judge measured again is judged by its new
        figures, not by the best it ever scored."""
        return self._latest_calibrations.get((model, prompt_version))

    @functools.cached_property
    def _latest_calibrations(self) -> dict[tuple[str, str], Calibration]:
        """(model, prompt version) → its latest calibration: made once, after the files are read
        (every verdict of a build asks)."""
        latest: dict[tuple[str, str], Calibration] = {}
        for calibration in self.calibrations:
            key = (calibration.model, calibration.prompt_version)
            if key not in latest or (calibration.date, calibration.order) >= (latest[key].date, latest[key].order):
                latest[key] = calibration
        return latest

    @functools.cached_property
    def by_article(self) -> dict[str, tuple[list[Verdict], list[Contestation]]]:
        """Each article's verdicts (the latest of each pair, in key order) and contestations,
        from its own files: all that governs its pairs (what a key of their states takes).
        Made once, after the files are read (the records do not change after loading)."""
        grouped: dict[str, tuple[list[Verdict], list[Contestation]]] = {}
        for pair in sorted(self.verdicts):
            grouped.setdefault(pair[0], ([], []))[0].append(self.verdicts[pair])
        for contestation in self.contestations:
            grouped.setdefault(contestation.article, ([], []))[1].append(contestation)
        return grouped


def parse_verdicts(rel: str, value: Any, problems: list[Problem], records: VerificationRecords) -> None:
    """A file of ``verdicts/``: an article's verdicts, or the judge's calibrations."""
    if rel == CALIBRATIONS_FILE:
        parse_calibrations(rel, value, problems, records)
        return
    f = Fields(value, rel, "the verdicts file", problems)
    f.check_known(("verdicts",))
    items = f.data.get("verdicts")
    if not isinstance(items, YamlList):
        f.error("verdicts", "wrong-type", "'verdicts' must be a list", "Let 'carnet verify' write this file.")
        return
    for index, item in enumerate(items):
        v = Fields(item, rel, f"verdict {index + 1}", problems, line=items.line_of(index))
        v.check_known(("claim", "claim_sha256", "source", "source_sha256", "verdict", "rationale", "provenance"))
        verdict = v.text("verdict")
        if verdict and verdict not in VERDICTS:
            v.error("verdict", "invalid-value", f"verdict {verdict!r} is unknown", f"Use one of: {', '.join(VERDICTS)}.")
            continue
        provenance = v.data.get("provenance")
        if not isinstance(provenance, dict) or provenance.get("method") not in METHODS:
            v.error("provenance", "missing-field", "the verdict does not say who or what judged it",
                    f"Add 'provenance: {{method: …, date: …}}' with one of: {', '.join(METHODS)}.")
            continue
        record = Verdict(v.text("claim_sha256"), v.text("source_sha256"), verdict, model_words(v.text("rationale", "")),
                         provenance_shown(provenance), rel, v.line, len(records.records))
        records.records.append(record)
        key = (record.article, record.claim_sha256, record.source_sha256)
        previous = records.verdicts.get(key)
        if previous is None or (record.date, record.order) >= (previous.date, previous.order):
            records.verdicts[key] = record


def parse_contestations(rel: str, value: Any, problems: list[Problem], records: VerificationRecords) -> None:
    f = Fields(value, rel, "the contestations file", problems)
    f.check_known(("contestations",))
    items = f.data.get("contestations")
    if not isinstance(items, YamlList):
        f.error("contestations", "wrong-type", "'contestations' must be a list",
                "Write one '- claim: claim-…' per contestation, with author, date and reason.")
        return
    for index, item in enumerate(items):
        c = Fields(item, rel, f"contestation {index + 1}", problems, line=items.line_of(index))
        c.check_known(("claim", "source", "author", "date", "reason"))
        date = c.date("date", required=True)
        records.contestations.append(Contestation(
            c.text("claim", hint="Name the contested claim by its id (claim-…, shown by its contest link)."),
            c.text("source", ""), c.text("author", hint="Say who contests."), date.isoformat() if date else "",
            c.text("reason", hint="Say why."), rel, c.line))


def _share(f: Fields, key: str) -> float | None:
    """A number from 0 to 1 (a recall, an accuracy); a problem at its line otherwise."""
    value = f.data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        f.error(key, "invalid-value", f"{key!r} of {f.what} must be a number from 0 to 1, not {value!r}",
                "Let 'carnet verify --calibrate' write calibrations; to drop one, delete it whole.")
        return None
    return float(value)


def _count(f: Fields, key: str) -> int | None:
    value = f.data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        f.error(key, "invalid-value", f"{key!r} of {f.what} must be a whole number, not {value!r}",
                "Let 'carnet verify --calibrate' write calibrations; to drop one, delete it whole.")
        return None
    return value


def parse_calibrations(rel: str, value: Any, problems: list[Problem], records: VerificationRecords) -> None:
    """``verdicts/calibrations.yaml``: a calibration with a missing or impossible figure is an
    error at its line and is not used (a judge is never qualified by a record that does not read)."""
    f = Fields(value, rel, "the calibrations file", problems)
    f.check_known(("calibrations",))
    items = f.data.get("calibrations")
    if not isinstance(items, YamlList):
        f.error("calibrations", "wrong-type", "'calibrations' must be a list",
                "Let 'carnet verify --calibrate' write this file.")
        return
    for index, item in enumerate(items):
        c = Fields(item, rel, f"calibration {index + 1}", problems, line=items.line_of(index))
        c.check_known(CALIBRATION_FIELDS)
        before = len(problems)
        method = c.text("method", hint="Say what measured the judge: 'method: llm'.")
        if method and method not in METHODS:
            c.error("method", "invalid-value", f"method {method!r} is unknown", f"Use one of: {', '.join(METHODS)}.")
        model = c.text("model", hint="Name the model the calibration measured, as its server names it.")
        version = c.text("prompt_version", hint="Give the judge's prompt version (sha256:…).")
        date = c.date("date", required=True)
        accuracy = _share(c, "balanced_accuracy")
        recall: dict[str, float] = {}
        raw = c.data.get("recall")
        if not isinstance(raw, dict) or set(raw) != set(VERDICTS):
            c.error("recall", "invalid-value", f"'recall' of calibration {index + 1} must give each label its recall "
                    f"({', '.join(VERDICTS)})", "Let 'carnet verify --calibrate' write calibrations.")
        else:
            shares = Fields(raw, rel, f"the recall of calibration {index + 1}", problems, line=c.line_of("recall"))
            for label in VERDICTS:
                share = _share(shares, label)
                if share is not None:
                    recall[label] = share
        pairs, answered = _count(c, "pairs"), _count(c, "answered")
        if pairs is not None and answered is not None and answered > pairs:
            c.error("answered", "invalid-value", f"calibration {index + 1} says {answered} pairs were answered "
                    f"of {pairs} sent", "Let 'carnet verify --calibrate' write calibrations.")
        if any(p.is_error for p in problems[before:]) or accuracy is None or date is None:
            continue
        records.calibrations.append(Calibration(
            model, version, date.isoformat(), accuracy, recall, rel, c.line, len(records.calibrations),
            c.text("endpoint", ""), c.text("prompt", ""), c.text("language", ""), c.text("pair_set", ""),
            pairs or 0, answered or 0))
