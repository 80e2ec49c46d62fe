"""Accessibility of the example site in a real browser (issue 12, part 4).

- axe-core (npm, pinned in package.json; `npm ci` installs it) scans every page of the example
  site, in the light and the dark scheme, with every disclosure open, and the reader states the
  theme's script creates (a citation's preview, a notebook tab, a facet filter, search results,
  a landed-on passage, a phone screen): no serious or critical violation of WCAG 2.0/2.1 A/AA or
  axe's best practices.
- axe cannot judge text over a gradient (the highlights): their contrast is computed here.
- Keyboard only (Tab, Shift+Tab, Enter, Space, Escape): the skip link, every citation, its
  preview and the preview's links, every panel; focus is always visible and Escape gives it back.

axe is evaluated through the DevTools protocol (``page.evaluate``), which the page's
Content-Security-Policy does not govern: the pages are scanned under their real headers, no
``bypass_csp`` needed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.corpus import site_files

pytestmark = pytest.mark.slow  # drives a real Chromium

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
BLOCKING = ("serious", "critical")

WIKI = "notes/cvl-wiki-budget.html"
SYNTHESIS = "notes/cvl-synthese-budget-2024-2025.html"
ANSWER = "notes/subvention-du-foyer.html"

# One page of each kind the site emits (generator/engine/emitters.py), with what makes it that kind.
PAGE_KINDS = {
    "home": "index.html",
    "knowledge base": "bases/lycee-jean-moulin.html",
    "notebook index": "notebooks/cvl.html",
    "category": "notebooks/cvl/theme/budget.html",
    "note": "notes/cvl-2024-11-14.html",
    "note with moved and detached anchors": "notes/cvl-2025-05-15.html",
    "transcript with audio": "notes/cvl-2025-10-16-transcription.html",
    "wiki article": WIKI,
    "adopted synthesis": SYNTHESIS,
    "superseded synthesis": "notes/cvl-synthese-budget-provisoire.html",
    "selection page": "notes/cvl-wiki-budget.selection.html",
    "search": "search.html",
    "404": "404.html",
    "redirect of a former address": "notes/cvl-seance-budgetaire-2024.html",
}


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.is_file():
        reason = f"axe-core is not installed ({AXE.relative_to(ROOT)} is missing): run `npm ci` at the repository root"
        if os.environ.get("CI") == "true":
            pytest.fail(f"accessibility tests cannot run under CI: {reason}")
        pytest.skip(reason)
    source = AXE.read_text(encoding="utf-8")
    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]["axe-core"]
    assert f"axe v{pinned}" in source[:200], f"node_modules holds another axe-core than package.json's {pinned}: run `npm ci`"
    return source


def _settle(page) -> None:
    """Let transitions end (a contest link fading in, a flash): axe measures what is painted."""
    page.evaluate("() => Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)))")


def _axe(page, axe_source: str, where: str) -> list[str]:
    """The serious and critical violations on the page as it is now, one line each."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    _settle(page)
    result = page.evaluate("(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
                           TAGS)
    problems = []
    for violation in result["violations"]:
        if violation["impact"] not in BLOCKING:
            continue
        targets = ", ".join(f"{' '.join(map(str, node['target']))} ({' '.join(node['html'].split())[:100]})"
                            for node in violation["nodes"][:8])
        more = len(violation["nodes"]) - 8
        problems.append(f"{where}: {violation['id']} ({violation['impact']}): {violation['help']} "
                        f"[{violation['helpUrl']}] at {targets}{f' and {more} more' if more > 0 else ''}")
    return problems


def _report(problems: list[str]) -> str:
    return f"{len(problems)} serious or critical accessibility violation(s):\n" + "\n".join(problems)


# every panel in the flow of the page; the drop-down menus, which overlap each other, one by one
OPEN_EVERYTHING = """() => {
  document.querySelectorAll('details:not(.nav-group):not(.context-switch)').forEach(d => { d.open = true; });
}"""


