"""Text that can be carried as UTF-8: the check and the one replacement every edge uses.

A Python ``str`` may hold a lone surrogate (``"\\ud800"``, from a JSON escape);
UTF-8 cannot encode one, so a socket, msgpack or SQLite would fail on it.
Requests holding one are refused (``hermes.gateway.frames``); text from
elsewhere (a model's stream, a tool's arguments) has each replaced by U+FFFD
before it is stored, so what is stored is what every reader is sent.

``strip_ansi`` takes terminal escape sequences out of a command's output before a
model or a notice shows it.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be carried as UTF-8 (a lone surrogate, and where), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate U+{ord(text[exc.start]):04X} at offset {exc.start}"
    return None


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``text`` itself when clean)."""
    return _SURROGATE.sub(REPLACEMENT, text) if text_problem(text) else text


def valid_data(value: Any) -> Any:
    """Plain data (str, dict, list, tuple, scalars) with ``valid_text`` applied to every string."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(key): valid_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [valid_data(item) for item in value]
    return value


_ANSI = re.compile(r"\x1b\[[0-?]*+[ -/]*+[@-~]|\x1b\][^\x07\x1b]*+(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """Remove terminal colour and cursor escape sequences."""
    return _ANSI.sub("", text)
