"""The words of a shell line as the bash grammar gives them: literal text, variables, the rest.

``word(node)`` turns one argument-like node of a tree-sitter-bash tree into a
``Word``: its parts (literal text with quotes and backslashes undone and
ANSI-C ``$'...'`` decoded, a ``Var``, or ``Computed`` text known only at run
time), its source and whether bash would expand it as a glob or brace list.
``static_output`` and ``printed`` read what ``$(echo ...)``, ``printf`` or a
base64 decode of literal text prints. ``shell.py`` reads whole lines with it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence

import attrs
from tree_sitter import Node

ENCODING = "utf-8"
ERRORS = "surrogatepass"
"""How a line's text becomes the bytes the grammar reads, and back (lone surrogates kept)."""


def node_text(node: Node) -> str:
    """The source text of ``node``."""
    return (node.text or b"").decode(ENCODING, ERRORS)


# -- what a word is made of ------------------------------------------------------------


@attrs.frozen(slots=True)
class Var:
    """``$name`` or ``${name}`` (also ``$@``, ``$1``...): its value is known only at run time."""

    name: str
    quoted: bool
    """Inside double quotes: not split into words."""


@attrs.frozen(slots=True)
class Computed:
    """Text computed at run time: a substitution, arithmetic, ``${x:-y}``, xargs' input."""

    source: str
    quoted: bool
    output: str | None = None
    """What it prints when that can be read off (``$(echo rm)`` -> ``rm``), else ``None``."""


Part = str | Var | Computed


@attrs.frozen(slots=True)
class Word:
    """One shell word: its parts, its source text and whether it holds a glob or brace list."""

    parts: tuple[Part, ...]
    source: str = ""
    pattern: bool = False
    """Unquoted ``*``, ``?``, ``[`` or a ``{a,b}`` list: bash would expand it."""

    @classmethod
    def of(cls, text: str) -> Word:
        return cls((text,), text)

    @property
    def literal(self) -> bool:
        return not self.pattern and all(isinstance(p, str) for p in self.parts)

    @property
    def text(self) -> str:
        """Literal parts as bash sees them, ``$name`` for a variable, the source of the rest."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, Var):
                out.append("$" + part.name)
            else:
                out.append(part.source)
        return "".join(out)


# -- words -----------------------------------------------------------------------------

_BRACE_LIST = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB = frozenset("*?[")


class _Parts:
    """Collects the parts of one word and the unquoted text (for glob and brace detection)."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.unquoted: list[str] = []

    def add(self, part: Part) -> None:
        if isinstance(part, str) and self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += part
        elif part != "":
            self.parts.append(part)

    def build(self, source: str) -> Word:
        bare = "".join(self.unquoted)
        pattern = any(c in _GLOB for c in bare) or bool(_BRACE_LIST.search(bare))
        return Word(tuple(self.parts), source, pattern)


def word(node: Node) -> Word:
    """The ``Word`` for one argument-like node."""
    return concat([node], node)


def concat(nodes: list[Node], owner: Node, *, outputs: bool = True) -> Word:
    """One word from ``nodes`` (``owner``'s source).

    ``outputs``: read what substitutions print (one level only: never recursive).
    """
    acc = _Parts()
    for node in nodes:
        _collect(node, acc, quoted=False, outputs=outputs)
    return acc.build(node_text(owner))


def _collect(node: Node, acc: _Parts, *, quoted: bool, outputs: bool) -> None:
    kind = node.type
    if kind == "concatenation":
        for child in node.children:
            _collect(child, acc, quoted=quoted, outputs=outputs)
    elif kind in ("word", "number"):
        _unquoted_word(node_text(node), acc)
    elif kind == "raw_string":
        acc.add(node_text(node)[1:-1])
    elif kind == "ansi_c_string":
        decoded = _ansi_c(node_text(node)[2:-1])
        acc.add(decoded if decoded is not None else Computed(node_text(node), quoted))
    elif kind in ("string", "translated_string"):
        for child in node.children:
            if child.type == "string_content":
                acc.add(_unescape_double(node_text(child)))
            elif child.is_named:
                _collect(child, acc, quoted=True, outputs=outputs)
    elif kind == "simple_expansion":
        acc.add(_simple_expansion(node, quoted))
    elif kind == "expansion":
        acc.add(_expansion(node, quoted))
    elif kind == "command_substitution":
        acc.add(Computed(node_text(node), quoted, static_output(node) if outputs else None))
    elif kind == "brace_expression":
        text = node_text(node)
        acc.add(text)
        acc.unquoted.append(text)
    else:  # process substitution, arithmetic, ``$`` alone, anything unforeseen: fail closed
        acc.add(Computed(node_text(node), quoted))


