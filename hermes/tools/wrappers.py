"""Reading the words of one simple command: wrappers (sudo, env, timeout, xargs...) and options.

Shared by the approval gate (``danger.py``) and the path guard's reading of a
command line (``guard/commands.py``): both need the command a line really runs
once ``sudo -u x env A=1 timeout 5`` is skipped, and GNU-style options.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

import attrs


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


RESERVED = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time"}
)

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")

# wrapper -> (options that take a value, positional words before the command)
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (_words("-u -g -C -D -h -p -r -t -U -T --user --group --host --prompt"), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "pkexec": (frozenset({"--user"}), 0),
    "run0": (frozenset({"-u", "--user"}), 0),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "nohup": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "time": (frozenset(), 0),
    "coproc": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-t", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "setsid": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "busybox": (frozenset(), 0),
    "toybox": (frozenset(), 0),
    "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u"}), 0),
    "xargs": (
        _words(
            "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines "
            "--max-args --max-procs --max-chars"
        ),
        0,
    ),
}


@attrs.frozen(slots=True)
class Wrapped:
    """Where the command starts after wrappers, and what the wrappers change."""

    start: int | None
    """``None``: nothing runs (``command -v``)."""
    xargs: bool = False
    replace: str | None = None
    """xargs' ``-I`` string."""
    split: int | None = None
    """``env -S STRING``: the index of the string that becomes the command."""
    whole: bool = False
    """xargs ``-0``/``-d``: its input is not split at blanks."""


def wrapper_end(words: Sequence[str]) -> Wrapped:
    """Skip assignments, reserved words and wrappers (sudo, env, timeout...) before the command."""
    i = 0
    xargs = False
    whole = False
    replace: str | None = None
    while i < len(words):
        word = words[i]
        if word in RESERVED or ASSIGNMENT.match(word):
            i += 1
            continue
        name = posixpath.basename(word)
        if name not in WRAPPERS:
            break
        takes_value, positional = WRAPPERS[name]
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            option = words[i]
            if option == "--":
                i += 1
                break
            if name == "command" and option.lstrip("-")[:1] in ("v", "V"):
                return Wrapped(None)  # command -v: a lookup, runs nothing
            if name == "env" and (option == "-S" or option.startswith("--split-string")):
                if "=" in option:
                    return Wrapped(i, split=i)
                return Wrapped(i + 1, split=i + 1)
            if name == "env" and option.startswith("-S"):
                return Wrapped(i, split=i)
            if name == "xargs" and (option in ("-I", "-i") or option.startswith("--replace")):
                replace = "{}"
                if option == "-I" and i + 1 < len(words):
                    replace = words[i + 1]
                elif "=" in option:
                    replace = option.split("=", 1)[1]
            elif name == "xargs" and option.startswith("-I") and len(option) > 2:
                replace = option[2:]
            if name == "xargs" and option.startswith(("-0", "--null", "-d", "--delimiter")):
                whole = True
            i += 2 if option in takes_value else 1
        if name == "env":
            while i < len(words) and ASSIGNMENT.match(words[i]):
                i += 1
        if name == "nice" and i < len(words) and re.fullmatch(r"-?\d+", words[i]):
            i += 1
        if name == "xargs":
            xargs = True
        i += positional
    return Wrapped(i, xargs, replace, whole=whole)


def strip_wrappers(words: list[str]) -> list[str]:
    """The command and its arguments, wrappers removed (``[]`` when nothing runs)."""
    wrapped = wrapper_end(words)
    if wrapped.start is None:
        return []
    if wrapped.split is not None and wrapped.split < len(words):
        value = words[wrapped.split]
        value = value.split("=", 1)[1] if value.startswith("--") else value.removeprefix("-S")
        return strip_wrappers(value.split() + words[wrapped.split + 1 :])
    return words[wrapped.start :]


def split_options(args: list[str]) -> tuple[list[str], list[str]]:
    """GNU-style split: options anywhere before ``--``, operands after it."""
    options: list[str] = []
    operands: list[str] = []
    ended = False
    for arg in args:
        if ended:
            operands.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            operands.append(arg)
    return options, operands


def short_flag(options: Iterable[str], letters: str, *long: str) -> bool:
    for option in options:
        if option.startswith("--"):
            if option.split("=", 1)[0] in long:
                return True
        elif any(ch in option[1:] for ch in letters):
            return True
    return False
