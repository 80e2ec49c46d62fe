"""Ctrl-C in a model command (issue 55, item 3): it says what was kept and what was spent,
and leaves no request running: the connection is closed, so the server is not left
answering a client that has gone (a server that notices stops generating)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support.cli import REPOSITORY, configure_llm
from support.llm_server import Scripted, reply

GUARD = 60.0
"""Seconds the test waits for a moment to come, against a hang: never a threshold."""


def _wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {GUARD:g} s")
        time.sleep(0.05)


MANY = """Le budget est de quatre mille euros [[ext:a-budget]].

Il a été voté à l'unanimité [[ext:a-two-paragraphs]].

Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""
VERDICT = json.dumps({"verdicts": [{"pair": "p1", "verdict": "supported",
                                    "rationale": "Le passage le dit en toutes lettres."}]})


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_says_what_was_kept_and_spent_and_closes_the_connection(small: Path, llm_server, jobs: str) -> None:
    wiki = small / "notes" / "wiki-budget.md"
    head, front, _body = wiki.read_text(encoding="utf-8").split("---\n", 2)
    wiki.write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")  # four pairs to judge, one a request
    configure_llm(small, llm_server.url, extra="  timeout: 600\n")

    def respond(body: dict) -> Scripted:
        if "quatre mille euros" in body["messages"][1]["content"]:  # the first pair: answered
            return reply(VERDICT)
        return Scripted(200, VERDICT, delay=GUARD)  # the requests Ctrl-C interrupts

    llm_server.respond(respond)
    process = subprocess.Popen([sys.executable, "-m", "generator", "verify", "wiki-budget", "--batch", "1",
                                "--content", str(small), "--jobs", jobs], cwd=REPOSITORY, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(REPOSITORY)))
    record = small / "verdicts" / "wiki-budget.yaml"
    _wait_for(lambda: record.exists() and llm_server.in_flight >= 1,
              "a batch answered and recorded, the next one in flight")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=GUARD)
    assert process.returncode == 130, (out, err)
    assert llm_server.in_flight >= 1, "the command ended while its request was still in flight: not waited out"
    assert "interrupted; nothing more is sent (the connections are closed); every file written before" in err, err
    # with --jobs 2 a later batch may have been answered beside the one in flight: spent, said, not written
    spent = [f"tokens reported by the server: {120 * n} prompt + {40 * n} completion = {160 * n} over {n} answered "
             f"request(s)" for n in ((1,) if jobs == "1" else (1, 2))]
    assert any(line in err for line in spent), err
    assert "attempt(s) got no usable answer" in err or "were still in flight, their connections closed" in err, \
        "the interrupted requests are said, their tokens estimated"
    assert "Traceback" not in err
    kept = yaml.safe_load(record.read_text(encoding="utf-8"))
    assert len(kept["verdicts"]) == 1, "what was answered before the interrupt is kept whole"
