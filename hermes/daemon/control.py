"""Starting and stopping a background daemon from the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from hermes.gateway.client import Endpoint, NoDaemon, find_daemon

from .lock import holder
from .paths import Paths


class StartFailed(RuntimeError):
    pass


def start_background(paths: Paths, timeout: float = 20.0) -> Endpoint:
    """Start ``hermes daemon`` detached (its own session); wait until it serves."""
    try:
        return find_daemon(paths)
    except NoDaemon:
        pass
    paths.log_dir.mkdir(parents=True, exist_ok=True)
    out_path = paths.log_dir / "daemon.out"
    with open(out_path, "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "hermes", "daemon"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = child.poll()
        if code is not None:
            tail = out_path.read_text(errors="replace").splitlines()[-5:]
            raise StartFailed(f"the daemon exited at once (code {code}):\n" + "\n".join(tail))
        try:
            endpoint = find_daemon(paths)
        except NoDaemon:
            time.sleep(0.05)
            continue
        if endpoint.pid == child.pid:
            return endpoint
        time.sleep(0.05)
    child.terminate()
    raise StartFailed(f"the daemon did not come up within {timeout:g}s (see {out_path})")


def stop_daemon(paths: Paths, timeout: float = 30.0, force: bool = False) -> int:
    """SIGTERM (SIGKILL with ``force``) the running daemon and wait for its lock to go."""
    pid = holder(paths.lock_file)
    if pid is None or pid < 0:
        raise NoDaemon("no hermes daemon is running")
    os.kill(pid, signal.SIGKILL if force else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holder(paths.lock_file) is None:
            return pid
        time.sleep(0.05)
    raise TimeoutError(f"the daemon (pid {pid}) did not stop within {timeout:g}s")
