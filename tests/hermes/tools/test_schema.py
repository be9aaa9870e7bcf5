"""Argument validation and coercion against tool schemas."""

from __future__ import annotations

from typing import Any

import pytest

from hermes.tools import ArgumentError, validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean", "default": False},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "opts": {
            "type": "object",
            "properties": {"depth": {"type": "integer"}},
            "required": ["depth"],
        },
        "either": {"type": ["integer", "string"]},
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"path": "x"}, {"path": "x", "count": 3, "flag": False}),
        ({"path": "x", "count": "7"}, {"count": 7}),
        ({"path": "x", "count": " 7 "}, {"count": 7}),
        ({"path": "x", "count": 7.0}, {"count": 7}),
        ({"path": "x", "count": "7.0"}, {"count": 7}),
        ({"path": "x", "ratio": "0.5"}, {"ratio": 0.5}),
        ({"path": "x", "ratio": 2}, {"ratio": 2}),
        ({"path": "x", "flag": "true"}, {"flag": True}),
        ({"path": "x", "flag": "False"}, {"flag": False}),
        ({"path": "x", "flag": "yes"}, {"flag": True}),
        ({"path": "x", "flag": 0}, {"flag": False}),
        ({"path": 12}, {"path": "12"}),
        ({"path": "x", "tags": "[1, 2]"}, {"tags": [1, 2]}),
        ({"path": "x", "tags": ["1", 2]}, {"tags": [1, 2]}),
        ({"path": "x", "opts": '{"depth": "2"}'}, {"opts": {"depth": 2}}),
        ({"path": "x", "either": "5"}, {"either": "5"}),
        ({"path": "x", "either": 5}, {"either": 5}),
        ({"path": "x", "count": None}, {"count": 3}),
    ],
)
def test_coercion(given: dict[str, Any], expected: dict[str, Any]) -> None:
    result = validate(SCHEMA, given)
    for key, value in expected.items():
        assert result[key] == value
        assert type(result[key]) is type(value)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "missing required field 'path'"),
        ({"path": None}, "missing required field 'path'"),
        ({"path": ""}, "field 'path' must not be empty"),
        ({"path": "x", "count": "seven"}, "field 'count' must be an integer, got string"),
        ({"path": "x", "count": "7.5"}, "field 'count' must be an integer"),
        ({"path": "x", "count": 0}, "field 'count' must be >= 1"),
        ({"path": "x", "count": 11}, "field 'count' must be <= 10"),
        ({"path": "x", "flag": "maybe"}, "field 'flag' must be a boolean"),
        ({"path": "x", "flag": 2}, "field 'flag' must be a boolean"),
        ({"path": "x", "mode": "c"}, 'field \'mode\' must be one of "a", "b"'),
        ({"path": "x", "tags": [1, "two"]}, "field 'tags[1]' must be an integer"),
        ({"path": "x", "tags": "not json"}, "field 'tags' must be an array"),
        ({"path": "x", "opts": {}}, "missing required field 'opts.depth'"),
        ({"path": "x", "colour": "red"}, "unknown field 'colour'"),
        ({"path": True}, "field 'path' must be a string, got boolean"),
        ({"path": "x", "ratio": "nan"}, "field 'ratio' must be a number"),
    ],
)
def test_errors_name_the_field(given: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        validate(SCHEMA, given)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("given", "kind"),
    [("just text", "string"), ([1, 2], "array"), (None, "null"), (5, "integer")],
)
def test_arguments_must_be_an_object(given: object, kind: str) -> None:
    with pytest.raises(ArgumentError, match=f"must be a JSON object, got {kind}"):
        validate(SCHEMA, given)


def test_extra_fields_pass_when_the_schema_allows_them() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert validate(schema, {"a": "1", "b": "x"}) == {"a": 1, "b": "x"}
