"""Validator factories for settings records: one vocabulary, one message format.

Each factory takes the record's label (``"session config"``, ``"goal
settings"``) and gives an ``attrs`` validator that raises ``ValueError`` in the
project's format, naming the record, the field, what was expected and what came::

    session config max_tokens: expected an integer >= 1, got 0

``bool`` is never taken for a number, nor NaN. Combine them with
``attrs.validators`` (``optional``, ``and_``) as any other validator::

    timeout: float | None = attrs.field(default=None, validator=optional(seconds(LABEL)))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any

import attrs

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]

optional = attrs.validators.optional
"""``attrs.validators.optional``: None passes, anything else is checked."""


def _number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not (isinstance(value, float) and math.isnan(value))


def _check(label: str, expected: str, ok: Callable[[Any], bool]) -> Validator:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not ok(value):
            raise ValueError(f"{label} {attribute.name}: expected {expected}, got {value!r}")

    return check


def positive(label: str) -> Validator:
    """A number > 0."""
    return _check(label, "a number > 0", lambda v: _number(v) and v > 0)


def at_least(label: str, low: float) -> Validator:
    """A number >= ``low``."""
    return _check(label, f"a number >= {low:g}", lambda v: _number(v) and v >= low)


def seconds(label: str) -> Validator:
    """A duration: seconds > 0."""
    return _check(label, "seconds > 0", lambda v: _number(v) and v > 0)


def count(label: str, low: int = 1) -> Validator:
    """An integer >= ``low`` (1 unless given)."""
    return _check(
        label,
        f"an integer >= {low}",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low,
    )


def one_of(label: str, choices: Collection[object]) -> Validator:
    """One of ``choices``."""
    names = ", ".join(map(repr, choices))
    return _check(label, f"one of {names}", lambda v: v in choices)
