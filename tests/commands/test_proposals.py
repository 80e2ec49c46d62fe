"""propose → review → apply, end to end: offline and over real HTTP to the scripted
endpoint; failures write nothing; stale proposals are refused; decisions are recorded."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from generator.commands.proposals import ProposalError, apply, propose, review
from generator.llm import LLMAnswerError, LLMTransportError
from generator.pipeline import build, check_content
from support.corpus import replace
from support.llm_server import delay, reply, status

TODAY = dt.date(2025, 4, 2)
WIKI = "notes/wiki-budget.md"


def configure_llm(small: Path, url: str, retries: int = 2, timeout: float = 5) -> None:
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"llm:\n  base_url: {url}\n  model: modele-test\n  timeout: {timeout}\n  max_retries: {retries}\n")


def proposals(small: Path) -> list[Path]:
    return sorted((small / "proposals").rglob("*.yaml")) if (small / "proposals").exists() else []


def test_offline_proposal_is_deterministic_and_honest(small: Path) -> None:
    path = propose(small, "wiki-budget", today=TODAY).path
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert record["provenance"]["method"] == "scripted" and record["target"] == "wiki-budget"
    (operation,) = record["operations"]
    assert operation["op"] == "InsertSection" and "[[ext:a-two-paragraphs]]" in operation["content"]
    path.unlink()
    again = propose(small, "wiki-budget", today=TODAY).path
    assert yaml.safe_load(again.read_text(encoding="utf-8")) == record


def test_review_then_apply_records_decisions_and_keeps_the_rest(small: Path) -> None:
    before = (small / WIKI).read_text(encoding="utf-8")
    path = propose(small, "wiki-budget", today=TODAY).path
    out = io.StringIO()
    review(path, out)
    assert "accepted" in out.getvalue() and "+## Pièces à intégrer" in out.getvalue()
    assert (small / WIKI).read_text(encoding="utf-8") == before, "review changes nothing"
    results = apply(path, today=TODAY)
    after = (small / WIKI).read_text(encoding="utf-8")
    assert [r.accepted for r in results] == [True]
    assert after.startswith(before.rstrip("\n")), "the existing text and front matter are byte-identical"
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert record["applied"] == {"date": "2025-04-02", "results": [{"index": 0, "decision": "accepted"}]}
    with pytest.raises(ProposalError, match="already applied"):
        apply(path, today=TODAY)
    assert check_content(small).errors == []


def test_a_stale_proposal_is_refused(small: Path) -> None:
    path = propose(small, "wiki-budget", today=TODAY).path
    replace(small, WIKI, "quatre mille euros", "quatre mille euros environ")
    before = (small / WIKI).read_bytes()
    with pytest.raises(ProposalError, match="stale"):
        apply(path, today=TODAY)
    assert (small / WIKI).read_bytes() == before and "applied" not in path.read_text(encoding="utf-8")


def _llm_answer(*operations: dict) -> str:
    return json.dumps({"operations": list(operations)})


GOOD = {"op": "AppendToSection", "heading": "", "after_heading": "",
        "content": "Il a été voté à l'unanimité [[ext:a-two-paragraphs]]."}
OUTSIDE = {"op": "AppendToSection", "heading": "", "after_heading": "",
           "content": "Un mécène finance les foyers [[ext:secret-ext]]."}


def test_llm_proposal_end_to_end_with_a_rejected_operation(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    llm_server.script(status(429), reply(_llm_answer(GOOD, OUTSIDE)))
    path = propose(small, "wiki-budget", provider="llm", today=TODAY).path
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    provenance = record["provenance"]
    assert provenance["method"] == "llm" and provenance["model"] == "modele-test"
    assert provenance["usage"]["total_tokens"] == 160 and provenance["prompt"] == "propose_sections"
    prompt = llm_server.requests[-1]["body"]["messages"][1]["content"]
    assert "[[ext:a-two-paragraphs]]" in prompt and "Le budget (wiki)" in prompt
    results = apply(path, today=TODAY)
    assert [r.accepted for r in results] == [True, False]
    assert "outside the article's perimeter" in results[1].reason
    written = yaml.safe_load(path.read_text(encoding="utf-8"))["applied"]["results"][1]
    assert (written["reason_code"], written["reason_values"]) == ("outside-perimeter", {"marker": "[[ext:secret-ext]]"})
    text = (small / WIKI).read_text(encoding="utf-8")
    assert "voté à l'unanimité [[ext:a-two-paragraphs]]" in text and "secret-ext" not in text


@pytest.mark.parametrize("steps,error", [
    ((reply('{"operations": [{"op": "NoChange"'),), LLMAnswerError),
    ((reply(_llm_answer(GOOD), finish="length"),), LLMAnswerError),
    ((reply(json.dumps({"operations": [{"op": "Delete", "heading": "", "after_heading": "", "content": ""}]})),),
     LLMAnswerError),
    ((status(500), status(500), status(500)), LLMTransportError),
    ((delay(2.0),), LLMTransportError),
])
def test_a_failed_model_call_writes_nothing(small: Path, llm_server, steps, error) -> None:
    configure_llm(small, llm_server.url, retries=2 if steps[0].status != 200 else 0, timeout=0.5)
    llm_server.script(*steps)
    done = propose(small, "wiki-budget", provider="llm", today=TODAY)
    assert done.path is None and done.operations == 0
    assert len(done.failed) == 1 and done.failed[0].startswith("request 1 (")
    word = "did not answer" if steps[0].delay else "HTTP 500" if steps[0].status != 200 else ""
    assert word in done.failed[0], done.failed
    assert proposals(small) == []
    assert error in (LLMAnswerError, LLMTransportError)


def test_only_applies_the_chosen_operations(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    other = dict(GOOD, content="Le budget a été reconduit [[ext:a-budget]].")
    llm_server.script(reply(_llm_answer(GOOD, other)))
    path = propose(small, "wiki-budget", provider="llm", today=TODAY).path
    results = apply(path, only=[2], today=TODAY)
    assert len(results) == 1 and results[0].accepted
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [r["decision"] for r in record["applied"]["results"]] == ["skipped", "accepted"]


def test_the_site_shows_the_proposal_history(small: Path, tmp_path: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    llm_server.script(reply(_llm_answer(GOOD, OUTSIDE)))
    apply(propose(small, "wiki-budget", provider="llm", today=TODAY).path, today=TODAY)
    build(small, tmp_path / "site")
    page = BeautifulSoup((tmp_path / "site" / "notes" / "wiki-budget.html").read_bytes(), "html.parser")
    operations = page.select("#proposals .operation")
    assert [o["class"][1] for o in operations] == ["decision-accepted", "decision-rejected"]
    assert "par un modèle" in page.select_one("#proposals summary").get_text()
    assert operations[1].select_one("pre.content") is None, "a rejected operation shows its decision, not its text"
    assert "Un mécène finance les foyers" not in page.decode(), "text nobody accepted is not published (issue 56)"
    assert "secret-ext" not in page.decode(), "nor a private source's id"
    assert "est hors du périmètre de l'article" in operations[1].select_one(".reason").get_text()


def test_the_model_sees_the_evidence_structured_by_group(small: Path, llm_server) -> None:
    configure_llm(small, llm_server.url)
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write("selection:\n  threshold: 99\n")  # one group holding both extractions
    llm_server.script(reply(_llm_answer(GOOD)))
    propose(small, "wiki-budget", provider="llm", today=TODAY)
    prompt = llm_server.requests[-1]["body"]["messages"][1]["content"]
    assert "Groupe 1" in prompt
    assert "[[ext:a-budget]] (déjà citée)" in prompt, "cited members by id and first line"
    assert "[[ext:a-two-paragraphs]] : voté à l'unanimité. Deuxième paragraphe" in prompt, "uncited ones in full"
