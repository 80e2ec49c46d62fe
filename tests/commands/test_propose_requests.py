"""``carnet propose --provider llm`` at real scale (issue 55, item 2): the uncited evidence of
a perimeter of 1,700+ extractions spread over requests that each fit a small model's context,
group by group; every uncited extraction in exactly one request, recomputed from the files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from bench.corpus import Densities, plain_notes, write_carnet
from generator.commands.propose_requests import pack, units
from generator.llm.plan import CHARACTERS_PER_TOKEN
from generator.selection.groups import Edge, Group
from support.cli import carnet_here, configure_llm
from support.llm_server import reply

CONTEXT = 8192
RATIO = CHARACTERS_PER_TOKEN  # the stated characters per token of generator/llm/plan.py


def _group(members: list[str], edges: list[tuple[str, str, float]]) -> Group:
    return Group(members, [Edge(m, v, d) for m, v, d in edges])


def test_a_group_goes_whole_and_a_large_one_is_cut_along_its_tree_into_connected_parts() -> None:
    size = dict.fromkeys("abcdefg", 10)
    # a path a–b–c–d with a long edge in the middle (b–c), and a group e–f–g
    path = _group(list("abcd"), [("b", "a", 5.0), ("c", "b", 40.0), ("d", "c", 6.0)])
    small = _group(list("efg"), [("f", "e", 3.0), ("g", "f", 3.0)])
    made, notes = units([path, small], uncited=list("gabcdef"), size=size.__getitem__, room=30)
    assert [(u.group, u.members, u.part, u.parts) for u in made] == [
        (2, ("e", "f", "g"), 1, 1), (1, ("a", "b"), 1, 2), (1, ("c", "d"), 2, 2)], \
        "in the order of the most debated uncited member (g first); the group that fits goes whole"
    assert len(notes) == 1 and "group 1 (4 extractions" in notes[0] and "2 parts" in notes[0]
    cut = [u for u in made if u.group == 1]
    assert [u.members for u in cut] == [("a", "b"), ("c", "d")], "the long edge is the one cut"
    requests = pack(made, room=30)
    assert [[u.members for u in r] for r in requests] == [[("e", "f", "g")], [("a", "b")], [("c", "d")]]
    assert all(sum(u.characters for u in r) <= 30 for r in requests)


def test_groups_without_uncited_members_are_not_sent() -> None:
    made, _notes = units([_group(["a", "b"], [("b", "a", 1.0)]), _group(["c"], [])], ["c"], lambda _m: 5, 100)
    assert [u.members for u in made] == [("c",)]


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    content = tmp_path_factory.mktemp("propose-large") / "content"
    write_carnet(content, plain_notes(400, seed=11, notebooks=1),
                 Densities(extractions=1750, comments=0.5, wikis=1, citations=60, wiki_categories=8), seed=11)
    return content


def _wiki(content: Path) -> str:
    (path,) = [p for p in (content / "notes").glob("*.md") if "type: wiki" in p.read_text(encoding="utf-8")]
    return path.stem


def _uncited(content: Path, wiki: str) -> set[str]:
    """Perimeter − cited, from the files: every extraction of the notebook's notes (the wiki
    takes every category of its one notebook), less the markers of the wiki's body."""
    perimeter: set[str] = set()
    for sidecar in (content / "notes").glob("*.extractions.yaml"):
        perimeter |= {item["id"] for item in yaml.safe_load(sidecar.read_text(encoding="utf-8"))["extractions"]
                      if not item.get("masked")}
    cited = set(re.findall(r"\[\[ext:([^\]]+)\]\]", (content / "notes" / f"{wiki}.md").read_text(encoding="utf-8")))
    return perimeter - cited


@pytest.mark.slow
def test_propose_spreads_a_large_perimeter_over_requests_that_fit_and_says_its_cost(
        large: Path, llm_server, tmp_path: Path) -> None:
    import shutil

    content = tmp_path / "content"
    shutil.copytree(large, content)
    configure_llm(content, llm_server.url)
    wiki = _wiki(content)
    uncited = _uncited(content, wiki)
    assert len(uncited) >= 1500
    dry = carnet_here("propose", wiki, "--provider", "llm", "--content", content, "--dry-run")
    assert dry.code == 0 and llm_server.requests == [], dry
    head = dry.out.splitlines()[0]
    planned = int(re.search(r": ([\d,]+) request\(s\)", head).group(1).replace(",", ""))
    assert planned > 1 and "does not fit" not in dry.out
    over = carnet_here("propose", wiki, "--provider", "llm", "--content", content, "--max-tokens", "10000")
    assert over.code == 2 and llm_server.requests == [] and "nothing was sent" in over.err, over

    llm_server.respond(lambda body: reply(json.dumps({"operations": [
        {"op": "NoChange", "heading": "", "after_heading": "", "content": ""}]})))
    run = carnet_here("propose", wiki, "--provider", "llm", "--content", content, "--max-tokens", "5000000")
    assert run.code == 0, run
    assert len(llm_server.requests) == planned, "the plan is what was sent"
    for request in llm_server.requests:
        body = request["body"]
        characters = sum(len(m["content"]) for m in body["messages"])
        assert characters / RATIO + body["max_tokens"] <= CONTEXT, "each request fits the model's context"
    (path,) = (content / "proposals" / "sections" / wiki).glob("*.yaml")
    record = yaml.safe_load(path.read_text(encoding="utf-8"))
    sent = [set(r["evidence"]) for r in record["provenance"]["requests"]]
    assert len(sent) == planned and all(r["outcome"] == "answered" for r in record["provenance"]["requests"])
    assert set().union(*sent) == uncited, "every uncited extraction is sent"
    assert sum(len(s) for s in sent) == len(uncited), "once"
    assert {o["request"] for o in record["operations"]} == set(range(1, planned + 1)), "each operation says its request"
    for request, evidence in zip(llm_server.requests, sent, strict=True):
        prompt = request["body"]["messages"][1]["content"]
        assert all(f"[[ext:{e}]]" in prompt for e in evidence), "a request holds the evidence it records"


@pytest.mark.slow
def test_propose_stops_at_its_budget_and_records_what_was_not_sent(large: Path, llm_server, tmp_path: Path) -> None:
    import shutil

    content = tmp_path / "content"
    shutil.copytree(large, content)
    configure_llm(content, llm_server.url)
    wiki = _wiki(content)
    llm_server.respond(lambda body: reply(json.dumps({"operations": [
        {"op": "NoChange", "heading": "", "after_heading": "", "content": ""}]}),
        usage={"prompt_tokens": 900_000, "completion_tokens": 10, "total_tokens": 900_010}))
    run = carnet_here("propose", wiki, "--provider", "llm", "--content", content, "--max-tokens", "1000000")
    assert run.code == 3 and len(llm_server.requests) == 1, run
    (path,) = (content / "proposals" / "sections" / wiki).glob("*.yaml")
    outcomes = [r["outcome"] for r in yaml.safe_load(path.read_text(encoding="utf-8"))["provenance"]["requests"]]
    assert outcomes[0] == "answered" and len(outcomes) > 2
    assert all(o == "not sent: the run's budget was spent" for o in outcomes[1:])
    assert "would pass the run's budget of 1,000,000: not sent" in run.err, run
