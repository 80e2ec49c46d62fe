"""Structured outputs (issue 22): every request sends its own JSON schema as the
``response_format`` constraint, with its arrays bounded to the request and a
``max_tokens`` from the expected answer's size; a server that refuses ``json_schema`` is
asked for ``json_object`` with the schema, then plain ``json_object``, said once. The
schema check after the answer stays. Run against the scripted OpenAI-compatible server, so
the real ``openai`` client builds every request body."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.commands.proposals import OPERATION_TOKENS, propose
from generator.llm import LLMAnswerError, LLMClient, LLMConfigError, LLMSettings, LLMTransportError
from generator.llm.client import FORMATS, response_format
from generator.llm.config import llm_settings
from generator.llm.prompts import Prompt, load_prompt
from generator.llm.schema import answer_tokens, bounded, strict_form
from generator.pipeline import check_content
from generator.selection.oppositions import OPPOSITION_TOKENS, find_oppositions
from generator.verification.judge import RATIONALE_PATTERN, VERDICT_TOKENS, judge
from generator.verification.judge import SCHEMA as VERDICTS
from support.cli import configure_llm
from support.llm_server import Scripted, reply, status

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}
ANSWER = json.dumps({"reason": "r"})
MANY = """Le budget est de quatre mille euros [[ext:a-budget]].
Il a été voté à l'unanimité [[ext:a-two-paragraphs]].
Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""


def _client(server: Any, notices: list[str] | None = None, cap: int = 0) -> LLMClient:
    return LLMClient(LLMSettings(server.url, "m", max_retries=0, max_output_tokens=cap),
                     notice=None if notices is None else notices.append)


def _chat_bodies(server: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]


def _verdicts_for(body: dict[str, Any]) -> Scripted:
    """A correct answer to a verify request: one supported verdict per pair it asks about."""
    keys = sorted(set(re.findall(r"\bp\d+\b", body["messages"][1]["content"])))
    return reply(json.dumps({"verdicts": [{"pair": k, "verdict": "supported", "rationale": "Le passage le dit."}
                                          for k in keys]}))


# -- the request ------------------------------------------------------------------------------

def test_a_request_carries_its_schema_strict_and_its_token_bound(llm_server: Any) -> None:
    llm_server.script(reply(ANSWER))
    data, _ = _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=321, question="?")
    assert data == {"reason": "r"}
    (body,) = _chat_bodies(llm_server)
    assert body["max_tokens"] == 321
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "test", "strict": True,
        "schema": {**SCHEMA, "additionalProperties": False}}}


def test_strict_only_where_the_schema_allows_it() -> None:
    """OpenAI's strict mode makes every property required and closes every object: a schema
    with an optional property is sent as is, not strict (it would change its meaning)."""
    optional = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"},
                                                                     "b": {"type": "string"}}}
    assert strict_form(optional) is None
    sent = response_format("json_schema", "x", optional)
    assert sent["json_schema"]["strict"] is False and sent["json_schema"]["schema"] == optional
    nested = strict_form(VERDICTS)
    assert nested is not None
    assert nested["additionalProperties"] is False
    assert nested["properties"]["verdicts"]["items"]["additionalProperties"] is False
    assert "additionalProperties" not in VERDICTS, "the schema itself is never changed"


def test_the_cap_of_the_settings_lowers_every_bound(llm_server: Any) -> None:
    llm_server.script(reply(ANSWER), reply(ANSWER))
    client = _client(llm_server, cap=100)
    client.chat_json(PROMPT, SCHEMA, max_tokens=5000, question="?")
    client.chat_json(PROMPT, SCHEMA, max_tokens=50, question="?")
    assert [b["max_tokens"] for b in _chat_bodies(llm_server)] == [100, 50]


@pytest.mark.parametrize("value", ["-1", "beaucoup"])
def test_a_wrong_cap_is_a_settings_error(value: str) -> None:
    with pytest.raises(LLMConfigError, match="max_output_tokens"):
        llm_settings({"llm": {"base_url": "http://127.0.0.1:1/v1", "model": "m", "max_output_tokens": value}})


def test_a_cut_off_answer_says_at_how_many_tokens(llm_server: Any) -> None:
    llm_server.script(reply('{"reason": "r', finish="length"))
    with pytest.raises(LLMAnswerError, match=r"cut off at 64 tokens"):
        _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=64, question="?")


# -- the fallback -----------------------------------------------------------------------------

