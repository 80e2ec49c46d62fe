"""The LLM seam over real HTTP (the openai client against the scripted server):
answers validated with provenance, loud failures, retries, timeouts."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from generator.llm import LLMAnswerError, LLMClient, LLMConfigError, LLMSettings, LLMTransportError, llm_settings
from generator.llm.prompts import Prompt
from support.llm_server import delay, reply, status

SCHEMA = {"type": "object", "required": ["verdict", "reason"],
          "properties": {"verdict": {"type": "string", "enum": ["oui", "non"]}, "reason": {"type": "string"}}}
PROMPT = Prompt("test", "Question : {{ question }}\n")


def client(server, retries: int = 2, timeout: float = 5.0) -> LLMClient:
    return LLMClient(LLMSettings(server.url, "modele-test", timeout=timeout, max_retries=retries),
                     today=dt.date(2026, 1, 15))


def test_a_good_answer_comes_with_its_provenance(llm_server) -> None:
    llm_server.script(reply(json.dumps({"verdict": "oui", "reason": "c'est écrit"}),
                            usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}))
    data, provenance = client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=200, question="Le foyer ouvre-t-il ?")
    assert data == {"verdict": "oui", "reason": "c'est écrit"}
    record = provenance.as_record()
    assert record["method"] == "llm" and record["model"] == "modele-test"
    assert record["endpoint"] == llm_server.url.split("/", 2)[2] and record["date"] == "2026-01-15"
    assert record["prompt"] == "test" and record["prompt_version"].startswith("sha256:")
    assert record["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    sent = llm_server.requests[0]["body"]
    assert "Le foyer ouvre-t-il ?" in sent["messages"][1]["content"]


@pytest.mark.parametrize("answer,message", [
    (reply("{\"verdict\": \"oui\", "), "not JSON"),
    (reply(json.dumps({"verdict": "oui", "reason": "x"}), finish="length"), "cut off"),
    (reply(json.dumps({"verdict": "peut-être", "reason": "x"})), "not one of"),
    (reply(json.dumps({"verdict": "oui"})), "no 'reason'"),
])
def test_a_bad_answer_is_a_loud_failure(llm_server, answer, message) -> None:
    llm_server.script(answer)
    with pytest.raises(LLMAnswerError, match=message):
        client(llm_server).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")


def test_429_then_success_is_retried(llm_server) -> None:
    llm_server.script(status(429), status(503), reply(json.dumps({"verdict": "non", "reason": "r"})))
    data, _ = client(llm_server, retries=3).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    assert data["verdict"] == "non" and len(llm_server.requests) == 3


def test_persistent_errors_and_timeouts_are_transport_errors(llm_server) -> None:
    llm_server.script(status(500), status(500))
    with pytest.raises(LLMTransportError, match="HTTP 500"):
        client(llm_server, retries=1).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")
    llm_server.script(delay(2.0))
    with pytest.raises(LLMTransportError, match="did not answer"):
        client(llm_server, retries=0, timeout=0.5).chat_json(PROMPT, SCHEMA, max_tokens=200, question="?")


def test_embeddings(llm_server) -> None:
    llm_server.script(reply(""))
    vectors, provenance = client(llm_server).embed(["un", "deux mots"])
    assert vectors == [[2.0, 1.0], [9.0, 1.0]] and provenance.method == "llm"


def test_settings_are_checked() -> None:
    with pytest.raises(LLMConfigError, match="no 'llm:'"):
        llm_settings({})
    with pytest.raises(LLMConfigError, match="base_url"):
        llm_settings({"llm": {"base_url": "localhost:11434", "model": "m"}})
    settings = llm_settings({"llm": {"base_url": "http://127.0.0.1:9/v1/", "model": "m", "api_key_env": "CARNET_TEST_NO_KEY"}})
    with pytest.raises(LLMConfigError, match="CARNET_TEST_NO_KEY"):
        settings.api_key({})
    assert settings.api_key({"CARNET_TEST_NO_KEY": "k"}) == "k"


def test_prompt_templates_are_versioned_by_hash(tmp_path: Path) -> None:
    from generator.llm.prompts import load_prompt
    (tmp_path / "fr").mkdir()
    (tmp_path / "fr" / "a.j2").write_text("Bonjour {{ nom }}\n", encoding="utf-8")
    prompt = load_prompt("a", "fr", tmp_path)
    assert prompt.render(nom="CVL") == "Bonjour CVL\n"
    (tmp_path / "fr" / "a.j2").write_text("Bonjour {{ nom }} !\n", encoding="utf-8")
    assert load_prompt("a", "fr", tmp_path).version != prompt.version


def test_build_never_imports_the_llm_seam(tmp_path: Path) -> None:
    """`build` is offline: the pipeline and everything it imports leave generator.llm alone."""
    import subprocess
    import sys
    code = ("import sys; from pathlib import Path; from generator.pipeline import build; "
            f"build(Path({str(Path(__file__).resolve().parents[2] / 'content')!r}), Path({str(tmp_path / 'site')!r})); "
            "print(sorted(m for m in sys.modules if m.startswith('generator.llm') or m == 'openai'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
