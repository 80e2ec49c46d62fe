"""Assets by allowlist (issue 56): only the types listed in ``ASSET_TYPES`` are published,
each with Carnet's own media type; every other name is refused at its file with a hint —
every extension Debian's /etc/mime.types maps to HTML, XHTML, SVG, any XML or JavaScript
(vendored in tests/fixtures/active-extensions.tsv), the review's .xhtm behind an XML
comment, .xpdl, extensionless files. A file of a listed type that begins with markup is
refused whatever comes before it (BOM, blanks, a comment). An SVG is published only if it
draws: XInclude, ``xml:base``, foreign hrefs in any namespace, ``@import`` and foreign
``url()`` are refused at their line. A name a link cannot carry (a newline, a control
character, ``#``, ``?``, ``%``, a backslash) is refused at the file, shown escaped."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest

from generator.corpus.assets import ASSET_TYPES, asset_refusal, svg_refusal
from generator.pipeline import build, check_content
from generator.problems import ContentError, Severity
from support.corpus import FIXTURES, line_of, replace, write


def _active_extensions() -> list[tuple[str, str]]:
    rows = (line.split("\t") for line in (FIXTURES / "active-extensions.tsv").read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#"))
    return [(extension, media_type) for extension, media_type in rows]


ACTIVE = _active_extensions()

HOSTILE_DOCUMENT = (b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body>'
                    b'<script src="evil.es"></script><script>window.__pwned=1</script></body></html>\n')


def _refused(rel: str, data: bytes) -> bool:
    return asset_refusal(rel, data[:512], lambda: data) is not None


def _is_active(media_type: str) -> bool:
    """The issue's definition of an active type, as the fixture was selected."""
    kind = media_type.lower().split(";")[0].strip()
    return (kind in ("text/html", "application/xhtml+xml", "image/svg+xml") or kind.endswith("xml")
            or "html" in kind or "javascript" in kind or "ecmascript" in kind)


def test_the_vendored_list_holds_what_the_review_named() -> None:
    extensions = {extension for extension, _ in ACTIVE}
    assert len(ACTIVE) > 150
    assert {"xhtm", "atom", "rss", "mml", "kml", "smil", "es", "js", "mjs", "html", "svg", "xsl"} <= extensions
    assert all(_is_active(media_type) for _, media_type in ACTIVE)


@pytest.mark.parametrize(("extension", "media_type"), ACTIVE, ids=[f"{e}:{t}" for e, t in ACTIVE])
def test_every_extension_debian_maps_to_an_active_type_is_refused(extension: str, media_type: str) -> None:
    for name in (f"assets/doc/evil.{extension}", f"assets/doc/EVIL.{extension.upper()}"):
        refusal = asset_refusal(name, HOSTILE_DOCUMENT, lambda: HOSTILE_DOCUMENT)
        assert refusal is not None, (name, media_type)
        assert refusal.reason and refusal.hint
    # even when its content looks like nothing at all
    assert _refused(f"assets/evil.{extension}", b"plain words\n"), extension


@pytest.mark.parametrize("name", ["evil", "doc/README", "evil.xpdl", "evil.atom", "evil.rss", "evil.mml", "evil.kml",
                                  "evil.smil", "evil.es", "data.bin", "page.dat", "evil.", "scan.pdf.", "evil.xhtm",
                                  "evil.jsonld", "evil.webmanifest", "evil.css", "evil.wasm", "evil.xsd"])
def test_a_name_not_on_the_list_is_refused_with_a_hint(name: str) -> None:
    refusal = asset_refusal(f"assets/{name}", b"words", lambda: b"words")
    assert refusal is not None and refusal.line is None
    assert ".pdf" in refusal.hint and ".zip" in refusal.hint, "the hint says what may be published"


def test_every_listed_type_is_inert_and_published_as_what_it_is() -> None:
    active = {extension for extension, _ in ACTIVE}
    for extension, media_type in ASSET_TYPES.items():
        assert extension.startswith(".") and extension == extension.lower()
        if extension == ".svg":  # the one listed active type, and only once checked (svg_refusal)
            assert media_type == "image/svg+xml"
            continue
        assert extension[1:] not in active, extension
        assert not _is_active(media_type), (extension, media_type)
        assert "/" in media_type and media_type.split("/")[0] in ("image", "audio", "video", "text", "application")
        assert not _refused(f"assets/file{extension}", b"x\n"), extension
        assert not _refused(f"assets/FILE{extension.upper()}", b"x\n"), extension
    assert {".png", ".jpg", ".mp3", ".ogg", ".mp4", ".pdf", ".txt", ".csv", ".odt", ".docx", ".zip"} <= set(ASSET_TYPES)


