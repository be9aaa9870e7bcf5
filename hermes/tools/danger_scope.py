"""One script as the approval gate walks it: what its variables may hold, and what it wrote.

``Scope`` answers, for a parsed line (``shell.py``), which values a variable
may take (``x=rm; $x`` -> ``rm``), which word lists a command may run as once
they are substituted, and which files the line itself writes with literal
text (``echo CODE > x.sh; bash x.sh``). ``Run`` is what one ``classify`` call
has found so far. The walk that uses them is ``danger.py``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from .danger_commands import home
from .danger_rules import _DEFAULT_IFS, _MAX_CHOICES, _MAX_SCANS, _MAX_VALUES
from .shell import Script, Var, Word, printed
from .wrappers import split_options as _options
from .wrappers import strip_wrappers as _strip_wrappers


class Run:
    """What one ``classify`` call has found, and which nested code it has already read."""

    def __init__(self) -> None:
        self.out: dict[str, None] = {}
        self.seen: set[tuple[str, int, tuple[str, ...] | None]] = set()
        self.budget = _MAX_SCANS
        self.calls: set[tuple[str, tuple[str, ...], int]] = set()
        self.inlined = 0

    def add(self, key: str) -> None:
        self.out[key] = None


class Scope:
    """One script being checked: what its variables may hold, and what it runs."""

    def __init__(
        self,
        script: Script,
        depth: int,
        run: Run,
        positional: tuple[str, ...] | None,
        outer: Scope | None = None,
    ) -> None:
        self.script = script
        self.depth = depth
        self.run = run
        self.out = run.out
        self.positional = positional
        self.names: set[str] = outer.names if outer else set()
        self.written: dict[str, list[str | None]] = (
            outer.written if outer else written_files(script)
        )
        self._values: dict[str, tuple[str, ...]] = {}
        self._assigned: frozenset[str]
        self.ifs: str
        if outer is not None:
            self._assigned, self.ifs = outer._assigned, outer.ifs
            return
        self._assigned = frozenset(a.name for a in script.assignments)
        ifs = self.values("IFS") if "IFS" in self._assigned else ()
        self.ifs = "".join(ifs) or _DEFAULT_IFS

    def bound(self, positional: tuple[str, ...]) -> Scope:
        """The same script with ``$1...`` bound (a function call)."""
        return Scope(self.script, self.depth, self.run, positional, self)

    def known(self, word: Word) -> bool:
        """Literal, or only ``$HOME`` (set by the daemon, not by the line) besides literal text."""
        return all(
            isinstance(p, str)
            or (isinstance(p, Var) and p.name == "HOME" and "HOME" not in self._assigned)
            for p in word.parts
        )

    def values(self, name: str) -> tuple[str, ...]:
        """Values ``name`` may hold, as far as the line tells (it may hold others too)."""
        if self.positional is not None and (name in ("@", "*") or name.isdigit()):
            if name in ("@", "*"):
                return ("\0".join(self.positional),)
            index = int(name)
            if index == 0:
                return ("bash",)
            return (self.positional[index - 1],) if index <= len(self.positional) else ("",)
        if name in self._values:
            return self._values[name]
        self._values[name] = ()  # a self-reference (x=$x) adds nothing
        found: list[str] = []
        for assignment in self.script.assignments:
            if assignment.name != name or assignment.value is None:
                continue
            if assignment.value.literal:
                found.append(assignment.value.text)
            else:
                found.extend(" ".join(alt) for alt in self.options(assignment.value)[1:])
        if not found and name == "HOME":
            found.append(home())
        if not found and name == "IFS":
            found.append(_DEFAULT_IFS)
        result = tuple(dict.fromkeys(found))[:_MAX_VALUES]
        self._values[name] = result
        return result

    def options(self, word: Word) -> list[list[str]]:
        """The words ``word`` may become: first as written, then with values substituted."""
        if all(isinstance(p, str) for p in word.parts):
            return [[word.text]]
        combos: list[str] = [""]
        for part in word.parts:
            choices: list[str]
            if isinstance(part, str):
                choices = [part]
            else:
                values: Sequence[str] = ()
                if isinstance(part, Var):
                    values = self.values(part.name)
                elif part.output is not None:
                    values = (part.output,)
                shown = "$" + part.name if isinstance(part, Var) else part.source
                split = not part.quoted or (isinstance(part, Var) and part.name == "@")
                choices = [self._split(v) if split else v for v in values] or [shown]
            combos = [c + choice for c in combos for choice in choices][:_MAX_CHOICES]
        out = [[word.text]]
        for combo in combos:
            fields = [f for f in combo.split("\0") if f] if "\0" in combo else [combo]
            if fields not in out:
                out.append(fields)
        return out

    def _split(self, value: str) -> str:
        """Mark where bash would split an unquoted expansion (at IFS characters) with NUL."""
        return "".join("\0" if c in self.ifs else c for c in value) or "\0"

    def expand(self, words: Sequence[Word]) -> list[list[str]]:
        """Word lists the command may run as: as written first, then with values.

        Linear in the words: every varied word takes its first value, then each
        in turn takes its others, up to ``_MAX_CHOICES`` lists.
        """
        display = [w.text for w in words]
        varied: list[tuple[int, list[list[str]]]] = []
        for i, word in enumerate(words):
            if all(isinstance(p, str) for p in word.parts):
                continue
            options = self.options(word)
            if len(options) > 1:
                varied.append((i, options))
        if not varied:
            return [display]
        first = {i: options[1] for i, options in varied}
        picks = [first]
        for i, options in varied:
            for alt in options[2:]:
                if len(picks) >= _MAX_CHOICES:
                    break
                picks.append({**first, i: alt})
        out = [display]
        for pick in picks:
            candidate: list[str] = []
            for i, text in enumerate(display):
                if i in pick:
                    candidate.extend(pick[i])
                else:
                    candidate.append(text)
            if candidate not in out:
                out.append(candidate)
        return out


_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})


def written_files(script: Script) -> dict[str, list[str | None]]:
    """Files the line writes, with what it writes when that is literal text (else ``None``).

    ``echo 'rm -rf /' > x.sh; bash x.sh`` runs what it wrote: that is read like
    ``bash -c``. A script that was already there is not followed.
    """
    written: dict[str, list[str | None]] = {}
    for cmd in script.commands:
        targets = [r.target.text for r in cmd.redirects if r.op in _WRITES and r.target.literal]
        words = [w.text for w in cmd.words] if all(w.literal for w in cmd.words) else []
        words = _strip_wrappers(words)
        name = posixpath.basename(words[0]) if words else ""
        if name == "tee":
            targets += [t for t in _options(words[1:])[1]]
        if not targets:
            continue
        text: str | None = None
        if name in ("echo", "printf"):
            text = printed(words)
        elif name in ("cat", "tee") and (cmd.heredocs or any(r.op == "<<<" for r in cmd.redirects)):
            text = "\n".join(
                [h.body for h in cmd.heredocs]
                + [r.target.text for r in cmd.redirects if r.op == "<<<" and r.target.literal]
            )
        for target in targets:
            written.setdefault(posixpath.normpath(target), []).append(text)
    return written
