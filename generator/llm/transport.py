"""The HTTP transport under the ``openai`` client: it reads at most
:data:`MAX_RESPONSE_BYTES` of a response body (INV-21).

A server may answer with any number of bytes; the client would read them all into
memory before Carnet sees the answer. This transport stops reading past the bound and
notes it, so the client refuses the answer unread instead of holding gigabytes.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Any

import openai


def _http_library() -> Any:
    """The HTTP library the installed ``openai`` client is built on (``httpx``, or its
    successor ``httpx2`` from openai 3): the transport must be of its kind."""
    client = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(client.__module__.split(".")[0])


httpx = _http_library()

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


class BoundedTransport(httpx.BaseTransport):  # type: ignore[misc,name-defined]
    """``httpx``'s own transport, with every response body cut at ``limit`` bytes;
    ``exceeded`` says whether the last response was cut (its caller refuses it)."""

    def __init__(self, limit: int = MAX_RESPONSE_BYTES) -> None:
        self.inner = httpx.HTTPTransport()
        self.limit = limit
        self._state = threading.local()  # per thread: --jobs sends requests from several at once

    @property
    def exceeded(self) -> bool:
        """Whether the last response read by this thread was cut at ``limit``."""
        return bool(getattr(self._state, "exceeded", False))

    @exceeded.setter
    def exceeded(self, value: bool) -> None:
        self._state.exceeded = value

    @property
    def attempts(self) -> int:
        """Requests this thread sent since it last set this to 0 (the client's retries count)."""
        return int(getattr(self._state, "attempts", 0))

    @attempts.setter
    def attempts(self, value: int) -> None:
        self._state.attempts = value

    def handle_request(self, request: Any) -> Any:
        self.exceeded = False
        self.attempts += 1
        response = self.inner.handle_request(request)
        stream = response.stream
        assert isinstance(stream, httpx.SyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers, stream=_Bounded(stream, self),
                              extensions=response.extensions, request=request)

    def close(self) -> None:
        self.inner.close()
