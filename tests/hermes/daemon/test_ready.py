"""``hermes daemon start`` returns once the daemon serves: it is told on a ready pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from hermes.daemon.ready import READY_FD, ReadyOut, take_ready_fd, wait_ready
from hermes.gateway.client import NoDaemon, connect, find_daemon
from hermes.paths import resolve_paths

from .daemon_proc import STARTUP_BOUND, daemon_env, write_config


def hermes(env: dict[str, str], root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes", *args],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=STARTUP_BOUND,
    )


def test_daemon_start_returns_a_serving_daemon_and_stop_stops_it(tmp_path: Path) -> None:
    env = daemon_env(tmp_path)
    (tmp_path / "home").mkdir()
    paths = resolve_paths(env)
    started = hermes(env, tmp_path, "daemon", "start")
    try:
        assert started.returncode == 0, started.stderr
        pid = int(started.stdout.split("(pid ")[1].split(")")[0])
        endpoint = find_daemon(paths)  # serving at once: no wait, no retry
        assert endpoint.pid == pid

        async def status() -> dict[str, object]:
            async with connect(endpoint) as client:
                answer: dict[str, object] = await client.call("daemon.status")
                return answer

        assert trio.run(status)["pid"] == pid
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert any(item.startswith(READY_FD.encode() + b"=") for item in environ)
        fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        assert not [fd for fd in fds if fd.startswith("pipe:")]  # the ready pipe is closed
        out = (paths.log_dir / "daemon.out").read_text()
        assert f"listening on {endpoint.url}" in out
        again = hermes(env, tmp_path, "daemon", "start")
        assert again.returncode == 0
        assert f"already running (pid {pid})" in again.stdout
    finally:
        stopped = hermes(env, tmp_path, "daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr
    with pytest.raises(NoDaemon):
        find_daemon(paths)


def test_a_daemon_that_cannot_start_is_reported_with_its_own_words(tmp_path: Path) -> None:
    env = daemon_env(tmp_path)
    (tmp_path / "home").mkdir()
    write_config(tmp_path, "[daemon]\nport = 'eighty'\n")
    started = hermes(env, tmp_path, "daemon", "start")
    assert started.returncode == 1
    assert "the daemon exited at once (code 1)" in started.stderr
    assert "[daemon] port: expected an integer" in started.stderr


def test_the_ready_line_goes_through_and_to_the_pipe_once() -> None:
    read_end, write_end = os.pipe()
    seen: list[str] = []

    class Stream:
        def write(self, text: str) -> int:
            seen.append(text)
            return len(text)

        def flush(self) -> None:
            seen.append("<flush>")

    env = {READY_FD: str(write_end), "OTHER": "kept"}
    fd = take_ready_fd(env)
    assert fd == write_end and env == {"OTHER": "kept"}
    assert not os.get_inheritable(fd)
    out = ReadyOut(Stream(), fd)  # type: ignore[arg-type]
    print("hermes daemon: listening", end="", file=out)
    print(" on http://127.0.0.1:1", file=out, flush=True)
    print("later", file=out)
    out.close()
    assert "".join(s for s in seen if s != "<flush>") == (
        "hermes daemon: listening on http://127.0.0.1:1\nlater\n"
    )
    assert "<flush>" in seen
    assert wait_ready(read_end, 30) == "hermes daemon: listening on http://127.0.0.1:1"
    assert os.read(read_end, 100) == b""  # closed after the one line
    os.close(read_end)


def test_a_pipe_closed_without_a_line_is_end_of_file_and_silence_a_timeout() -> None:
    read_end, write_end = os.pipe()
    with open(os.devnull, "w") as sink:
        out = ReadyOut(sink, write_end)
        with pytest.raises(TimeoutError):
            wait_ready(read_end, 0.05)
        out.write("no newline yet")
        out.close()
    assert wait_ready(read_end, 30) is None
    os.close(read_end)
    assert take_ready_fd({READY_FD: "not a number"}) is None
    assert take_ready_fd({}) is None
