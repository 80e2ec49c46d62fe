"""The HTTP transport under the ``openai`` client: it reads at most
:data:`MAX_RESPONSE_BYTES` of a response body, and gives every request a deadline (INV-21).

A server may answer with any number of bytes; the client would read them all into
memory before Carnet sees the answer. This transport stops reading past the bound and
notes it, so the client refuses the answer unread instead of holding gigabytes.

A server may also answer slowly: ``httpx``'s timeouts bound each read, so one byte every
few seconds keeps a request waiting for ever. Here ``llm.timeout`` is a deadline for the
whole request (connecting, sending, waiting and reading the answer): every socket operation
of the request is given only the time left to it (:class:`_DeadlineBackend`). A call's
retries share one deadline of their own (:meth:`BoundedTransport.call`), and a server's
``Retry-After`` past it is not waited for.
"""

from __future__ import annotations

import contextlib
import email.utils
import importlib
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import openai


def _http_library() -> Any:
    """The HTTP library the installed ``openai`` client is built on (``httpx``, or its
    successor ``httpx2`` from openai 3): the transport must be of its kind."""
    client = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(client.__module__.split(".")[0])


httpx = _http_library()
httpcore = importlib.import_module(httpx.__name__.replace("httpx", "httpcore"))
"""The connection library under :data:`httpx` (``httpcore``, or ``httpcore2``): the network
backend a deadline is enforced in."""

MAX_RESPONSE_BYTES = 8_000_000
"""Most bytes of one response body read: room for an answer of the longest accepted
length (:data:`generator.llm.client.MAX_ANSWER_CHARS`) with JSON's escapes."""


