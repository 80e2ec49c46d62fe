"""``carnet serve``: build, serve the site on 127.0.0.1 with the published headers, watch
the content directory, the theme the build uses and the prompts, rebuild on change, and
reload the open page only after a successful rebuild (server-sent events).

Only events that change a file count: created, modified, moved, deleted (watchdog also
reports every open and close, the build's own reads included, which would start the next
build without end). Folder "modified" events, hidden files and editors' backups, and the
output and build cache folders are ignored; a burst of events makes one rebuild once it
has been quiet for ``DEBOUNCE`` seconds. Rebuilds are incremental: the build cache lives
in memory, so an edit redoes and rewrites only what it changed.

Each rebuild prints one line with its result on stdout. A content error prints every
problem with file:line on stderr, as ``carnet check`` does, and a line saying the previous
site stays served; the open page shows them in an overlay.

Every file goes with the published headers (``generator/site/headers.py``: the assets'
``sandbox`` policy under ``/assets/``) and a media type from Carnet's own map, never the
system's. Only files inside the output directory are ever served, symbolic links
included: any other request gets a plain-text refusal (with the security headers) and
one line in the log — 400 a target naming no file at all, 404 no such file inside, 405 a
method of HTTP not served (only GET and HEAD are; and POST to the edit layer with ``--edit``,
generator/authoring/api.py, which refuses a write from anywhere but a page of its own run), 501
an unknown method, 414/431/505 a target, header or version out of bounds."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, TextIO
from urllib.parse import unquote_to_bytes

from watchdog.events import (
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from generator.engine.cache import BuildCache, default_cache_path
from generator.engine.jobs import available_cores
from generator.engine.search import reindex_site
from generator.llm.prompts import PROMPTS
from generator.pipeline import build
from generator.problems import CarnetError, ContentError, Problem, Severity, print_problems
from generator.site.headers import content_type, headers_for
from generator.site.theme import check_theme
from generator.terminal import visible

EVENTS = "/__carnet/events"
CLIENT = "/__carnet/livereload.js"
DEBOUNCE = 0.3
SEARCH_DELAY = 3.0
MAX_TARGET = 4096  # PATH_MAX: no file of a site has a longer address
ALLOWED = "GET, HEAD"

LIVERELOAD_JS = b"""// carnet serve: reload after a successful rebuild; show build errors over the page.
(function () {
  var source = new EventSource("/__carnet/events");
  var overlay = null;
  source.addEventListener("reload", function () { window.location.reload(); });
  source.addEventListener("error-report", function (event) {
    if (!overlay) {
      overlay = document.createElement("pre");
      overlay.id = "carnet-build-error";
      overlay.style.position = "fixed"; overlay.style.inset = "1rem"; overlay.style.zIndex = "1000";
      overlay.style.padding = "1rem"; overlay.style.background = "#2b1111"; overlay.style.color = "#ffdede";
      overlay.style.overflow = "auto"; overlay.style.whiteSpace = "pre-wrap";
      document.body.appendChild(overlay);
    }
    overlay.textContent = JSON.parse(event.data).join("\\n");
  });
})();
"""


class Hub:
    """Connected event streams, and the last build outcome for late joiners."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.version = 0
        self.event = ("reload", "[]")

    def publish(self, kind: str, data: str) -> None:
        with self.lock:
            self.version += 1
            self.event = (kind, data)
            self.lock.notify_all()

    def wait(self, seen: int, timeout: float) -> tuple[int, tuple[str, str] | None]:
        with self.lock:
            if self.version == seen:
                self.lock.wait(timeout)
            return self.version, (self.event if self.version != seen else None)


@dataclass(frozen=True)
class Refusal:
    """Why a request gets no file: its status, and the reason the log line gives."""

    status: int
    reason: str


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def request_path(target: str) -> str | Refusal:
    """The decoded path a request target names (its query left out), or why it names none.
    Strict, since browsers are regular: they send an ASCII, percent-encoded absolute path
    with neither '..' nor a fragment, so anything else was made by hand."""
    if len(target) > MAX_TARGET:
        return Refusal(414, "request target too long")
    if not target.startswith("/"):
        return Refusal(400, "request target is not an absolute path")
    if not (target.isascii() and target.isprintable()):
        return Refusal(400, "raw non-ASCII or control character in the request target")
    if "#" in target:
        return Refusal(400, "fragment in the request target")
    path = target.split("?", 1)[0]
    if _BAD_ESCAPE.search(path):
        return Refusal(400, "malformed percent escape")
    try:
        decoded = unquote_to_bytes(path).decode("utf-8")  # strict: rejects lone surrogates too
    except UnicodeDecodeError:
        return Refusal(400, "path is not UTF-8")
    if any(ch < " " or ch == "\x7f" for ch in decoded):
        return Refusal(400, "NUL or control character in the path")
    if "\\" in decoded:  # a separator on Windows; no file of a site has one in its name
        return Refusal(400, "backslash in the path")
    if ".." in decoded.split("/"):
        return Refusal(400, "'..' in the path")
    return decoded


