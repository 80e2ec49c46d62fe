"""Flat JSON schemas small local models can follow, their validation, and the
semantic checks the callers add on each item (a placeholder, an over-long text).

A schema is an object whose properties are strings (optionally an ``enum``, a
``pattern``, a ``minLength`` or ``maxLength``), integers, numbers, booleans, or arrays of
such scalars or of flat objects (closed with ``additionalProperties: false`` or not). No
``oneOf``, no nullable unions: an unused field is an empty string. Every keyword a schema
uses is enforced by :func:`validate`, which refuses a schema holding one it does not know:
a rule sent to the server is a rule the answer is held to.

An answer is read by :func:`parse_answer`: JSON, each object's keys written once.

Everything in an answer is data: a value quoted in a message is cut short
(:func:`shown`), so an error never carries the answer's bulk.
"""

from __future__ import annotations

import functools
import json
import re
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


class _KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each written once (``json.loads`` keeps the last of two
    silently: a reader of the answer and Carnet could take different values)."""
    made: dict[str, Any] = {}
    for key, value in pairs:
        if key in made:
            raise _KeyTwice(key)
        made[key] = value
    return made


def parse_answer(text: str, usage: dict[str, int] | None = None, what: str = "the answer") -> Any:
    """``text`` (``what``: the answer, a tool call's arguments) read as JSON, or an
    :class:`LLMAnswerError` carrying ``usage`` (the tokens the answer still cost). A line
    break or tab written raw inside a string is read as its text (a grammar-constrained
    server lets a small model write them so); a key written twice in an object is refused."""
    try:
        return json.loads(text, strict=False, object_pairs_hook=_keys_once)
    except _KeyTwice as exc:
        raise LLMAnswerError(f"{what} holds the key {shown(exc.key)} twice in one object (which one counts is "
                             "not for the reader to guess): nothing was recorded", usage) from exc
    except json.JSONDecodeError as exc:
        raise LLMAnswerError(f"{what} is not JSON ({exc.msg} at character {exc.pos}): nothing was recorded",
                             usage) from exc
    except RecursionError as exc:  # nested deeper than the parser goes
        raise LLMAnswerError(f"{what} is JSON nested too deep to read: nothing was recorded", usage) from exc


KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "maxItems", "minItems",
                      "enum", "pattern", "minLength", "maxLength", "description", "title"})
"""The schema keywords :func:`validate` knows (the array bounds are the callers', below)."""


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A JSON Schema ``pattern`` (ECMA-262, unanchored) as Python reads it: ``$`` outside a
    class is the end of the text only (Python's ``$`` would also match before a final line
    break, which a JSON Schema validator refuses)."""
    translated, escaped, in_class = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            translated.append(r"\Z")
            continue
        translated.append(char)
    return re.compile("".join(translated))


def _string_fault(value: str, schema: dict[str, Any], path: str) -> str:
    """How ``value`` breaks the string rules of ``schema``, or "" when it keeps them."""
    most, least, pattern = schema.get("maxLength"), schema.get("minLength"), schema.get("pattern")
    if most is not None and len(value) > most:
        return f"{path} holds {len(value):,} characters, more than the {most:,} the request allows (maxLength)"
    if least is not None and len(value) < least:
        return f"{path} holds {len(value):,} character(s), fewer than the {least:,} the request asks for (minLength)"
    if pattern is not None and _compiled(pattern).search(value) is None:
        return f"{path} is {shown(value)}, which does not match the pattern the request gave ({shown(pattern)})"
    return ""


def schema_fault(value: object, schema: dict[str, Any], path: str = "answer") -> str:
    """How ``value`` breaks ``schema`` (the first rule it breaks, in words), or "": for a
    caller that refuses one item of an answer rather than the whole of it."""
    try:
        validate(value, schema, path)
    except LLMAnswerError as exc:
        return str(exc)
    return ""


def validate(value: object, schema: dict[str, Any], path: str = "answer") -> None:
    """Refuse ``value`` unless it keeps every rule of the schema. Array bounds (``maxItems``,
    ``minItems``) are left to the callers: they constrain what the server generates, and
    each command checks the count item by item, so a pair answered twice or left out
    costs that pair alone, not the whole answer."""
    unknown = set(schema) - KEYWORDS
    if unknown:  # a rule the server would be asked to follow and the answer never held to
        raise ValueError(f"schema keyword(s) {', '.join(sorted(unknown))} are not checked by validate()")
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            raise LLMAnswerError(f"{path} must be an object")
        for name in schema.get("required", []):
            if name not in value:
                raise LLMAnswerError(f"{path} has no {name!r}")
        properties = schema.get("properties", {})
        if schema.get("additionalProperties", True) is False:
            extra = next((name for name in value if name not in properties), None)
            if extra is not None:
                raise LLMAnswerError(f"{path} has {shown(extra)}, a field the request's schema does not have")
        for name, sub in properties.items():
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
    if isinstance(value, str):
        fault = _string_fault(value, schema, path)
        if fault:
            raise LLMAnswerError(fault)
