"""Strict access to a method's params: wrong types and unknown names are clear errors.

Strings come in two kinds. A *name* (a session id, an actor path, a title, a
working directory) is at most ``NAME_LIMIT`` characters with no control
characters; *prose* (a prompt, a reason, a query) may hold any valid Unicode.
Neither may hold a lone surrogate: text the store and every reader could not
encode is refused here, whatever the surface.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hermes.daemon.errors import RequestError
from hermes.text import text_problem

NAME_LIMIT = 1024
"""Most characters a name param may have (an actor path is the longest in use)."""
TITLE_LIMIT = 200
"""Most characters of a session title."""


class Params:
    """Strict access to a request's params; ``done()`` refuses names nobody read."""

    def __init__(self, method: str, params: Mapping[str, Any]) -> None:
        self.method = method
        self.params = params
        self.seen: set[str] = set()

    def _bad(self, name: str, expected: str, value: Any) -> RequestError:
        return RequestError(
            f"{self.method}: param {name!r} must be {expected}, got "
            f"{type(value).__name__} {value!r:.200}",
            "invalid_params",
        )

    def _get(self, name: str, required: bool) -> Any:
        self.seen.add(name)
        if name not in self.params or self.params[name] is None:
            if required:
                raise RequestError(f"{self.method}: param {name!r} is required", "invalid_params")
            return None
        return self.params[name]

    def _invalid(self, name: str, why: str) -> RequestError:
        return RequestError(f"{self.method}: param {name!r} {why}", "invalid_params")

    def _checked(self, name: str, value: str, prose: bool, limit: int) -> str:
        problem = text_problem(value)
        if problem is not None:
            raise self._invalid(name, f"holds {problem}: text must be valid Unicode")
        if len(value) > limit:
            raise self._invalid(name, f"is {len(value)} characters, over the limit of {limit}")
        if not prose:
            for offset, char in enumerate(value):
                if unicodedata.category(char) == "Cc":
                    raise self._invalid(
                        name, f"holds the control character U+{ord(char):04X} at offset {offset}"
                    )
        return value

    def text(self, name: str, *, limit: int = NAME_LIMIT) -> str:
        """A required non-empty name (no control characters, at most ``limit`` long)."""
        value = self._get(name, True)
        if not isinstance(value, str) or not value:
            raise self._bad(name, "a non-empty string", value)
        return self._checked(name, value, False, limit)

    def opt_str(self, name: str, *, limit: int = NAME_LIMIT) -> str | None:
        """An optional name (None when absent)."""
        value = self._get(name, False)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string", value)
        return self._checked(name, value, False, limit)

    def prose(self, name: str) -> str:
        """Required non-empty free text (any valid Unicode; the frame limit bounds it)."""
        value = self._get(name, True)
        if not isinstance(value, str) or not value:
            raise self._bad(name, "a non-empty string", value)
        return self._checked(name, value, True, len(value))

    def opt_prose(self, name: str) -> str | None:
        """Optional free text (None when absent)."""
        value = self._get(name, False)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string", value)
        return self._checked(name, value, True, len(value))

    def opt_int(
        self, name: str, default: int | None, low: int = 0, high: int = 2**53
    ) -> int | None:
        value = self._get(name, False)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._bad(name, f"an integer from {low} to {high}", value)
        return value

    def opt_bool(self, name: str, default: bool) -> bool:
        value = self._get(name, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._bad(name, "a boolean", value)
        return value

    def opt_object(self, name: str) -> dict[str, Any] | None:
        """An optional JSON object param (at most 64 KiB as JSON)."""
        value = self._get(name, False)
        if value is None:
            return None
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise self._bad(name, "a JSON object", value)
        if len(repr(value)) > 65_536:
            raise self._invalid(name, "is too large (over 64 KiB)")
        return value

    def choice(self, name: str, choices: tuple[str, ...]) -> str | None:
        value = self._get(name, False)
        if value is None:
            return None
        if value not in choices:
            raise self._bad(name, "one of " + ", ".join(choices), value)
        return str(value)

    def done(self) -> None:
        extra = sorted(ascii(k)[:100] for k in self.params if k not in self.seen)
        if extra:
            raise RequestError(
                f"{self.method}: unknown param(s) {', '.join(extra[:20])}", "invalid_params"
            )


Method = Callable[[Params], Awaitable[Any]]