def locate(root: Path, path: str) -> Path | Refusal:
    """The regular file that ``path`` (from request_path) names inside ``root``, a folder
    standing for its index.html. Symbolic links are followed only where they end inside."""
    base = root.resolve()
    try:
        found = base.joinpath(*(part for part in path.split("/") if part not in ("", "."))).resolve(strict=True)
        if found.is_dir():
            found = (found / "index.html").resolve(strict=True)
        elif path.endswith("/"):
            return Refusal(404, "a file addressed as a folder")
        if not found.is_relative_to(base):
            return Refusal(404, "outside the served directory")
        if not found.is_file():
            return Refusal(404, "not a regular file")
    except (OSError, RuntimeError, ValueError):  # missing, name too long, a symlink loop (RuntimeError)
        return Refusal(404, "no such file")
    return found


def printable(text: str, limit: int = 200) -> str:
    """``text`` safe for one log line: escaped, and cut at ``limit`` characters."""
    escaped = ascii(text[:limit])[1:-1]
    return escaped + ("…" if len(text) > limit else "")


class Listener(ThreadingHTTPServer):
    """The HTTP server: an error escaping a request takes one log line, never a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):  # the browser hung up (a reload, a closed tab): routine
            return
        sys.stderr.write(f"carnet serve: request from {printable(str(client_address))} failed: "
                         f"{type(error).__name__}: {printable(str(error))}\n")


class EditReply(Protocol):
    """An answer of the edit layer (generator/authoring/api.py's ``Reply``)."""

    @property
    def status(self) -> int: ...
    @property
    def body(self) -> bytes: ...
    @property
    def kind(self) -> str: ...
    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...


class EditLayer(Protocol):
    """What the handler asks of ``--edit``'s layer: generator/authoring/api.py's ``EditApi``,
    which the command line makes (it imports the commands, so this module cannot)."""

    def header_map(self, items: Iterable[tuple[str, str]]) -> dict[str, str]: ...
    def read(self, target: str, path: str, headers: Mapping[str, str], port: int) -> EditReply | None: ...
    def inject(self, page: bytes, path: str, headers: Mapping[str, str], port: int) -> bytes: ...
    def write(self, path: str, headers: Mapping[str, str], read_body: Callable[[int], bytes],
              port: int) -> EditReply: ...
    def address(self, url: str) -> str: ...


def _handler(out_dir: Path, hub: Hub, stop: threading.Event,
             image_hosts: list[tuple[str, ...]] | None = None,
             editing: EditLayer | None = None) -> Callable[..., SimpleHTTPRequestHandler]:
    """``image_hosts``: one item, the hosts the last build's pages show images of (set after each build);
    ``editing``: the edit layer of ``--edit`` (an ``EditApi`` of generator/authoring/api.py, which imports
    the commands: the command line makes it, never this module), None without it."""
    hosts = image_hosts if image_hosts is not None else [()]
    allowed = ALLOWED if editing is None else f"{ALLOWED}, POST"  # POST: the edit layer's writes

    class Handler(SimpleHTTPRequestHandler):
        raw_requestline: bytes  # set by handle_one_request; missing from the stubs
        default_request_version = "HTTP/1.0"  # a request refused before its version is read still gets headers
        served = "/"  # the decoded path being answered: an asset gets the assets' own policy

        def log_message(self, *args: object) -> None:
            pass  # answers stay out of the log; a refusal writes its own line (send_error)

        def end_headers(self) -> None:
            for name, value in headers_for(self.served, hosts[0]).items():
                self.send_header(name, value)
            super().end_headers()

        def parse_request(self) -> bool:
            # HTTP/0.9 ("GET /", no version) answers with neither status nor headers: refused
            requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
            if len(requestline.split()) not in (0, 3):
                self.requestline, self.command = requestline, ""
                self.request_version, self.close_connection = self.default_request_version, True
                self.send_error(400, "request line is not METHOD /path HTTP/version")
                return False
            if not super().parse_request():
                return False
            if self.request_version == "HTTP/0.9":
                self.request_version = self.default_request_version
                self.send_error(505, "HTTP/0.9 is not served")
                return False
            return True

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """A plain-text refusal (never echoing the request raw) and its one log line."""
            phrase = HTTPStatus(code).phrase
            reason = printable(message or phrase)
            sys.stderr.write(f"carnet serve: {code} {printable(self.requestline)} ({reason})\n")
            body = f"{code} {phrase}: {reason}\n".encode()
            self.send_response(code, phrase)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if code == 405:
                self.send_header("Allow", allowed)
            self.send_header("Connection", "close")  # after a refusal, the stream is not trusted
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(with_body=True)

        def do_HEAD(self) -> None:
            self._answer(with_body=False)

        def _refuse_method(self) -> None:
            self.send_error(405, f"only {allowed} are served")

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse_method

        def do_POST(self) -> None:
            if editing is None:
                self._refuse_method()
                return
            path = request_path(self.path)
            if isinstance(path, Refusal):
                self.send_error(path.status, path.reason)
                return
            port = int(self.connection.getsockname()[1])  # the port this request came in on
            reply = editing.write(path, editing.header_map(self.headers.items()), self.rfile.read, port)
            self.close_connection = reply.status != 200  # an unread body must not be read as the next request
            self._reply(reply, with_body=True)

        def _reply(self, reply: EditReply, with_body: bool) -> None:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self._send_head_rest(reply.kind, len(reply.body))
            if with_body:
                self.wfile.write(reply.body)

        def _answer(self, with_body: bool) -> None:
            path = request_path(self.path)
            if isinstance(path, Refusal):
                self.send_error(path.status, path.reason)
                return
            self.served = path
            try:
                self._answer_path(path, with_body)
            finally:
                self.served = "/"

        def _answer_path(self, path: str, with_body: bool) -> None:
            port = int(self.connection.getsockname()[1])  # the port this request came in on
            headers = editing.header_map(self.headers.items()) if editing is not None else {}
            reply = editing.read(self.path, path, headers, port) if editing is not None else None
            if reply is not None:
                self._reply(reply, with_body)
                return
            if path == CLIENT:
                self._send(200, "text/javascript", LIVERELOAD_JS, with_body)
                return
            if path == EVENTS and with_body:
                self._events()
                return
            found = locate(out_dir, path)
            if isinstance(found, Refusal):
                self.send_error(found.status, found.reason)
                return
            try:
                file = found.open("rb")
            except OSError:  # removed or made unreadable since located (a rebuild)
                self.send_error(404, "unreadable file")
                return
            with file:
                if found.suffix == ".html":
                    page = file.read().replace(b"</body>", f'<script src="{CLIENT}"></script></body>'.encode())
                    if editing is not None:
                        page = editing.inject(page, path, headers, port)
                    self._send(200, "text/html; charset=utf-8", page, with_body)
                    return
                # Carnet's own map, never the system's (mimetypes reads /etc/mime.types)
                self._send_head(200, content_type(path), os.fstat(file.fileno()).st_size)
                if with_body:
                    shutil.copyfileobj(file, self.wfile)

        def _send_head(self, code: int, kind: str, length: int) -> None:
            self.send_response(code)
            self._send_head_rest(kind, length)

        def _send_head_rest(self, kind: str, length: int) -> None:
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(length))
            self.send_header("Cache-Control", "no-store")  # a rebuild must show on the next reload
            self.end_headers()

        def _send(self, code: int, kind: str, data: bytes, with_body: bool = True) -> None:
            self._send_head(code, kind, len(data))
            if with_body:
                self.wfile.write(data)

        def _events(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            seen = hub.version
            try:
                while not stop.is_set():
                    seen, event = hub.wait(seen, 1.0)
                    message = f"event: {event[0]}\ndata: {event[1]}\n\n" if event else ": keep-alive\n\n"
                    self.wfile.write(message.encode("utf-8"))
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return functools.partial(Handler, directory=str(out_dir))


# What an edit does to a file. watchdog 7 also reports every open and close, the build's
# own reads included: reacting to those made each build start the next one.
CONTENT_CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_MOVED, EVENT_TYPE_DELETED})


