"""The site's JSON encoder: the text of ``json.JSONEncoder(ensure_ascii=False, sort_keys=True)``
for every value, its errors included, with its C encoder made once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.site.jsonout import ENCODER, CompactEncoder, dumps

REFERENCE = json.JSONEncoder(ensure_ascii=False, sort_keys=True)

VALUES: list[Any] = [
    "", "séance à 18 h", "\u2028\x00\"\\\t</script>", "\ud83d\ude00", 0, -7, 10**40, -0.0, 1.5e300, 0.1,
    float("inf"), float("-inf"), float("nan"), True, False, None, [], {}, [[[["deep"]]]], (1, "tuple"),
    {"b": [1, {"z": 1, "a": "x"}], "a": None, "é": "clé", "A": 2}, {1: "int key", 2.5: "float key"}, {None: 0, }, {True: 1},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_compact_encoder_writes_the_standard_encoders_text(value: Any) -> None:
    assert ENCODER.encode(value) == REFERENCE.encode(value)


@pytest.mark.parametrize("value", [{("a", 1): 2}, object(), {1, 2}, b"bytes"])
def test_what_json_cannot_hold_is_the_standard_encoders_error(value: Any) -> None:
    with pytest.raises(TypeError) as standard:
        REFERENCE.encode(value)
    with pytest.raises(TypeError) as compact:
        ENCODER.encode(value)
    assert str(compact.value) == str(standard.value)


def test_without_the_c_accelerator_the_python_encoder_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encoder = CompactEncoder()
    assert all(encoder.encode(value) == REFERENCE.encode(value) for value in VALUES)


def test_the_layout_indents_the_outer_levels_and_keeps_the_deep_ones_on_a_line() -> None:
    value = {"b": {"deep": {"deeper": [1, "é"]}}, "a": [1, 2]}
    assert dumps(value, levels=2) == (
        '{\n "a": [\n  1,\n  2\n ],\n "b": {\n  "deep": {"deeper": [1, "é"]}\n }\n}\n').encode()
    assert json.loads(dumps(value)) == value
