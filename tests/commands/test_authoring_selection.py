"""The pure cores of ``carnet serve --edit``: a browser selection placed on the note's own
text by the anchoring engine, and the edits inside one extraction of an extractions file
(its own layout kept, every other byte where it was)."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.anchoring.elements import Element, segment
from generator.anchoring.normalise import normalise
from generator.anchoring.resolve import AnchorStatus, project, resolve_quote
from generator.authoring.nested import append_comment, set_masked, withdraw_comment
from generator.authoring.selection import End, Unplaced, place_selection
from generator.markup import parse_bounded
from generator.yamledit import EditError, records

BODY = """## Foyer

Les élus demandent que le foyer reste ouvert pendant la pause méridienne, *y compris le mercredi*.

- Remplacer les canapés abîmés.
- Ici le budget est voté.

Plus loin, on redit que le budget est voté.
"""


def elements_of(body: str) -> list[Element]:
    return segment(parse_bounded(body).tokens, 1, body=body).elements


def test_a_selection_over_emphasis_and_two_paragraphs_records_the_notes_own_text() -> None:
    elements = elements_of(BODY)
    paragraph, item = elements[1], elements[2]
    # the page's text around the selection, as the browser shows it: the emphasis is no character
    placed = place_selection(elements, End(paragraph.id, "Les élus demandent que le foyer reste ouvert pendant la "),
                             End(item.id, " canapés abîmés."))
    assert placed.quote == "pause méridienne, y compris le mercredi.\n\nRemplacer les"
    assert (placed.prefix, placed.occurrence) == ("", None)
    anchor = resolve_quote(project(elements), elements, placed.quote)
    assert anchor.status is AnchorStatus.ANCHORED and anchor.portions == placed.portions
    assert [p.element for p in placed.portions] == [1, 2]


def test_a_repeated_passage_gets_what_tells_it_apart() -> None:
    elements = elements_of(BODY)
    last = elements[-1]
    placed = place_selection(elements, End(last.id, "Plus loin, on redit que "), End(last.id, "."))
    assert placed.quote == "le budget est voté"
    assert placed.prefix or placed.occurrence
    anchor = resolve_quote(project(elements), elements, placed.quote, placed.prefix, "", placed.occurrence)
    assert anchor.status is AnchorStatus.ANCHORED and anchor.portions == placed.portions
    assert anchor.portions[0].element == len(elements) - 1, "the second occurrence, not the first"


@pytest.mark.parametrize(("start", "end", "why"), [
    (End("e-0000000000", ""), End("e-0000000000", ""), "not in the note as it is now"),
    (End("@2", "Remplacer"), End("@1", ""), "ends before it starts"),
    (End("@1", "Ce texte n'est pas dans la note"), End("@1", ""), "not the note's text"),
    (End("@2", "Remplacer les canapés abîmés."), End("@2", ""), "nothing is selected"),
])
def test_a_selection_that_cannot_be_placed_is_refused_with_its_reason(start: End, end: End, why: str) -> None:
    elements = elements_of(BODY)

    def real(given: End) -> End:
        return End(elements[int(given.element[1:])].id, given.context) if given.element.startswith("@") else given

    with pytest.raises(Unplaced, match=why):
        place_selection(elements, real(start), real(end))


SIDECAR = """# kept as written
extractions:
  - id: a
    quote: un passage
    author: Inès
    comments:
      - id: c-1
        author: Tom
        date: 2024-09-21
        text: |
          Deux lignes,
          pas une.
      - id: c-2
        author: Léa
        date: 2024-09-22
        stance: agree
        text: Oui.
  - id: b   # sans commentaire
    quote: autre passage
    author: Inès
    masked: false
  - {id: c, quote: en ligne, author: Inès}
