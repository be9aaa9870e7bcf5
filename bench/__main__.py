"""``python -m bench <name>``: run a benchmark and print its table (or ``--json``)."""

from __future__ import annotations

import argparse
import logging
import sys

BENCHMARKS = (
    "runtime",
    "supervision",
    "model",
    "session",
    "processes",
    "subagents",
    "gateway",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("name", choices=BENCHMARKS, help="which benchmark to run")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke run)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (median; default 5)")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps must be >= 1, got {args.reps}")
    # Crashes and restarts are the workload here: log only errors, so the figures
    # measure the runtime rather than a terminal printing warnings.
    logging.basicConfig(level=logging.ERROR)
    if args.name == "runtime":
        from . import runtime

        return runtime.main(args.json, args.quick, args.reps)
    if args.name == "model":
        from . import model

        return model.main(args.json, args.quick, args.reps)
    if args.name == "session":
        from . import session

        return session.main(args.json, args.quick, args.reps)
    if args.name == "subagents":
        from . import subagents

        return subagents.main(args.json, args.quick, args.reps)
    if args.name == "gateway":
        from . import gateway

        return gateway.main(args.json, args.quick, args.reps)
    if args.name == "processes":
        from . import processes

        return processes.main(args.json, args.quick, args.reps)
    from . import supervision

    return supervision.main(args.json, args.quick, args.reps)


if __name__ == "__main__":
    sys.exit(main())
