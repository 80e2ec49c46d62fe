"""``--jobs N`` (issue: throughput where users outgrow one machine): ``verify``, ``analyse``
and ``select --oppositions`` send their independent requests up to N at once, over real
HTTP to the scripted endpoint, and write byte for byte what ``--jobs 1`` writes, whatever
order the answers arrive in. A failing request loses none of the others; after a
transport failure no new request is started, and those in flight are kept."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.answers import Answers, prompt_of
from support.cli import Run, carnet_here, configure_llm, tree
from support.corpus import copy_fixture, write
from support.llm_server import Scripted, ScriptedLLMServer

DELAY = 0.5
"""How long each answer takes: long enough for requests sent together to overlap."""
PARAGRAPHS = 8
LONG = "notes/seance-longue.md"
HEAD = """---
title: Longue séance
date: 2025-03-01
authors: [Zoé Realname]
notebooks:
  conseil:
    theme: [Budget]
    annee: ["2025"]
---
"""


def paragraph(number: int) -> str:
    """About 2,500 characters, every sentence naming its paragraph (so each quote is unique)."""
    return " ".join(f"Au point {number}, la phrase {j} du compte rendu détaille une dépense prévue pour le foyer."
                    for j in range(1, 31))


def corpus(root: Path, url: str) -> Path:
    """The small fixture plus a long note in the wiki's perimeter: 8 extractions of one
    paragraph each, all cited by the wiki. So ``verify --batch 2`` makes 6 batches (one
    for the synthesis, five for the wiki's 9 pairs), the oppositions pass 6 requests (4
    chunks of the perimeter, taken two by two) and ``analyse`` of the long note 4."""
    content = copy_fixture("small", root)
    write(content, LONG, HEAD + "\n\n".join(paragraph(i) for i in range(1, PARAGRAPHS + 1)) + "\n")
    extractions = [{"id": f"longue-{i}", "quote": paragraph(i), "kind": "fait", "author": "Zoé Realname",
                    "date": "2025-03-01"} for i in range(1, PARAGRAPHS + 1)]
    write(content, LONG.replace(".md", ".extractions.yaml"),
          yaml.safe_dump({"extractions": extractions}, allow_unicode=True, sort_keys=False, width=10_000))
    wiki = content / "notes" / "wiki-budget.md"
    wiki.write_text(wiki.read_text(encoding="utf-8") + "".join(
        f"\nLa dépense numéro {i} est prévue [[ext:longue-{i}]].\n" for i in range(1, PARAGRAPHS + 1)),
        encoding="utf-8")
    # a small model's context: the oppositions pass then takes its perimeter in 4 chunks
    configure_llm(content, url, extra="  context_tokens: 6000\n  characters_per_token: 3\n")
    return content


def slowly(answer: Callable[[dict[str, Any]], Scripted | None], seconds: float = DELAY
           ) -> Callable[[dict[str, Any]], Scripted | None]:
    """Every answer of ``answer`` given after ``seconds`` (an error it scripts keeps its own delay)."""
    def respond(body: dict[str, Any]) -> Scripted | None:
        step = answer(body)
        if step is not None and not step.delay:
            step.delay = seconds
        return step
    return respond


def last_sent_first(answer: Callable[[dict[str, Any]], Scripted | None]) -> Callable[[dict[str, Any]], Scripted | None]:
    """Every answer of ``answer``, the first of each four requests received answered last
    (after 0.6 s, then 0.5, 0.4, 0.3): four requests in flight get their answers in the
    reverse order of their sending."""
    lock, received = threading.Lock(), [0]

    def respond(body: dict[str, Any]) -> Scripted | None:
        with lock:
            number, received[0] = received[0], received[0] + 1
        step = answer(body)
        if step is not None:
            step.delay = 0.3 + 0.1 * (3 - number % 4)
        return step
    return respond


def run_with(server: ScriptedLLMServer, *args: object) -> tuple[Run, int, int]:
    """The command, the most requests the server answered at once during it, and how many it got."""
    with server.lock:
        server.max_in_flight, server.requests = 0, []
    run = carnet_here(*args)
    return run, server.max_in_flight, len(server.requests)


def written(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, bytes]:
    return {path: data for path, data in after.items() if before.get(path) != data}


def same_bytes_with_4_jobs(tmp_path: Path, server: ScriptedLLMServer, *args: str) -> tuple[dict[str, bytes], int]:
    """Run ``args`` on two fresh copies of one corpus, with --jobs 1 and --jobs 4: the same
    files, byte for byte, and one request at a time, then four. Returns what was written
    and how many requests each run made. The answers arrive last sent first."""
    server.respond(last_sent_first(Answers().respond))
    results = {}
    for jobs in (1, 4):
        content = corpus(tmp_path / f"jobs-{jobs}", server.url)
        before = tree(content)
        run, most, sent = run_with(server, *args, "--content", content, "--jobs", jobs)
        assert run.code == 0, run
        assert most == jobs, f"--jobs {jobs}: {most} request(s) at once"
        results[jobs] = (run.out.replace(str(content), "CONTENT"), written(before, tree(content)), sent)
    (one, files_one, sent_one), (four, files_four, sent_four) = results[1], results[4]
    assert files_one, "something was written"
    assert files_four == files_one, "the same files, byte for byte"
    assert sent_one == sent_four
    assert four == one, "the same report, in the same order"
    return files_one, sent_one


def test_verify_with_4_jobs_sends_4_batches_at_once_and_writes_the_same_bytes(tmp_path: Path, llm_server) -> None:
    files, sent = same_bytes_with_4_jobs(tmp_path, llm_server, "verify", "--batch", "2")
    assert sent == 6 and sorted(files) == ["verdicts/synthese-2025.yaml", "verdicts/wiki-budget.yaml"]
    records = yaml.safe_load(files["verdicts/wiki-budget.yaml"])["verdicts"]
    assert len(records) == 9, "every pair of the wiki, in its batches' order"


def test_analyse_with_4_jobs_sends_4_chunks_at_once_and_writes_the_same_bytes(tmp_path: Path, llm_server) -> None:
    files, sent = same_bytes_with_4_jobs(tmp_path, llm_server, "analyse", "seance-longue", "conseil-a",
                                         "--notebook", "conseil")
    assert sent == 5, "four chunks of the long note, one of conseil-a"
    assert sorted(path.split("/")[2] for path in files if path.endswith("-llm.yaml")) == ["conseil-a", "seance-longue"]
    (proposal,) = [data for path, data in files.items() if path.startswith("proposals/extractions/seance-longue/")
                   and path.endswith("-llm.yaml")]
    points = [int(re.findall(r"Au point (\d+),", p["quote"])[0]) for p in yaml.safe_load(proposal)["passages"]]
    assert points == [1, 3, 5, 7], "one passage per chunk, in the chunks' order (not the answers')"


def test_select_oppositions_with_4_jobs_sends_4_requests_at_once_and_writes_the_same_bytes(
        tmp_path: Path, llm_server) -> None:
    files, sent = same_bytes_with_4_jobs(tmp_path, llm_server, "select", "wiki-budget", "--oppositions")
    assert sent == 6 and sorted(files) == ["oppositions/wiki-budget.yaml"]
    record = yaml.safe_load(files["oppositions/wiki-budget.yaml"])
    assert len(record["examined"]) == 6 and {e["of"] for e in record["examined"]} == {6} and record["oppositions"]


def answering(fail: Callable[[str], Scripted | None]) -> Callable[[dict[str, Any]], Scripted | None]:
    """Valid answers, after DELAY, except where ``fail(prompt)`` scripts something else."""
    valid = slowly(Answers().respond)

    def respond(body: dict[str, Any]) -> Scripted | None:
        return fail(prompt_of(body)) or valid(body)
    return respond


def verdicts(content: Path, article: str) -> list[str]:
    path = content / "verdicts" / f"{article}.yaml"
    return [r["claim"] for r in yaml.safe_load(path.read_text(encoding="utf-8"))["verdicts"]] if path.exists() else []


def test_a_batch_failing_with_500_keeps_the_batches_in_flight_beside_it(tmp_path: Path, llm_server) -> None:
    content = corpus(tmp_path, llm_server.url)
    # --batch 3: four batches (the synthesis; the wiki's pairs 1–3, 4–6, 7–9), all in flight at once
    llm_server.respond(answering(lambda prompt: Scripted(500, "overloaded", delay=DELAY)
                                 if "La dépense numéro 2 " in prompt else None))
    run, most, sent = run_with(llm_server, "verify", "--content", content, "--batch", "3", "--jobs", 4)
    assert run.code == 3 and most == 4 and sent == 4, run
    assert "failed batch: wiki-budget pairs 1–3: the endpoint answered HTTP 500" in run.err
    assert "judged 7 pair(s); 3 left unjudged" in run.out
    assert verdicts(content, "synthese-2025") == ["Le budget a été reconduit"]
    claims = verdicts(content, "wiki-budget")
    assert len(claims) == 6 and not [c for c in claims if re.search(r"numéro [12]\b", c)], claims


def test_a_refused_answer_stops_no_other_batch(tmp_path: Path, llm_server) -> None:
    content = corpus(tmp_path, llm_server.url)
    llm_server.respond(answering(lambda prompt: Scripted(200, "Tout est vérifié.", delay=DELAY)
                                 if "La dépense numéro 3 " in prompt else None))
    run, most, sent = run_with(llm_server, "verify", "--content", content, "--batch", "2", "--jobs", 4)
    assert run.code == 3 and most == 4 and sent == 6, run
    assert "failed batch: wiki-budget pairs 3–4: the answer is not JSON" in run.err
    assert "stopped sending" not in run.err
    assert "judged 8 pair(s); 2 left unjudged" in run.out
    assert len(verdicts(content, "wiki-budget")) == 7 and verdicts(content, "synthese-2025")


def test_after_a_transport_failure_no_new_batch_is_started_and_those_in_flight_are_kept(
        tmp_path: Path, llm_server) -> None:
    content = corpus(tmp_path, llm_server.url)
    # the first batch (the synthesis) fails quickly, while the next three are still in flight
    llm_server.respond(answering(lambda prompt: Scripted(503, "down", delay=0.1) if "reconduit" in prompt else None))
    run, most, sent = run_with(llm_server, "verify", "--content", content, "--batch", "2", "--jobs", 4)
    assert run.code == 3 and most == 4, run
    assert sent == 4, "the two batches not yet started when the endpoint failed are never sent"
    assert "failed batch: synthese-2025 pairs 1–1: the endpoint answered HTTP 503" in run.err
    assert "stopped sending once the endpoint failed" in run.err
    assert "judged 6 pair(s); 4 left unjudged" in run.out
    assert verdicts(content, "synthese-2025") == []
    assert len(verdicts(content, "wiki-budget")) == 6, "the three batches in flight are kept"


def test_an_analysis_failing_in_one_chunk_loses_that_note_only(tmp_path: Path, llm_server) -> None:
    content = corpus(tmp_path, llm_server.url)
    # the long note's second chunk (paragraphs 3–4) fails quickly, while its others are in flight
    llm_server.respond(answering(lambda prompt: Scripted(500, "overloaded", delay=0.1)
                                 if "Au point 3," in prompt else None))
    run, most, sent = run_with(llm_server, "analyse", "seance-longue", "conseil-a", "--notebook", "conseil",
                               "--content", content, "--jobs", 4)
    assert run.code == 3 and most == 4 and sent == 5, run
    assert "FAILED, nothing written: request 2 of 4: the endpoint answered HTTP 500" in run.out, run.out
    assert not (content / "proposals" / "extractions" / "seance-longue").exists()
    assert list((content / "proposals" / "extractions" / "conseil-a").glob("*-llm.yaml")), "the other note is written"


@pytest.mark.parametrize("args", [("verify",), ("analyse", "conseil-a"), ("select", "wiki-budget", "--oppositions")])
@pytest.mark.parametrize("jobs", ["0", "-1", "deux"])
def test_jobs_is_a_whole_number_at_least_1(small: Path, args: tuple[str, ...], jobs: str) -> None:
    run = carnet_here(*args, "--content", small, "--jobs", jobs)
    assert run.code == 2 and "--jobs: must be a whole number of requests at once, at least 1" in run.err, run


def test_select_takes_jobs_with_oppositions_only(small: Path) -> None:
    run = carnet_here("select", "wiki-budget", "--content", small, "--jobs", "4")
    assert run.code == 2 and "--jobs goes with --oppositions" in run.err, run


def test_the_requests_sent_are_the_same_whatever_jobs(tmp_path: Path, llm_server) -> None:
    """The bodies sent (prompts, schemas, bounds) do not depend on --jobs: only their timing does."""
    llm_server.respond(slowly(Answers().respond, 0.05))
    bodies = {}
    for jobs in (1, 4):
        content = corpus(tmp_path / f"jobs-{jobs}", llm_server.url)
        run, _most, _sent = run_with(llm_server, "verify", "--content", content, "--batch", "2", "--jobs", jobs)
        assert run.code == 0, run
        bodies[jobs] = sorted(json.dumps(r["body"], sort_keys=True) for r in llm_server.requests)
    assert bodies[1] == bodies[4]


def test_oppositions_answered_out_of_order_keep_the_first_requests_question(llm_server) -> None:
    """Chunks are sent in pairs, so one pair of extractions is asked about in several
    requests: answered last sent first, the pass still keeps the first request's question
    and reports the later ones as conflicts, in the requests' order."""
    from generator.llm import LLMClient, LLMSettings
    from generator.llm.prompts import load_prompt
    from generator.selection.oppositions import find_oppositions, requests

    items = [(f"x{i:02d}", "mot " * 30) for i in range(8)]
    assert len(requests(items, 600)) == 6, "four chunks of two, two by two"

    def ask(body: dict[str, Any]) -> Scripted:
        ids = re.findall(r"^\[([^\]\s]+)\] «", prompt_of(body), re.M)
        return Scripted(200, json.dumps({"oppositions": [
            {"a": ids[0], "b": ids[1], "question": f"Faut-il trancher avant {ids[-1]} ?"}]}))

    llm_server.respond(last_sent_first(ask))
    passes = {}
    for jobs in (1, 4):
        with llm_server.lock:
            llm_server.max_in_flight = 0
        client = LLMClient(LLMSettings(llm_server.url, "juge", max_retries=0))
        passes[jobs] = find_oppositions(client, load_prompt("find_oppositions", "fr"), items, 600, jobs=jobs)
        assert llm_server.max_in_flight == jobs
    assert passes[4] == passes[1]
    first = passes[1].found[0]
    assert (first.a, first.b, first.question) == ("x00", "x01", "Faut-il trancher avant x03 ?")
    assert [r.request for r in passes[1].refused] == sorted(r.request for r in passes[1].refused) != []


