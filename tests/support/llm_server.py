"""An OpenAI-compatible server on 127.0.0.1 with scripted answers, so the real
``openai`` client code runs over real HTTP in tests (the one stand-in allowed).

    server.script(reply(json.dumps({...})), status(429), reply("{", finish="length"), delay(3),
                  calls(("search_passages", {"query": "budget"})), drip(0.5))

When the script runs out, a responder given with ``server.respond(fn)`` is asked:
``fn(body)`` gets the request's JSON body and returns a :class:`Scripted` (or None for
the usual 500). ``server.model_name = "..."`` (or ``Scripted.model``) makes the server
name another model in its answers than the one asked for, as a proxy may. An error step's
``content`` is its message (``status(422, "response_format: ...")``, as a server words a
refusal). ``max_in_flight`` counts the most requests the server was answering at once.
``drip(seconds)`` answers one byte at a time, a byte every ``seconds`` (the whole response,
status line and headers included, with ``head=True``): a server that is never silent long
enough for a timeout between two reads to fire.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    status: int = 200
    content: str = ""
    finish: str = "stop"
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 120, "completion_tokens": 40,
                                                           "total_tokens": 160})
    model: str | None = None  # the model the answer names (default: the server's model_name, else the asked one)
    tool_calls: list[dict[str, Any]] | None = None  # the calls the answer makes (OpenAI's function calling)
    retry_after: str = "0"  # an error's Retry-After header
    drip: float = 0.0  # seconds between two bytes of the response (0: sent at once)
    drip_head: bool = False  # the status line and headers dripped too, not only the body


def reply(content: str, finish: str = "stop", usage: dict[str, int] | None = None) -> Scripted:
    return Scripted(200, content, finish, usage=usage or Scripted().usage)


def calls(*made: tuple[str, object], content: str = "") -> Scripted:
    """An answer that calls tools: each ``(name, arguments)``, the arguments a dict (sent
    as JSON) or a string (sent as it is, however broken)."""
    tool_calls = [{"id": f"call_{number}", "type": "function",
                   "function": {"name": name, "arguments": arguments if isinstance(arguments, str)
                                else json.dumps(arguments, ensure_ascii=False)}}
                  for number, (name, arguments) in enumerate(made, 1)]
    return Scripted(200, content, "tool_calls", tool_calls=tool_calls)


def status(code: int, message: str = "", retry_after: str = "0") -> Scripted:
    return Scripted(code, message, retry_after=retry_after)


def delay(seconds: float, content: str = "{}") -> Scripted:
    return Scripted(200, content, delay=seconds)


def drip(seconds: float, content: str = "{}", head: bool = False) -> Scripted:
    """An answer sent a byte every ``seconds`` (its body; with ``head``, its status line and
    headers too), until the client hangs up or the server stops."""
    return Scripted(200, content, drip=seconds, drip_head=head)


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.queue: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.responder: Callable[[dict[str, Any]], Scripted | None] | None = None
        self.model_name: str | None = None
        self.listed_models: list[str] | None = None  # GET /models (default: model_name, if set)
        self.listings = 0  # GET /models asked (not in ``requests``)
        self.in_flight = 0
        self.max_in_flight = 0
        self.dripped = 0  # bytes sent by dripping answers
        self.stopping = threading.Event()  # a dripping answer stops with the server
        outer = self

        class Handler(BaseHTTPRequestHandler):
            counted = False  # this request is in the in-flight count

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if not self.path.endswith("/models"):
                    self._send(404, {"error": {"message": "not found", "type": "scripted"}})
                    return
                with outer.lock:
                    outer.listings += 1
                    listed = outer.listed_models if outer.listed_models is not None else \
                        ([outer.model_name] if outer.model_name else [])
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "scripted"}
                                                            for name in listed]})

            def do_POST(self) -> None:
                with outer.lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                self.counted = True
                try:
                    self._answer()
                finally:
                    self._answered()

            def _answered(self) -> None:
                """No longer in flight: said before the answer goes out, since a client that has
                it may send its next request before this thread runs again (one at a time would
                otherwise count as two on a loaded machine)."""
                if self.counted:
                    self.counted = False
                    with outer.lock:
                        outer.in_flight -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body})
                    step = outer.queue.pop(0) if outer.queue else None
                    responder = outer.responder
                if step is None and responder is not None:
                    try:
                        step = responder(body)
                    except Exception as exc:  # a broken responder is a failing endpoint, never a hung test
                        step = Scripted(500, f"responder failed: {exc!r}")
                if step is None:
                    step = Scripted(500, "no scripted answer left")
                if step.delay:
                    time.sleep(step.delay)
                if step.status != 200:
                    message = step.content or f"scripted {step.status}"
                    self._send(step.status, {"error": {"message": message, "type": "scripted"}},
                               {"retry-after": step.retry_after})
                    return
                if self.path.endswith("/embeddings"):
                    data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0]}
                            for i, t in enumerate(body.get("input", []))]
                    self._send(200, {"object": "list", "data": data, "model": outer._named(step, body, ""),
                                     "usage": {"prompt_tokens": 3, "total_tokens": 3}}, step=step)
                    return
                self._send(200, {
                    "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
                    "model": outer._named(step, body, "scripted-model"),
                    "choices": [{"index": 0, "finish_reason": step.finish,
                                 "message": {"role": "assistant", "content": step.content or None,
                                             **({"tool_calls": step.tool_calls} if step.tool_calls else {})}}],
                    "usage": step.usage,
                }, step=step)

            def _drip(self, code: int, data: bytes, step: Scripted) -> None:
                """The response written a byte every ``step.drip`` seconds (its head at once
                unless ``step.drip_head``), until the client hangs up or the server stops."""
                head = (f"HTTP/1.1 {code} OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(data)}\r\n\r\n").encode("ascii")
                self.close_connection = True
                try:
                    if not step.drip_head:
                        self.wfile.write(head)
                        self.wfile.flush()
                    for byte in (head if step.drip_head else b"") + data:
                        if outer.stopping.wait(step.drip):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        with outer.lock:
                            outer.dripped += 1
                except OSError:
                    pass  # the client hung up: what a deadline does

            def _send(self, code: int, payload: dict, headers: dict[str, str] | None = None,
                      step: Scripted | None = None) -> None:
                data = json.dumps(payload).encode("utf-8")
                self._answered()
                if step is not None and step.drip:
                    self._drip(code, data, step)
                    return
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout under test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def _named(self, step: Scripted, body: dict[str, Any], default: str) -> str:
        if step.model is not None:
            return step.model
        return self.model_name if self.model_name is not None else body.get("model", default)

    def respond(self, responder: Callable[[dict[str, Any]], Scripted | None] | None) -> None:
        """Answer with ``responder(body)`` whenever the script is empty (None: stop)."""
        with self.lock:
            self.responder = responder

    def script(self, *steps: Scripted) -> None:
        with self.lock:
            self.queue.extend(steps)

    def start(self) -> ScriptedLLMServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
