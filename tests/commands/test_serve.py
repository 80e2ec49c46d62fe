"""`carnet serve` with a real HTTP client: published headers, live reload after a
successful rebuild, an error overlay on broken content while the previous site stays,
and hostile requests sent byte for byte over a raw socket, each refused in one log line."""

from __future__ import annotations

import contextlib
import http.client
import inspect
import json
import queue
import socket
import threading
import time
from pathlib import Path

import pytest

from generator.commands.serve import CLIENT, EVENTS, Server
from generator.site.headers import SECURITY_HEADERS
from support.corpus import copy_fixture, replace


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


def listen(server: Server) -> queue.Queue[tuple[str, str]]:
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
    assert get(server, "/../pyproject.toml")[0] == 400, "nothing outside the output directory"


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
    assert b"enfin reconduit" in get(server, "/notes/conseil-c.html")[2]


def test_serve_listens_on_the_loopback_address_only_by_default(server: Server) -> None:
    assert inspect.signature(Server).parameters["host"].default == "127.0.0.1"
    assert server.httpd.socket.getsockname()[0] == "127.0.0.1"


# -- hostile requests ------------------------------------------------------------------

SECRET = b"carnet-test-secret-outside-the-site"
PASSWD = b"root:x:0:0"  # the first line of /etc/passwd on any Linux


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for every hostile request, its output tree salted after the build with
    symbolic links leading out of it (to a file, a page, a folder with an index, and /etc),
    one looping on itself and one staying inside it."""
    root = tmp_path_factory.mktemp("hostile")
    running = Server(copy_fixture("small", root), root / "site", port=0, search=False)
    running.start()
    outside = root / "outside"
    outside.mkdir()
    for name in ("secret.txt", "index.html", "secret.html"):
        (outside / name).write_bytes(b"<html><body>" + SECRET + b"</body></html>")
    (running.out / "leak.txt").symlink_to(outside / "secret.txt")
    (running.out / "leak.html").symlink_to(outside / "secret.html")
    (running.out / "outside").symlink_to(outside, target_is_directory=True)
    (running.out / "etc").symlink_to("/etc", target_is_directory=True)
    (running.out / "loop.html").symlink_to(running.out / "loop.html")
    (running.out / "alias.html").symlink_to(running.out / "notes" / "conseil-c.html")
    yield running
    running.close()


def raw(server: Server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` exactly as written; the answer's status, headers and body."""
    answer = b""
    with socket.create_connection(server.httpd.socket.getsockname()[:2], timeout=10) as connection:
        with contextlib.suppress(OSError):  # an oversized request may be answered, and hung up on, before it is all sent
            connection.sendall(request)
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:  # hung up with unread request bytes: the answer came first
            pass
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    assert status_line.startswith("HTTP/1."), f"no status line: {answer[:200]!r}"
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def line(target: bytes, method: bytes = b"GET") -> bytes:
    return method + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


