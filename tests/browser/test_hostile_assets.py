"""No script runs through an asset (issue 56), in Chromium, under `carnet serve`, the
published headers (as a host with its own map of types sends them), a plain server and
file://.

- Every hostile asset of the review — ``evil.xhtm`` behind an XML comment loading
  ``evil.es``, ``.xpdl``, ``.atom``, ``.rss``, ``.mml``, ``.kml``, ``.smil``, an
  extensionless file, SVGs with ``xi:href``, ``xml:base="data:"`` or ``<style>@import``,
  and a file for every extension Debian's /etc/mime.types maps to an active type
  (tests/fixtures/active-extensions.tsv) — is refused by ``check`` at its file, and
  ``build --strict`` fails.
- What is published — a file of every type on the allowlist carrying a script after its
  first line, a drawing SVG, a real picture — runs nothing opened directly, by any of the
  four ways, and the picture and the figure still show.
- Should an active file reach ``/assets/`` anyway (put there by hand after the build), the
  assets' own headers still run nothing, for every active extension: the control, the
  same file over a plain server and file://, shows the payload is live.
"""

from __future__ import annotations

import functools
import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.commands.serve import Server
from generator.corpus.assets import ASSET_TYPES
from generator.pipeline import build, check_content
from generator.problems import ContentError
from generator.site.headers import headers_for
from support.corpus import FIXTURES, copy_fixture, replace, write

pytestmark = pytest.mark.slow  # drives a real Chromium

ACTIVE = sorted({line.split("\t")[0] for line in (FIXTURES / "active-extensions.tsv").read_text().splitlines()
                 if line and not line.startswith("#")})

# runs in an HTML and an XHTML parser alike
PAYLOAD = (b'<html xmlns="http://www.w3.org/1999/xhtml"><head><script src="evil.es"></script></head><body>'
           b'<script>window.__pwned = (window.__pwned || 0) + 10</script>'
           b'<img src="x" onerror="window.__pwned = (window.__pwned || 0) + 100"/></body></html>\n')
EVIL_XHTM = b"<!-- a figure, it says -->\n" + PAYLOAD
EVIL_ES = b"window.__pwned = (window.__pwned || 0) + 1;\n"

SVG_NS = 'xmlns="http://www.w3.org/2000/svg"'
HOSTILE = {
    "doc/evil.xhtm": EVIL_XHTM,
    "doc/evil.es": EVIL_ES,
    "doc/evil.xpdl": b'<?xml version="1.0"?>\n<!-- xpdl -->\n' + PAYLOAD,
    "doc/evil.atom": b'<feed xmlns="http://www.w3.org/2005/Atom">' + PAYLOAD + b"</feed>",
    "doc/evil.rss": b'<?xml version="1.0"?><rss>' + PAYLOAD + b"</rss>",
    "doc/evil.mml": b'<math xmlns="http://www.w3.org/1998/Math/MathML">' + PAYLOAD + b"</math>",
    "doc/evil.kml": b'<kml xmlns="http://www.opengis.net/kml/2.2">' + PAYLOAD + b"</kml>",
    "doc/evil.smil": b'<smil xmlns="http://www.w3.org/ns/SMIL">' + PAYLOAD + b"</smil>",
    "doc/evil": b"\n\n" + PAYLOAD,
    "doc/xi.svg": (f'<svg {SVG_NS} xmlns:xi="http://www.w3.org/2001/XInclude"><use xi:href="evil.xhtm#x"/>'
                   "</svg>").encode(),
    "doc/base.svg": f'<svg {SVG_NS}><g xml:base="data:text/html,x"><use href="#a"/></g></svg>'.encode(),
    "doc/import.svg": f'<svg {SVG_NS}><style>@import "evil.css";</style><rect/></svg>'.encode(),
}

FIGURE = (f'<svg {SVG_NS} width="40" height="20"><title>Budget</title><style>rect {{ fill: #36c }}</style>'
          '<rect width="40" height="20"/></svg>\n').encode()


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x30\x60\xc0" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _link_all(content: Path, names: list[str]) -> None:
    links = "\n".join(f"[{i}](../assets/{name})" for i, name in enumerate(names))
    replace(content, "notes/conseil-a.md", "et le [tableau](../assets/public.csv).",
            f"et le [tableau](../assets/public.csv).\n\n{links}\n\n![figure](../assets/t/figure.svg)")


def test_every_hostile_asset_is_refused_at_its_file(tmp_path: Path) -> None:
    content = copy_fixture("small", tmp_path)
    written = dict(HOSTILE)
    written.update({f"debian/evil.{extension}": PAYLOAD for extension in ACTIVE})
    for name, data in written.items():
        write(content, f"assets/{name}", data)
    _link_all(content, sorted(written))
    refused = {p.file for p in check_content(content).problems if p.code == "active-asset" and p.is_error}
    assert refused == {f"assets/{name}" for name in written}
    with pytest.raises(ContentError):
        build(content, tmp_path / "site", strict=True, search=False)


