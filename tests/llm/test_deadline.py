"""Every wait bounded (issue 56, item 3): ``llm.timeout`` is a deadline for the whole request
(connecting, waiting, reading the answer), not for each read. A server that sends one byte
every half second never lets a per-read timeout fire; it is cut at the deadline with the
documented :class:`LLMTransportError`, in every model command, and the client's retries
bound the whole call to (retries + 1) deadlines.

The elapsed times asserted are correctness bounds (10 × what the deadline allows), not
measures of speed: without a deadline these calls wait until the server stops."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.llm import LLMClient, LLMSettings, LLMTransportError, llm_settings
from generator.llm.config import MAX_RETRIES
from generator.llm.errors import LLMConfigError
from generator.llm.prompts import Prompt
from support.cli import Run, carnet_here
from support.llm_server import drip, reply, status

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}
DEADLINE = 2.0
DRIP = 0.5
BOUND = 10
"""How many times what the deadline allows a call may take before the test calls it unbounded."""


def _bounded(call: Callable[[], Any], allowed: float) -> tuple[Any, float]:
    """``call()``'s result (or the exception it raised) and the seconds it took; fails when it
    has not returned after BOUND × ``allowed`` seconds (a wait without bound), leaving it."""
    done: list[Any] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as exc:  # handed to the test
            done.append(exc)

    start = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND * allowed)
    elapsed = time.monotonic() - start
    if thread.is_alive():
        pytest.fail(f"still waiting after {elapsed:.1f} s, {BOUND} × the {allowed:g} s the deadline allows")
    return done[0], elapsed


@pytest.mark.parametrize("head", [False, True], ids=["body", "head"])
def test_a_server_dripping_its_answer_is_cut_at_the_deadline(llm_server, head: bool) -> None:
    llm_server.script(drip(DRIP, '{"reason": "' + "x" * 400 + '"}', head=head))
    client = LLMClient(LLMSettings(llm_server.url, "m", timeout=DEADLINE, max_retries=0))
    raised, _elapsed = _bounded(lambda: client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="?"), DEADLINE)
    assert isinstance(raised, LLMTransportError), raised
    assert "did not answer the chat request within 2 s" in str(raised)
    assert "llm.timeout" in str(raised), "the message names the setting"
    assert llm_server.dripped >= 1, "the server was dripping, not silent"
    assert client.ledger.unanswered == 1, "the attempt is counted, with no answer"


def test_retries_do_not_multiply_the_deadline_without_bound(llm_server) -> None:
    """Two retries: three attempts at most, all within three deadlines from the call's start."""
    llm_server.respond(lambda _body: drip(DRIP / 2, '{"reason": "' + "x" * 400 + '"}'))
    client = LLMClient(LLMSettings(llm_server.url, "m", timeout=DEADLINE / 2, max_retries=2))
    raised, _elapsed = _bounded(lambda: client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="?"),
                                3 * DEADLINE / 2)
    assert isinstance(raised, LLMTransportError) and "did not answer" in str(raised), raised
    assert 1 <= len(llm_server.requests) <= 3


def test_retries_stop_at_the_calls_deadline_and_say_what_the_endpoint_answered(llm_server) -> None:
    """Ten retries of a failing endpoint, 0.2 s each: the call's deadline (2.2 s) passes during
    the client's back-off; no retry is sent past it (nor slept for), and the error says the
    endpoint's last answer, not a timeout it never had."""
    llm_server.respond(lambda _body: status(500, "busy"))
    client = LLMClient(LLMSettings(llm_server.url, "m", timeout=0.2, max_retries=10))
    raised, _elapsed = _bounded(lambda: client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="?"), 11 * 0.2 + 8)
    assert isinstance(raised, LLMTransportError), raised
    assert "answered HTTP 500" in str(raised) and "ran past the call's deadline" in str(raised), raised
    assert len(llm_server.requests) < 11, "the retries past the deadline were not sent"


def test_a_retry_after_past_the_deadline_is_not_waited_for(llm_server) -> None:
    """A 429 asking to come back in 100 s: the client used to sleep it out, retry after retry."""
    llm_server.script(status(429, "slow down", retry_after="100"), reply('{"reason": "r"}'))
    client = LLMClient(LLMSettings(llm_server.url, "m", timeout=DEADLINE, max_retries=3))
    raised, _elapsed = _bounded(lambda: client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="?"),
                                4 * DEADLINE)
    assert isinstance(raised, LLMTransportError), raised
    assert "HTTP 429" in str(raised) and "asked to wait 100 s" in str(raised), raised
    assert len(llm_server.requests) == 1, "not retried"


def test_a_short_retry_after_is_still_honoured(llm_server) -> None:
    llm_server.script(status(429, "slow down", retry_after="0.2"), reply('{"reason": "r"}'))
    client = LLMClient(LLMSettings(llm_server.url, "m", timeout=DEADLINE, max_retries=1))
    done, _elapsed = _bounded(lambda: client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="?"), 2 * DEADLINE)
    assert not isinstance(done, BaseException), done
    assert done[0] == {"reason": "r"} and len(llm_server.requests) == 2


@pytest.mark.parametrize("raw,message", [
    ({"timeout": 0}, "llm.timeout"), ({"timeout": -1}, "llm.timeout"), ({"timeout": "inf"}, "llm.timeout"),
    ({"timeout": "nan"}, "llm.timeout"), ({"max_retries": -1}, "llm.max_retries"),
    ({"max_retries": MAX_RETRIES + 1}, "llm.max_retries"), ({"max_retries": 1.5}, "llm.max_retries"),
    ({"max_retries": True}, "llm.max_retries"),
])
def test_a_wait_without_bound_cannot_be_configured(raw: dict[str, object], message: str) -> None:
    with pytest.raises(LLMConfigError, match=message):
        llm_settings({"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m", **raw}})


COMMANDS = [("verify",), ("propose", "wiki-budget", "--provider", "llm"),
            ("analyse", "conseil-a", "--notebook", "conseil"), ("select", "wiki-budget", "--oppositions"),
            ("ask", "Quel budget ?")]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_model_command_cuts_a_dripping_server_at_the_deadline(small: Path, llm_server,
                                                                    command: tuple[str, ...]) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"\nllm:\n  base_url: {llm_server.url}\n  model: m\n  timeout: {DEADLINE:g}\n  max_retries: 0\n")
    llm_server.respond(lambda _body: drip(DRIP, '{"x": "' + "x" * 400 + '"}'))
    run, _elapsed = _bounded(lambda: carnet_here(*command, "--content", small), DEADLINE)
    assert isinstance(run, Run), run
    assert run.code == 3, run
    assert "did not answer" in run.text and "within 2 s" in run.text and "Traceback" not in run.text, run
    assert llm_server.dripped >= 1, "the server was dripping"
