"""Anchoring core: elements, normalisation with offset maps, quote → portions. Never guesses."""

from __future__ import annotations

import datetime as dt

import pytest

from generator.anchoring import AnchorStatus, anchor_note
from generator.anchoring.elements import SEPARATOR, segment
from generator.anchoring.normalise import normalise
from generator.anchoring.resolve import project, resolve_quote
from generator.corpus.model import Extraction, Note, NoteType, SourceRef
from generator.markup import link_is_safe, parse

BODY = """## Le budget

Le budget s'élève à *quatre mille* euros.
Il est voté.

- Premier point ;
- Second point.

| Poste | Montant |
| --- | --- |
| Foyer | 1 800 € |

> Une citation du proviseur.

```
code brut
```
"""


def doc(body: str = BODY):
    return segment(parse(body), body_line=5)


def test_elements_kinds_texts_and_lines() -> None:
    d = doc()
    assert [(e.kind, e.text) for e in d.elements] == [
        ("heading", "Le budget"),
        ("paragraph", "Le budget s'élève à quatre mille euros. Il est voté."),
        ("list_item", "Premier point ;"),
        ("list_item", "Second point."),
        ("table_row", "Poste Montant"),
        ("table_row", "Foyer 1 800 €"),
        ("blockquote", "Une citation du proviseur."),
        ("code", "code brut"),
    ]
    body_lines = BODY.split("\n")
    for element in d.elements:
        line = body_lines[element.line - 5]
        assert element.text.split()[0] in line or element.kind == "code"


def test_projection_joins_elements_with_a_separator_owned_by_none() -> None:
    d = doc()
    assert d.projection == SEPARATOR.join(e.text for e in d.elements)
    for element, start in zip(d.elements, d.starts, strict=False):
        assert d.projection[start:start + len(element.text)] == element.text


def test_element_ids_are_stable_while_text_is_unchanged() -> None:
    before = {e.text: e.id for e in doc().elements}
    edited = doc(BODY.replace("Premier point", "Tout premier point"))
    after = {e.text: e.id for e in edited.elements}
    assert all(after[text] == before[text] for text in after if text in before)
    repeated = segment(parse("Même texte.\n\nMême texte.\n"), 1)
    assert [e.id for e in repeated.elements][1] == repeated.elements[0].id + "-2"


def test_normalise_maps_back_to_original_offsets() -> None:
    text = "L’aide\u00a0couvre  80\u202f% —\n au plus"
    normal, origin = normalise(text)
    assert normal == "L'aide couvre 80 % - au plus"
    for index, ch in enumerate(normal):
        if ch not in " '-":
            assert text[origin[index]] == ch


def _resolve(quote: str, body: str = BODY, **hints):
    d = segment(parse(body), 1)
    return d, resolve_quote(project(d.elements), d.elements, quote, **hints)


def test_unique_quote_across_emphasis_and_curly_apostrophe() -> None:
    d, anchor = _resolve("Le budget s’élève à quatre mille euros")
    assert anchor.status is AnchorStatus.ANCHORED
    (portion,) = anchor.portions
    assert d.elements[portion.element].text[portion.start:portion.end] == "Le budget s'élève à quatre mille euros"


def test_quote_over_two_elements_gives_two_portions_and_skips_the_separator() -> None:
    d, anchor = _resolve("Il est voté.\n\nPremier point")
    assert anchor.status is AnchorStatus.ANCHORED
    texts = [d.elements[p.element].text[p.start:p.end] for p in anchor.portions]
    assert texts == ["Il est voté.", "Premier point"]


def test_ambiguous_quote_is_detached_not_guessed() -> None:
    _, anchor = _resolve("point")
    assert anchor.status is AnchorStatus.DETACHED and anchor.candidates == 2
    assert "2 times" in anchor.reason


def test_prefix_and_suffix_disambiguate() -> None:
    d, anchor = _resolve("point", prefix="Second")
    assert anchor.status is AnchorStatus.ANCHORED
    assert d.elements[anchor.portions[0].element].text == "Second point."
    _, anchor = _resolve("point", suffix=";")
    assert anchor.status is AnchorStatus.ANCHORED


def test_occurrence_hint_is_used_only_after_context() -> None:
    d, anchor = _resolve("point", occurrence=2)
    assert d.elements[anchor.portions[0].element].text == "Second point."
    _, anchor = _resolve("point", occurrence=3)
    assert anchor.status is AnchorStatus.DETACHED


def test_missing_quote_is_detached() -> None:
    _, anchor = _resolve("cinq mille euros")
    assert anchor.status is AnchorStatus.DETACHED and anchor.candidates == 0


