"""Argument validation and coercion against a tool's JSON input schema.

Models send arguments that are almost right: ``"5"`` for an integer, ``"true"``
for a boolean, a JSON-encoded string for an array. ``validate`` coerces those
where the schema is explicit, fills in declared defaults, and otherwise returns
one clear message naming the field (``missing required field 'path'``).

The supported subset is what tool schemas use: ``type`` (one or a list),
``properties``, ``required``, ``additionalProperties: false``, ``items``,
``enum``, ``default``, ``minimum``/``maximum``, ``minLength``. Anything else in
the schema is ignored rather than rejected.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class ArgumentError(ValueError):
    """Arguments that do not fit the schema; the message names the field."""


def validate(schema: Mapping[str, Any], args: object) -> dict[str, Any]:
    """Coerced arguments with defaults filled in; ``ArgumentError`` when they do not fit.

    ``args`` must be a JSON object (a ``dict`` with string keys): anything else
    is rejected with a message saying what arrived instead.
    """
    if not isinstance(args, dict):
        raise ArgumentError(f"arguments must be a JSON object, got {_json_type(args)}")
    result = _value(schema, args, "")
    assert isinstance(result, dict)
    return result


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _where(path: str) -> str:
    return f"field '{path}'" if path else "arguments"


def _value(schema: Mapping[str, Any], value: Any, path: str) -> Any:
    types = schema.get("type")
    if types is not None:
        value = _coerce(types if isinstance(types, list) else [types], value, path)
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(json.dumps(v) for v in schema["enum"])
        raise ArgumentError(f"{_where(path)} must be one of {options}, got {json.dumps(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        _check_range(schema, value, path)
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        raise ArgumentError(f"{_where(path)} must not be empty")
    if isinstance(value, dict):
        return _object(schema, value, path)
    if isinstance(value, list) and "items" in schema:
        return [_value(schema["items"], item, f"{path}[{i}]") for i, item in enumerate(value)]
    return value


def _check_range(schema: Mapping[str, Any], value: float, path: str) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and value < low:
        raise ArgumentError(f"{_where(path)} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise ArgumentError(f"{_where(path)} must be <= {high}, got {value}")


def _object(schema: Mapping[str, Any], value: dict[Any, Any], path: str) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    out: dict[str, Any] = {}
    for name in schema.get("required", ()):
        if name not in value or value[name] is None:
            raise ArgumentError(f"missing required field '{_join(path, name)}'")
    extra = [k for k in value if k not in properties]
    if extra and schema.get("additionalProperties") is False:
        allowed = ", ".join(sorted(properties)) or "none"
        raise ArgumentError(f"unknown field '{_join(path, str(extra[0]))}' (allowed: {allowed})")
    for key, item in value.items():
        if key in properties:
            if item is None and key not in schema.get("required", ()):
                continue  # an explicit null for an optional field means "not given"
            out[key] = _value(properties[key], item, _join(path, key))
        else:
            out[key] = item
    for key, prop in properties.items():
        if key not in out and isinstance(prop, Mapping) and "default" in prop:
            out[key] = prop["default"]
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _coerce(types: list[str], value: Any, path: str) -> Any:
    """``value`` as the first of ``types`` it fits, converting strings where unambiguous."""
    for t in types:
        if _is(t, value):
            return value
    for t in types:
        converted = _convert(t, value)
        if converted is not _NO:
            return converted
    expected = " or ".join(types)
    raise ArgumentError(
        f"{_where(path)} must be {_article(expected)}, got {_json_type(value)} {_short(value)}"
    )


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _is(t: str, value: Any) -> bool:
    if t == "string":
        return isinstance(value, str)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    if t == "null":
        return value is None
    return True  # an unknown type name constrains nothing


_NO = object()


def _convert(t: str, value: Any) -> Any:
    if t == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            try:
                return int(text)
            except ValueError:
                pass
            try:
                number = float(text)
            except ValueError:
                return _NO
            return int(number) if number.is_integer() else _NO
    elif t == "number":
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                return _NO
            return number if math.isfinite(number) else _NO
    elif t == "boolean":
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
    elif t == "string":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    elif t in ("array", "object") and isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return _NO
        if _is(t, decoded):
            return decoded
    return _NO
