"""Tiny corpora built in memory, for unit tests of the pure cores (no files, no build).

Notes are written as markdown strings and parsed by the loader's pure half
(:func:`generator.corpus.load.parse_content`), so the model the cores receive is the one
a build would give them; :func:`analysed` then chains the same pure stages as
``pipeline.check_content`` (anchor → audit → assess), without publication or rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.anchoring import AnchoredNote, anchor_note
from generator.corpus.load import ContentFiles, parse_content
from generator.corpus.model import Corpus
from generator.problems import Problem
from generator.synthesis.audit import ArticleAudit, audit_articles

SETTINGS = "title: Tiny\nbase_url: https://tiny.example.org/\nlanguage: fr\nlicence: CC BY 4.0\n"

NOTEBOOK = """title: Conseil
visibility: public
authors: full
axes:
  theme:
    title: Thème
    categories: [Budget, Foyer, Sport]
  annee:
    title: Année
    categories: ["2024", "2025"]
"""


def _yaml(value: Any) -> str:
    """JSON is YAML's flow style: every value is written unambiguously (dates as strings)."""
    return json.dumps(value, ensure_ascii=False)


def note_md(body: str, *, title: str = "Note", type: str = "note", date: str | None = "2025-01-01",
            notebooks: Mapping[str, Mapping[str, Sequence[str]] | None] | None = None, **fields: Any) -> str:
    """A note file: front matter from the keyword arguments, then ``body``."""
    meta: dict[str, Any] = {"title": title, "type": type}
    if date is not None:
        meta["date"] = date
    if notebooks is not None:
        meta["notebooks"] = notebooks
    meta.update(fields)
    return "---\n" + "".join(f"{key}: {_yaml(value)}\n" for key, value in meta.items()) + "---\n" + body


def ext(id: str, quote: str, *, comments: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """One extraction of a sidecar file."""
    item: dict[str, Any] = {"id": id, "quote": quote, "author": "Zoé", **fields}
    if comments:
        item["comments"] = comments
    return item


def com(id: str, stance: str = "neutral", text: str = "Un avis.", **fields: Any) -> dict[str, Any]:
    """One comment of an extraction."""
    return {"id": id, "author": "Yann", "date": "2025-02-01", "stance": stance, "text": text, **fields}


def corpus_of(notes: dict[str, str], extractions: dict[str, list[dict[str, Any]]] | None = None, *,
              notebooks: dict[str, str] | None = None, verdicts: dict[str, list[dict[str, Any]]] | None = None,
              contestations: dict[str, list[dict[str, Any]]] | None = None,
              settings: str = SETTINGS) -> tuple[Corpus, list[Problem]]:
    """Notes by slug, their extractions by note slug, records by article slug → the corpus
    the loader gives and its problems. One notebook ``conseil`` by default."""
    files = ContentFiles(settings=settings.encode("utf-8"))
    for slug, text in (notebooks if notebooks is not None else {"conseil": NOTEBOOK}).items():
        files.notebooks[f"notebooks/{slug}.yaml"] = text.encode("utf-8")
    for slug, text in notes.items():
        files.notes[f"notes/{slug}.md"] = text.encode("utf-8")
    for slug, items in (extractions or {}).items():
        files.extractions[f"notes/{slug}.extractions.yaml"] = _yaml({"extractions": items}).encode("utf-8")
    for slug, items in (verdicts or {}).items():
        files.verdicts[f"verdicts/{slug}.yaml"] = _yaml({"verdicts": items}).encode("utf-8")
    for slug, items in (contestations or {}).items():
        files.contestations[f"contestations/{slug}.yaml"] = _yaml({"contestations": items}).encode("utf-8")
    return parse_content(files)


@dataclass
class Analysed:
    """What the pure stages of ``check_content`` give for a tiny corpus."""

    corpus: Corpus
    anchored: dict[str, AnchoredNote]
    audits: dict[str, ArticleAudit]
    problems: list[Problem]

    def codes(self) -> list[str]:
        return sorted(p.code for p in self.problems)


def anchored_of(corpus: Corpus) -> tuple[dict[str, AnchoredNote], list[Problem]]:
    anchored: dict[str, AnchoredNote] = {}
    problems: list[Problem] = []
    for slug, note in corpus.notes.items():
        anchored[slug], found = anchor_note(note)
        problems += found
    return anchored, problems


def analysed(notes: dict[str, str], extractions: dict[str, list[dict[str, Any]]] | None = None,
             **options: Any) -> Analysed:
    """load → anchor → audit, as ``pipeline.check_content`` chains them; every problem kept."""
    corpus, problems = corpus_of(notes, extractions, **options)
    anchored, found = anchored_of(corpus)
    audits, audit_problems = audit_articles(corpus, anchored)
    return Analysed(corpus, anchored, audits, problems + found + audit_problems)
