"""``carnet ask``: retrieval first (tool calls, or Carnet's own search), every quote
anchored exactly or refused, "not in the corpus" when nothing is found, and nothing
private or masked ever sent — over real HTTP to the scripted endpoint."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.answering import Mode, Refusal, Scope
from generator.answering.render import as_json, as_text
from generator.cli import main
from generator.commands.ask import MAX_TURNS, ask, judge_answer, library
from generator.llm import LLMAnswerError, LLMClient, llm_settings
from generator.problems import SettingsError
from generator.verification.states import Reason, State
from support.asking import answer, client_for, configure, passage_with, verdicts
from support.llm_server import Scripted, calls, reply, status

PRIVATE = ("PRIVATETOKEN", "Gaston Confidentiel", "PRIVATETITLE")
MASKED = "MASKEDPASSAGE"


def sent(server: Any) -> str:
    """Every request the endpoint received, as one text."""
    return json.dumps([r["body"] for r in server.requests], ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def test_a_tool_calling_conversation_searches_reads_then_answers_with_anchored_citations(small: Path,
                                                                                          llm_server) -> None:
    configure(small, llm_server.url)
    budget = passage_with(small, "quatre mille")

    def respond(body: dict[str, Any]) -> Scripted:
        results = tool_results(body)
        if not results:
            assert [t["function"]["name"] for t in body["tools"]] == ["search_passages", "read_passages"]
            return calls(("search_passages", {"query": "budget voté unanimité"}))
        if len(results) == 1:
            found = [r["id"] for r in results[0]["results"]]
            assert budget in found, "the search found the passage"
            return calls(("read_passages", {"ids": found[:2]}))
        (read,) = [r for r in results if "passages" in r]
        text = next(p["text"] for p in read["passages"] if p["id"] == budget)
        assert "quatre mille" in text and "*" not in text, "the passage's exact text, not its markdown"
        return reply(answer(("Le budget a été voté à l'unanimité.", [(budget, "voté à l'unanimité")]),
                            ("Il s'élève à « quatre mille euros ».", [(budget, "quatre mille euros")])))

    llm_server.respond(respond)
    result = ask(library(small, Scope()), client_for(small), "Comment le budget a-t-il été voté ?")
    assert result.mode is Mode.TOOLS and not result.not_in_corpus
    assert [s.citations for s in result.statements] == [(1,), (2,)]
    first, second = result.citations
    assert first.note == second.note == "conseil-a" and first.text == "voté à l'unanimité"
    assert first.passages == (budget,) and first.element == budget.split("#")[1]
    # verbatim first (the second statement's quoted words are in its source), then no judge yet
    assert [s.states[0].state for s in result.statements] == [State.WEAK, State.WEAK]
    assert {s.states[0].reason for s in result.statements} == {Reason.NOT_JUDGED}
    assert budget in result.retrieved and budget not in result.discarded
    assert result.provenance["method"] == "llm" and result.provenance["model"] == "modele-test"
    assert result.provenance["usage"]["total_tokens"] == 3 * 160, "every turn's tokens"
    text = as_text(result, "https://example.org/")
    assert "[1]" in text and "https://example.org/notes/conseil-a.html#" + first.element + ":~:text=" in text
    data = json.loads(as_json(result, "https://example.org/"))
    assert data["citations"][0]["quote"] == "voté à l'unanimité" and data["mode"] == "tools"


def test_without_tool_support_carnet_retrieves_and_sends_one_request(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    budget = passage_with(small, "quatre mille")
    notices: list[str] = []
    llm_server.script(status(400, "tools are not supported by this model"),
                      reply(answer(("La réserve est de 800 euros.", [(passage_with(small, "réserve"),
                                                                       "la réserve est de 800 euros")]))))
    client = LLMClient(llm_settings(library(small, Scope()).analysis.corpus.settings.extra), notice=notices.append)
    result = ask(library(small, Scope()), client, "Quel est le montant de la réserve du budget ?", notice=notices.append)
    assert result.mode is Mode.RETRIEVAL and len(llm_server.requests) == 2
    assert "tools" not in llm_server.requests[1]["body"], "the one request offers no tools"
    assert any("refused tool calls" in n for n in notices)
    assert [c.text for c in result.citations] == ["la réserve est de 800 euros"]
    assert budget in result.retrieved, "Carnet's own search sent the passages"
    # the server was asked to cite only the passages it was sent
    body = llm_server.requests[1]["body"]
    schema = json.dumps(body["response_format"])
    assert all(p in schema for p in result.retrieved)


def test_a_model_that_answers_without_searching_gets_the_passages_sent(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    reserve = passage_with(small, "réserve")
    llm_server.script(reply(answer(("Le budget est connu de tous.", []))),
                      reply(answer(("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))))
    result = ask(library(small, Scope()), client_for(small), "Quelle est la réserve du budget ?")
    assert result.mode is Mode.RETRIEVAL and result.citations[0].text == "la réserve est de 800 euros"
    # the turn given up on cost tokens too: the answer's usage is both requests'
    assert result.provenance["usage"]["total_tokens"] == 2 * 160
    assert result.provenance["tool_turns"] == {"usage": {"prompt_tokens": 120, "completion_tokens": 40,
                                                         "total_tokens": 160}}


def test_tools_refused_after_a_turn_keep_that_turns_tokens(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    reserve = passage_with(small, "réserve")
    llm_server.script(calls(("search_passages", {"query": "réserve"})),
                      status(500, "tool calls are not supported by this template"),
                      reply(answer(("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))))
    result = ask(library(small, Scope()), client_for(small), "Quelle est la réserve du budget ?")
    assert result.mode is Mode.RETRIEVAL and len(llm_server.requests) == 3
    assert result.provenance["usage"]["total_tokens"] == 2 * 160, "the tool turn and the one request"


def test_a_quote_that_does_not_anchor_is_refused_and_its_statement_unsourced(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    budget = passage_with(small, "quatre mille")
    llm_server.script(reply(answer(
        ("Le budget a été voté à la majorité.", [(budget, "voté à la majorité")]),  # not what the note says
        ("Le budget s'élève à cinq mille euros.", [(budget, "quatre mille euros voté")]),  # words not in this order
        ("La réserve est ailleurs.", [("conseil-a#e-0000000000", "la réserve")]),  # a passage it was not given
        ("Le budget est voté.", [(budget, "voté à l'unanimité")]))))
    result = ask(library(small, Scope()), client_for(small), "Le budget a-t-il été voté ?", tools=False)
    assert [s.sourced for s in result.statements] == [False, False, False, True]
    assert [c.text for c in result.citations] == ["voté à l'unanimité"]
    assert [r.refusal for r in result.refused] == [Refusal.NOT_FOUND, Refusal.NOT_FOUND, Refusal.NOT_GIVEN]
    assert [r.statement for r in result.refused] == [1, 2, 3]
    text = as_text(result, "https://example.org/")
    assert text.count("(unsourced: no citation anchored)") == 3 and "Quotes refused" in text
    assert "voté à la majorité" not in text.split("Sources")[1].split("Quotes refused")[0]


def test_a_quote_found_twice_in_the_note_is_ambiguous_never_placed(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    budget = passage_with(small, "quatre mille")
    llm_server.script(reply(answer(("Des euros.", [(budget, "euros")]))))  # "quatre mille euros", "800 euros"
    result = ask(library(small, Scope()), client_for(small), "Le budget ?", tools=False)
    assert result.citations == () and [r.refusal for r in result.refused] == [Refusal.AMBIGUOUS]


def test_nothing_retrieved_is_not_in_the_corpus_and_names_the_notebooks(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    result = ask(library(small, Scope()), client_for(small), "Quelle est la vitesse de la lumière ?", tools=False)
    assert result.not_in_corpus and result.statements == () and llm_server.requests == [], "no request at all"
    assert result.searched == ("club", "conseil", "veille")
    text = as_text(result, "/")
    assert "No passage found: the search matched no published passage of the notebooks searched " \
           "(club, conseil, veille)" in text and "in other words may exist" in text
    # with tools: the model searched, found nothing, and answered anyway: not shown as the corpus's
    llm_server.script(calls(("search_passages", {"query": "vitesse lumière"})),
                      reply(answer(("La lumière va à 300 000 km/s.", []))))
    result = ask(library(small, Scope(notebook="conseil")), client_for(small), "Quelle est la vitesse de la lumière ?")
    assert result.not_in_corpus and result.dropped == 1 and result.searched == ("conseil",)
    assert "300 000" not in as_text(result, "/")


def test_private_and_masked_text_never_enters_a_request(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    queries = ["contrat fichier PRIVATETOKEN Gaston", "MASKEDPASSAGE passage texte extraction", "budget réserve"]

    def respond(body: dict[str, Any]) -> Scripted:
        results = tool_results(body)
        if len(results) < len(queries):
            return calls(("search_passages", {"query": queries[len(results)]}))
        if len(results) == len(queries):
            return calls(("read_passages", {"ids": ["secret-a#e-0000000000"] + [
                r["id"] for result in results for r in result.get("results", [])]}))
        return reply(answer(not_in_corpus=True))

    llm_server.respond(respond)
    ask(library(small, Scope()), client_for(small), "Que dit le contrat PRIVATETOKEN de Gaston Confidentiel ?")
    ask(library(small, Scope()), client_for(small), "Que dit le contrat signé ?", tools=False)
    everything = sent(llm_server).replace("Que dit le contrat PRIVATETOKEN de Gaston Confidentiel ?", "")
    everything = everything.replace(json.dumps(queries[0], ensure_ascii=False)[1:-1], "")
    everything = everything.replace(json.dumps(queries[1], ensure_ascii=False)[1:-1], "")
    assert len(llm_server.requests) >= 5
    for secret in (*PRIVATE, MASKED, "le contrat de quelqu"):
        assert secret not in everything, f"{secret!r} went to the endpoint"


def test_the_conversation_is_bounded_and_hostile_calls_are_data(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    # an unknown tool and broken arguments are answered as errors to the model; it never stops calling
    # (then asked once without tools: the same calls are no answer either)
    llm_server.respond(lambda body: calls(("rm_rf", {"path": "/"}), ("search_passages", {"query": 42}),
                                          ("read_passages", {"ids": "not a list"})))
    notices: list[str] = []
    with pytest.raises(LLMAnswerError, match="not JSON"):
        ask(library(small, Scope()), client_for(small), "Le budget ?", notice=notices.append)
    assert len(llm_server.requests) == MAX_TURNS + 2 and "kept calling tools" in notices[0]
    assert llm_server.requests[-2]["body"]["tool_choice"] == "none"
    errors = [r for r in tool_results(llm_server.requests[-2]["body"]) if "error" in r]
    assert any("no such tool" in e["error"] for e in errors) and any("query" in e["error"] for e in errors)
    # arguments that are no JSON object, too long, an answer off its schema: the tool conversation's
    # answer is refused, nothing shown from it; the passages are sent instead
    llm_server.respond(None)
    for hostile, said in (([calls(("search_passages", "{not json"))], "not JSON"),
                          ([calls(("search_passages", {"query": "x" * 5000}))], "at most"),
                          ([calls(("search_passages", {"query": "budget"})), reply('{"statements": "no"}')],
                           "not_in_corpus|must be")):
        notices.clear()
        llm_server.script(*hostile, reply(answer(not_in_corpus=True)))
        result = ask(library(small, Scope()), client_for(small), "Le budget ?", notice=notices.append)
        assert result.mode is Mode.RETRIEVAL and len(notices) == 1 and re.search(said, notices[0]), notices
    budget = passage_with(small, "quatre mille")
    llm_server.script(reply(answer(("x" * 3000, [(budget, "voté")]))))
    with pytest.raises(LLMAnswerError, match="3,000 characters, more than the 2,000"):
        ask(library(small, Scope()), client_for(small), "Le budget ?", tools=False)
    llm_server.script(reply(answer(*[("Le budget est voté.", [(budget, "voté")])] * 21)))
    with pytest.raises(LLMAnswerError, match="21 statements"):
        ask(library(small, Scope()), client_for(small), "Le budget ?", tools=False)


def test_the_scope_narrows_the_search_and_refuses_what_is_not_public(small: Path) -> None:
    everything = library(small, Scope())
    assert not any(p.note == "secret-a" for p in everything.passages.values())
    assert not any(MASKED in p.text for p in everything.passages.values())
    assert not any(p.note in ("wiki-budget", "synthese-2025") for p in everything.passages.values()), \
        "a wiki or a synthesis is never a source"
    conseil = library(small, Scope(notebook="conseil", categories=(("theme", "Budget"),)))
    assert conseil.passages and all("conseil" in p.notebooks for p in conseil.passages.values())
    assert len(conseil.passages) < len(everything.passages)
    with pytest.raises(SettingsError, match=r"no public notebook.*club, conseil, veille"):
        library(small, Scope(notebook="secret"))
    with pytest.raises(SettingsError, match="no such category"):
        library(small, Scope(notebook="conseil", categories=(("theme", "Inconnue"),)))


def test_the_judge_reads_the_pairs_that_passed_verbatim_and_gives_their_states(small: Path, llm_server) -> None:
    configure(small, llm_server.url)
    budget, reserve = passage_with(small, "quatre mille"), passage_with(small, "réserve")
    llm_server.script(reply(answer(("Le budget a été voté à l'unanimité.", [(budget, "voté à l'unanimité")]),
                                   ("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]),
                                   ("Il a dit « neuf mille ».", [(budget, "quatre mille euros")]))),
                      verdicts(("p1", "supported"), ("p2", "partial")))
    client = client_for(small)
    result = judge_answer(ask(library(small, Scope()), client, "Le budget et sa réserve ?", tools=False), client)
    states = [(s.states[0].state, s.states[0].reason) for s in result.statements]
    assert states == [(State.VERIFIED, Reason.SUPPORTED), (State.WEAK, Reason.PARTIAL),
                      (State.WEAK, Reason.VERBATIM_FAILED)], "a quotation nobody said never reaches the judge"
    pairs = llm_server.requests[1]["body"]["messages"][1]["content"]
    assert "voté à l'unanimité" in pairs and "neuf mille" not in pairs
    assert result.statements[0].states[0].verdict.provenance["model"] == "modele-test"
    assert result.provenance["judge"]["usage"]["total_tokens"] == 160


def test_the_command_line_prints_text_or_json(small: Path, llm_server, capsys: pytest.CaptureFixture[str]) -> None:
    configure(small, llm_server.url)
    reserve = passage_with(small, "réserve")
    llm_server.script(reply(answer(("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))),
                      verdicts(("p1", "supported")))
    code = main(["ask", "Quelle est la réserve ?", "--content", str(small), "--no-tools", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["citations"][0]["url"].startswith("https://test.example.org/site/notes/")
    assert data["statements"][0]["states"] == [{"state": "verified", "reason": "supported"}]
    llm_server.script(reply(answer(("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))))
    assert main(["ask", "Quelle est la réserve ?", "--content", str(small), "--no-tools", "--no-judge"]) == 0
    out = capsys.readouterr().out
    assert "weak (not-judged)" in out and "Mode: retrieval" in out
    assert main(["ask", "x", "--content", str(small), "--category", "nothing"]) == 2
    assert "AXIS=VALUE" in capsys.readouterr().err


def test_what_the_model_is_given_is_bounded(small: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.commands.ask as ask_module

    monkeypatch.setattr(ask_module, "MAX_READ", 2)
    conversation = ask_module.Conversation(library(small, Scope()))
    found = conversation.search({"query": "budget réserve euros séance"})["results"]
    assert len(found) == 2 and len(conversation.given) == 2
    others = [p for p in conversation.library.passages if p not in conversation.given]
    read = conversation.read({"ids": [*others[:2], "secret-a#e-1", "x" * 500]})
    assert read["passages"] == [] and read["not_read"] == others[:2] and "at most 2" in read["note"]
    assert read["unknown"] == ["secret-a#e-1", "x" * 100], "an unknown id is echoed cut short"
    assert conversation.search({"query": "   "}) == {"error": "search_passages takes a query: a few keywords"}


@pytest.mark.parametrize("written", [answer(), answer(("   ", [])), answer(("", []), ("\n", []))])
def test_an_answer_with_no_statement_that_does_not_say_not_in_corpus_is_refused(small: Path, llm_server,
                                                                                 written: str) -> None:
    """An empty answer is neither an answer nor "no answer found": refused, never shown."""
    configure(small, llm_server.url)
    llm_server.script(reply(written))
    with pytest.raises(LLMAnswerError, match=r"no statement.*not_in_corpus") as refused:
        ask(library(small, Scope()), client_for(small), "Le budget a-t-il été voté ?", tools=False)
    assert refused.value.usage["total_tokens"] == 160, "the refused answer's tokens are said"


def test_an_empty_answer_is_neither_printed_nor_saved(small: Path, llm_server,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    configure(small, llm_server.url)
    llm_server.script(reply(answer()))
    code = main(["ask", "Le budget a-t-il été voté ?", "--content", str(small), "--no-tools", "--save", "vide"])
    out, err = capsys.readouterr()
    assert code == 3 and out == "" and "no statement" in err and "nothing was recorded" in err
    assert not (small / "notes" / "answers").exists() and not (small / "verdicts" / "vide.yaml").exists()


def test_no_answer_found_is_the_models_reading_of_the_passages_searched_which_are_listed(
        small: Path, llm_server) -> None:
    """"Not in the corpus" is a model's claim about the passages it was given, never a
    fact about the notebooks: said as such, with those passages listed."""
    configure(small, llm_server.url)
    llm_server.script(reply(answer(not_in_corpus=True)))
    result = ask(library(small, Scope()), client_for(small), "Le budget a-t-il été voté ?", tools=False)
    assert result.not_in_corpus and len(result.retrieved) > 1
    text = as_text(result, "https://example.org/")
    assert f"No answer found in the {len(result.retrieved)} passages searched" in text
    assert "not a proof" in text and "hold no passage" not in text and "Not in the corpus" not in text
    listed = text.split("Passages searched")[1]
    for passage in result.retrieved:
        note, _, element = passage.partition("#")
        assert f"https://example.org/notes/{note}.html#{element}" in listed
    data = json.loads(as_json(result, "https://example.org/"))
    assert data["not_in_corpus"] and f"in the {len(result.retrieved)} passages searched" in data["no_answer"]
    assert [p["passage"] for p in data["passages_searched"]] == list(result.retrieved)
    assert all(p["url"].startswith("https://example.org/notes/") for p in data["passages_searched"])
    # an answer found says nothing of the kind
    llm_server.script(reply(answer(("La réserve est de 800 euros.",
                                    [(passage_with(small, "réserve"), "la réserve est de 800 euros")]))))
    found = ask(library(small, Scope()), client_for(small), "Quelle réserve ?", tools=False)
    assert json.loads(as_json(found, "/"))["no_answer"] is None and "No answer found" not in as_text(found, "/")


def test_a_model_that_does_not_use_the_tools_is_asked_again_once_with_the_passages_sent(small: Path,
                                                                                        llm_server) -> None:
    """Prose instead of calls, calls that never end, prose after a search: the passages are
    sent in one request (--no-tools), said, and the tokens of both attempts counted."""
    configure(small, llm_server.url)
    reserve = passage_with(small, "réserve")
    good = answer(("La réserve est de 800 euros.", [(reserve, "la réserve est de 800 euros")]))
    search = calls(("search_passages", {"query": "réserve budget"}))
    said = "the model did not use the tools: asking again with the passages sent (--no-tools)"
    for attempt in ([reply("Je pense que la réserve est importante.")],  # prose, no call
                    [search] * (MAX_TURNS + 1),  # calls past the bound, even when told to answer
                    [search, reply("La réserve est de 800 euros, d'après le compte rendu.")],  # prose after a search
                    [search, calls(("search_passages", "{not json"))]):  # calls that are no calls
        llm_server.requests.clear()
        llm_server.script(*attempt, reply(good))
        notices: list[str] = []
        result = ask(library(small, Scope()), client_for(small), "Quelle est la réserve du budget ?",
                     notice=notices.append)
        assert result.mode is Mode.RETRIEVAL and [c.text for c in result.citations] == ["la réserve est de 800 euros"]
        assert len(llm_server.requests) == len(attempt) + 1 and "tools" not in llm_server.requests[-1]["body"]
        assert sum(said in n for n in notices) == 1, notices
        assert result.provenance["usage"]["total_tokens"] == (len(attempt) + 1) * 160, "both attempts' tokens"
        assert result.provenance["tool_turns"]["usage"]["total_tokens"] == len(attempt) * 160


def test_when_the_passages_sent_fail_too_the_tokens_of_both_attempts_are_printed(
        small: Path, llm_server, capsys: pytest.CaptureFixture[str]) -> None:
    configure(small, llm_server.url)
    llm_server.respond(lambda body: calls(("search_passages", {"query": "réserve"})) if "tools" in body
                       else reply("Toujours pas du JSON."))
    code = main(["ask", "Quelle est la réserve du budget ?", "--content", str(small), "--no-judge"])
    err = capsys.readouterr().err
    assert code == 3 and len(llm_server.requests) == MAX_TURNS + 2, "the passages sent once, no more"
    assert "asking again with the passages sent (--no-tools)" in err and "not JSON" in err
    assert re.search(rf"\b{(MAX_TURNS + 2) * 160:,}\b|total_tokens {(MAX_TURNS + 2) * 160}\b", err), err
