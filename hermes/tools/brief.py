"""A tool call's arguments in one short line, for the surfaces that show a call running."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import PreparedCall

BRIEF_CHARS = 120
"""At most this many characters (an ellipsis marks a cut)."""

_VALUE_CHARS = 60


def brief_arguments(arguments: Mapping[str, Any], limit: int = BRIEF_CHARS) -> str:
    """``key=value`` pairs in the call's order, each value on one line and cut short:
    ``command="ls -la" timeout=30``. A single string argument is shown bare."""
    if len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, str):
            return _cut(_one_line(value), limit)
    parts = [f"{key}={_value(value)}" for key, value in arguments.items()]
    return _cut(" ".join(parts), limit)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + _cut(_one_line(value), _VALUE_CHARS) + '"'
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    if isinstance(value, Mapping):
        return "{…}" if value else "{}"
    if isinstance(value, list | tuple):
        return f"[{len(value)}]"
    return type(value).__name__


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def given_arguments(prepared: PreparedCall) -> Mapping[str, Any]:
    """The arguments the model sent (without the schema's defaults filled in)."""
    raw = prepared.call.args
    return raw if isinstance(raw, Mapping) else prepared.args
