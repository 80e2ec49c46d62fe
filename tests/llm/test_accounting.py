"""Honest accounting (issue 55, item 7): the model the endpoint says answered, checked once
against what it lists; usage recorded once per request; every command says what it spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from generator.llm import LLMClient, LLMSettings
from generator.llm.prompts import Prompt
from generator.pipeline import check_content
from generator.verification.judge import judge
from support.cli import carnet_here, configure_llm
from support.llm_server import reply

PROMPT = Prompt("test", "Question : {{ question }}\n")
SCHEMA = {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}
MANY = """Le budget est de quatre mille euros [[ext:a-budget]].

Il a été voté à l'unanimité [[ext:a-two-paragraphs]].

Le budget est reconduit pour l'année [[ext:a-budget]] [[ext:a-two-paragraphs]].
"""


def test_a_server_that_echoes_the_name_asked_is_checked_against_what_it_lists(llm_server) -> None:
    """llama-cpp-python names in its answers the model it was asked for, whatever it serves:
    the model /models lists is recorded beside it, and the mismatch is said once a run."""
    llm_server.listed_models = ["gemma-3-270m"]
    said: list[str] = []
    client = LLMClient(LLMSettings(llm_server.url, "smollm2"), notice=said.append)
    llm_server.script(reply('{"reason": "a"}'), reply('{"reason": "b"}'))
    _data, first = client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="x")
    _data, second = client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="y")
    assert first.model == "smollm2" and first.listed_model == "gemma-3-270m"
    assert first.as_record()["listed_model"] == "gemma-3-270m" and second.listed_model == "gemma-3-270m"
    assert llm_server.listings == 1, "asked once a run"
    assert len(said) == 1 and "answers as model 'smollm2' but lists 'gemma-3-270m'" in said[0]


def test_a_server_listing_the_model_that_answered_adds_nothing(llm_server) -> None:
    llm_server.listed_models = ["smollm2", "other"]
    client = LLMClient(LLMSettings(llm_server.url, "smollm2"), notice=lambda _m: None)
    llm_server.script(reply('{"reason": "a"}'))
    _data, made = client.chat_json(PROMPT, SCHEMA, max_tokens=20, question="x")
    assert made.listed_model == "" and "listed_model" not in made.as_record()


def test_the_verdicts_of_a_batch_carry_its_usage_once(small: Path, llm_server) -> None:
    """Summing the usage of the verdict records gives the tokens the server reported: a
    batch of four is one request, not four (the records named 4 × its tokens before)."""
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    head, front, _body = text.split("---\n", 2)
    (small / "notes" / "wiki-budget.md").write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")
    pending = {"wiki-budget": [a for a in check_content(small).assessments["wiki-budget"] if a.judgeable]}
    usage = {"prompt_tokens": 300, "completion_tokens": 90, "total_tokens": 390}
    llm_server.script(reply(json.dumps({"verdicts": [
        {"pair": f"p{n}", "verdict": "supported", "rationale": "Le passage le dit en toutes lettres."}
        for n in range(1, 5)]}), usage=usage))
    report = judge(small, pending, LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0)), batch_size=4)
    assert report.judged == 4
    records = yaml.safe_load((small / "verdicts" / "wiki-budget.yaml").read_text(encoding="utf-8"))["verdicts"]
    summed: dict[str, int] = {}
    for record in records:
        for key, value in record["provenance"].get("usage", {}).items():
            summed[key] = summed.get(key, 0) + value
    assert summed == usage, "each request's usage once"
    assert len({r["provenance"]["request"] for r in records}) == 1, "every verdict names its request"


def test_every_model_command_prints_the_tokens_the_server_reported(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    llm_server.respond(lambda body: reply(json.dumps({"oppositions": []}),
                                          usage={"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}))
    run = carnet_here("select", "wiki-budget", "--oppositions", "--content", small)
    requests = len(llm_server.requests)
    assert run.code == 0 and requests >= 1, run
    assert f"tokens reported by the server: {11 * requests} prompt + {2 * requests} completion = " \
           f"{13 * requests} over {requests} answered request(s)" in run.err, run


def test_a_plan_over_budget_sends_nothing_and_says_how_to_raise_it(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    run = carnet_here("select", "wiki-budget", "--oppositions", "--content", small, "--max-tokens", "50")
    assert run.code == 2 and llm_server.requests == [], run
    assert "plan of 'carnet select wiki-budget --oppositions': 1 request(s)" in run.out
    assert "more than the run's budget of 50: nothing was sent; raise it with --max-tokens" in run.err
    dry = carnet_here("select", "wiki-budget", "--oppositions", "--content", small, "--dry-run")
    assert dry.code == 0 and llm_server.requests == [] and "dry run: nothing was sent" in dry.out + dry.err, dry


def test_closed_sets_are_enums_in_what_the_server_is_asked() -> None:
    """Kinds, axes and categories of an analysis, ids of the oppositions pass: the server is
    asked for one of those sent, never a free string ("cuisine", "identifiant")."""
    from generator.extracting.request import answer_constraint

    made = answer_constraint(("fact", "decision"), [("topic", ["Budget", "Rooms"]), ("year", ["2025"])], 12)
    item = made["properties"]["passages"]["items"]["properties"]
    assert item["kind"]["enum"] == ["fact", "decision"]
    assert item["categories"]["items"]["properties"]["axis"]["enum"] == ["topic", "year"]
    assert item["categories"]["items"]["properties"]["category"]["enum"] == ["2025", "Budget", "Rooms"]
    assert made["properties"]["passages"]["maxItems"] == 12
    alone = answer_constraint(("fact",), [], 3)
    assert alone["properties"]["passages"]["items"]["properties"]["categories"]["maxItems"] == 0


def test_the_oppositions_pass_asks_for_the_ids_it_sent(llm_server) -> None:
    from generator.llm.prompts import load_prompt
    from generator.selection.oppositions import find_oppositions

    llm_server.script(reply(json.dumps({"oppositions": []})))
    find_oppositions(LLMClient(LLMSettings(llm_server.url, "m", max_retries=0)), load_prompt("find_oppositions", "en"),
                     [("a", "For."), ("b", "Against.")])
    (request,) = llm_server.requests
    pair = request["body"]["response_format"]["json_schema"]["schema"]["properties"]["oppositions"]["items"]
    assert pair["properties"]["a"]["enum"] == ["a", "b"] == pair["properties"]["b"]["enum"]


@pytest.mark.parametrize("command", [
    ("verify",), ("verify", "--calibrate"), ("propose", "wiki-budget", "--provider", "llm"),
    ("analyse", "conseil-a", "--notebook", "conseil"), ("select", "wiki-budget", "--oppositions"),
    ("ask", "Quel budget ?"), ("ask", "Quel budget ?", "--no-tools"),
])
def test_every_model_command_has_a_dry_run_that_sends_and_writes_nothing(small: Path, llm_server,
                                                                       command: tuple[str, ...]) -> None:
    from support.cli import tree

    configure_llm(small, llm_server.url)
    before = tree(small)
    run = carnet_here(*command, "--content", small, "--dry-run")
    assert run.code == 0 and llm_server.requests == [] and tree(small) == before, run
    assert f"plan of 'carnet {command[0]}" in run.out and "dry run: nothing was sent" in run.err, run
    assert "tokens reported by the server" not in run.err, "nothing was spent"
    refused = carnet_here(*command, "--content", small, "--max-tokens", "1")
    assert refused.code == 2 and llm_server.requests == [] and tree(small) == before, refused
    assert "nothing was sent; raise it with --max-tokens" in refused.err, refused


def test_a_run_stops_sending_once_its_budget_is_spent(small: Path, llm_server) -> None:
    """The plan fits the budget by its estimate; the server then counts far more tokens than
    estimated: the client sends no request the rest of the budget does not cover, and says so."""
    text = (small / "notes" / "wiki-budget.md").read_text(encoding="utf-8")
    head, front, _body = text.split("---\n", 2)
    (small / "notes" / "wiki-budget.md").write_text(f"{head}---\n{front}---\n{MANY}", encoding="utf-8")
    configure_llm(small, llm_server.url)
    llm_server.respond(lambda body: reply(json.dumps({"verdicts": [
        {"pair": "p1", "verdict": "supported", "rationale": "Le passage le dit en toutes lettres."}]}),
        usage={"prompt_tokens": 2500, "completion_tokens": 30, "total_tokens": 2530}))
    dry = carnet_here("verify", "wiki-budget", "--batch", "1", "--content", small, "--dry-run")
    planned = int(dry.out.split("about ")[1].split(" prompt tokens")[0].replace(",", ""))
    assert planned < 3000, dry
    run = carnet_here("verify", "wiki-budget", "--batch", "1", "--content", small, "--max-tokens", "3000")
    assert run.code == 3 and len(llm_server.requests) == 1, run
    assert "would pass the run's budget of 3,000: not sent" in run.err, run
    assert "stopped sending before the run's budget was spent" in run.err, run
    records = yaml.safe_load((small / "verdicts" / "wiki-budget.yaml").read_text(encoding="utf-8"))["verdicts"]
    assert len(records) == 1, "the verdict answered before is kept"
