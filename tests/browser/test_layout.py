"""The layout faults of issue 24, item 4, measured in Chromium: targets of at least 24 × 24 px,
a landed passage below the top edge, the transcript's player in view after landing on one of
its passages, a preview that opens above its citation near the bottom of the window, and a
notebook page's filters counted in the tab on show."""

from __future__ import annotations

TRANSCRIPT = "notes/cvl-2025-10-16-transcription.html"
WIKI = "notes/cvl-wiki-budget.html"

SIZES = """(selector) => [...document.querySelectorAll(selector)].filter(e => e.getClientRects().length)
  .map(e => { const r = e.getBoundingClientRect(); return [Math.round(r.width * 10) / 10, Math.round(r.height * 10) / 10]; })"""


def test_citations_and_play_buttons_are_targets_of_24_px_at_least(page) -> None:
    page.goto(WIKI)
    citations = page.evaluate(SIZES, ".note-body a.citation")
    assert citations and all(w >= 24 and h >= 24 for w, h in citations), citations
    page.goto(TRANSCRIPT)
    page.locator("details#evidence > summary").click()
    buttons = page.evaluate(SIZES, ".play-turn, .play-extraction")
    assert buttons and all(w >= 24 and h >= 24 for w, h in buttons), buttons


def test_a_landed_passage_has_room_above_it(page) -> None:
    page.goto("notes/cvl-2024-11-14.html#ext-cvl-1114-subvention-region")
    top = page.evaluate("document.querySelector('mark.extraction.current').getBoundingClientRect().top")
    assert 24 <= top < page.viewport_size["height"] / 2, top


def test_the_player_is_in_view_after_landing_on_a_transcript_passage(page) -> None:
    page.goto(TRANSCRIPT)
    entry = page.locator(".extraction-entry:has(.play-extraction)").last
    ext_id = entry.get_attribute("id")[len("entry-"):]
    page.goto(f"{TRANSCRIPT}#ext-{ext_id}")
    page.wait_for_function("() => document.querySelector('figure.media.cued')")
    player = page.evaluate("(() => { const r = document.querySelector('figure.media audio').getBoundingClientRect();"
                           " return [r.top, r.bottom]; })()")
    passage = page.evaluate("document.querySelector('mark.extraction.current').getBoundingClientRect().top")
    height = page.viewport_size["height"]
    assert player[0] >= 0 and player[1] <= height, ("the player is on screen", player)
    assert player[1] <= passage < height, ("the passage shows below it", player, passage)
    assert page.evaluate("window.scrollY") > 0, "the page did scroll down to the passage"


def test_a_preview_near_the_bottom_opens_above_its_citation(page) -> None:
    page.set_viewport_size({"width": 800, "height": 500})
    page.goto(WIKI)
    citation = page.locator(".note-body a.citation").first
    # the citation brought to the window's last lines, as a reader scrolling down would see it
    page.evaluate("""() => { const c = document.querySelector('.note-body a.citation');
      window.scrollBy(0, c.getBoundingClientRect().bottom - window.innerHeight + 10); }""")
    citation.hover()
    preview = page.locator("#citation-preview")
    assert preview.is_visible()
    box, link = preview.bounding_box(), citation.bounding_box()
    assert box and link and box["y"] + box["height"] <= 500 and box["y"] + box["height"] <= link["y"] + 1, (box, link)


def test_a_notebooks_filters_count_the_notes_of_the_tab_on_show(page) -> None:
    page.goto("notebooks/cvl.html")
    toggle = page.locator(".facet-toggle").first
    toggle.click()
    visible = page.evaluate("""() => [...document.querySelectorAll('[role=tabpanel]:not([hidden]) .note-item')]
      .filter(i => !i.hidden).length""")
    status = page.locator(".facet-status").inner_text()
    assert status.split()[0] == str(visible), (status, visible)
    page.locator("#tab-syntheses-label").click()
    visible = page.evaluate("""() => [...document.querySelectorAll('[role=tabpanel]:not([hidden]) .note-item')]
      .filter(i => !i.hidden).length""")
    status = page.locator(".facet-status").inner_text()
    assert status.split()[0] == str(visible), ("the tab's own count", status, visible)
    # and every tab's label counts what its list shows under the filters, out of its total
    for tab in ("notes", "wikis", "syntheses"):
        shown, total = page.evaluate(f"""() => {{
          const items = [...document.querySelectorAll('#tab-{tab} .note-item')];
          return [items.filter(i => !i.hidden).length, items.length]; }}""")
        assert page.locator(f"#tab-{tab}-label .count").inner_text() == f"{shown}/{total}", tab
    toggle.click()  # no filter left: the totals again
    assert page.locator("#tab-notes-label .count").inner_text() == str(page.locator("#tab-notes .note-item").count())
