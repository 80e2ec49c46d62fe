"""Relocated anchors: reported with their diff, fixed only on request, files kept as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from generator.anchoring import AnchorStatus
from generator.anchoring.fix import replace_value
from generator.corpus.source import parse_yaml
from generator.pipeline import check_content
from support.corpus import line_of, replace

EXTS = "notes/conseil-a.extractions.yaml"


def carnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True, timeout=120)


def test_an_edited_quote_is_relocated_with_its_diff(small: Path) -> None:
    replace(small, EXTS, "quote: Le budget s'élève à quatre mille euros", "quote: Le budget s'élève à quatre mile euros")
    analysis = check_content(small)
    anchor = analysis.anchored["conseil-a"].anchors["a-budget"]
    assert anchor.status is AnchorStatus.RELOCATED and anchor.distance == 1
    assert "[-mile-] {+mille+}" in anchor.reason
    (problem,) = [p for p in analysis.problems if p.code == "relocated-anchor"]
    assert problem.line == line_of(small, EXTS, "- id: a-budget") and problem.severity.value == "notice"
    assert analysis.errors == []


def test_fix_anchors_shows_then_writes_keeping_comments_and_layout(small: Path) -> None:
    replace(small, EXTS, "quote: Le budget s'élève à quatre mille euros",
            "quote: Le budget s'élève à quatre mile euros  # typed from memory")
    replace(small, EXTS, "      Deuxième paragraphe\n", "      Deuxieme paragraphe\n")
    before = (small / EXTS).read_text(encoding="utf-8")

    shown = carnet("check", str(small), "--fix-anchors")
    assert shown.returncode == 0
    assert "a-budget relocated" in shown.stdout and "a-two-paragraphs relocated" in shown.stdout
    assert "Le budget s'élève à quatre mille euros" in shown.stdout
    assert (small / EXTS).read_text(encoding="utf-8") == before, "nothing is written without --write"

    written = carnet("check", str(small), "--fix-anchors", "--write")
    assert written.returncode == 0, written.stderr
    after = (small / EXTS).read_text(encoding="utf-8")
    assert "# typed from memory" in after
    changed = [(a, b) for a, b in zip(before.split("\n"), after.split("\n"), strict=False) if a != b]
    assert len(changed) == 2 and len(before.split("\n")) == len(after.split("\n"))
    analysis = check_content(small)
    statuses = {i: a.status for i, a in analysis.anchored["conseil-a"].anchors.items()}
    assert statuses["a-budget"] is AnchorStatus.ANCHORED and statuses["a-two-paragraphs"] is AnchorStatus.ANCHORED
    assert not [p for p in analysis.problems if p.code == "relocated-anchor"]


def test_detached_anchors_are_listed_never_changed(small: Path) -> None:
    replace(small, EXTS, "quote: Le budget s'élève à quatre mille euros", "quote: Une phrase qui n'existe nulle part")
    before = (small / EXTS).read_bytes()
    result = carnet("check", str(small), "--fix-anchors", "--write")
    assert "detached-anchor" in result.stdout
    assert (small / EXTS).read_bytes() == before


def test_write_needs_fix_anchors(small: Path) -> None:
    assert carnet("check", str(small), "--write").returncode == 2


def test_replace_value_keeps_everything_else() -> None:
    text = "a: 1  # one\nquote: |\n  line one\n\n  line two\nb: 2\n"
    value, _ = parse_yaml(text, "x.yaml")
    span = value.value_spans["quote"]
    single = replace_value(text, span, "d'une seule ligne")
    assert single == 'a: 1  # one\nquote: "d\'une seule ligne"\nb: 2\n'
    assert parse_yaml(single, "x.yaml")[0]["quote"] == "d'une seule ligne"
    multi = replace_value(text, span, "ligne un\n\nligne « deux »")
    assert multi == "a: 1  # one\nquote: |\n  ligne un\n\n  ligne « deux »\nb: 2\n", "the block keeps its header"
    assert parse_yaml(multi, "x.yaml")[0]["quote"].strip() == "ligne un\n\nligne « deux »"
    flow = "quote: 'ancien'\nnext: x\n"
    value, _ = parse_yaml(flow, "y.yaml")
    rewritten = replace_value(flow, value.value_spans["quote"], "p1\n\np2")
    assert parse_yaml(rewritten, "y.yaml")[0] == {"quote": "p1\n\np2", "next": "x"}


def test_write_keeps_a_bom_and_crlf_line_ends(small: Path) -> None:
    from generator.commands.fix_anchors import relocated_fixes, write_fixes

    replace(small, EXTS, "quote: Le budget s'élève à quatre mille euros", "quote: Le budget s'élève à quatre mile euros")
    path = small / EXTS
    original = b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(original)
    analysis = check_content(small)
    assert write_fixes(small, analysis, relocated_fixes(analysis)) == [EXTS]
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\n" not in data.replace(b"\r\n", b"")
    changed = [(a, b) for a, b in zip(original.split(b"\r\n"), data.split(b"\r\n"), strict=False) if a != b]
    assert len(changed) == 1 and b"quatre mille euros" in changed[0][1], "only the quote changed"
    assert check_content(small).anchored["conseil-a"].anchors["a-budget"].status is AnchorStatus.ANCHORED


def test_read_text_file_keeps_the_layout_and_refuses_bad_utf8() -> None:
    from generator.files import read_text_file

    read, problems = read_text_file(b"\xef\xbb\xbfa: 1\r\nb: e\xcc\x81\r\n", "x.yaml")
    assert problems == [] and read.text == "a: 1\nb: e\u0301\n", "kept as written (no NFC) unless asked"
    assert read.encode(read.text + "c: 3\n") == b"\xef\xbb\xbfa: 1\r\nb: e\xcc\x81\r\nc: 3\r\n"
    assert read_text_file(b"b: e\xcc\x81\n", "x.yaml", nfc=True)[0].text == "b: \u00e9\n"
    read, (problem,) = read_text_file(b"a: 1\nb: caf\xe9\n", "x.yaml")
    assert read is None and (problem.file, problem.line, problem.code) == ("x.yaml", 2, "encoding")


def test_write_records_a_quote_in_a_flow_style_extractions_file(small: Path) -> None:
    """A multi-line quote cannot be a literal block inside ``[…]``: it is written on one
    double-quoted line there, and every other extraction keeps its text."""
    import yaml

    from generator.yamledit import records

    path = small / EXTS
    value = yaml.safe_load(path.read_text(encoding="utf-8"))
    flow = "extractions: [\n" + ",\n".join(
        "  " + yaml.safe_dump(item, default_flow_style=True, allow_unicode=True, width=10**9).strip()
        for item in value["extractions"]) + "\n]\n"
    path.write_text(flow, encoding="utf-8")
    replace(small, "notes/conseil-a.md", "Deuxième paragraphe", "Deuxieme paragraphe")
    written = carnet("check", str(small), "--fix-anchors", "--write")
    assert written.returncode == 0, written.stderr
    after = path.read_text(encoding="utf-8")
    new = yaml.safe_load(after)["extractions"]
    assert [e["id"] for e in new] == [e["id"] for e in value["extractions"]]
    moved = {key for key, text in records(flow).items() if records(after).get(key) != text}
    assert len(moved) == 1, "only the relocated extraction changed"
    assert check_content(small).anchored["conseil-a"].anchors["a-two-paragraphs"].status is AnchorStatus.ANCHORED


def test_write_keeps_decomposed_text_and_mixed_line_ends_in_other_records(small: Path) -> None:
    """The quotes are replaced in the text as written: another extraction typed with a
    decomposed « é », or lines ending CRLF among LF ones, keep their bytes."""
    import unicodedata

    path = small / EXTS
    text = path.read_text(encoding="utf-8").replace("Exact, c'est voté.", unicodedata.normalize("NFD", "Exact, c'est voté."))
    data = text.encode("utf-8").replace(b"    kind: fait\n", b"    kind: fait\r\n", 1)
    path.write_bytes(data)
    replace(small, "notes/conseil-a.md", "Deuxième paragraphe", "Deuxieme paragraphe")
    written = carnet("check", str(small), "--fix-anchors", "--write")
    assert written.returncode == 0, written.stderr
    after = path.read_bytes()
    assert unicodedata.normalize("NFD", "Exact, c'est voté.").encode("utf-8") in after and b"kind: fait\r\n" in after
    assert b"Deuxieme paragraphe" in after
