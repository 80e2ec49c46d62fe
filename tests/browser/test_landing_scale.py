"""Issue 57 in Chromium: every page fits a 360 px screen (no sideways scroll), a
debate-sourced citation lands on its comment, emphasised, with the passage it comments on in
view, a search excerpt keeps Pagefind's marks (as nodes, never parsed HTML) and no gap, and
no hit is counted in the site's grammar."""

from __future__ import annotations

import pytest

from tests.browser.test_reader import html_pages

pytestmark = pytest.mark.slow  # drives a real Chromium

WIKI = "notes/cvl-wiki-budget.html"

WIDTH = """() => { const wide = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect(); return r.width && r.right > document.documentElement.clientWidth + 0.5; })
  .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
  return [document.documentElement.scrollWidth, wide]; }"""


def test_every_page_fits_a_360_px_screen(browser, site_url, example_site) -> None:
    context = browser.new_context(base_url=site_url, viewport={"width": 360, "height": 740})
    page = context.new_page()
    wide = {}
    for path in html_pages(example_site):
        page.goto(path, wait_until="load")
        width, culprits = page.evaluate(WIDTH)
        if width > 360:
            wide[path] = (width, culprits)
    context.close()
    assert wide == {}, wide


def test_a_debate_citation_lands_on_its_comment_emphasised_with_its_passage_in_view(page) -> None:
    page.set_viewport_size({"width": 1000, "height": 700})
    page.goto(WIKI)
    citation = page.locator('.note-body a.citation[href*="#com-"]').first
    href = citation.get_attribute("href")
    comment_id = href.split("#", 1)[1]
    citation.click()
    page.wait_for_load_state()
    page.wait_for_function("(id) => location.hash === '#' + id", arg=comment_id)
    comment = page.locator(f"#{comment_id}")
    assert comment.is_visible()
    landed = page.evaluate("""(id) => { const c = document.getElementById(id);
      const other = [...document.querySelectorAll('.comment')].find(o => o !== c);
      const s = getComputedStyle(c);
      const r = c.getBoundingClientRect();
      const quote = c.closest('.extraction-entry').querySelector('blockquote').getBoundingClientRect();
      return {bg: s.backgroundColor, outline: s.outlineStyle, other: other ? getComputedStyle(other).backgroundColor : null,
              otherOutline: other ? getComputedStyle(other).outlineStyle : null,
              top: r.top, bottom: r.bottom, quoteTop: quote.top, quoteBottom: quote.bottom,
              marked: document.querySelectorAll('mark.extraction.current').length}; }""", comment_id)
    height = page.viewport_size["height"]
    assert landed["other"] is not None, "another comment to compare with"
    assert (landed["bg"], landed["outline"]) != (landed["other"], landed["otherOutline"]), landed
    assert landed["top"] >= 0 and landed["bottom"] <= height, ("the comment is on screen", landed)
    assert landed["quoteTop"] >= 0 and landed["quoteBottom"] <= height, ("the passage it comments on too", landed)
    assert landed["marked"] >= 1, "the passage is emphasised in the body as well"


def test_search_excerpts_keep_their_marks_as_nodes_and_no_gap(page) -> None:
    page.goto("search.html?q=budget")
    page.wait_for_selector(".search-results li p mark")
    excerpts = page.evaluate("""() => [...document.querySelectorAll('.search-results li p')].map(p =>
      [p.textContent, p.querySelectorAll('mark').length, [...p.querySelectorAll('mark')].map(m => m.textContent),
       p.querySelectorAll('*:not(mark)').length])""")
    assert excerpts and all(marks >= 1 for _text, marks, _words, _other in excerpts), excerpts
    for text, _marks, words, others in excerpts:
        assert "<" not in text and "&amp;" not in text and others == 0, text
        assert all(word.lower().startswith("budg") for word in words), words  # stems: "budgétaire" too
        assert " . " not in text and " , " not in text, text


def test_no_hit_is_counted_in_the_sites_grammar(page) -> None:
    page.goto("search.html?q=zzxxqqunfound")
    page.wait_for_function("() => document.querySelector('.search-status').textContent !== ''")
    assert page.locator(".search-status").inner_text() == "0 résultat"
