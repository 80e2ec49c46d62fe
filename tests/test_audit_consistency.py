"""One audit, every view (issue 20): for every article of the example site, the claims
and the (claim, source) pairs — their states, reasons and verifiers — are the same in
the page, its markdown mirror, its .json sibling, its JSON-LD, graph.json and the
assessing W3C annotations. Each view is read as a reader or a crawler reads it."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from generator.pipeline import build

CONTENT = Path(__file__).resolve().parents[1] / "content"
Pair = tuple[str, str, str, str, str]  # claim id, source (note#fragment), state, reason, verifier


@pytest.fixture(scope="module", params=["example", "generated"])
def site(request, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example site, and a generated corpus (bench/corpus.py: 60 notes, 300
    extractions with comments, 4 wikis citing 40 of them)."""
    root = tmp_path_factory.mktemp("consistency")
    content = CONTENT
    if request.param == "generated":
        from bench.corpus import Densities, plain_notes, write_carnet
        content = root / "content"
        write_carnet(content, plain_notes(60, seed=3), Densities(extractions=300, comments=1, wikis=4, citations=40),
                     seed=3)
    out = root / "site"
    build(content, out, search=False)
    return out


def _source(url: str | dict[str, Any]) -> str:
    """``…/notes/x.html#ext-y`` or ``…/notes/x.annotations.jsonld#ext-y`` → ``x#ext-y``; a saved
    answer's quote, ``…/notes/x.html?quote=…#e-y`` or its W3C specific resource → ``x#e-y``."""
    if isinstance(url, dict):  # an answer's quote: its element on the page, refined by the words
        url = f"{url['source']}#{url['selector']['value']}"
    match = re.search(r"/notes/([^/#.?]+)\.(?:html|annotations\.jsonld)(?:\?quote=[^#]*)?#((?:ext|com|e)-.+)$", url)
    assert match, url
    return f"{match.group(1)}#{match.group(2)}"


def _articles(site: Path) -> list[str]:
    return sorted(p.stem for p in (site / "notes").glob("*.json")
                  if "claims" in json.loads(p.read_text(encoding="utf-8")))


def _from_json(site: Path, slug: str) -> tuple[set[str], Counter[Pair]]:
    record = json.loads((site / f"notes/{slug}.json").read_text(encoding="utf-8"))
    pairs: Counter[Pair] = Counter(
        (c["id"], _source(p["source_url"]), p["state"], p["reason"], p["verifier"]["method"])
        for c in record["claims"] for p in c["pairs"])
    return {c["id"] for c in record["claims"]}, pairs


