"""A wiki over a perimeter of 1,700+ extractions (issue 24, item 3): its page, its selection
and its discarded evidence stay under the page budget, every extraction is still enumerated
(over pages of their own), the map stays light and says which group is a chain, and the
budget warning fires when a page does exceed the budget.

The corpus is the bench's generator (one notebook, a wiki over all its categories) plus a
note written here whose passages chain into one group and pair into small ones: generated
prose is all singletons, real minutes are not."""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from bench.corpus import Densities, plain_notes, write_carnet
from generator.pipeline import BuildResult, build
from generator.site.model import audit_page

pytestmark = pytest.mark.slow  # two builds of 400 notes

BUDGET = 60 * 1024  # the default, gzipped
WIKI = "wiki-000"
WORDS = [f"mot{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(80)]


def gzipped(data: bytes) -> int:  # as a server sends the page: gzip, level 6
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return len(packer.compress(data) + packer.flush())


def _chains_and_pairs() -> tuple[str, list[str]]:
    """A note's body and quotes: 40 sentences sliding over a word list (each shares 7 of its
    8 words with the next: one chained group), and 6 pairs of near-twins."""
    chain = [" ".join(WORDS[i:i + 8]).capitalize() + "." for i in range(40)]
    pairs = []
    for k in range(6):
        base = [f"paire{k}", "budget", "salle", "vote", "conseil", f"sujet{k}", "séance"]
        pairs += [" ".join(base).capitalize() + " ici.", " ".join(base).capitalize() + " là."]
    quotes = chain + pairs
    return "\n\n".join(quotes) + "\n", quotes


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildResult]:
    content = tmp_path_factory.mktemp("large") / "content"
    write_carnet(content, plain_notes(400, seed=5, notebooks=1),
                 Densities(extractions=1750, comments=0.5, wikis=1, citations=80, wiki_categories=8), seed=5)
    body, quotes = _chains_and_pairs()
    (content / "notes" / "chaine.md").write_text(
        "---\ntitle: Séance des variantes\ndate: 2024-06-01\nauthors: [Camille Martin]\nnotebooks:\n"
        "  conseil:\n    theme: [Budget]\n---\n" + body, encoding="utf-8")
    (content / "notes" / "chaine.extractions.yaml").write_text(yaml.safe_dump({"extractions": [
        {"id": f"chaine-{n}", "quote": q, "kind": "fait", "author": "Camille Martin"} for n, q in enumerate(quotes)]},
        allow_unicode=True), encoding="utf-8")
    with (content / "carnet.yaml").open("a", encoding="utf-8") as stream:
        # a fixed threshold, as a site may set: the chain of variants stays one group, shown chaining
        stream.write("selection:\n  threshold: 75\n")
    out = content.parent / "site"
    return content, build(content, out, search=False)


def _perimeter_and_cited(content: Path) -> tuple[dict[str, str], set[str]]:
    """Recomputed from the files: every extraction of the notebook's notes (the wiki takes
    every category of the one notebook), with its note, and the ones its body cites."""
    perimeter: dict[str, str] = {}
    for sidecar in (content / "notes").glob("*.extractions.yaml"):
        note = sidecar.name.removesuffix(".extractions.yaml")
        perimeter |= {item["id"]: note for item in yaml.safe_load(sidecar.read_text(encoding="utf-8"))["extractions"]}
    cited = set(re.findall(r"\[\[ext:([^\]]+)\]\]", (content / "notes" / f"{WIKI}.md").read_text(encoding="utf-8")))
    return perimeter, cited


def _audit_pages(site: Path, kind: str) -> list[Path]:
    found = [(audit_page(p.relative_to(site).as_posix()), p) for p in (site / "notes").glob(f"{WIKI}.{kind}*.html")]
    return [p for a, p in sorted((a, p) for a, p in found if a is not None)]


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_bytes(), "html.parser")


def test_the_pages_of_a_1700_extraction_perimeter_stay_under_the_budget(large) -> None:
    content, result = large
    site = content.parent / "site"
    perimeter, _cited = _perimeter_and_cited(content)
    assert len(perimeter) >= 1700
    pages = [site / "notes" / f"{WIKI}.html", *_audit_pages(site, "selection"), *_audit_pages(site, "discarded")]
    sizes = {p.name: gzipped(p.read_bytes()) for p in pages}
    assert len(_audit_pages(site, "discarded")) > 1 and len(_audit_pages(site, "selection")) > 1, sizes
    assert max(sizes.values()) <= BUDGET, sizes
    assert result.summary.over_budget == (), "no page of the site over the default budget"


