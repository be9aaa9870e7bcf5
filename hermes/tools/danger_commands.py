"""The rules for one simple command given as plain words: what deleting or writing means.

``check_command(name, args, out, inline)`` adds the finding keys of one command
(``rm -rf /`` -> ``delete_root``, ``git push --force`` -> ``git_force_push``...)
once the walk in ``danger.py`` has read the line with the bash grammar, undone
quotes and wrappers, and tried variables with their values. The helpers here
(where a shell's inline code or script operand is, whether it reads its program
from stdin, what a write target or a recursive delete names) are shared with
that walk. Nothing here reads a script: code a command runs in turn is handed
to ``inline``.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence

from .danger_rules import (
    _BLOCK_DEVICE,
    _HARMLESS_DEVICE_DIRS,
    _HARMLESS_DEVICES,
    _HOME_STARTUP,
    _INTERPRETER,
    _PROTECTED_WRITE,
    _SHELLS,
    _STDIN_PATHS,
    _SYSTEM_DIRS,
)
from .wrappers import short_flag as _short_flag
from .wrappers import split_options as _options
from .wrappers import strip_wrappers as _strip_wrappers

Inline = Callable[[str, list[str]], None]
"""Takes the code a command runs (``find -exec bash -c CODE``): its program name and arguments."""


def home() -> str:
    """The home directory, normalised (the daemon's, not one the line sets)."""
    return posixpath.normpath(os.path.expanduser("~"))


def normalize_target(path: str) -> str:
    """``$HOME``/``${HOME}``/the real home -> ``~``; slashes collapsed; trailing globs dropped."""
    path = re.sub(r"^\$\{?HOME\}?(?=/|$)", "~", path)
    path = re.sub(r"/{2,}", "/", path)
    real_home = home()
    if real_home != "/" and (path == real_home or path.startswith(real_home + "/")):
        path = "~" + path[len(real_home) :]
    if path.startswith("/"):
        path = posixpath.normpath(path)
        path = "/" + path.lstrip("/")
    changed = True
    while changed:
        changed = False
        for suffix in ("/*", "/.*", "/."):
            if path.endswith(suffix):
                path = path[: -len(suffix)] or "/"
                changed = True
        if len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/") or "/"
            changed = True
    return path


def catastrophic(path: str) -> str | None:
    """The hardline key for deleting ``path`` recursively, or ``None``."""
    target = normalize_target(path)
    if target in ("/", "/*"):
        return "delete_root"
    if target == "~" or re.fullmatch(r"~[A-Za-z_][\w.-]*", target):
        return "delete_home"
    if re.fullmatch(r"/home/[^/]+", target):
        return "delete_home"
    if target in _SYSTEM_DIRS:
        return "delete_system_dir"
    return None


def protected_write(path: str) -> str | None:
    """The finding key for writing to ``path``, or ``None`` when it is an ordinary file."""
    target = normalize_target(path)
    if target.startswith("/dev/"):
        if _BLOCK_DEVICE.match(target):
            return "redirect_block_device"
        if target in _HARMLESS_DEVICES or target.startswith(_HARMLESS_DEVICE_DIRS):
            return None
        return "write_system_path"
    if _PROTECTED_WRITE.match(target) or _HOME_STARTUP.match(target):
        return "write_system_path"
    return None


def check_command(name: str, args: list[str], out: dict[str, None], inline: Inline) -> None:
    """Add the finding keys of one command given as plain words (``name`` without its path).

    ``inline`` is handed the code a command runs in turn (``find -exec bash -c CODE``):
    the walk in ``danger.py`` reads it as a script.
    """
    options, operands = _options(args)
    if name == "rm":
        if "--no-preserve-root" in options:
            out["no_preserve_root"] = None
        if _short_flag(options, "rR", "--recursive"):
            out["recursive_delete"] = None
            for operand in operands:
                key = catastrophic(operand)
                if key:
                    out[key] = None
    elif name.startswith("mkfs") or name == "mke2fs":
        out["format_filesystem"] = None
    elif name in ("mkswap", "wipefs", "shred", "blkdiscard", "sgdisk") or name.startswith("newfs"):
        if any(_BLOCK_DEVICE.match(normalize_target(a)) for a in operands):
            out["wipe_block_device"] = None
    elif name == "dd":
        _check_dd(args, out)
    elif name in ("shutdown", "reboot", "halt", "poweroff") or (
        name in ("init", "telinit") and operands[:1] in (["0"], ["6"])
    ):
        out["shutdown"] = None
    elif name == "systemctl":
        _check_systemctl(operands, out)
    elif name in ("service",) and len(operands) >= 2 and operands[1] == "stop":
        out["service_stop"] = None
    elif name == "chmod":
        _check_chmod(options, operands, out)
    elif name == "chown" or name == "chgrp":
        if _short_flag(options, "R", "--recursive") and any(catastrophic(o) for o in operands):
            out["recursive_chmod_system"] = None
    elif name == "git":
        _check_git(args, out)
    elif name == "kill":
        _check_kill(args, out)
    elif name == "find":
        _check_find(args, out, inline)
    elif name in ("tee",):
        for operand in operands:
            key = protected_write(operand)
            if key:
                out[key] = None
    elif name in ("cp", "mv", "install", "ln", "rsync") and len(operands) >= 2:
        key = protected_write(operands[-1])
        if key:
            out[key] = None
    elif name == "sed" and _short_flag(options, "i", "--in-place"):
        for operand in operands[1:]:
            if protected_write(operand):
                out["write_system_path"] = None
    elif name == "crontab" and _short_flag(options, "r", "--remove"):
        out["crontab_remove"] = None
    elif _deletes_containers(name, operands):
        out["container_delete"] = None


def _deletes_containers(name: str, operands: list[str]) -> bool:
    if name in ("kubectl", "oc"):
        return operands[:1] == ["delete"]
    if name in ("docker", "podman"):
        return operands[:2] in (["system", "prune"], ["volume", "rm"], ["volume", "prune"])
    return False


def _check_dd(args: list[str], out: dict[str, None]) -> None:
    for arg in args:
        if arg.startswith("of="):
            target = normalize_target(arg[3:])
            if _BLOCK_DEVICE.match(target):
                out["dd_block_device"] = None
            elif protected_write(target):
                out["write_system_path"] = None


def _check_systemctl(operands: list[str], out: dict[str, None]) -> None:
    verb = operands[0] if operands else ""
    if verb in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue"):
        out["shutdown"] = None
    elif verb in ("stop", "disable", "mask", "kill", "isolate"):
        out["service_stop"] = None


_WORLD_WRITABLE_SYMBOLIC = re.compile(r"(?:^|,)[ugo]*[ao][ugoa]*[+=][rwxXst]*w")


def _check_chmod(options: list[str], operands: list[str], out: dict[str, None]) -> None:
    if not operands:
        return
    mode, targets = operands[0], operands[1:]
    octal = re.fullmatch(r"[0-7]{3,4}", mode)
    if (octal and int(mode[-1]) & 2) or _WORLD_WRITABLE_SYMBOLIC.search(mode):
        out["world_writable"] = None
    if _short_flag(options, "R", "--recursive") and any(catastrophic(t) for t in targets):
        out["recursive_chmod_system"] = None


_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _check_git(args: list[str], out: dict[str, None]) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    options, operands = _options(rest)
    if sub == "reset" and "--hard" in options:
        out["git_reset_hard"] = None
    elif sub == "clean" and _short_flag(options, "f", "--force"):
        out["git_clean"] = None
    elif sub == "push" and (
        _short_flag(options, "f", "--force", "--mirror") or any(o.startswith("+") for o in operands)
    ):
        out["git_force_push"] = None
    elif sub == "branch" and (
        "-D" in options or (_short_flag(options, "d", "--delete") and "--force" in options)
    ):
        out["git_branch_delete"] = None
    elif (sub in ("checkout", "restore") and "." in operands) or (
        sub == "stash" and operands[:1] in (["drop"], ["clear"])
    ):
        out["git_discard"] = None


def _check_kill(args: list[str], out: dict[str, None]) -> None:
    """``kill [-s SIG | -n NUM | -SIG] [--] PID...``: flag a pid of -1 (every process)."""
    rest = args
    if rest[:1] in (["-s"], ["-n"]):
        rest = rest[2:]
    elif rest[:1] in (["-l"], ["-L"]):
        return
    elif rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[1:]  # the signal: -9, -KILL, and -1 is SIGHUP here
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if "-1" in rest:
        out["kill_all"] = None


def _check_find(args: list[str], out: dict[str, None], inline: Inline) -> None:
    if "-delete" in args:
        out["find_delete"] = None
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            inner = _strip_wrappers(args[i + 1 : j])
            if inner:
                name = posixpath.basename(inner[0])
                check_command(name, inner[1:], out, inline)
                if runs_code(name):
                    inline(name, inner[1:])
            i = j
        i += 1


def runs_code(name: str) -> bool:
    return (
        name in _SHELLS
        or name in ("eval", "su", "watch", "source", ".", "trap")
        or bool(_INTERPRETER.match(name))
    )


def inline_code(name: str, args: Sequence[str]) -> Iterator[int]:
    """Where the code given on the command line is: ``bash -c CODE``, ``eval``, ``trap CODE``."""
    if name == "eval":
        if args:
            yield 0
        return
    if name == "trap":
        if args and not args[0].startswith("-"):
            yield 0
        return
    if name == "watch":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-n", "--interval", "-q", "--equexit") else 1
        if i < len(args):
            yield i
        return
    if name == "su":
        for i, arg in enumerate(args):
            if arg in ("-c", "--command") and i + 1 < len(args):
                yield i + 1
            elif arg.startswith("--command="):
                yield i
        return
    if name not in _SHELLS:
        return
    code_flag = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if arg.startswith("--"):
            i += 1
            continue
        if arg.startswith(("-", "+")) and len(arg) > 1:
            if "c" in arg[1:]:
                code_flag = True
            i += 1
            continue
        if code_flag:
            yield i
        return


def script_operand(name: str, args: Sequence[str]) -> int | None:
    """Where the script file is in ``bash FILE ARGS`` or ``source FILE``, if anywhere."""
    if name in ("source", "."):
        return 0 if args else None
    if name not in _SHELLS or any(a.startswith("-") and "c" in a[1:] for a in args):
        return None
    i = 0
    while i < len(args):
        if args[i] in ("-o", "+o", "-O", "+O"):
            i += 2
        elif args[i] == "--":
            return i + 1 if i + 1 < len(args) else None
        elif args[i].startswith(("-", "+")) and len(args[i]) > 1:
            i += 1
        else:
            return i
    return None


def reads_stdin(name: str, args: Sequence[str]) -> bool:
    """True when a shell or interpreter takes its program from stdin (no script operand)."""
    if name in ("eval", "su", "watch", "trap"):
        return False
    _, operands = _options(list(args))
    if name in ("source", "."):
        return bool(operands) and operands[0] in _STDIN_PATHS
    if any(a in ("-c", "-e", "-E") or (a.startswith("-") and "c" in a[1:]) for a in args):
        return False
    return not operands or operands[0] in _STDIN_PATHS or "-s" in args
