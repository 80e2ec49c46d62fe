"""Tables in note bodies (issue 56): a column's alignment is a class the stylesheet aligns,
not a ``style`` attribute the site's CSP blocks (``style-src 'self'``), and a note's tables
hold a bounded number of cells, so that memory stays bounded per byte of content (a
600 × 5,000 empty table took 5.0 GB: about 800 bytes per byte of the note)."""

from __future__ import annotations

import datetime as dt
import re
import tracemalloc
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator import markup
from generator.anchoring import AnchoredNote, anchor_note
from generator.anchoring.elements import segment
from generator.corpus.model import Note, NoteType, SourceRef
from generator.markup import MAX_TABLE_CELLS, parse
from generator.pipeline import build
from generator.problems import Severity
from generator.site.markdown_html import Href, RenderState, render_body
from support.corpus import replace

STYLESHEET = Path(__file__).resolve().parents[2] / "themes" / "default" / "static" / "style.css"


def rendered(body: str) -> str:
    doc = segment(parse(body), 1)
    return render_body(RenderState(AnchoredNote(doc, {}), {}, lambda raw, wiki: Href(raw)))


def note(body: str) -> Note:
    return Note("n", "N", NoteType.NOTE, dt.date(2025, 1, 1), (), "", (), None, None, body, 8, (),
                SourceRef("notes/n.md", 1))


def table(columns: int, rows: int, cell: str = "") -> str:
    """A table whose body rows start with their number (``r7``), the other cells ``cell``."""
    def row(first: str) -> str:
        return f"| {first} |" + f" {cell} |" * (columns - 1) + "\n"
    return row("tête") + "|" + "-|" * columns + "\n" + "".join(row(f"r{r}") for r in range(rows))


def test_aligned_columns_get_a_class_the_csp_allows() -> None:
    html = rendered("| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n")
    assert "style=" not in html
    soup = BeautifulSoup(html, "html.parser")
    for tag in ("th", "td"):
        assert [cell.get("class") for cell in soup.find_all(tag)] == [
            ["align-left"], ["align-center"], ["align-right"], None]


def test_the_stylesheet_aligns_the_classes() -> None:
    css = STYLESHEET.read_text(encoding="utf-8")
    for side in ("left", "center", "right"):
        rule = re.search(r"([^{}]*\.align-" + side + r"\b[^{}]*)\{([^}]*)\}", css)
        assert rule is not None, side
        assert re.search(r"text-align:\s*" + side + r"\b", rule.group(2))


def test_a_notes_tables_hold_a_bounded_number_of_cells_and_lose_no_text() -> None:
    body = "Avant.\n\n" + table(600, 200, "x") + "\nAprès.\n\n" + table(3, 2, "y")
    tokens = parse(body)
    assert sum(t.type in ("th_open", "td_open") for t in tokens) <= MAX_TABLE_CELLS
    text = segment(tokens, 1).projection
    assert all(f"r{r}" in text for r in range(200)) and "Avant." in text and "Après." in text
    assert "tête" in text and text.count("y") >= 6


def test_a_cut_table_is_a_warning_at_the_first_row_read_as_text() -> None:
    cut_row = MAX_TABLE_CELLS // 600 - 1  # the header, then as many rows as fit
    body = "Avant.\n\n" + table(600, 200) + "\n" + table(600, 2)
    _, problems = anchor_note(note(body))
    (first, second) = [p for p in problems if p.code == "table-too-large"]
    lines = body.split("\n")
    assert lines[first.line - 8].startswith(f"| r{cut_row} |")
    assert lines[second.line - 8].startswith("| tête |")  # no cell left: the whole table is text
    assert first.severity is second.severity is Severity.WARNING
    assert first.file == "notes/n.md" and str(MAX_TABLE_CELLS) in first.message.replace(",", "")


def test_a_table_within_the_bound_is_a_table_without_warning() -> None:
    """Filling the bound exactly, whatever ends the table (the body, a blank line, a heading)."""
    for after in ("", "\nAprès.\n", "## Suite\n"):
        body = table(10, MAX_TABLE_CELLS // 10 - 1, "x") + after
        _, problems = anchor_note(note(body))
        assert not [p for p in problems if p.code == "table-too-large"], after
        assert sum(t.type in ("th_open", "td_open") for t in parse(body)) == MAX_TABLE_CELLS


def _peak(body: str) -> int:
    tracemalloc.start()
    try:
        doc = segment(parse(body), 1)
        render_body(RenderState(AnchoredNote(doc, {}), {}, lambda raw, wiki: Href(raw)))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_per_byte_of_a_table_past_the_bound_is_that_of_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, each byte more of a table costs what a byte of text costs (it was
    470 bytes of memory for an empty cell's two, and for a one-cell row under a 600-column
    header, 600 cells: 130,000 bytes per byte). The bound lowered so the test is quick."""
    monkeypatch.setattr(markup, "MAX_TABLE_CELLS", 2_000)

    def short_rows(rows: int) -> str:
        return "|" + " a |" * 600 + "\n" + "|" + "-|" * 600 + "\n" + "| x |\n" * rows

    for make in (lambda rows: table(600, rows), short_rows):
        small, large = make(100), make(400)
        assert _peak(large) - _peak(small) < 200 * (len(large) - len(small))


def test_no_page_of_a_site_carries_a_style_attribute(small: Path, tmp_path: Path) -> None:
    """The CSP blocks them all: an aligned table's cells are aligned by class, and no other
    output writes one (pages, their siblings, SVGs, feeds)."""
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.",
            "Le budget est reconduit.\n\n| Poste | Montant |\n|:--|--:|\n| Foyer | 1 800 € |\n")
    build(small, tmp_path / "site", search=False)
    styled = [path for path in sorted((tmp_path / "site").rglob("*")) if path.is_file()
              and re.search(rb"<[a-zA-Z][^<>]*\sstyle\s*=", path.read_bytes())]
    assert not styled
    page = BeautifulSoup((tmp_path / "site" / "notes" / "conseil-c.html").read_text(encoding="utf-8"), "html.parser")
    assert [cell.get("class") for cell in page.select(".note-body td")] == [["align-left"], ["align-right"]]
