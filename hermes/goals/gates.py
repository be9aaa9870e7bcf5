"""Quality gates: the goal's shell commands, run before the judge (seed #223).

Each gate runs through ``/bin/sh -c`` in the session's working directory, in
its own process group (``hermes.procgroup.run_command``: a timeout or a cancel
kills the whole group), with the tools' scrubbed environment. Exit code 0
passes. ``check_gates`` runs them in order and stops at the first failure.
A working directory that is not a directory here is a refusal: running the
gates anywhere else would check another project.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import trio

from hermes.procgroup import run_command

from .record import Gate

OUTPUT_TAIL = 3000
"""Characters of a failed gate's output fed back to the agent."""


@attrs.frozen(slots=True)
class GateRun:
    index: int
    """Which gate (0-based) this is."""
    passed: bool
    exit_code: int | None
    tail: str


@attrs.frozen(slots=True)
class GateCheck:
    """The gates' outcome: every one passed, or the first that failed, or a refusal."""

    runs: tuple[GateRun, ...] = ()
    refusal: str | None = None

    @property
    def failed(self) -> GateRun | None:
        return next((r for r in self.runs if not r.passed), None)


async def run_gate(gate: Gate, index: int, cwd: Path, env: Mapping[str, str]) -> GateRun:
    """Run one gate to its end (or its timeout, which fails it with exit code -1)."""
    try:
        done = await run_command(
            ["/bin/sh", "-c", gate.command], cwd=cwd, env=env, timeout=gate.timeout
        )
    except OSError as error:
        return GateRun(index, False, None, f"[the gate could not run: {error}]")
    tail = done.output[-OUTPUT_TAIL:]
    if done.timed_out:
        return GateRun(index, False, -1, f"{tail}\n[the gate timed out after {gate.timeout:g} s]")
    return GateRun(index, done.exit_code == 0, done.exit_code, tail)


async def check_gates(gates: Sequence[Gate], cwd: Path, env: Mapping[str, str]) -> GateCheck:
    """Run ``gates`` in order until one fails."""
    if not gates:
        return GateCheck()
    if not await trio.Path(cwd).is_dir():
        return GateCheck(
            refusal=f"the working directory {cwd} is not a directory here, and running the "
            "gates anywhere else would check a different project"
        )
    runs: list[GateRun] = []
    for index, gate in enumerate(gates):
        run = await run_gate(gate, index, cwd, env)
        runs.append(run)
        if not run.passed:
            break
    return GateCheck(tuple(runs))
