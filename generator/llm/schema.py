"""Flat JSON schemas small local models can follow, and their validation.

A schema is an object whose properties are strings (optionally an ``enum``),
integers, numbers, booleans, or arrays of such scalars or of flat objects. No
``oneOf``, no nullable unions: an unused field is an empty string.
"""

from __future__ import annotations

from typing import Any

from generator.llm.errors import LLMAnswerError

_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool}


def validate(value: Any, schema: dict[str, Any], path: str = "answer") -> None:
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
        raise LLMAnswerError(f"{path} is {value!r}, not one of {', '.join(map(str, schema['enum']))}")
