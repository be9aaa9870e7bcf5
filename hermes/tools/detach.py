"""Foreground commands that would outlive their call: ``nohup``, a trailing ``&``, dev servers.

``detaches(command)`` reads the line with the bash grammar (``shell.py``) and
says whether it starts something meant to keep running after the command
returns (seed #148):

- ``nohup``, ``setsid`` or ``disown`` at a command position (under any of the
  wrappers ``wrappers.py`` knows: ``sudo nohup x``, ``env A=1 setsid x``);
- a trailing ``&`` on the line's last statement (``npm run dev &``);
- a known long-lived server or watcher: ``npm``/``pnpm``/``yarn``/``bun``
  ``[run] dev|start|serve|watch``, ``docker compose up`` (without ``-d``),
  ``next dev``, ``vite`` (``dev``, ``serve``, ``preview`` or no subcommand),
  ``nodemon``, ``uvicorn``, ``gunicorn``, ``python -m http.server``; also
  behind ``npx``/``bunx``/``pnpx``. A call that asks only for help or the
  version (``vite --help``) is not one.

The terminal runs such a command in the background instead of the
foreground (where it would be killed when the line returns) and tells the
model so. When the last statement ends in ``&`` that ``&`` is removed, so the
background process is the command itself, not a shell that has already
returned; it is removed only when the gate reads the same findings in the
line without it (``classify``), so what was approved is what runs. A line the
grammar cannot read is never promoted. Quoted text is data: ``echo 'npm run
dev &'`` is not a server.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

import attrs

from .danger import classify
from .shell import parse, syntax_tree
from .shell_words import ENCODING, ERRORS
from .wrappers import split_options, wrapper_end

DETACHERS = frozenset({"nohup", "setsid", "disown"})
"""Programs whose job is to let a command outlive the shell that started it."""
PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
PACKAGE_SCRIPTS = frozenset({"dev", "start", "serve", "watch"})
LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
ALWAYS_SERVERS = frozenset({"nodemon", "uvicorn", "gunicorn"})
VITE_SERVING = frozenset({"dev", "serve", "preview"})
HELP_WORDS = frozenset({"--help", "-h", "--version", "-V", "help"})
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?")


@attrs.frozen(slots=True)
class Detach:
    """Why a foreground command would detach, and the line to run in the background."""

    kind: str
    """``detacher`` (nohup, setsid, disown), ``trailing_ampersand`` or ``server``."""
    what: str
    """What was seen, for the note to the model (``nohup``, ``&``, ``npm run dev``)."""
    command: str
    """The line to run in the background: the command, its trailing ``&`` removed."""


def detaches(command: str) -> Detach | None:
    """How ``command`` would detach from a foreground run, or ``None`` (module docstring)."""
    script = parse(command)
    if script.errors:
        return None
    found: tuple[str, str] | None = None
    for cmd in script.commands:
        if all(w.literal for w in cmd.words):
            found = _long_lived([w.text for w in cmd.words])
            if found is not None:
                break
    stripped = _without_trailing_ampersand(command)
    if found is None and stripped is None:
        return None
    run = stripped if stripped is not None else command
    if found is None:
        return Detach("trailing_ampersand", "&", run)
    return Detach(found[0], found[1], run)


def _long_lived(words: Sequence[str]) -> tuple[str, str] | None:
    """``(kind, what)`` when one simple command detaches or starts a known server."""
    wrapped = wrapper_end(words)
    if wrapped.start is None:
        return None
    for word in words[: wrapped.start]:
        name = posixpath.basename(word)
        if name in DETACHERS:
            return ("detacher", name)
    rest = list(words[wrapped.start :])
    if not rest:
        return None
    name = posixpath.basename(rest[0])
    if name in DETACHERS:  # disown, or one the wrapper reading left as the command
        return ("detacher", name)
    if any(arg in HELP_WORDS for arg in rest[1:]):
        return None
    if name in LAUNCHERS:
        _, operands = split_options(rest[1:])
        if not operands:
            return None
        rest = operands
        name = posixpath.basename(rest[0])
    server = _server(name, rest[1:])
    return ("server", server) if server is not None else None


def _server(name: str, args: list[str]) -> str | None:
    """The server ``name args`` starts, in words for the model, or ``None``."""
    _, operands = split_options(args)
    if name in PACKAGE_RUNNERS:
        script = operands[:1]
        if script in (["run"], ["run-script"]):
            script = operands[1:2]
        if script and script[0] in PACKAGE_SCRIPTS:
            return " ".join([name, *operands[: operands.index(script[0]) + 1]])
        return None
    if name in ("docker", "podman") and operands[:2] == ["compose", "up"]:
        return None if _detached_compose(args) else f"{name} compose up"
    if name in ("docker-compose", "podman-compose") and operands[:1] == ["up"]:
        return None if _detached_compose(args) else f"{name} up"
    if name == "next" and operands[:1] == ["dev"]:
        return "next dev"
    if name == "vite" and (not operands or operands[0] in VITE_SERVING):
        return " ".join(["vite", *operands[:1]])
    if name in ALWAYS_SERVERS:
        return name
    if _PYTHON.fullmatch(name) and _runs_module(args, "http.server"):
        return f"{name} -m http.server"
    return None


def _detached_compose(args: list[str]) -> bool:
    return any(a in ("-d", "--detach") or re.fullmatch(r"-[a-zA-Z]*d[a-zA-Z]*", a) for a in args)


def _runs_module(args: list[str], module: str) -> bool:
    for i, arg in enumerate(args):
        if arg == "-m":
            return args[i + 1 : i + 2] == [module]
        if arg == f"-m{module}":
            return True
        if not arg.startswith("-"):
            return False  # a script: what follows are its own arguments
    return False


def _without_trailing_ampersand(command: str) -> str | None:
    """``command`` without the ``&`` that ends its last statement, or ``None``.

    ``None`` when there is no such ``&``, or when the gate would read the line
    without it differently (the approval was given for the line as written).
    """
    root = syntax_tree(command)
    tokens = [c for c in root.children if c.type != "comment"]
    if not tokens or tokens[-1].type != "&":
        return None
    amp = tokens[-1]
    source = command.encode(ENCODING, ERRORS)
    stripped = (source[: amp.start_byte] + source[amp.end_byte :]).decode(ENCODING, ERRORS)
    if not stripped.strip():
        return None
    if {f.key for f in classify(stripped)} != {f.key for f in classify(command)}:
        return None
    return stripped.rstrip()
