"""The graph pages and a local graph in Chromium (issue 26): drawn with and without
JavaScript, every node a link that lands on its page, reached by Tab and followed by
Enter, zoom and filters by script, no console error and no CSP violation. At 500 notes
(issue 57): labels that tell the notes apart, a find box, a filter by kind."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from datetime import date, timedelta
from http.server import ThreadingHTTPServer

import pytest

from support.corpus import copy_fixture, write
from tests.browser.conftest import _Handler
from tests.browser.test_accessibility import _axe, _report, axe_source  # noqa: F401 (its fixture, used by name)

pytestmark = pytest.mark.slow  # drives a real Chromium

SITE_GRAPH = "site-graph.html"
NOTE = "notes/cvl-2024-11-14.html"
WATCH_CSP = "document.addEventListener('securitypolicyviolation', e => (window.__csp = window.__csp || []).push(e.violatedDirective));"


def _watched(context):
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.add_init_script(WATCH_CSP)
    return page, problems


def test_the_graph_page_draws_links_and_the_script_zooms_filters_and_lights_neighbours(browser, site_url) -> None:
    context = browser.new_context(base_url=site_url)
    page, problems = _watched(context)
    page.goto(SITE_GRAPH)
    svg = page.locator("svg.graph-svg")
    assert page.locator(".graph-controls").is_visible(), "the script shows its controls"
    before = svg.get_attribute("viewBox")
    page.locator('button[data-zoom="in"]').click()
    zoomed = svg.get_attribute("viewBox")
    assert zoomed != before and float(zoomed.split()[2]) < float(before.split()[2])
    page.locator('button[data-zoom="reset"]').click()
    assert [round(float(v)) for v in svg.get_attribute("viewBox").split()] == [round(float(v)) for v in before.split()]
    # a node hovered: it and its neighbours lit, the rest dimmed
    node = page.locator("a.node.wiki").first
    node.hover()
    assert "highlighting" in svg.get_attribute("class")
    near = set((node.get_attribute("data-n") or "").split())
    lit = {a.get_attribute("data-i") for a in page.locator("a.node.on").all()}
    assert lit == near | {node.get_attribute("data-i")}
    # a filter: the notes hidden, the articles kept
    page.locator('input[data-filter-kind="note"]').uncheck()
    assert page.locator("a.node.note:not(.off)").count() == 0 and page.locator("a.node.wiki:not(.off)").count() >= 1
    assert page.evaluate("window.__csp || []") == [] and problems == []
    context.close()


def test_without_script_the_graph_is_whole_and_every_node_lands_on_its_page(browser, site_url) -> None:
    context = browser.new_context(base_url=site_url, java_script_enabled=False)
    page = context.new_page()
    for path in (SITE_GRAPH, "notebooks/cvl.graph.html", NOTE):
        page.goto(path)
        assert page.locator(".graph-controls").count() == 0 or page.locator(".graph-controls").is_hidden()
        hrefs = page.eval_on_selector_all("svg.graph-svg a.node", "as => as.map(a => a.href.baseVal ? "
                                          "new URL(a.getAttribute('href'), location.href).href : a.href)")
        assert hrefs, path
        for href in sorted(set(hrefs)):
            response = page.request.get(href)
            assert response.status == 200, href
    page.goto(SITE_GRAPH)
    target = page.locator("svg.graph-svg a.node.wiki").first
    href = target.get_attribute("href")
    target.click()
    page.wait_for_url(f"**/{href.split('/')[-1]}")
    context.close()


def test_tab_reaches_a_node_and_enter_follows_it(page) -> None:
    page.goto(SITE_GRAPH)
    page.locator("svg.graph-svg").scroll_into_view_if_needed()
    page.locator('button[data-zoom="reset"]').focus()
    for _ in range(40):  # past the filters, into the drawing
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('svg a.node')"):
            break
    assert page.evaluate("document.activeElement.matches('svg a.node')"), "each node is focusable"
    assert "highlighting" in page.locator("svg.graph-svg").get_attribute("class"), "focus lights its neighbours"
    href = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/{href.split('/')[-1]}")


def test_a_local_graph_renders_and_its_nodes_lead_to_the_neighbours(browser, site_url) -> None:
    context = browser.new_context(base_url=site_url)
    page, problems = _watched(context)
    page.goto(NOTE)
    page.locator("details.local-graph > summary").click()
    graph = page.locator("details.local-graph svg.graph-svg")
    assert graph.is_visible()
    first = graph.locator("a.node").nth(1)
    href = first.get_attribute("href")
    first.click()
    page.wait_for_url(f"**/{href.split('/')[-1]}")
    assert page.evaluate("window.__csp || []") == [] and problems == []
    context.close()


MEETINGS = 500
LAST = date(2019, 7, 24)


@pytest.fixture(scope="module")
def meetings_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The small fixture with a notebook of 500 minutes titled as the Node.js TSC's are
    ("Node.js Foundation TSC Meeting 2019-07-24"), each linking to the one before, built and
    served with the site's headers."""
    from generator.pipeline import build

    root = tmp_path_factory.mktemp("meetings")
    content = copy_fixture("small", root)
    write(content, "notebooks/tsc.yaml", "title: TSC\nvisibility: public\nauthors: full\n")
    for i in range(MEETINGS):
        day = LAST - timedelta(days=7 * (MEETINGS - 1 - i))
        before = f"Previously: [[tsc-{i - 1:03d}]]." if i else "The first."
        write(content, f"notes/tsc-{i:03d}.md", f"---\ntitle: Node.js Foundation TSC Meeting {day.isoformat()}\n"
              f"date: {day.isoformat()}\nauthors: [Anne Enseignante]\nnotebooks:\n  tsc: {{}}\n---\n"
              f"Minutes of the meeting. {before}\n")
    out = root / "site"
    build(content, out, search=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


VISIBLE_LABELS = ("ls => ls.filter(l => l.getClientRects().length && getComputedStyle(l).display !== 'none' "
                  "&& getComputedStyle(l).visibility !== 'hidden').map(l => l.textContent)")


def test_at_500_meetings_the_labels_differ_the_find_box_finds_and_a_filter_hides_a_kind(browser, meetings_url) -> None:
    context = browser.new_context(base_url=meetings_url)
    page, problems = _watched(context)
    page.goto(SITE_GRAPH)
    svg = page.locator("svg.graph-svg")
    labels = page.eval_on_selector_all("svg.graph-svg a.node.note text", VISIBLE_LABELS)
    meetings = [t for t in labels if re.search(r"\d{4}-\d{2}-\d{2}", t)]
    assert len(meetings) >= 20, labels
    assert len(set(meetings)) == len(meetings), "no two visible labels alike"
    assert not [t for t in meetings if not re.search(r"\d{4}-\d{2}-\d{2}$", t)], "each label ends with its date"
    # the find box: one meeting found, its label shown, Enter takes the focus to it
    page.locator("[data-find]").fill("2019-07-24")
    found = page.locator("a.node.found")
    assert found.count() == 1
    assert "2019-07-24" in found.locator("title").text_content()
    assert found.locator("text").is_visible() and "2019-07-24" in found.locator("text").text_content()
    assert "finding" in svg.get_attribute("class") and "1" in page.locator(".graph-found").text_content()
    page.locator("[data-find]").press("Enter")
    assert page.evaluate("document.activeElement.classList.contains('found')")
    assert "highlighting" in svg.get_attribute("class"), "the found node's neighbours lit"
    named = page.eval_on_selector_all("a.node.named text", VISIBLE_LABELS)
    assert len(named) >= 2, "its neighbours named"
    page.locator("[data-find]").fill("")
    assert page.locator("a.node.found").count() == 0 and "finding" not in svg.get_attribute("class")
    # a filter by kind: every note hidden, the notebooks kept
    assert page.locator("a.node.note").first.is_visible()
    page.locator('input[data-filter-kind="note"]').uncheck()
    assert page.eval_on_selector_all("a.node.note", "as => as.filter(a => a.getClientRects().length).length") == 0
    assert page.locator("a.node.notebook").first.is_visible()
    # and by notebook: the minutes' notebook hidden, the fixture's kept
    page.locator('input[data-filter-kind="note"]').check()
    page.locator('input[data-filter-notebook="tsc"]').uncheck()
    shown = page.eval_on_selector_all("a.node", "as => as.filter(a => a.getClientRects().length).map(a => a.dataset.nb)")
    assert shown and "tsc" not in shown
    assert page.evaluate("window.__csp || []") == [] and problems == []
    context.close()


def test_at_500_meetings_the_graph_page_is_axe_clean_as_loaded_and_while_finding(browser, meetings_url,
                                                                                  axe_source) -> None:  # noqa: F811
    context = browser.new_context(base_url=meetings_url)
    page = context.new_page()
    problems: list[str] = []
    for path in (SITE_GRAPH, "notebooks/tsc.graph.html"):
        page.goto(path)
        problems += _axe(page, axe_source, path)
        page.locator("[data-find]").fill("2019-07")
        page.locator("[data-find]").press("Enter")
        problems += _axe(page, axe_source, f"{path} (finding)")
    assert not problems, _report(problems)
    context.close()