def _pages(site: Path) -> list[str]:
    return sorted(path for path in site_files(site) if path.endswith(".html"))


def _goto(page, path: str) -> None:
    page.goto(path, wait_until="load")


def _without_refresh(route) -> None:
    """A redirect page forwards at once (meta refresh): scanned with the refresh taken out."""
    response = route.fetch()
    body = response.text().replace('http-equiv="refresh"', 'data-was-http-equiv="refresh"')
    route.fulfill(response=response, body=body)


@pytest.fixture(params=["light", "dark"])
def scheme_context(request, browser, site_url, example_site):
    context = browser.new_context(base_url=site_url, color_scheme=request.param)
    redirects = [path for path, data in site_files(example_site).items()
                 if path.endswith(".html") and b'http-equiv="refresh"' in data]
    for path in redirects:
        context.route(f"{site_url}{path}", _without_refresh)
    yield request.param, context
    context.close()


def test_page_kinds_are_all_in_the_example_site(example_site) -> None:
    pages = set(_pages(example_site))
    missing = {kind: path for kind, path in PAGE_KINDS.items() if path not in pages}
    assert not missing, f"the example site lacks these page kinds: {missing}"


def test_axe_finds_nothing_serious_on_any_page(scheme_context, example_site, axe_source) -> None:
    """Every page with every panel open (audit panels, evidence, proposals, writing guide), in
    both colour schemes; one page of each kind also as it loads."""
    scheme, context = scheme_context
    page = context.new_page()
    pages = _pages(example_site)
    assert set(PAGE_KINDS.values()) <= set(pages)
    problems: list[str] = []
    for path in pages:
        _goto(page, path)
        # as loaded: one page of each kind is enough (opening panels only adds to a page), light scheme
        if scheme == "light" and path in PAGE_KINDS.values():
            problems += _axe(page, axe_source, f"{scheme} {path}")
        page.evaluate(OPEN_EVERYTHING)
        problems += _axe(page, axe_source, f"{scheme} {path} (details open)")
    assert not problems, _report(problems)


def test_axe_finds_nothing_serious_in_the_readers_states(scheme_context, axe_source) -> None:
    """The states the script creates: a citation's preview (by focus and by hover), each notebook
    tab, a facet filter, search results with filters, a landed-on passage with its evidence open,
    each drop-down menu open, the theme toggled."""
    scheme, context = scheme_context
    page = context.new_page()
    problems: list[str] = []

    for path in (WIKI, SYNTHESIS, PAGE_KINDS["superseded synthesis"], ANSWER):
        _goto(page, path)
        citation = page.locator(".note-body a.citation").first
        citation.focus()
        assert page.locator("#citation-preview").is_visible()
        problems += _axe(page, axe_source, f"{scheme} {path} (preview by focus)")
        page.keyboard.press("Escape")
        page.locator(".note-body a.citation").nth(1).hover()
        assert page.locator("#citation-preview").is_visible()
        problems += _axe(page, axe_source, f"{scheme} {path} (preview by hover)")

    _goto(page, PAGE_KINDS["notebook index"])
    tabs = page.locator('.tabs a[role="tab"]')
    for index in range(tabs.count()):
        tabs.nth(index).click()
        problems += _axe(page, axe_source, f"{scheme} notebook tab {index + 1}")
    page.locator(".facet-toggle").first.click()
    problems += _axe(page, axe_source, f"{scheme} notebook filtered by a facet")

    _goto(page, "search.html?q=budget")
    page.wait_for_selector(".search-results li a")
    page.wait_for_selector(".search-filters select")
    problems += _axe(page, axe_source, f"{scheme} search results")

    _goto(page, "notes/cvl-2024-11-14.html#ext-cvl-1114-subvention-region")
    assert page.locator("mark.extraction.current").count() >= 1
    page.locator('mark[data-ext~="cvl-1114-bail-verbal"]').first.click()  # opens the evidence
    problems += _axe(page, axe_source, f"{scheme} landed-on passage, evidence open")

    _goto(page, ANSWER)  # a saved answer's quote landed on: the note's words highlighted by the script
    _goto(page, "notes/" + page.locator(".note-body a.citation.quote").first.get_attribute("href"))
    assert page.locator("mark.quoted.current").count() >= 1
    problems += _axe(page, axe_source, f"{scheme} landed-on answer quote")

    _goto(page, PAGE_KINDS["note"])  # each drop-down menu open: the header's, the notebook switcher
    menus = page.locator("details.nav-group:visible, details.context-switch:visible")
    assert menus.count() >= 3
    for index in range(menus.count()):
        menus.nth(index).locator("summary").click()
        assert page.locator("details.nav-group[open], details.context-switch[open]").count() == 1
        problems += _axe(page, axe_source, f"{scheme} {PAGE_KINDS['note']} menu {index + 1} open")
    page.keyboard.press("Escape")

    _goto(page, "index.html")
    page.locator(".theme-toggle").click()  # the reader's choice, the other scheme
    problems += _axe(page, axe_source, f"{scheme} home, theme toggled")
    assert not problems, _report(problems)


