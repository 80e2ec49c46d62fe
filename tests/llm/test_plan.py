"""Plans and ledgers (generator/llm/plan.py): what a command will send, and what it spent."""

from __future__ import annotations

import pytest

from generator.llm import LLMClient, LLMConfigError, LLMSettings
from generator.llm.plan import Ledger, Limits, Plan, PlannedRequest, limits_from
from generator.llm.prompts import Prompt
from support.llm_server import reply, status

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}


def test_a_plan_counts_tokens_with_its_stated_ratio_and_refuses_what_does_not_fit() -> None:
    limits = Limits(context_tokens=1000, max_tokens=2000, characters_per_token=3.0)
    plan = Plan("carnet x", (PlannedRequest("a", 1500, 200), PlannedRequest("b", 2400, 100)), limits)
    assert plan.estimated_prompt_tokens == 500 + 800 and plan.completion_tokens == 300
    assert plan.oversized() == [] and not plan.over_budget and plan.refusal() is None
    assert limits.room(200) == int((900 - 200) * 3.0), "a request fills at most 90 % of the context, by the estimate"
    too_big = Plan("carnet x", (PlannedRequest("a", 3001, 0),), limits)
    assert too_big.oversized() == [1] and "do not fit the model's context of 1,000 tokens" in (too_big.refusal() or "")
    costly = Plan("carnet x", tuple(PlannedRequest(str(n), 1500, 200) for n in range(4)), limits)
    refusal = costly.refusal() or ""
    assert costly.over_budget and "2,800 tokens, more than the run's budget of 2,000" in refusal
    assert "--max-tokens 3,000" in refusal, "the way to raise it, in round figures above the need"
    lines = costly.lines(shown=2)
    assert lines[0].startswith("plan of 'carnet x': 4 request(s), 6,000 characters") and "… and 2 more" in lines[-1]


@pytest.mark.parametrize("llm,message", [
    ({"context_tokens": 0}, "llm.context_tokens"),
    ({"context_tokens": "8k"}, "llm.context_tokens"),
    ({"max_tokens_per_run": 1.5}, "whole number"),
    ({"characters_per_token": -1}, "llm.characters_per_token"),
    ({"context_tokens": True}, "llm.context_tokens"),
])
def test_bad_limits_are_a_clear_settings_error(llm: dict[str, object], message: str) -> None:
    with pytest.raises(LLMConfigError, match=message):
        limits_from({"llm": llm})


def test_limits_default_and_the_command_line_overrides_the_budget() -> None:
    assert limits_from({}) == Limits(8192, 200_000, 2.5)
    assert limits_from({"llm": {"max_tokens_per_run": 5000, "context_tokens": 32768}}, max_tokens=70) == \
        Limits(32768, 70, 2.5)


def test_the_ledger_counts_each_request_once_and_estimates_only_what_was_not_reported(llm_server) -> None:
    client = LLMClient(LLMSettings(llm_server.url, "m", max_retries=1, timeout=5))
    llm_server.script(reply('{"reason": "r"}', usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}),
                      status(500), reply('{"reason": "r"}'),  # a retry, then an answer
                      reply("{", usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}))
    client.chat_json(PROMPT, SCHEMA, max_tokens=50, question="a")
    client.chat_json(PROMPT, SCHEMA, max_tokens=50, question="b")
    with pytest.raises(Exception, match="not JSON"):
        client.chat_json(PROMPT, SCHEMA, max_tokens=50, question="c")  # refused, but answered: its tokens count
    ledger = client.ledger
    assert ledger.requests == 3 and ledger.usage == {"prompt_tokens": 157, "completion_tokens": 48,
                                                     "total_tokens": 205}
    assert ledger.unanswered == 1, "the attempt the client retried got no answer"
    assert "205 over 3 answered request(s); 1 attempt(s) got no usable answer" in ledger.summary()
    assert ledger.measured_ratio() is not None and ledger.remaining(Limits(max_tokens=1000)) < 1000 - 205


def test_the_estimate_follows_what_the_server_measured() -> None:
    ledger = Ledger()
    ledger.answered(1000, {"prompt_tokens": 500, "completion_tokens": 10, "total_tokens": 510})
    assert ledger.measured_ratio() == 2.0
    assert ledger.estimate(Limits(), PlannedRequest("x", 300, 20)) == 150 + 20, "2 characters a token, as measured"
