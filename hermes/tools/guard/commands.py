"""What a terminal command line writes, deletes or kills, judged by the path policy.

The bash grammar (``shell.py``) gives every simple command and redirection in
the line (in pipelines, lists, subshells, substitutions...); literal code handed
to ``bash -c``/``sh -c``/``eval`` is read the same way. From that:

- **writes**: output redirections (``>``, ``>>``, ``&>``...), ``tee``, the target
  of ``cp``/``mv``/``install``/``ln``/``rsync``, ``sed -i``, ``dd of=``,
  ``truncate``: checked as a terminal write (credentials, the daemon's state,
  its interpreter and instruction files; system paths are left to the
  dangerous-command gate, which asks);
- **deletes**: ``rm``, ``rmdir``, ``unlink``, ``shred``, the sources of ``mv``,
  ``find PATH -delete``: nothing holding or under the interpreter, the
  virtual environment, the daemon's state or a credential store (#90);
- **the daemon itself** (#114): ``kill`` of its pid (or ``$PPID``, which is it),
  ``pkill``/``killall``/``pgrep ... | kill`` patterns that match it,
  ``systemctl stop hermes...``, ``hermes daemon stop``.

Only literal words count (``~`` and ``$HOME`` expanded; relative paths against
the command's working directory); ``cd`` is not followed. The gate's own
reading (``danger.py``) still applies on top.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import attrs

from ..approval import ApprovalDecision
from ..danger import Finding
from ..shell import Command, Computed, Var, Word, parse
from ..wrappers import short_flag, split_options, strip_wrappers
from .policy import Action, PathPolicy, Ruling

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync"})
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
_MAX_DEPTH = 3
GUARD_PREFIX = "path_"
"""Keys of the findings the path guard adds to the approval gate."""


@attrs.frozen(slots=True)
class Hit:
    """A ruling about one thing the command does; ``why`` is a whole clause for the model."""

    ruling: Ruling
    why: str


@attrs.frozen(slots=True)
class Daemon:
    """How the daemon this code runs in can be named: pid, group, name, command line."""

    pid: int
    pgid: int
    name: str
    cmdline: str

    @classmethod
    @cache
    def current(cls) -> Daemon:
        name = cmdline = ""
        try:
            with open("/proc/self/comm") as f:
                name = f.read().strip()
            with open("/proc/self/cmdline", "rb") as g:
                cmdline = g.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            pass
        return cls(os.getpid(), os.getpgid(0), name, cmdline)


def command_hits(
    command: str, workdir: Path, policy: PathPolicy, daemon: Daemon | None = None
) -> list[Hit]:
    """Every non-allowed ruling for what ``command`` writes, deletes or kills (blocking)."""
    reader = _Reader(workdir, policy, daemon or Daemon.current(), policy.home)
    reader.read(command, 0)
    return list({(h.ruling.key, h.why): h for h in reader.hits}.values())


class _Reader:
    def __init__(self, workdir: Path, policy: PathPolicy, daemon: Daemon, home: str) -> None:
        self.workdir = str(workdir)
        self.policy = policy
        self.daemon = daemon
        self.home = home
        self.hits: list[Hit] = []

    def read(self, text: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        try:
            script = parse(text)
        except RecursionError:
            return
        for redirect in script.redirects:
            if redirect.op in _WRITE_OPS:
                self.write(self.path(redirect.target))
        kills = False
        finders: list[tuple[str, list[str]]] = []
        for cmd in script.commands:
            words = strip_wrappers(self.words(cmd))
            if not words or "" in words[:1]:
                continue
            name = posixpath.basename(words[0])
            args = words[1:]
            if name in ("kill", "pkill", "killall"):
                kills = True
            if name in ("pgrep", "pidof"):
                finders.append((name, args))
            self.command(name, args, cmd, depth)
        if kills:
            for name, args in finders:
                self.kill_by_pattern(name, args, via=f"{name} ... | kill")

    # -- words ----------------------------------------------------------------------------

    def words(self, cmd: Command) -> list[str]:
        """The command's words; a word that is not literal becomes ``""`` (unknown)."""
        return [self.literal(w) for w in cmd.words]

    def literal(self, word: Word) -> str:
        out: list[str] = []
        for part in word.parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Var) and part.name == "HOME":
                out.append(self.home)
            elif isinstance(part, Var) and part.name == "PPID":
                out.append(str(self.daemon.pid))  # bash's parent is the daemon
            elif isinstance(part, Computed) and part.output is not None:
                out.append(part.output)
            else:
                return ""
        if word.pattern:
            return ""
        text = "".join(out)
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        return text

    def path(self, word: Word) -> str:
        text = self.literal(word)
        if not text:
            return ""
        return text if text.startswith("/") else posixpath.join(self.workdir, text)

    def resolve(self, text: str) -> str:
        if not text:
            return ""
        return text if text.startswith("/") else posixpath.join(self.workdir, text)

    # -- what one command does -------------------------------------------------------------

    def command(self, name: str, args: list[str], cmd: Command, depth: int) -> None:
        options, operands = split_options(args)
        if name == "tee":
            for operand in operands:
                self.write(self.resolve(operand))
        elif name in _COPIERS and len(operands) >= 2:
            dest = self.resolve(operands[-1])
            self.write(dest)
            if os.path.isdir(dest):
                for source in operands[:-1]:
                    self.write(posixpath.join(dest, posixpath.basename(source.rstrip("/"))))
            if name == "mv":
                for source in operands[:-1]:
                    self.delete(self.resolve(source))
        elif name == "sed" and short_flag(options, "i", "--in-place"):
            scripted = any(o in ("-e", "-f") or o.startswith("--expression") for o in options)
            for operand in operands if scripted else operands[1:]:
                self.write(self.resolve(operand))
        elif name == "dd":
            for arg in args:
                if arg.startswith("of="):
                    self.write(self.resolve(arg[3:]))
        elif name == "truncate":
            for operand in operands:
                self.write(self.resolve(operand))
        elif name in _DELETERS:
            for operand in operands:
                self.delete(self.resolve(operand))
        elif name == "find" and "-delete" in args:
            for root in _find_roots(args):
                self.delete(self.resolve(root))
        elif name in ("kill", "pkill", "killall"):
            self.kill(name, args)
        elif name == "systemctl":
            self.systemctl(operands)
        elif name == "hermes":
            self.hermes(operands)
        elif name.startswith("python") and args[:2] == ["-m", "hermes"]:
            self.hermes(args[2:])
        if name in _SHELLS or name == "eval":
            for code in _inline_code(name, args):
                self.read(code, depth + 1)

    def write(self, path: str) -> None:
        if not path:
            return
        ruling = self.policy.check_terminal_write(path)
        if not ruling.allowed:
            self.hits.append(Hit(ruling, f"it writes {path}, which is {ruling.reason}"))

    def delete(self, path: str) -> None:
        if not path:
            return
        ruling = self.policy.check_delete(path)
        if not ruling.allowed:
            self.hits.append(Hit(ruling, f"it deletes or moves {path}, which is {ruling.reason}"))

    # -- the daemon itself -----------------------------------------------------------------

    def refuse_self(self, how: str) -> None:
        ruling = Ruling(
            Action.REFUSE,
            "daemon_self",
            "the Hermes daemon this agent runs in",
            "The agent may not stop, restart or kill its own daemon. If it must restart (a "
            "config change, an upgrade), tell the user to run `hermes daemon stop` themselves.",
            "",
        )
        self.hits.append(
            Hit(
                ruling,
                f"it would stop the Hermes daemon this agent runs in (pid "
                f"{self.daemon.pid}): {how}",
            )
        )

    def kill(self, name: str, args: list[str]) -> None:
        if name == "kill":
            group = self.daemon.pgid
            for arg in args:
                if arg.isdigit() and int(arg) == self.daemon.pid:
                    self.refuse_self(f"kill {arg}")
                elif arg == f"-{group}" and group > 64:  # not a signal number
                    self.refuse_self(f"kill {arg} (its process group)")
            return
        self.kill_by_pattern(name, args, via=name)

    def kill_by_pattern(self, name: str, args: list[str], *, via: str) -> None:
        full = any(a in ("-f", "--full") for a in args)
        takes_value = {"-s", "--signal", "-u", "-U", "-g", "-G", "-P", "-t", "-n", "--ns"}
        patterns: list[str] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
                continue
            if arg in takes_value:
                skip = True
            elif not arg.startswith("-"):
                patterns.append(arg)
        for pattern in patterns:
            if name in ("killall", "pidof"):
                hit = pattern in (self.daemon.name, posixpath.basename(_first(self.daemon)))
            else:
                target = self.daemon.cmdline if full else self.daemon.name
                try:
                    hit = bool(re.search(pattern, target))
                except re.error:
                    hit = False
            if hit:
                self.refuse_self(f"{via} {pattern!r} matches it")

    def systemctl(self, operands: list[str]) -> None:
        verbs = {"stop", "restart", "kill", "disable", "mask", "try-restart", "reload-or-restart"}
        if operands[:1] and operands[0] in verbs:
            for unit in operands[1:]:
                if "hermes" in unit.lower():
                    self.refuse_self(f"systemctl {operands[0]} {unit}")

    def hermes(self, operands: list[str]) -> None:
        if operands[:2] == ["daemon", "stop"]:
            self.refuse_self("hermes daemon stop")


