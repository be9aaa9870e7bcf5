"""The connection token: random, in a 0600 file in the runtime directory.

Every WebSocket and HTTP connection presents it (``Authorization: Bearer
<token>``, or ``?token=`` for clients that cannot set headers). A new token is
written at every daemon start, so a token copied from an old run stops working.
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from hermes.files import replace_file


def write_token(path: Path) -> str:
    """A fresh token, written atomically with mode 0600."""
    token = secrets.token_urlsafe(32)
    replace_file(path, token + "\n", mode=0o600)
    return token


def read_token(path: Path) -> str:
    """The token of the running daemon (``FileNotFoundError`` if none was written)."""
    return path.read_text().strip()


def token_matches(expected: str, given: str | None) -> bool:
    if not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
