"""The example corpus in content/ is clean and builds under --strict."""

from __future__ import annotations

from pathlib import Path

from generator.pipeline import analyse, build

CONTENT = Path(__file__).resolve().parents[1] / "content"


def test_example_content_has_no_problem() -> None:
    problems = analyse(CONTENT).problems
    assert [p.format_text() for p in problems] == []


def test_example_content_builds_strict(tmp_path: Path) -> None:
    result = build(CONTENT, tmp_path / "site", strict=True)
    assert (tmp_path / "site" / "index.html").is_file()
    published = {r.notebook for r in result.reports}
    assert published == {"cvl", "veille-financement"}
    assert not any("bureau" in p.as_posix() for p in (tmp_path / "site").rglob("*"))
