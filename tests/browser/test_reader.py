"""What a reader does in a real browser: pages load cleanly under the strict CSP, the
theme toggle persists without a flash, the notebook switcher, a phone screen, audio."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.corpus import site_files

pytestmark = pytest.mark.slow  # drives a real Chromium

TRANSCRIPT = "notes/cvl-2025-10-16-transcription.html"


def html_pages(site: Path) -> list[str]:
    """Every page, redirects of former addresses aside (they only forward)."""
    return sorted(path for path, data in site_files(site).items()
                  if path.endswith(".html") and b'http-equiv="refresh"' not in data)


def test_every_page_renders_without_console_errors(browser, site_url, example_site) -> None:
    context = browser.new_context(base_url=site_url)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{page.url}: console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"{page.url}: {e}"))
    # a media preload cut short by the next navigation is not a failure of the site
    page.on("requestfailed", lambda r: problems.append(f"{page.url}: failed {r.url} {r.failure}")
            if r.failure != "net::ERR_ABORTED" else None)
    page.on("response", lambda r: problems.append(f"{page.url}: HTTP {r.status} {r.url}") if r.status >= 400 else None)
    pages = html_pages(example_site)
    assert len(pages) > 10
    for path in pages:
        page.goto(path, wait_until="load")
        assert page.locator("main h1").count() == 1, path
    context.close()
    assert problems == [], "\n".join(problems)


FIRST_PAINT = """
window.__atFirstBody = null;
new MutationObserver(function (records, observer) {
  if (document.body) {
    window.__atFirstBody = document.documentElement.dataset.theme || "";
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""


def _paper(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_theme_follows_the_system_then_the_toggle_persists_without_flash(browser, site_url) -> None:
    context = browser.new_context(base_url=site_url, color_scheme="dark")
    page = context.new_page()
    page.goto("index.html")
    dark_system = _paper(page)
    page.emulate_media(color_scheme="light")
    light_system = _paper(page)
    assert dark_system != light_system, "the palette follows the system's preference"

    page.click(".theme-toggle")  # system is light now: the toggle chooses dark
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _paper(page) == dark_system
    assert page.get_attribute(".theme-toggle", "aria-pressed") == "true"

    page.add_init_script(FIRST_PAINT)
    page.goto("notebooks/cvl.html")
    assert page.evaluate("window.__atFirstBody") == "dark", "the saved theme is set before the body exists"
    assert _paper(page) == dark_system

    page.click(".theme-toggle")
    page.reload()
    assert page.evaluate("window.__atFirstBody") == "light"
    assert _paper(page) == light_system
    context.close()


def test_notebook_switcher_reopens_the_note_in_another_notebook(page) -> None:
    page.goto("notes/cvl-2024-11-14.html")
    visible = page.locator("nav.breadcrumb:visible")
    assert visible.count() == 1 and "Conseil de vie lycéenne" in visible.inner_text()
    visible.locator(".context-switch summary").click()
    page.get_by_role("link", name="Ouvrir dans « Veille financement »").click()
    page.wait_for_url("**/cvl-2024-11-14.html?nb=veille-financement")
    visible = page.locator("nav.breadcrumb:visible")
    assert visible.count() == 1 and "Veille financement" in visible.inner_text()
    assert page.locator(".memberships li.current > a").inner_text() == "Veille financement"


def test_phone_viewport_has_no_horizontal_scroll(browser, site_url, example_site) -> None:
    context = browser.new_context(base_url=site_url, viewport={"width": 360, "height": 740},
                                  device_scale_factor=2, is_mobile=True, has_touch=True)
    page = context.new_page()
    too_wide = []
    for path in html_pages(example_site):
        page.goto(path)
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        if width[0] > width[1]:
            too_wide.append((path, width))
    context.close()
    assert too_wide == []


def test_transcript_plays_its_audio_from_a_turn(page, example_site) -> None:
    if not (example_site / TRANSCRIPT).exists():
        pytest.fail(f"the example corpus has no transcript page {TRANSCRIPT}")
    page.goto(TRANSCRIPT)
    turns = page.locator(".turn[data-time]")
    assert turns.count() >= 10
    third = turns.nth(2)
    start = int(third.get_attribute("data-time"))
    assert start > 0
    third.locator(".play-turn").click()
    page.wait_for_function("(t) => { const a = document.querySelector('audio'); "
                           "return a && !a.paused && a.currentTime > t + 0.3; }", arg=start, timeout=15000)
    duration = page.evaluate("document.querySelector('audio').duration")
    last = int(turns.nth(turns.count() - 1).get_attribute("data-time"))
    assert last < duration, "every turn starts within the recording"
    page.wait_for_selector(".turn.speaking")


def test_a_highlight_opens_its_debate(page) -> None:
    page.goto("notes/cvl-2024-11-14.html")
    evidence = page.locator("details#evidence")
    assert evidence.get_attribute("open") is None, "evidence is one click away, not in the reading path"
    page.locator('mark[data-ext~="cvl-1114-bail-verbal"]').first.click()
    assert evidence.get_attribute("open") is not None
    assert page.locator("#entry-cvl-1114-bail-verbal").is_visible()


def test_citation_lands_on_the_highlighted_passage(page) -> None:
    page.goto("notes/cvl-wiki-budget.html")
    page.locator('a.citation[href$="#ext-cvl-1114-subvention-region"]').first.click()
    page.wait_for_url("**/cvl-2024-11-14.html#ext-cvl-1114-subvention-region")
    current = page.locator("mark.extraction.current")
    assert current.count() >= 1
    assert all("cvl-1114-subvention-region" in m.get_attribute("data-ext").split() for m in current.all())
    assert current.first.is_visible()


def test_skip_link_and_visible_focus(page) -> None:
    page.goto("notebooks/cvl.html")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    assert page.evaluate("document.activeElement.className") == "skip"
    box = skip.bounding_box()
    assert box and box["x"] >= 0, "the skip link shows when focused"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "focus is visible"
    page.keyboard.press("Enter")
    page.wait_for_url("**#main")
    assert page.locator("header.site-header").count() == 1 and page.locator("main#main").count() == 1
    assert page.locator("footer").count() == 1 and page.locator("nav[aria-label]").count() >= 2


def test_print_shows_the_text_without_chrome(page) -> None:
    page.goto("notes/cvl-2024-11-14.html")
    page.emulate_media(media="print")
    assert page.locator("header.site-header").is_hidden()
    assert page.locator(".note-body").is_visible()
    assert page.locator("mark.extraction").first.is_visible()


def test_a_transcript_extraction_seeks_the_player(page) -> None:
    page.goto(TRANSCRIPT)
    page.locator("details#evidence > summary").click()
    button = page.locator(".play-extraction").first
    start, end = float(button.get_attribute("data-start")), float(button.get_attribute("data-end"))
    assert 0 <= start < end
    button.click()
    page.wait_for_function("(t) => { const a = document.querySelector('audio'); "
                           "return a && !a.paused && a.currentTime >= t; }", arg=start, timeout=15000)
    position = page.evaluate("document.querySelector('audio').currentTime")
    assert start <= position < end


def test_landing_on_a_transcript_passage_cues_the_player(page) -> None:
    page.goto(TRANSCRIPT)
    entry = page.locator(".extraction-entry:has(.play-extraction)").first
    ext_id = entry.get_attribute("id")[len("entry-"):]
    start = float(entry.locator(".play-extraction").get_attribute("data-start"))
    page.goto(f"{TRANSCRIPT}#ext-{ext_id}")
    page.wait_for_function("(t) => Math.abs(document.querySelector('audio').currentTime - t) < 0.5", arg=start)
    assert page.locator("mark.extraction.current").count() >= 1


def test_relocated_and_detached_anchors_are_shown_with_their_debate(page) -> None:
    page.goto("notes/cvl-2025-05-15.html")
    page.locator("details#evidence > summary").click()
    relocated = page.locator("#entry-cvl-0515-livraison-date")
    assert "ancre déplacée" in relocated.inner_text() and "[-6-] {+5+}" in relocated.inner_text()
    assert page.locator('mark[data-ext~="cvl-0515-livraison-date"]').count() >= 1
    detached = page.locator("#entry-cvl-0515-fermeture-epreuves")
    assert "ancre détachée" in detached.inner_text() and detached.locator(".comment").count() == 2
    assert page.locator('mark[data-ext~="cvl-0515-fermeture-epreuves"]').count() == 0


WIKI = "notes/cvl-wiki-budget.html"


def test_citation_preview_on_hover_and_on_keyboard_focus(page) -> None:
    page.goto(WIKI)
    first = page.locator(".note-body a.citation").first
    first.hover()
    preview = page.locator("#citation-preview")
    assert preview.is_visible()
    assert "4 200 €" in preview.inner_text() and "Séance budgétaire du 14 novembre 2024" in preview.inner_text()
    page.mouse.move(0, 0)
    assert preview.is_hidden()
    first.focus()
    assert preview.is_visible() and first.get_attribute("aria-describedby") == "citation-preview"
    page.keyboard.press("Escape")
    assert preview.is_hidden()


def test_first_tap_previews_second_tap_follows(browser, site_url) -> None:
    context = browser.new_context(base_url=site_url, has_touch=True, is_mobile=True, viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.goto(WIKI)
    link = page.locator(".note-body a.citation").first
    link.tap()
    assert page.locator("#citation-preview").is_visible()
    assert page.url.endswith(WIKI), "the first tap only previews"
    link.tap()
    page.wait_for_url("**/cvl-2024-11-14.html#ext-cvl-1114-budget-total")
    context.close()


def test_following_a_citation_highlights_every_portion(page) -> None:
    page.goto("notes/cvl-synthese-budget-2024-2025.html")
    link = page.locator('.note-body a.citation[href$="#ext-cvl-1114-seuil-statuts"]')
    link.click()
    page.wait_for_url("**/cvl-2024-11-14.html#ext-cvl-1114-seuil-statuts")
    marks = page.locator('mark[data-ext~="cvl-1114-seuil-statuts"]')
    assert marks.count() >= 1
    plain = page.evaluate("getComputedStyle(document.querySelector('mark.extraction:not(.current)')).backgroundImage")
    for index in range(marks.count()):
        style = marks.nth(index).evaluate("m => getComputedStyle(m).backgroundImage + '|' + getComputedStyle(m).outlineStyle")
        image, outline = style.split("|")
        assert image != plain and outline != "none", "every portion is emphasised"
    assert marks.first.is_visible(), "scrolled to the passage"


def test_contest_link_carries_the_claim_id(page) -> None:
    page.goto(WIKI)
    contest = page.locator(".note-body a.contest").first
    claim = contest.get_attribute("data-claim")
    assert claim and claim.startswith("claim-") and page.locator(f'[id="{claim}"]').count() == 1
    href = contest.get_attribute("href")
    assert href.startswith("mailto:") and claim in href


def test_notebook_tabs_are_keyboard_usable(page) -> None:
    page.goto("notebooks/cvl.html")
    notes_tab = page.locator('.tabs a[role="tab"]').first
    assert page.locator("#tab-notes").is_visible() and page.locator("#tab-syntheses").is_hidden()
    notes_tab.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.locator("#tab-syntheses").is_visible() and page.locator("#tab-notes").is_hidden()
    assert "remplacée" in page.locator("#tab-syntheses").inner_text()


def test_the_evidence_panel_says_the_state_its_provenance_and_its_limit(page) -> None:
    page.goto(WIKI)
    verified = page.locator(".note-body a.citation.state-verified").first
    verified.hover()
    text = page.locator("#citation-preview").inner_text()
    assert "vérifié" in text and "Jugé par une personne" in text and "ne dit pas que l'affirmation est vraie" in text
    weak = page.locator(".note-body a.citation.state-weak").first
    weak.hover()
    assert "faible" in page.locator("#citation-preview").inner_text()


def test_search_finds_a_note_by_a_word_of_its_body_and_filters_narrow(page) -> None:
    page.goto("index.html")
    page.keyboard.press("/")
    page.wait_for_url("**/search.html")
    page.fill("#search-input", "propriétaire")
    page.wait_for_selector(".search-results li a")
    titles = page.locator(".search-results li a").all_inner_texts()
    assert "Séance budgétaire du 14 novembre 2024" in titles
    page.fill("#search-input", "budget")
    page.wait_for_function("() => document.querySelectorAll('.search-results li').length > 3")
    before = page.locator(".search-results li").count()
    page.select_option('select[name="notebook"]', "Veille financement")
    page.wait_for_function("(n) => document.querySelectorAll('.search-results li').length < n", arg=before)
    page.locator(".search-results li a").first.click()
    page.wait_for_load_state()
    assert "/notes/" in page.url


def test_search_results_are_the_same_across_builds(browser, site_url, example_site, tmp_path) -> None:
    """Pagefind 1.5.2 names some shards differently from build to build: equality is checked
    by search results, not bytes."""
    from pathlib import Path

    from generator.pipeline import build
    content = Path(__file__).resolve().parents[2] / "content"
    build(content, tmp_path / "again")
    import functools
    import threading
    from http.server import ThreadingHTTPServer

    from tests.browser.conftest import _Handler
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(tmp_path / "again")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        results = []
        for url in (site_url, f"http://127.0.0.1:{server.server_address[1]}/"):
            context = browser.new_context(base_url=url)
            page = context.new_page()
            page.goto("search.html?q=budget")
            page.wait_for_selector(".search-results li a")
            results.append(page.locator(".search-results li a").evaluate_all("as => as.map(a => a.getAttribute('href'))"))
            context.close()
        assert results[0] == results[1] and results[0]
    finally:
        server.shutdown()
        server.server_close()


ANSWER = "notes/subvention-du-foyer.html"


def _folded(text: str) -> str:
    return "".join(text.split())


def test_every_citation_of_a_saved_answer_lands_on_its_highlighted_passage(page) -> None:
    from urllib.parse import parse_qs, urlsplit

    page.goto(ANSWER)
    links = page.locator(".note-body a.citation.quote")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert len(hrefs) == 4, "the example answer's four citations"
    for href in hrefs:
        page.goto(ANSWER)
        page.locator(f'.note-body a.citation[href="{href}"]').first.click()
        parts = urlsplit(href)
        page.wait_for_url(f"**/{parts.path}?*#{parts.fragment}")
        quoted = parse_qs(parts.query)["quote"][0]
        marks = page.locator("mark.quoted.current")
        assert marks.count() >= 1, href
        # the highlighted words are the note's own, in the element the address names
        assert _folded("".join(marks.all_inner_texts())) == _folded(quoted)
        assert page.locator(f"#{parts.fragment} mark.quoted.current").count() == marks.count()
        assert marks.first.evaluate("m => { const r = m.getBoundingClientRect(); "
                                    "return r.top >= 0 && r.bottom <= window.innerHeight; }"), "scrolled into view"


def test_an_answer_citation_previews_the_notes_words_and_its_state(page) -> None:
    page.goto(ANSWER)
    citation = page.locator(".note-body a.citation.quote").first
    citation.focus()
    preview = page.locator("#citation-preview")
    assert preview.is_visible()
    assert preview.locator("blockquote").inner_text() == citation.get_attribute("data-preview-quote")
    assert "vérifié" in preview.locator(".state").inner_text()
    assert preview.locator(".actions a").first.get_attribute("href") == citation.get_attribute("href")


def test_an_answer_citation_lands_on_its_element_without_script(browser, site_url) -> None:
    from urllib.parse import urlsplit

    context = browser.new_context(base_url=site_url, java_script_enabled=False)
    page = context.new_page()
    page.goto(ANSWER)
    href = page.locator(".note-body a.citation.quote").first.get_attribute("href")
    page.goto("notes/" + href)
    target = urlsplit(href).fragment
    assert page.evaluate("document.querySelector(':target') && document.querySelector(':target').id") == target
    assert page.locator("mark.quoted").count() == 0, "no script, no highlight: the element itself is marked"
    context.close()


def test_a_hostile_quote_in_the_address_is_text_never_markup(page) -> None:
    from urllib.parse import quote

    page.goto(ANSWER)
    href = page.locator(".note-body a.citation.quote").first.get_attribute("href")
    fragment = href.split("#")[1]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"notes/cvl-2025-03-13.html?quote={quote('<img src=x onerror=alert(1)>')}#{fragment}")
    assert page.locator("mark.quoted").count() == 0 and page.locator("img[src=x]").count() == 0
    assert errors == []
