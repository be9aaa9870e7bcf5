"""One path policy for every tool that touches files: what may be read, written or deleted.

Decided on the path as it really is: ``..`` and every symlink are followed first
(``os.path.realpath``), and the lexical spelling is checked too, so neither a
link named ``notes.md`` pointing at ``~/.ssh/id_rsa`` nor a link named
``AGENTS.md`` pointing elsewhere gets past. A ``Ruling`` says allow, ask (the
ordinary approval), ask a person every time, or refuse, with the reason and
what the model may do instead. The policy does blocking ``stat`` calls: call it
from a worker thread.
"""

from __future__ import annotations

import enum
import os
import stat
import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from hermes.paths import resolve_paths

from . import rules


class Action(enum.Enum):
    ALLOW = "allow"
    APPROVE = "approve"
    """The ordinary approval: yolo skips it, *session* and *always* are remembered."""
    PERSON = "person"
    """A person, every time: no yolo, no allowlist, a yes covers this one write."""
    REFUSE = "refuse"


@attrs.frozen(slots=True)
class Ruling:
    """What the policy decided for one path, and why (``reason`` completes "PATH is ...")."""

    action: Action
    key: str = ""
    reason: str = ""
    advice: str = ""
    path: str = ""
    """The resolved real path the ruling is about."""

    @property
    def allowed(self) -> bool:
        return self.action is Action.ALLOW


ALLOW = Ruling(Action.ALLOW)

_ASK_USER = "If the change is truly needed, tell the user and let them make it themselves."


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/") or root == "/"


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # a loop or a NUL byte: judged on its spelling alone
        return path


