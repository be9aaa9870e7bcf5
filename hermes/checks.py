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


def _finite(value: Any) -> bool:
    return _number(value) and math.isfinite(value)


def seconds(label: str, *, zero: bool = False, below: float | None = None) -> Validator:
    """A finite duration: seconds > 0 (``zero``: >= 0), and under ``below`` if given."""
    low = "seconds >= 0" if zero else "seconds > 0"
    expected = low if below is None else f"{low} and < {below:g}"
    return _check(
        label,
        expected,
        lambda v: _finite(v) and (v >= 0 if zero else v > 0) and (below is None or v < below),
    )


def durations(label: str) -> Validator:
    """A non-empty sequence of finite seconds >= 0 (a schedule of waits)."""
    return _check(
        label,
        "a non-empty list of seconds >= 0",
        lambda v: isinstance(v, tuple | list) and bool(v) and all(_finite(w) and w >= 0 for w in v),
    )


def fraction(label: str, *, zero: bool = False) -> Validator:
    """A share: a number in (0, 1] (``zero``: in [0, 1])."""
    return _check(
        label,
        "a number in [0, 1]" if zero else "a number in (0, 1]",
        lambda v: _finite(v) and (v >= 0 if zero else v > 0) and v <= 1,
    )


def count(label: str, low: int = 1, high: int | None = None) -> Validator:
    """An integer >= ``low`` (1 unless given), and <= ``high`` if given."""
    expected = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    return _check(
        label,
        expected,
        lambda v: (
            isinstance(v, int)
            and not isinstance(v, bool)
            and v >= low
            and (high is None or v <= high)
        ),
    )


def flag(label: str) -> Validator:
    """``True`` or ``False`` (not 0, 1 or a string)."""
    return _check(label, "true or false", lambda v: isinstance(v, bool))


def name(label: str, what: str = "a name") -> Validator:
    """A string with something besides white space (a model's or a program's name)."""
    return _check(label, what, lambda v: isinstance(v, str) and bool(v.strip()))


def one_of(label: str, choices: Collection[object]) -> Validator:
    """One of ``choices``."""
    names = ", ".join(map(repr, choices))
    return _check(label, f"one of {names}", lambda v: v in choices)
