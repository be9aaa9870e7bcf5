"""A session's working directory, checked before anything is created for it."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import RequestError

PATH_LIMIT = 4096
"""Most bytes of a working directory's path (Linux's ``PATH_MAX``)."""


def resolve_cwd(text: str, source: str = "cwd") -> Path:
    """``text`` as an existing directory's absolute path, or a ``RequestError`` saying why.

    ``~`` and ``~user`` are expanded; a relative path is refused (relative to
    what: the daemon's directory is not the client's). ``source`` names where
    the value came from in the error (a param, a config key).
    """

    def bad(why: str) -> RequestError:
        return RequestError(f"{source} {text[:200]!r} {why}", "invalid_params")

    if "\x00" in text:
        raise bad("holds a NUL character")
    try:
        size = len(os.fsencode(text))
    except UnicodeEncodeError:
        raise bad("is not valid Unicode") from None
    if size > PATH_LIMIT:
        raise bad(f"is {size} bytes, over the limit of {PATH_LIMIT}")
    path = Path(os.path.expanduser(text))
    if text.startswith("~") and str(path).startswith("~"):
        user = text[1:].split("/", 1)[0]
        raise bad(f"names the home of {user!r}, and there is no such user")
    if not path.is_absolute():
        raise bad("is relative: send an absolute path (or one starting with ~)")
    try:
        if not path.is_dir():
            raise bad("is not a directory" if path.exists() else "does not exist")
    except OSError as exc:  # ENAMETOOLONG on a component, EACCES on a parent, ...
        raise bad(f"cannot be checked: {exc.strerror or exc}") from None
    return path