@attrs.frozen(slots=True, kw_only=True)
class PathPolicy:
    """The protected places of one daemon (see the module docstring and ``docs/tools.md``)."""

    home: str
    state: tuple[tuple[str, str], ...] = ()
    """(real path, what it is) of the daemon's own config, data and runtime places."""
    secret_state: tuple[tuple[str, str], ...] = ()
    """(real path, what it holds) of the places never read either: the runtime
    directory (token, endpoint) and the MCP servers' OAuth tokens (seed #108)."""
    runtime: tuple[str, ...] = ()
    """The interpreter and virtual environment the daemon runs from."""
    runtime_sockets_dir: str = ""

    @classmethod
    def for_paths(
        cls,
        *,
        config_file: Path,
        data_dir: Path,
        runtime_dir: Path,
        environ: Mapping[str, str] | None = None,
    ) -> PathPolicy:
        """The policy for a daemon with these places (``hermes.paths.Paths``)."""
        env = os.environ if environ is None else environ
        home = _real(env.get("HOME") or str(Path.home()))
        runtime_dir_s = _real(str(runtime_dir))
        sockets = env.get("XDG_RUNTIME_DIR", "")
        return cls(
            home=home,
            state=(
                (_real(str(runtime_dir)), "the Hermes daemon's runtime directory (its token)"),
                (_real(str(config_file)), "the Hermes daemon's configuration file"),
                (_real(str(data_dir)), "the Hermes daemon's data directory (its store)"),
            ),
            secret_state=(
                (
                    runtime_dir_s,
                    "the Hermes daemon's runtime directory, which holds its connection token",
                ),
                (_real(str(data_dir / "mcp" / "oauth")), "the MCP servers' OAuth tokens"),
                (  # with it a model could sign webhook deliveries of its own
                    _real(str(data_dir / "cron" / "webhook.key")),
                    "the key that signs the scheduler's webhook deliveries",
                ),
            ),
            runtime=_runtime_roots(),
            runtime_sockets_dir=_real(sockets) if sockets else "",
        )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> PathPolicy:
        """The policy for the daemon places ``environ`` (default: ours) points at."""
        paths = resolve_paths(environ)
        policy = cls.for_paths(
            config_file=paths.config_file,
            data_dir=paths.data_dir,
            runtime_dir=paths.runtime_dir,
            environ=environ,
        )
        configured = _configured_data_dir(paths.config_file)
        if configured is None:
            return policy
        what = "the Hermes daemon's data directory (its store)"
        return attrs.evolve(policy, state=(*policy.state, (_real(configured), what)))

    # -- the three questions ------------------------------------------------------------

    def check_write(self, path: Path | str) -> Ruling:
        """May a file tool write (create, replace or edit) ``path``?"""
        spelled, real = self._both(path)
        for candidate in dict.fromkeys((real, spelled)):
            ruling = self._write_place(candidate)
            if not ruling.allowed:
                return attrs.evolve(ruling, path=real)
        ruling = _instruction_file(spelled, real)
        if not ruling.allowed:
            return ruling
        return _format_guard(real)

    def check_terminal_write(self, path: Path | str) -> Ruling:
        """What a shell command may write: as ``check_write``, less system paths and formats.

        The dangerous-command gate already asks before a command writes a system
        path, and programs write their own formats (``sqlite3 app.db``).
        """
        spelled, real = self._both(path)
        for candidate in dict.fromkeys((real, spelled)):
            ruling = self._write_place(candidate, system=False)
            if not ruling.allowed:
                return attrs.evolve(ruling, path=real)
        return _instruction_file(spelled, real)

    def check_read(self, path: Path | str) -> Ruling:
        """May a file tool read ``path`` (or search its content)?"""
        spelled, real = self._both(path)
        for candidate in dict.fromkeys((real, spelled)):
            ruling = self._read_place(candidate)
            if not ruling.allowed:
                return attrs.evolve(ruling, path=real)
        return ALLOW

    def check_delete(self, path: Path | str) -> Ruling:
        """May a command delete or move away ``path`` (with everything under it)?"""
        spelled, real = self._both(path)
        for candidate in dict.fromkeys((real, spelled)):
            for root in self.runtime:
                if _under(root, candidate) or _under(candidate, root):
                    return _runtime(real)
            for root, what in self.state:
                if _under(root, candidate) or _under(candidate, root):
                    return _state(real, what)
            for root in self._credential_roots():
                if _under(root, candidate) or _under(candidate, root):
                    return _credential(real)
        return _instruction_file(spelled, real)

    # -- the rules ------------------------------------------------------------------------

    def _both(self, path: Path | str) -> tuple[str, str]:
        """The spelling with ``..`` folded, and the real path (``..`` taken after links).

        ``keys/../.ssh`` with ``keys -> ~/.ssh`` is ``~/.ssh`` as the kernel opens it:
        the real path is resolved from the spelling as given, never the folded one.
        """
        given = os.fspath(path)
        absolute = given if os.path.isabs(given) else os.path.join(os.getcwd(), given)
        return os.path.normpath(absolute), _real(absolute)

    def _credential_roots(self) -> Iterable[str]:
        return (os.path.join(self.home, rel) for rel in rules.HOME_CREDENTIALS)

    def _write_place(self, path: str, *, system: bool = True) -> Ruling:
        for root in self.runtime:
            if _under(path, root):
                return _runtime(path)
        for root, what in self.state:
            if _under(path, root):
                return _state(path, what)
        if self._docker_socket(path):
            return Ruling(
                Action.REFUSE,
                "docker_socket",
                "the Docker socket (whoever writes to it controls the machine as root)",
                "Use the docker CLI in the terminal, which asks for approval where needed.",
                path,
            )
        if path == os.path.join(self.home, rules.SSH_APPROVAL):
            return Ruling(
                Action.APPROVE,
                "ssh_config",
                "your SSH client configuration (~/.ssh/config); a change to it needs approval",
                "Ask the user to approve the change, or show them the lines to add.",
                path,
            )
        for root in self._credential_roots():
            if _under(path, root):
                return _credential(path)
        for prefix in rules.SYSTEM_PREFIXES if system else ():
            if _under(path, prefix):
                return Ruling(
                    Action.REFUSE,
                    "system_path",
                    f"under {prefix}, a system location file tools never write",
                    "For a system file use the terminal (with sudo, which asks the user for "
                    "approval), or tell the user the change to make.",
                    path,
                )
        return ALLOW

    def _read_place(self, path: str) -> Ruling:
        for root, what in self.secret_state:
            if _under(path, root):
                return Ruling(
                    Action.REFUSE,
                    "agent_secret",
                    f"in {what}",
                    "Nothing there is needed for the task; use the hermes CLI for daemon state.",
                    path,
                )
        ssh = os.path.join(self.home, ".ssh")
        if _under(path, ssh) and path != ssh:
            name = os.path.basename(path)
            if name in rules.SSH_READABLE or name.endswith(".pub"):
                return ALLOW
        for root in (*self._credential_roots(), *rules.SYSTEM_CREDENTIALS):
            if _under(path, root) and path != ssh:
                return Ruling(
                    Action.REFUSE,
                    "credential_read",
                    "a credential file or store; file tools never read credentials",
                    "Do not try to read it another way. If the task needs a credential, ask the "
                    "user to configure it (an environment variable or the tool's own login).",
                    path,
                )
        if _is_env_file(os.path.basename(path)):
            return Ruling(
                Action.REFUSE,
                "env_file",
                "a .env file, which holds secrets the agent never reads",
                "Read .env.example (or the code that loads the variables) to learn the names; "
                "ask the user for any value you need.",
                path,
            )
        return ALLOW

    def _docker_socket(self, path: str) -> bool:
        if path in rules.DOCKER_SOCKETS or path.endswith("/docker.sock"):
            return True
        if any(path == os.path.join(self.home, rel) for rel in rules.HOME_DOCKER_SOCKETS):
            return True
        base = self.runtime_sockets_dir
        return bool(base) and any(
            path == os.path.join(base, rel) for rel in rules.RUNTIME_DIR_SOCKETS
        )


