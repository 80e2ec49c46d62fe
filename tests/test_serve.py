"""`carnet serve` with a real HTTP client: published headers, live reload after a
successful rebuild, an error overlay on broken content while the previous site stays."""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
from pathlib import Path

import pytest

from generator.commands.serve import CLIENT, EVENTS, Server
from generator.site.headers import SECURITY_HEADERS
from support.corpus import replace


@pytest.fixture
def server(small: Path, tmp_path: Path):
    running = Server(small, tmp_path / "site", port=0, search=False)
    running.start()
    yield running
    running.close()


def get(server: Server, path: str) -> tuple[int, dict[str, str], bytes]:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def listen(server: Server) -> "queue.Queue[tuple[str, str]]":
    events: queue.Queue[tuple[str, str]] = queue.Queue()
    host, port = server.httpd.server_address[:2]

    def run() -> None:
        connection = http.client.HTTPConnection(host, port, timeout=30)
        connection.request("GET", EVENTS)
        response = connection.getresponse()
        kind = ""
        while True:
            line = response.fp.readline().decode("utf-8")
            if not line:
                return
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: "):
                events.put((kind, line[6:].strip()))

    threading.Thread(target=run, daemon=True).start()
    time.sleep(0.3)
    return events


def test_pages_are_served_with_the_published_headers_and_the_reload_script(server: Server) -> None:
    status, headers, body = get(server, "/notes/conseil-c.html")
    assert status == 200 and f'<script src="{CLIENT}"></script>'.encode() in body
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value
    assert get(server, CLIENT)[0] == 200
    assert get(server, "/../pyproject.toml")[0] == 404, "nothing outside the output directory"


def test_an_edit_reloads_the_page_after_the_rebuild(server: Server, small: Path) -> None:
    events = listen(server)
    replace(small, "notes/conseil-c.md", "Le budget est reconduit.", "Le budget est reconduit et augmenté.")
    kind, _data = events.get(timeout=20)
    assert kind == "reload"
    assert "reconduit et augmenté".encode() in get(server, "/notes/conseil-c.html")[2]
    # incremental: the edited note's files and the lists showing it, not the whole site
    total = sum(1 for p in server.out.rglob("*") if p.is_file())
    assert 0 < server.last_changed < total / 3


def test_a_broken_file_shows_an_overlay_and_the_previous_site_stays(server: Server, small: Path) -> None:
    before = get(server, "/notes/conseil-c.html")[2]
    events = listen(server)
    replace(small, "notes/conseil-c.md", "theme: [Budget]", "theme: [Inconnue]")
    kind, data = events.get(timeout=20)
    assert kind == "error-report"
    (message,) = json.loads(data)
    assert "notes/conseil-c.md:" in message and "unknown-category" in message
    assert get(server, "/notes/conseil-c.html")[2] == before
    # fixed: the next successful rebuild reloads the page, which shows the fix
    note = small / "notes" / "conseil-c.md"  # one write, so one rebuild
    note.write_text(note.read_text(encoding="utf-8").replace("theme: [Inconnue]", "theme: [Budget]")
                    .replace("Le budget est reconduit.", "Le budget est enfin reconduit."), encoding="utf-8")
    kind, _data = events.get(timeout=20)
    assert kind == "reload"
    assert "enfin reconduit".encode() in get(server, "/notes/conseil-c.html")[2]