def _from_json_ld(site: Path, slug: str) -> tuple[set[str], Counter[Pair]]:
    page = (site / f"notes/{slug}.html").read_text(encoding="utf-8")
    (block,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', page, flags=re.S)
    claims = json.loads(block).get("hasPart", [])
    pairs: Counter[Pair] = Counter(
        (c["identifier"], _source(v["carnet:source"]["@id"]), v["carnet:state"], v["carnet:reason"], v["carnet:verifier"])
        for c in claims for v in c.get("carnet:verification", []))
    return {c["identifier"] for c in claims}, pairs


def _from_annotations(site: Path, slug: str) -> Counter[Pair]:
    collection = json.loads((site / f"notes/{slug}.annotations.jsonld").read_text(encoding="utf-8"))
    pairs: Counter[Pair] = Counter()
    for item in collection.get("first", {}).get("items", []):  # an empty collection has no page
        if item["motivation"] != "assessing":
            continue
        state, reason, method = re.fullmatch(r"([a-z-]+): ([a-z-]+) \((\w+)\)", item["body"]["value"]).groups()
        pairs[(item["target"][0]["selector"]["value"], _source(item["target"][1]), state, reason, method)] += 1
    return pairs


def _from_page(site: Path, slug: str) -> tuple[set[str], Counter[str]]:
    """The claims a reader can land on, and the marks they see, by state."""
    page = (site / f"notes/{slug}.html").read_text(encoding="utf-8")
    claims = set(re.findall(r'<span class="claim-end" id="([^"]+)"', page)) | \
        set(re.findall(r'<sup class="unsourced-claim" id="([^"]+)"', page))
    body = page.split('class="note-body', 1)[1].split('id="audit"', 1)[0]
    marks = Counter(re.search(r"state-([a-z-]+)", classes).group(1)
                    for classes in re.findall(r'<(?:a|span) class="(citation[^"]*state-[^"]*)"', body))
    return claims, marks


def _from_graph(site: Path, slug: str) -> tuple[set[str], Counter[tuple[str, str]]]:
    graph = json.loads((site / "graph.json").read_text(encoding="utf-8"))
    prefix = f"claim:{slug}/"
    claims = {n["id"][len(prefix):] for n in graph["nodes"] if n["type"] == "claim" and n["id"].startswith(prefix)}
    cites: Counter[tuple[str, str]] = Counter(
        (e["source"][len(prefix):], e["state"]) for e in graph["links"]
        if e["type"] == "cites" and e["source"].startswith(prefix))
    return claims, cites


def test_every_view_of_every_article_tells_the_same_audit(site: Path) -> None:
    articles = _articles(site)
    assert len(articles) >= 4 and sum(bool(_from_json(site, slug)[1]) for slug in articles) >= 3
    for slug in articles:
        claims, pairs = _from_json(site, slug)
        ld_claims, ld_pairs = _from_json_ld(site, slug)
        assert (ld_claims, ld_pairs) == (claims, pairs), f"{slug}: JSON-LD"
        assert _from_annotations(site, slug) == pairs, f"{slug}: assessing annotations"
        page_claims, marks = _from_page(site, slug)
        assert page_claims == claims, f"{slug}: page"
        by_state = Counter(state for (_c, _s, state, _r, _v), n in pairs.items() for _ in range(n))
        assert marks == by_state, f"{slug}: the marks on the page"
        graph_claims, cites = _from_graph(site, slug)
        assert graph_claims == claims, f"{slug}: graph.json claims"
        cited = Counter((c, state) for (c, _s, state, _r, _v), n in pairs.items() for _ in range(n))
        assert cites == cited, f"{slug}: graph.json cites"
        mirror = (site / f"notes/{slug}.html.md").read_text(encoding="utf-8")
        assert len(re.findall(r"^  - « ", mirror, flags=re.M)) == sum(pairs.values()), f"{slug}: mirror"


def test_discarded_and_coverage_agree_between_page_json_and_mirror(site: Path) -> None:
    for slug in _articles(site):
        page = (site / f"notes/{slug}.html").read_text(encoding="utf-8")
        mirror = (site / f"notes/{slug}.html.md").read_text(encoding="utf-8")
        panel = page.split('id="discarded"', 1)[1].split("</section>", 1)[0]
        # a debated item links its note in its meta line; the others, grouped by note, from their quote
        discarded_page = set(re.findall(r'(?:<p class="meta">|<blockquote>)<a href="(?:[^"]*/)?([a-z0-9-]+)\.html'
                                        r'#((?:ext|entry|e)-[^"]+)"', panel))
        section = mirror.split("\n## Pièces écartées", 1)[1].split("\n## ", 1)[0]
        discarded_mirror = set(re.findall(r"/notes/([a-z0-9-]+)\.html#((?:ext|entry|e)-\S+) ", section))
        assert discarded_page == discarded_mirror, slug
        coverage_page = re.findall(r"(\d+) éléments sur (\d+) portent une extraction", page.split('id="discarded"', 1)[1])
        coverage_mirror = re.findall(r"(\d+) éléments sur (\d+) portent une extraction", mirror)
        assert sorted(coverage_page) == sorted(coverage_mirror), slug
