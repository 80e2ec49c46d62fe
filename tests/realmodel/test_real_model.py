"""Every model command of the README against a real server (llama-cpp-python, SmolLM2-135M,
one thread; tests/realmodel/conftest.py), on a copy of the example corpus, as a user runs
them (``python -m generator …``, a subprocess).

Plumbing only, never the quality of the answers: each command exits 0 or 3 with a clear
message; nothing is half-written (every content file still parses, ``carnet check`` still
passes, no temporary file is left, the records already there are kept byte for byte); what
is recorded carries the provenance and the token counts of the server's real responses
(checked against the server's own log); and once the command has exited, no generation is
left running on the server for a client that has gone.

The tests of what the commands achieve with the answers (every pair judged, a proposal
written, reviewed and applied, oppositions answered) hold because each request asks for its
answer's shape as a structured-output constraint (the server takes it as a grammar).

Set CARNET_REALMODEL_FIGURES=FILE to append each command's figures (seconds, prompt sizes
the server counted) to FILE as JSON lines.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.cli import Run, carnet, tree
from support.model_server import MODEL_NAME, ModelServer, Segment, configured_copy

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

WIKI = "cvl-wiki-budget"
NOTES = ("cvl-2026-01-15", "bureau-2025-03-preparation")
COMMAND_GUARD = 3600
"""Seconds one command may run before the test gives up on it: a guard against a hang (each
request is bounded by llm.timeout), never a threshold."""
PARSE_CODES = {"encoding", "yaml-syntax", "yaml-unsupported", "duplicate-key", "invalid-date",
               "front-matter-missing", "front-matter-unclosed", "json-syntax"}
TEMPORARY = re.compile(r"\.tmp-\d+$")


# --- running a command and reading what it left ---------------------------------------------------------


def run_command(server: ModelServer, *args: object) -> tuple[Run, Segment]:
    """``carnet ARGS`` against ``server``, then the server's log of that run, read once the
    server is idle (ModelServer.settle)."""
    mark = server.mark()
    started = time.perf_counter()
    run = carnet(*args, timeout=COMMAND_GUARD)
    seconds = time.perf_counter() - started
    segment = server.settle(mark)
    figures = os.environ.get("CARNET_REALMODEL_FIGURES")
    if figures:
        with open(figures, "a", encoding="utf-8") as out:
            out.write(json.dumps({"command": " ".join(str(a) for a in args if not isinstance(a, Path)),
                                  "exit": run.code, "seconds": round(seconds, 1),
                                  "prompt_tokens": [g.prompt_tokens for g in segment.generations],
                                  "eval_runs": [g.eval_runs for g in segment.generations],
                                  "statuses": segment.answers}) + "\n")
    return run, segment


def assert_clear(run: Run) -> None:
    """Done (0) or the endpoint's answers failed (3), said in words, never a traceback."""
    assert run.code in (0, 3), str(run)
    assert "Traceback" not in run.text, str(run)
    if run.code:
        assert run.text.strip(), f"exit {run.code} without a word\n{run}"


def assert_idle(segment: Segment) -> None:
    """No generation ran on for a client that had stopped. Deterministic, not timed: once the
    server is idle (settle), every generation it ran has printed its timings, and uvicorn
    logged an answer for each one whose client was still there to receive it (the answer of
    a non-streamed request is written after its generation, so a client that read it was
    answered after the generation ended; one that timed out or was killed gets no log line).
    So as many generations as answered requests means no generation outlived its client."""
    assert len(segment.generations) == segment.answered, (
        f"{len(segment.generations)} generation(s) but {segment.answered} answered request(s): a generation "
        f"ran on after its client had stopped\n{segment.text[-3000:]}")


