"""The pure core of ``carnet mcp`` (generator/agents/tools.py): queries over the published
model, bounded, paged, refusing hostile input with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.agents import tools
from generator.agents.server import Loaded, load
from generator.agents.tools import AgentError, HitKind
from generator.pipeline import check_content
from support.corpus import copy_fixture

CONTENT = Path(__file__).resolve().parents[2] / "content"


@pytest.fixture(scope="module")
def small_loaded(tmp_path_factory: pytest.TempPathFactory) -> Loaded:
    return load(copy_fixture("small", tmp_path_factory.mktemp("mcp-small")))


@pytest.fixture(scope="module")
def example_loaded() -> Loaded:
    return load(CONTENT)


def test_a_passage_quote_is_the_notes_own_text_over_its_portions(example_loaded: Loaded) -> None:
    catalogue = example_loaded.catalogue
    analysis = check_content(CONTENT)  # anchored again, apart from the server's model
    checked = 0
    for ext_id, (note, _extraction) in sorted(catalogue.site.extractions.items()):
        found = tools.passage(catalogue, ext_id)
        anchor = analysis.anchored[note.slug].anchors[ext_id]
        elements = analysis.anchored[note.slug].document.elements
        if not anchor.status.is_live:
            assert found["extraction"]["quote"] is None and found["extraction"]["anchor"]["state"] == "detached"
            continue
        expected = "\n\n".join(elements[p.element].text[p.start:p.end] for p in anchor.portions)
        assert found["extraction"]["quote"]["text"] == expected, ext_id
        assert found["note"]["slug"] == note.slug and found["extraction"]["anchor"]["state"] == anchor.status.value
        checked += 1
    assert checked > 50


def test_a_comment_id_gives_its_extraction_with_the_comment_named(small_loaded: Loaded) -> None:
    found = tools.passage(small_loaded.catalogue, "ca-2")
    assert found["kind"] == "comment" and found["extraction"]["id"] == "a-budget"
    assert found["comment"]["stance"] == "disagree" and found["comment"]["author"] == "Mme E."
    withdrawn = tools.passage(small_loaded.catalogue, "ca-3")["comment"]
    assert withdrawn["text"] is None and withdrawn["withdrawn"] == {"date": "2024-10-06", "reason": "propos personnels"}


def test_search_finds_each_kind_and_filters(small_loaded: Loaded) -> None:
    catalogue = small_loaded.catalogue
    everything = tools.search(catalogue, "budget")
    assert {hit["kind"] for hit in everything["hits"]} == {"passage", "extraction", "claim"}
    for kind in HitKind:
        only = tools.search(catalogue, "budget", kind=kind)
        assert only["hits"] and {hit["kind"] for hit in only["hits"]} == {str(kind)}
    assert {h["note"]["slug"] for h in tools.search(catalogue, "budget", notebook="veille")["hits"]} == {"conseil-a"}
    dated = tools.search(catalogue, "budget", date_from="2025-01-01", date_to="2025-12-31")["hits"]
    assert dated and all("2025-01-01" <= (h["note"]["date"] or "") <= "2025-12-31" for h in dated)
    themed = tools.search(catalogue, "budget", notebook="conseil", categories=["annee=2024"])["hits"]
    assert themed and {h["note"]["slug"] for h in themed} == {"conseil-a"}


def test_search_pages_add_up_to_the_whole_list(example_loaded: Loaded) -> None:
    catalogue = example_loaded.catalogue
    whole = tools.search(catalogue, "budget foyer", limit=tools.MAX_LIMIT)
    assert whole["total"] > 12
    pages, offset = [], 0
    while offset is not None:
        page = tools.search(catalogue, "budget foyer", offset=offset, limit=5)
        assert len(page["hits"]) <= 5
        pages += page["hits"]
        offset = page["next_offset"]
    assert pages[:tools.MAX_LIMIT] == whole["hits"] and len(pages) == whole["total"]


def test_an_article_gives_its_pairs_tally_discarded_and_coverage(example_loaded: Loaded) -> None:
    catalogue = example_loaded.catalogue
    for slug, audit in catalogue.site.articles.items():
        found = tools.article(catalogue, slug, limit=tools.MAX_LIMIT)
        tally = catalogue.site.tallies[slug]
        assert found["tally"]["states"] == {str(k): v for k, v in tally.states.items()}
        assert found["claims"]["total"] == len(audit.claims)
        states = [p["state"] for c in found["claims"]["items"] for p in c["pairs"]]
        shown = [str(a.state.state) for a in catalogue.site.assessments[slug]][:len(states)]
        assert sorted(states) == sorted(shown) or found["claims"]["next_offset"] is not None
        if audit.discarded is None:
            assert found["discarded"] is None and "perimeter unknown" in found["discarded_refusal"]
        else:
            assert found["discarded"]["total"] == len(audit.discarded)


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: tools.search(c, "x" * (tools.MAX_INPUT_CHARS + 1)), "give at most"),
    (lambda c: tools.search(c, "budget\x00"), "control character (U+0000"),
    (lambda c: tools.search(c, "bud\x1bget"), "control character (U+001B"),
    (lambda c: tools.search(c, "   "), "empty"),
    (lambda c: tools.search(c, "budget", offset=-1), "offset"),
    (lambda c: tools.search(c, "budget", limit=tools.MAX_LIMIT + 1), "limit"),
    (lambda c: tools.search(c, "budget", date_from="hier"), "YYYY-MM-DD"),
    (lambda c: tools.search(c, "budget", categories=["theme"]), "AXIS=VALUE"),
    (lambda c: tools.search(c, "budget", categories=["theme=Nope"]), "no public notebook"),
    (lambda c: tools.passage(c, "a-budget\n"), "control character"),
    (lambda c: tools.passage(c, "nope" * 100), "give at most"),
    (lambda c: tools.article(c, "conseil-a"), "unknown article"),
    (lambda c: tools.context_request("budget", 10**9), "budget"),
    (lambda c: tools.context_request("\x07", 1000), "control character"),
])
def test_hostile_input_is_refused_with_what_to_do(small_loaded: Loaded, call, message: str) -> None:
    with pytest.raises(AgentError, match=None) as refused:
        call(small_loaded.catalogue)
    assert message in str(refused.value)


def test_a_private_or_masked_id_is_answered_as_an_unknown_one(small_loaded: Loaded) -> None:
    catalogue = small_loaded.catalogue
    for private in ("secret-ext", "secret-com", "a-masked", "ca-masked", "never-was"):
        with pytest.raises(AgentError) as refused:
            tools.passage(catalogue, private)
        assert str(refused.value) == tools.UNKNOWN_PASSAGE
    for private in ("secret-a", "never-was"):
        with pytest.raises(AgentError) as refused:
            tools.article(catalogue, private)
        assert str(refused.value) == tools.UNKNOWN_ARTICLE
    messages = set()
    for notebook in ("secret", "never-was"):
        with pytest.raises(AgentError) as refused:
            tools.search(catalogue, "budget", notebook=notebook)
        messages.add(str(refused.value))
    assert len(messages) == 1 and "secret" not in messages.pop()


def test_a_masked_passage_is_never_a_hit(small_loaded: Loaded) -> None:
    found = tools.search(small_loaded.catalogue, "MASKEDPASSAGE reste dans le texte", limit=tools.MAX_LIMIT)
    assert all("MASKEDPASSAGE" not in hit["snippet"] for hit in found["hits"])


def test_a_long_text_is_cut_and_says_so() -> None:
    cut = tools._cut("a" * (tools.MAX_TEXT_CHARS + 10))
    assert cut == {"text": "a" * tools.MAX_TEXT_CHARS, "truncated": True, "length": tools.MAX_TEXT_CHARS + 10}


def test_the_command_names_a_missing_content_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from generator.cli import main

    assert main(["mcp", str(tmp_path / "nowhere")]) == 2
    captured = capsys.readouterr()
    assert "content directory not found" in captured.err and "the first argument" in captured.err
    assert captured.out == ""
