"""Evidence selection: singletons kept, order-independent, edges real, chaining warned and
persistent, groups enumerated, oppositions over real HTTP (chunked too), debate order."""

from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

from generator.llm import LLMClient, LLMSettings
from generator.llm.prompts import Prompt
from generator.pipeline import check_content
from generator.selection.embeddings import tfidf
from generator.selection.groups import group, pair_distance
from generator.selection.oppositions import find_oppositions, requests
from generator.selection.select import select
from generator.selection.threshold import ThresholdRule
from support.llm_server import reply

# two topics and a text that bridges them (the spending threshold *and* the statutes)
TEXTS = {
    "seuil-1": "Toute dépense de plus de 500 euros est votée en séance par le conseil",
    "seuil-2": "La dépense de plus de 500 euros doit être votée en séance",
    "seuil-3": "Les dépenses de plus de 500 euros sont votées par le conseil en séance",
    "pont": "Les statuts prévoient que toute dépense de plus de 500 euros est votée en séance",
    "statuts-1": "Les statuts du conseil de vie lycéenne sont approuvés par le conseil d'administration",
    "statuts-2": "La révision des statuts du conseil est approuvée par le conseil d'administration",
    "statuts-3": "Les statuts révisés du conseil de vie lycéenne prévoient un quorum",
    "bail": "Le bail de la salle repose sur un accord verbal avec le propriétaire actuel",
}


def grouped(threshold: float, order: list[str] | None = None):
    ids = order or list(TEXTS)
    return group(ids, tfidf([TEXTS[i] for i in ids]), threshold)


def test_singletons_are_kept_and_every_member_is_enumerated() -> None:
    groups = grouped(60)
    assert sorted(m for g in groups for m in g.members) == sorted(TEXTS)
    assert ["bail"] in [g.members for g in groups]


def test_identical_output_across_runs_and_input_orders() -> None:
    reference = [(g.members, g.edges, g.diameter, g.beyond_share, g.bridges) for g in grouped(70)]
    for seed in range(5):
        order = list(TEXTS)
        random.Random(seed).shuffle(order)
        assert [(g.members, g.edges, g.diameter, g.beyond_share, g.bridges) for g in grouped(70, order)] == reference


def test_explanation_edges_are_real_edges_under_the_threshold() -> None:
    ids = sorted(TEXTS)
    vectors = tfidf([TEXTS[i] for i in ids])
    for threshold in (50, 65, 80):
        for g in group(ids, vectors, threshold):
            assert len(g.edges) == len(g.members) - 1
            for edge in g.edges:
                assert edge.distance <= threshold
                assert edge.distance == pair_distance(vectors, ids.index(edge.member), ids.index(edge.via))


def _bridged(threshold: float):
    return next((g for g in grouped(threshold) if "seuil-1" in g.members and "statuts-1" in g.members), None)


def test_the_chaining_warning_names_the_bridge_and_persists_while_the_clusters_stay_joined() -> None:
    joined = [t for t in range(40, 100) if _bridged(t) is not None]
    assert joined, "the two topics merge at some threshold"
    first = joined[0]
    persisting = []
    for threshold in range(first, first + 15):
        g = _bridged(threshold)
        if g is None:
            continue
        # the clusters are joined only through a chain while some member pairs stay beyond the threshold
        beyond = [1 for a, b in combinations(g.members, 2) if (a.startswith("seuil") and b.startswith("statuts"))
                  or (a.startswith("statuts") and b.startswith("seuil"))]
        assert beyond
        persisting.append((threshold, g.chaining, g.bridges))
    assert persisting and all(chaining for _t, chaining, _b in persisting)
    assert "pont" in persisting[0][2]


def test_the_example_keeps_the_lease_singleton_and_first_by_debate() -> None:
    analysis = check_content(Path(__file__).resolve().parents[2] / "content")
    ids = analysis.articles["cvl-wiki-budget"].perimeter_extractions
    selection = select(analysis.corpus, ids, 75.0)  # the former fixed default: it chains here
    assert selection.order[0] == "cvl-1114-bail-verbal"
    assert selection.groups[0].members == ["cvl-1114-bail-verbal"]
    assert any(g.chaining and g.bridges for g in selection.groups), "a chaining warning is shown at 75"
    automatic = select(analysis.corpus, ids)
    assert automatic.rule is ThresholdRule.AUTOMATIC and automatic.threshold < 75
    assert not any(g.chaining for g in automatic.groups), "the automatic threshold is under the chaining line"
    assert any(len(g.members) >= 2 for g in automatic.groups), "and it still groups"
    erased, lost = selection.central_erased
    assert erased == sum(len(g.members) - 1 for g in selection.groups if len(g.members) > 1) and lost > 0


def test_the_selection_page_enumerates_every_member(example_site: Path) -> None:
    page = BeautifulSoup((example_site / "notes" / "cvl-wiki-budget.selection.html").read_bytes(), "html.parser")
    analysis = check_content(Path(__file__).resolve().parents[2] / "content")
    ids = set(analysis.articles["cvl-wiki-budget"].perimeter_extractions)
    shown = [li["data-ext"] for li in page.select(".members > li")]
    assert sorted(shown) == sorted(ids), "no group is represented by one member"
    assert page.select_one(".group.chaining .warning") is None, "the automatic threshold leaves no chain"
    rule = page.select_one(".threshold-rule").get_text()
    assert "règle fixe" in rule and "un tiers" in rule, "the page states the rule that chose its threshold"
    drawn = [d for path in page.select("svg.selection-map path.map-points, svg.selection-map path.map-singletons")
             for d in path["d"].split("M")[1:]]
    assert len(drawn) == len(ids), "every extraction is a point of the map"
    assert "effacerait" in page.select_one(".limit").get_text()
    assert "par une personne" in page.select_one(".oppositions").get_text()
    foyer = BeautifulSoup((example_site / "notes" / "cvl-wiki-foyer.selection.html").read_bytes(), "html.parser")
    assert "pas été faite" in foyer.select_one(".oppositions .refusal").get_text()


