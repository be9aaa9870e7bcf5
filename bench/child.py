"""A helper process for a benchmark: a server that prints its URL, then serves until stopped."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Responder = Callable[[Any], Any]
"""A fake provider rule: a ``MessagesRequest`` in, a response (or ``None``) out."""

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: ``python -m bench.<module>`` runs from here."""


@contextmanager
def serving(module_args: Sequence[str]) -> Iterator[tuple[str, int]]:
    """Run ``python -m <module_args>``; yield (the URL it printed first, its pid).

    The URL is the last word of its first line of stdout. The process is
    terminated (killed after 10 s) and reaped on exit.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", *module_args], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        url = line.split()[-1] if line else ""
        if not url.startswith("http://"):
            raise RuntimeError(f"{module_args[0]} did not report its URL (got {line!r})")
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def fake_provider_main(
    prog: str, description: str | None, respond: Responder, record_limit: int
) -> None:
    """``main`` of a scripted fake-provider process: ``--api-key``, print the URL, serve.

    Every request is answered by ``respond``; SIGINT or SIGTERM stops it.
    """
    import argparse

    import trio

    from actors import tune_gc
    from hermes.fake import open_fake_provider

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--api-key", required=True)
    args = parser.parse_args()

    async def serve() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with open_fake_provider(
                port=0, api_key=args.api_key, demo=False, record_limit=record_limit
            ) as fake:
                fake.when(respond)
                print(fake.base_url, flush=True)
                async for _ in signals:
                    break

    tune_gc()
    trio.run(serve)
