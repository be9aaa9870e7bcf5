"""``python -m bench [NAME ...]``: run a benchmark, or the load/chaos/soak suite's scenarios.

Run a per-issue benchmark or the suite's scenarios.

Per-issue benchmarks (one at a time; each prints its own table or ``--json``):
runtime, supervision, model, session, processes, subagents, gateway, compression,
cli, mcp, guards, skills, scheduler.

Scenarios (any number, ``all`` = every one; the default): sessions, fanout,
cancel, steer, soak, chaos. Each runs against a daemon and a fake provider
started for it; the output is one summary table (or ``--json``), with
``--report PATH`` a self-contained HTML report. Exit status 1 when an
invariant broke. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from .suite import SCENARIOS

BENCHMARKS = (
    "runtime",
    "supervision",
    "model",
    "session",
    "processes",
    "subagents",
    "gateway",
    "compression",
    "mcp",
    "cli",
    "guards",
    "skills",
    "scheduler",
)
SIZE_FLAGS = {
    "sessions": (int, "concurrent sessions (sessions, chaos; the load under cancel and steer)"),
    "turns": (int, "turns per session (sessions, chaos)"),
    "load_think": (float, "seconds between a load session's turns (under cancel and steer)"),
    "fanout_sessions": (int, "fan-out sessions"),
    "subagents": (int, "subagents per fan-out session"),
    "idle_sessions": (int, "idle sessions created to measure memory per session"),
    "cancels": (int, "hard cancels in the cancel storm"),
    "victims": (int, "sessions the cancel storm cancels in turn"),
    "steers": (int, "steers to measure"),
    "soak_loops": (int, "create/use/close loops of the soak"),
    "soak_workers": (int, "concurrent soak loops"),
    "chaos_rate": (float, "actor crashes per second during chaos"),
    "seed": (int, "random seed (cancel and chaos choices)"),
}


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(__doc__ or "").split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="benchmarks or scenarios to run (default: all scenarios)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--smoke", "--quick", dest="quick", action="store_true", help="tiny sizes (smoke run)"
    )
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median; default 5)")
    parser.add_argument("--report", type=Path, default=None, help="write an HTML report (suite)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    sizes = parser.add_argument_group("scenario sizes (default: a few minutes on 2 cores)")
    for name, (kind, text) in SIZE_FLAGS.items():
        sizes.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=text)
    return parser


def _names(parser: argparse.ArgumentParser, given: list[str]) -> list[str]:
    known = (*BENCHMARKS, *SCENARIOS, "all")
    for name in given:
        if name not in known:
            parser.error(f"unknown benchmark or scenario {name!r} (choose from {', '.join(known)})")
    if not given or "all" in given:
        return list(SCENARIOS)
    benchmarks = [n for n in given if n in BENCHMARKS]
    if benchmarks and len(given) > 1:
        parser.error("run one per-issue benchmark at a time (scenarios can be combined)")
    return list(dict.fromkeys(given))


def main(argv: list[str] | None = None, prog: str = "python -m bench") -> int:
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps must be >= 1, got {args.reps}")
    names = _names(parser, args.names)
    flags = {name: getattr(args, name) for name in SIZE_FLAGS}
    # Crashes and restarts are the workload here: log only errors, so the figures
    # measure the runtime rather than a terminal printing warnings.
    logging.basicConfig(level=logging.ERROR)
    if names[0] in BENCHMARKS:
        given = [f"--{k.replace('_', '-')}" for k, v in flags.items() if v is not None]
        if given or args.report:
            parser.error(f"{', '.join(given) or '--report'} applies to the suite's scenarios only")
        module = importlib.import_module(f"bench.{names[0]}")
        code: int = module.main(args.json, args.quick, args.reps)
        return code
    return _suite(parser, args, names, flags)


def _suite(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    names: list[str],
    flags: dict[str, Any],
) -> int:
    from .suite import html, summary
    from .suite.progress import Progress
    from .suite.run import run_suite
    from .suite.sizes import Sizes

    try:
        sizes = (Sizes.smoke() if args.quick else Sizes()).with_flags(flags)
    except ValueError as exc:
        parser.error(str(exc))
    if args.report is not None and not args.report.parent.is_dir():
        parser.error(f"--report: no directory {args.report.parent}")
    progress = Progress(enabled=not (args.json or args.no_progress))
    # SIGTERM and SIGHUP stop the run like Ctrl+C: every process it started is stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)
    results = run_suite(names, sizes, progress, smoke=args.quick)
    if args.report is not None:
        html.write(results, args.report)
    print(json.dumps(results, indent=2) if args.json else summary.render(results))
    if args.report is not None and not args.json:
        print(f"report: {args.report}")
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("bench: interrupted (every process it started was stopped)", file=sys.stderr)
        sys.exit(130)
