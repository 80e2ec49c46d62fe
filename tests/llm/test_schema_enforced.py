"""An answer is held to the request's own schema (issue 56): a string past its ``maxLength``,
short of its ``minLength``, outside its ``pattern``, or a field the schema closes out, is
refused with a message naming the field and the rule; a verdict whose rationale breaks the
pattern the request gave (quotes, backslashes, 2,000 characters against 301) refuses its
pair alone. A key written twice in a JSON object is refused: which of the two a reader
keeps is not the answer's to decide. All through the real client and the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from generator.llm import LLMAnswerError, LLMClient, LLMSettings
from generator.llm.prompts import Prompt
from generator.llm.schema import validate
from generator.pipeline import check_content
from generator.verification.judge import PairFault, judge
from support.llm_server import calls, reply

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "additionalProperties": False,
          "properties": {"reason": {"type": "string", "minLength": 2, "maxLength": 300, "pattern": "^[^\"\\\\]*$"}}}
MANY = """Le budget est de quatre mille euros [[ext:a-budget]].

Il a été voté à l'unanimité [[ext:a-two-paragraphs]].

Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""


def _client(server) -> LLMClient:  # type: ignore[no-untyped-def]
    return LLMClient(LLMSettings(server.url, "m", max_retries=0))


@pytest.mark.parametrize("answer,message", [
    ('{"reason": "' + "x" * 2000 + '"}', r"answer\.reason holds 2,000 characters, more than the 300 the request allows"),
    ('{"reason": "x"}', r"answer\.reason holds 1 character\(s\), fewer than the 2 the request asks for"),
    ('{"reason": "il dit \\"oui\\""}', r"answer\.reason .* does not match the pattern the request gave"),
    ('{"reason": "a \\\\ b"}', r"answer\.reason .* does not match the pattern the request gave"),
    ('{"reason": "ok", "extra": "x"}', r"answer has 'extra', a field the request's schema does not have"),
])
def test_an_answer_breaking_the_requests_schema_is_refused(llm_server, answer: str, message: str) -> None:
    llm_server.script(reply(answer))
    with pytest.raises(LLMAnswerError, match=message) as caught:
        _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=50, question="?")
    assert caught.value.usage["total_tokens"] == 160, "its tokens were still spent"


def test_an_answer_within_the_schema_is_kept(llm_server) -> None:
    llm_server.script(reply('{"reason": "' + "é" * 300 + '"}'))
    data, _provenance = _client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=50, question="?")
    assert data == {"reason": "é" * 300}


@pytest.mark.parametrize("answer", ['{"reason": "a", "reason": "b"}',
                                    '{"items": [{"reason": "a", "reason": "a"}], "reason": "c"}'])
def test_a_key_written_twice_is_refused(llm_server, answer: str) -> None:
    """``json.loads`` keeps the last of two equal keys silently: a model (or a proxy) could
    show a reader one value and have Carnet record the other."""
    llm_server.script(reply(answer))
    with pytest.raises(LLMAnswerError, match="holds the key 'reason' twice"):
        _client(llm_server).chat_json(PROMPT, {"type": "object", "properties": {"reason": {"type": "string"}}},
                                      max_tokens=50, question="?")


def test_a_tool_call_with_a_key_written_twice_is_refused(llm_server) -> None:
    llm_server.script(calls(("search_passages", '{"query": "budget", "query": "secret"}')))
    with pytest.raises(LLMAnswerError, match="holds the key 'query' twice"):
        _client(llm_server).chat_tools(PROMPT, [{"role": "user", "content": "?"}], [], max_tokens=50)


def test_validate_knows_every_keyword_the_requests_use() -> None:
    """A schema keyword the check does not know would be a rule sent and never enforced."""
    with pytest.raises(ValueError, match="format"):
        validate("x", {"type": "string", "format": "email"})


def _four_pairs(small: Path) -> dict:  # type: ignore[type-arg]
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    head, front, _body = text.split("---\n", 2)
    (small / "notes" / "wiki-budget.md").write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")
    pending = {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}
    assert len(pending["wiki-budget"]) == 4
    return pending


def test_a_rationale_outside_the_requests_pattern_refuses_its_pair_alone(small: Path, llm_server) -> None:
    pending = _four_pairs(small)
    good = "Le passage le dit en toutes lettres."
    llm_server.script(reply(json.dumps({"verdicts": [
        {"pair": "p1", "verdict": "supported", "rationale": good},
        {"pair": "p2", "verdict": "supported", "rationale": 'Le passage dit "quatre mille" mot pour mot.'},
        {"pair": "p3", "verdict": "supported", "rationale": "Le passage le dit \\ en toutes lettres."},
        {"pair": "p4", "verdict": "supported", "rationale": "L" + "e passage le dit. " * 111}]})))
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0)), batch_size=4)
    assert report.judged == 1 and len(report.unjudged) == 3
    refused = {r.pair: r for r in report.refused}
    assert {n: r.fault for n, r in refused.items()} == {2: PairFault.OUTSIDE_REQUEST, 3: PairFault.OUTSIDE_REQUEST,
                                                        4: PairFault.TOO_LONG}
    assert refused[2].said.startswith("'Le passage dit \"quatre mille\"")
    assert "more than the 301 allowed" in refused[4].said
    records = yaml.safe_load((small / "verdicts" / "wiki-budget.yaml").read_text(encoding="utf-8"))["verdicts"]
    assert [r["rationale"] for r in records] == [good], "only the pair within the request is recorded"