@pytest.mark.parametrize("start", [b"", b"\xef\xbb\xbf", b"  \n\t\r\x0c", b"\xef\xbb\xbf\n  ", b"<!-- a comment -->\n",
                                   b"<?xml version='1.0'?>", b"<!DOCTYPE html>"])
@pytest.mark.parametrize("name", ["notes.txt", "public.csv", "photo.png", "scan.pdf", "data.json", "archive.zip"])
def test_a_listed_file_that_begins_with_markup_is_refused_whatever_comes_first(start: bytes, name: str) -> None:
    refusal = asset_refusal(f"assets/{name}", start + b"<html><script>x()</script>", None)
    assert refusal is not None and "markup" in refusal.reason, (start, name)


def test_markup_after_a_utf16_byte_order_mark_is_refused() -> None:
    for data in ("\ufeff <html>".encode("utf-16-le"), "\ufeff<html>".encode("utf-16-be")):
        assert _refused("assets/notes.txt", data)


def test_a_listed_file_with_markup_further_in_passes() -> None:
    assert not _refused("assets/notes.txt", b"Compte rendu\n<script>shown as text</script>\n")
    assert not _refused("assets/public.csv", b"a;b\n<html>;2\n")
    assert not _refused("assets/photo.jpg", b"\xff\xd8\xff\xe0<html>")
    assert not _refused("assets/movie.mp4", b"\x00\x00\x00\x3cftypisom")  # a box length of 60 is '<' in its 4th byte


def test_the_reviews_xhtm_behind_a_comment_is_refused_by_check_and_build(small: Path, tmp_path: Path) -> None:
    write(small, "assets/doc/evil.xhtm", b"<!-- a figure -->\n" + HOSTILE_DOCUMENT)
    write(small, "assets/doc/evil.es", "window.__pwned = 1\n")
    replace(small, "notes/conseil-a.md", "et le [tableau](../assets/public.csv).",
            "et le [tableau](../assets/public.csv) et [la pièce](../assets/doc/evil.xhtm).")
    problems = [p for p in check_content(small).problems if p.code == "active-asset"]
    assert {(p.file, p.severity) for p in problems} == {("assets/doc/evil.xhtm", Severity.ERROR),
                                                         ("assets/doc/evil.es", Severity.ERROR)}
    with pytest.raises(ContentError):
        build(small, tmp_path / "site", strict=True)
    assert not (tmp_path / "site").exists()


SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n'

HOSTILE_SVGS = {
    "xi:href": (SVG_OPEN.replace(">", ' xmlns:xi="http://www.w3.org/2001/XInclude">', 1)
                + '<use xi:href="evil.xhtm#x"/>\n</svg>', 2, "links to"),
    "xinclude element": (SVG_OPEN.replace(">", ' xmlns:xi="http://www.w3.org/2001/XInclude">', 1)
                         + '<g>\n<xi:include href="evil.xhtm" parse="xml"/></g>\n</svg>', 3, "XInclude"),
    "xml:base data": (SVG_OPEN + '<g xml:base="data:text/html,x">\n<use href="#a"/></g></svg>', 2, "xml:base"),
    "xml:base fragment": (SVG_OPEN + '<a xml:base="#">\n<text>t</text></a></svg>', 2, "xml:base"),
    "href in another namespace": (SVG_OPEN.replace(">", ' xmlns:o="urn:other">', 1)
                                  + '<a o:href="javascript:x()"><text>t</text></a></svg>', 2, "links to"),
    "style @import": (SVG_OPEN + '<style>\n@import "evil.css";\n</style></svg>', 2, "@import"),
    "style escaped @import": (SVG_OPEN + '<style>@\\69 mport url(evil.css);</style></svg>', 2, "@import"),
    "style cdata url": (SVG_OPEN + '<style><![CDATA[\nrect { fill: url("https://t.example/p.svg#g") }\n]]></style>'
                        '</svg>', 2, "url("),
    "style escaped url": (SVG_OPEN + '<style>rect { background: u\\72l(evil.png) }</style></svg>', 2, "url("),
    "style image-set": (SVG_OPEN + '<style>rect { background: image-set("evil.png" 1x) }</style></svg>', 2,
                        "image-set"),
    "style attribute url": (SVG_OPEN + '\n<rect style="fill: url(other.svg#g)"/></svg>', 3, "url("),
    "presentation url": (SVG_OPEN + '<rect mask="url(//t.example/m.svg#m)"/></svg>', 2, "url("),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SVGS))
