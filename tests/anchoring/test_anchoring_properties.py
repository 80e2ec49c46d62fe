"""Properties of anchoring on generated notes (hypothesis): it lands exactly, never on a
separator, never guesses, is stable under edits elsewhere, and renders losslessly."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from generator.anchoring import AnchoredNote, AnchorStatus
from generator.anchoring.elements import segment
from generator.anchoring.normalise import normalise_quote
from generator.anchoring.resolve import project, resolve_quote
from generator.markup import parse
from generator.site.markdown_html import Href, Mark, RenderState, render_body

pytestmark = pytest.mark.slow  # hypothesis properties over many generated notes

WORDS = ["le", "budget", "foyer", "vote", "élèves", "conseil", "région", "dépense", "statuts", "séance",
         "l’accord", "«", "»", "500 €", "a", "été", "voté", "pour", "la", "cour"]
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

sentence = st.lists(st.sampled_from(WORDS), min_size=3, max_size=14).map(" ".join)
paragraphs = st.lists(sentence, min_size=1, max_size=6)


def body_of(texts: list[str]) -> str:
    return "\n\n".join(texts) + "\n"


def document(texts: list[str]):
    doc = segment(parse(body_of(texts)), 1)
    return doc, project(doc.elements)


def overlapping_count(text: str, needle: str) -> int:
    return sum(text.startswith(needle, i) for i in range(len(text)))


def portion_text(doc, anchor) -> str:
    return " ".join(doc.elements[p.element].text[p.start:p.end] for p in anchor.portions)


@st.composite
def note_and_quote(draw):
    texts = draw(paragraphs)
    _doc, projection = document(texts)
    assume(projection.text)
    start = draw(st.integers(0, len(projection.text) - 1))
    end = draw(st.integers(start + 1, min(len(projection.text), start + 120)))
    quote = projection.text[start:end].strip()
    assume(len(quote) >= 3)
    return texts, quote


@SETTINGS
@given(note_and_quote())
def test_a_unique_quote_lands_exactly_and_never_on_a_separator(case) -> None:
    texts, quote = case
    doc, projection = document(texts)
    anchor = resolve_quote(projection, doc.elements, quote)
    occurrences = overlapping_count(projection.text, normalise_quote(quote))
    if occurrences == 1:
        assert anchor.status is AnchorStatus.ANCHORED
        assert normalise_quote(portion_text(doc, anchor)) == normalise_quote(quote)
        for portion in anchor.portions:
            text = doc.elements[portion.element].text
            assert 0 <= portion.start < portion.end <= len(text)
            assert not text[portion.start].isspace() and not text[portion.end - 1].isspace()
        assert len({p.element for p in anchor.portions}) == len(anchor.portions)
    else:
        assert anchor.status is AnchorStatus.DETACHED, "several places: never a guess"


@SETTINGS
@given(paragraphs, sentence)
def test_an_ambiguous_quote_is_detached(texts, repeated) -> None:
    doc, projection = document([*texts, repeated, *texts, repeated])
    anchor = resolve_quote(projection, doc.elements, repeated)
    assert anchor.status is AnchorStatus.DETACHED and anchor.candidates >= 2


@SETTINGS
@given(note_and_quote(), sentence, st.integers(0, 10))
def test_an_edit_elsewhere_does_not_move_the_anchor(case, added, where) -> None:
    texts, quote = case
    doc, projection = document(texts)
    before = resolve_quote(projection, doc.elements, quote)
    assume(before.status is AnchorStatus.ANCHORED)
    # elsewhere: before the first element the quote touches, or after the last one
    # (an identical paragraph would renumber the ids of repeated blocks: not elsewhere)
    assume(added not in texts)
    first = min(p.element for p in before.portions)
    last = max(p.element for p in before.portions)
    position = where % (len(texts) + 1)
    assume(position <= first or position > last)
    edited = list(texts)
    edited.insert(position, added)
    doc2, projection2 = document(edited)
    assume(overlapping_count(projection2.text, normalise_quote(quote)) == 1)
    after = resolve_quote(projection2, doc2.elements, quote)
    assert after.status is AnchorStatus.ANCHORED
    assert [doc.elements[p.element].text[p.start:p.end] for p in before.portions] == \
        [doc2.elements[p.element].text[p.start:p.end] for p in after.portions]
    assert [doc.elements[p.element].id for p in before.portions] == [doc2.elements[p.element].id for p in after.portions]


@st.composite
def quote_inside_a_paragraph(draw):
    texts = draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=6, max_size=16).map(" ".join),
                          min_size=1, max_size=5))
    index = draw(st.integers(0, len(texts) - 1))
    text = texts[index]
    start = draw(st.integers(0, max(0, len(text) - 20)))
    end = draw(st.integers(min(len(text), start + 20), len(text)))
    return texts, index, start, end


@SETTINGS
@given(quote_inside_a_paragraph(), st.integers(0, 1000), st.sampled_from("xyzqw"))
def test_an_edit_inside_the_quote_relocates_or_detaches_never_misplaces(case, offset, letter) -> None:
    texts, index, start, end = case
    quote = texts[index][start:end]
    assume(len(quote.strip()) >= 20 and overlapping_count(body_of(texts), quote) == 1)
    at = start + offset % (end - start)
    assume(not texts[index][at].isspace() and texts[index][at] != letter)
    edited = list(texts)
    edited[index] = texts[index][:at] + letter + texts[index][at + 1:]
    doc, projection = document(edited)
    # a quote may span paragraphs (read as one space between them): the edit must leave it
    # nowhere as it was, not even across two ("le le le le budget l" from "… le" and "le le le budget l…")
    assume(overlapping_count(" ".join(element.text for element in doc.elements), quote.strip()) == 0)
    anchor = resolve_quote(projection, doc.elements, quote)
    assert anchor.status in (AnchorStatus.RELOCATED, AnchorStatus.DETACHED)
    if anchor.status is AnchorStatus.RELOCATED:
        # the passage found is the edited one, in the edited paragraph: never elsewhere
        (portion,) = anchor.portions
        element = doc.elements[portion.element]
        assert element.text == edited[index].strip()
        shift = len(edited[index]) - len(edited[index].lstrip())
        budget = int(len(quote.strip()) * 0.1) + 1
        assert start - shift - budget <= portion.start and portion.end <= end - shift + budget
        assert portion.start < end - shift and start - shift < portion.end


class _TextOf(HTMLParser):
    """Plain text of each element (by id) and of each mark, from rendered HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.texts: dict[str, str] = {}
        self.marked: dict[str, str] = {}
        self.mark_ids: list[list[str]] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("br",):
            return
        self.stack.append(attributes.get("id") if "element" in (attributes.get("class") or "") else None)
        if tag == "mark":
            self.mark_ids.append(attributes["data-ext"].split())

    def handle_endtag(self, tag):
        if tag == "mark":
            self.mark_ids.pop()
        self.stack.pop()

    def handle_data(self, data):
        owner = next((i for i in reversed(self.stack) if i), None)
        if owner:
            self.texts[owner] = self.texts.get(owner, "") + data.replace("\n", " ")
        for ids in self.mark_ids:
            for ext in ids:
                self.marked[ext] = self.marked.get(ext, "") + data.replace("\n", " ")


