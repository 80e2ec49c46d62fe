"""The graph pages and a local graph in Chromium (issue 26): drawn with and without
JavaScript, every node a link that lands on its page, reached by Tab and followed by
Enter, zoom and filters by script, no console error and no CSP violation."""

from __future__ import annotations

import pytest

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
