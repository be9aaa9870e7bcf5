"""Small file-system helpers shared by the file tools (blocking: call from a worker thread)."""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

BINARY_SNIFF = 8192


def looks_binary(head: bytes) -> bool:
    """True when the first bytes of a file hold a NUL byte (how git and grep decide)."""
    return b"\0" in head


def display(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it is inside it, else absolute."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def similar_names(path: Path, limit: int = 5) -> list[str]:
    """Names in ``path``'s directory that look like its name (for "file not found" hints)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return difflib.get_close_matches(path.name, names, n=limit, cutoff=0.6)


def describe_missing(path: Path) -> str:
    """A "not found" message, with near-miss names from the same directory."""
    message = f"File not found: {path}"
    near = similar_names(path)
    if near:
        message += ". Similar names in that directory: " + ", ".join(near)
    return message


def check_regular_file(path: Path) -> str | None:
    """An error message when ``path`` is missing, a directory or not a regular file."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return describe_missing(path)
    except NotADirectoryError:
        return f"File not found: {path} (a parent is not a directory)"
    except PermissionError:
        return f"Permission denied: {path}"
    except OSError as exc:
        return f"Cannot access {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return f"{path} is a directory, not a file; use search_files to list what is in it"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file (device, pipe or socket); refusing to read it"
    return None
