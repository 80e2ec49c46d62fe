"""The theme and the prompts Carnet ships: at the checkout's top level (``themes/``,
``prompts/``), found there by a checkout or an editable install, and inside the package in a
wheel (tests/test_wheel.py builds one and runs it)."""

from __future__ import annotations

from pathlib import Path

from generator.bundled import bundled
from generator.llm.prompts import PROMPTS, prompt_languages
from generator.site import DEFAULT_THEME

ROOT = Path(__file__).resolve().parents[1]


def test_the_checkout_keeps_the_theme_and_prompts_at_its_top_level() -> None:
    assert (ROOT / "themes" / "default" / "templates" / "layout.html").is_file()
    assert {p.name for p in (ROOT / "themes" / "default" / "strings").glob("*.yaml")} >= {"fr.yaml", "en.yaml"}
    assert (ROOT / "prompts" / "fr" / "verify_pairs.j2").is_file()
    assert not (ROOT / "generator" / "themes").exists() and not (ROOT / "generator" / "prompts").exists(), \
        "one copy each, at the top level"


def test_the_checkout_reads_its_top_level_copies() -> None:
    assert DEFAULT_THEME == ROOT / "themes" / "default"
    assert PROMPTS == ROOT / "prompts"
    assert set(prompt_languages()) >= {"en", "fr"}


def test_a_packaged_copy_beside_the_modules_comes_first(tmp_path: Path) -> None:
    """As in an installed wheel: site-packages/generator/themes, whatever else sits beside it."""
    package = tmp_path / "site-packages" / "generator"
    (package / "themes").mkdir(parents=True)
    (tmp_path / "site-packages" / "themes").mkdir()
    assert bundled("themes", package) == package / "themes"
    assert bundled("prompts", package) == tmp_path / "site-packages" / "prompts", "else the top level's"