def guarded_refusal(hits: list[Hit]) -> str:
    """The terminal's answer when the path guard refuses a command."""
    whys = "; ".join(h.why for h in hits)
    advice = " ".join(dict.fromkeys(h.ruling.advice for h in hits))
    return (
        f"Command NOT run: {whys}. Nothing was executed. This is refused whatever the "
        f"approval settings; do not retry it or a variant of it. {advice}"
    )


def hit_finding(hit: Hit) -> Finding:
    """The approval gate's finding for a hit: a refusal is hardline, a person's is opaque."""
    return Finding(
        f"{GUARD_PREFIX}{hit.ruling.key}",
        hit.why.removeprefix("it "),
        hardline=hit.ruling.action is Action.REFUSE,
        opaque=hit.ruling.action is Action.PERSON,
    )


def floor(decision: ApprovalDecision) -> bool:
    """True when the command hits the gate's own hardline floor (not only the path guard)."""
    return any(f.hardline and not f.key.startswith(GUARD_PREFIX) for f in decision.findings)


def _first(daemon: Daemon) -> str:
    return daemon.cmdline.split(" ", 1)[0]


def _find_roots(args: list[str]) -> Iterator[str]:
    for arg in args:
        if arg.startswith("-") or arg in ("!", "(", ")"):
            return
        yield arg


def _inline_code(name: str, args: list[str]) -> Iterator[str]:
    if name == "eval":
        if all(args):
            yield " ".join(args)
        return
    for i, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            if i + 1 < len(args) and args[i + 1]:
                yield args[i + 1]
            return
        if not arg.startswith("-"):
            return