def test_axe_finds_nothing_serious_on_a_phone(browser, site_url, axe_source) -> None:
    """A narrow touch screen: no hover (the contest links show), tables and code scroll."""
    context = browser.new_context(base_url=site_url, viewport={"width": 360, "height": 740},
                                  device_scale_factor=2, is_mobile=True, has_touch=True)
    page = context.new_page()
    problems: list[str] = []
    for kind, path in PAGE_KINDS.items():
        if kind.startswith("redirect"):
            continue
        _goto(page, path)
        page.evaluate(OPEN_EVERYTHING)
        problems += _axe(page, axe_source, f"phone {path}")
    _goto(page, WIKI)
    page.locator(".note-body a.citation").first.tap()
    assert page.locator("#citation-preview").is_visible()
    problems += _axe(page, axe_source, f"phone {WIKI} (preview by tap)")
    context.close()
    assert not problems, _report(problems)


# --- Highlights: text over a gradient, which axe leaves "incomplete" -------------------------

CONTRAST = """() => {
  function rgb(text) {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  }
  function over(top, bottom) {  // alpha compositing
    const a = top.a;
    return {r: top.r * a + bottom.r * (1 - a), g: top.g * a + bottom.g * (1 - a), b: top.b * a + bottom.b * (1 - a), a: 1};
  }
  function luminance(c) {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  }
  function ratio(a, b) {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  }
  function paper(element) {  // the first opaque background colour under the mark
    for (let e = element.parentElement; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) return c;
    }
    return rgb(getComputedStyle(document.body).backgroundColor);
  }
  const rows = [];
  document.querySelectorAll('mark.extraction').forEach(mark => {
    const colour = rgb(getComputedStyle(mark).backgroundImage);
    if (!colour) return;
    const background = over(colour, paper(mark));
    [mark, ...mark.querySelectorAll('*')].forEach(element => {
      if (![...element.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) return;
      const text = over(rgb(getComputedStyle(element).color), background);
      rows.push({mark: mark.className + ' ' + mark.dataset.ext, element: element.tagName.toLowerCase(),
                 ratio: Math.round(ratio(text, background) * 100) / 100});
    });
  });
  return rows;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_highlighted_text_keeps_its_contrast(browser, site_url, scheme) -> None:
    context = browser.new_context(base_url=site_url, color_scheme=scheme)
    page = context.new_page()
    rows = []
    # plain, overlapping and current highlights, with links and emphasis inside them
    for path in ("notes/cvl-2024-10-10.html#ext-cvl-1010-essai", "notes/cvl-2025-05-15.html#ext-cvl-0515-livraison",
                 "notes/cvl-2025-03-13.html#ext-cvl-0313-subvention-accordee", "notes/cvl-2024-09-19.html#ext-cvl-0919-foyer-ouverture"):
        _goto(page, path)
        assert page.locator("mark.extraction.current").count() >= 1, path
        rows += [dict(row, page=path) for row in page.evaluate(CONTRAST)]
    context.close()
    kinds = {(" overlap" in r["mark"], " current" in r["mark"], r["element"]) for r in rows}
    assert {(False, False, "mark"), (True, False, "mark"), (False, True, "mark")} <= kinds, kinds
    low = [r for r in rows if r["ratio"] < 4.5]
    assert not low, f"{scheme}: highlighted text under 4.5:1 (WCAG 1.4.3): {low}"


# --- Keyboard only ----------------------------------------------------------------------------

DESCRIBE = """async () => {
  await Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)));
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return null;
  window.__kb = window.__kb || new WeakMap();  // a number for each element reached
  if (!window.__kb.has(e)) { window.__kbCount = (window.__kbCount || 0) + 1; window.__kb.set(e, window.__kbCount); }
  const style = getComputedStyle(e);
  const box = e.getBoundingClientRect();
  const preview = document.getElementById('citation-preview');
  const details = e.tagName === 'SUMMARY' ? e.parentElement : null;
  return {
    id: window.__kb.get(e), tag: e.tagName.toLowerCase(), cls: e.className || '', text: (e.textContent || '').trim().slice(0, 60),
    href: e.getAttribute('href'),
    citation: e.matches('.note-body a.citation'),
    inPreview: !!(preview && preview.contains(e)),
    previewShown: !!(preview && !preview.hidden && preview.offsetParent !== null),
    describedBy: e.getAttribute('aria-describedby'),
    summaryOpen: details ? details.open : null, detailsId: details ? (details.id || details.className) : null,
    // a player's own controls hold the focus inside it: the player is then :focus-within
    focusVisible: e.matches(':focus-visible') || (/^(AUDIO|VIDEO)$/.test(e.tagName) && e.matches(':focus-within')),
    outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 ? style.outlineStyle + ' ' + style.outlineWidth : '',
    shadow: style.boxShadow !== 'none' ? style.boxShadow : '',
    opacity: Number(style.opacity),
    size: box.width * box.height,
    inView: box.bottom > 0 && box.top < window.innerHeight && box.right > 0 && box.left < window.innerWidth,
  };
}"""

TAG_ALL = """() => {
  window.__kb = window.__kb || new WeakMap();
  window.__kbCount = window.__kbCount || 0;
}"""

# what Tab reaches on a page once every panel is open, outside the header's drop-down menus
TABBABLE = """() => {
  const preview = document.getElementById('citation-preview');
  const selector = 'a[href], button:not([disabled]), summary, input:not([disabled]), select, textarea, audio[controls], video[controls], [tabindex]';
  return [...document.querySelectorAll(selector)].filter(e => {
    if (e.tabIndex < 0 || (preview && preview.contains(e)) || e.closest('details.nav-group > ul, details.context-switch > ul')) return false;
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== 'hidden';
  }).map(e => ({known: window.__kb.has(e), tag: e.tagName.toLowerCase(), cls: e.className || '', text: (e.textContent || '').trim().slice(0, 60), href: e.getAttribute('href')}));
}"""


def _assert_focus_visible(info: dict, where: str) -> None:
    assert info["focusVisible"], f"{where}: keyboard focus on {info} does not match :focus-visible"
    assert info["outline"] or info["shadow"], f"{where}: no visible focus indicator (outline or box-shadow) on {info}"
    assert info["opacity"] > 0.9 and info["size"] > 0, f"{where}: the focused element is not shown: {info}"
    assert info["inView"], f"{where}: the focused element is not scrolled into view: {info}"


def _walk(page, path: str) -> dict:
    """Tab through the whole page from its top, opening every closed panel with Enter or Space,
    going into each citation's preview and out of it with Escape. Returns what was reached."""
    _goto(page, path)
    if page.locator("#search-input").count():
        page.wait_for_selector(".search-filters select")  # the filters come with the index, a moment later
    page.evaluate(TAG_ALL)
    citations: list[str] = []
    preview_links: set[str] = set()
    summaries: list[str] = []
    press_space = False
    first = None
    for _step in range(1500):
        page.keyboard.press("Tab")
        info = page.evaluate(DESCRIBE)
        if info is None or info["id"] == first:
            break  # past the last element, or around again
        first = first or info["id"]
        where = f"{path} step {_step}"
        _assert_focus_visible(info, where)
        if info["citation"]:
            citations.append(info["href"])
            assert info["previewShown"] and info["describedBy"] == "citation-preview", \
                f"{where}: focusing a citation shows its preview and describes the link with it: {info}"
            count = page.locator("#citation-preview a").count()
            assert count >= 1, f"{where}: the preview of {info['href']} has no link to follow"
            for _ in range(count):  # the down arrow goes into the preview, through its links (Tab goes on)
                page.keyboard.press("ArrowDown")
                inner = page.evaluate(DESCRIBE)
                assert inner and inner["inPreview"] and inner["tag"] == "a", f"{where}: the down arrow reaches the preview: {inner}"
                assert inner["previewShown"], f"{where}: the preview stays open while focus is in it"
                _assert_focus_visible(inner, where + " (preview)")
                preview_links.add(inner["href"])
            page.keyboard.press("Escape")  # closes it, focus back on the citation
            back = page.evaluate(DESCRIBE)
            assert back and back["id"] == info["id"], f"{where}: Escape gives focus back to the citation, not {back}"
            assert page.locator("#citation-preview").is_hidden(), f"{where}: Escape closes the preview"
            _assert_focus_visible(back, where + " (after Escape)")
        elif info["summaryOpen"] is False:
            page.keyboard.press("Space" if press_space else "Enter")  # both open a disclosure
            press_space = not press_space
            opened = page.evaluate(DESCRIBE)
            assert opened and opened["summaryOpen"] is True, f"{where}: the keyboard opens the panel {info['detailsId']}"
            summaries.append(info["detailsId"])
    else:
        pytest.fail(f"{path}: Tab never came back to the top")
    missed = [e for e in page.evaluate(TABBABLE) if not e["known"]]
    return {"citations": citations, "preview_links": preview_links, "summaries": summaries, "missed": missed}