def _unquoted_word(text: str, acc: _Parts) -> None:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        acc.unquoted.append(c)
        i += 1
    acc.add("".join(out))


def _unescape_double(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _simple_expansion(node: Node, quoted: bool) -> Part:
    for child in node.named_children:
        if child.type in ("variable_name", "special_variable_name"):
            return Var(node_text(child), quoted)
    return Computed(node_text(node), quoted)


def _expansion(node: Node, quoted: bool) -> Part:
    """``${name}`` is a variable; any operator (``${x:-y}``, ``${#x}``, ``${!x}``) is computed."""
    inner = [c for c in node.children if c.type not in ("${", "}")]
    if len(inner) == 1 and inner[0].type in ("variable_name", "special_variable_name"):
        return Var(node_text(inner[0]), quoted)
    return Computed(node_text(node), quoted)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_NUMERIC = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}")


def _ansi_c(body: str) -> str | None:
    """Decode the inside of ``$'...'``; ``None`` for an escape this reader does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
            continue
        match = _ANSI_NUMERIC.match(body, i + 1)
        if match is None:
            if nxt == "c" and i + 2 < len(body):
                out.append(chr(ord(body[i + 2]) & 0x1F))
                i += 3
                continue
            return None
        digits = match.group()
        value = int(digits, 8) if digits[0] in "01234567" else int(digits[1:], 16)
        if value > 0x10FFFF:
            return None
        out.append(chr(value))
        i = match.end()
    return "".join(out)


# -- what a substitution prints --------------------------------------------------------

_DECODE_FLAGS = frozenset({"-d", "--decode", "-D"})


def static_output(node: Node) -> str | None:
    """What ``$(...)`` prints when it is ``echo``/``printf`` of literal text, maybe base64-decoded.

    A best effort that only ever adds to what the gate checks: a substitution
    whose output cannot be read this way is still a non-literal word.
    """
    inner = [c for c in node.named_children if c.type != "comment"]
    if len(inner) != 1:
        return None
    stages = [inner[0]] if inner[0].type == "command" else list(inner[0].named_children)
    if inner[0].type not in ("command", "pipeline") or not stages:
        return None
    text = _printed(stages[0])
    for stage in stages[1:]:
        if text is None:
            return None
        text = _decoded(stage, text)
    return text


def _literal_words(node: Node) -> list[str] | None:
    if node.type != "command":
        return None
    out: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            w = concat(child.children, child, outputs=False)
        elif child.is_named and child.type not in ("comment",):
            if child.type in ("file_redirect", "herestring_redirect", "variable_assignment"):
                return None
            w = concat([child], child, outputs=False)
        else:
            continue
        if not w.literal:
            return None
        out.append(w.text)
    return out


def _printed(node: Node) -> str | None:
    words = _literal_words(node)
    return printed(words) if words else None


def printed(words: Sequence[str]) -> str | None:
    """What ``echo ...`` or ``printf ...`` of these literal words prints; ``None`` otherwise."""
    if not words:
        return None
    name, args = words[0].rsplit("/", 1)[-1], list(words[1:])
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return (_ansi_c(text) or text) if escapes else text
    if name != "printf":
        return None
    if args[:1] == ["--"]:
        args = args[1:]
    elif args and args[0].startswith("-"):
        return None  # printf -v NAME: prints nothing
    if not args:
        return None
    return _printf(args[0], args[1:])


_PRINTF_DIRECTIVE = re.compile(r"%(?:%|[-+ #0]*\d*(?:\.\d+)?[sbdiqc])")


def _printf(fmt: str, args: list[str]) -> str:
    """``printf FORMAT ARGS``: the format reused until the arguments run out (``%s``-like only)."""
    fmt = _ansi_c(fmt) or fmt
    if "%" not in fmt:
        return fmt
    out: list[str] = []
    queue = list(args)
    for _ in range(64):
        used = False

        def fill(match: re.Match[str]) -> str:
            nonlocal used
            if match.group() == "%%":
                return "%"
            used = True
            return queue.pop(0) if queue else ""

        out.append(_PRINTF_DIRECTIVE.sub(fill, fmt))
        if not queue or not used:
            break
    return "".join(out)


def _decoded(node: Node, text: str) -> str | None:
    words = _literal_words(node)
    if not words or words[0].rsplit("/", 1)[-1] != "base64":
        return None
    if not any(w in _DECODE_FLAGS for w in words[1:]):
        return None
    try:
        return base64.b64decode("".join(text.split()), validate=False).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
