"""A job's pre-run script: where it may live, running it, and its wake gate (seeds #10, #11, #120).

Scripts live in one folder, the data directory's ``scripts`` (a person puts
them there; nothing in Hermes writes it). A job names its script by a path
relative to that folder:

- **when the job is added or edited** the path must be relative (an absolute
  path, ``~`` or a drive letter is refused), must not leave the folder (``..``
  or a symbolic link out of it), and the file must exist there;
- **each time the job fires** the path is resolved again (the file may have
  moved since), this time also accepting an absolute or ``~`` path as long as
  it resolves inside the folder.

The script runs first, as its own process group (``hermes.procgroup``), with
the daemon's environment minus its secrets (``hermes.tools.scrub_env``; those
named by ``[tools] env_passthrough`` are kept, as for the tools), in the
job's working directory (else the script's own folder), stdin from ``/dev/null``,
stdout and stderr read together, for at most ``SCRIPT_TIMEOUT`` seconds (then
the group is killed). An executable file runs as it is; otherwise ``.py`` runs
with ``python3`` and ``.sh`` with ``sh``.

Its output decides the run (``wake``):

- the last non-empty line is the JSON ``{"wakeAgent": false}``: the run is
  skipped, no model call (#10);
- it exited 0 and printed nothing: skipped too (#11);
- it failed (non-zero exit, killed at the timeout, could not start): the model
  is woken with a *Script error* block to report;
- anything else wakes the model with the output as context.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

import attrs

from hermes.procgroup import OutputCapture, run_command
from hermes.tools import scrub_env

SCRIPTS_DIR = "scripts"
"""The folder, in the data directory, that every pre-run script must be in."""
SCRIPT_TIMEOUT = 120.0
"""Seconds a pre-run script may run before its process group is killed."""
OUTPUT_LIMIT = 16_000
"""Characters of the script's output that go into the prompt (head and tail kept)."""
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_INTERPRETERS = {".py": "python3", ".sh": "sh"}


class ScriptError(ValueError):
    """A script path the rules refuse, or a file that cannot run; the message says why."""


def check_script_path(text: object, folder: Path | None) -> str:
    """The path as stored, if a job may name it (the create/edit rules; see the module)."""
    if folder is None:
        raise ScriptError("this scheduler has no scripts folder: a job cannot have a script")
    if not isinstance(text, str) or not text.strip():
        raise ScriptError(f"script must be a path relative to {folder}, got {text!r}")
    if text.startswith(("/", "\\", "~")) or _DRIVE.match(text):
        raise ScriptError(
            f"script {text!r} must be a path relative to the scripts folder {folder} "
            "(absolute, ~ and drive-letter paths are refused)"
        )
    resolved = _inside(folder, folder / text, text)
    _check_runnable(resolved, text)
    return str(PurePosixPath(*Path(text).parts))


def resolve_script(text: str, folder: Path | None) -> Path:
    """The script to run now (the fire-time rules: absolute and ``~`` accepted if inside)."""
    if folder is None:
        raise ScriptError("this scheduler has no scripts folder: the job's script cannot run")
    expanded = Path(os.path.expanduser(text))
    resolved = _inside(folder, expanded if expanded.is_absolute() else folder / expanded, text)
    _check_runnable(resolved, text)
    return resolved


def _inside(folder: Path, path: Path, text: str) -> Path:
    root = folder.resolve()
    resolved = path.resolve()
    if not resolved.is_relative_to(root):
        raise ScriptError(
            f"script {text!r} resolves to {resolved}, outside the scripts folder {root}"
        )
    return resolved


def _check_runnable(path: Path, text: str) -> None:
    if not path.is_file():
        raise ScriptError(f"script {text!r} does not exist in the scripts folder ({path})")
    if not os.access(path, os.X_OK) and path.suffix not in _INTERPRETERS:
        raise ScriptError(
            f"script {text!r} is not executable and is neither .py nor .sh (chmod +x {path})"
        )


def script_place(text: str, folder: Path | None, cwd: str | None) -> tuple[Path, Path]:
    """The script to run now and where: the job's working directory, else its folder."""
    path = resolve_script(text, folder)
    return path, Path(cwd).expanduser() if cwd else path.parent


def script_argv(path: Path) -> list[str]:
    """How ``path`` is started: as it is when executable, else by its suffix's interpreter."""
    if os.access(path, os.X_OK):
        return [str(path)]
    return [_INTERPRETERS[path.suffix], str(path)]


@attrs.frozen(slots=True)
class ScriptRun:
    """What the script did: its output (cut to ``OUTPUT_LIMIT``) and whether it failed."""

    output: str
    error: str | None = None
    """Why it failed (exit status, timeout, could not start); None: it exited 0."""

    @property
    def wake(self) -> bool:
        """Whether the model is called (see the module docstring)."""
        if self.error is not None:
            return True
        return bool(self.output.strip()) and not said_no_wake(self.output)


def said_no_wake(output: str) -> bool:
    """The last non-empty line of ``output`` is the JSON ``{"wakeAgent": false}`` (#10)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return False
    try:
        gate = json.loads(lines[-1])
    except ValueError:
        return False
    return isinstance(gate, dict) and gate.get("wakeAgent") is False


def _cut(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters cut ...]\n{text[-half:]}"


async def run_script(
    path: Path,
    *,
    cwd: Path,
    timeout: float = SCRIPT_TIMEOUT,
    environ: Mapping[str, str] | None = None,
    keep: Iterable[str] = (),
) -> ScriptRun:
    """Run the script (see the module docstring); a failure is in the answer, not raised.

    ``keep``: secret-looking variables it still gets (``[tools] env_passthrough``)."""
    env = scrub_env(os.environ if environ is None else environ, keep=keep)
    try:
        result = await run_command(
            script_argv(path), cwd=cwd, env=env, timeout=timeout, capture=OutputCapture()
        )
    except OSError as error:
        return ScriptRun("", f"the script could not start: {error}")
    output = _cut(result.output)
    if result.timed_out:
        return ScriptRun(output, f"the script ran longer than {timeout:g}s and was killed")
    if result.exit_code != 0:
        return ScriptRun(output, f"the script exited with status {result.exit_code}")
    return ScriptRun(output)


__all__ = [
    "OUTPUT_LIMIT",
    "SCRIPTS_DIR",
    "SCRIPT_TIMEOUT",
    "ScriptError",
    "ScriptRun",
    "check_script_path",
    "resolve_script",
    "run_script",
    "said_no_wake",
    "script_argv",
    "script_place",
]
