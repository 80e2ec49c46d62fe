"""Issue 57, items 4 and 6, in the built pages: each extraction's anchoring state wherever it
is quoted, method names and counts in the site's words, a licence sentence that reads right
whatever the licence is called, status boxes that say what they mean, the discarded notes by
date, a "not in the corpus" answer that a search finds, and no gap where a citation was."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.pipeline import build
from generator.site.pages import _by_note, method_label
from generator.site.theme import Theme
from support.corpus import replace

CONTENT = Path(__file__).resolve().parents[2] / "content"
RELOCATED, DETACHED = "cvl-0515-livraison-date", "cvl-0515-fermeture-epreuves"
LICENCE = "Minutes by the board; republished for review"


def soup(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def english_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example in English, under a licence the content names in words of its own."""
    root = tmp_path_factory.mktemp("english")
    content = root / "content"
    shutil.copytree(CONTENT, content)
    replace(content, "carnet.yaml", "language: fr", "language: en")
    replace(content, "carnet.yaml", "name: CC BY-SA 4.0", f"name: {LICENCE}")
    build(content, root / "site", strict=True)
    return root / "site"


def _states(page: BeautifulSoup, items: str) -> dict[str, str]:
    shown = {}
    for item in page.select(items):
        mark = item.select_one(".relocated, .detached")
        if mark is not None:
            shown[item["data-ext"]] = mark.get_text(" ", strip=True)
    return shown


@pytest.mark.parametrize("path, items", [("notes/cvl-wiki-budget.html", ".discarded-item"),
                                         ("notes/cvl-wiki-budget.selection.html", ".members > li")])
def test_lists_quoting_an_extraction_show_its_anchoring_state(example_site: Path, path: str, items: str) -> None:
    states = _states(soup(example_site, path), items)
    note = soup(example_site, "notes/cvl-2025-05-15.html")
    # the note page's own words: relocated with its diff, detached with its reason
    relocated = note.select_one(f"#entry-{RELOCATED} .relocated").get_text(" ", strip=True)
    assert states[RELOCATED] == relocated and "ancre déplacée" in relocated and "[-6-] {+5+}" in relocated
    assert states[DETACHED].startswith("ancre détachée") and "plus dans la note" in states[DETACHED]
    anchored = [ext for ext in states if ext not in (RELOCATED, DETACHED)]
    assert anchored == [], "an extraction anchored where it was quoted carries no mark"


def test_method_names_are_the_themes_words_in_both_languages(example_site: Path, english_site: Path) -> None:
    assert method_label(Theme.load(None, "fr"), "human") == "une personne"
    assert method_label(Theme.load(None, "en"), "llm") == "a model"
    assert method_label(Theme.load(None, "en"), "an unknown one") == "an unknown one"
    for site, raw in ((example_site, "méthode "), (english_site, "method ")):
        for page in sorted(site.rglob("*.html")):
            text = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").get_text(" ")
            for method in ("human", "llm", "scripted"):
                assert raw + method not in text, (page, method)
    opposition = soup(example_site, "notes/cvl-wiki-budget.selection.html").select_one(".oppositions").get_text(" ")
    assert "par une personne" in opposition or "par un modèle" in opposition or "par un script" in opposition


def test_counts_agree_with_zero_in_each_language(example_site: Path, english_site: Path) -> None:
    """0 is singular in French, plural in English: the build words each form for the script."""
    assert Theme.load(None, "en").tr("search_results", n=0) == "0 results"
    assert Theme.load(None, "fr").tr("search_results", n=0) == "0 résultat"
    for site, results, shown in ((example_site, "0 résultat", "0 note affichée"),
                                 (english_site, "0 results", "0 notes shown")):
        body = soup(site, "search.html").body
        assert (body["data-results-label-zero"], body["data-shown-label-zero"]) == (results, shown)
        assert body["data-results-label-one"].startswith("1 ")


def test_the_licence_sentence_reads_right_for_a_licence_named_in_words(example_site: Path,
                                                                        english_site: Path) -> None:
    footer = " ".join(soup(english_site, "index.html").select_one("footer").get_text(" ").split())
    assert f"Content licence: {LICENCE} ." in footer or f"Content licence: {LICENCE}." in footer, footer
    assert "licence." not in footer.replace(f"{LICENCE}.", "")
    french = " ".join(soup(example_site, "index.html").select_one("footer").get_text(" ").split())
    assert "Licence du contenu : CC BY-SA 4.0" in french, french


