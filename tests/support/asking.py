"""Helpers of the ``carnet ask`` tests: the endpoint configured, a passage found by its
words, the model's answer and the judge's verdicts as the scripted server sends them."""

from __future__ import annotations

import json
from pathlib import Path

from generator.answering import Scope
from generator.commands.ask import library
from generator.llm import LLMClient, llm_settings
from support.llm_server import Scripted, reply


def configure(small: Path, url: str) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"llm:\n  base_url: {url}\n  model: modele-test\n  timeout: 5\n  max_retries: 0\n")


def client_for(small: Path) -> LLMClient:
    found = library(small, Scope())
    return LLMClient(llm_settings(found.analysis.corpus.settings.extra), notice=lambda message: None)


def passage_with(small: Path, words: str) -> str:
    """The id of the published passage holding ``words``."""
    found = library(small, Scope())
    (passage,) = [p for p in found.passages.values() if words in p.text]
    return passage.id


def answer(*statements: tuple[str, list[tuple[str, str]]], not_in_corpus: bool = False) -> str:
    return json.dumps({"not_in_corpus": not_in_corpus, "statements": [
        {"text": text, "citations": [{"passage": p, "quote": q} for p, q in cited]} for text, cited in statements]},
        ensure_ascii=False)


def verdicts(*given: tuple[str, str]) -> Scripted:
    return reply(json.dumps({"verdicts": [{"pair": pair, "verdict": verdict,
                                           "rationale": "Le passage dit exactement ce que la phrase avance."}
                                          for pair, verdict in given]}))
