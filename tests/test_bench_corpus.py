"""The benchmark's MkDocs project (bench/corpus.py): measured two ways, as Hugo is, and the
MkDocs target stated against MkDocs as users have it (issue 23 measured its default theme)."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.builds import Measures, Run, report
from bench.corpus import MKDOCS_DEFAULT, plain_notes, write_mkdocs


def test_the_mkdocs_project_is_written_minimal_and_as_users_have_it(tmp_path: Path) -> None:
    notes = plain_notes(3)
    write_mkdocs(tmp_path, notes)
    minimal = yaml.safe_load((tmp_path / "mkdocs.yml").read_text(encoding="utf-8"))
    default = yaml.safe_load((tmp_path / MKDOCS_DEFAULT).read_text(encoding="utf-8"))
    assert minimal["theme"] == {"name": None, "custom_dir": "theme"} and minimal["plugins"] == []
    # MkDocs' own theme, and no plugins key: its default plugin list (search) applies
    assert default["theme"] == {"name": "mkdocs"} and "plugins" not in default
    assert {key: value for key, value in default.items() if key != "theme"} == \
        {key: value for key, value in minimal.items() if key not in ("theme", "plugins")}
    assert sorted(p.name for p in (tmp_path / "docs").iterdir()) == \
        sorted(["index.md", *(f"{note.slug}.md" for note in notes)])


def test_the_mkdocs_target_is_the_ratio_to_its_default_theme() -> None:
    measures = Measures()
    measures.add("carnet", Run(30.0, 50.0, 1500))
    measures.add("carnet --no-search", Run(15.0, 25.0, 300))
    measures.add("mkdocs", Run(12.0, 12.0, 100))
    measures.add("mkdocs, default theme", Run(400.0, 400.0, 300))
    text = report([(measures, {"notes": 10, "megabytes": 0.1})])
    assert "| carnet / mkdocs, default theme | 0.07 | ≤ 0.1 |" in text
    assert "| carnet --no-search / mkdocs, default theme | 0.04 | ≤ 0.1 |" in text  # the target is read both ways
    assert "| carnet / mkdocs, minimal layout | 2.50 |  |" in text
    assert "| mkdocs, default theme | 400.00 | 400.00 | 300 | 1 |" in text
