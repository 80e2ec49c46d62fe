"""Verdict and contestation files, under ``content/verdicts/<article>.yaml`` and
``content/contestations/<article>.yaml``. A record applies only to the article its file
is named after, so a reader knows which file governs a pair. Within that article a
verdict is looked up by (claim text hash, source text hash): the model is provenance,
not key; a list per pair, the latest wins."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator.corpus.fields import Fields
from generator.corpus.source import YamlList
from generator.problems import Problem

VERDICTS = ("supported", "partial", "unsupported")
METHODS = ("llm", "scripted", "human")


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


@dataclass
class VerificationRecords:
    """Attributes:
        verdicts: (article, claim hash, source hash) → the latest verdict of that file.
        records: every verdict as written, in file order (to report the stray ones).
        contestations: every contestation as written.
    """

    verdicts: dict[tuple[str, str, str], Verdict] = field(default_factory=dict)
    records: list[Verdict] = field(default_factory=list)
    contestations: list[Contestation] = field(default_factory=list)

    def verdict(self, article: str, claim_sha256: str, source_sha256: str) -> Verdict | None:
        return self.verdicts.get((article, claim_sha256, source_sha256))

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
        record = Verdict(v.text("claim_sha256"), v.text("source_sha256"), verdict, v.text("rationale", ""),
                         dict(provenance), rel, v.line, len(records.records))
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
