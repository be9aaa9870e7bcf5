"""Where a run's result goes (issue 27, item 3): a session, a file, a webhook, the event stream.

A job's ``deliver`` is one target, written as text:

| target | what happens |
|---|---|
| ``session:<id>`` | the result is machine input to that session (a turn when it is idle) |
| ``file:<path>`` | a block for the run is appended to the file (absolute or ``~`` path) |
| ``webhook:<url>`` | an HTTP POST of the run as JSON, signed (below) |
| ``events`` | a ``cron.delivered`` event on the run's own session stream |

A webhook's body is signed with HMAC-SHA256 under the daemon's key, the file
``cron/webhook.key`` in the data directory (64 hex characters, made on first
use, mode 0600): header ``X-Hermes-Timestamp`` is the send time (Unix
seconds), ``X-Hermes-Signature`` is ``sha256=<hex>`` of
``<timestamp>.<body>``. A receiver recomputes it and compares in constant time.
An answer outside 2xx, a network error or ``DELIVERY_TIMEOUT`` is a failure.

Every delivery's end is recorded on the run (``cron_runs.delivery``): ``ok:
...`` or ``failed: ...``; a failure is logged too and never fails the run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import attrs
import httpx2
import trio

DELIVERY_TIMEOUT = 30.0
"""Seconds one delivery may take (a webhook's whole exchange, a session's lookup)."""
KEY_FILE = "cron/webhook.key"
SIGNATURE_HEADER = "X-Hermes-Signature"
TIMESTAMP_HEADER = "X-Hermes-Timestamp"
KINDS = ("session", "file", "webhook", "events")


class DeliveryError(ValueError):
    """A delivery target that cannot be used, or a delivery that failed; the message says why."""


@attrs.frozen(slots=True)
class Target:
    kind: str
    value: str = ""


def parse_target(text: object) -> Target:
    """The target ``text`` names (see the module docstring), or ``DeliveryError``."""
    if not isinstance(text, str) or not text.strip():
        raise DeliveryError(f"deliver must be one of {_FORMS}, got {text!r}")
    kind, _, value = text.strip().partition(":")
    value = value.strip()
    if kind == "events" and not value:
        return Target("events")
    if kind == "session" and value:
        return Target("session", value)
    if kind == "file" and value:
        if not (value.startswith("/") or value.startswith("~")):
            raise DeliveryError(
                f"deliver file path must be absolute or start with ~, got {value!r}"
            )
        return Target("file", value)
    if kind == "webhook" and value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise DeliveryError(
                f"deliver webhook must be an http(s) URL with a host, got {value!r}"
            )
        return Target("webhook", value)
    raise DeliveryError(f"deliver must be one of {_FORMS}, got {text!r}")


_FORMS = "session:<id>, file:<path>, webhook:<url>, events"


@attrs.frozen(slots=True, kw_only=True)
class RunReport:
    """A finished run as delivered."""

    job_id: str
    name: str
    outcome: str
    detail: str
    session_id: str | None
    scheduled_for: float | None
    started_at: float
    finished_at: float

    def to_json(self) -> dict[str, object]:
        return {
            "job": self.job_id,
            "name": self.name,
            "outcome": self.outcome,
            "result": self.detail,
            "session": self.session_id,
            "scheduled_for": self.scheduled_for,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration": round(self.finished_at - self.started_at, 3),
        }

    def as_text(self) -> str:
        """The run as machine input or a file's block."""
        when = datetime.fromtimestamp(self.started_at, UTC).isoformat(timespec="seconds")
        took = self.finished_at - self.started_at
        return (
            f"[Scheduled job {self.name!r} ({self.job_id}) ran at {when} for {took:.1f}s: "
            f"{self.outcome}]\n\n{self.detail}"
        )


SessionSink = Callable[[str, RunReport], Awaitable[None]]
"""Delivers a report to a session as machine input (the daemon's sessions manager)."""


def webhook_key(data_dir: Path) -> bytes:
    """The daemon's webhook signing key (made on first use, 0600; see the module)."""
    path = data_dir / KEY_FILE
    try:
        return path.read_text().strip().encode()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key.encode()


def sign(key: bytes, timestamp: str, body: bytes) -> str:
    """The ``X-Hermes-Signature`` value of ``body`` sent at ``timestamp``."""
    mac = hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


class Deliverer:
    """Delivers run reports to their targets; ``deliver`` answers the note to record."""

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        to_session: SessionSink | None = None,
        timeout: float = DELIVERY_TIMEOUT,
    ) -> None:
        self.data_dir = data_dir
        self.to_session = to_session
        self.timeout = timeout

    async def deliver(self, target_text: str, report: RunReport, published: str | None) -> str:
        """``ok: ...`` or ``failed: ...`` (never raises but for cancellation).

        ``published``: what the runner said of an ``events`` delivery (it publishes on
        the run's session before closing it), None if it did not."""
        try:
            target = parse_target(target_text)
            with trio.fail_after(self.timeout):
                return "ok: " + await self._deliver(target, report, published)
        except trio.TooSlowError:
            return f"failed: {target_text} took longer than {self.timeout:g}s"
        except (DeliveryError, OSError, httpx2.HTTPError, LookupError, RuntimeError) as error:
            return f"failed: {error}"
        except Exception as error:  # a sink's own failure: recorded, never the scheduler's
            return f"failed: {type(error).__name__}: {error}"

    async def _deliver(self, target: Target, report: RunReport, published: str | None) -> str:
        if target.kind == "events":
            if published is None:
                raise DeliveryError("the run had no session to publish cron.delivered on")
            return published
        if target.kind == "session":
            if self.to_session is None:
                raise DeliveryError("this scheduler cannot deliver to sessions")
            await self.to_session(target.value, report)
            return f"machine input to session {target.value}"
        if target.kind == "file":
            path = await trio.to_thread.run_sync(_append, target.value, report.as_text())
            return f"appended to {path}"
        return await self._webhook(target.value, report)

    async def _webhook(self, url: str, report: RunReport) -> str:
        if self.data_dir is None:
            raise DeliveryError("this scheduler has no data directory for the webhook key")
        key = await trio.to_thread.run_sync(webhook_key, self.data_dir)
        body = json.dumps(report.to_json(), separators=(",", ":")).encode()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: stamp,
            SIGNATURE_HEADER: sign(key, stamp, body),
            "User-Agent": "hermes-cron",
        }
        async with httpx2.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            response = await client.post(url, content=body, headers=headers)
        if not 200 <= response.status_code < 300:
            raise DeliveryError(f"webhook {url} answered HTTP {response.status_code}")
        return f"webhook {url} answered HTTP {response.status_code}"


def _append(where: str, text: str) -> Path:
    path = Path(os.path.expanduser(where))
    if not path.parent.is_dir():
        raise DeliveryError(f"cannot write {path}: its folder does not exist")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n\n")
    return path


__all__ = [
    "DELIVERY_TIMEOUT",
    "KINDS",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "Deliverer",
    "DeliveryError",
    "RunReport",
    "SessionSink",
    "Target",
    "parse_target",
    "sign",
    "webhook_key",
]
