"""Structured logs: one JSON object per line, in a rotating file, with actor paths.

Each record carries ``ts``, ``level``, ``logger``, ``msg``, the ``actor`` path
of the actor whose task logged it (``/hermes/sessions/sup/session-...``, or
null outside actors) and ``exc`` when there is a traceback.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import time
from pathlib import Path

from actors import current_path

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
            + f".{int(record.msecs):03d}",
            "level": record.levelname.lower(),
            "logger": record.name,
            "actor": getattr(record, "actor", None),
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class _ActorPath(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "actor"):
            record.actor = current_path()
        return True


def setup_logging(path: Path, level: str, max_bytes: int, backups: int) -> logging.Handler:
    """Send the root logger to a rotating JSON-lines file; returns the handler."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
    )
    handler.setFormatter(JsonFormatter())
    handler.addFilter(_ActorPath())
    root = logging.getLogger()
    root.addHandler(handler)
    set_level(level)
    return handler


def set_level(level: str) -> None:
    logging.getLogger().setLevel(LEVELS[level])


def format_line(line: str) -> str:
    """A JSON log line as ``ts level actor logger: msg`` (for ``hermes logs``)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return line.rstrip("\n")
    actor = entry.get("actor") or "-"
    text = f"{entry.get('ts')} {entry.get('level', '?'):7} {actor} {entry.get('logger')}: "
    text += str(entry.get("msg"))
    if entry.get("exc"):
        text += "\n" + str(entry["exc"])
    return text
