"""``hermes bench``: the benchmarks and the load/chaos/soak suite (``python -m bench``).

The benchmarks live in the source checkout (``bench/`` next to ``hermes/``),
not in the installed package; this command finds them there and runs them in
this process, with the same arguments as ``python -m bench``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from .app import fail, main

ROOT = Path(__file__).resolve().parents[2]


@main.command(
    "bench",
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def bench(args: tuple[str, ...]) -> None:
    """Load, chaos and soak benchmarks against a daemon started for the run.

    `hermes bench` runs every scenario (sessions, fanout, cancel, steer, soak,
    chaos); `hermes bench sessions --sessions 50 --report out.html` one, bigger;
    `hermes bench --smoke` tiny sizes; `hermes bench runtime` a per-issue
    benchmark. `hermes bench --help` lists every flag; docs/benchmarks.md
    explains the figures.
    """
    if not (ROOT / "bench" / "__main__.py").is_file():
        fail(f"the benchmarks are not here: no {ROOT / 'bench'} (they live in the source checkout)")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    module = importlib.import_module("bench.__main__")
    try:
        code = int(module.main(list(args), prog="hermes bench"))
    except KeyboardInterrupt:
        click.echo("hermes bench: interrupted (every process it started was stopped)", err=True)
        code = 130
    sys.exit(code)
