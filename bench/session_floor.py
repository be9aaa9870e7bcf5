"""``python -m bench.session_floor``: what ``turn_overhead_ratio`` would be without parts
the sessions issue requires, to show where its 1.3 target stands.

The same measurement as ``bench session``'s ``turn_overhead_ratio`` (same fake
provider, same turns, same direct replay; ``turn_overhead`` from
``bench/session.py``), run once per variant, each with parts of the session
taken out by patching them for that run only:

| variant | taken out |
|---|---|
| ``full`` | nothing (``bench session``'s figure) |
| ``no-store`` | the four store writes of a turn: appends are acknowledged, never written |
| ``no-workers`` | tool-worker actors: each call runs in the turn's own task |
| ``no-store-no-workers`` | both |
| ``bare`` | both, and no session events are published |

The direct side replays the store writes the session made, so a variant
without the store takes them out of both sides.

Every variant but ``full`` drops something the issue requires (a flush after
every model response and tool result; tool calls in tool-worker actors;
typed events), so they are floors for the decision, not configurations to
run. Without the store no transcript exists, so the transcript checks of
``bench session`` are skipped in those variants.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import trio

from hermes.session import batch, events
from hermes.store import StoreClient
from hermes.store.records import AppendResult
from hermes.tools import Invoker, PreparedCall, ToolContext, ToolOutcome, ToolRegistry

from . import session as bench_session

VARIANTS: dict[str, tuple[str, ...]] = {
    "full": (),
    "no-store": ("store",),
    "no-workers": ("workers",),
    "no-store-no-workers": ("store", "workers"),
    "bare": ("store", "workers", "events"),
}


async def _acknowledge(
    self: StoreClient, session_id: str, *args: Any, **kwargs: Any
) -> AppendResult:
    seq = kwargs.get("expected_seq") or 0
    return AppendResult(session_id, seq, seq + 1)


async def _acknowledge_replace(
    self: StoreClient, session_id: str, seq: int, *args: Any, **kwargs: Any
) -> AppendResult:
    return AppendResult(session_id, seq, seq + 1)


def _inline_invoker(_: Any, registry: ToolRegistry) -> Invoker:
    async def invoke(prepared: PreparedCall, ctx: ToolContext) -> ToolOutcome:
        return await registry.invoke(prepared, ctx)

    return invoke


@contextmanager
def without(parts: tuple[str, ...]) -> Iterator[None]:
    """Patch the named parts out of the session for the duration."""
    with ExitStack() as stack:
        if "store" in parts:
            stack.enter_context(mock.patch.object(StoreClient, "append", _acknowledge))
            stack.enter_context(
                mock.patch.object(StoreClient, "replace_last", _acknowledge_replace)
            )
        if "workers" in parts:
            stack.enter_context(mock.patch.object(batch, "worker_invoker", _inline_invoker))
        if "events" in parts:
            stack.enter_context(mock.patch.object(events.EventHub, "publish", lambda *_: None))
        yield


async def _measure(url: str, variant: str, reps: int, quick: bool) -> dict[str, Any]:
    sizes = bench_session.Sizes.quick() if quick else bench_session.Sizes()
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        async with bench_session.open_bench(url, Path(tmp)) as bench:
            with without(VARIANTS[variant]):
                overhead = await bench_session.turn_overhead(bench, sizes, reps)
    stored = "store" not in VARIANTS[variant]
    return {
        "ratio": overhead["ratio"],
        "ratios": overhead["ratios"],
        "session_cpu_us_per_turn": overhead["session_cpu_us_per_turn"],
        "direct_cpu_us_per_turn": overhead["direct_cpu_us_per_turn"],
        "problems": bench.problems if stored else [],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.session_floor", description=__doc__)
    parser.add_argument("--reps", type=int, default=3, help="repetitions per variant")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("variants", nargs="*", help=f"any of {', '.join(VARIANTS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    variants = args.variants or list(VARIANTS)
    from actors import tune_gc

    tune_gc()
    results: dict[str, Any] = {}
    with bench_session.scripted_fake() as url:
        for variant in variants:
            results[variant] = trio.run(_measure, url, variant, args.reps, args.quick)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'variant':<22} {'ratio':>6}  {'session us':>10}  {'direct us':>9}  reps")
        for name, r in results.items():
            reps = ", ".join(f"{x:.2f}" for x in r["ratios"])
            print(
                f"{name:<22} {r['ratio']:6.3f}  {r['session_cpu_us_per_turn']:10.0f}  "
                f"{r['direct_cpu_us_per_turn']:9.0f}  {reps}"
            )
    problems = [p for r in results.values() for p in r["problems"]]
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
