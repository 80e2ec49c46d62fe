"""A recording whose file name holds a space is linked by a URL that says it
(``%20``), not by a raw space that cuts the address (issue 56, noticed in review)."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from generator.pipeline import build
from support.corpus import copy_fixture, replace, write


def test_a_media_file_name_with_a_space_is_percent_encoded(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    write(content, "assets/séance du conseil.ogg", b"OggS\x00fake")
    replace(content, "notes/conseil-c.md", "title: Séance C\n", "title: Séance C\nmedia: ../assets/séance du conseil.ogg\n")
    out = tmp_path / "site"
    build(content, out, search=False)
    page = BeautifulSoup((out / "notes" / "conseil-c.html").read_text(encoding="utf-8"), "html.parser")
    audio = page.select_one("figure.media audio")
    assert audio is not None and audio["src"] == "../assets/s%C3%A9ance%20du%20conseil.ogg"
    assert (out / "assets" / "séance du conseil.ogg").is_file()
