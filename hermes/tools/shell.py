"""A small, quote-aware reader of shell command lines, for the approval gate.

It does not run or expand anything. It splits a command line the way bash
would split it into pipelines of simple commands, so the gate can tell a
command word (``rm -rf /``) from data (``echo 'rm -rf /'``):

- quotes and backslashes are removed from words; ``$VAR`` stays literal;
- ``;``, ``&&``, ``||``, ``&``, newlines and parentheses end a pipeline,
  ``|`` and ``|&`` end a simple command within one;
- redirections (``>``, ``2>>``, ``&>``, ``<<<``...) are kept apart from the words;
- the bodies of ``$(...)``, backticks and ``<(...)``/``>(...)`` are collected as
  *substitutions*, to be checked as commands in their own right (they run even
  inside double quotes; inside single quotes they are data);
- here-document bodies are attached to their command, with whether they expand
  (an unquoted delimiter: ``$(...)`` in the body runs);
- ``masked`` is the text with quoted content and here-document bodies blanked,
  for patterns that have no command word to anchor to (fork bombs).

Malformed input (an unclosed quote or substitution) raises ``ShellSyntaxError``;
the gate then falls back to conservative checks.
"""

from __future__ import annotations

import attrs


class ShellSyntaxError(ValueError):
    """The command line cannot be split (unclosed quote, substitution...)."""


@attrs.frozen(slots=True)
class Redirect:
    op: str
    """The operator without its fd: ``>``, ``>>``, ``<``, ``<<``, ``<<<``, ``&>``, ``>&``..."""
    target: str


@attrs.frozen(slots=True)
class HereDoc:
    body: str
    expands: bool
    """True for an unquoted delimiter: substitutions in the body run."""


@attrs.define(slots=True)
class SimpleCommand:
    """One command: its words (quotes removed), redirections and here-documents."""

    words: list[str] = attrs.field(factory=list)
    redirects: list[Redirect] = attrs.field(factory=list)
    heredocs: list[HereDoc] = attrs.field(factory=list)


@attrs.frozen(slots=True)
class ParsedLine:
    """A command line split into pipelines of simple commands."""

    pipelines: tuple[tuple[SimpleCommand, ...], ...]
    substitutions: tuple[str, ...]
    masked: str

    def commands(self) -> list[SimpleCommand]:
        return [cmd for pipeline in self.pipelines for cmd in pipeline]


_REDIRECT_OPS = ("<<<", "<<-", "&>>", "<<", "<&", "<>", ">>", ">&", ">|", "&>", "<", ">")
_CONTROL_OPS = ("&&", "||", ";;", ";&", "|&", "&", "|", ";", "(", ")")


def parse(text: str) -> ParsedLine:
    """Split ``text``; raises ``ShellSyntaxError`` when it is malformed."""
    try:
        return _Parser(text).run()
    except RecursionError:
        raise ShellSyntaxError("substitutions nested too deeply") from None


def find_substitutions(text: str) -> list[str]:
    """The ``$(...)`` and backtick bodies in text that expands like a here-document body."""
    found: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "$" and text.startswith("(", i + 1):
            body, i = _read_paren(text, i + 1)
            found.append(body)
        elif c == "`":
            body, i = _read_backtick(text, i)
            found.append(body)
        else:
            i += 1
    return found


