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

import posixpath
from collections.abc import Iterator, Sequence

from .danger_commands import catastrophic as _catastrophic
from .danger_commands import check_command
from .danger_commands import inline_code as _inline_code
from .danger_commands import normalize_target as _normalize_target
from .danger_commands import protected_write as _protected_write
from .danger_commands import reads_stdin as _reads_stdin
from .danger_commands import runs_code as _runs_code
from .danger_commands import script_operand as _script_operand
from .danger_rules import (
    _BLOCK_DEVICE,
    _DECODERS,
    _DOWNLOAD_SUBST,
    _DOWNLOADERS,
    _FORK_BOMB,
    _HYPOTHESES,
    _INTERPRETER,
    _MAX_DEPTH,
    _MAX_INLINED,
    _PASSTHROUGH,
    _RAW_BLOCK_REDIRECT,
    _RAW_SEPARATORS,
    _RAW_WINDOW,
    _SHELLS,
    _SQL,
    _SQL_CLIENTS,
    _WIPERS,
    DANGEROUS_RULES,
    HARDLINE_RULES,
    OPAQUE_RULES,
    THREAD_THRESHOLD,
    Finding,
)
from .danger_scope import Run, Scope
from .shell import Command, Computed, Redirect, Script, Word, parse, printed
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
    run = Run()
    _scan(command, 0, run, None)
    findings = [Finding.of(k) for k in run.out]
    return tuple(sorted(findings, key=lambda f: not f.hardline))


def is_hardline(command: str) -> bool:
    return any(f.hardline for f in classify(command))


def _scan(text: str, depth: int, run: Run, positional: tuple[str, ...] | None) -> None:
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
    scope = Scope(script, depth, run, positional)
    _check_fork_bombs(script, run)
    for redirect in script.redirects:
        _check_redirect(redirect, scope)
    for cmd in script.commands:
        _check_words(list(cmd.words), cmd, scope, frozenset())
    if scope.names & _SQL_CLIENTS and any(p.search(text) for p in _SQL):
        run.add("sql_destructive")


def _run_written(scope: Scope, path: str, args: Sequence[str]) -> None:
    """``path`` is run as a script: if the line itself wrote it, read what it wrote."""
    contents = scope.written.get(posixpath.normpath(path))
    if contents is None:
        return
    for text in contents:
        if text is None:
            scope.out["dynamic_code"] = None  # written by something the gate cannot read
        else:
            _scan(text, scope.depth + 1, scope.run, tuple(args))


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


def _check_fork_bombs(script: Script, run: Run) -> None:
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


def _check_redirect(redirect: Redirect, scope: Scope) -> None:
    writes = redirect.op in _OUTPUT_REDIRECTS
    if not writes and not (redirect.op == ">&" and not redirect.target.text.isdigit()):
        return
    for alt in scope.options(redirect.target):
        key = _protected_write(" ".join(alt))
        if key:
            scope.out[key] = None


# -- one simple command ----------------------------------------------------------------


def _check_words(
    words: list[Word], cmd: Command | None, scope: Scope, inlining: frozenset[str]
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
        _run_written(scope, head.text, texts)  # ./x.sh
    script = _script_operand(name, texts)
    if script is not None:
        _run_written(scope, texts[script], texts[script + 1 :])  # bash x.sh, source x.sh
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


def _hypotheses(args: list[str], scope: Scope) -> None:
    """A command word the gate cannot read, tried as rm, dd, wipefs...: the floor's findings."""
    for name in _HYPOTHESES:
        found: dict[str, None] = {}
        _check_command(name, args, scope.depth, found)
        for key in found:
            if key in HARDLINE_RULES:
                scope.out[key] = None


def _check_dynamic_target(name: str, args: list[Word], scope: Scope) -> None:
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


def _check_strings(words: list[str], scope: Scope) -> None:
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


def _check_inline(name: str, args: list[str], depth: int, run: Run) -> None:
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


def _check_code_words(name: str, args: list[Word], cmd: Command | None, scope: Scope) -> None:
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


def _check_upstream(cmd: Command, scope: Scope, *, shell: bool) -> bool:
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


def _check_command(name: str, args: list[str], depth: int, out: dict[str, None]) -> None:
    """The rules for one command's plain words; code it runs in turn is read as a script."""

    def inline(inner: str, inner_args: list[str]) -> None:
        run = Run()
        _check_inline(inner, inner_args, depth, run)
        out.update(run.out)

    check_command(name, args, out, inline)
