"""bench/parsers.py: its timing and its report run with markdown-it-py alone (the compiled
parsers are optional, installed apart, and said missing when absent)."""

from __future__ import annotations

import importlib.util

from markdown_it.token import Token

from bench.parsers import (
    CANDIDATES,
    Candidate,
    available,
    fast_parse,
    needs_fallback,
    parse_cpu_seconds,
    report,
)
from generator.markup import parse_bounded

TWO_NOTES = ["## Séance\n\nUn *mot* et `code`, voir [[note-b|la suite]].\n",
             "- a\n- b [[ext:x]]\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n"]


def test_parse_timing_runs_every_body_with_markdown_it_py() -> None:
    seen: list[str] = []

    def parse(body: str) -> list[Token]:
        seen.append(body)
        return parse_bounded(body).tokens

    seconds = parse_cpu_seconds(parse, TWO_NOTES, repeats=3)
    assert seconds >= 0.0
    assert seen == TWO_NOTES * 3  # every body, once per pass


def test_missing_parsers_are_named_not_measured() -> None:
    absent = Candidate("absent", "no_such_parser_module", lambda: len)
    found, missing = available([CANDIDATES[0], absent])
    assert [c.name for c in found] == [CANDIDATES[0].name]
    assert missing == ["no_such_parser_module"]


def test_report_without_compiled_parsers_says_which_are_missing() -> None:
    text = report({"two notes": TWO_NOTES}, 1, None, 2)
    assert "markdown-it-py, Carnet's dialect" in text
    for module in ("markdown_it_pyrs", "pyromark", "comrak"):
        if importlib.util.find_spec(module) is None:
            assert module in text.split("Not installed, not measured:")[1].splitlines()[0]


def test_fallback_catches_what_passes_after_a_parse_would_misread() -> None:
    assert needs_fallback("Pas un lien : \\[[note-a]]\n")
    assert needs_fallback("[texte [[note-a]]](https://example.org)\n")
    assert needs_fallback("<details>\n<summary>Résumé</summary>\n\n</details>\n")
    assert needs_fallback("*voir [[note_a*b]] fin*\n")  # Carnet's rule reads the ``*`` as written
    assert needs_fallback("[[note-a]]\n\n[note-a]: /ailleurs\n")  # a reference the parser would link
    assert not needs_fallback(TWO_NOTES[0])
    assert not needs_fallback("[a](b) [[note-a]] [c][d]\n")


def test_fast_parse_falls_back_to_carnets_parser() -> None:
    body = "Pas un lien : \\[[note-a]]\n"
    tokens, fell = fast_parse(None, body)  # no compiled parser needed: the fallback never calls it
    assert fell
    assert [t.type for t in tokens] == [t.type for t in parse_bounded(body).tokens]