class _Bounded(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
    def __init__(self, inner: Any, transport: BoundedTransport) -> None:
        self.inner = inner
        self.transport = transport

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self.inner:
            read += len(chunk)
            if read > self.transport.limit:  # the rest is never read: the answer is refused
                self.transport.exceeded = True
                return
            yield chunk

    def close(self) -> None:
        self.inner.close()


class _DeadlineStream(httpcore.NetworkStream):  # type: ignore[misc,name-defined]
    """A connection whose every read and write waits at most the time left to the request
    of the thread using it (a pooled connection serves one request at a time)."""

    def __init__(self, inner: Any, transport: BoundedTransport) -> None:
        self.inner = inner
        self.transport = transport

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self.inner.read(max_bytes, self.transport.left(timeout, httpcore.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.transport.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _DeadlineStream:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname,
                                                    self.transport.left(timeout, httpcore.ConnectTimeout)),
                               self.transport)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):  # type: ignore[misc,name-defined]
    """The connection library's own backend, its connections made and used within the
    deadline of the request that needs them."""

    def __init__(self, inner: Any, transport: BoundedTransport) -> None:
        self.inner = inner
        self.transport = transport

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:
        return _DeadlineStream(self.inner.connect_tcp(host, port, self.transport.left(timeout, httpcore.ConnectTimeout),
                                                      local_address, socket_options), self.transport)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None
                            ) -> _DeadlineStream:
        return _DeadlineStream(self.inner.connect_unix_socket(
            path, self.transport.left(timeout, httpcore.ConnectTimeout), socket_options), self.transport)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def retry_after(headers: Any) -> float | None:
    """The wait a response asks for before a retry (``retry-after-ms``, or ``retry-after`` in
    seconds or as a date), in seconds; None when it asks none (or says it unreadably)."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError, IndexError, OverflowError):
                continue
        return seconds if not math.isnan(seconds) else None
    return None


class BoundedTransport(httpx.BaseTransport):  # type: ignore[misc,name-defined]
    """``httpx``'s own transport, with every response body cut at ``limit`` bytes and every
    request cut at ``timeout`` seconds from its start (and at the deadline of the call it is
    an attempt of, :meth:`call`); ``exceeded`` says whether the last response was cut (its
    caller refuses it), ``refused_wait`` the wait a server asked for past the call's deadline
    (the request was not retried)."""

    def __init__(self, limit: int = MAX_RESPONSE_BYTES, timeout: float = 60.0) -> None:
        self.inner = httpx.HTTPTransport()
        pool = self.inner._pool  # no public way to give httpx's transport a network backend
        pool._network_backend = _DeadlineBackend(pool._network_backend, self)
        self.limit = limit
        self.timeout = timeout
        self._state = threading.local()  # per thread: --jobs sends requests from several at once

    @property
    def exceeded(self) -> bool:
        """Whether the last response read by this thread was cut at ``limit``."""
        return bool(getattr(self._state, "exceeded", False))

    @exceeded.setter
    def exceeded(self, value: bool) -> None:
        self._state.exceeded = value

    @property
    def refused_wait(self) -> float:
        """The seconds the last response of this thread asked to wait before a retry, when
        past the call's deadline (0: none)."""
        return float(getattr(self._state, "refused_wait", 0.0))

    @contextlib.contextmanager
    def call(self, seconds: float) -> Iterator[None]:
        """Every request this thread sends inside ends within ``seconds`` from now (a call and
        its retries); a call inside another has its own deadline."""
        outer = getattr(self._state, "call_deadline", None)
        self._state.call_deadline = time.monotonic() + seconds
        self._state.late, self._state.last_status = False, 0
        try:
            yield
        finally:
            self._state.call_deadline = outer

    @property
    def late(self) -> bool:
        """Whether this thread's call ended because a retry would have started past its deadline."""
        return bool(getattr(self._state, "late", False))

    @property
    def last_status(self) -> int:
        """The HTTP status of the last response this thread's call got (0: none)."""
        return int(getattr(self._state, "last_status", 0))

    def left(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """``timeout`` cut to the time left to this thread's request; ``expired`` raised when
        none is left. Outside a request (no deadline set), ``timeout`` itself."""
        deadline: float | None = getattr(self._state, "deadline", None)
        if deadline is None:
            return timeout
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise expired(f"the request's deadline of {self.timeout:g} s has passed")
        return remaining if timeout is None else min(timeout, remaining)

    @property
    def attempts(self) -> int:
        """Requests this thread sent since it last set this to 0 (the client's retries count)."""
        return int(getattr(self._state, "attempts", 0))

    @attempts.setter
    def attempts(self, value: int) -> None:
        self._state.attempts = value

    def handle_request(self, request: Any) -> Any:
        self.exceeded = False
        self._state.refused_wait = 0.0
        start = time.monotonic()
        call_deadline = getattr(self._state, "call_deadline", None)
        if call_deadline is not None and start >= call_deadline:
            # a retry after the call's deadline: not sent (no attempt), and, an OpenAIError, not retried again
            self._state.late = True
            raise openai.APITimeoutError(request=request)
        self.attempts += 1
        deadline = start + self.timeout if call_deadline is None else min(start + self.timeout, call_deadline)
        # the body is read after this returns, in this thread, within the same deadline
        self._state.deadline = deadline
        response = self.inner.handle_request(request)
        self._state.last_status = response.status_code
        stream = response.stream
        assert isinstance(stream, httpx.SyncByteStream)
        headers = response.headers
        wait = retry_after(headers)
        limit = call_deadline if call_deadline is not None else time.monotonic() + self.timeout
        if wait is not None and wait > 0 and time.monotonic() + wait >= limit:
            # a retry after that wait would start past the deadline: the response is final
            self._state.refused_wait = wait
            headers = httpx.Headers([(k, v) for k, v in headers.multi_items()
                                     if k.lower() not in ("retry-after", "retry-after-ms", "x-should-retry")])
            headers["x-should-retry"] = "false"
        return httpx.Response(response.status_code, headers=headers, stream=_Bounded(stream, self),
                              extensions=response.extensions, request=request)

    def close(self) -> None:
        self.inner.close()