REFUSAL = ("[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be "
           "'text' or 'json_object'\"}]")  # llama-cpp-python 0.3.16's server, word for word in form


@pytest.mark.parametrize("code", [422, 500])  # llama-cpp-python 0.3.16 answers 500
def test_a_server_refusing_json_schema_is_asked_for_json_object_with_the_schema_said_once(llm_server: Any,
                                                                                          code: int) -> None:
    def answer(body: dict[str, Any]) -> Scripted:
        if body["response_format"]["type"] == "json_schema":
            return status(code, REFUSAL)
        return reply(ANSWER)

    llm_server.respond(answer)
    notices: list[str] = []
    client = _client(llm_server, notices)
    for _ in range(3):
        assert client.chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")[0] == {"reason": "r"}
    formats = [b["response_format"] for b in _chat_bodies(llm_server)]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object", "json_object"], \
        "refused once, then every request goes straight to the form accepted"
    assert all(f["schema"] == SCHEMA for f in formats[1:]), "the grammar llama-cpp-python builds from it"
    assert len(notices) == 1 and "refused response_format json_schema" in notices[0]
    assert "json_object with schema" in notices[0] and "still checked against its schema" in notices[0]


def test_then_plain_json_object_and_the_schema_check_stays(llm_server: Any) -> None:
    def answer(body: dict[str, Any]) -> Scripted:
        if body["response_format"] != {"type": "json_object"}:
            return status(400, "unsupported response_format")
        return reply(json.dumps({"reason": 3}))  # off-schema: refused whatever the server was asked

    llm_server.respond(answer)
    notices: list[str] = []
    with pytest.raises(LLMAnswerError, match=r"answer.reason must be a string"):
        _client(llm_server, notices).chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")
    assert [b["response_format"]["type"] for b in _chat_bodies(llm_server)] == ["json_schema", "json_object",
                                                                                "json_object"]
    assert len(notices) == 2 and FORMATS[2] in notices[1]


def test_an_error_about_something_else_is_no_fallback(llm_server: Any) -> None:
    llm_server.script(status(400, "the model 'm' does not exist"))
    notices: list[str] = []
    with pytest.raises(LLMTransportError, match="HTTP 400"):
        _client(llm_server, notices).chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")
    assert len(_chat_bodies(llm_server)) == 1 and notices == []


def test_a_server_refusing_every_form_is_an_error_not_a_loop(llm_server: Any) -> None:
    llm_server.respond(lambda body: status(422, "response_format is not supported"))
    with pytest.raises(LLMTransportError, match="HTTP 422"):
        _client(llm_server, []).chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")
    assert len(_chat_bodies(llm_server)) == len(FORMATS)


# -- each command's bounds ----------------------------------------------------------------------

def _pairs(small: Path) -> dict[str, list[Any]]:
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    head, front, _body = text.split("---\n", 2)
    (small / "notes" / "wiki-budget.md").write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")
    return {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}


def test_verify_asks_for_exactly_one_verdict_per_pair_of_each_batch(small: Path, llm_server: Any) -> None:
    pending = _pairs(small)
    llm_server.respond(_verdicts_for)
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0)), batch_size=3)
    assert report.judged == 4
    bodies = _chat_bodies(llm_server)
    assert len(bodies) == 2
    for body, size in zip(bodies, [3, 1], strict=True):
        verdicts = body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
        assert (verdicts["minItems"], verdicts["maxItems"]) == (size, size)
        assert verdicts["items"]["properties"]["pair"]["enum"] == [f"p{n + 1}" for n in range(size)]
        assert verdicts["items"]["properties"]["rationale"]["pattern"] == RATIONALE_PATTERN
        assert body["max_tokens"] == answer_tokens(size, VERDICT_TOKENS)


def test_propose_bounds_the_operations_to_max_operations(small: Path, llm_server: Any) -> None:
    configure_llm(small, llm_server.url)
    llm_server.script(reply(json.dumps({"operations": [{"op": "NoChange", "heading": "", "after_heading": "",
                                                         "content": ""}]})))
    propose(small, "wiki-budget", provider="llm", max_operations=2)
    (body,) = _chat_bodies(llm_server)
    operations = body["response_format"]["json_schema"]["schema"]["properties"]["operations"]
    assert (operations["minItems"], operations["maxItems"]) == (1, 2)
    assert body["max_tokens"] == answer_tokens(2, OPERATION_TOKENS)


