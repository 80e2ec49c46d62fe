"""How an article's evidence reads in the browser (issue 20): a superseded act says so
before its text, and a claim's hidden contest link leaves no gap after its citation."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # drives a real Chromium

WIKI = "notes/cvl-wiki-budget.html"
SUPERSEDED = "notes/cvl-synthese-budget-provisoire.html"


def test_the_superseded_notice_is_above_the_body(page) -> None:
    page.goto(SUPERSEDED)
    notice = page.locator(".act-status.status-superseded")
    assert notice.count() == 1
    assert notice.bounding_box()["y"] < page.locator(".note-body").bounding_box()["y"]


def test_no_gap_between_a_citation_and_the_punctuation_after_it(page) -> None:
    page.goto(WIKI)
    page.mouse.move(0, 0)  # nothing hovered: the contest links are hidden
    gaps = page.evaluate("""() => [...document.querySelectorAll('.note-body .claim-end')].flatMap(end => {
        const next = end.nextSibling;
        if (!next || next.nodeType !== Node.TEXT_NODE || !/^[.,;:!?]/.test(next.data)) return [];
        const range = document.createRange();
        range.setStart(next, 0); range.setEnd(next, 1);
        const citation = end.previousElementSibling.getBoundingClientRect();
        const mark = range.getBoundingClientRect();
        return [{gap: mark.left - citation.right, sameLine: Math.abs(mark.top - citation.top) < citation.height,
                 width: end.getBoundingClientRect().width}];
    })""")
    assert gaps, "the example wiki has citations followed by punctuation"
    for gap in gaps:
        assert gap["width"] == 0 and gap["sameLine"] and gap["gap"] < 3, gap


def test_the_contest_link_shows_on_hover_without_moving_the_text(page) -> None:
    page.goto(WIKI)
    end = page.locator(".note-body .claim-end:has(a.contest)").first
    element = end.locator("xpath=ancestor::*[contains(concat(' ', @class, ' '), ' element ')][1]")
    before = element.bounding_box()
    element.hover()
    page.wait_for_timeout(250)
    link = end.locator("a.contest")
    assert float(link.evaluate("a => getComputedStyle(a).opacity")) == 1.0
    assert element.bounding_box() == before


def test_an_unsourced_claim_is_visibly_marked_and_leads_to_the_panel(page) -> None:
    page.goto(WIKI)
    mark = page.locator(".note-body sup.unsourced-claim a").first
    assert mark.is_visible()
    box = mark.bounding_box()
    assert box["width"] > 10 and box["height"] > 5
    assert mark.get_attribute("title") and mark.get_attribute("href") == "#verification"


def test_each_weak_reason_has_its_own_look(page) -> None:
    page.goto(WIKI)
    looks = page.evaluate("""() => Object.fromEntries(['not-judged', 'partial', 'verbatim-failed', 'detached']
        .map(r => [r, document.querySelector(`a.citation.state-weak.reason-${r}`)])
        .filter(([, a]) => a)
        .map(([r, a]) => [r, getComputedStyle(a).textDecorationLine + ' ' + getComputedStyle(a).textDecorationStyle]))""")
    assert len(looks) >= 2, looks  # the example wiki has unjudged and partly supported pairs
    assert len(set(looks.values())) == len(looks), looks
