"""One run's processes: the suite's fake provider and a ``hermes daemon`` pointed at it.

Everything lives in a temporary directory: XDG config, data and runtime
directories (so a daemon of the user's is left alone), the tools' working
directory, the provider's log and the recorded request bodies. The daemon
gets an API key and ``[model] base_url`` = the fake's URL, so it talks to the
fake in its own process through the SDK (no built-in in-process fake), and
the fake's CPU is not charged to the daemon. A mark in the daemon's
environment (inherited by every process it starts) finds leaked processes.

``stop_daemon`` (SIGTERM, then SIGKILL after 20 s) may be called while the
run is open, to check the database and ``/proc`` after a graceful stop; the
context manager's exit stops whatever still runs, kills any marked process
left behind, stops the fake and removes the directory, even on Ctrl+C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import attrs

from bench.child import ROOT, serving
from bench.gateway import _raise_fd_limit
from hermes.daemon.config import SCHEMA
from hermes.gateway.client import Endpoint, NoDaemon, find_daemon
from hermes.paths import resolve_paths

from . import procfs

API_KEY = "bench-key"
MODEL = "claude-bench"
MARK_NAME = "HERMES_BENCH_RUN_MARK"
_PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
Settings = dict[str, dict[str, Any]]


@attrs.define
class Run:
    """A started fake provider and daemon (see the module docstring)."""

    root: Path
    env: dict[str, str]
    mark: str
    workdir: Path
    provider_log: Path
    record_dir: Path
    provider_url: str
    provider_pid: int
    process: subprocess.Popen[bytes]
    endpoint: Endpoint
    db_path: Path
    shutdown: dict[str, Any] | None = None

    @property
    def pid(self) -> int:
        return self.endpoint.pid

    def cwd_for(self, name: str) -> Path:
        """A fresh working directory (a session's ``cwd``) holding ``notes.txt``."""
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "notes.txt").write_text("hello from the benchmark\n")
        return path

    def cli(self, *args: str) -> list[str]:
        """The argv of a ``hermes`` command talking to this daemon (run with ``env``)."""
        return [sys.executable, "-m", "hermes", *args]

    def marked(self) -> list[int]:
        """Marked processes other than the daemon: what its tools started and still run."""
        return [pid for pid in procfs.marked_pids(self.mark) if pid != self.process.pid]

    def stop_daemon(self, timeout: float = 20.0) -> dict[str, Any]:
        """Stop the daemon gracefully (idempotent); what was left: exit code, processes."""
        if self.shutdown is not None:
            return self.shutdown
        start = time.monotonic()
        forced = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                forced = True
                self.process.kill()
                self.process.wait(timeout=10)
        seconds = time.monotonic() - start
        deadline = time.monotonic() + 2.0
        left = self.marked()
        while left and time.monotonic() < deadline:  # a group may still be reaping
            time.sleep(0.02)
            left = self.marked()
        for pid in left:
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.shutdown = {
            "exit_code": self.process.returncode,
            "forced": forced,
            "seconds": round(seconds, 3),
            "leaked_processes": len(left),
        }
        return self.shutdown


def config_toml(provider_url: str, workdir: Path, extra: Settings | None = None) -> str:
    """The daemon's config file: the fake as the model, quiet logs, ``extra`` on top.

    Keys this daemon does not know (``hermes.daemon.config.SCHEMA``) are left
    out, so a scenario may ask for settings a daemon may not have yet.
    """
    settings: Settings = {
        "model": {"name": MODEL, "base_url": provider_url},
        "session": {"cwd": str(workdir), "busy_mode": "queue", "load_context_files": False},
        "logging": {"level": "warning"},
        "gateway": {"max_connections": 4096},
    }
    for section, values in (extra or {}).items():
        settings.setdefault(section, {}).update(values)
    lines = []
    for section, values in settings.items():
        known = {k: v for k, v in values.items() if k in SCHEMA.get(section, {})}
        if known:
            lines.append(f"[{section}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in known.items()]
    return "\n".join(lines) + "\n"


def _env(root: Path, mark: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "XDG_", "ANTHROPIC_")) and k.lower() not in _PROXIES
    }
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_RUNTIME_DIR=str(root / "run"),
        HOME=str(root / "home"),
        ANTHROPIC_API_KEY=API_KEY,
        PYTHONPATH=str(ROOT),
    )
    env[MARK_NAME] = mark
    return env


def _wait_endpoint(process: subprocess.Popen[bytes], env: dict[str, str]) -> Endpoint:
    paths = resolve_paths(env)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"the daemon exited with {process.returncode}: {err.strip()}")
        with suppress(NoDaemon):
            endpoint = find_daemon(paths)
            if endpoint.pid == process.pid:
                return endpoint
        if time.monotonic() > deadline:
            raise RuntimeError("the daemon did not start in 30 s")
        time.sleep(0.02)


@contextmanager
def open_run(
    record_max: int = 0,
    config: Settings | None = None,
    aux_delay: float = 0.0,
    fd_limit: int = 8192,
) -> Iterator[Run]:
    """Start the fake provider and the daemon; stop both and clean up on exit.

    ``record_max``: request bodies of ``#rec`` the fake records; ``config``:
    daemon settings on top of the defaults; ``aux_delay``: the fake's delay
    before answering reviews and summaries.
    """
    _raise_fd_limit(fd_limit)  # the daemon inherits it
    with ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes-bench-")))
        for sub in ("config/hermes", "data", "run", "home", "work", "records"):
            (root / sub).mkdir(parents=True)
        mark = f"{MARK_NAME}={uuid.uuid4().hex}"
        workdir = root / "work"
        (workdir / "notes.txt").write_text("hello from the benchmark\n")
        log = root / "provider.log"
        args = ["bench.suite.fake", "--log", str(log), "--aux-delay", str(aux_delay)]
        if record_max:
            args += ["--record-dir", str(root / "records"), "--record-max", str(record_max)]
        url, provider_pid = stack.enter_context(serving(args))
        env = _env(root, mark.split("=", 1)[1])
        (root / "config/hermes/config.toml").write_text(config_toml(url, workdir, config))
        process = subprocess.Popen(
            [sys.executable, "-m", "hermes", "daemon"],
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        run: Run | None = None
        try:
            endpoint = _wait_endpoint(process, env)
            run = Run(
                root=root,
                env=env,
                mark=mark,
                workdir=workdir,
                provider_log=log,
                record_dir=root / "records",
                provider_url=url,
                provider_pid=provider_pid,
                process=process,
                endpoint=endpoint,
                db_path=resolve_paths(env).data_dir / "hermes.db",
            )
            yield run
        finally:
            if run is not None:
                run.stop_daemon()
            elif process.poll() is None:
                process.kill()
                process.wait()
            if process.stderr is not None:
                process.stderr.close()