PROMPT = Prompt("oppositions", "{% for e in extractions %}[{{ e.id }}] {{ e.quote }}\n{% endfor %}")


def test_oppositions_pass_over_http(llm_server) -> None:
    items = [(k, v) for k, v in sorted(TEXTS.items())]
    llm_server.script(reply(json.dumps({"oppositions": [{"a": "seuil-1", "b": "bail", "question": "Q ?"},
                                                        {"a": "inconnu", "b": "bail", "question": "ignorée"}]})))
    client = LLMClient(LLMSettings(llm_server.url, "juge"))
    passed = find_oppositions(client, PROMPT, items)
    found, provenance, sent = passed.found, passed.provenance, passed.requests
    assert sent == 1 and [(o.a, o.b) for o in found] == [("bail", "seuil-1")]
    assert provenance["method"] == "llm" and provenance["usage"]["total_tokens"] == 160


def test_a_perimeter_too_large_for_one_request_covers_every_pair_of_chunks(llm_server) -> None:
    items = [(f"x{i:02d}", "mot " * 30) for i in range(12)]
    batches = requests(items, budget=600)
    assert len(batches) > 1
    seen = {frozenset((a, b)) for batch in batches for (a, _q1), (b, _q2) in combinations(batch, 2)}
    assert seen == {frozenset((a, b)) for (a, _q1), (b, _q2) in combinations(items, 2)}, "every pair is seen"
    llm_server.script(*[reply(json.dumps({"oppositions": []})) for _ in batches])
    passed = find_oppositions(LLMClient(LLMSettings(llm_server.url, "juge")), PROMPT, items, 600)
    provenance, sent = passed.provenance, passed.requests
    assert sent == len(batches) == len(llm_server.requests) and provenance["requests"] == sent


def test_endpoint_embeddings_are_cached_per_model_and_never_mixed(small: Path, llm_server) -> None:
    import io

    from generator.commands.select import run_select
    from generator.selection.vectors import cache_path, load_cache
    with (small / "carnet.yaml").open("a", encoding="utf-8") as f:
        f.write(f"llm:\n  base_url: {llm_server.url}\n  model: m\nembeddings:\n  provider: endpoint\n  model: emb-a\n")
    out = io.StringIO()
    run_select(small, "wiki-budget", None, False, out)
    assert "TF-IDF used instead" in out.getvalue(), "an empty cache is announced, not silently filled"
    llm_server.script(reply(""))
    out = io.StringIO()
    run_select(small, "wiki-budget", None, False, out, reindex_vectors=True)
    assert "re-indexing 2 text(s) with the embeddings model 'emb-a'" in out.getvalue()
    assert len(load_cache(small, "emb-a")) == 2 and llm_server.requests[-1]["body"]["model"] == "emb-a"
    text = (small / "carnet.yaml").read_text(encoding="utf-8").replace("model: emb-a", "model: emb-b")
    (small / "carnet.yaml").write_text(text, encoding="utf-8")
    out = io.StringIO()
    run_select(small, "wiki-budget", None, False, out)
    assert "TF-IDF used instead" in out.getvalue(), "a new model needs its own re-index"
    assert cache_path(small, "emb-a").exists() and not cache_path(small, "emb-b").exists()


def test_a_pass_adds_its_pairs_beside_a_persons_and_each_says_how_it_was_found(tmp_path: Path, llm_server) -> None:
    """`select --oppositions` over a wiki whose oppositions a person recorded: the model's
    new pair is appended with its own provenance, the person's are kept byte for byte,
    a pair already recorded is not added twice, and the page marks each pair's method."""
    import shutil

    from generator.cli import main
    from generator.pipeline import build
    from generator.yamledit import records

    content = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parents[2] / "content", content)
    with (content / "carnet.yaml").open("a", encoding="utf-8") as settings:
        settings.write(f"llm:\n  base_url: {llm_server.url}\n  model: juge\n  max_retries: 0\n")
    path = content / "oppositions" / "cvl-wiki-budget.yaml"
    before = path.read_text(encoding="utf-8")
    person = [(o["a"], o["b"]) for o in yaml.safe_load(before)["oppositions"]]
    ids = sorted(check_content(content).articles["cvl-wiki-budget"].perimeter_extractions)
    new = next((a, b) for a, b in combinations(ids, 2) if (a, b) not in person and (b, a) not in person)
    llm_server.script(reply(json.dumps({"oppositions": [
        {"a": new[0], "b": new[1], "question": "Faut-il le faire ?"},
        {"a": person[0][1], "b": person[0][0], "question": "Déjà là ?"}]})))
    assert main(["select", "cvl-wiki-budget", "--oppositions", "--content", str(content)]) == 0
    after = path.read_text(encoding="utf-8")
    assert all(records(after)[key] == text for key, text in records(before).items()), "the person's pairs stay"
    added = yaml.safe_load(after)["oppositions"][len(person):]
    assert [(o["a"], o["b"], o["provenance"]["method"], o["provenance"]["model"]) for o in added] == \
        [(*new, "llm", "juge")], "only the new pair, marked as the model's"
    build(content, tmp_path / "site", search=False)
    page = BeautifulSoup((tmp_path / "site" / "notes" / "cvl-wiki-budget.selection.html").read_bytes(), "html.parser")
    items = page.select(".oppositions > ul > li")
    assert len(items) == len(person) + 1
    marked = [li for li in items if "par un modèle" in li.get_text()]
    assert len(marked) == 1 and "Faut-il le faire ?" in marked[0].get_text()
