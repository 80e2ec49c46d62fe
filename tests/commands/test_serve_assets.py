"""`carnet serve` sends an asset with the assets' own sandboxed policy and the media type
of Carnet's allowlist, never the system's guess (issue 56): a host whose /etc/mime.types
maps .csv to HTML still gets text/csv."""

from __future__ import annotations

import http.client
import mimetypes
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from generator.commands.serve import Server
from generator.site.headers import ASSET_CONTENT_SECURITY_POLICY, SECURITY_HEADERS


@pytest.fixture
def server(small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # the system's map, as a hostile or careless host has it
    monkeypatch.setitem(SimpleHTTPRequestHandler.extensions_map, ".csv", "text/html")
    monkeypatch.setitem(SimpleHTTPRequestHandler.extensions_map, ".txt", "text/html")
    monkeypatch.setattr(mimetypes, "guess_type", lambda *args, **kwargs: ("text/html", None))
    running = Server(small, tmp_path / "site", port=0, search=False)
    running.start()
    yield running
    running.close()


def _get(server: Server, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_an_asset_is_sent_sandboxed_with_carnets_own_type(server: Server) -> None:
    for path in ("/assets/public.csv", "/./assets//public.csv", "/assets/public.csv?v=1"):
        for method in ("GET", "HEAD"):
            status, headers, body = _get(server, path, method)
            assert status == 200, path
            assert headers["Content-Type"] == "text/csv", (path, headers["Content-Type"])
            assert headers["Content-Security-Policy"] == ASSET_CONTENT_SECURITY_POLICY, path
            assert headers["Content-Security-Policy"].startswith("sandbox;")
            assert headers["X-Content-Type-Options"] == "nosniff"
            assert body == (b"" if method == "HEAD" else (server.out / "assets/public.csv").read_bytes())


def test_the_sites_own_files_keep_the_sites_policy_and_carnets_types(server: Server) -> None:
    status, headers, body = _get(server, "/notes/conseil-c.txt")
    assert status == 200 and body
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    status, headers, _ = _get(server, "/notes/conseil-c.html")
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]


def test_a_missing_asset_is_refused_under_the_assets_policy(server: Server) -> None:
    status, headers, _ = _get(server, "/assets/absent.html")
    assert status == 404 and headers["Content-Security-Policy"] == ASSET_CONTENT_SECURITY_POLICY
    status, headers, _ = _get(server, "/notes/absent.html")
    assert status == 404 and headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
