"""Where the daemon keeps things: XDG config, data and runtime directories.

- config file: ``$XDG_CONFIG_HOME/hermes/config.toml`` (``~/.config``);
  override ``HERMES_CONFIG`` (a file).
- data (database, spill, logs): ``$XDG_DATA_HOME/hermes`` (``~/.local/share``);
  overrides ``HERMES_DATA_DIR``, config ``data_dir``.
- runtime (lock, token, endpoint): ``$XDG_RUNTIME_DIR/hermes`` (else
  ``/tmp/hermes-<uid>``); override ``HERMES_RUNTIME_DIR``.

The runtime directory is created with mode 0700 (it holds the token); one that
belongs to another user or lets others in is refused (``hermes/daemon/trust.py``).

A top-level module, below every package: the daemon, the CLI, the gateway's
endpoint lookup and the tools' path guard all need these places.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs


@attrs.frozen(slots=True)
class Paths:
    config_file: Path
    data_dir: Path
    runtime_dir: Path

    @property
    def lock_file(self) -> Path:
        return self.runtime_dir / "daemon.lock"

    @property
    def token_file(self) -> Path:
        return self.runtime_dir / "token"

    @property
    def socket_file(self) -> Path:
        """The optional unix socket (``[daemon] unix_socket``)."""
        return self.runtime_dir / "hermes.sock"

    @property
    def endpoint_file(self) -> Path:
        """JSON: pid, host, port, url, model, demo (written once the daemon listens)."""
        return self.runtime_dir / "daemon.json"

    @property
    def shutdown_file(self) -> Path:
        """JSON: the last shutdown's report (pid, summary, what ran over), for ``daemon stop``."""
        return self.runtime_dir / "shutdown.json"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "daemon.log"

    @property
    def spill_dir(self) -> Path:
        return self.data_dir / "spill"

    def with_data_dir(self, data_dir: Path) -> Paths:
        return attrs.evolve(self, data_dir=data_dir)


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    """The paths from the environment (``os.environ`` by default); creates nothing."""
    env = os.environ if env is None else env
    home = _home(env)
    config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    data_home = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    config_file = (
        Path(env["HERMES_CONFIG"])
        if env.get("HERMES_CONFIG")
        else (config_home / "hermes" / "config.toml")
    )
    data_dir = Path(env["HERMES_DATA_DIR"]) if env.get("HERMES_DATA_DIR") else data_home / "hermes"
    if env.get("HERMES_RUNTIME_DIR"):
        runtime = Path(env["HERMES_RUNTIME_DIR"])
    elif env.get("XDG_RUNTIME_DIR"):
        runtime = Path(env["XDG_RUNTIME_DIR"]) / "hermes"
    else:
        runtime = Path("/tmp") / f"hermes-{os.getuid()}"
    return Paths(config_file.expanduser(), data_dir.expanduser(), runtime.expanduser())
