"""A helper process for a benchmark: a server that prints its URL, then serves until stopped."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

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