def test_oppositions_bound_the_pairs_to_the_extractions_sent(llm_server: Any) -> None:
    llm_server.script(reply(json.dumps({"oppositions": []})))
    items = [("a", "Pour."), ("b", "Contre."), ("c", "Sans avis.")]
    find_oppositions(LLMClient(LLMSettings(llm_server.url, "m", max_retries=0)), load_prompt("find_oppositions", "fr"),
                     items)
    (body,) = _chat_bodies(llm_server)
    pairs = body["response_format"]["json_schema"]["schema"]["properties"]["oppositions"]
    assert pairs["maxItems"] == 3 and body["max_tokens"] == answer_tokens(3, OPPOSITION_TOKENS)


def test_bounded_copies_the_schema() -> None:
    made = bounded(VERDICTS, "verdicts", max_items=4, min_items=4)
    assert made["properties"]["verdicts"]["maxItems"] == 4
    assert "maxItems" not in VERDICTS["properties"]["verdicts"]


def test_a_line_break_written_raw_in_a_string_is_read_as_its_text(llm_server: Any) -> None:
    """A grammar-constrained server lets a small model write a raw line break inside a
    string (SmolLM2 under llama-cpp-python does): it is read as the text it is."""
    llm_server.script(reply('{"reason": "deux\nlignes\tet une tabulation"}'))
    data, _ = _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")
    assert data == {"reason": "deux\nlignes\tet une tabulation"}


def test_an_answer_outside_the_constraint_is_checked_item_by_item_not_refused_whole(small: Path,
                                                                                    llm_server: Any) -> None:
    """The server is asked for the batch's pair keys only; an answer naming another is not
    refused whole (the good verdicts beside it are kept), as before structured outputs."""
    pending = _pairs(small)
    llm_server.script(reply(json.dumps({"verdicts": [
        {"pair": "p1", "verdict": "supported", "rationale": "Le passage le dit."},
        {"pair": "p9", "verdict": "supported", "rationale": "Inventée."}]})))
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0)), batch_size=4)
    assert report.judged == 1 and len(report.unjudged) == 3


@pytest.mark.parametrize(("rationale", "fits"), [("Le passage dit que le budget est voté.", True),
                                                 ("…", False), ('…”}, {\n    ...{', False), ("Oui.", False),
                                                 ("x" * 400, False)])
def test_the_rationale_asked_for_is_a_sentence(rationale: str, fits: bool) -> None:
    """What a 135M model wrote under the first constraints (the prompt's "…" copied back, JSON
    debris, a run-on text) is outside the pattern the server is now asked to follow."""
    assert bool(re.match(RATIONALE_PATTERN, rationale)) is fits


def test_a_validation_error_that_echoes_the_request_is_no_format_refusal(llm_server: Any) -> None:
    """A 422 about another field quotes the request back, response_format included: that is
    not the server refusing the form (the client would walk down every form for nothing)."""
    echo = ("[{'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required', 'input': "
            "{'model': 'm', 'response_format': {'type': 'json_schema', 'json_schema': {}}}}]")
    llm_server.script(status(422, echo))
    notices: list[str] = []
    with pytest.raises(LLMTransportError, match="HTTP 422"):
        _client(llm_server, notices).chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")
    assert len(_chat_bodies(llm_server)) == 1 and notices == []


def test_an_endpoint_wanting_max_completion_tokens_gets_it(llm_server: Any) -> None:
    def answer(body: dict[str, Any]) -> Scripted:
        if "max_tokens" in body:
            return status(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                               "Use 'max_completion_tokens' instead.")
        return reply(ANSWER)

    llm_server.respond(answer)
    client = _client(llm_server, [])
    for _ in range(2):
        assert client.chat_json(PROMPT, SCHEMA, max_tokens=100, question="?")[0] == {"reason": "r"}
    bodies = _chat_bodies(llm_server)
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in bodies] == [(True, None), (False, 100),
                                                                                     (False, 100)]


def test_a_context_too_small_says_what_to_set(llm_server: Any) -> None:
    """A server whose context is smaller than the one planned for: the way is to say its
    context (every request is then planned to fit it), not a --batch some commands lack."""
    llm_server.script(status(400, "Requested tokens (9000) exceed context window of 8192"))
    with pytest.raises(LLMTransportError, match=r"set llm.context_tokens in carnet.yaml to the server's context"):
        _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=5000, question="?")
