"""Output is reproducible, swapped in whole, and never destroys files Carnet did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.pipeline import build
from generator.problems import ContentError, OutputDirectoryError
from generator.site.emitters import EMITTERS
from generator.site.output import MARKER
from support.corpus import replace, site_files


def test_two_builds_are_byte_identical(small: Path, tmp_path: Path) -> None:
    build(small, tmp_path / "one")
    build(small, tmp_path / "two")
    one, two = site_files(tmp_path / "one", search=False), site_files(tmp_path / "two", search=False)
    assert one.keys() == two.keys()
    assert [path for path in one if one[path] != two[path]] == []


def test_rebuild_in_place_is_identical_and_drops_stale_files(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    first = site_files(out, search=False)
    (small / "notes" / "conseil-d.md").unlink()
    build(small, out)
    assert "notes/conseil-d.html" not in site_files(out, search=False)
    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit.")  # no-op edit
    (small / "notes" / "conseil-d.md").write_text(
        "---\ntitle: Séance D\ndate: 2024-12-01\nauthors: [Zoé Realname]\nnotebooks:\n  conseil:\n"
        "    theme: [Vie scolaire]\n---\nUne séance sans histoire.\n", encoding="utf-8")
    build(small, out)
    assert site_files(out, search=False) == first


def test_failed_build_leaves_previous_site_intact(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    before = site_files(out)
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    with pytest.raises(ContentError) as raised:
        build(small, out)
    assert any(p.code == "unknown-category" for p in raised.value.problems)
    assert site_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "small"], "no staging directory left behind"


def test_crash_while_writing_leaves_previous_site_intact(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build(small, out)
    before = site_files(out)

    class Exploding:
        name = "exploding"
        reads = frozenset({"notes"})

        def emit(self, site, theme):
            yield "half-written.html", b"<p>"
            raise RuntimeError("disk full")

    replace(small, "notes/conseil-c.md", "reconduit.", "reconduit et augmenté.")
    with pytest.raises(RuntimeError):
        build(small, out, emitters=(*EMITTERS, Exploding()))
    assert site_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "small"]


def test_refuses_a_directory_it_did_not_create(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    precious = out / "thesis.tex"
    precious.write_text("years of work", encoding="utf-8")
    with pytest.raises(OutputDirectoryError, match="not created by carnet"):
        build(small, out)
    assert precious.read_text(encoding="utf-8") == "years of work"
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]


def test_refuses_output_dot_and_content_overlap(small: Path, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputDirectoryError):
        build(small, Path("."))
    with pytest.raises(OutputDirectoryError, match="overlaps"):
        build(small, small / "site")
    with pytest.raises(OutputDirectoryError, match="overlaps"):
        build(small, small)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_accepts_an_empty_directory_and_marks_it(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    build(small, out)
    assert (out / MARKER).is_file()
    assert (out / "index.html").is_file()


def test_nothing_is_written_outside_the_output_directory(small: Path, tmp_path: Path) -> None:
    before = {p for p in tmp_path.rglob("*")}
    build(small, tmp_path / "site")
    created = {p for p in tmp_path.rglob("*")} - before
    assert all(tmp_path / "site" in p.parents or p == tmp_path / "site" for p in created)