def test_the_discarded_evidence_is_enumerated_whole_over_its_pages(large) -> None:
    content, _result = large
    site = content.parent / "site"
    perimeter, cited = _perimeter_and_cited(content)
    pages = _audit_pages(site, "discarded")
    shown = [li["data-ext"] for page in pages for li in _soup(page).select(".discarded-item")]
    assert sorted(shown) == sorted(perimeter.keys() - cited), "discarded = perimeter − cited, each item once"
    wiki = _soup(site / "notes" / f"{WIKI}.html")
    assert wiki.select(".discarded-item") == [], "the article's page says where they are, not the items"
    linked = {a["href"] for a in wiki.select("#discarded nav.pages a")}
    assert linked == {p.name for p in pages}
    # every "by note" row lands on an element of the page it names, with that note's items
    targets = {p.name: _soup(p) for p in pages}
    rows = wiki.select(".discarded-notes a")
    assert len(rows) == len({perimeter[i] for i in perimeter.keys() - cited})
    for row in rows:
        name, _, fragment = row["href"].partition("#")
        assert targets[name].find(id=fragment) is not None, row["href"]
    # each page names every page, the current one not as a link
    for page in pages:
        nav = targets[page.name].select_one("nav.pages")
        assert {a["href"] for a in nav.select("a")} == {p.name for p in pages} - {page.name}
        assert nav.select_one("[aria-current=page]") is not None
    debated = [li for page in pages for li in targets[page.name].select("#discarded-debated .discarded-item")]
    assert debated and all("commentaire" in li.get_text() for li in debated)


def test_the_selection_enumerates_every_member_once_and_its_map_is_light(large) -> None:
    content, _result = large
    site = content.parent / "site"
    perimeter, _cited = _perimeter_and_cited(content)
    pages = [_soup(p) for p in _audit_pages(site, "selection")]
    shown = [li["data-ext"] for page in pages for li in page.select(".members > li")]
    assert sorted(shown) == sorted(perimeter), "no group sampled, none represented by a member"
    maps = [page.select_one("svg.selection-map") for page in pages]
    assert maps[0] is not None and all(m is None for m in maps[1:]), "the map once, on the first page"
    svg = maps[0]
    points = [d for path in svg.select("path.map-points, path.map-singletons") for d in path["d"].split("M")[1:]]
    assert len(points) == len(perimeter)
    assert len(str(svg).encode()) < 20 * len(perimeter), "a few bytes a point, not a <circle> with its quote"
    # the chain: one group of the 40 variants, called out on the map and in the list
    chain_ids = {f"chaine-{n}" for n in range(40)}
    chained = [g for page in pages for g in page.select(".group.chaining")]
    first = next(g for g in chained if g.get("id"))
    number = first["id"].removeprefix("group-")
    members = {li["data-ext"] for g in chained if g.select_one("h3").get_text().startswith(f"Groupe {number} ")
               for li in g.select(".members > li")}
    assert chain_ids <= members, "the 40 variants are one group, enumerated whole"
    warning = first.select_one(".warning")
    assert warning is not None
    named = [a.get_text() for a in warning.select("a")]
    assert all(n.startswith("Séance des variantes") and "« " in n for n in named), \
        "the chain's bridges are named by their note and first words, not by raw ids"
    group = svg.select_one(f'g.map-group[data-group="{number}"]')
    assert group.select_one("rect.map-chain") is not None and "chaîne" in group.select_one("text").get_text()
    # the pairs: groups of two, each drawn in its colour with its number; singletons apart, grey
    pairs = [g for g in svg.select("g.map-group") if g.select_one("rect.map-chain") is None]
    assert len(pairs) >= 6 and all(g.select_one("text").get_text() == g["data-group"] for g in pairs)
    singles = svg.select_one("path.map-singletons")["d"].count("M")
    assert singles == sum(len(page.select(".group.singletons .members > li")) for page in pages)


def test_the_budget_warning_fires_on_the_large_perimeter(large, tmp_path: Path) -> None:
    content, _result = large
    copy = tmp_path / "content"
    shutil.copytree(content, copy)
    with (copy / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  page_budget_kb: 12\n")
    out = tmp_path / "site"
    result = build(copy, out, search=False)
    over = dict(result.summary.over_budget)
    # the audit pages split further to fit; the article's own page (its coverage, one row a
    # note) cannot, and is named
    assert f"notes/{WIKI}.html" in over and over[f"notes/{WIKI}.html"] > 12 * 1024
    assert not any(audit_page(path) for path in over), over
    assert len(_audit_pages(out, "discarded")) > len(_audit_pages(content.parent / "site", "discarded"))
    assert any(f"notes/{WIKI}.html" in line for line in result.summary.budget_lines())
