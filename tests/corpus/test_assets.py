"""Assets a browser would run are never published (issue 19): HTML, XML, scripts, markup
under an uninformative name, and SVGs with anything but drawing in them are refused at
their file (and line), by `check` and `build` alike; inert files and clean SVGs are
published byte for byte; two names equal once NFC-normalised are an error, and a name
stored decomposed (NFD) is published under its composed name."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from generator.corpus.assets import asset_refusal, svg_refusal
from generator.pipeline import build, check_content
from generator.problems import ContentError, Severity
from support.corpus import replace, write

CLEAN_SVG = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" width="40" height="20">
  <title>Budget</title>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>
  <inkscape:grid type="xygrid"/>
  <rect width="40" height="20" fill="url(#g)" style="stroke: black"/>
  <use xlink:href="#g"/>
  <image href="data:image/png;base64,iVBORw0KGgo="/>
  <text x="2" y="12">4 200 €</text>
</svg>
"""

HOSTILE_SVGS = {
    "script element": ('<svg xmlns="http://www.w3.org/2000/svg">\n<script href="evil.js"/>\n</svg>', 2, "<script>"),
    "inline script": ('<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned=1</script></svg>', 1, "<script>"),
    "event attribute": ('<svg xmlns="http://www.w3.org/2000/svg">\n\n<rect onload="x()"/></svg>', 3, "onload"),
    "uppercase event": ('<svg xmlns="http://www.w3.org/2000/svg"><rect ONCLICK="x()"/></svg>', 1, "ONCLICK"),
    "foreignObject": ('<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>', 1,
                      "foreignObject"),
    "html inside": ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:h="http://www.w3.org/1999/xhtml">'
                    '<h:script>x()</h:script></svg>', 1, "HTML"),
    "javascript link": ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                        '<a xlink:href="java\tscript:x()"><text>t</text></a></svg>', 1, "links to"),
    "external use": ('<svg xmlns="http://www.w3.org/2000/svg"><use href="other.svg#x"/></svg>', 1, "links to"),
    "animated link": ('<svg xmlns="http://www.w3.org/2000/svg"><a><animate attributeName="href" '
                      'values="javascript:x()"/></a></svg>', 1, "<animate>"),
    "set link": ('<svg xmlns="http://www.w3.org/2000/svg"><set attributeName="xlink:href" to="x"/></svg>', 1, "<set>"),
    "entities": ('<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY a "aaaa">]>\n'
                 '<svg xmlns="http://www.w3.org/2000/svg">&a;</svg>', 2, "entities"),
    "stylesheet": ('<?xml version="1.0"?>\n<?xml-stylesheet type="text/xsl" href="evil.xsl"?>\n'
                   '<svg xmlns="http://www.w3.org/2000/svg"/>', 2, "processing instruction"),
    "not xml": ("<svg><rect></svg>", 1, "not well-formed"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SVGS))
def test_an_svg_that_could_run_anything_is_refused_with_its_line(name: str) -> None:
    text, line, said = HOSTILE_SVGS[name]
    refusal = svg_refusal(text.encode("utf-8"))
    assert refusal is not None, name
    assert refusal.line == line and said in refusal.reason and refusal.hint


def test_a_drawing_svg_passes() -> None:
    assert svg_refusal(CLEAN_SVG.encode("utf-8")) is None


@pytest.mark.parametrize(("name", "data"), [
    ("doc/evil.html", b'<script src="evil.js"></script>'),
    ("doc/evil.HTM", b"<p>x</p>"),
    ("doc/evil.xhtml", b"<html/>"),
    ("doc/feed.xml", b"<?xml version='1.0'?><x/>"),
    ("doc/evil.js", b"window.__pwned = 1"),
    ("doc/evil.svgz", b"\x1f\x8b"),
    ("doc/page", b"\n  <!DOCTYPE html><script>x()</script>"),
    ("doc/page.dat", b"\xef\xbb\xbf<html><body onload=x()>"),
    ("doc/data.bin", b"\x00\x01binary"),  # not on the list (issue 56): whatever it holds
    ("doc/public.csv", b"<html>a,b</html>"),  # on the list, but begins with markup (issue 56)
])
def test_active_files_are_refused_whatever_their_name(name: str, data: bytes) -> None:
    assert asset_refusal(f"assets/{name}", data) is not None


@pytest.mark.parametrize(("name", "data"), [
    ("public.csv", b"a,b\n<html>a,b</html>"),  # a CSV is served as text, never as a page
    ("scan.pdf", b"%PDF-1.7"),
    ("photo.jpg", b"\xff\xd8\xff"),
    ("notes.txt", b"Shown as text: <script>x()</script>"),
    ("archive.zip", b"PK\x03\x04\x00\x01binary"),
])
def test_inert_files_pass(name: str, data: bytes) -> None:
    assert asset_refusal(f"assets/{name}", data) is None


def _link(content: Path, target: str) -> None:
    replace(content, "notes/conseil-a.md", "et le [tableau](../assets/public.csv).",
            f"et le [tableau](../assets/public.csv) et [la pièce]({target}).")


def test_check_and_build_refuse_an_html_asset_a_note_links_to(small: Path, tmp_path: Path) -> None:
    write(small, "assets/doc/evil.html", '<script src="evil.js"></script>')
    write(small, "assets/doc/evil.js", "window.__pwned = 1")
    _link(small, "../assets/doc/evil.html")
    problems = [p for p in check_content(small).problems if p.code == "active-asset"]
    assert {(p.file, p.severity) for p in problems} == {("assets/doc/evil.html", Severity.ERROR),
                                                         ("assets/doc/evil.js", Severity.ERROR)}
    assert all(p.hint for p in problems)
    with pytest.raises(ContentError):
        build(small, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_a_hostile_svg_is_refused_at_its_line(small: Path) -> None:
    write(small, "assets/figure.svg", HOSTILE_SVGS["script element"][0])
    (problem,) = [p for p in check_content(small).problems if p.code == "active-asset"]
    assert (problem.file, problem.line) == ("assets/figure.svg", 2)


def test_a_clean_svg_is_published_byte_for_byte(small: Path, tmp_path: Path) -> None:
    write(small, "assets/figure.svg", CLEAN_SVG)
    _link(small, "../assets/figure.svg")
    build(small, tmp_path / "site")
    assert (tmp_path / "site/assets/figure.svg").read_bytes() == CLEAN_SVG.encode("utf-8")


def test_two_names_equal_once_normalised_are_an_error(small: Path) -> None:
    composed = unicodedata.normalize("NFC", "café.csv")
    decomposed = unicodedata.normalize("NFD", "café.csv")
    assert composed != decomposed
    write(small, f"assets/{composed}", "a\n")
    write(small, f"assets/{decomposed}", "b\n")
    (problem,) = [p for p in check_content(small).problems if p.code == "name-collision"]
    assert problem.file == f"assets/{composed}" and problem.severity is Severity.ERROR
    assert decomposed in problem.message and composed in problem.message


def test_a_decomposed_asset_name_is_published_under_its_composed_name(small: Path, tmp_path: Path) -> None:
    decomposed = unicodedata.normalize("NFD", "café.csv")
    write(small, f"assets/{decomposed}", "prix;4200\n")
    _link(small, "../assets/" + unicodedata.normalize("NFC", "café.csv"))
    build(small, tmp_path / "site")
    assert (tmp_path / "site/assets" / unicodedata.normalize("NFC", "café.csv")).read_bytes() == b"prix;4200\n"
