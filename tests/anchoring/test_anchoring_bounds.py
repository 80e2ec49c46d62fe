"""Bounded anchoring (issue 19): a quote that matches nowhere exactly costs at most the
note's relocation budget — counted in work steps and in memory, never timed — and past
it is detached with its reason; a relocation never takes a neighbouring element's text."""

from __future__ import annotations

import datetime as dt
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.anchoring import AnchorStatus
from generator.anchoring.elements import segment
from generator.anchoring.exact import MIN_INDEXED, SCAN_ALLOWANCE, ExactSearch
from generator.anchoring.fuzzy import Budget, find_approximate
from generator.anchoring.resolve import (
    MAX_OCCURRENCES,
    MAX_RELOCATED_LENGTH,
    RELOCATION_BUDGET_BASE,
    RELOCATION_BUDGET_PER_CHARACTER,
    project,
    relocation_budget,
    resolve_quote,
)
from generator.corpus.model import Extraction, Note, NoteType, SourceRef
from generator.markup import parse

MEMORY_BOUND = 64 * 2**20
"""Peak memory (tracemalloc) allowed to resolve the worst cases, whatever their size."""


def note(body: str, quotes: list[str]) -> Note:
    extractions = tuple(Extraction(f"x{i}", "n", quote, "", "", None, "fait", "Test", None, False, (),
                                   SourceRef("notes/n.extractions.yaml", i + 2)) for i, quote in enumerate(quotes))
    return Note("n", "N", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, body, 1, extractions,
                SourceRef("notes/n.md", 1))


def resolved(body: str, quotes: list[str], trace: bool = True):
    """Anchors of ``quotes`` in ``body`` with the note's shared budget, its limit and
    what was spent, and the peak memory used (0 untraced: tracing is slow)."""
    doc = segment(parse(body), 1)
    projection = project(doc.elements)
    budget = relocation_budget(projection)
    limit = budget.left
    if trace:
        tracemalloc.start()
    try:
        anchors = [resolve_quote(projection, doc.elements, quote, budget=budget) for quote in quotes]
        peak = tracemalloc.get_traced_memory()[1] if trace else 0
    finally:
        if trace:
            tracemalloc.stop()
    return anchors, limit, budget.spent, peak


@pytest.mark.parametrize(("body", "quote"), [
    ("a" * 20_000, "a" * 10_000 + "b"),  # was 26 s and 2.6 GB
    ("ab" * 50_000, "ab" * 20_000 + "c"),  # was a MemoryError traceback
])
def test_a_quote_too_long_to_relocate_is_detached_with_its_reason_at_no_cost(body, quote) -> None:
    (anchor,), _limit, spent, peak = resolved(body, [quote])
    assert anchor.status is AnchorStatus.DETACHED
    assert f"too long to relocate (at most {MAX_RELOCATED_LENGTH})" in anchor.reason
    assert spent == 0 and peak < MEMORY_BOUND


@pytest.mark.parametrize(("body", "quote"), [
    ("a" * 20_000, "a" * 1_900 + "b"),
    ("ab" * 50_000, "ab" * 950 + "c"),
    ("ab" * 50_000, "c" + "ab" * 950),
])
def test_the_longest_relocatable_quotes_in_repetitive_text_stay_within_the_budget(body, quote) -> None:
    (anchor,), limit, spent, peak = resolved(body, [quote])
    assert spent <= limit and peak < MEMORY_BOUND
    assert limit == RELOCATION_BUDGET_BASE + RELOCATION_BUDGET_PER_CHARACTER * len(body)
    if anchor.status is AnchorStatus.DETACHED:  # the budget ran out, or too many places: said so
        assert "not relocated" in anchor.reason or "resemble" in anchor.reason


def test_two_hundred_edited_quotes_in_a_200_kb_note_share_one_bounded_budget() -> None:
    rng = random.Random(3)
    words = ["le", "conseil", "la", "séance", "budget", "foyer", "élèves", "vote", "région", "subvention"]
    body = "\n\n".join(" ".join(rng.choice(words) for _ in range(60)) for _ in range(500))
    quotes = []
    for _ in range(200):
        start = rng.randrange(len(body) - 300)
        passage = body[start:start + 200]
        quotes.append(passage[:50] + "ZZ" + passage[52:])
    anchors, limit, spent, _ = resolved(body, quotes, trace=False)
    assert spent <= limit  # (memory: per quote, nothing kept between quotes; traced in the cases above)
    refused = [a for a in anchors if a.status is AnchorStatus.DETACHED and "cost too much" in a.reason]
    assert refused, "the budget is what stops a note's worth of hostile quotes"
    assert all(a.status is not AnchorStatus.ANCHORED for a in anchors)


