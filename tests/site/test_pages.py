"""Page contents, read as a reader would: parse the HTML and check what it shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.corpus.load import load_corpus
from generator.pipeline import build
from support.corpus import replace, site_files
from support.site_checks import broken_internal_links, highlight_mismatches


def soup(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_bytes(), "html.parser")


def test_home_lists_bases_and_their_notebooks(small_site: Path) -> None:
    page = soup(small_site, "index.html")
    assert page.html["lang"] == "fr"
    bases = [h.get_text(strip=True) for h in page.select("section.base h2")]
    assert bases == ["École", "Réseau", "Autres carnets"]
    assert "Club lecture" in page.select("section.base")[-1].get_text()


def test_notebook_page_orders_pinned_then_manual_then_newest(small_site: Path) -> None:
    page = soup(small_site, "notebooks/conseil.html")
    notes = [a.get_text() for a in page.select("#tab-notes .note-link")]
    # pinned: conseil-b; order: conseil-a; then by date, newest first: C (2025-03), D (2024-12)
    assert notes == ["Séance B", "Séance A", "Séance C", "Séance D"]
    articles = [a.get_text() for a in page.select("#tab-wikis .note-link, #tab-syntheses .note-link")]
    assert articles == ["Le budget (wiki)", "Synthèse du budget 2025"]


def test_notebook_facets_count_notes_per_category(small: Path, small_site: Path) -> None:
    page = soup(small_site, "notebooks/conseil.html")
    corpus, _ = load_corpus(small)
    members = corpus.notes_of("conseil")
    for facet in page.select(".facet"):
        axis = facet["data-axis"]
        for item in facet.select("li"):
            name = item.a.get_text()
            expected = sum(name in n.membership("conseil").categories.get(axis, ()) for n in members)
            assert int(item.select_one(".count").get_text()) == expected, (axis, name)


def test_category_page_lists_the_notes_having_it_in_that_notebook(small_site: Path) -> None:
    budget = soup(small_site, "notebooks/conseil/theme/budget.html")
    # the notebook's order: manual order (A), then newest first (C), undated last (the wiki)
    assert [a.get_text() for a in budget.select(".note-link")] == \
        ["Séance A", "Synthèse du budget 2025", "Séance C", "Le budget (wiki)"]
    subvention = soup(small_site, "notebooks/veille/theme/subvention.html")
    assert [a.get_text() for a in subvention.select(".note-link")] == ["Séance A"]
    mecenat = soup(small_site, "notebooks/veille/theme/mecenat.html")
    assert [a.get_text() for a in mecenat.select(".note-link")] == ["Appel régional"]


def test_same_note_carries_different_categories_in_two_notebooks(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    block = page.select_one(".memberships")
    assert block.h2.get_text() == "Dans 2 carnets"
    by_notebook = {li["data-context"]: [a.get_text() for a in li.select("dd a")] for li in block.select("li")}
    assert by_notebook == {"conseil": ["Budget", "2024"], "veille": ["Subvention"]}


def test_breadcrumb_per_notebook_with_chevron_to_the_others(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    crumbs = page.select("nav.breadcrumb[data-context]")
    assert [c["data-context"] for c in crumbs] == ["conseil", "veille"]
    assert not crumbs[0].has_attr("hidden") and crumbs[1].has_attr("hidden")
    conseil = crumbs[0]
    assert [a.get_text() for a in conseil.find_all("a", recursive=False)] == ["Accueil", "École", "Conseil des élèves"]
    switch = conseil.select(".context-switch li a")
    assert [a["href"] for a in switch] == ["conseil-a.html?nb=veille"]
    single = soup(small_site, "notes/conseil-c.html").select("nav.breadcrumb")
    assert len(single) == 1 and single[0].select(".context-switch") == []


def test_each_extraction_is_highlighted_exactly(small: Path, small_site: Path) -> None:
    assert highlight_mismatches(small, small_site) == []


def test_extraction_spanning_two_paragraphs_has_one_portion_in_each(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    holders = {m.find_parent(class_="element")["id"] for m in page.select('mark[data-ext~="a-two-paragraphs"]')}
    assert len(holders) == 2


def test_extraction_crossing_emphasis_stays_well_nested(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    marks = page.select('mark[data-ext~="a-budget"]')
    assert any(m.find_parent("em") for m in marks), "the part inside *emphasis* is marked inside <em>"


def test_detached_extraction_is_listed_not_placed(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-a.extractions.yaml", "quote: Le budget s'élève à quatre mille euros",
            "quote: Le budget s'élève à cinq mille euros")
    build(small, tmp_path / "site")
    page = soup(tmp_path / "site", "notes/conseil-a.html")
    assert page.select('mark[data-ext~="a-budget"]') == []
    entry = page.select_one("#entry-a-budget")
    assert "detached" in entry["class"] and "ancre détachée" in entry.get_text()


def test_comments_show_stance_and_disagreement_count(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    entry = page.select_one("#entry-a-budget")
    assert entry.select_one(".badge.disagreement").get_text() == "1 désaccord"
    assert entry.select_one("#com-ca-2.stance-disagree") is not None


def test_links_between_notes_and_backlinks(small_site: Path) -> None:
    page = soup(small_site, "notes/conseil-a.html")
    body_links = {a.get_text(): a["href"] for a in page.select(".note-body a")}
    assert body_links["la séance B"] == "conseil-b.html"
    assert body_links["tableau"] == "../assets/public.csv"
    backlinks = [a.get_text() for a in page.select(".backlinks a")]
    # public backlinks only (secret-a links here too), by slug: conseil-b, synthese-2025, veille-a, wiki-budget
    assert backlinks == ["Séance B", "Synthèse du budget 2025", "Appel régional", "Le budget (wiki)"]
    wiki = soup(small_site, "notes/wiki-budget.html")
    assert wiki.select_one(".note-body a.citation")["href"] == "conseil-a.html#ext-a-budget"


def test_every_internal_link_resolves(small_site: Path) -> None:
    assert broken_internal_links(small_site) == []


@pytest.mark.parametrize("body,forbidden", [
    ("<script>alert(1)</script>", "<script>alert"),
    ('<img src=x onerror="alert(1)">', "<img src=x"),
    ("[clic](javascript:alert(1))", 'href="javascript'),
    ("[clic](JaVaScRiPt:alert(1))", 'href="JaVaScRiPt'),
    ("[clic](data:text/html;base64,PHNjcmlwdD4=)", 'href="data:'),
])
def test_raw_html_and_unsafe_links_never_reach_the_page(small: Path, tmp_path: Path, body: str, forbidden: str) -> None:
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", f"Le budget est reconduit. {body}")
    build(small, tmp_path / "site")
    page = (tmp_path / "site" / "notes" / "conseil-c.html").read_text(encoding="utf-8")
    assert forbidden not in page


def test_canonical_url_and_base_url_override(small: Path, tmp_path: Path) -> None:
    build(small, tmp_path / "a")
    assert soup(tmp_path / "a", "notes/conseil-c.html").select_one("link[rel=canonical]")["href"] == \
        "https://test.example.org/site/notes/conseil-c.html"
    build(small, tmp_path / "b", base_url="https://autre.example.net/wiki")
    assert soup(tmp_path / "b", "index.html").select_one("link[rel=canonical]")["href"] == \
        "https://autre.example.net/wiki/"


def test_static_assets_are_fingerprinted_and_scripts_external(small_site: Path) -> None:
    files = site_files(small_site)
    statics = [p for p in files if p.startswith("static/")]
    assert len(statics) == 4 and all(len(p.split(".")) == 3 for p in statics)
    for path, data in files.items():
        if path.endswith(".html"):
            page = BeautifulSoup(data, "html.parser")
            executable = [s for s in page.select("script") if s.get("type") != "application/ld+json"]
            assert all(s.get("src") for s in executable), f"inline script in {path}"


def test_citation_of_a_detached_extraction_lands_on_its_entry(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-a.extractions.yaml", "quote: Le budget s'élève à quatre mille euros",
            "quote: Le budget s'élève à cinq mille euros")
    build(small, tmp_path / "site")
    wiki = soup(tmp_path / "site", "notes/wiki-budget.html")
    href = wiki.select_one(".note-body a.citation")["href"]
    assert href == "conseil-a.html#entry-a-budget"
    assert soup(tmp_path / "site", "notes/conseil-a.html").select_one("#entry-a-budget") is not None


def test_ui_strings_come_from_one_place_for_each_language() -> None:
    import yaml

    from generator.site.theme import DEFAULT_THEME
    folder = DEFAULT_THEME / "strings"
    languages = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in folder.glob("*.yaml")}
    assert "fr" in languages
    keys = {name: set(strings) for name, strings in languages.items()}
    assert all(k == keys["fr"] for k in keys.values()), "every language file has the same keys"
    templates = "".join(p.read_text(encoding="utf-8") for p in (DEFAULT_THEME / "templates").glob("*.html"))
    import re
    used = set(re.findall(r"\btr\(\s*[\"']([a-z_]+)[\"']\s*[,)]", templates))
    assert used <= keys["fr"], used - keys["fr"]
    # and every key the code asks for by name (pages, mirrors, llms files, `carnet context`…)
    import generator
    package = Path(generator.__file__).parent
    code = "".join(p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py")))
    asked = set(re.findall(r"\btr\(\s*[\"']([a-z_]+)[\"']\s*[,)]", code))
    assert len(asked) > 50 and asked <= keys["fr"], asked - keys["fr"]


def test_long_note_gets_a_table_of_contents(small: Path, tmp_path: Path) -> None:
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.",
            "## Contexte\n\nLe budget est reconduit.\n\n## Débat\n\nTexte.\n\n### Détail\n\nPlus.\n\n## Vote\n\nFin.")
    build(small, tmp_path / "site")
    page = soup(tmp_path / "site", "notes/conseil-c.html")
    toc = [(li["class"][0], a["href"]) for li in page.select(".toc li") for a in li.select("a")]
    assert toc == [("toc-2", "#contexte"), ("toc-2", "#debat"), ("toc-3", "#detail"), ("toc-2", "#vote")]
    for _cls, href in toc:
        assert page.select_one(f'[id="{href[1:]}"]') is not None
    assert soup(tmp_path / "site", "notes/conseil-b.html").select(".toc") == []


def test_a_rejection_reason_is_worded_in_the_sites_language(tmp_path: Path) -> None:
    """Issue 24: English reasons in French panels. With its code, the reason is French;
    a record without one (an older 'carnet apply') shows its English text, marked lang="en"."""
    import shutil
    content = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parents[2] / "content", content)
    build(content, tmp_path / "site", search=False)
    page = soup(tmp_path / "site", "notes/cvl-wiki-budget.html")
    reasons = [(p.get("lang"), p.get_text()) for p in page.select(".operation .reason")]
    # 'Séances' is no heading of the article: a heading nobody accepted is not published (issue 56)
    assert (None, "Section « … » (après laquelle insérer) introuvable ; pas de repli à la fin.") in reasons
    assert all("not found" not in text and "outside" not in text for _lang, text in reasons)
    record = content / "proposals" / "sections" / "cvl-wiki-budget" / "2025-11-22-relecture.yaml"
    record.write_text("\n".join(line for line in record.read_text(encoding="utf-8").split("\n")
                                if "reason_code" not in line and "reason_values" not in line), encoding="utf-8")
    build(content, tmp_path / "site", search=False)
    page = soup(tmp_path / "site", "notes/cvl-wiki-budget.html")
    reasons = [(p.get("lang"), p.get_text()) for p in page.select(".operation .reason")]
    assert ("en", "after_heading '…' not found (no fallback to the end)") in reasons
