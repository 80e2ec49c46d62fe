"""Every output is valid whatever the text (issue 56): characters XML or HTML forbids —
C0 controls other than tab and line feed, DEL, C1 controls, noncharacters, lone
surrogates — never reach a page, a feed, the sitemap, a JSON or text file. In a note's
text they are left out, with a warning naming the line; in a YAML string (where only an
escape such as ``"\\v"`` can put one) they are shown as the escape the file wrote. Each
case is recomputed from the built files, as a reader's parser would see them."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from xml.parsers import expat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.pipeline import build, check_content
from generator.text import FORBIDDEN_CHARACTERS, without_forbidden
from support.corpus import copy_fixture, line_of, site_files, write

# what XML 1.0 and HTML (a parse error: "control character" or "noncharacter") refuse
REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
                     + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17)) + "]")

NASTY = "\x0b\x1b\x07\x7f\x85\ufffe\ufdd0\U0001fffe"


def _note(title: str, body: str) -> str:
    return (f'---\ntitle: "{title}"\ndate: 2025-05-05\nauthors: [Zoé Realname]\nsummary: "résumé \\v\\e"\n'
            f"notebooks:\n  conseil:\n    theme: [Budget]\n---\n{body}\n")


def _assert_valid(files: dict[str, bytes]) -> None:
    for path, data in files.items():
        if path.startswith("pagefind/") or not path.endswith((".html", ".xml", ".json", ".txt", ".md",
                                                               ".jsonld", ".svg", ".webmanifest")):
            continue
        text = data.decode("utf-8")
        found = REFUSED.search(text)
        assert found is None, f"{path} holds U+{ord(found.group()):04X}"
        if path.endswith((".xml", ".svg")):
            parser = expat.ParserCreate()
            parser.Parse(data, True)  # raises on a document that is not well-formed
        if path.endswith((".json", ".jsonld")):
            json.loads(text)


def test_forbidden_characters_are_the_ones_xml_and_html_refuse() -> None:
    every = "".join(chr(code) for code in range(0x110000))
    assert set(FORBIDDEN_CHARACTERS.findall(every)) == set(REFUSED.findall(every))
    assert without_forbidden("a\x7fb\x0bc\ttab\nline") == "abc\ttab\nline"


def test_control_characters_never_reach_an_output(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    write(content, "notes/bizarre.md", _note("Titre \\v \\e \\a \\uFFFE fin",
                                             f"## Ordre du jour\n\nUn texte {NASTY} avec DEL.\n\n- point\x7f un\n"))
    result = build(content, tmp_path / "site", search=False)
    files = site_files(tmp_path / "site", search=False)
    _assert_valid(files)
    page = files["notes/bizarre.html"].decode("utf-8")
    assert "Un texte " in page and " avec DEL." in page  # the text around is kept
    assert "Titre \\x0b \\x1b \\x07 \\ufffe fin" in page  # a YAML escape is shown as written
    feed = files["feeds/conseil.xml"].decode("utf-8")
    assert "Titre \\x0b \\x1b" in feed
    warned = [p for p in result.problems if p.file == "notes/bizarre.md" and p.code == "control-character"]
    assert [p.line for p in warned] == [line_of(content, "notes/bizarre.md", "Un texte"),
                                       line_of(content, "notes/bizarre.md", "- point")]
    assert "U+000B" in warned[0].message and "left out" in warned[0].message


def test_a_forbidden_character_is_a_warning_strict_refuses(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    write(content, "notes/bizarre.md", _note("Titre", "Un texte\x7f ici.\n"))
    problems = [p for p in check_content(content).problems if p.code == "control-character"]
    assert problems and all(not p.is_error and p.stops(strict=True) for p in problems)


TEXT = st.text(st.characters(codec=None, exclude_characters="\r"), min_size=1, max_size=60)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=TEXT, body=TEXT)
def test_any_code_point_gives_valid_outputs(title: str, body: str) -> None:
    """Property: a note titled and written with code points of every class (controls,
    formats, surrogates' neighbours, private use, unassigned, separators) builds to
    well-formed XML, parseable JSON and pages no parser refuses."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        content = copy_fixture("small", root)
        escaped = "".join(f"\\U{ord(c):08x}" for c in title)  # YAML escapes: any code point
        write(content, "notes/bizarre.md", _note(escaped, "Texte : " + body.replace("\x00", "")))
        build(content, root / "site", search=False)
        _assert_valid(site_files(root / "site", search=False))


def test_a_problem_prints_on_its_lines_whatever_its_text_holds() -> None:
    """A file name or a link holding a line feed or a bidi control (a hostile asset name)
    prints as escapes: the problem stays on its line, the hint on the next."""
    from generator.problems import Problem

    problem = Problem("assets/a\nb\u202e.csv", 3, "broken-link", "link to 'x\ny' lands nowhere", "Fix\rit.")
    printed = problem.format_text()
    assert printed.count("\n") == 1 and "\u202e" not in printed and "\r" not in printed
    assert printed.startswith("assets/a\\x0ab\\u202e.csv:3: error [broken-link] link to 'x\\x0ay'")
