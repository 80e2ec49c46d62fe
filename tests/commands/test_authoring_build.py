"""``carnet build`` is untouched by ``serve --edit`` (issue 59): the edit layer's files sit
in the theme's ``edit/`` folder, which the build never copies, and not one byte of its
script, style or strings reaches a published file."""

from __future__ import annotations

from pathlib import Path

import yaml

from generator.authoring.api import EDIT_FOLDER, PREFIX, STRING_PREFIX
from generator.site.theme import DEFAULT_THEME, Theme


def test_the_theme_publishes_none_of_the_edit_layer() -> None:
    theme = Theme.load()
    assert EDIT_FOLDER.parent == DEFAULT_THEME and sorted(p.name for p in EDIT_FOLDER.iterdir()) == ["edit.css",
                                                                                                      "edit.js"]
    assert not any("edit" in published for published, _data in theme.static.values())
    layer = {p.read_bytes() for p in EDIT_FOLDER.iterdir()}
    assert not layer & {data for _published, data in theme.static.values()}


def test_no_published_file_holds_a_byte_of_the_edit_layer(example_site: Path) -> None:
    marks = [PREFIX.encode(), b"carnet-edit", b"X-Carnet-Token"]
    for name in ("edit.js", "edit.css"):  # the layer's own lines: its names, its strings' keys, its comments
        marks += [line.strip().encode() for line in (EDIT_FOLDER / name).read_text(encoding="utf-8").splitlines()
                  if any(mark in line for mark in ("carnet-edit", "edit_", "//", "/*")) and len(line.strip()) > 30]
    assert len(marks) > 50
    files = [p for p in example_site.rglob("*") if p.is_file()]
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        found = [mark for mark in marks if mark in data]
        assert not found, f"{path.relative_to(example_site)} holds {found[:3]}"


def test_no_template_or_code_of_the_build_renders_an_edit_layer_string() -> None:
    """The layer's strings sit with the theme's (one place per language) but only the
    edit layer's script shows them: no template asks for one."""
    import re

    import generator

    templates = "".join(p.read_text(encoding="utf-8") for p in (DEFAULT_THEME / "templates").glob("*.html"))
    code = "".join(p.read_text(encoding="utf-8") for p in Path(generator.__file__).parent.rglob("*.py")
                   if "authoring" not in p.parts)
    asked = set(re.findall(r"\btr\(\s*[\"']([a-z_]+)[\"']", templates + code))
    strings = yaml.safe_load((DEFAULT_THEME / "strings" / "fr.yaml").read_text(encoding="utf-8"))
    layer = {key for key in strings if key.startswith(STRING_PREFIX)}
    assert len(layer) > 30 and not asked & layer
