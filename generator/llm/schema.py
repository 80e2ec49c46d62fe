"""Flat JSON schemas small local models can follow, their validation, and the
semantic checks the callers add on each item (a placeholder, an over-long text).

A schema is an object whose properties are strings (optionally an ``enum``),
integers, numbers, booleans, or arrays of such scalars or of flat objects. No
``oneOf``, no nullable unions: an unused field is an empty string.

Everything in an answer is data: a value quoted in a message is cut short
(:func:`shown`), so an error never carries the answer's bulk.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from generator.llm.errors import LLMAnswerError

_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float),
                                               "boolean": bool}
SHOWN_CHARS = 60
"""Longest piece of an answer's value quoted in a message."""


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for a message."""
    text = repr(value[: limit + 1] if isinstance(value, str) else value)
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def fold(text: str) -> str:
    """Text compared loosely: compatibility forms, white space and case folded."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def placeholder(text: str, examples: Iterable[str] = ()) -> bool:
    """True when ``text`` holds nothing a reader can use: empty, only punctuation,
    symbols and spaces ("…", "...", "-", "?"), or one of the prompt's own example
    values (``examples``, compared ignoring case and spacing)."""
    if all(unicodedata.category(c)[0] in "PSZC" for c in text):
        return True
    folded = fold(text)
    return any(folded == fold(example) for example in examples)


def prompt_examples(template: str) -> dict[str, frozenset[str]]:
    """The example answer a prompt shows (``{"verdicts": [{"pair": "p1", …}]}``):
    field name → the example values given for it. A model that copies the example
    back has answered nothing."""
    found: dict[str, set[str]] = {}
    decoder = json.JSONDecoder()

    def collect(value: object, name: str) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                collect(sub, str(key))
        elif isinstance(value, list):
            for sub in value:
                collect(sub, name)
        elif isinstance(value, str) and name:
            found.setdefault(name, set()).add(value)

    start = template.find('{"')
    while start >= 0:
        try:
            value, end = decoder.raw_decode(template, start)
        except json.JSONDecodeError:
            end = start + 1
        else:
            collect(value, "")
        start = template.find('{"', end)
    return {name: frozenset(values) for name, values in found.items()}


def too_long(text: str, limit: int) -> str:
    """The reason ``text`` is refused for its length, or "" when it fits."""
    return f"{len(text):,} characters, more than the {limit:,} allowed" if len(text) > limit else ""


ANSWER_OVERHEAD_TOKENS = 64
"""Tokens of an answer besides its items: the braces, the field names, a margin."""


def answer_tokens(items: int, per_item: int, overhead: int = ANSWER_OVERHEAD_TOKENS) -> int:
    """The ``max_tokens`` of a request whose answer holds at most ``items`` items of about
    ``per_item`` tokens: a bound, so a model that wanders stops (and its answer is refused
    as cut off) instead of generating on long after the client gave up."""
    return overhead + max(0, items) * per_item


def bounded(schema: dict[str, Any], field: str, max_items: int, min_items: int = 0) -> dict[str, Any]:
    """``schema`` with its top-level array ``field`` bounded to the request: at most
    ``max_items`` items (the batch's size, ``--max-operations``…) and at least ``min_items``."""
    copy = json.loads(json.dumps(schema))
    array = copy["properties"][field]
    array["maxItems"] = max_items
    if min_items:
        array["minItems"] = min_items
    return dict(copy)


def strict_form(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` as OpenAI's strict structured outputs want it (every object closed with
    ``additionalProperties: false``), or ``None`` when it cannot be strict: strict mode
    requires every property of every object, and an optional one would become required."""
    copy: dict[str, Any] = json.loads(json.dumps(schema))
    stack: list[Any] = [copy]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        if node.get("type") == "object":
            properties = node.get("properties", {})
            if set(node.get("required", [])) != set(properties):
                return None
            node["additionalProperties"] = False
            stack += list(properties.values())
        elif node.get("type") == "array":
            stack.append(node.get("items"))
    return copy


def validate(value: object, schema: dict[str, Any], path: str = "answer") -> None:
    """Refuse ``value`` unless it has the schema's shape. Array bounds (``maxItems``,
    ``minItems``) are left to the callers: they constrain what the server generates, and
    each command checks the count item by item, so a pair answered twice or left out
    costs that pair alone, not the whole answer."""
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            raise LLMAnswerError(f"{path} must be an object")
        for name in schema.get("required", []):
            if name not in value:
                raise LLMAnswerError(f"{path} has no {name!r}")
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                validate(value[name], sub, f"{path}.{name}")
        return
    if kind == "array":
        if not isinstance(value, list):
            raise LLMAnswerError(f"{path} must be a list")
        for index, item in enumerate(value):
            validate(item, schema.get("items", {}), f"{path}[{index}]")
        return
    expected = _TYPES.get(kind or "")
    if expected is None:
        raise ValueError(f"unsupported schema type {kind!r}")
    if not isinstance(value, expected) or (kind in ("integer", "number") and isinstance(value, bool)):
        raise LLMAnswerError(f"{path} must be a {kind}, not {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise LLMAnswerError(f"{path} is {shown(value)}, not one of {', '.join(map(str, schema['enum']))}")
