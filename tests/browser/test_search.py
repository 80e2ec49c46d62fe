"""Search as a reader uses it (issue 24, item 1): the true count and every hit reachable,
facets named in the site's language (one per notebook axis), excerpts without UI text,
and results that land under a base URL with a path."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.pipeline import build
from support.corpus import copy_fixture, replace
from tests.browser.conftest import _Handler

HITS = 47  # more than one page of results (20)


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small corpus with HITS more notes sharing a rare word, built under /carnet/."""
    root = tmp_path_factory.mktemp("search")
    content = copy_fixture("small", root)
    replace(content, "carnet.yaml", "https://test.example.org/site/", "https://example.org/carnet/")
    for n in range(HITS):
        (content / "notes" / f"veille-z{n:02d}.md").write_text(
            f"---\ntitle: Relevé {n:02d}\ndate: 2025-03-{n % 28 + 1:02d}\nauthors: [Claire Publique]\n"
            f"notebooks:\n  veille:\n    theme: [Mécénat]\n---\nLe mot ZORGLUBE revient ici ({n}).\n", encoding="utf-8")
    served = root / "served"
    build(content, served / "carnet")  # served at /carnet/, as its base URL says
    return served


@pytest.fixture(scope="module")
def sub_path_url(many: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(many)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/carnet/"
    server.shutdown()
    server.server_close()


def test_a_query_shows_its_true_count_and_reaches_every_hit(browser, sub_path_url: str) -> None:
    context = browser.new_context(base_url=sub_path_url)
    page = context.new_page()
    try:
        page.goto("search.html?q=zorglube")
        page.wait_for_selector(".search-results li a")
        assert page.locator(".search-status").inner_text() == f"{HITS} résultats"
        assert page.locator(".search-results li").count() == 20
        while page.locator(".search-more").is_visible():
            before = page.locator(".search-results li").count()
            page.locator(".search-more").click()
            page.wait_for_function("(n) => document.querySelectorAll('.search-results li').length > n", arg=before)
        titles = page.locator(".search-results li a").all_inner_texts()
        assert sorted(titles) == [f"Relevé {n:02d}" for n in range(HITS)], "every hit, once"
        # the results land under the site's path
        hrefs = page.locator(".search-results li a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
        assert all(href.startswith("/carnet/notes/veille-z") for href in hrefs), hrefs[:3]
        page.locator(".search-results li a").nth(30).click()
        page.wait_for_load_state()
        assert page.url.startswith(sub_path_url + "notes/veille-z") and page.title().startswith("Relevé")
    finally:
        context.close()


def test_facets_are_named_in_the_sites_language_one_per_notebook_axis(page) -> None:
    page.goto("search.html?q=budget")
    page.wait_for_selector(".search-filters select")
    labels = page.locator(".search-filters label").evaluate_all(
        "ls => ls.map(l => [l.firstChild.textContent.trim(), l.querySelector('select').name])")
    names = [name for _label, name in labels]
    assert names[:3] == ["notebook", "type", "state"] and "category" not in names
    shown = {name: label for label, name in labels}
    assert (shown["notebook"], shown["type"], shown["state"]) == ("Carnet", "Type", "Vérification")
    axes = [label for label, name in labels if name.startswith("axis.")]
    assert axes and all(label.endswith(")") and " (" in label for label in axes), axes  # "Thème (Conseil …)"
    assert len(set(axes)) == len(axes), "one facet per notebook axis, never one list of every axis"