@pytest.mark.parametrize("path", [WIKI, SYNTHESIS, PAGE_KINDS["superseded synthesis"], PAGE_KINDS["note"],
                                  PAGE_KINDS["transcript with audio"], PAGE_KINDS["selection page"],
                                  PAGE_KINDS["home"], PAGE_KINDS["search"]])
def test_keyboard_reaches_every_citation_preview_and_panel(page, path) -> None:
    page.goto(path)
    expected = page.locator(".note-body a.citation").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    panels = page.locator("details:not(.nav-group):not(.context-switch)").evaluate_all("ds => ds.map(d => d.id || d.className)")
    reached = _walk(page, path)
    assert reached["citations"] == expected, "every citation, in reading order"
    if expected:
        hrefs = {h for h in expected if "#ext-" in h}
        assert hrefs <= reached["preview_links"], "each preview links to its passage"
        assert {h.replace("#ext-", "#entry-") for h in hrefs} <= reached["preview_links"], "…and to the extraction's debate"
    assert sorted(p for p in reached["summaries"] if p in panels) == sorted(panels), "every panel opened by keyboard"
    assert "nav-group" in reached["summaries"], "the header menus open by keyboard"
    assert page.locator("details:not(.nav-group):not(.context-switch):not([open])").count() == 0
    assert not reached["missed"], f"reachable by mouse, never reached by Tab: {reached['missed']}"


