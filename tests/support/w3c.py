"""The W3C Web Annotation test suite's MUST assertions, run with jsonschema.

Schemas refer to each other by bare file names ("id.json"): every file of
definitions/ and every assertion is registered under its bare name. IRI format
checking is on (the ``rfc3987`` package makes jsonschema check ``format: uri``).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

# vendored under the W3C test-suite licence (tests/fixtures/w3c-web-annotation-tests/license.md)
SUITE = Path(os.environ.get("CARNET_W3C_TESTS")
             or Path(__file__).resolve().parents[1] / "fixtures" / "w3c-web-annotation-tests")


def require_suite() -> None:
    """Skip (locally) or fail (under CI) with a clear message when the suite is absent."""
    if (SUITE / "annotations" / "annotationMusts.test").is_file():
        return
    message = (f"the W3C Web Annotation test suite is not at {SUITE} (vendored in tests/fixtures/; "
               "set CARNET_W3C_TESTS to another copy's folder)")
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@cache
def _registry() -> Registry:
    resources = []
    paths = [p for folder in ("definitions", "annotations", "collections") for p in (SUITE / folder).rglob("*.json")]
    for path in sorted(paths):
        schema = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(schema, dict) and "$schema" in schema:
            resources.append((schema.get("id", path.name), Resource.from_contents(schema, default_specification=DRAFT4)))
    return Registry().with_resources(resources)


@cache
def musts(test_file: str) -> tuple[tuple[str, dict, jsonschema.Draft4Validator], ...]:
    """(assertion path, schema, validator) of every assertion a ``*.test`` manifest lists."""
    checker = jsonschema.Draft4Validator.FORMAT_CHECKER
    assert "uri" in checker.checkers, "IRI format checking needs the rfc3987 package"
    manifest = json.loads((SUITE / test_file).read_text(encoding="utf-8"))
    found = []
    for name in manifest["assertions"]:
        schema = json.loads((SUITE / name).read_text(encoding="utf-8"))
        found.append((name, schema, jsonschema.Draft4Validator(schema, registry=_registry(), format_checker=checker)))
    return tuple(found)


def failures(document: dict, test_file: str) -> list[str]:
    """The MUST assertions ``document`` does not meet (empty when it conforms)."""
    failed = []
    for name, schema, validator in musts(test_file):
        valid = validator.is_valid(document)
        expected = schema.get("expectedResult", "valid") == "valid"
        if valid != expected:
            failed.append(f"{name}: {schema.get('errorMessage', '')}")
    return failed