# 400: the target cannot name a file (malformed, not UTF-8, NUL or control characters, a
#      backslash, a '..' segment, a fragment, not a path); 404: a well-formed path naming no
#      file inside the served directory (symbolic links leading out included); 405: a method
#      of HTTP the server refuses; 501: a method it does not know; 414/431/505: a target,
#      header or protocol version out of bounds, as the standard names them.
HOSTILE = [
    pytest.param(line(b"/%00"), 400, id="nul"),
    pytest.param(line(b"/a%00b.html"), 400, id="nul-in-name"),
    pytest.param(line(b"/notes/%0a%1b.html"), 400, id="control-characters"),
    pytest.param(line(b"/%2e%2e/%2e%2e/etc/passwd"), 400, id="encoded-dot-dot"),
    pytest.param(line(b"/..%2f..%2fetc/passwd"), 400, id="encoded-slash"),
    pytest.param(line(b"/../../../../etc/passwd"), 400, id="dot-dot"),
    pytest.param(line(b"/notes/..\\..\\x"), 400, id="backslashes"),
    pytest.param(line(b"/notes/%5c..%5cx"), 400, id="encoded-backslash"),
    pytest.param(line(b"//etc/passwd"), 404, id="double-slash"),
    pytest.param(line(b"/" + b"a" * 10_000), 414, id="long-path"),
    pytest.param(line(b"/" + b"a" * 3_000), 404, id="long-name"),
    pytest.param(line(b"/%ff%fe"), 400, id="invalid-utf8"),
    pytest.param(line(b"/%ed%a0%80.html"), 400, id="lone-surrogate"),
    pytest.param(line(b"/\xff\xfe.html"), 400, id="raw-non-ascii"),
    pytest.param(line(b"/notes/conseil-c.html?a=1#b"), 400, id="fragment"),
    pytest.param(line(b"/nope.html?/../../etc/passwd"), 404, id="query"),
    pytest.param(line(b"/%"), 400, id="lone-percent"),
    pytest.param(line(b"/%zz"), 400, id="bad-escape"),
    pytest.param(line(b"/notes/"), 404, id="folder-without-index"),  # no listing, as once published
    pytest.param(line(b"/leak.txt"), 404, id="symlink-to-file"),
    pytest.param(line(b"/leak.html"), 404, id="symlink-to-page"),
    pytest.param(line(b"/outside/"), 404, id="symlink-to-folder-index"),
    pytest.param(line(b"/outside/secret.txt"), 404, id="symlink-to-folder-file"),
    pytest.param(line(b"/etc/passwd"), 404, id="symlink-to-etc"),
    pytest.param(line(b"/loop.html"), 404, id="symlink-loop"),
    pytest.param(line(b"/%2e%2e/etc/passwd", b"HEAD"), 400, id="head-traversal"),
    pytest.param(line(b"/%00", b"HEAD"), 400, id="head-nul"),
    pytest.param(line(b"/", b"BREW"), 501, id="unknown-method"),
    pytest.param(line(b"/", b"POST"), 405, id="post"),
    pytest.param(line(b"*", b"OPTIONS"), 405, id="options"),
    pytest.param(line(b"etc/passwd"), 400, id="relative-target"),
    pytest.param(line(b"http://127.0.0.1/etc/passwd"), 400, id="absolute-target"),
    pytest.param(b"GET\r\n\r\n", 400, id="no-path"),
    pytest.param(b"GET HTTP/1.1\r\n\r\n", 400, id="no-path-with-version"),
    pytest.param(b"GET /\r\n\r\n", 400, id="http-0.9"),
    pytest.param(b"GET / HTTP/0.9\r\n\r\n", 505, id="version-0.9"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 100_000 + b"\r\n\r\n", 431,
                 id="long-header"),
]


@pytest.mark.parametrize("request_bytes, status", HOSTILE)
def test_a_hostile_request_gets_a_plain_refusal_and_one_log_line(
        hostile_server: Server, capfd: pytest.CaptureFixture[str], request_bytes: bytes, status: int) -> None:
    capfd.readouterr()
    code, headers, body = raw(hostile_server, request_bytes)
    assert code == status
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value
    assert headers["Content-Type"].startswith("text/plain")
    assert SECRET not in body and PASSWD not in body
    if request_bytes.startswith(b"HEAD"):
        assert body == b""
    log = capfd.readouterr().err
    assert "Traceback" not in log
    assert log.count("\n") == 1 and log.startswith(f"carnet serve: {status} "), log
    # still serving
    assert get(hostile_server, "/notes/conseil-c.html")[0] == 200


def test_ordinary_requests_still_work_and_stay_out_of_the_log(
        hostile_server: Server, capfd: pytest.CaptureFixture[str]) -> None:
    capfd.readouterr()
    page = get(hostile_server, "/notes/conseil-c.html")[2]
    assert get(hostile_server, "/alias.html")[2] == page, "a link staying inside the site is followed"
    assert get(hostile_server, "/notes//conseil-c.html?from=search")[2] == page
    assert get(hostile_server, "/")[0] == 200
    assert get(hostile_server, CLIENT + "?v=2")[0] == 200
    code, headers, body = raw(hostile_server, line(b"/notes/conseil-c.html", b"HEAD"))
    assert code == 200 and body == b"" and int(headers["Content-Length"]) == len(page)
    style = next(hostile_server.out.rglob("*.css")).relative_to(hostile_server.out).as_posix()
    code, headers, body = raw(hostile_server, line(b"/" + style.encode()))
    assert code == 200 and headers["Content-Type"].startswith("text/css") and body
    assert capfd.readouterr().err == ""