def test_the_budget_grows_with_the_note_only() -> None:
    small, large = project(segment(parse("mot " * 100), 1).elements), project(segment(parse("mot " * 100_000), 1).elements)
    assert relocation_budget(large).left - relocation_budget(small).left == \
        RELOCATION_BUDGET_PER_CHARACTER * (len(large.text) - len(small.text))


def test_a_search_the_budget_cannot_pay_is_refused_before_it_runs() -> None:
    from generator.anchoring.fuzzy import TooCostly
    budget = Budget(1_000)
    with pytest.raises(TooCostly):
        find_approximate("budget du foyer voté", "x" * 100_000 + "budget du foyer vote", 2, Budget(10))
    assert find_approximate("budget du foyer voté", "x" * 100 + "budget du foyer vote", 2, budget)
    assert 0 < budget.spent <= 1_000


def test_a_quote_found_too_often_is_detached_without_counting_every_place() -> None:
    (anchor,), *_ = resolved("mot " * 50_000, ["mot"])
    assert anchor.status is AnchorStatus.DETACHED
    assert f"more than {MAX_OCCURRENCES} times" in anchor.reason


def _prose(rng: random.Random, words: int, vocabulary: int) -> str:
    lexicon = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzéè") for _ in range(rng.randint(2, 9)))
               for _ in range(vocabulary)]
    return " ".join(rng.choice(lexicon) for _ in range(words))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([3, 40, 5_000]), st.data())
def test_the_index_finds_exactly_what_a_scan_finds(seed, vocabulary, data) -> None:
    rng = random.Random(seed)
    text = _prose(rng, 3_000, vocabulary)
    search = ExactSearch.for_quotes(text, 10**9)  # indexed whatever its size
    assert search.grams is not None
    for _ in range(20):
        start = data.draw(st.integers(0, len(text) - 1))
        needle = text[start:start + data.draw(st.integers(1, 250))]
        if data.draw(st.booleans()):  # a needle that may be nowhere
            needle = needle[:-1] + data.draw(st.sampled_from("zq é"))
        plain = [i for i in range(len(text)) if text.startswith(needle, i)][:MAX_OCCURRENCES + 1]
        assert search.occurrences(needle, MAX_OCCURRENCES) == plain


def test_many_extractions_in_one_note_cost_each_a_bounded_amount() -> None:
    """Near-linear in extractions: in prose, a quote long enough is found through the
    note's index, never by scanning the note (which made 100,000 of them a scan of
    hundreds of gigabytes): the scanning allowance stays whole."""
    rng = random.Random(5)
    text = _prose(rng, 200_000, 20_000)
    search = ExactSearch.for_quotes(text, 50_000)
    for _ in range(5_000):
        start = rng.randrange(len(text) - 300)
        needle = text[start:start + rng.randint(MIN_INDEXED, 200)]
        assert start in search.occurrences(needle, MAX_OCCURRENCES)
    assert search.scan_left == SCAN_ALLOWANCE


def test_short_quotes_past_the_scanning_allowance_are_detached_with_the_reason() -> None:
    rng = random.Random(2)
    body = _prose(rng, 20_000, 3_000)
    doc = segment(parse(body), 1)
    projection = project(doc.elements)
    exact = ExactSearch(projection.text, scan_left=len(projection.text) * 10)
    anchors = [resolve_quote(projection, doc.elements, body[i * 7:i * 7 + 12], exact=exact) for i in range(40)]
    refused = [a for a in anchors if "search allowance is spent" in a.reason]
    assert refused and all(a.status is AnchorStatus.DETACHED for a in refused)
    assert exact.scan_left >= 0


