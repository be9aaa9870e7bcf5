"""Argument checks shared by the runtime and the packages built on it.

``bool`` is an ``int`` in Python, but ``timeout=True`` is a mistake, never a
second: these predicates reject it.
"""

from __future__ import annotations

from typing import Any, TypeGuard


def is_number(value: Any) -> TypeGuard[int | float]:
    """True for an int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_count(value: Any) -> TypeGuard[int]:
    """True for an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)