@pytest.mark.parametrize("path, words", [
    ("notes/cvl-synthese-budget-2024-2025.html", ("adoptée", "adoption")),
    ("notes/subvention-du-foyer.html", ("Réponse enregistrée", "question")),
])
def test_a_status_box_says_what_its_badge_means(example_site: Path, path: str, words: tuple[str, ...]) -> None:
    box = soup(example_site, path).select_one(".act-status")
    meaning = box.select_one(".status-meaning").get_text(" ", strip=True)
    assert len(meaning.split()) > 8 and all(w.lower() in meaning.lower() for w in words), meaning


@pytest.mark.parametrize("language, words", [("fr", "pas encore adoptée"), ("en", "not yet adopted")])
def test_a_draft_says_what_it_means_in_both_languages(small: Path, tmp_path: Path, language: str, words: str) -> None:
    replace(small, "carnet.yaml", "language: fr", f"language: {language}")
    build(small, tmp_path / "site", search=False)
    drafts = [p for p in sorted((tmp_path / "site" / "notes").glob("*.html"))
              if 'class="act-status status-draft"' in p.read_text(encoding="utf-8")]
    assert drafts, "the small corpus holds a draft synthesis"
    for page in drafts:
        meaning = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one(".act-status .status-meaning")
        assert meaning is not None and words in meaning.get_text(), page


def test_where_the_discarded_are_lists_notes_by_date_then_title() -> None:
    dates = {"b": dt.date(2025, 3, 1), "a": dt.date(2025, 3, 1), "c": dt.date(2024, 1, 1), "d": None}
    debated = [{"slug": "d", "note": "Zeta", "id": "x1"}, {"slug": "b", "note": "Alpha", "id": "x2"}]
    quiet = [{"slug": "a", "note": "Beta", "passages": [{}, {}]}, {"slug": "c", "note": "Omega", "passages": [{}]}]
    pages = [{"url": "p1.html", "debated": debated, "quiet": quiet}]
    rows = _by_note(debated, quiet, pages, dates.get)
    assert [row["note"] for row in rows] == ["Omega", "Alpha", "Beta", "Zeta"], "by date, then title; undated last"
    assert [row["count"] for row in rows] == [1, 1, 2, 1]


def _fragments(site: Path) -> dict[str, str]:
    pages = {}
    for path in sorted((site / "pagefind" / "fragment").glob("*")):
        data = gzip.decompress(path.read_bytes())
        page = json.loads(data[data.index(b"{"):])  # after Pagefind's signature
        pages[page["url"]] = page["content"]
    return pages


def test_a_not_in_corpus_answer_has_a_searchable_body(example_site: Path) -> None:
    content = next(text for url, text in _fragments(example_site).items() if url.endswith("voyage-a-l-etranger.html"))
    assert "voyage scolaire" in content and "Aucune réponse trouvée" in content, content


def test_text_siblings_keep_no_gap_where_a_citation_was(example_site: Path) -> None:
    """Every note whose body cites (articles, answers) has a .txt that reads as its page:
    "s'élève à 4 200 €. Les", never "4 200 € . Les"; and its W3C offsets still land on its quotes."""
    citing = [path for path in sorted((CONTENT / "notes").rglob("*.md")) if "[[ext:" in path.read_text()
              or "[[quote:" in path.read_text()]
    assert len(citing) >= 4
    for path in sorted((example_site / "notes").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for gap in (" .", " ,", " )"):
            assert gap not in text, (path.name, text[max(0, text.find(gap) - 40):][:80])
    budget = (example_site / "notes" / "cvl-wiki-budget.txt").read_text(encoding="utf-8")
    assert "s'élève à 4 200 €. Les dépenses importantes sont votées en séance, et" in budget
    for path in sorted((example_site / "notes").glob("*.annotations.jsonld")):
        text = (example_site / "notes" / path.name.replace(".annotations.jsonld", ".txt")).read_text(encoding="utf-8")
        for item in json.loads(path.read_text(encoding="utf-8")).get("first", {}).get("items", []):
            for target in item["target"]:
                selectors = target.get("selector") if isinstance(target, dict) else None
                if isinstance(selectors, list):
                    by_type = {selector["type"]: selector for selector in selectors}
                    quote, position = by_type["TextQuoteSelector"], by_type["TextPositionSelector"]
                    assert text[position["start"]:position["end"]] == quote["exact"], path.name


def test_the_index_keeps_no_gap_where_a_citation_was(example_site: Path) -> None:
    for url, text in _fragments(example_site).items():
        assert " . " not in text and " , " not in text, (url, text[max(0, text.find(" . ") - 40):][:80])
    page = soup(example_site, "notes/cvl-wiki-budget.html")
    assert "4 200 €" in page.select_one(".note-body").get_text(), "the words before a citation stay"
