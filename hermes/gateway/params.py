"""Strict access to a method's params: wrong types and unknown names are clear errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hermes.daemon.errors import RequestError


class Params:
    """Strict access to a request's params; ``done()`` refuses names nobody read."""

    def __init__(self, method: str, params: Mapping[str, Any]) -> None:
        self.method = method
        self.params = params
        self.seen: set[str] = set()

    def _bad(self, name: str, expected: str, value: Any) -> RequestError:
        return RequestError(
            f"{self.method}: param {name!r} must be {expected}, got "
            f"{type(value).__name__} {value!r}"[:300],
            "invalid_params",
        )

    def _get(self, name: str, required: bool) -> Any:
        self.seen.add(name)
        if name not in self.params or self.params[name] is None:
            if required:
                raise RequestError(f"{self.method}: param {name!r} is required", "invalid_params")
            return None
        return self.params[name]

    def text(self, name: str) -> str:
        value = self._get(name, True)
        if not isinstance(value, str) or not value:
            raise self._bad(name, "a non-empty string", value)
        return value

    def opt_str(self, name: str) -> str | None:
        value = self._get(name, False)
        if value is not None and not isinstance(value, str):
            raise self._bad(name, "a string", value)
        return value

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

    def choice(self, name: str, choices: tuple[str, ...]) -> str | None:
        value = self._get(name, False)
        if value is None:
            return None
        if value not in choices:
            raise self._bad(name, "one of " + ", ".join(choices), value)
        return str(value)

    def done(self) -> None:
        extra = sorted(str(k) for k in self.params if k not in self.seen)
        if extra:
            raise RequestError(
                f"{self.method}: unknown param(s) {', '.join(extra)}", "invalid_params"
            )


Method = Callable[[Params], Awaitable[Any]]
