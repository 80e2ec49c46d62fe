"""Browser tests: the example site served on 127.0.0.1 with the site's real security
headers, driven by Playwright in Debian's Chromium.

Locally, without Chromium or Playwright, these tests skip and say why; under CI=true
they fail instead, since CI installs both."""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.site.headers import headers_for

CHROMIUM = os.environ.get("CARNET_CHROMIUM", "/usr/bin/chromium")
CONTENT = Path(__file__).resolve().parents[2] / "content"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required",
]


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the 'playwright' package is not installed (pip install -e '.[test]')"
    if not (shutil.which(CHROMIUM) or Path(CHROMIUM).is_file()):
        return f"no Chromium at {CHROMIUM} (install Debian's 'chromium' package, or set CARNET_CHROMIUM)"
    return None


@pytest.fixture(scope="session")
def browser():
    reason = _missing()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests cannot run under CI: {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class _Handler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:  # the published headers, the assets' own policy under /assets/
        for name, value in headers_for(self.path.split("?", 1)[0]).items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


@pytest.fixture(scope="session")
def site_url(example_site: Path) -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(example_site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser, site_url):
    context = browser.new_context(base_url=site_url)
    page = context.new_page()
    yield page
    context.close()