inline_word = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(WORDS).map(lambda w: f"*{w}*"),
    st.sampled_from(WORDS).map(lambda w: f"**{w} {w}**"),
    st.sampled_from(WORDS).map(lambda w: f"`{w}`"),
    st.sampled_from(WORDS).map(lambda w: f"[{w}](https://example.org/{len(w)})"),
)
rich_paragraph = st.lists(inline_word, min_size=2, max_size=12).map(" ".join)


@SETTINGS
@given(st.lists(rich_paragraph, min_size=1, max_size=4), st.data())
def test_rendered_segments_rejoin_to_the_element_text_across_inline_markup(texts, data) -> None:
    body = body_of(texts)
    doc = segment(parse(body), 1)
    marks: dict[int, list[Mark]] = {}
    expected: dict[str, str] = {}
    for number in range(data.draw(st.integers(0, 4))):
        index = data.draw(st.integers(0, len(doc.elements) - 1))
        text = doc.elements[index].text
        start = data.draw(st.integers(0, len(text) - 1))
        end = data.draw(st.integers(start + 1, len(text)))
        ext = f"x{number}"
        marks.setdefault(index, []).append(Mark(start, end, ext))
        expected[ext] = text[start:end]
    html = render_body(RenderState(AnchoredNote(doc, {}), marks, lambda raw, wiki: Href(raw)))
    reader = _TextOf()
    reader.feed(html)
    assert reader.texts == {e.id: e.text for e in doc.elements}, "no text lost or duplicated"
    assert reader.marked == dict(expected.items())
    assert html.count("<mark") == html.count("</mark>")


@st.composite
def quote_at_an_element_edge(draw):
    """List items; a quote of one item (or of two consecutive ones, written with a
    blank line between them, as quotes over two elements are), from its start or to
    its end; then an edit at that edge: letters added, or some removed."""
    items = draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=5, max_size=14).map(" ".join),
                          min_size=2, max_size=6, unique=True))
    index = draw(st.integers(0, len(items) - 1))
    spans_two = index + 1 < len(items) and draw(st.booleans())
    quote = items[index] + ("\n\n" + items[index + 1] if spans_two else "")
    at_start = draw(st.booleans())
    edit = draw(st.one_of(st.text("ZQXd. ", min_size=1, max_size=4).map(lambda t: ("add", t)),
                          st.integers(1, 3).map(lambda n: ("cut", n))))
    if edit[0] == "add":
        quote = edit[1] + quote if at_start else quote + edit[1]
    else:
        quote = quote[edit[1]:] if at_start else quote[:-edit[1]]
    covered = {index, index + 1} if spans_two else {index}
    return items, quote, covered


@SETTINGS
@given(quote_at_an_element_edge())
def test_a_relocation_never_takes_text_from_an_element_the_quote_did_not_span(case) -> None:
    """INV-6: separators belong to no portion, and a relocation is a match of the quote,
    not of its neighbours (a real quote prefixed with "ZZZ" was relocated onto the "d."
    ending the list item before it)."""
    items, quote, covered = case
    body = "".join(f"- {item}\n" for item in items)
    doc = segment(parse(body), 1)
    projection = project(doc.elements)
    assume(len(normalise_quote(quote)) >= 20)
    anchor = resolve_quote(projection, doc.elements, quote)
    if anchor.status is AnchorStatus.DETACHED:
        return
    assert {p.element for p in anchor.portions} <= covered