def test_anchor_note_reports_detached_with_its_line() -> None:
    source = SourceRef("notes/x.extractions.yaml", 7)
    extraction = Extraction("x1", "x", "introuvable", "", "", None, "fait", "A", None, False, (), source)
    note = Note("x", "X", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, BODY, 5, (extraction,),
                SourceRef("notes/x.md", 1))
    anchored, problems = anchor_note(note)
    assert anchored.anchors["x1"].status is AnchorStatus.DETACHED
    assert [(p.file, p.line, p.code) for p in problems] == [("notes/x.extractions.yaml", 7, "detached-anchor")]


@pytest.mark.parametrize("url,safe", [
    ("https://example.org", True), ("mailto:a@b.c", True), ("autre-note.md", True), ("#section", True),
    ("javascript:alert(1)", False), ("JAVASCRIPT:alert(1)", False), (" java\tscript:alert(1)", False),
    ("data:text/html,x", False), ("vbscript:x", False), ("file:///etc/passwd", False),
])
def test_link_scheme_allowlist(url: str, safe: bool) -> None:
    assert link_is_safe(url) is safe


def test_a_note_without_extractions_is_not_projected(monkeypatch: pytest.MonkeyPatch) -> None:
    """The normalised projection serves the quotes alone: a note without extractions (most
    of a corpus) is parsed and segmented, never projected; one with extractions is."""
    import generator.anchoring as anchoring

    projected: list[int] = []

    def counting(elements):  # type: ignore[no-untyped-def]
        projected.append(len(elements))
        return project(elements)

    monkeypatch.setattr(anchoring, "project", counting)
    plain = Note("p", "P", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, BODY, 5, (), SourceRef("notes/p.md", 1))
    anchored, problems = anchor_note(plain)
    assert projected == [] and anchored.anchors == {} and problems == []
    assert [e.text for e in anchored.document.elements] == [e.text for e in doc().elements]
    extraction = Extraction("x1", "x", "Il est voté.", "", "", None, "fait", "A", None, False, (),
                            SourceRef("notes/x.extractions.yaml", 3))
    anchored, _ = anchor_note(Note("x", "X", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, BODY, 5,
                                   (extraction,), SourceRef("notes/x.md", 1)))
    assert len(projected) == 1 and anchored.anchors["x1"].status is AnchorStatus.ANCHORED


@pytest.mark.parametrize("body, text", [
    ("Le budget est voté [[ext:a]]. La suite.", "Le budget est voté. La suite."),
    ("Voté [[ext:a]] [[com:b]], puis [[quote:q]] reporté.", "Voté, puis reporté."),
    ("Un *mot* [[ext:a]].", "Un mot."),
    ("Fin de ligne\n[[ext:a]] et la suite.", "Fin de ligne et la suite."),
    ("Un lien [[cvl-2024-11-14]] reste.", "Un lien cvl-2024-11-14 reste."),  # a note link is text
    ("Nommé [[ext:a|le vote]] ici.", "Nommé le vote ici."),  # a labelled marker is text
    ("Pourquoi ? Parce que [[ext:a]] !", "Pourquoi ? Parce que !"),  # a French blank stays
])
def test_an_unlabelled_marker_leaves_no_blank_where_its_number_is(body: str, text: str) -> None:
    """The page shows "voté[1]." — the element's text (the .txt, search, quotes) reads "voté.", never "voté .";
    so a passage copied from the page anchors exactly."""
    d = segment(parse(body), 0)
    assert [e.text for e in d.elements] == [text]
    quote = text.split(".")[0] if "." in text else text
    anchor = resolve_quote(project(d.elements), d.elements, quote)
    assert anchor.status is AnchorStatus.ANCHORED, (quote, anchor)


def test_a_long_run_of_markers_is_spaced_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile input: a paragraph of thousands of markers. Each token is asked once whether it
    is a marker (the blank-taking walk stopped at the run's previous mark: it once walked the
    whole run back from every marker, 13.6 s for 4,000 of them)."""
    import generator.markup as markup

    asked: list[int] = []
    hidden = markup._hidden_marker
    monkeypatch.setattr(markup, "_hidden_marker", lambda token: asked.append(1) or hidden(token))
    count = 3000
    tokens = markup.make_parser().parse("x " + " ".join(f"[[ext:a{i}]]" for i in range(count)) + ".", {})
    children = tokens[1].children or []
    assert len(asked) == len(children)
    assert "".join(markup.leaf_text(c) for c in children) == "x."