def test_a_citation_is_one_tab_stop_and_its_preview_is_reached_with_the_arrows(page) -> None:
    """Issue 24: four Tab stops per citation (it, its preview's two links, …). Now Tab goes
    from a citation to what follows it; the down arrow goes into the preview."""
    page.goto(WIKI)
    citation = page.locator(".note-body a.citation").first
    citation.focus()  # as if tabbed to
    assert page.locator("#citation-preview").is_visible()
    links = page.locator("#citation-preview a")
    assert links.count() == 2
    for index in range(links.count()):
        page.keyboard.press("ArrowDown")
        assert page.evaluate(f"document.activeElement === document.querySelectorAll('#citation-preview a')[{index}]")
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement === document.querySelector('#citation-preview a')")
    page.keyboard.press("ArrowUp")  # back onto the citation
    assert page.evaluate("document.activeElement === document.querySelector('.note-body a.citation')")
    page.keyboard.press("Tab")  # one stop: on to what follows the citation, the preview closes
    assert page.locator("#citation-preview").is_hidden()
    after = page.evaluate("""() => {
      const all = [...document.querySelectorAll('.note-body a[href], .note-body [tabindex="0"]')]
        .filter(a => !a.closest('#citation-preview') && a.tabIndex >= 0);
      const citation = document.querySelector('.note-body a.citation');
      return document.activeElement === all[all.indexOf(citation) + 1];
    }""")
    assert after, "Tab leaves the citation for what follows it"
    page.keyboard.press("Shift+Tab")  # back onto the citation
    assert page.evaluate("document.activeElement === document.querySelector('.note-body a.citation')")
    assert page.locator("#citation-preview").is_visible()
    page.keyboard.press("Escape")
    assert page.locator("#citation-preview").is_hidden()
    page.keyboard.press("Enter")  # the citation itself still leads to its passage
    page.wait_for_url("**/cvl-2024-11-14.html#ext-cvl-1114-budget-total")
    assert page.locator("mark.extraction.current").count() >= 1


