"""Category pages stay bounded whatever a note's number of categories (issue 56, item 2).

A note in k categories is listed on k category pages; when each listing named all the
note's categories, the category pages held k² links in all (5,000 categories: 3.55 GB of
output). Each entry on a category page now names a bounded number of the note's other
categories and says how many more there are, with a link to the note's page, which names
them all (as the notebook page does, once): every category is still reachable."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.pipeline import build
from generator.site.model import category_path
from generator.site.pages import RELATED_CATEGORIES

SETTINGS = ("title: Catégories\nbase_url: https://example.org/\nlanguage: fr\n"
            "licence:\n  name: CC BY 4.0\n  url: https://creativecommons.org/licenses/by/4.0/\n")


def names(k: int) -> list[str]:
    return [f"Catégorie {i:04d}" for i in range(k)]


def many_categories(root: Path, k: int) -> Path:
    """One public notebook with an axis of ``k`` categories and a second axis of two; a note
    in all of them, another in the first category only."""
    content = root / f"content-{k}"
    (content / "notebooks").mkdir(parents=True)
    (content / "notes").mkdir()
    (content / "carnet.yaml").write_text(SETTINGS, encoding="utf-8")
    listed = "".join(f"      - {name}\n" for name in names(k))
    (content / "notebooks" / "carnet.yaml").write_text(
        "title: Carnet\nvisibility: public\nauthors: full\naxes:\n  theme:\n    title: Thème\n    categories:\n"
        + listed + "  annee:\n    title: Année\n    categories: ['2024', '2025']\n", encoding="utf-8")
    (content / "notes" / "partout.md").write_text(
        "---\ntitle: Partout\ndate: 2025-01-01\nauthors: [Zoé]\nnotebooks:\n  carnet:\n    theme:\n" + listed
        + "    annee: ['2024', '2025']\n---\nUne note rangée dans toutes les catégories.\n", encoding="utf-8")
    (content / "notes" / "seule.md").write_text(
        f"---\ntitle: Seule\ndate: 2025-01-02\nauthors: [Zoé]\nnotebooks:\n  carnet:\n    theme: [{names(k)[0]}]\n"
        "---\nUne note dans une seule catégorie.\n", encoding="utf-8")
    return content


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The same content with 12 and 48 categories on the first axis, built."""
    built = {}
    for k in (12, 48):
        root = tmp_path_factory.mktemp(f"categories-{k}")
        build(many_categories(root, k), root / "site", search=False)
        built[k] = root / "site"
    return built


def page(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_bytes(), "html.parser")


def linked(soup: BeautifulSoup, path: str) -> set[str]:
    """The site paths the page at ``path`` links to (queries and fragments left out)."""
    base = posixpath.dirname(path)
    return {posixpath.normpath(posixpath.join(base, a["href"].split("#")[0].split("?")[0]))
            for a in soup.find_all("a", href=True) if "://" not in a["href"] and not a["href"].startswith("#")}


def every_category(k: int) -> set[str]:
    return {category_path("carnet", "theme", n) for n in names(k)} | \
        {category_path("carnet", "annee", n) for n in ("2024", "2025")}


def test_a_category_page_names_a_bounded_number_of_categories(sites: dict[int, Path]) -> None:
    counts = {}
    for k, site in sites.items():
        path = category_path("carnet", "theme", names(k)[3])
        soup = page(site, path)
        entry = next(li for li in soup.select(".note-item") if li.select_one(".note-link").get_text() == "Partout")
        tags = [a.get_text() for a in entry.select(".tags a:not(.more)")]
        # its other categories in the notebook's order, the page's own left out, at most the bound
        others = [n for n in names(k) if n != names(k)[3]] + ["2024", "2025"]
        assert tags == others[:RELATED_CATEGORIES]
        more = entry.select_one(".tags a.more")
        assert more is not None and str(len(others) - RELATED_CATEGORIES) in more.get_text()
        assert more["href"].startswith("../../../notes/partout.html?nb=carnet#")  # the note's page names them all
        # no attribute lists them all either (the filters run on the notebook page only)
        assert not entry.has_attr("data-categories")
        counts[k] = len(linked(soup, path) & every_category(k))
        text = (site / path.replace(".html", ".txt")).read_text(encoding="utf-8")
        assert names(k)[-1] not in text
    # the same number of category links whatever k: a bound, not a share of k
    assert counts[12] == counts[48] <= RELATED_CATEGORIES + 1


def test_a_note_with_few_categories_shows_them_all(sites: dict[int, Path]) -> None:
    soup = page(sites[12], category_path("carnet", "theme", names(12)[0]))
    entry = next(li for li in soup.select(".note-item") if li.select_one(".note-link").get_text() == "Seule")
    assert entry.select(".tags") == []  # its one category is the page's own
    soup = page(sites[12], category_path("carnet", "annee", "2024"))
    entry = soup.select_one(".note-item")
    assert len(entry.select(".tags a:not(.more)")) == RELATED_CATEGORIES


def test_every_category_stays_reachable(sites: dict[int, Path]) -> None:
    site = sites[48]
    for path in ("notebooks/carnet.html", "notes/partout.html"):
        assert every_category(48) <= linked(page(site, path), path), path
    assert all((site / p).is_file() for p in every_category(48))
