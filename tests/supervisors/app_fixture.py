"""A small application for ``test_application.py``, run as a real process.

    python tests/supervisors/app_fixture.py <mode> <outfile>

Modes:

- ``normal``: a root Supervisor of workers w1, w2, w3. Each worker appends
  ``start <id>`` to the outfile when it starts and ``stop <id>`` when it stops.
- ``hang``: w1, w2 and then ``hang``, whose stop hook appends ``stopping hang``
  and never returns (its shutdown is ``INFINITY``).
- ``hang-deadline``: the same tree with a 1 s application ``shutdown_timeout``
  (60 s in every other mode).
- ``crash``: the root (intensity 1) supervises ``crasher``, which crashes
  0.1 s after each start: the second crash escalates and the root exits.
- ``startfail``: the root's second child fails in ``on_start``, so the root
  itself fails to start.
- ``phased``: the ``normal`` tree with three shutdown phases before
  ``stop-runtime``: ``input`` (a step appends ``phase input``), ``hang`` (0.5 s:
  ``slow`` appends ``phase hang`` and never returns, ``quick`` appends ``phase
  quick``) and ``flush`` (``broken`` appends ``phase flush`` and raises). The
  report goes to the outfile as ``report <summary>`` and one
  ``outcome <phase>/<step> <status>`` line per step.
- ``phased-held``: the same, but ``hang`` has 60 s and ``slow`` returns at the
  next SIGHUP (the test decides when the phase ends).

``on_started`` prints ``ready`` (flushed) on stdout; ``on_reload`` (SIGHUP)
appends ``reload``. The process exits with ``supervisors.run``'s exit code.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors import Actor, ActorRef, ActorSystem, ExitReason
from supervisors import INFINITY, ChildSpec, Phase, ShutdownReport, Step, Supervisor, run

CRASH = "crash"


def append(outfile: str, line: str) -> None:
    with open(outfile, "a", encoding="utf-8") as out:
        out.write(line + "\n")
        out.flush()


class Recorder(Actor):
    """Writes its start and its stop to the outfile."""

    def __init__(self, outfile: str) -> None:
        self.outfile = outfile

    async def on_start(self) -> None:
        append(self.outfile, f"start {self.ctx.self.name}")

    async def receive(self, message: Any) -> Any:
        return message

    async def on_stop(self, reason: ExitReason) -> None:
        append(self.outfile, f"stop {self.ctx.self.name}")


class Hanger(Recorder):
    """Never finishes stopping (until cancelled)."""

    async def on_stop(self, reason: ExitReason) -> None:
        append(self.outfile, f"stopping {self.ctx.self.name}")
        await trio.sleep_forever()


class Crasher(Recorder):
    """Crashes shortly after every start."""

    async def on_start(self) -> None:
        await super().on_start()
        self.ctx.send_after(0.1, CRASH)

    async def receive(self, message: Any) -> Any:
        if message == CRASH:
            raise RuntimeError(f"{self.ctx.path} crashes on purpose")
        return message


class FailsToStart(Recorder):
    async def on_start(self) -> None:
        raise RuntimeError("cannot start")


def make_root(mode: str, outfile: str) -> Supervisor:
    def worker(name: str, cls: type[Recorder] = Recorder, **fields: Any) -> ChildSpec:
        return ChildSpec(name, cls, args=(outfile,), **fields)

    if mode == "normal":
        return Supervisor([worker("w1"), worker("w2"), worker("w3")])
    if mode in ("hang", "hang-deadline"):
        return Supervisor([worker("w1"), worker("w2"), worker("hang", Hanger, shutdown=INFINITY)])
    if mode == "crash":
        return Supervisor([worker("crasher", Crasher)], intensity=1, period=30.0)
    if mode == "startfail":
        return Supervisor([worker("w1"), worker("bad", FailsToStart), worker("w3")])
    raise SystemExit(f"unknown mode {mode!r}")


def phases(outfile: str, release: trio.Event | None = None) -> list[Phase]:
    def step(name: str, line: str, then: str = "return") -> Step:
        async def run() -> None:
            append(outfile, line)
            if then == "hang" and release is not None:
                await release.wait()
            elif then == "hang":
                await trio.sleep_forever()
            if then == "raise":
                raise RuntimeError("flush failed on purpose")

        return Step(name, run)

    return [
        Phase("input", [step("stop", "phase input")], timeout=5.0),
        Phase(
            "hang",
            [step("slow", "phase hang", "hang"), step("quick", "phase quick")],
            timeout=60.0 if release is not None else 0.5,
        ),
        Phase("flush", [step("broken", "phase flush", "raise")], timeout=5.0),
    ]


def report(outfile: str, shutdown: ShutdownReport) -> None:
    append(outfile, f"report {shutdown.summary()}")
    for step in shutdown.steps:
        append(outfile, f"outcome {step.phase}/{step.step} {step.status.value}")


def main() -> int:
    mode, outfile = sys.argv[1], sys.argv[2]
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    def on_started(system: ActorSystem, root: ActorRef) -> None:
        print("ready", flush=True)

    release = trio.Event() if mode == "phased-held" else None

    async def on_reload(system: ActorSystem, root: ActorRef) -> None:
        append(outfile, "reload")
        if release is not None:
            release.set()
        await trio.lowlevel.checkpoint()

    phased = mode in ("phased", "phased-held")
    return run(
        lambda: make_root("normal" if phased else mode, outfile),
        name="app",
        shutdown_timeout=1.0 if mode == "hang-deadline" else 60.0,
        kill_grace=1.0,
        on_started=on_started,
        on_reload=on_reload,
        phases=(lambda system, root: phases(outfile, release)) if phased else None,
        on_report=(lambda shutdown: report(outfile, shutdown)) if phased else None,
    )


if __name__ == "__main__":
    sys.exit(main())