def test_following_a_preview_link_by_keyboard_opens_the_debate(page) -> None:
    page.goto(WIKI)
    page.locator(".note-body a.citation").first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # "the extraction and its debate"
    page.keyboard.press("Enter")
    page.wait_for_url("**/cvl-2024-11-14.html#entry-cvl-1114-budget-total")
    assert page.locator("details#evidence").get_attribute("open") is not None
    assert page.locator("#entry-cvl-1114-budget-total").is_visible()


def test_skip_link_leads_into_the_main_content(page) -> None:
    for path in PAGE_KINDS.values():
        if path.endswith("cvl-seance-budgetaire-2024.html"):
            continue  # forwards at once
        page.goto(path)
        page.keyboard.press("Tab")
        info = page.evaluate(DESCRIBE)
        assert info and "skip" in info["cls"], f"{path}: the first Tab stop is the skip link, not {info}"
        _assert_focus_visible(info, path)
        page.keyboard.press("Enter")
        page.wait_for_url("**#main")
        page.keyboard.press("Tab")
        inside = page.evaluate("document.activeElement.closest('main') !== null")
        assert inside, f"{path}: after the skip link, Tab goes on inside <main>"


def test_escape_closes_a_menu_and_gives_focus_back(page) -> None:
    page.goto("notes/cvl-2024-11-14.html")
    menu = page.locator("details.nav-group").last
    menu.locator("summary").focus()
    page.keyboard.press("Enter")
    assert menu.get_attribute("open") is not None
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('details.nav-group') !== null")
    page.keyboard.press("Escape")
    assert menu.get_attribute("open") is None
    last = page.locator("details.nav-group").count() - 1
    assert page.evaluate(f"document.activeElement === document.querySelectorAll('details.nav-group > summary')[{last}]")
    # the notebook switcher in the breadcrumb, the same way
    switch = page.locator("nav.breadcrumb:visible details.context-switch")
    switch.locator("summary").focus()
    page.keyboard.press("Space")
    assert switch.get_attribute("open") is not None
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('details.context-switch') !== null")
    page.keyboard.press("Escape")
    assert switch.get_attribute("open") is None
    # leaving a menu with Tab closes it too
    switch.locator("summary").focus()
    page.keyboard.press("Enter")
    for _ in range(page.locator("nav.breadcrumb:visible details.context-switch a").count() + 1):
        page.keyboard.press("Tab")
    assert switch.get_attribute("open") is None