def _read_paren(s: str, start: int) -> tuple[str, int]:
    """Body of the parenthesised group opening at ``s[start] == '('`` and the index after it."""
    depth = 0
    j = start
    n = len(s)
    while j < n:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            end = s.find("'", j + 1)
            if end < 0:
                raise ShellSyntaxError("unclosed single quote inside a substitution")
            j = end + 1
            continue
        if c == '"':
            j = _skip_double(s, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return s[start + 1 : j], j + 1
        j += 1
    raise ShellSyntaxError("unclosed '$(' or '(' substitution")


def _skip_double(s: str, j: int) -> int:
    """Index after the double-quoted string opening at ``s[j] == '"'``."""
    j += 1
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        if c == "$" and s.startswith("(", j + 1):
            _, j = _read_paren(s, j + 1)
            continue
        j += 1
    raise ShellSyntaxError("unclosed double quote")


def _read_backtick(s: str, start: int) -> tuple[str, int]:
    j = start + 1
    body: list[str] = []
    while j < len(s):
        c = s[j]
        if c == "\\" and j + 1 < len(s):
            body.append(s[j + 1])
            j += 2
            continue
        if c == "`":
            return "".join(body), j + 1
        body.append(c)
        j += 1
    raise ShellSyntaxError("unclosed backtick")


class _Parser:
    """Single pass over the text; builds pipelines, substitutions and the masked copy."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.masked: list[str] = []
        self.pipelines: list[tuple[SimpleCommand, ...]] = []
        self.pipeline: list[SimpleCommand] = []
        self.cmd = SimpleCommand()
        self.word: list[str] | None = None
        self.word_quoted = False
        self.redirect: str | None = None
        self.heredocs: list[tuple[str, bool, bool, SimpleCommand]] = []
        self.substitutions: list[str] = []

    # -- driving loop --------------------------------------------------------------------

    def run(self) -> ParsedLine:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
            if c in " \t":
                self.end_word()
                self.emit(c)
                self.i += 1
            elif c == "\n":
                self.end_word()
                self.check_no_redirect()
                self.emit(c)
                self.i += 1
                self.end_pipeline()
                self.read_heredocs()
            elif c == "#" and self.word is None:
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                self.emit(" " * (end - self.i))
                self.i = end
            elif c == "'":
                self.single_quote()
            elif c == '"':
                self.double_quote()
            elif c == "\\":
                self.escape()
            elif c == "$" and nxt == "(":
                self.paren_substitution(1)
            elif c == "$" and nxt == "'":
                self.ansi_c_quote()
            elif c == "`":
                body, end = _read_backtick(s, self.i)
                self.substitutions.append(body)
                self.add(s[self.i : end])
                self.emit(s[self.i : end])
                self.i = end
            elif c in "<>" and nxt == "(":
                self.paren_substitution(1)
            elif c in "<>" or (c == "&" and nxt == ">"):
                self.redirect_op()
            elif c in ";&|()":
                self.control_op()
            else:
                self.add(c)
                self.emit(c)
                self.i += 1
        self.end_word()
        self.check_no_redirect()
        self.end_pipeline()
        return ParsedLine(tuple(self.pipelines), tuple(self.substitutions), "".join(self.masked))

    # -- words ---------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        self.masked.append(text)

    def add(self, text: str) -> None:
        if self.word is None:
            self.word = []
        self.word.append(text)

    def end_word(self) -> None:
        if self.word is None:
            return
        text = "".join(self.word)
        quoted = self.word_quoted
        self.word = None
        self.word_quoted = False
        if self.redirect is None:
            self.cmd.words.append(text)
            return
        op, self.redirect = self.redirect, None
        self.cmd.redirects.append(Redirect(op, text))
        if op in ("<<", "<<-"):
            self.heredocs.append((text, op == "<<-", not quoted, self.cmd))

    def check_no_redirect(self) -> None:
        if self.redirect is not None:
            raise ShellSyntaxError(f"redirection {self.redirect!r} without a target")

    def single_quote(self) -> None:
        end = self.s.find("'", self.i + 1)
        if end < 0:
            raise ShellSyntaxError("unclosed single quote")
        self.add(self.s[self.i + 1 : end])
        self.word_quoted = True
        self.emit("'" + " " * (end - self.i - 1) + "'")
        self.i = end + 1

    def ansi_c_quote(self) -> None:
        s = self.s
        j = self.i + 2
        out: list[str] = []
        while j < len(s):
            c = s[j]
            if c == "\\" and j + 1 < len(s):
                out.append(s[j : j + 2])
                j += 2
                continue
            if c == "'":
                break
            out.append(c)
            j += 1
        else:
            raise ShellSyntaxError("unclosed $'...' quote")
        self.add("".join(out))
        self.word_quoted = True
        self.emit("$'" + " " * (j - self.i - 2) + "'")
        self.i = j + 1

    def double_quote(self) -> None:
        s = self.s
        j = self.i + 1
        start = self.i
        out: list[str] = []
        while True:
            if j >= len(s):
                raise ShellSyntaxError("unclosed double quote")
            c = s[j]
            if c == '"':
                break
            if c == "\\" and j + 1 < len(s):
                nxt = s[j + 1]
                if nxt == "\n":
                    j += 2
                    continue
                out.append(nxt if nxt in '$`"\\' else "\\" + nxt)
                j += 2
            elif c == "$" and j + 1 < len(s) and s[j + 1] == "(":
                body, end = _read_paren(s, j + 1)
                self.substitutions.append(body)
                out.append(s[j:end])
                j = end
            elif c == "`":
                body, end = _read_backtick(s, j)
                self.substitutions.append(body)
                out.append(s[j:end])
                j = end
            else:
                out.append(c)
                j += 1
        self.add("".join(out))
        self.word_quoted = True
        self.emit('"' + " " * (j - start - 1) + '"')
        self.i = j + 1

    def escape(self) -> None:
        s = self.s
        if self.i + 1 >= len(s):
            self.i += 1
            return
        nxt = s[self.i + 1]
        if nxt != "\n":
            self.add(nxt)
            self.word_quoted = True
            self.emit("\\" + nxt)
        self.i += 2

    def paren_substitution(self, skip: int) -> None:
        """``$(...)``, ``<(...)`` or ``>(...)``: record the body, keep the raw text as the word."""
        body, end = _read_paren(self.s, self.i + skip)
        self.substitutions.append(body)
        self.add(self.s[self.i : end])
        self.emit(self.s[self.i : end])
        self.i = end

    # -- operators -----------------------------------------------------------------------

    def redirect_op(self) -> None:
        if self.word is not None and not self.word_quoted and "".join(self.word).isdigit():
            self.word = None  # an fd number such as the 2 in 2>
        self.end_word()
        self.check_no_redirect()
        op = next(o for o in _REDIRECT_OPS if self.s.startswith(o, self.i))
        self.emit(op)
        self.i += len(op)
        self.redirect = op

    def control_op(self) -> None:
        self.end_word()
        self.check_no_redirect()
        op = next(o for o in _CONTROL_OPS if self.s.startswith(o, self.i))
        self.emit(op)
        self.i += len(op)
        if op in ("|", "|&"):
            self.end_command()
        else:
            self.end_pipeline()

    def end_command(self) -> None:
        if self.cmd.words or self.cmd.redirects:
            self.pipeline.append(self.cmd)
            self.cmd = SimpleCommand()

    def end_pipeline(self) -> None:
        self.end_command()
        if self.pipeline:
            self.pipelines.append(tuple(self.pipeline))
            self.pipeline = []

    # -- here-documents ------------------------------------------------------------------

    def read_heredocs(self) -> None:
        """After a newline: consume the bodies of the here-documents opened on that line."""
        s = self.s
        for delimiter, strip_tabs, expands, cmd in self.heredocs:
            lines: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                line = s[self.i : end]
                self.emit(" " * len(line) + ("\n" if end < len(s) else ""))
                self.i = min(end + 1, len(s))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            cmd.heredocs.append(HereDoc(body, expands))
            if expands:
                self.substitutions.extend(find_substitutions(body))
        self.heredocs.clear()