"""


def kept_except(old: str, new: str, changed: set[tuple[str, int]]) -> None:
    before, after = records(old), records(new)
    for key, text in before.items():
        if key not in changed:
            assert after[key] == text, key
    assert "# kept as written" in new and "# sans commentaire" in new


def test_a_comment_is_appended_to_an_extraction_in_the_files_layout() -> None:
    comment = {"id": "c-3", "author": "Zoé", "date": dt.date(2026, 1, 2), "stance": "nuance", "text": "Bien."}
    new = append_comment(SIDECAR, 0, comment)
    assert yaml.safe_load(new)["extractions"][0]["comments"][-1] == comment
    kept_except(SIDECAR, new, {("extractions", 0)})
    first = append_comment(SIDECAR, 1, comment)  # no comments yet: the list is made
    assert yaml.safe_load(first)["extractions"][1]["comments"] == [comment]
    kept_except(SIDECAR, first, {("extractions", 1)})
    with pytest.raises(EditError, match="flow mapping"):
        append_comment(SIDECAR, 2, comment)


def test_masking_sets_the_flag_and_touches_nothing_else() -> None:
    for index in (0, 1):
        new = set_masked(SIDECAR, index)
        assert yaml.safe_load(new)["extractions"][index]["masked"] is True
        kept_except(SIDECAR, new, {("extractions", index)})


def test_a_withdrawn_comment_keeps_a_tombstone_and_loses_its_text() -> None:
    digest = hashlib.sha256(b"Deux lignes,\npas une.").hexdigest()
    new = withdraw_comment(SIDECAR, 0, 0, {"date": dt.date(2026, 1, 3), "reason": "erreur"}, digest)
    said = yaml.safe_load(new)["extractions"][0]["comments"][0]
    assert "text" not in said and "Deux lignes" not in new
    assert said["text_sha256"] == digest and said["withdrawn"] == {"date": dt.date(2026, 1, 3), "reason": "erreur"}
    assert yaml.safe_load(new)["extractions"][0]["comments"][1] == yaml.safe_load(SIDECAR)["extractions"][0]["comments"][1]
    kept_except(SIDECAR, new, {("extractions", 0)})


EXAMPLE = Path(__file__).resolve().parents[2] / "content"


@pytest.fixture(scope="module")
def example_elements() -> list[list[Element]]:
    from generator.anchoring import anchor_note
    from generator.corpus.load import load_corpus

    corpus, _problems = load_corpus(EXAMPLE)
    found = [anchor_note(note)[0].document.elements for _slug, note in sorted(corpus.notes.items())]
    return [elements for elements in found if any(normalise(e.text)[0] for e in elements)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_selection_of_the_example_lands_exactly_where_it_was_made_or_is_refused(
        example_elements: list[list[Element]], data: st.DataObject) -> None:
    """The property behind 'never the browser's string': whatever range is selected, the
    record written anchors on exactly that range of the note's text, or nothing is written."""
    elements = example_elements[data.draw(st.integers(0, len(example_elements) - 1), label="note")]
    texted = [i for i, e in enumerate(elements) if normalise(e.text)[0]]
    first = data.draw(st.sampled_from(texted))
    last = data.draw(st.sampled_from([i for i in texted if i >= first][:4]))
    head, tail = normalise(elements[first].text)[0], normalise(elements[last].text)[0]
    start = data.draw(st.integers(0, len(head)))
    end = data.draw(st.integers(start if first == last else 0, len(tail)))
    try:
        placed = place_selection(elements, End(elements[first].id, head[:start]), End(elements[last].id, tail[end:]))
    except Unplaced:
        return
    anchor = resolve_quote(project(elements), elements, placed.quote, placed.prefix, "", placed.occurrence)
    assert anchor.status is AnchorStatus.ANCHORED and anchor.portions == placed.portions
    if first == last:
        selected = [head[start:end]]
    else:
        selected = [head[start:], *(normalise(e.text)[0] for e in elements[first + 1:last]), tail[:end]]
    assert normalise(placed.quote)[0] == normalise(" ".join(selected))[0], "the note's text over the selection"


def test_a_portion_is_given_to_the_page_in_normalised_offsets() -> None:
    from generator.authoring.operations import normalised_span

    text = "  Le  budget\u00a0est\n voté."
    start = text.index("budget")
    assert normalised_span(text, start, start + len("budget\u00a0est")) == {"start": 3, "end": 13}
    assert normalise(text)[0][3:13] == "budget est"
