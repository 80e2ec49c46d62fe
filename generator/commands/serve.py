"""``carnet serve``: build, serve the site on 127.0.0.1 with the published headers, watch
``content/``, ``themes/`` and ``prompts/``, rebuild on change (debounced), and reload the
open page only after a successful rebuild (server-sent events). Rebuilds are incremental:
the build cache lives in memory, so an edit redoes and rewrites only what it changed.
A content error shows an overlay with file:line while the previous site stays served.
Only files inside the output directory are ever served."""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from generator.cache import BuildCache, default_cache_path
from generator.pipeline import build
from generator.problems import CarnetError, ContentError
from generator.site.headers import SECURITY_HEADERS
from generator.site.search import reindex_site

EVENTS = "/__carnet/events"
CLIENT = "/__carnet/livereload.js"
DEBOUNCE = 0.3
SEARCH_DELAY = 3.0

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


def _handler(out_dir: Path, hub: Hub, stop: threading.Event):
    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def end_headers(self) -> None:
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            super().end_headers()

        def do_GET(self) -> None:  # noqa: N802
            if self.path == CLIENT:
                self._send(200, "text/javascript", LIVERELOAD_JS)
                return
            if self.path == EVENTS:
                self._events()
                return
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if path.suffix == ".html" and path.is_file() and out_dir.resolve() in path.resolve().parents:
                page = path.read_bytes().replace(b"</body>", f'<script src="{CLIENT}"></script></body>'.encode())
                self._send(200, "text/html; charset=utf-8", page)
                return
            super().do_GET()

        def _send(self, code: int, kind: str, data: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
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


class Server:
    """The whole of ``carnet serve``; ``start()`` returns once the first build is served."""

    def __init__(self, content: Path, out: Path, host: str = "127.0.0.1", port: int = 8000,
                 theme: Path | None = None, search: bool = True) -> None:
        self.content, self.out, self.theme, self.search = content, out, theme, search
        self.hub = Hub()
        self.stop_event = threading.Event()
        self.httpd = ThreadingHTTPServer((host, port), _handler(out, self.hub, self.stop_event))
        self.httpd.daemon_threads = True
        self.timer: threading.Timer | None = None
        self.search_timer: threading.Timer | None = None
        self.lock = threading.Lock()
        self.observer = None
        self.language = "fr"
        # read from disk for the first build (a site built before starts warm), then kept in memory
        self.cache = BuildCache.open(default_cache_path(out))
        self.last_changed = 0

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def rebuild(self) -> bool:
        with self.lock:
            try:
                result = build(self.content, self.out, theme_dir=self.theme, search=False, cache=self.cache)
                self.last_changed = result.changed
            except ContentError as exc:
                report = [p.format_text(str(self.content)) for p in exc.problems if p.stops(False)]
                self.hub.publish("error-report", json.dumps(report, ensure_ascii=False))
                return False
            except CarnetError as exc:
                self.hub.publish("error-report", json.dumps([str(exc)], ensure_ascii=False))
                return False
        self.hub.publish("reload", "[]")
        if self.search:  # the search index is deferred and batched: once edits pause
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
            except CarnetError:
                pass

    def changed(self) -> None:
        if self.timer:
            self.timer.cancel()
        self.timer = threading.Timer(DEBOUNCE, self.rebuild)
        self.timer.daemon = True
        self.timer.start()

    def start(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        result = build(self.content, self.out, theme_dir=self.theme, search=self.search, cache=self.cache)
        self.language = result.language
        self.cache.save()
        self.cache.path = None  # from now on in memory only: saving 100 MB per keystroke buys nothing
        server = self

        class Changes(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                if not event.is_directory and "/." not in str(event.src_path).replace("\\\\", "/"):
                    server.changed()

        self.observer = Observer()
        root = Path(__file__).resolve().parents[2]
        for folder in (self.content, self.theme or root / "themes", root / "prompts"):
            if Path(folder).is_dir():
                self.observer.schedule(Changes(), str(folder), recursive=True)
        self.observer.start()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop_event.set()
        if self.observer:
            self.observer.stop()
            self.observer.join(timeout=5)
        for timer in (self.timer, self.search_timer):
            if timer:
                timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()