def test_notebook_page_by_keyboard(page) -> None:
    """Tabs (arrow keys inside the tab list, as the ARIA pattern has it), facet filters by Space."""
    page.goto("notebooks/cvl.html")
    page.evaluate(TAG_ALL)
    seen = []
    for _ in range(400):
        page.keyboard.press("Tab")
        info = page.evaluate(DESCRIBE)
        if info is None or (seen and info["id"] == seen[0]["id"]):
            break
        _assert_focus_visible(info, f"notebook step {len(seen)}")
        seen.append(info)
    assert any("facet-toggle" in s["cls"] for s in seen)
    assert sum(1 for s in seen if s["href"] and s["href"].startswith("#tab-")) == 1, "one Tab stop for the tab list"
    page.locator(".facet-toggle").first.focus()
    page.keyboard.press("Space")
    assert page.locator(".facet-toggle").first.get_attribute("aria-pressed") == "true"
    assert page.locator(".facet-status").inner_text().strip()


def test_the_pointer_can_reach_the_previews_links(page) -> None:
    """The preview's links are for mouse users too: going from the citation down into the
    preview keeps it open."""
    page.goto(WIKI)
    citation = page.locator(".note-body a.citation").first
    citation.hover()
    box = citation.bounding_box()
    link = page.locator("#citation-preview a").first
    target = link.bounding_box()
    start = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    end = (target["x"] + 4, target["y"] + target["height"] / 2)
    page.mouse.move(*start)
    page.mouse.move(start[0], end[1], steps=12)  # straight down, across the gap
    page.mouse.move(*end, steps=6)
    assert page.locator("#citation-preview").is_visible()
    page.mouse.click(*end)
    page.wait_for_url("**/cvl-2024-11-14.html#ext-cvl-1114-budget-total")


@pytest.fixture(scope="module")
def paged_site(tmp_path_factory: pytest.TempPathFactory):
    """The example under a page budget of 3 KB: its wikis' discarded evidence and selections
    go on pages of their own (issue 24, item 3), served as the example is."""
    import functools
    import shutil
    import threading
    from http.server import ThreadingHTTPServer

    from generator.pipeline import build
    from tests.browser.conftest import _Handler

    content = tmp_path_factory.mktemp("paged") / "content"
    shutil.copytree(ROOT / "content", content)
    with (content / "carnet.yaml").open("a", encoding="utf-8") as stream:
        stream.write("outputs:\n  page_budget_kb: 3\n")
    site = content.parent / "site"
    build(content, site, search=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_audits_own_pages(browser, paged_site, axe_source, scheme) -> None:
    """A wiki's discarded evidence and selection over pages of their own, and the wiki's panel
    that points to them, both schemes, panels open."""
    site, url = paged_site
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "notes").glob("cvl-wiki-budget.*.html"))
    assert "notes/cvl-wiki-budget.discarded-2.html" in pages and "notes/cvl-wiki-budget.selection-2.html" in pages
    context = browser.new_context(base_url=url, color_scheme=scheme)
    page = context.new_page()
    problems: list[str] = []
    for path in [WIKI, *pages]:
        _goto(page, path)
        page.evaluate(OPEN_EVERYTHING)
        problems += _axe(page, axe_source, f"{scheme} {path} (details open)")
    context.close()
    assert not problems, _report(problems)