def test_relocation_does_not_borrow_the_end_of_the_previous_list_item() -> None:
    """A real case: "ZZZ" before a quote that starts a list item was relocated as
    ``[-ZZZNo-] {+d. No+}``, taking "d." from the item before (INV-6)."""
    body = ("- Le foyer reste ouvert le mercredi, décidé.\n"
            "- No objection n'est soulevée par les délégués présents ce jour-là.\n")
    doc = segment(parse(body), 1)
    anchor = resolve_quote(project(doc.elements), doc.elements,
                           "ZZZNo objection n'est soulevée par les délégués présents ce jour-là.")
    assert anchor.status is AnchorStatus.RELOCATED
    (portion,) = anchor.portions
    assert doc.elements[portion.element].text.startswith("No objection")
    assert doc.elements[portion.element].text[portion.start:portion.end].startswith("No objection")


def test_a_quote_over_two_blocks_may_still_relocate_over_both() -> None:
    body = "Le budget du foyer est voté.\n\nLa cantine rouvre lundi prochain.\n"
    doc = segment(parse(body), 1)
    anchor = resolve_quote(project(doc.elements), doc.elements,
                           "budget du foyer est voté.\n\nLa cantine rouvrira lundi prochain.")
    assert anchor.status is AnchorStatus.RELOCATED
    assert [p.element for p in anchor.portions] == [0, 1]


class _CountingMarks(list):
    """The marks of one element, counting every mark the renderer looks at."""

    seen = 0

    def __iter__(self):
        for mark in super().__iter__():
            _CountingMarks.seen += 1
            yield mark


def test_ten_thousand_marks_on_one_line_render_in_linear_work() -> None:
    """Each piece of text was compared with every mark, for every segment: 10,000
    extractions on one line took about 50 s. Now the marks are swept once."""
    from generator.anchoring import AnchoredNote
    from generator.site.markdown_html import Href, Mark, RenderState, render_body
    words = [f"mot{i}" for i in range(10_000)]
    doc = segment(parse(" ".join(words) + "\n"), 1)
    text, position, marks = doc.elements[0].text, 0, _CountingMarks()
    for number, word in enumerate(words):
        start = text.index(word, position)
        marks.append(Mark(start, start + len(word), f"x{number}"))
        position = start + len(word)
    _CountingMarks.seen = 0
    html = render_body(RenderState(AnchoredNote(doc, {}), {0: marks}, lambda raw, wiki: Href(raw)))
    assert _CountingMarks.seen <= 3 * len(marks)
    assert html.count("<mark ") == len(marks) and html.count('class="ext-anchor"') == len(marks)
    assert 'data-ext="x9999">mot9999</mark>' in html


def test_citation_markers_on_one_claim_cost_linear_work(tmp_path, monkeypatch) -> None:
    """Every pair re-normalised every other source of its claim: 10,000 markers on one
    line were 10⁸ normalisations (≈ 50 s). Counted here: normalisations per marker."""
    from generator.pipeline import check_content
    from generator.verification import states
    from support.corpus import copy_fixture, replace
    content = copy_fixture("small", tmp_path / "content")
    markers = 2_000  # enough to tell linear from quadratic (the old code: 4 × 10⁶ calls)
    replace(content, "notes/wiki-budget.md", "quatre mille euros [[ext:a-budget]].",
            "quatre mille euros « quatre mille » " + " ".join(["[[ext:a-budget]]"] * markers) + ".")
    calls = 0
    original = states.normalise_quote

    def counted(text: str) -> str:
        nonlocal calls
        calls += 1
        return original(text)

    monkeypatch.setattr(states, "normalise_quote", counted)
    analysis = check_content(content)
    pairs = [a for a in analysis.assessments["wiki-budget"] if a.link.marker.key == "a-budget"]
    assert len(pairs) == markers and all(a.verbatim_ok for a in pairs)
    assert calls <= 2 * markers + 10


def test_a_quote_that_fits_all_along_a_uniform_run_is_not_placed_by_a_guess() -> None:
    """Every end position in "x" × 200,000 is within one edit of "x" × 500 + "y": that
    is thousands of places, and was relocated onto the first."""
    anchors, *_ = resolved("x" * 200_000, ["x" * 500 + "y"], trace=False)
    assert anchors[0].status is AnchorStatus.DETACHED