def assert_usage_is_the_servers(usage: dict[str, int], segment: Segment) -> None:
    """Token counts recorded from one real response: the prompt size of one generation of the
    server's log, its completion the decoding steps logged (one more when cut at max_tokens)."""
    assert usage.get("prompt_tokens", 0) > 0, usage
    assert usage.get("total_tokens") == usage["prompt_tokens"] + usage.get("completion_tokens", -1), usage
    matches = [g for g in segment.generations if g.prompt_tokens == usage["prompt_tokens"]]
    assert matches, f"no generation of the server's log had a prompt of {usage['prompt_tokens']} tokens: " \
                    f"{[g.prompt_tokens for g in segment.generations]}"
    assert any(usage["completion_tokens"] - g.eval_runs in (0, 1) for g in matches), (usage, matches)


def assert_provenance(record: dict[str, Any], server: ModelServer) -> None:
    assert record["method"] == "llm", record
    assert record["model"] == MODEL_NAME and record["model"] in server.models(), record
    assert record["endpoint"] == f"127.0.0.1:{server.port}/v1", record
    assert record.get("prompt") and str(record.get("prompt_version", "")).startswith("sha256:"), record


def assert_intact(content: Path, before: dict[str, bytes], rewritten: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Nothing half-written: every content file parses (here with PyYAML, and by ``carnet
    check``, which still passes), no temporary file is left, no file went missing, and every
    file that was there is unchanged or only appended to (``rewritten`` may change)."""
    after = tree(content)
    for rel, data in after.items():
        name = rel.rsplit("/", 1)[-1]
        assert not TEMPORARY.search(name), f"a temporary file is left: {rel}"
        assert rel in before or not name.startswith("."), f"a hidden file appeared: {rel}"
        if rel.endswith((".yaml", ".yml")):
            yaml.safe_load(data.decode("utf-8"))  # strict UTF-8: a file cut inside a character fails here
        elif rel.endswith(".md"):
            text = data.decode("utf-8")
            if text.startswith("---\n"):
                yaml.safe_load(text[4:text.index("\n---", 3)])
    for rel, old in before.items():
        assert rel in after, f"{rel} went missing"
        if rel not in rewritten:
            assert after[rel].startswith(old), f"{rel} was rewritten, not appended to"
    check = carnet("check", content, timeout=COMMAND_GUARD)
    assert check.code == 0, str(check)
    codes = set(re.findall(r"\[([a-z-]+)\]", check.text))
    assert not codes & PARSE_CODES, str(check)
    return after


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {rel for rel, data in after.items() if before.get(rel) != data}


def unjudged(content: Path) -> int:
    """Pairs without a verdict, as ``carnet check`` counts them."""
    check = carnet("check", content, timeout=COMMAND_GUARD)
    return sum(int(n) for n in re.findall(r"\[unjudged-pairs\] (\d+) \(claim, source\) pair", check.text))


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


SPENT = re.compile(r"carnet: tokens reported by the server: ([\d,]+) prompt \+ ([\d,]+) completion = ([\d,]+) over "
                   r"([\d,]+) answered request\(s\)")


def printed_tokens(run: Run) -> tuple[int, int]:
    """The prompt tokens and answered requests the command printed (0, 0 when it printed no
    line: it sent nothing)."""
    found = SPENT.findall(run.err)
    assert len(found) <= 1, str(run)
    if not found:
        return 0, 0
    prompt, _completion, _total, requests = (int(n.replace(",", "")) for n in found[0])
    return prompt, requests


def assert_printed_tokens_are_the_servers(run: Run, segment: Segment) -> None:
    """The tokens the command printed are those the server's log counts, every generation of
    the run (a failed or refused request's included)."""
    prompt, requests = printed_tokens(run)
    assert prompt == segment.prompt_tokens, (str(run), segment.generations)
    assert requests <= len(segment.generations), (str(run), segment.generations)


# --- verify ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verified(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``carnet verify`` run once on the example (the human verdicts kept, 22 pairs unjudged)."""
    content = configured_copy(tmp_path_factory.mktemp("verify"), model_server)
    pending = unjudged(content)
    before = tree(content)
    # one pair per request: in a batch, a 135M model repeats the first pair's key instead of
    # answering the others; alone, the constraint (the one key, one verdict, a sentence) leaves
    # it nothing else to write
    run, segment = run_command(model_server, "verify", "--batch", "1", "--content", content)
    return {"content": content, "pending": pending, "before": before, "run": run, "segment": segment}


def _llm_verdicts(content: Path) -> list[dict[str, Any]]:
    records = []
    for path in sorted((content / "verdicts").glob("*.yaml")):
        records += [r for r in load(path).get("verdicts") or [] if r.get("provenance", {}).get("method") != "human"]
    return records


def test_verify_answers_or_refuses_cleanly(verified: dict[str, Any], model_server: ModelServer) -> None:
    run, segment, content = verified["run"], verified["segment"], verified["content"]
    assert verified["pending"] > 0, "the example has pairs left to judge"
    assert_clear(run)
    summary = re.search(r"judged (\d+) pair\(s\); (\d+) left unjudged", run.out)
    assert summary, str(run)
    judged, left = int(summary.group(1)), int(summary.group(2))
    assert judged + left == verified["pending"], str(run)
    if run.code:
        assert "run 'carnet verify' again" in run.err, str(run)
    assert_idle(segment)
    # the tokens printed are the server's: their sum over the batches is its log's
    assert_printed_tokens_are_the_servers(run, segment)
    after = assert_intact(content, verified["before"])
    assert changed(verified["before"], after) <= {p for p in after if p.startswith("verdicts/")}
    records = _llm_verdicts(content)
    assert len(records) == judged, str(run)
    for record in records:
        assert record["verdict"] in ("supported", "partial", "unsupported"), record
        assert_provenance(record["provenance"], model_server)
        if "usage" in record["provenance"]:  # once per request, on its first verdict
            assert_usage_is_the_servers(record["provenance"]["usage"], segment)
    requests = {r["provenance"]["request"] for r in records}
    assert sum(1 for r in records if "usage" in r["provenance"]) == len(requests), "each request's usage once"


def test_verify_judges_every_pair(verified: dict[str, Any]) -> None:
    run, content = verified["run"], verified["content"]
    assert run.code == 0, str(run)
    assert f"judged {verified['pending']} pair(s); 0 left unjudged" in run.out, str(run)
    assert unjudged(content) == 0
    assert len(_llm_verdicts(content)) == verified["pending"]


# --- propose → review → apply ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def proposed(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    content = configured_copy(tmp_path_factory.mktemp("propose"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "propose", WIKI, "--provider", "llm", "--content", content)
    return {"content": content, "before": before, "run": run, "segment": segment}


def test_propose_answers_or_refuses_cleanly(proposed: dict[str, Any], model_server: ModelServer) -> None:
    run, segment, content, before = proposed["run"], proposed["segment"], proposed["content"], proposed["before"]
    assert_clear(run)
    assert_idle(segment)
    after = assert_intact(content, before)
    new = changed(before, after)
    if new:  # all its requests answered (0), or some (3): what they proposed is written, the others said
        (path,) = new
        assert path.startswith(f"proposals/sections/{WIKI}/") and f"into {content / path};" in run.out, str(run)
        provenance = load(content / path)["provenance"]
        assert_provenance(provenance, model_server)
        outcomes = [request["outcome"] for request in provenance["requests"]]
        assert ("answered" in outcomes) and (run.code == 0) == all(o == "answered" for o in outcomes), outcomes
        for request in provenance["requests"]:  # each request's own usage, once
            if "usage" in request:
                assert_usage_is_the_servers(request["usage"], segment)
    else:
        assert run.code == 3 and "failed" in run.err, str(run)
    assert_printed_tokens_are_the_servers(run, segment)


def test_propose_writes_a_proposal_that_review_shows_and_apply_decides(proposed: dict[str, Any],
                                                                      model_server: ModelServer) -> None:
    run, content, before = proposed["run"], proposed["content"], proposed["before"]
    assert run.code in (0, 3), str(run)
    new = changed(before, tree(content))
    assert len(new) == 1, f"a proposal is written when a request answered (3: not all of them): {run}"
    (rel,) = new
    path = content / rel
    operations = load(path)["operations"]
    assert operations, "the proposal holds operations (a NoChange at least)"
    written = tree(content)
    review, segment = run_command(model_server, "review", path)
    assert review.code == 0, str(review)
    shown = re.findall(r"^\[(\d+)\] (\w+) ", review.out, re.MULTILINE)
    assert shown == [(str(n + 1), op["op"]) for n, op in enumerate(operations)], str(review)
    assert tree(content) == written, "review writes nothing"
    applied, segment_apply = run_command(model_server, "apply", path)
    assert applied.code == 0, str(applied)
    decided = re.findall(r"^\[(\d+)\] (\w+) .*: (accepted|rejected: .+)$", applied.out, re.MULTILINE)
    assert [(n, op) for n, op, _ in decided] == [(str(n + 1), op["op"]) for n, op in enumerate(operations)]
    results = load(path)["applied"]["results"]
    assert [r["decision"] for r in results] == [d.split(":")[0] for _, _, d in decided]
    assert segment.generations == [] and segment_apply.generations == [], "review and apply ask no model"
    assert_intact(content, before, rewritten=frozenset({f"notes/{WIKI}.md"}))


# --- analyse → review → apply ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def analysed(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    content = configured_copy(tmp_path_factory.mktemp("analyse"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "analyse", *NOTES, "--content", content)
    return {"content": content, "before": before, "run": run, "segment": segment}


def _extraction_proposals(content: Path, before: dict[str, bytes]) -> dict[str, Path]:
    return {rel.split("/")[2]: content / rel for rel in changed(before, tree(content))
            if rel.startswith("proposals/extractions/") and not rel.endswith("/analysed.yaml")}


def test_analyse_answers_or_refuses_cleanly(analysed: dict[str, Any], model_server: ModelServer) -> None:
    run, segment, content, before = analysed["run"], analysed["segment"], analysed["content"], analysed["before"]
    assert_clear(run)
    assert_idle(segment)
    after = assert_intact(content, before)
    assert all(rel.startswith("proposals/extractions/") for rel in changed(before, after))
    proposals = _extraction_proposals(content, before)
    for note in NOTES:
        assert f"{note} (notebook " in run.out, str(run)
        if note in proposals:
            assert "wrote " in run.out, str(run)
            provenance = load(proposals[note])["provenance"]
            assert_provenance(provenance, model_server)
            assert_usage_is_the_servers(provenance["usage"], segment)
    if len(proposals) < len(NOTES):
        assert "FAILED, nothing written" in run.out + run.err, str(run)
    # the tokens printed are the server's: each note's, one generation's prompt; the total, its log's sum
    per_note = [int(n) for n in re.findall(r"^  tokens: prompt (\d+), completion", run.out, re.MULTILINE)]
    assert set(per_note) <= {g.prompt_tokens for g in segment.generations}, (per_note, segment.generations)
    total = re.search(r"^total tokens: (?:prompt (\d+)|none reported)", run.out, re.MULTILINE)
    assert total, str(run)
    assert int(total.group(1) or 0) == segment.prompt_tokens, (total.group(0), segment.generations)


def test_analyse_writes_proposals_that_review_shows_and_apply_decides(analysed: dict[str, Any],
                                                                     model_server: ModelServer) -> None:
    run, content, before = analysed["run"], analysed["content"], analysed["before"]
    proposals = _extraction_proposals(content, before)
    assert set(proposals) == set(NOTES), str(run)  # a proposal each, even one that proposes nothing
    assert "FAILED" not in run.out + run.err, str(run)
    for note, path in proposals.items():
        passages = load(path)["passages"]
        review, _ = run_command(model_server, "review", path)
        assert review.code == 0, str(review)
        assert len(re.findall(r"^\[\d+\] ", review.out, re.MULTILINE)) == len(passages), str(review)
        applied, segment = run_command(model_server, "apply", path)
        assert applied.code == 0, str(applied)
        decided = re.findall(r"^\[\d+\] .*: (accepted|rejected|skipped)", applied.out, re.MULTILINE)
        assert len(decided) == len(passages), str(applied)
        assert segment.generations == [], "review and apply ask no model"
        assert_intact(content, before, rewritten=frozenset({f"proposals/extractions/{note}/{path.name}",
                                                            f"proposals/extractions/{note}/analysed.yaml"}))


# --- select --oppositions --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def selected(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    content = configured_copy(tmp_path_factory.mktemp("select"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "select", WIKI, "--oppositions", "--content", content)
    return {"content": content, "before": before, "run": run, "segment": segment}


def test_select_oppositions_answers_or_refuses_cleanly(selected: dict[str, Any], model_server: ModelServer) -> None:
    run, segment, content, before = selected["run"], selected["segment"], selected["content"], selected["before"]
    assert_clear(run)
    assert_idle(segment)
    after = assert_intact(content, before)  # the pairs a person recorded are kept byte for byte
    assert changed(before, after) <= {f"oppositions/{WIKI}.yaml"}
    assert "opposition(s) recorded in" in run.out or "no new opposition found" in run.out or \
        run.err.startswith("carnet: "), str(run)
    record = load(content / "oppositions" / f"{WIKI}.yaml")
    for item in record["oppositions"][4:]:  # the example records 4 by hand
        assert_provenance(item.get("provenance", record["provenance"]), model_server)
    # each request answered is recorded under 'examined' with its own usage: their sum is the log's
    examined = record.get("examined", [])
    assert sum(e["provenance"].get("usage", {}).get("prompt_tokens", 0) for e in examined) <= segment.prompt_tokens
    for entry in examined:
        assert entry["provenance"]["model"] == MODEL_NAME
        assert_usage_is_the_servers(entry["provenance"]["usage"], segment)
    assert_printed_tokens_are_the_servers(run, segment)


def test_select_oppositions_gets_the_models_answers(selected: dict[str, Any]) -> None:
    run, segment = selected["run"], selected["segment"]
    assert segment.answered >= 1 and segment.prompt_tokens > 0, str(run)
    assert "opposition(s) recorded in" in run.out or "no new opposition found" in run.out, str(run)


# --- a timeout -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def timed_out(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """analyse with llm.timeout 1 s: its prompt alone takes the server ~10 s to read."""
    content = configured_copy(tmp_path_factory.mktemp("timeout"), model_server, timeout=1)
    before = tree(content)
    run, segment = run_command(model_server, "analyse", NOTES[0], "--content", content)
    return {"content": content, "before": before, "run": run, "segment": segment}


def test_a_failed_request_writes_nothing(timed_out: dict[str, Any]) -> None:
    run, content, before = timed_out["run"], timed_out["content"], timed_out["before"]
    assert run.code == 3, str(run)
    assert "Traceback" not in run.text and "FAILED, nothing written" in run.out + run.err, str(run)
    assert changed(before, assert_intact(content, before)) == set()


def test_a_timeout_is_bounded(timed_out: dict[str, Any]) -> None:
    """The client gives up at llm.timeout and says so. llama-cpp-python does not stop a
    non-streamed generation when its client goes (app.py runs it in a worker thread): the
    abandoned one runs to its end, bounded by the request's max_tokens, and then the server
    is idle again (settle returned); with max_retries 0 no retry queues behind it."""
    run, segment = timed_out["run"], timed_out["segment"]
    assert "did not answer the chat request within 1 s" in run.out + run.err, str(run)
    assert len(segment.generations) == segment.answered + 1, segment.text[-3000:]


# --- ask -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def asked(model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``carnet ask`` once on the example: tool calls if the server takes them, else Carnet's
    own search and one request; then the judge on the pairs that passed verbatim."""
    content = configured_copy(tmp_path_factory.mktemp("ask"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "ask", "Quand le foyer ouvre-t-il le mercredi ?", "--format", "json",
                               "--content", content)
    return {"content": content, "before": before, "run": run, "segment": segment}


def test_ask_answers_or_refuses_cleanly(asked: dict[str, Any], model_server: ModelServer) -> None:
    run, segment, content, before = asked["run"], asked["segment"], asked["content"], asked["before"]
    assert_clear(run)
    assert_idle(segment)
    assert changed(before, assert_intact(content, before)) == set(), "ask writes nothing"
    if run.code:
        return
    data = json.loads(run.out)
    assert data["mode"] in ("tools", "retrieval") and data["retrieved"], str(run)
    assert "Mode: " not in run.out  # JSON only on stdout
    provenance = data["provenance"]
    assert_provenance(provenance, model_server)
    # the tokens recorded are the server's: the answer's turns and the judge's batches, all of its log
    judge = provenance.get("judge", {}).get("usage", {})
    assert provenance["usage"]["prompt_tokens"] + judge.get("prompt_tokens", 0) == segment.prompt_tokens, \
        (provenance, segment.generations)
    texts = {path.stem: path.read_text(encoding="utf-8") for path in (content / "notes").glob("*.md")}
    for citation in data["citations"]:  # what is shown as a citation is the note's own words
        words = [w.strip(".,;:!?«»()*_\"'") for w in citation["quote"].split()]
        assert all(w in texts[citation["note"]] for w in words if w), citation


def test_ask_save_writes_an_answer_the_build_publishes(model_server: ModelServer,
                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    """``ask --save`` against the real server (plumbing: a small model's words are not judged):
    the answer file and its verdicts, or nothing at all when the answer is refused (exit 3);
    the file checks, and builds into a page whose every citation names the note's own words."""
    from urllib.parse import parse_qs, urlsplit

    from bs4 import BeautifulSoup

    content = configured_copy(tmp_path_factory.mktemp("ask-save"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "ask", "Quand le foyer ouvre-t-il le mercredi ?", "--no-tools",
                               "--content", content, "--save", "foyer-mercredi")
    assert_clear(run)
    assert_idle(segment)
    after = assert_intact(content, before)
    written = changed(before, after)
    print(f"ask --save: exit {run.code}, wrote {sorted(written)}")  # which path ran, for the log (-rA)
    if run.code:
        assert written == set(), "a refused answer writes nothing"
        return
    assert "notes/answers/foyer-mercredi.md" in written and written <= {
        "notes/answers/foyer-mercredi.md", "verdicts/foyer-mercredi.yaml"}, written
    front = yaml.safe_load(after["notes/answers/foyer-mercredi.md"].decode("utf-8").split("\n---\n")[0][4:])
    assert front["type"] == "answer" and front["asked"]["mode"] == "retrieval"
    assert_provenance(front["asked"]["provenance"], model_server)
    site = tmp_path_factory.mktemp("ask-save-site") / "site"
    build = carnet("build", content, "--out", site, timeout=COMMAND_GUARD)
    assert build.code == 0, str(build)
    page = BeautifulSoup((site / "notes" / "foyer-mercredi.html").read_text(encoding="utf-8"), "html.parser")
    texts = {path.stem: path.read_text(encoding="utf-8") for path in (content / "notes").glob("*.md")}
    for link in page.select(".note-body a.citation.quote"):
        parts = urlsplit(link["href"])
        words = [w.strip(".,;:!?«»()*_\"'") for w in parse_qs(parts.query)["quote"][0].split()]
        assert all(w in texts[parts.path[:-len(".html")]] for w in words if w), link["href"]


# --- plans, budgets, a judge's calibration, the site's language (issue 55) -------------------------------


def test_propose_dry_run_plans_requests_that_fit_and_sends_nothing(model_server: ModelServer,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    content = configured_copy(tmp_path_factory.mktemp("propose-dry"), model_server)
    before = tree(content)
    run, segment = run_command(model_server, "propose", WIKI, "--provider", "llm", "--dry-run", "--content", content)
    assert run.code == 0 and "dry run: nothing was sent" in run.err, str(run)
    assert segment.generations == [] and tree(content) == before, "a dry run sends and writes nothing"
    planned = re.search(r"^plan of 'carnet propose .*': (\d+) request\(s\)", run.out, re.MULTILINE)
    assert planned and int(planned.group(1)) >= 1 and "does not fit" not in run.out, str(run)
    assert printed_tokens(run) == (0, 0), "nothing spent, nothing said spent"


def test_select_oppositions_keeps_within_its_budget(model_server: ModelServer,
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    content = configured_copy(tmp_path_factory.mktemp("select-budget"), model_server)
    before = tree(content)
    refused, segment = run_command(model_server, "select", WIKI, "--oppositions", "--max-tokens", "100",
                                   "--content", content)
    assert refused.code == 2 and "nothing was sent" in refused.err and "--max-tokens" in refused.err, str(refused)
    assert segment.generations == [] and tree(content) == before
    run, segment = run_command(model_server, "select", WIKI, "--oppositions", "--max-tokens", "60000",
                               "--content", content)
    assert_clear(run)
    assert_idle(segment)
    assert_printed_tokens_are_the_servers(run, segment)
    prompt, _requests = printed_tokens(run)
    assert prompt <= 60000, "the run kept within its budget"
    assert "examined by this run:" in run.out or run.code, str(run)
    assert_intact(content, before)


@pytest.mark.parametrize("language", ["fr", "en"])
def test_verify_calibrate_measures_the_judge_in_the_sites_language(
        language: str, model_server: ModelServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The judge on Carnet's labelled pairs of the site's language, through the real server:
    a record of what was measured (its figures printed for the note, never asserted: a
    135M model is expected near chance), and the tokens printed are the server's."""
    from generator.llm.prompts import load_prompt

    content = configured_copy(tmp_path_factory.mktemp(f"calibrate-{language}"), model_server, language=language)
    before = tree(content)
    run, segment = run_command(model_server, "verify", "--calibrate", "--batch", "8", "--content", content)
    assert_clear(run)
    assert_idle(segment)
    assert_printed_tokens_are_the_servers(run, segment)
    after = assert_intact(content, before)
    print(f"calibration ({language}): exit {run.code}\n{run.out}")  # the figures, for the log (-rA)
    if run.code:
        assert changed(before, after) == set(), "a calibration that could not be measured records nothing"
        return
    assert changed(before, after) == {"verdicts/calibrations.yaml"}
    (record,) = load(content / "verdicts" / "calibrations.yaml")["calibrations"]
    assert record["language"] == language and record["pairs"] >= 60
    assert_provenance(record, model_server)
    assert record["prompt_version"] == load_prompt("verify_pairs", language).version, "the site's language's prompt"
    assert 0.0 <= record["balanced_accuracy"] <= 1.0
    assert record["usage"]["prompt_tokens"] == segment.prompt_tokens, (record, segment.generations)
    assert "qualif" in run.out and f"{record['balanced_accuracy']:.2f}" in run.out, str(run)


def test_an_english_site_asks_and_proposes_in_english(model_server: ModelServer,
                                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    from generator.llm.prompts import load_prompt

    content = configured_copy(tmp_path_factory.mktemp("english"), model_server, language="en")
    before = tree(content)
    run, segment = run_command(model_server, "ask", "When does the foyer open on Wednesdays?", "--no-tools",
                               "--no-judge", "--format", "json", "--content", content)
    assert_clear(run)
    assert_idle(segment)
    assert_printed_tokens_are_the_servers(run, segment)
    if run.code == 0:
        provenance = json.loads(run.out)["provenance"]
        assert provenance["prompt_version"] == load_prompt("ask_passages", "en").version, provenance
    proposed, segment = run_command(model_server, "propose", WIKI, "--provider", "llm", "--content", content)
    assert_clear(proposed)
    assert_idle(segment)
    assert_printed_tokens_are_the_servers(proposed, segment)
    for rel in changed(before, assert_intact(content, before)):
        record = load(content / rel)["provenance"]
        assert record["prompt_version"] == load_prompt("propose_sections", "en").version, record
