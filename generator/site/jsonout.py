"""JSON as the site publishes it: sorted keys, UTF-8, the outer levels indented one
space per level and anything deeper on one line.

Diff-friendly like a fully indented dump, but the deep parts (annotations, graph records)
go through the C encoder; a fully indented dump runs the pure-Python encoder, about ten
times slower on a large site.
"""

from __future__ import annotations

import functools
import json
from typing import Any


class CompactEncoder:
    """``json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode``, the same text, with
    the C encoder made once: ``JSONEncoder.encode`` makes one per call, 28 % of the time
    of a short value (graph records, annotations: two million of them in an evidence-heavy
    5,000-note build). Without the circular-reference check, which only the build's own
    values (trees, never cycles) go through."""

    def __init__(self) -> None:
        self._python = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
        make = getattr(json.encoder, "c_make_encoder", None)  # None where the C accelerator is missing
        self._c = make(None, self._python.default, json.encoder.encode_basestring, None,
                       self._python.key_separator, self._python.item_separator, True, False, True) if make else None

    def encode(self, value: Any) -> str:
        if self._c is None:
            return self._python.encode(value)
        return "".join(self._c(value, 0))


ENCODER = CompactEncoder()  # one encoder: json.dumps builds one per call


@functools.lru_cache(maxsize=4096)
def _key(key: str) -> str:
    return ENCODER.encode(key)  # the same few keys, again and again


def _compact(value: Any) -> str:
    return ENCODER.encode(value)


def _layout(value: Any, levels: int, indent: str) -> str:
    if levels <= 0 or not isinstance(value, (dict, list)) or not value:
        return _compact(value)
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{_key(str(key))}: {_layout(value[key], levels - 1, inner)}" for key in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + _layout(item, levels - 1, inner) for item in value) + "\n" + indent + "]"


def dumps_encoded(fields: dict[str, str | list[str]]) -> bytes:
    """The two-level layout of :func:`dumps` for a mapping whose values (or list items)
    are already encoded JSON: large outputs built from cached, pre-encoded records."""
    lines = []
    for key in sorted(fields):
        value = fields[key]
        if isinstance(value, list):
            value = "[\n" + ",\n".join(f"  {item}" for item in value) + "\n ]" if value else "[]"
        lines.append(f" {_key(key)}: {value}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def dumps(value: Any, levels: int = 3) -> bytes:
    """``value`` as published JSON bytes, ending with a newline; containers deeper than
    ``levels`` are written on one line."""
    return (_layout(value, levels, "") + "\n").encode("utf-8")
