"""Hardening of the daemon's files and the CLI's trust (issue 20 items 4, 7, 11).

Through a real daemon subprocess and the real CLI: the CLI refuses a runtime
directory or file that another user could have written, never signals a pid
that is not this user's daemon, the daemon's data is private, two daemons
cannot share a data directory, start-up failures and a root that gives up are
one line on stderr, and the built-in fake provider wants its key.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from tests.hermes.daemon.daemon_proc import Daemon, daemon_env, running_daemon

ROOT = os.getuid() == 0
NOBODY = 65534


def start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/PID/stat``, read here independently of the daemon's code."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[19])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with running_daemon(tmp_path) as d:
        yield d


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "600"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def session_count(d: Daemon) -> int:
    async def count() -> int:
        async with connect(d.endpoint) as client:  # type: ignore[arg-type]
            return len(await client.call("session.list"))

    return trio.run(count)


# -- item 4: the CLI trusts only this user's private runtime directory and files ----------


def test_send_refuses_a_world_writable_runtime_dir(daemon: Daemon) -> None:
    run = daemon.paths.runtime_dir
    run.chmod(0o777)
    try:
        done = daemon.cli("send", "hello")
        status = daemon.cli("daemon", "status")
        stop = daemon.cli("daemon", "stop")
    finally:
        run.chmod(0o700)
    assert done.returncode == 1 and done.stdout == ""
    line = one_line(done.stderr)
    assert f"refusing runtime directory {run}: mode 0777" in line and "chmod 700" in line
    assert status.returncode == 1 and "mode 0777" in status.stderr
    assert stop.returncode == 1 and "mode 0777" in stop.stderr
    assert daemon.proc is not None and daemon.proc.poll() is None
    assert session_count(daemon) == 0  # the prompt never reached the daemon


@pytest.mark.parametrize("name", ["token", "daemon.json", "daemon.lock"])
def test_cli_refuses_a_runtime_file_others_can_access(daemon: Daemon, name: str) -> None:
    path = daemon.paths.runtime_dir / name
    path.chmod(0o644)
    try:
        done = daemon.cli("send", "hello")
    finally:
        path.chmod(0o600)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"refusing file {path}: mode 0644 gives other users access" in line
    assert session_count(daemon) == 0


def test_cli_refuses_a_symlinked_token(daemon: Daemon, tmp_path: Path) -> None:
    token = daemon.paths.token_file
    planted = tmp_path / "planted"
    planted.write_text(token.read_text())
    planted.chmod(0o600)
    token.unlink()
    token.symlink_to(planted)
    done = daemon.cli("send", "hello")
    assert done.returncode == 1
    assert f"refusing {token}: it is a symlink" in one_line(done.stderr)


def test_daemon_refuses_a_runtime_dir_others_can_write(tmp_path: Path) -> None:
    run = tmp_path / "run" / "hermes"
    run.mkdir(parents=True)
    run.chmod(0o770)
    d = Daemon(tmp_path, daemon_env(tmp_path))
    done = d.cli("daemon")
    assert done.returncode == 1
    assert f"refusing runtime directory {run}: mode 0770" in one_line(done.stderr)
    assert not (run / "token").exists() and mode(run) == 0o770


def _plant_lock(run: Path, pid: int, start: int | None) -> int:
    """A lock file naming ``pid``, held (flock) by this test process; returns its fd."""
    run.mkdir(parents=True, exist_ok=True)
    run.chmod(0o700)
    fd = os.open(run / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{pid} {'' if start is None else start}\n".encode(), 0)
    endpoint = run / "daemon.json"
    endpoint.write_text(json.dumps({"pid": pid, "url": "http://127.0.0.1:9", "ws": "ws://x"}))
    endpoint.chmod(0o600)
    return fd


@pytest.mark.parametrize("force", [False, True])
def test_stop_refuses_a_pid_that_is_not_a_hermes_daemon(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], force: bool
) -> None:
    d = Daemon(tmp_path, daemon_env(tmp_path))
    fd = _plant_lock(d.paths.runtime_dir, sleeper.pid, start_time(sleeper.pid))
    try:
        done = d.cli("daemon", "stop", *(["--force"] if force else []))
    finally:
        os.close(fd)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"refusing to signal pid {sleeper.pid}: it is not a hermes daemon" in line
    assert "sleep 600" in line
    assert sleeper.poll() is None  # still alive: nothing was sent


def test_stop_refuses_a_daemon_pid_with_another_start_time(daemon: Daemon) -> None:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    lock = daemon.paths.lock_file
    real = lock.read_text()
    assert real.split() == [str(pid), str(start_time(pid))]
    lock.write_text(f"{pid} {int(real.split()[1]) - 1}\n")  # as if the pid had been reused
    done = daemon.cli("daemon", "stop")
    assert done.returncode == 1
    assert f"refusing to signal pid {pid}: it started at tick" in one_line(done.stderr)
    assert daemon.proc.poll() is None
    lock.write_text(real)
    stopped = daemon.cli("daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.strip() == f"hermes daemon stopped (pid {pid})"
    assert daemon.wait()[0] == 0


@pytest.mark.skipif(not ROOT, reason="needs root to chown to another uid")
def test_cli_refuses_a_runtime_dir_of_another_user(daemon: Daemon) -> None:
    run = daemon.paths.runtime_dir
    os.chown(run, NOBODY, -1)
    try:
        done = daemon.cli("send", "hello")
    finally:
        os.chown(run, 0, -1)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"refusing runtime directory {run}: it belongs to uid {NOBODY}" in line
    assert session_count(daemon) == 0


@pytest.mark.skipif(not ROOT, reason="needs root to run a process as another uid")
def test_stop_refuses_a_pid_of_another_user(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "600"], user=NOBODY)
    try:
        d = Daemon(tmp_path, daemon_env(tmp_path))
        fd = _plant_lock(d.paths.runtime_dir, other.pid, start_time(other.pid))
        try:
            done = d.cli("daemon", "stop")
        finally:
            os.close(fd)
        assert done.returncode == 1
        assert f"pid {other.pid}: it runs as uid {NOBODY}" in one_line(done.stderr)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


# -- item 7: the daemon's data is private ---------------------------------------------------


def test_the_daemon_keeps_its_data_private(tmp_path: Path) -> None:
    data = tmp_path / "data" / "hermes"
    (data / "logs").mkdir(parents=True)
    data.chmod(0o755)
    old_log = data / "logs" / "daemon.log"
    old_log.write_text("")
    old_log.chmod(0o644)  # as an older version left them
    with running_daemon(tmp_path) as d:
        done = d.cli("send", "hello")
        assert done.returncode == 0, done.stderr
        assert "offline demo model" in done.stdout
        paths = d.paths
        assert mode(paths.data_dir) == 0o700
        assert mode(paths.log_dir) == 0o700 and mode(paths.log_file) == 0o600
        db = paths.data_dir / "hermes.db"
        for path in (db, db.with_name("hermes.db-wal"), db.with_name("hermes.db-shm")):
            assert path.exists() and mode(path) == 0o600, path
        assert mode(paths.runtime_dir) == 0o700
        for path in (paths.token_file, paths.endpoint_file, paths.lock_file):
            assert mode(path) == 0o600, path
        for path in paths.data_dir.rglob("*"):
            assert not mode(path) & 0o077, path


# -- item 11: the data directory lock, one-line failures, the fake provider's key ---------


def test_a_second_daemon_on_the_same_data_dir_refuses(daemon: Daemon, tmp_path: Path) -> None:
    assert daemon.proc is not None
    other = Daemon(tmp_path, daemon_env(tmp_path, XDG_RUNTIME_DIR=str(tmp_path / "run2")))
    assert other.paths.data_dir == daemon.paths.data_dir
    assert other.paths.runtime_dir != daemon.paths.runtime_dir
    done = other.cli("daemon")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"another hermes daemon (pid {daemon.proc.pid}) is using the data directory" in line
    assert str(daemon.paths.data_dir) in line
    assert daemon.proc.poll() is None


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    d = Daemon(tmp_path, daemon_env(tmp_path, HERMES_DATA_DIR=str(path)))
    done = d.cli("daemon")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"hermes daemon: cannot use the data directory {path}: it is not a directory" in line


@pytest.mark.skipif(ROOT, reason="root writes through a read-only mode")
@pytest.mark.parametrize("where", ["parent", "itself"])
def test_a_read_only_data_dir_is_one_line(tmp_path: Path, where: str) -> None:
    parent = tmp_path / "ro"
    data = parent / "data"
    parent.mkdir()
    if where == "itself":
        data.mkdir(mode=0o500)
    else:
        parent.chmod(0o500)
    try:
        d = Daemon(tmp_path, daemon_env(tmp_path, HERMES_DATA_DIR=str(data)))
        done = d.cli("daemon")
    finally:
        parent.chmod(0o700)
        if data.exists():
            data.chmod(0o700)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert f"{data}: Permission denied; check its permissions" in line
    assert "HERMES_DATA_DIR" in line


def test_a_store_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data" / "hermes"
    (data / "hermes.db").mkdir(parents=True)  # the database path is a directory
    d = Daemon(tmp_path, daemon_env(tmp_path))
    done = d.cli("daemon")
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith("hermes daemon: failed to start: the store child could not start (")
    assert line.endswith(f"see {d.paths.log_file}")


def test_the_restart_limit_exit_names_the_child(daemon: Daemon) -> None:
    async def cancel_until_it_gives_up() -> int:
        kills = 0
        with trio.fail_after(120):
            async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                while daemon.proc.poll() is None:  # type: ignore[union-attr]
                    try:
                        await client.call("actor.cancel", path="/hermes/watchdog")
                        kills += 1
                    except GatewayError as exc:  # restarting: not registered yet
                        assert exc.code == "not_found", exc
                        await trio.sleep(0.01)
                    except Exception:  # the daemon went away mid-call
                        break
        return kills

    kills = trio.run(cancel_until_it_gives_up)
    code, _out, err = daemon.wait()
    assert code == 1 and kills >= 5
    line = one_line(err)
    assert line.startswith("hermes daemon: stopped: the watchdog child failed ")
    assert "cancelled by gateway (actor.cancel)" in line
    assert "root supervisor gave up" in line and line.endswith(f"see {daemon.paths.log_file}")


def test_the_built_in_fake_provider_wants_its_key(daemon: Daemon) -> None:
    status = daemon.cli("daemon", "status", "--json")
    provider = json.loads(status.stdout)["provider"]
    assert provider.startswith("http://127.0.0.1:")
    body = {
        "model": "hermes-demo",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
    }
    with httpx2.Client(trust_env=False) as http:
        for headers in ({}, {"x-api-key": "guess"}, {"authorization": "Bearer offline-demo"}):
            answer = http.post(f"{provider}/v1/messages", json=body, headers=headers)
            assert answer.status_code == 401
            error = answer.json()
            assert error["type"] == "error"
            assert error["error"]["type"] == "authentication_error"
    done = daemon.cli("send", "hello")  # the daemon's own client has the key
    assert done.returncode == 0, done.stderr
    assert "offline demo model" in done.stdout


def test_pidcheck_reads_this_process() -> None:
    from hermes.daemon import pidcheck

    me = pidcheck.start_time(os.getpid())
    assert me == start_time(os.getpid()) and isinstance(me, int) and me > 0
    assert pidcheck.start_time(2**22 + 12345) is None
