"""The cost benchmark of issue 56 (bench/costs.py): each case writes content that checks
clean and is the input it names, at a tiny size; the exponent fit reads a power law back."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.costs import CASES, TABLE_COLUMNS, exponent, main, sizes_of
from generator.anchoring import AnchorStatus
from generator.pipeline import CheckedContent, check_content
from generator.problems import Severity


def checked(tmp_path: Path, name: str, size: int) -> CheckedContent:
    content = tmp_path / name
    CASES[name].write(content, size)
    result = check_content(content)
    assert not [p for p in result.problems if p.severity is not Severity.NOTICE], result.problems
    return result


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_case_checks_clean_at_size_one(tmp_path: Path, name: str) -> None:
    """Size 1 is each case's fixed cost, which the exponents are taken above."""
    checked(tmp_path, name, 1)


def test_categories_put_one_note_in_k_categories(tmp_path: Path) -> None:
    result = checked(tmp_path, "categories", 7)
    (note,) = result.corpus.notes.values()
    (membership,) = note.memberships
    assert len(set(membership.categories["theme"])) == 7


def test_extractions_overlap_and_all_fall_in_the_wikis_perimeter(tmp_path: Path) -> None:
    count = 2_050  # three notes, the last one short
    result = checked(tmp_path, "extractions", count)
    audit = result.articles["wiki-budget"]
    assert audit.perimeter_extractions is not None and len(audit.perimeter_extractions) == count
    anchors = {i: a for slug in audit.perimeter_notes or () for i, a in result.anchored[slug].anchors.items()}
    assert len(anchors) == count and all(a.status is AnchorStatus.ANCHORED for a in anchors.values())
    # each quote shares its second sentence with the next one's first (within a paragraph)
    quotes = {e.id: e.quote for note in result.corpus.notes.values() for e in note.extractions}
    assert quotes["x0"].split(". ")[1] == quotes["x1"].split(". ")[0] + "."


def test_headings_list_and_table_are_what_they_say(tmp_path: Path) -> None:
    headings = checked(tmp_path, "headings", 30).anchored["seance"].document
    assert [e.text for e in headings.elements] == ["Titre"] * 30
    assert len(set(headings.heading_ids.values())) == 30
    items = checked(tmp_path, "list", 40).anchored["seance"].document
    assert [e.kind for e in items.elements] == ["list_item"] * 40 and len(items.id_at) == 40  # tight: one id each
    rows = checked(tmp_path, "table", 3).anchored["seance"].document
    assert [e.kind for e in rows.elements] == ["table_row"] * 4 and not "".join(e.text for e in rows.elements).strip()
    cells = [t for t in rows.tokens if t.type in ("th_open", "td_open")]
    assert len(cells) == TABLE_COLUMNS * 4


def test_the_exponent_is_read_back_from_a_power_law() -> None:
    sizes = [625, 1_250, 2_500, 5_000]
    assert exponent(sizes, [3 * s ** 1.5 for s in sizes]) == pytest.approx(1.5)
    assert exponent(sizes, [0.8 + 0.002 * s for s in sizes], baseline=0.8) == pytest.approx(1.0)
    assert exponent(sizes, [2.0 + 1e-6 * s * s for s in sizes], baseline=2.0) == pytest.approx(2.0)
    assert exponent(sizes, [7.0] * 4) == pytest.approx(0.0)
    # at or under the baseline a point says nothing of the growth
    assert exponent(sizes, [1.0, 1.0, 2.0, 3.0], baseline=1.0) == pytest.approx(math.log(2) / math.log(2))
    assert exponent(sizes, [1.0, 1.0, 1.0, 2.0], baseline=1.0) is None


def test_sizes_halve_down_from_the_scaled_full_size() -> None:
    assert sizes_of(CASES["headings"], 1.0, 4) == [6_250, 12_500, 25_000, 50_000]
    assert sizes_of(CASES["table"], 0.5, 3) == [625, 1_250, 2_500]


@pytest.mark.slow
def test_the_benchmark_prints_a_row_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--case", "headings", "--case", "list", "--scale", "0.001", "--steps", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| (")]
    assert [row.split(" | ")[0] for row in rows] == ["| (c) N identical `## Titre`", "| (d) an N-item tight list"]
    assert all(row.count("/") >= 2 for row in rows)  # two sizes, each timed and measured
