"""One language per site, prompts included (issue 55, item 5): every prompt exists in French
and English, is written in its language and tells the model to answer in it; the site's
``language`` picks them; the kinds ``analyse`` offers and the section the extractive
``propose`` writes come from the theme's strings. Against the scripted server, what an
English site sends is English, and what it writes into the content is too."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import pytest
import yaml

from generator.cli import main
from generator.commands.analyse import run_analyse
from generator.commands.proposals import apply, propose
from generator.extracting.request import DEFAULT_KINDS
from generator.llm.prompts import FALLBACK, PROMPTS, load_prompt, prompt_files, prompt_language
from generator.llm.schema import prompt_examples
from generator.site.theme import Theme
from support.answers import Answers, prompt_of
from support.corpus import replace, write
from support.llm_server import Scripted, reply

TODAY = dt.date(2025, 4, 2)
NAMES = sorted({name for _language, name in prompt_files()})

# Neutral values (ids, numbers, "X"): what is left of the rendered text is the template's own words.
CONTEXTS: dict[str, dict[str, object]] = {
    "analyse_passages": {
        "title": "X", "date": "2025-01-01", "kinds": ["k1", "k2"], "partial": True,
        "notebook": {"title": "X", "guide": "X", "axes": [{"key": "a", "title": "A", "categories": ["c"]}]},
        "segments": [{"blocks": [{"context": True, "texts": ["X"]}, {"context": False, "texts": ["Y"]}]},
                     {"blocks": [{"context": False, "texts": ["Z"]}]}]},
    "ask_passages": {"notebooks": "n", "question": "Q",
                     "passages": [{"id": "n#e-1", "note": "N", "date": "2025-01-01", "text": "X"}]},
    "ask_tools": {"notebooks": "n", "question": "Q"},
    "find_oppositions": {"extractions": [{"id": "e1", "quote": "X"}, {"id": "e2", "quote": "Y"}]},
    "propose_sections": {
        "title": "X", "max_operations": 2, "sections": [{"heading": None, "text": "X"}, {"heading": "H", "text": "Y"}],
        "evidence": [{"id": "e1", "note": "N", "date": "2025-01-01", "quote": "X", "comments": 1, "disagreements": 0}],
        "groups": [{"number": 1, "members": [{"id": "e1", "cited": False, "text": "X"},
                                             {"id": "e2", "cited": True, "text": "Y"}]}]},
    "verify_pairs": {"pairs": [{"key": "p1", "claim": "X", "passage": "Y"}]},
}
FRENCH_WORDS = frozenset(["le", "la", "les", "des", "du", "une", "un", "et", "est", "ne", "pas", "dans", "sur", "pour",
                          "avec", "chaque", "ou", "qui", "que", "aucun"])
ENGLISH_WORDS = frozenset(["the", "a", "an", "and", "is", "not", "in", "on", "for", "with", "each", "or", "which",
                           "that", "no", "of"])
SAYS_ANSWER_LANGUAGE = {"fr": "Réponds en français", "en": "Answer in English"}
"""Where the answer has free text (a statement, a rationale, a question, a section's content)."""
SAYS_NO_TRANSLATION = {"fr": "traduire", "en": "translating"}
"""Where the answer quotes the note: the quote is copied in the note's own words."""


def _words(text: str) -> list[str]:
    return re.findall(r"[a-zàâçéèêëîïôûùüÿœ]+", text.lower())


@pytest.mark.parametrize("language", ["fr", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_every_prompt_is_written_in_its_language_and_asks_for_answers_in_it(name: str, language: str) -> None:
    rendered = load_prompt(name, language).render(**CONTEXTS[name])
    words = _words(rendered)
    french, english = sum(w in FRENCH_WORDS for w in words), sum(w in ENGLISH_WORDS for w in words)
    own, other = (french, english) if language == "fr" else (english, french)
    assert own >= 8 and own > 3 * other, f"{language}/{name}: {french} French and {english} English words"
    said = SAYS_NO_TRANSLATION if name == "analyse_passages" else SAYS_ANSWER_LANGUAGE
    assert said[language].lower() in rendered.lower(), f"{language}/{name} does not say in which language to answer"
    assert SAYS_ANSWER_LANGUAGE["en" if language == "fr" else "fr"].lower() not in rendered.lower()


def test_each_prompt_exists_in_both_languages_asking_for_the_same_answer() -> None:
    """Same variables (a caller's context fits both) and the same answer's fields; a new
    version per language, the same name in the records."""
    assert {language for language, _name in prompt_files()} == {"en", "fr"}
    assert sorted(name for language, name in prompt_files() if language == "fr") == NAMES
    assert sorted(name for language, name in prompt_files() if language == "en") == NAMES
    environment = jinja2.Environment()
    for name in NAMES:
        fr, en = load_prompt(name, "fr"), load_prompt(name, "en")
        assert (fr.name, en.name, fr.language, en.language) == (name, name, "fr", "en")
        assert fr.version != en.version and fr.version.startswith("sha256:")
        variables = [jinja2.meta.find_undeclared_variables(environment.parse(p.text)) for p in (fr, en)]
        assert variables[0] == variables[1] == set(CONTEXTS[name]), name
        assert set(prompt_examples(fr.text)) == set(prompt_examples(en.text)), name


@pytest.mark.parametrize("asked,given", [("fr", "fr"), ("en", "en"), ("fr-CA", "fr"), ("en-GB", "en"), ("EN", "en"),
                                         ("en_US", "en"), ("de", FALLBACK), ("", FALLBACK)])
def test_the_sites_language_picks_the_prompts(asked: str, given: str) -> None:
    assert prompt_language(asked) == given
    assert load_prompt("verify_pairs", asked).text == (PROMPTS / given / "verify_pairs.j2").read_text(encoding="utf-8")


def test_a_language_without_prompts_falls_back_to_english_and_says_so_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_prompt("verify_pairs", "x-test-1").language == "en"
    assert load_prompt("ask_tools", "x-test-1").language == "en"
    err = capsys.readouterr().err
    assert err.count("no prompts in the site's language 'x-test-1'") == 1, err
    assert "asked, and answers, in en" in err
    load_prompt("verify_pairs", "fr-BE")
    assert capsys.readouterr().err == "", "a regional tag of a language there are prompts in is no fallback"


def test_the_theme_names_the_french_kinds_as_the_settings_default_them() -> None:
    """``DEFAULT_KINDS`` (a French site's, and the dataclass's default) is what fr.yaml says."""
    assert tuple(Theme.load(None, "fr").tr("analyse_kinds").split(", ")) == DEFAULT_KINDS


# --- an English site, end to end against the scripted server --------------------------------

NOTE = "notes/english-meeting.md"
ENGLISH_NOTE = """---
title: An English meeting
date: 2025-02-10
notebooks:
  conseil:
    theme: [Budget]
---
The council votes a budget of 1,200 euros for the common room.

The members ask for the room to open on Wednesday at noon.
"""


def english_site(small: Path, url: str | None = None) -> Path:
    replace(small, "carnet.yaml", "language: fr", "language: en")
    if url is not None:
        with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
            f.write(f"llm:\n  base_url: {url}\n  model: modele-test\n  timeout: 5\n  max_retries: 0\n")
    return small


def test_analyse_on_an_english_site_offers_english_kinds(small: Path, llm_server) -> None:
    content = english_site(small, llm_server.url)
    write(content, NOTE, ENGLISH_NOTE)
    llm_server.script(reply(json.dumps({"passages": [
        {"quote": "The council votes a budget of 1,200 euros", "kind": "decision", "categories": []},
        {"quote": "The members ask for the room to open", "kind": "décision", "categories": []}]})))
    (item,) = run_analyse(content, ["english-meeting"], today=TODAY).notes
    assert item.error == ""
    sent = prompt_of(llm_server.requests[-1]["body"])
    assert "Passage kinds: fact, proposal, decision, objection, risk, criterion." in sent
    assert "Types de passage" not in sent and "Texte de la note" not in sent
    assert [(p.quote, p.kind) for p in item.proposed] == [("The council votes a budget of 1,200 euros", "decision")]
    (refused,) = item.left_out
    assert "the kind 'décision' was not asked for (fact, proposal, decision" in refused.reason


def test_a_kind_list_in_the_settings_wins_over_the_themes(small: Path, llm_server) -> None:
    content = english_site(small, llm_server.url)
    with (content / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write("  analysis:\n    kinds: [claim, question]\n")
    write(content, NOTE, ENGLISH_NOTE)
    llm_server.script(reply(json.dumps({"passages": []})))
    run_analyse(content, ["english-meeting"], today=TODAY)
    assert "Passage kinds: claim, question." in prompt_of(llm_server.requests[-1]["body"])


def test_the_extractive_proposal_of_an_english_site_writes_an_english_section(small: Path) -> None:
    content = english_site(small)
    path = propose(content, "wiki-budget", today=TODAY).path
    (operation,) = yaml.safe_load(path.read_text(encoding="utf-8"))["operations"]
    assert operation["op"] == "InsertSection" and operation["heading"] == "Evidence to integrate"
    assert re.search(r"^- “[^”]+” \[\[ext:a-two-paragraphs\]\]$", operation["content"], re.M), operation["content"]
    assert "«" not in operation["content"] and "Pièces" not in path.read_text(encoding="utf-8")
    assert [r.accepted for r in apply(path, today=TODAY)] == [True]
    text = (content / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    assert "\n## Evidence to integrate\n" in text


FRENCH_MARKERS = ("Réponds", "Tu ", "Paire ", "Types de passage", "(chapeau)", "Carnets consultés")
ENGLISH_MARKERS = {"analyse": "Passage kinds:", "propose": "Answer in English", "verify": "Answer in English",
                   "oppositions": "Answer in English", "ask": "Answer in English"}


@pytest.mark.parametrize("command,expected", [
    (["analyse", "english-meeting"], {"analyse"}),
    (["propose", "wiki-budget", "--provider", "llm"], {"propose"}),
    (["verify"], {"verify"}),
    (["select", "wiki-budget", "--oppositions"], {"oppositions"}),
    (["ask", "What budget was voted?", "--no-tools"], {"ask", "verify"}),
])
def test_every_request_of_an_english_site_carries_the_english_prompt(small: Path, llm_server, command: list[str],
                                                                     expected: set[str]) -> None:
    content = english_site(small, llm_server.url)
    write(content, NOTE, ENGLISH_NOTE)
    answers = Answers()
    asked: list[str] = []

    def respond(body: dict[str, Any]) -> Scripted | None:
        prompt = prompt_of(body)
        if '"statements"' in prompt:  # ask: one statement citing the first passage sent, verbatim
            asked.append("ask")
            found = re.search(r"^Passage (\S+) — .*\n+(.+)$", prompt, re.M)
            assert found is not None, prompt
            words = " ".join(found.group(2).split()[:5])
            return reply(json.dumps({"not_in_corpus": False, "statements": [
                {"text": "The budget was voted.", "citations": [{"passage": found.group(1), "quote": words}]}]}))
        return answers.respond(body)

    llm_server.respond(respond)
    assert main([*command, "--content", str(content)]) == 0
    prompts = [prompt_of(r["body"]) for r in llm_server.requests if "messages" in r["body"]]
    assert prompts, "the command sent a request"
    assert set(answers.seen) | set(asked) == expected
    for prompt in prompts:
        assert not [m for m in FRENCH_MARKERS if m in prompt], prompt[:300]
        kind = next(k for k in ENGLISH_MARKERS if k in expected and ENGLISH_MARKERS[k] in prompt)
        assert kind in expected