def test_an_svg_pulling_in_anything_is_refused_at_its_line(name: str) -> None:
    text, line, said = HOSTILE_SVGS[name]
    refusal = svg_refusal(text.encode("utf-8"))
    assert refusal is not None, name
    assert refusal.line == line and said in refusal.reason and refusal.hint, refusal


def test_an_svg_styling_its_own_parts_passes() -> None:
    svg = (SVG_OPEN + '<defs><linearGradient id="g"/></defs>\n'
           '<style>rect { fill: url(#g); stroke: url( "#g" ) } /* a comment */</style>'
           '<rect style="fill:url(#g)" filter="url(#g)"/><image href="data:image/png;base64,iVBORw0KGgo="/></svg>')
    assert svg_refusal(svg.encode("utf-8")) is None


def test_a_url_in_a_style_comment_still_counts() -> None:
    """Comments are not parsed out: a checker that skips them and a browser that reads a
    string holding '/*' differently would disagree on what is a comment."""
    svg = SVG_OPEN + '<style>a { b: "/*" } rect { fill: url(evil.svg#g) } a { b: "*/" }</style></svg>'
    refusal = svg_refusal(svg.encode("utf-8"))
    assert refusal is not None and "url(" in refusal.reason


@pytest.mark.parametrize(("name", "shown"), [
    ("a\nb.csv", "\\x0a"), ("a\rb.csv", "\\x0d"), ("a\tb.csv", "\\x09"), ("a\x1bb.csv", "\\x1b"),
    ("a\x7fb.csv", "\\x7f"), ("a\x85b.csv", "\\x85"), ("a\u202eb.csv", "\\u202e"), ("a\u2028b.csv", "\\u2028"),
    ("a#b.csv", "#"), ("a?b.csv", "?"), ("100%.csv", "%"), ("a\\b.csv", "\\"), ("dir\n/b.csv", "\\x0a"),
])
def test_a_name_no_link_can_carry_is_refused(name: str, shown: str) -> None:
    refusal = asset_refusal(f"assets/{name}", b"a;b\n", None)
    assert refusal is not None and refusal.line is None and shown in refusal.reason, refusal
    assert "Rename" in refusal.hint


def test_ordinary_names_pass() -> None:
    for name in ("budget 2024-2025.csv", "séance_1.ogg", "plan (v2).png", "l'école.pdf", "a+b=c.txt", "[x].zip"):
        assert not _refused(f"assets/{name}", b"a;b\n"), name


def test_an_asset_whose_name_holds_a_newline_is_refused_in_one_line_and_never_linked(
        small: Path, tmp_path: Path) -> None:
    write(small, "assets/a\nb.csv", "a;b\n")
    replace(small, "notes/conseil-a.md", "et le [tableau](../assets/public.csv).",
            "et le [tableau](../assets/public.csv).\n\nEt [l'autre](../assets/a%0Ab.csv).")
    problems = check_content(small).problems
    (refused,) = [p for p in problems if p.code == "asset-name"]
    assert refused.severity is Severity.ERROR and "\n" not in refused.location() and "\n" not in refused.message
    assert refused.file == "assets/a\\x0ab.csv" and refused.hint
    (broken,) = [p for p in problems if p.code == "broken-link" and p.file == "notes/conseil-a.md"]
    assert broken.line == line_of(small, "notes/conseil-a.md", "a%0Ab.csv")
    with pytest.raises(ContentError):
        build(small, tmp_path / "site")


def test_the_types_map_says_what_serve_and_the_docs_say() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "content-format.md").read_text(encoding="utf-8")
    for extension in ASSET_TYPES:
        assert f"`{extension}`" in docs, f"{extension} is published but not documented"
    assert posixpath.splitext("x.tar.gz")[1] in ASSET_TYPES