def _configured_data_dir(config_file: Path) -> str | None:
    """The config file's top-level ``data_dir`` (it wins over the environment's), if any."""
    try:
        with open(config_file, "rb") as f:
            given = tomllib.load(f).get("data_dir")
    except (OSError, ValueError):
        return None
    return os.path.expanduser(given) if isinstance(given, str) and given else None


def _runtime_roots() -> tuple[str, ...]:
    """The venv (``sys.prefix``), the interpreter's directory and its standard library."""
    roots = {
        _real(sys.prefix),
        os.path.dirname(_real(sys.executable)),
        os.path.dirname(_real(os.__file__)),
    }
    if sys.prefix == sys.base_prefix:  # no venv: sys.prefix may be /usr itself
        roots.discard(_real(sys.prefix))
    return tuple(sorted(r for r in roots if r and r != "/"))


def _runtime(path: str) -> Ruling:
    return Ruling(
        Action.REFUSE,
        "runtime",
        "part of the Python interpreter or virtual environment the Hermes daemon runs from",
        "Changing or deleting it would break the agent itself. For the project, create and use "
        "a separate virtual environment (python -m venv .venv in the project).",
        path,
    )


def _state(path: str, what: str) -> Ruling:
    return Ruling(
        Action.REFUSE,
        "agent_state",
        f"{what}; the agent never changes its own daemon's files",
        "Use the hermes CLI for daemon settings and state. " + _ASK_USER,
        path,
    )


def _credential(path: str) -> Ruling:
    return Ruling(
        Action.REFUSE,
        "credential",
        "a credential file or store (SSH keys, cloud credentials, .netrc and the like)",
        "The agent never writes or deletes credentials. " + _ASK_USER,
        path,
    )


def _instruction_file(spelled: str, real: str) -> Ruling:
    for path in dict.fromkeys((real, spelled)):
        name = os.path.basename(path).lower()
        parent = os.path.basename(os.path.dirname(path))
        if name in rules.PROTECTED_INSTRUCTION_NAMES or parent == rules.PROJECT_AGENT_DIR:
            return Ruling(
                Action.PERSON,
                "instruction_file",
                f"a protected instruction file ({os.path.basename(path)} steers every later "
                "session); a person must approve each write to it",
                "Show the user the change you propose and let them apply or approve it.",
                real,
            )
    return ALLOW


def _is_env_file(name: str) -> bool:
    lower = name.lower()
    if lower == ".env":
        return True
    if lower.startswith(".env."):
        return lower.rsplit(".", 1)[-1] not in rules.ENV_TEMPLATES
    return lower.endswith(".env") and len(lower) > 4


def _format_guard(real: str) -> Ruling:
    """Office documents and SQLite files are never written as text; existing binaries kept."""
    lower = real.lower()
    ext = os.path.splitext(lower)[1]
    if ext in rules.OFFICE_EXTENSIONS:
        return Ruling(
            Action.REFUSE,
            "office_document",
            f"an office document ({ext}): a zipped or binary format that text would destroy",
            "Write a new text or Markdown file instead, or use a script with a library for the "
            "format (python-docx, openpyxl...) run in the terminal.",
            real,
        )
    if lower.endswith(rules.SQLITE_SUFFIXES):
        return Ruling(
            Action.REFUSE,
            "sqlite_file",
            "a SQLite database or one of its journal files: a text write would corrupt it",
            "Change the database with sqlite3 (or the application) in the terminal.",
            real,
        )
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return ALLOW  # a new file, whatever its extension
    except NotADirectoryError:
        return ALLOW  # the write itself reports the file in the way
    except OSError as exc:
        return Ruling(
            Action.REFUSE,
            "unverifiable",
            f"a path whose existing file cannot be checked ({exc.strerror or exc})",
            "Check the path and its permissions, then try again.",
            real,
        )
    if not stat.S_ISREG(info.st_mode):
        return ALLOW  # a directory or a device: the write itself says what is wrong
    binary = ext in rules.BINARY_EXTENSIONS or _sniff_binary(real)
    if binary:
        return Ruling(
            Action.REFUSE,
            "binary_overwrite",
            "an existing binary file; file tools do not overwrite binaries with text",
            "Write the result to a new file name, or produce the binary with the program that "
            "makes it (in the terminal).",
            real,
        )
    return ALLOW


def _sniff_binary(real: str) -> bool:
    try:
        with open(real, "rb") as f:
            return b"\0" in f.read(8192)
    except OSError:
        return False