def test_a_failed_oppositions_request_loses_only_itself_and_the_pass_resumes(tmp_path: Path, llm_server) -> None:
    """The endpoint fails on one request: what the requests answered before found is
    recorded, with them under 'examined'; nothing more is sent once the endpoint failed;
    the same command then sends only the requests left, and the pass ends complete."""
    content = corpus(tmp_path, llm_server.url)
    before = tree(content)
    failing = {"on": True}
    llm_server.respond(answering(lambda prompt: Scripted(500, "overloaded")
                                 if failing["on"] and "[longue-5]" in prompt and "[longue-3]" in prompt else None))
    run, _most, sent = run_with(llm_server, "select", "wiki-budget", "--oppositions", "--content", content)
    assert run.code == 3, run
    assert "the endpoint answered HTTP 500" in run.out and "tokens reported by the server" in run.err, run
    assert "(chunks 3×4): not sent" in run.out, "the requests after the failure are said, not sent"
    record = yaml.safe_load((content / "oppositions" / "wiki-budget.yaml").read_text(encoding="utf-8"))
    done = [tuple(e["chunks"]) for e in record["examined"]]
    assert 0 < len(done) == sent - 1 < 6 and all(e["of"] == 6 for e in record["examined"])
    assert set(tree(content)) - set(before) == {"oppositions/wiki-budget.yaml"}
    assert f"n'a lu que {len(done)} de ses 6 requêtes" in _oppositions_section(content, tmp_path / "partial"), \
        "the selection page says the pass is incomplete"
    failing["on"] = False
    again, _most, resent = run_with(llm_server, "select", "wiki-budget", "--oppositions", "--content", content)
    assert again.code == 0, again
    assert resent == 6 - len(done), "only the requests left are sent"
    assert f"{len(done)} answered by an earlier run" in again.out, again
    record = yaml.safe_load((content / "oppositions" / "wiki-budget.yaml").read_text(encoding="utf-8"))
    assert sorted(tuple(e["chunks"]) for e in record["examined"]) == [(a, b) for a in range(1, 5)
                                                                       for b in range(a + 1, 5)]
    pairs = [(o["a"], o["b"]) for o in record["oppositions"]]
    assert len(pairs) == len(set(pairs)), "no pair recorded twice"
    assert "La passe a lu ses 6 requêtes" in _oppositions_section(content, tmp_path / "whole")


def _oppositions_section(content: Path, out: Path) -> str:
    """The text of the wiki's selection page's oppositions section, built from ``content``."""
    from bs4 import BeautifulSoup

    from generator.pipeline import build

    build(content, out, search=False)
    page = BeautifulSoup((out / "notes" / "wiki-budget.selection.html").read_bytes(), "html.parser")
    return " ".join(page.select_one("#oppositions").get_text().split())
