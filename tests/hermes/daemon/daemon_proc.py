"""A real ``hermes daemon`` subprocess with isolated XDG directories, for end-to-end tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from hermes.gateway.client import Endpoint, NoDaemon, find_daemon
from hermes.paths import Paths, resolve_paths

STARTUP_BOUND = 240.0
"""How long a daemon may take to serve before a test gives up on it.

A daemon that fails exits, and ``Daemon.start`` sees that at once; this bound only
ends a daemon that hangs. It is generous on purpose: on a slow, busy 2-core machine
with ``PYTHONTRACEMALLOC`` set, imports alone take tens of seconds.
"""
EXIT_BOUND = 120.0
"""How long a stopping daemon (or a CLI command) may take before a test gives up on it."""
CLI_BOUND = 180.0
"""A test that runs a few CLI commands and turns: each CLI start imports for seconds when busy."""

LONG_PROMPT = "please tell me a long story about " + " ".join(f"word{i}" for i in range(240))
"""The demo model echoes it back in ~40 deltas: a turn that streams for a while."""


def daemon_env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "XDG_"))}
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_RUNTIME_DIR=str(root / "run"),
        HOME=str(root / "home"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def write_config(root: Path, text: str) -> Path:
    path = root / "config" / "hermes" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Daemon:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self.paths: Paths = resolve_paths(env)
        self.proc: subprocess.Popen[str] | None = None
        self.endpoint: Endpoint | None = None

    def start(self, timeout: float = STARTUP_BOUND) -> Endpoint:
        (self.root / "home").mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hermes", "daemon"],
            env=self.env,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                raise RuntimeError(f"daemon exited {self.proc.returncode}: {out}\n{err}")
            try:
                endpoint = find_daemon(self.paths)
                if endpoint.pid == self.proc.pid:
                    self.endpoint = endpoint
                    return endpoint
            except NoDaemon:
                pass
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"the daemon did not serve within {timeout:.0f} s")

    @property
    def token(self) -> str:
        assert self.endpoint is not None
        return self.endpoint.token

    @property
    def ws(self) -> str:
        assert self.endpoint is not None
        return self.endpoint.ws

    @property
    def url(self) -> str:
        assert self.endpoint is not None
        return self.endpoint.url

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def wait(self, timeout: float = EXIT_BOUND) -> tuple[int, str, str]:
        assert self.proc is not None
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def stop(self, timeout: float = EXIT_BOUND) -> int | None:
        """SIGTERM (the phased shutdown, as ``hermes daemon stop``) and wait; SIGKILL
        only if it is still running after ``timeout``. Returns its exit code."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            with suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=timeout)
        self.kill()
        return proc.returncode

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        if proc is not None:
            proc.communicate(timeout=EXIT_BOUND)

    def cli(self, *args: str, timeout: float = EXIT_BOUND) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hermes", *args],
            env=self.env,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def log_entries(self) -> list[dict[str, Any]]:
        lines = self.paths.log_file.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@contextmanager
def running_daemon(root: Path, config: str | None = None, **env: str) -> Iterator[Daemon]:
    if config is not None:
        write_config(root, config)
    daemon = Daemon(root, daemon_env(root, **env))
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()  # through the phased shutdown, like a user's daemon


SLOW = "[model]\nfake_event_delay = 0.03\n"
