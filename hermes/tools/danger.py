"""Classifying shell commands: the hardline floor, the dangerous list, and what cannot be read.

``classify(command)`` reads the command with the bash grammar (``shell.py``) and
checks **every simple command in the tree**: in pipelines, lists, subshells,
functions, loops and substitutions, in code handed to a shell (``bash -c``,
``eval``, ``trap``, here-documents, literal text piped into ``sh``), under
wrappers (``sudo``, ``env``, ``timeout``, ``xargs``, ``find -exec``...). Rules
match the command that runs, not its spelling: quotes, backslashes and
``$'...'`` are undone, ``/bin/rm`` is ``rm``, and a variable assigned in the
line (``x=rm; $x``), ``${IFS}`` or ``$(echo rm)`` is tried with its value.

It fails closed. A command word that is not literal text (a variable, a
substitution, a glob), code for a shell that is not literal text, code
downloaded or decoded into a shell, a delete or device write whose target is
not literal, and a line the grammar cannot read are findings whose keys are in
``OPAQUE_RULES``: the gate cannot see what would run, so only a person may
allow it, each time (``approval.py``). Quoted data is not a command
(``echo 'rm -rf /'`` is safe), and a variable as an ordinary argument is fine.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Sequence

from .danger_rules import (
    _BLOCK_DEVICE,
    _DECODERS,
    _DEFAULT_IFS,
    _DOWNLOAD_SUBST,
    _DOWNLOADERS,
    _FORK_BOMB,
    _HARMLESS_DEVICE_DIRS,
    _HARMLESS_DEVICES,
    _HOME_STARTUP,
    _HYPOTHESES,
    _INTERPRETER,
    _MAX_CHOICES,
    _MAX_DEPTH,
    _MAX_INLINED,
    _MAX_SCANS,
    _MAX_VALUES,
    _PASSTHROUGH,
    _PROTECTED_WRITE,
    _RAW_BLOCK_REDIRECT,
    _RAW_SEPARATORS,
    _RAW_WINDOW,
    _SHELLS,
    _SQL,
    _SQL_CLIENTS,
    _STDIN_PATHS,
    _SYSTEM_DIRS,
    _WIPERS,
    DANGEROUS_RULES,
    HARDLINE_RULES,
    OPAQUE_RULES,
    THREAD_THRESHOLD,
    Finding,
)
from .shell import Command, Computed, Redirect, Script, Var, Word, parse, printed
from .wrappers import short_flag as _short_flag
from .wrappers import split_options as _options
from .wrappers import strip_wrappers as _strip_wrappers
from .wrappers import wrapper_end as _wrapper_end

__all__ = [
    "DANGEROUS_RULES",
    "HARDLINE_RULES",
    "OPAQUE_RULES",
    "THREAD_THRESHOLD",
    "Finding",
    "classify",
    "is_hardline",
]

# -- classification --------------------------------------------------------------------


def classify(command: str) -> tuple[Finding, ...]:
    """Every hardline or dangerous finding in ``command``, hardline first, no repeats."""
    run = _Run()
    _scan(command, 0, run, None)
    findings = [Finding.of(k) for k in run.out]
    return tuple(sorted(findings, key=lambda f: not f.hardline))


def is_hardline(command: str) -> bool:
    return any(f.hardline for f in classify(command))


class _Run:
    """What one ``classify`` call has found, and which nested code it has already read."""

    def __init__(self) -> None:
        self.out: dict[str, None] = {}
        self.seen: set[tuple[str, int, tuple[str, ...] | None]] = set()
        self.budget = _MAX_SCANS
        self.calls: set[tuple[str, tuple[str, ...], int]] = set()
        self.inlined = 0

    def add(self, key: str) -> None:
        self.out[key] = None


def _scan(text: str, depth: int, run: _Run, positional: tuple[str, ...] | None) -> None:
    """Check ``text`` as a shell script; ``positional``: its ``$1...`` when known."""
    if depth > _MAX_DEPTH:
        run.add("too_deep")
        return
    key = (text, depth, positional)
    if key in run.seen:
        return
    if run.budget <= 0:  # values tried at every level could multiply without end
        run.add("too_deep")
        return
    run.budget -= 1
    run.seen.add(key)
    try:
        script = parse(text)
    except RecursionError:  # a word nested past Python's stack: not read, not trusted
        _raw_floor(text, depth, run.out)
        run.add("unparseable")
        return
    if script.errors:
        _raw_floor(text, depth, run.out)
        run.add("unparseable")
    if "\\\n" in text:
        # bash joins a backslash-newline before reading words (r\<newline>m is rm); the
        # grammar splits there. Read both ways: each only adds findings.
        _scan(text.replace("\\\n", ""), depth, run, positional)
    scope = _Scope(script, depth, run, positional)
    _check_fork_bombs(script, run)
    for redirect in script.redirects:
        _check_redirect(redirect, scope)
    for cmd in script.commands:
        _check_words(list(cmd.words), cmd, scope, frozenset())
    if scope.names & _SQL_CLIENTS and any(p.search(text) for p in _SQL):
        run.add("sql_destructive")


class _Scope:
    """One script being checked: what its variables may hold, and what it runs."""

    def __init__(
        self,
        script: Script,
        depth: int,
        run: _Run,
        positional: tuple[str, ...] | None,
        outer: _Scope | None = None,
    ) -> None:
        self.script = script
        self.depth = depth
        self.run = run
        self.out = run.out
        self.positional = positional
        self.names: set[str] = outer.names if outer else set()
        self.written: dict[str, list[str | None]] = (
            outer.written if outer else _written_files(script)
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

    def bound(self, positional: tuple[str, ...]) -> _Scope:
        """The same script with ``$1...`` bound (a function call)."""
        return _Scope(self.script, self.depth, self.run, positional, self)

    def run_written(self, path: str, args: Sequence[str]) -> None:
        """``path`` is run as a script: if the line itself wrote it, read what it wrote."""
        contents = self.written.get(posixpath.normpath(path))
        if contents is None:
            return
        for text in contents:
            if text is None:
                self.out["dynamic_code"] = None  # written by something the gate cannot read
            else:
                _scan(text, self.depth + 1, self.run, tuple(args))

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
            found.append(_home())
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


def _written_files(script: Script) -> dict[str, list[str | None]]:
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


def _home() -> str:
    return posixpath.normpath(os.path.expanduser("~"))


def _raw_floor(text: str, depth: int, out: dict[str, None]) -> None:
    """The floor for a line the grammar cannot read: every word is tried as a command.

    Conservative on purpose (``echo 'rm -rf /`` with its quote unclosed is refused):
    bash would not run such a line either, so nothing useful is lost.
    """
    if _FORK_BOMB.search(" ".join(text.split())):
        out["fork_bomb"] = None
    for match in _RAW_BLOCK_REDIRECT.finditer(text):
        if _BLOCK_DEVICE.match(_normalize_target(match.group(1))):
            out["redirect_block_device"] = None
    words = [w.strip("\"'\\$") for w in _RAW_SEPARATORS.split(text)]
    words = [w for w in words if w]
    for i, word in enumerate(words):
        found: dict[str, None] = {}
        _check_command(posixpath.basename(word), words[i + 1 : i + 1 + _RAW_WINDOW], depth, found)
        for key in found:
            if key in HARDLINE_RULES:
                out[key] = None


def _check_fork_bombs(script: Script, run: _Run) -> None:
    """A function that calls itself in the background or piped into itself."""
    for name, body in script.functions.items():
        calls = [c for c in body if _calls(c, name)]
        if any(
            c.background or any(u is not None and _calls(u, name) for u in c.upstream)
            for c in calls
        ):
            run.add("fork_bomb")


def _calls(cmd: Command, name: str) -> bool:
    return bool(cmd.words) and cmd.words[0].literal and cmd.words[0].text == name


_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def _check_redirect(redirect: Redirect, scope: _Scope) -> None:
    writes = redirect.op in _OUTPUT_REDIRECTS
    if not writes and not (redirect.op == ">&" and not redirect.target.text.isdigit()):
        return
    for alt in scope.options(redirect.target):
        key = _protected_write(" ".join(alt))
        if key:
            scope.out[key] = None


# -- one simple command ----------------------------------------------------------------


def _check_words(
    words: list[Word], cmd: Command | None, scope: _Scope, inlining: frozenset[str]
) -> None:
    """Check one simple command given as words: what it is, and what it can run."""
    wrapped = _wrapper_end([w.text for w in words])
    if wrapped.start is None or wrapped.start >= len(words):
        return
    if wrapped.split is not None:
        source = words[wrapped.split]
        if not source.literal:
            scope.out["dynamic_command"] = None
        text = source.text
        text = text.split("=", 1)[1] if text.startswith("--") else text.removeprefix("-S")
        words = [Word.of(t) for t in text.split()] + words[wrapped.split + 1 :]
        _check_words(words, cmd, scope, inlining)
        return
    words = words[wrapped.start :]
    if wrapped.xargs:
        words = _feed_xargs(words, wrapped.replace, cmd, whole=wrapped.whole)
    head = words[0]
    for alternative in scope.expand(words):
        _check_strings(alternative, scope)
    if not head.literal:
        scope.out["dynamic_command"] = None
        _hypotheses([w.text for w in words[1:]], scope)
        return
    name = posixpath.basename(head.text)
    args = words[1:]
    _check_dynamic_target(name, args, scope)
    texts = [w.text for w in args]
    if "/" in head.text:
        scope.run_written(head.text, texts)  # ./x.sh
    script = _script_operand(name, texts)
    if script is not None:
        scope.run_written(texts[script], texts[script + 1 :])  # bash x.sh, source x.sh
    if (name == "shopt" and "expand_aliases" in texts) or (name == "hash" and "-p" in texts):
        scope.out["dynamic_command"] = None  # words would no longer name what they say
    if _runs_code(name):
        _check_code_words(name, args, cmd, scope)
    if name == "find":
        for segment in _exec_segments(args):
            _check_words(segment, None, scope, inlining)
    body = scope.script.functions.get(name)
    if body and name not in inlining:
        call = (name, tuple(texts), id(scope.script))
        if call in scope.run.calls:
            return
        scope.run.calls.add(call)
        scope.run.inlined += len(body)
        if scope.run.inlined > _MAX_INLINED:  # each call would re-read every body
            scope.out["too_deep"] = None
            return
        inner = scope.bound(tuple(texts))
        for called in body:
            _check_words(list(called.words), called, inner, inlining | {name})


def _feed_xargs(
    words: list[Word], replace: str | None, cmd: Command | None, *, whole: bool
) -> list[Word]:
    """xargs runs its command with words read from stdin: they are not literal."""
    fed = _upstream_text(cmd)
    if replace is None:
        return [*words, Word((Computed("$STDIN", whole, fed),), "$STDIN")]
    out: list[Word] = []
    for word in words:
        if replace in word.text:
            value = word.text.replace(replace, fed) if fed is not None else None
            out.append(Word((Computed(word.text, whole, value),), word.source))
        else:
            out.append(word)
    return out


def _upstream_text(cmd: Command | None) -> str | None:
    """The text the nearest pipeline stage prints, when it is echo/printf of literals."""
    if cmd is None or not cmd.upstream or cmd.upstream[-1] is None:
        return None
    producer = cmd.upstream[-1]
    if not all(w.literal for w in producer.words):
        return None
    return printed(_strip_wrappers([w.text for w in producer.words]))


def _hypotheses(args: list[str], scope: _Scope) -> None:
    """A command word the gate cannot read, tried as rm, dd, wipefs...: the floor's findings."""
    for name in _HYPOTHESES:
        found: dict[str, None] = {}
        _check_command(name, args, scope.depth, found)
        for key in found:
            if key in HARDLINE_RULES:
                scope.out[key] = None


def _check_dynamic_target(name: str, args: list[Word], scope: _Scope) -> None:
    """A delete or device write the floor cares about, with a target that is not literal."""
    unknown = [w for w in args if not scope.known(w)]
    if not unknown:
        return
    texts = [w.text for w in args]
    if name == "rm":
        options, operands = _options(texts)
        recursive = _short_flag(options, "rR", "--recursive")
        if recursive or any(_catastrophic(t) for t in operands):
            scope.out["dynamic_target"] = None
    elif name == "dd":
        if any(w.text.startswith("of=") for w in unknown):
            scope.out["dynamic_target"] = None
    elif name in _WIPERS or name.startswith("newfs"):
        scope.out["dynamic_target"] = None


def _exec_segments(args: list[Word]) -> Iterator[list[Word]]:
    i = 0
    while i < len(args):
        if args[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                yield args[i + 1 : j]
            i = j
        i += 1


def _check_strings(words: list[str], scope: _Scope) -> None:
    """Check one command given as plain words (as written, or with values substituted)."""
    words = _strip_wrappers(words)
    if not words:
        return
    name = posixpath.basename(words[0])
    scope.names.add(name)
    args = words[1:]
    _check_command(name, args, scope.depth, scope.out)
    if _runs_code(name):
        _check_inline(name, args, scope.depth, scope.run)


def _check_inline(name: str, args: list[str], depth: int, run: _Run) -> None:
    """Code given on the command line (``bash -c CODE``, ``eval``...), checked as a script."""
    for index in _inline_code(name, args):
        payload = args[index]
        if name == "su" and payload.startswith("--command="):
            payload = payload.split("=", 1)[1]
        elif name == "eval":
            payload = " ".join(args)
        elif name == "watch":
            payload = " ".join(args[index:])
        if _DOWNLOAD_SUBST.search(payload):
            run.add("pipe_to_shell")
        if name in _SHELLS or name in ("eval", "su", "watch", "trap"):
            positional = tuple(args[index + 2 :]) if name in _SHELLS else None
            _scan(payload, depth + 1, run, positional)
    if any(_DOWNLOAD_SUBST.search(a) for a in args) and (
        name in _SHELLS or name in ("source", ".") or _INTERPRETER.match(name)
    ):
        run.add("pipe_to_shell")  # bash <(curl ...), source <(wget ...)


def _check_code_words(name: str, args: list[Word], cmd: Command | None, scope: _Scope) -> None:
    """A shell, interpreter, ``eval`` or ``trap``: is the code it gets literal, and from where."""
    texts = [w.text for w in args]
    shell_like = name in _SHELLS or name in ("source", ".")
    for index in _inline_code(name, texts):
        code = args[index:] if name in ("eval", "watch") else [args[index]]
        if not all(w.literal for w in code):
            scope.out["dynamic_code"] = None
    if shell_like:
        for word in args:
            for part in word.parts:
                if (
                    isinstance(part, Computed)
                    and part.source.startswith("<(")
                    and not _DOWNLOAD_SUBST.search(part.source)
                ):
                    scope.out["dynamic_code"] = None  # bash <(generated code)
    if cmd is None or not _reads_stdin(name, texts):
        return
    depth = scope.depth + 1
    if name in _SHELLS or name in ("source", "."):
        for heredoc in cmd.heredocs:
            _scan(heredoc.body, depth, scope.run, None)
        for redirect in cmd.redirects:
            if redirect.op == "<<<":
                if not redirect.target.literal:
                    scope.out["dynamic_code"] = None
                for alt in scope.options(redirect.target):
                    _scan(" ".join(alt), depth, scope.run, None)
    shell = name in _SHELLS or name in ("source", ".")
    found = _check_upstream(cmd, scope, shell=shell)
    if shell and not found and not _has_input(cmd):
        # Code from the terminal's own stdin: empty in the foreground, but what the
        # process tool writes to a background process. The gate never sees it.
        scope.out["dynamic_code"] = None


_INPUTS = frozenset({"<", "<&", "<>", "<<<"})


def _has_input(cmd: Command) -> bool:
    """Its stdin is a here-document, a here-string or a file named on the line."""
    return bool(cmd.heredocs) or any(r.op in _INPUTS for r in cmd.redirects)


def _check_upstream(cmd: Command, scope: _Scope, *, shell: bool) -> bool:
    """What a pipeline feeds a shell or interpreter: literal text is read, the rest is not.

    True when the line shows where that input comes from; False when the
    pipeline starts with something that passes on its own stdin (or is empty).
    """
    for producer in reversed(cmd.upstream):
        if producer is None:
            if shell:
                scope.out["dynamic_code"] = None
            return True
        wrapped = _wrapper_end([w.text for w in producer.words])
        words = list(producer.words[wrapped.start :]) if wrapped.start is not None else []
        if not words:
            return True
        if not words[0].literal:
            if shell:
                scope.out["dynamic_code"] = None
            return True
        source = posixpath.basename(words[0].text)
        if source in _DOWNLOADERS or source in _DECODERS:
            scope.out["pipe_to_shell"] = None
            return True
        if not shell:
            continue  # an interpreter: only downloads and decodes count
        if source in ("echo", "printf"):
            if not all(w.literal for w in words):
                scope.out["dynamic_code"] = None
            for alt in scope.expand(words):
                text = printed(alt)
                if text is not None:
                    _scan(text, scope.depth + 1, scope.run, None)
            return True
        if source in _PASSTHROUGH:
            for heredoc in producer.heredocs:
                _scan(heredoc.body, scope.depth + 1, scope.run, None)
            for redirect in producer.redirects:
                if redirect.op == "<<<":
                    _scan(redirect.target.text, scope.depth + 1, scope.run, None)
            _, operands = _options([w.text for w in words[1:]])
            if (source == "cat" and operands) or _has_input(producer):
                return True  # a file: a script the gate does not follow, like ``bash FILE``
            continue
        scope.out["dynamic_code"] = None  # generated or transformed text run as code
        return True
    return False


def _normalize_target(path: str) -> str:
    """``$HOME``/``${HOME}``/the real home -> ``~``; slashes collapsed; trailing globs dropped."""
    path = re.sub(r"^\$\{?HOME\}?(?=/|$)", "~", path)
    path = re.sub(r"/{2,}", "/", path)
    home = _home()
    if home != "/" and (path == home or path.startswith(home + "/")):
        path = "~" + path[len(home) :]
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


def _catastrophic(path: str) -> str | None:
    """The hardline key for deleting ``path`` recursively, or ``None``."""
    target = _normalize_target(path)
    if target in ("/", "/*"):
        return "delete_root"
    if target == "~" or re.fullmatch(r"~[A-Za-z_][\w.-]*", target):
        return "delete_home"
    if re.fullmatch(r"/home/[^/]+", target):
        return "delete_home"
    if target in _SYSTEM_DIRS:
        return "delete_system_dir"
    return None


def _protected_write(path: str) -> str | None:
    """The finding key for writing to ``path``, or ``None`` when it is an ordinary file."""
    target = _normalize_target(path)
    if target.startswith("/dev/"):
        if _BLOCK_DEVICE.match(target):
            return "redirect_block_device"
        if target in _HARMLESS_DEVICES or target.startswith(_HARMLESS_DEVICE_DIRS):
            return None
        return "write_system_path"
    if _PROTECTED_WRITE.match(target) or _HOME_STARTUP.match(target):
        return "write_system_path"
    return None


def _check_command(name: str, args: list[str], depth: int, out: dict[str, None]) -> None:
    options, operands = _options(args)
    if name == "rm":
        if "--no-preserve-root" in options:
            out["no_preserve_root"] = None
        if _short_flag(options, "rR", "--recursive"):
            out["recursive_delete"] = None
            for operand in operands:
                key = _catastrophic(operand)
                if key:
                    out[key] = None
    elif name.startswith("mkfs") or name == "mke2fs":
        out["format_filesystem"] = None
    elif name in ("mkswap", "wipefs", "shred", "blkdiscard", "sgdisk") or name.startswith("newfs"):
        if any(_BLOCK_DEVICE.match(_normalize_target(a)) for a in operands):
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
        if _short_flag(options, "R", "--recursive") and any(_catastrophic(o) for o in operands):
            out["recursive_chmod_system"] = None
    elif name == "git":
        _check_git(args, out)
    elif name == "kill":
        _check_kill(args, out)
    elif name == "find":
        _check_find(args, depth, out)
    elif name in ("tee",):
        for operand in operands:
            key = _protected_write(operand)
            if key:
                out[key] = None
    elif name in ("cp", "mv", "install", "ln", "rsync") and len(operands) >= 2:
        key = _protected_write(operands[-1])
        if key:
            out[key] = None
    elif name == "sed" and _short_flag(options, "i", "--in-place"):
        for operand in operands[1:]:
            if _protected_write(operand):
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
            target = _normalize_target(arg[3:])
            if _BLOCK_DEVICE.match(target):
                out["dd_block_device"] = None
            elif _protected_write(target):
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
    if _short_flag(options, "R", "--recursive") and any(_catastrophic(t) for t in targets):
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


def _check_find(args: list[str], depth: int, out: dict[str, None]) -> None:
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
                _check_command(name, inner[1:], depth, out)
                if _runs_code(name):
                    run = _Run()
                    _check_inline(name, inner[1:], depth, run)
                    out.update(run.out)
            i = j
        i += 1


def _runs_code(name: str) -> bool:
    return (
        name in _SHELLS
        or name in ("eval", "su", "watch", "source", ".", "trap")
        or bool(_INTERPRETER.match(name))
    )


def _inline_code(name: str, args: Sequence[str]) -> Iterator[int]:
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


def _script_operand(name: str, args: Sequence[str]) -> int | None:
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


def _reads_stdin(name: str, args: Sequence[str]) -> bool:
    """True when a shell or interpreter takes its program from stdin (no script operand)."""
    if name in ("eval", "su", "watch", "trap"):
        return False
    _, operands = _options(list(args))
    if name in ("source", "."):
        return bool(operands) and operands[0] in _STDIN_PATHS
    if any(a in ("-c", "-e", "-E") or (a.startswith("-") and "c" in a[1:]) for a in args):
        return False
    return not operands or operands[0] in _STDIN_PATHS or "-s" in args