def _listed() -> dict[str, bytes]:
    """A file of every type on the list, a script after its first line (a browser opening it
    as a page would run it), and a drawing and a picture that must still show."""
    files = {f"t/file{extension}": b"x\n" + PAYLOAD for extension in ASSET_TYPES if extension != ".svg"}
    files["t/figure.svg"] = FIGURE
    files["t/picture.png"] = _png(3, 2)
    return files


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """`carnet serve` over the small corpus with every listed type published; the site it
    built is then salted with what the checks refuse, as a careless upload would leave it."""
    root = tmp_path_factory.mktemp("hostile-assets")
    content = copy_fixture("small", root)
    for name, data in _listed().items():
        write(content, f"assets/{name}", data)
    _link_all(content, sorted(_listed()))
    running = Server(content, root / "site", port=0, search=False)
    running.start()
    site = running.out
    for name, data in _listed().items():
        assert (site / "assets" / name).read_bytes() == data, f"{name} is published as it is"
    write(site, "assets/t/evil.es", EVIL_ES)
    write(site, "assets/t/control.xhtm", EVIL_XHTM)
    for extension in ACTIVE:
        write(site, f"assets/t/active.{extension}", PAYLOAD)
    yield running, site
    running.close()


def _plain(site: Path, headers: bool) -> tuple[ThreadingHTTPServer, str]:
    """http.server: its types from the system's map (as a host's own), with the published
    headers or none."""
    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            if headers:
                for name, value in headers_for(self.path.split("?", 1)[0]).items():
                    self.send_header(name, value)
            super().end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


WAYS = ["carnet serve", "published headers", "no headers", "file://"]
SENDS_HEADERS = {"carnet serve", "published headers"}


@pytest.fixture(scope="module", params=WAYS)
def origin(request: pytest.FixtureRequest, served: tuple[Server, Path]) -> Iterator[tuple[str, str]]:
    running, site = served
    if request.param == "carnet serve":
        yield request.param, running.url
    elif request.param == "file://":
        yield request.param, site.as_uri() + "/"
    else:
        server, url = _plain(site, headers=request.param == "published headers")
        yield request.param, url
        server.shutdown()
        server.server_close()


def _pwned(browser, base: str, rels: list[str]) -> dict[str, object]:
    """What ``window.__pwned`` (or a dialog) says after opening each of ``rels`` on its own;
    a file the browser downloads instead of opening ran nothing."""
    context = browser.new_context(accept_downloads=False)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    found: dict[str, object] = {}
    try:
        for rel in rels:
            try:
                page.goto(base + rel, wait_until="load", timeout=10_000)
            except Exception as error:  # a download ends the navigation (Playwright's Error)
                if "Download is starting" not in str(error):
                    raise
                page.goto("about:blank")
                continue
            page.wait_for_timeout(30)
            value = page.evaluate("window.__pwned")
            if value is not None or dialogs:
                found[rel] = value if value is not None else dialogs[:]
                dialogs.clear()
            page.goto("about:blank")
    finally:
        context.close()
    return found


def test_what_is_published_runs_nothing_opened_directly(browser, origin: tuple[str, str]) -> None:
    way, base = origin
    rels = [f"assets/{name}" for name in sorted(_listed())] + ["notes/conseil-a.html"]
    assert _pwned(browser, base, rels) == {}, way


def test_a_picture_and_a_figure_still_show(browser, origin: tuple[str, str]) -> None:
    way, base = origin
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(base + "assets/t/picture.png")
        assert page.evaluate("document.images.length === 1 && document.images[0].naturalWidth") == 3, way
        page.goto(base + "assets/t/figure.svg")
        assert page.evaluate("document.documentElement.localName") == "svg", way
        assert page.evaluate("getComputedStyle(document.querySelector('rect')).fill") == "rgb(51, 102, 204)", \
            f"{way}: the figure's own <style> applies"
        page.goto(base + "notes/conseil-a.html")
        page.locator("img[src$='figure.svg']").scroll_into_view_if_needed()
        page.wait_for_function("() => [...document.images].some(i => i.src.endsWith('figure.svg') && i.complete "
                               "&& i.naturalWidth === 40)", timeout=10_000)
    finally:
        context.close()


def test_an_active_file_put_in_assets_by_hand_runs_nothing_under_the_headers(
        browser, origin: tuple[str, str]) -> None:
    way, base = origin
    if way in SENDS_HEADERS:
        ran = _pwned(browser, base, ["assets/t/control.xhtm"] + [f"assets/t/active.{e}" for e in ACTIVE])
        assert ran == {}, f"{way}: {ran}"
    else:  # the control: without the headers the payload is live (11 of these 157 files run over
        # file://, 9 over a plain server, as measured once), which is why the checks refuse them
        ran = _pwned(browser, base, ["assets/t/control.xhtm", "assets/t/active.html"])
        assert ran == {"assets/t/control.xhtm": 111, "assets/t/active.html": 111}, f"{way}: {ran}"
