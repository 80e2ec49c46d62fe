"""The pure core of ``carnet analyse`` (generator/extracting/), without a model or a build:
chunks within the budget, fingerprints and their record, new entries of an extractions file,
categories checked against the notebook."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from generator.anchoring.elements import Element
from generator.corpus.analysed import parse_record
from generator.extracting.chunks import cut_chunks
from generator.extracting.fingerprints import changed_elements, fingerprint, record_for, render_record
from generator.extracting.sidecar import NewExtraction, SidecarError, append_extractions

TODAY = dt.date(2025, 4, 2)


def _elements(*texts: str) -> list[Element]:
    return [Element(f"e-{n}", "paragraph", text, n + 1) for n, text in enumerate(texts)]


def test_chunks_follow_element_boundaries_within_the_budget() -> None:
    lengths = [50, 50, 120, 400, 30, 30]
    chunks = cut_chunks(lengths, list(range(6)), budget=150)
    assert [c.analysed for c in chunks] == [(0, 1), (2,), (3,), (4, 5)], "an element over budget travels alone"
    assert all(c.context == () for c in chunks), "a whole note is sent once, without overlap"
    assert sorted(i for c in chunks for i in c.analysed) == list(range(6))


def test_changed_runs_get_their_neighbours_as_context_once() -> None:
    lengths = [10] * 9
    (chunk,) = cut_chunks(lengths, [3, 5, 8], budget=1000)
    assert [s.indexes for s in chunk.segments] == [(2, 3, 4, 5, 6, 7, 8)], "a shared neighbour is sent once"
    assert chunk.analysed == (3, 5, 8) and chunk.context == (2, 4, 6, 7)
    (apart,) = cut_chunks(lengths, [1, 7], budget=1000)
    assert [(s.indexes, s.analysed) for s in apart.segments] == [((0, 1, 2), (1,)), ((6, 7, 8), (7,))]
    assert [c.analysed for c in cut_chunks(lengths, [3, 8], budget=25)] == [(3,), (8,)]
    assert cut_chunks(lengths, [], budget=100) == []


def test_fingerprints_tell_new_and_edited_elements_apart() -> None:
    before = _elements("Un.", "Deux.", "Trois.")
    record = record_for("n", "conseil", "p", before, None, [0, 1, 2])
    assert parse_record(render_record(record, before)) == record
    after = _elements("Zéro.", "Un.", "Deux !", "Trois.", "Trois.")
    assert changed_elements(after, record) == [0, 2, 4], "inserted, edited, and a repeat counted as new"
    assert fingerprint(after[1]) == fingerprint(before[0]), "an element moved down keeps its fingerprint"


def test_appending_to_an_extractions_file_keeps_it_and_reads_back() -> None:
    items = [NewExtraction("n-analyse-1", "Un passage\n\nsur deux paragraphes", "fait", TODAY),
             NewExtraction("n-analyse-2", 'Des "guillemets" : et # dièse', "décision", TODAY, prefix="avant",
                           occurrence=2)]
    existing = "# Extractions\nextractions:\n- id: a\n  quote: x  # commentaire\n  author: Moi\n"
    text = append_extractions(existing, items, "ajout")
    assert text.startswith(existing) and "\n- id: n-analyse-1\n" in text, "the file's own indentation"
    assert yaml.safe_load(text)["extractions"][1:] == [item.as_record() for item in items], "reads back as written"
    fresh = append_extractions(None, items[:1], "")
    assert fresh.startswith("extractions:\n- id: n-analyse-1") and yaml.safe_load(fresh)["extractions"][0]["quote"] \
        == items[0].quote
    assert yaml.safe_load(append_extractions("extractions: []  # vide\n", items[:1], ""))["extractions"][0]["id"] \
        == "n-analyse-1"
    with pytest.raises(SidecarError):
        append_extractions("{extractions: [{id: a, quote: x}]}\n", items, "")


def test_a_fingerprint_of_digits_only_reads_back_as_written() -> None:
    elements = _elements("Paragraphe 252.", "Un autre.")
    assert fingerprint(elements[0]).isdigit(), "the case the reviewer found: all digits"
    record = record_for("n", "", "p", elements, None, [0, 1])
    text = render_record(record, elements)
    assert f'  - "{fingerprint(elements[0])}"' in text, "written quoted"
    assert parse_record(text) == record
    # records written before, unquoted: still read as the strings they were
    old = ("note: n\nnotebook: ''\nproposal: p\nelements:\n  - 0123456701234567\n  - 1234567890123456\n"
           "  - 00ab12cd34ef5678\n")
    assert parse_record(old).fingerprints == ("0123456701234567", "1234567890123456", "00ab12cd34ef5678")


def test_a_notebook_without_axes_is_named_as_such() -> None:
    from generator.extracting.passages import check_categories

    _, (refused,) = check_categories([{"axis": "theme", "category": "Budget"}], (), "club")
    assert refused.reason == "notebook 'club' has no axes"
    _, (refused,) = check_categories([{"axis": "theme", "category": "Budget"}], (), "")
    assert "no notebook" in refused.reason and "()" not in refused.reason


def test_every_chunk_keeps_within_the_budget_context_included() -> None:
    import random

    (chunk,) = cut_chunks([190, 150, 190], [1], budget=200)
    assert chunk.indexes == (1,), "neighbours that do not fit are left out"
    (chunk,) = cut_chunks([30, 150, 10, 190], [1], budget=200, neighbours=2)
    assert chunk.indexes == (0, 1, 2), "trimmed to the neighbours that fit, nearest first"
    rng = random.Random(13)
    for _ in range(3000):
        count = rng.randint(0, 14)
        lengths = [rng.choice([rng.randint(1, 80), rng.randint(50, 400)]) for _ in range(count)]
        selected = sorted(rng.sample(range(count), rng.randint(0, count)))
        budget, neighbours = rng.randint(1, 500), rng.randint(0, 3)
        chunks = cut_chunks(lengths, selected, budget, neighbours)
        assert sorted(i for c in chunks for i in c.analysed) == selected
        for c in chunks:
            assert len(c.indexes) == 1 or sum(lengths[i] for i in c.indexes) <= budget, (lengths, selected, budget)
            assert not set(c.context) & set(selected)
            for s in c.segments:
                assert list(s.indexes) == list(range(s.indexes[0], s.indexes[-1] + 1))