def scratch(name: str) -> bool:
    """A name no build reads: hidden (the content loader skips them; editors' swap files,
    atomic writes and the build's staging folders are hidden until renamed into place,
    and that rename is seen) or an editor's backup (``note.md~``, emacs ``#note.md#``)."""
    return name.startswith(".") or name.endswith("~") or (len(name) > 1 and name.startswith("#") and name.endswith("#"))


@dataclass(frozen=True)
class Watched:
    """The folders a build reads (resolved), less the folders it writes."""

    folders: tuple[Path, ...]
    ignored: tuple[Path, ...] = ()

    def concerns(self, path: str) -> bool:
        where = Path(os.path.abspath(path))
        if any(where.is_relative_to(folder) for folder in self.ignored):
            return False
        for folder in self.folders:
            if where.is_relative_to(folder):
                return not any(scratch(part) for part in where.relative_to(folder).parts)
        return False

    def relevant(self, event: FileSystemEvent) -> bool:
        """Whether ``event`` may change what a build gives."""
        if event.event_type not in CONTENT_CHANGES:
            return False
        if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
            return False  # an entry was added or removed: that entry's own event says so
        return any(self.concerns(path) for path in event_paths(event))  # a save renames a temp file into place


def event_paths(event: FileSystemEvent) -> list[str]:
    """The paths an event names: a move, both ends."""
    paths = [event.src_path, event.dest_path] if event.event_type == EVENT_TYPE_MOVED else [event.src_path]
    return [os.fsdecode(path) for path in paths]


