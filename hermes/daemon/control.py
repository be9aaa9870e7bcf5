"""Starting and stopping a background daemon from the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from hermes.paths import Paths

from .endpoint import Endpoint, NoDaemon, find_daemon
from .lock import holder, read_lock
from .pidcheck import verify_daemon
from .ready import READY_FD, wait_ready
from .trust import check_private_dir, check_private_file


class StartFailed(RuntimeError):
    pass


def start_background(paths: Paths, timeout: float = 20.0) -> Endpoint:
    """Start ``hermes daemon`` detached (its own session); return once it serves.

    The daemon says so on a ready pipe (``ready.py``): no polling. A daemon that
    exits first is reported with the last lines of its output.
    """
    try:
        return find_daemon(paths)
    except NoDaemon:
        pass
    paths.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    paths.log_dir.mkdir(mode=0o700, exist_ok=True)
    out_path = paths.log_dir / "daemon.out"
    fd = os.open(out_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(fd, "ab") as out:
            child = subprocess.Popen(
                [sys.executable, "-m", "hermes", "daemon"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                env={**os.environ, READY_FD: str(write_end)},
                pass_fds=(write_end,),
                start_new_session=True,
                close_fds=True,
            )
    finally:
        os.close(write_end)
    try:
        line = wait_ready(read_end, timeout)
    except TimeoutError:
        child.terminate()
        raise StartFailed(
            f"the daemon did not come up within {timeout:g}s (see {out_path})"
        ) from None
    finally:
        os.close(read_end)
    if line is None:  # it closed the pipe without a word: it is exiting
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.terminate()
            raise StartFailed(
                f"the daemon closed its ready pipe but runs on (see {out_path})"
            ) from None
        tail = out_path.read_text(errors="replace").splitlines()[-5:]
        raise StartFailed(f"the daemon exited at once (code {code}):\n" + "\n".join(tail))
    try:
        endpoint = find_daemon(paths)
    except NoDaemon as exc:
        raise StartFailed(f"the daemon said it serves ({line}) but {exc}") from None
    if endpoint.pid != child.pid:
        raise StartFailed(f"another daemon (pid {endpoint.pid}) serves; {line}")
    return endpoint


def stop_daemon(paths: Paths, timeout: float = 30.0, force: bool = False) -> int:
    """SIGTERM (SIGKILL with ``force``) the running daemon and wait for its lock to go.

    Only a pid that ``verify_daemon`` accepts is signalled: the runtime directory
    and lock file are this user's and private, the process is this user's
    ``hermes daemon`` and its start time is the one recorded in the lock file.
    Anything else raises ``Untrusted`` and nothing is signalled.
    """
    if not check_private_dir(paths.runtime_dir) or not check_private_file(paths.lock_file):
        raise NoDaemon("no hermes daemon is running")
    pid = holder(paths.lock_file)
    if pid is None or pid < 0:
        raise NoDaemon("no hermes daemon is running")
    info = read_lock(paths.lock_file)
    _signal_verified(
        pid,
        info.start if info is not None and info.pid == pid else None,
        signal.SIGKILL if force else signal.SIGTERM,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holder(paths.lock_file) is None:
            return pid
        time.sleep(0.05)
    raise TimeoutError(f"the daemon (pid {pid}) did not stop within {timeout:g}s")


def _signal_verified(pid: int, recorded_start: int | None, signum: int) -> None:
    """Signal ``pid`` once ``verify_daemon`` accepts it.

    A pidfd is opened before the checks and the signal goes through it, so a
    process that exits and whose pid is reused between check and signal is not
    hit (``pidfd_send_signal`` then fails with ``ProcessLookupError``).
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        raise NoDaemon(f"the hermes daemon (pid {pid}) is gone") from None
    except (AttributeError, OSError):  # no pidfd (old kernel): check, then kill
        verify_daemon(pid, recorded_start)
        os.kill(pid, signum)
        return
    try:
        verify_daemon(pid, recorded_start)
        signal.pidfd_send_signal(pidfd, signum)
    finally:
        os.close(pidfd)
