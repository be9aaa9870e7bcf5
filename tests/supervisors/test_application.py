"""``supervisors.run``: signal handling and exit codes, on a real process.

Each test starts ``app_fixture.py`` (see its docstring) as a subprocess, waits
for ``ready`` on its stdout, signals it and checks its exit code and the lines
its workers wrote. The process is killed in any case when the test ends.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import pytest
import trio

from supervisors import ExitCode

FIXTURE = Path(__file__).with_name("app_fixture.py")
STARTUP = 30.0
"""Seconds for the interpreter to start, import and print ``ready`` (generous for slow CI)."""
EXIT = 15.0
"""Seconds for a graceful shutdown to finish."""
STARTS = ["start w1", "start w2", "start w3"]
STOPS = ["stop w3", "stop w2", "stop w1"]


@attrs.define
class App:
    proc: trio.Process
    outfile: Path
    errfile: Path
    stdout: bytearray = attrs.Factory(bytearray)

    def lines(self) -> list[str]:
        if not self.outfile.exists():
            return []
        return self.outfile.read_text(encoding="utf-8").splitlines()

    def stderr(self) -> str:
        return self.errfile.read_text(encoding="utf-8", errors="replace")

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    async def ready(self) -> None:
        """Wait for ``ready`` on stdout (the root and its children have started)."""
        assert self.proc.stdout is not None
        with trio.fail_after(STARTUP):
            while b"ready\n" not in self.stdout:
                chunk = await self.proc.stdout.receive_some()
                if not chunk:
                    code = await self.proc.wait()
                    pytest.fail(f"exited with {code} before ready; stderr:\n{self.stderr()}")
                self.stdout += chunk

    async def drain(self) -> bytes:
        """Everything left on stdout, up to end of file."""
        assert self.proc.stdout is not None
        with trio.fail_after(EXIT):
            while chunk := await self.proc.stdout.receive_some():
                self.stdout += chunk
        return bytes(self.stdout)

    async def exit_code(self, within: float = EXIT) -> int:
        try:
            with trio.fail_after(within):
                return await self.proc.wait()
        except trio.TooSlowError:
            pytest.fail(f"still running after {within}s; lines {self.lines()}\n{self.stderr()}")

    async def line(self, wanted: str, count: int = 1, within: float = EXIT) -> None:
        """Wait until the outfile holds ``wanted`` (``count`` times)."""
        with trio.move_on_after(within):
            while self.lines().count(wanted) < count:
                if self.proc.returncode is not None:
                    break
                await trio.sleep(0.02)
        assert self.lines().count(wanted) >= count, (
            self.proc.returncode,
            self.lines(),
            self.stderr(),
        )


@asynccontextmanager
async def application(mode: str, tmp_path: Path) -> AsyncIterator[App]:
    outfile = tmp_path / "out.txt"
    errfile = tmp_path / "stderr.txt"
    with errfile.open("wb") as err:
        proc = await trio.lowlevel.open_process(
            [sys.executable, str(FIXTURE), mode, str(outfile)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    try:
        yield App(proc, outfile, errfile)
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.kill()
            with trio.move_on_after(10):
                await proc.wait()
            if proc.stdout is not None:
                await proc.stdout.aclose()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_shuts_down_gracefully_in_reverse_start_order(
    tmp_path: Path, signum: signal.Signals
) -> None:
    async with application("normal", tmp_path) as app:
        await app.ready()
        assert app.lines() == STARTS
        app.signal(signum)
        assert await app.exit_code() == ExitCode.OK
        assert app.lines() == STARTS + STOPS, app.stderr()
        assert "graceful shutdown" in app.stderr()


async def test_sighup_reloads_and_keeps_running(tmp_path: Path) -> None:
    async with application("normal", tmp_path) as app:
        await app.ready()
        app.signal(signal.SIGHUP)
        await app.line("reload")
        # Nothing was restarted or stopped, and the process is still there.
        await trio.sleep(0.3)
        assert app.proc.returncode is None
        assert app.lines() == [*STARTS, "reload"]
        app.signal(signal.SIGHUP)
        await app.line("reload", count=2)
        assert app.proc.returncode is None
        app.signal(signal.SIGTERM)
        assert await app.exit_code() == ExitCode.OK
        assert app.lines() == [*STARTS, "reload", "reload", *STOPS]


async def test_sigint_again_forces_a_hanging_shutdown_and_sigterm_again_does_not(
    tmp_path: Path,
) -> None:
    async with application("hang", tmp_path) as app:
        await app.ready()
        app.signal(signal.SIGTERM)
        await app.line("stopping hang")
        # The graceful shutdown waits for the hanging stop hook (shutdown INFINITY) ...
        app.signal(signal.SIGTERM)  # ... and runs once: another SIGTERM changes nothing (OTP)
        for _ in range(200):  # up to 10 s for the log line
            if "already shutting down" in app.stderr():
                break
            await trio.sleep(0.05)
        assert "already shutting down" in app.stderr()
        assert app.proc.returncode is None
        # ... until SIGINT (Ctrl-C again) forces it.
        started = trio.current_time()
        app.signal(signal.SIGINT)
        assert await app.exit_code() == ExitCode.FORCED
        assert trio.current_time() - started < 5.0
        assert "forcing shutdown" in app.stderr()
        assert "stop hang" not in app.lines()


async def test_shutdown_deadline_cutting_a_hanging_shutdown_short_is_forced(
    tmp_path: Path,
) -> None:
    async with application("hang-deadline", tmp_path) as app:
        await app.ready()
        started = trio.current_time()
        app.signal(signal.SIGTERM)
        code = await app.exit_code()
        # It did give up on the hanging stop hook at the 1 s deadline ...
        assert 0.9 < trio.current_time() - started < 5.0
        assert "stopping hang" in app.lines()
        assert "stop hook did not finish" in app.stderr()
        # ... so this was not a clean shutdown.
        assert code == ExitCode.FORCED


async def test_root_escalation_exits_with_failure(tmp_path: Path) -> None:
    async with application("crash", tmp_path) as app:
        await app.ready()
        assert await app.exit_code() == ExitCode.FAILED
        # Started, crashed, restarted once, crashed again: intensity 1 exceeded.
        assert app.lines().count("start crasher") == 2
        # It gave up (exit shutdown, OTP) and the log names the failure that tripped it.
        assert "the root supervisor gave up: shutdown (reached max restart intensity" in (
            app.stderr()
        )
        assert "Escalated(" in app.stderr() and "crashes on purpose" in app.stderr()


async def test_root_that_fails_to_start_exits_with_failure(tmp_path: Path) -> None:
    async with application("startfail", tmp_path) as app:
        assert await app.exit_code() == ExitCode.FAILED
        # The child started before the failure was stopped again; the rest never started.
        lines = app.lines()
        assert lines[0] == "start w1"
        assert lines[-1] == "stop w1"
        assert "start w3" not in lines
        assert b"ready" not in await app.drain()
        assert "failed to start" in app.stderr()