def watched_folders(content: Path, theme: Path) -> tuple[Path, ...]:
    """The content, the theme the build uses and the prompts, resolved; a folder inside
    another is left out (watched through it, its events would come twice)."""
    folders: list[Path] = []
    for folder in (content, theme, PROMPTS):
        if folder.is_dir() and folder.resolve() not in folders:
            folders.append(folder.resolve())
    return tuple(f for f in folders if not any(f != other and f.is_relative_to(other) for other in folders))


class Changes(FileSystemEventHandler):
    """Hands the relevant events of the observer's thread to ``changed``, with the paths
    they name (a move names both)."""

    def __init__(self, watched: Watched, changed: Callable[[Iterable[str]], None]) -> None:
        super().__init__()
        self.watched, self.changed = watched, changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        if self.watched.relevant(event):
            self.changed(event_paths(event))


class Server:
    """The whole of ``carnet serve``; ``start()`` returns once the first build is served.
    Each rebuild's result goes to ``stdout``, its problems to ``stderr`` (default: the
    process's streams at the time of writing)."""

    def __init__(self, content: Path, out: Path, host: str = "127.0.0.1", port: int = 8000,
                 theme: Path | None = None, search: bool = True, debounce: float = DEBOUNCE,
                 stdout: TextIO | None = None, stderr: TextIO | None = None,
                 edit: EditLayer | None = None) -> None:
        """``edit``: the edit layer of ``--edit`` (generator.authoring.api.edit_layer), None without it."""
        self.content, self.out, self.theme, self.search = content, out, theme, search
        self.debounce = debounce
        self._stdout, self._stderr = stdout, stderr
        self.hub = Hub()
        self.stop_event = threading.Event()
        self.image_hosts: list[tuple[str, ...]] = [()]  # the built site's csp: img_hosts, for its headers
        self.editing = edit
        if edit is not None and host != "127.0.0.1":  # the edit layer writes the content: never from another machine
            raise CarnetError(f"carnet serve --edit listens on 127.0.0.1 only, not {host}")
        self.httpd = Listener((host, port), _handler(out, self.hub, self.stop_event, self.image_hosts, self.editing))
        self.httpd.daemon_threads = True
        self.timer: threading.Timer | None = None
        self.search_timer: threading.Timer | None = None
        self.timer_lock = threading.Lock()  # timers are set from the observer's and timers' threads
        self.lock = threading.Lock()
        self.observer: BaseObserver | None = None
        self.language = "fr"
        # read from disk for the first build (a site built before starts warm), then kept in memory
        self.cache = BuildCache.open(default_cache_path(out))
        self.cache.resident = True  # what a rebuild recalls stays in memory, not read back from disk each time
        self.last_changed = 0
        # the paths the watcher saw change since the last rebuild began; ``None``: not all of them
        # are known (the first rebuild, or one after a rebuild that stopped), the inputs are walked
        self.paths: set[Path] | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.socket.getsockname()[:2]
        return f"http://{host}:{port}/"

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self._stderr or sys.stderr

    def _print_problems(self, problems: list[Problem]) -> None:
        print_problems(problems, self.content, "text", self.stderr)

    def rebuild(self) -> bool:
        with self.lock:
            started = time.perf_counter()
            with self.timer_lock:  # what changes from here on is the next rebuild's
                changed, self.paths = self.paths, set()
            stopped = True
            try:
                # the old tree is removed while the publisher reads the page: the next rebuild waits for it;
                # the paths the watcher saw are looked at again, the rest of the inputs taken as it was
                result = build(self.content, self.out, theme_dir=self.theme, search=False, cache=self.cache,
                               linger=True, edited=changed)
                stopped = False
                self.last_changed = result.changed
                self.image_hosts[0] = result.image_hosts
            except ContentError as exc:
                self._print_problems(exc.problems)
                print(f"carnet serve: rebuild stopped: {exc}; the previous site stays served",
                      file=self.stderr, flush=True)
                report = [p.format_text(str(self.content)) for p in exc.problems if p.stops(False)]
                self.hub.publish("error-report", json.dumps(report, ensure_ascii=False))
                return False
            except CarnetError as exc:
                print(f"carnet serve: rebuild stopped: {visible(str(exc), keep_newlines=True)}; "
                      "the previous site stays served", file=self.stderr, flush=True)
                self.hub.publish("error-report", json.dumps([str(exc)], ensure_ascii=False))
                return False
            finally:
                if stopped:  # how far it went is not known: the next rebuild walks the inputs
                    with self.timer_lock:
                        self.paths = None
            elapsed = time.perf_counter() - started
            what = result.what_changed
            warnings = sum(p.severity is Severity.WARNING for p in result.problems)
            noted = f" ({warnings} warning(s): 'carnet check' lists them)" if warnings else ""
            print(f"rebuilt in {elapsed:.2f} s: {what}{noted}", file=self.stdout, flush=True)
        self.hub.publish("reload", "[]")
        if self.search:  # the search index is deferred and batched: once edits pause
            with self.timer_lock:
                if self.search_timer:
                    self.search_timer.cancel()
                self.search_timer = threading.Timer(SEARCH_DELAY, self._index)
                self.search_timer.daemon = True
                self.search_timer.start()
        return True

    def _index(self) -> None:
        with self.lock:
            try:
                reindex_site(self.out, self.language)
            except CarnetError as exc:  # the pages stay served; only their search lags
                print(f"carnet serve: search index not updated: {visible(str(exc), keep_newlines=True)}",
                      file=self.stderr, flush=True)

    def changed(self, paths: Iterable[str] | None = None) -> None:
        """Debounced: a burst of events (a save, a checkout) makes one rebuild, once it has
        been quiet for ``debounce`` seconds; ``paths``: those the events name (``None``: not
        known, the rebuild walks the inputs)."""
        with self.timer_lock:
            if self.stop_event.is_set():
                return
            if paths is None:
                self.paths = None
            elif self.paths is not None:
                self.paths.update(Path(path) for path in paths)
            if self.timer:
                self.timer.cancel()
            self.timer = threading.Timer(self.debounce, self.rebuild)
            self.timer.daemon = True
            self.timer.start()

    def watched(self) -> Watched:
        """The content, the theme the build uses and the prompts; less the output and the
        build cache, which the build writes (should one lie inside a watched folder)."""
        ignored = (self.out.resolve(), default_cache_path(self.out).parent.resolve())
        return Watched(watched_folders(self.content, check_theme(self.theme)), ignored)

    def start(self) -> None:
        try:
            # the first build uses every core: no other thread runs yet, so forking workers is safe.
            # Rebuilds stay in this process (its watcher and server threads make forking unsafe, and an
            # edit redoes a few notes, below what a worker is worth)
            result = build(self.content, self.out, theme_dir=self.theme, search=self.search, cache=self.cache,
                           jobs=available_cores() if threading.active_count() == 1 else 1)
        except ContentError as exc:  # the command line prints the summary, not the problems
            self._print_problems(exc.problems)
            raise
        self.language = result.language
        self.image_hosts[0] = result.image_hosts
        self.cache.save()
        self.cache.path = None  # from now on in memory only: saving 100 MB per keystroke buys nothing
        watched = self.watched()
        self.observer = Observer()
        for folder in watched.folders:
            self.observer.schedule(Changes(watched, self.changed), str(folder), recursive=True)
        self.observer.start()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop_event.set()
        if self.observer:
            self.observer.stop()
            self.observer.join(timeout=5)
        with self.timer_lock:
            for timer in (self.timer, self.search_timer):
                if timer:
                    timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()
