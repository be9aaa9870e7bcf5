"""Run the fake provider as a process: print the base URL, serve until SIGINT/SIGTERM."""

from __future__ import annotations

import ipaddress
import signal
import sys
from collections.abc import Callable
from typing import Any, TextIO

import trio

from .provider import open_fake_provider
from .records import RequestRecord
from .script import Reply


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_standalone(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    verbose: bool = False,
    reply: str | None = None,
    **options: Any,
) -> None:
    """Serve until SIGINT or SIGTERM, then return normally.

    The first line written to ``out`` is the base URL (flushed at once), so a
    parent process can read it to find the port. A non-loopback ``host`` gets a
    warning on ``err``: the fake has no TLS and, without ``api_key``, no auth.
    With ``verbose`` each finished request is logged to ``err``. With ``reply``
    every messages request gets that text instead of the demo model's answer.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if not is_loopback(host):
        print(
            f"warning: the fake provider is listening on {host}, not loopback; "
            "it is reachable from other machines (plain HTTP"
            + ("" if options.get("api_key") else ", no API key required")
            + ").",
            file=err,
            flush=True,
        )
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with open_fake_provider(host=host, port=port, **options) as fake:
            if verbose:
                fake.on_finish = _logger(err)
            if reply is not None:
                fake.when(Reply.of(reply))
            print(fake.base_url, file=out, flush=True)
            async for signum in signals:
                if verbose:
                    name = signal.Signals(signum).name
                    print(f"fake provider: {name}, stopping", file=err, flush=True)
                break


def _logger(err: TextIO) -> Callable[[RequestRecord], None]:
    def log(record: RequestRecord) -> None:
        outcome = record.outcome.value if record.outcome else "?"
        print(
            f"{record.seq} {record.method} {record.path} {record.status} "
            f"{record.responder} {outcome} {1000 * (record.duration or 0):.1f} ms",
            file=err,
            flush=True,
        )

    return log
