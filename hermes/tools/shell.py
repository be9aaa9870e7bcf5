"""Reading shell command lines with the bash grammar (tree-sitter-bash), for the approval gate.

Nothing is run or expanded. ``parse(text)`` returns a ``Script``: every simple
command in the syntax tree (inside pipelines, lists, subshells, functions,
loops, ``$(...)``, ``<(...)``...), each word as *parts* (literal text, a
variable, or text computed at run time), every redirection, every variable
assignment, the function definitions, and where the grammar failed. The gate
decides from that what runs; this module only reads.

The words themselves are read in ``shell_words.py``. A word is ``literal``
when bash would use it as written (quotes and backslashes removed, ANSI-C
``$'...'`` decoded): no expansion, substitution, glob or brace list in it.
Only a literal command word names a known program.
"""

from __future__ import annotations

import re

import attrs
import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from .shell_words import ENCODING as _ENCODING
from .shell_words import ERRORS as _ERRORS
from .shell_words import Computed, Part, Var, Word, printed, static_output, word
from .shell_words import concat as _concat
from .shell_words import node_text as _text

__all__ = [
    "Assignment",
    "Command",
    "Computed",
    "HereDoc",
    "Part",
    "Redirect",
    "Script",
    "Var",
    "Word",
    "parse",
    "printed",
    "static_output",
    "syntax_tree",
    "word",
]

_LANGUAGE = Language(tree_sitter_bash.language())


@attrs.frozen(slots=True)
class Redirect:
    op: str
    """The operator without its fd: ``>``, ``>>``, ``<``, ``<<<``, ``&>``, ``>&``..."""
    target: Word


@attrs.frozen(slots=True)
class HereDoc:
    body: str
    expands: bool
    """True for an unquoted delimiter: substitutions in the body run."""


@attrs.frozen(slots=True)
class Assignment:
    """``name=value`` (also ``export``/``local``/``for name in ...``); ``None``: not one word."""

    name: str
    value: Word | None


@attrs.frozen(slots=True)
class Command:
    """One simple command: its words, prefix assignments, redirections and stdin sources.

    ``redirects`` also holds those of the statements around it (``{ a; } > f``).
    """

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    heredocs: tuple[HereDoc, ...] = ()
    upstream: tuple[Command | None, ...] = ()
    """What feeds its stdin in its pipeline, nearest last; ``None`` is a compound command."""
    background: bool = False


@attrs.frozen(slots=True)
class Script:
    """A parsed command line (see the module docstring)."""

    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[Assignment, ...]
    functions: dict[str, tuple[Command, ...]]
    errors: tuple[str, ...]
    """Where the grammar failed (unbalanced quote, missing ``fi``...): empty when it did not."""


# -- parsing ---------------------------------------------------------------------------


def parse(text: str) -> Script:
    """Read ``text`` with the bash grammar. Never raises on bad syntax: see ``Script.errors``."""
    return _Reader().run(syntax_tree(text))


def syntax_tree(text: str) -> Node:
    """The root of ``text``'s tree-sitter-bash tree (byte offsets: ``text`` in UTF-8)."""
    source = text.encode(_ENCODING, _ERRORS)
    return Parser(_LANGUAGE).parse(source).root_node


def _key(node: Node) -> tuple[int, int, str]:
    return (node.start_byte, node.end_byte, node.type)


@attrs.frozen(slots=True)
class _Context:
    """What a node inherits from its ancestors (handed down: ``Node.parent`` is O(depth))."""

    owners: tuple[Node, ...] = ()
    """Redirected statements whose body holds the node: their here-documents feed it."""
    pipeline: Node | None = None
    stage: Node | None = None
    """The pipeline's child on the way to the node."""
    heredoc_of: Node | None = None
    """For a pipeline hung on a here-document (``cat <<EOF | sh``): the statement's body."""
    background: bool = False
    function: str | None = None


_SCOPES = frozenset({"command_substitution", "process_substitution"})
_BLOCKS = ("subshell", "compound_statement")
"""``time (a; b)``: a block after a command word is not a word; its commands are read."""
_SHAPING = _SCOPES | {"function_definition", "redirected_statement", "pipeline", "heredoc_redirect"}
"""Nodes whose children inherit something other than what the node got."""


class _Reader:
    """One pass over the tree, iterative (a hostile line can nest thousands deep)."""

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.by_key: dict[tuple[int, int, str], Command] = {}
        self.redirects: list[Redirect] = []
        self.assignments: list[Assignment] = []
        self.functions: dict[str, list[Command]] = {}
        self.pipelines: dict[tuple[int, int, str], _Stages] = {}
        self.errors: list[str] = []

    def run(self, root: Node) -> Script:
        stack: list[tuple[Node, _Context]] = [(root, _Context())]
        broken = root.has_error
        while stack:
            node, ctx = stack.pop()
            if broken and (node.is_error or node.is_missing):
                self.error(node)  # and read on: what the grammar did recognise still counts
            else:
                self.visit(node, ctx)
            children = node.children
            if not children:
                continue
            plain = (
                node.type not in _SHAPING
                and not ctx.background
                and ctx.heredoc_of is None
                and not any(c.type == "&" for c in children)
            )
            for i in range(len(children) - 1, -1, -1):
                child = children[i]
                if child.child_count or (broken and (child.is_error or child.is_missing)):
                    stack.append((child, ctx if plain else self.inherit(node, ctx, children, i)))
        return Script(
            commands=tuple(self.commands),
            redirects=tuple(self.redirects),
            assignments=tuple(self.assignments),
            functions={name: tuple(body) for name, body in self.functions.items()},
            errors=tuple(self.errors),
        )

    def inherit(self, node: Node, ctx: _Context, children: list[Node], i: int) -> _Context:
        child = children[i]
        kind = node.type
        background = (i + 1 < len(children) and children[i + 1].type == "&") or (
            ctx.background and kind in ("redirected_statement", "pipeline")
        )
        if kind in _SCOPES:
            return _Context(background=background, function=ctx.function)
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            return _Context(function=_text(name) if name is not None else ctx.function)
        owners, pipeline, stage, heredoc_of = ctx.owners, ctx.pipeline, ctx.stage, ctx.heredoc_of
        if kind == "redirected_statement" and node.field_name_for_child(i) == "body":
            owners, heredoc_of = (*owners[-7:], node), None
        elif kind == "redirected_statement":
            heredoc_of = node.child_by_field_name("body")
        elif kind == "pipeline":
            pipeline, stage = node, child
        elif kind != "heredoc_redirect":
            heredoc_of = None
        if background == ctx.background and (owners, pipeline, stage, heredoc_of) == (
            ctx.owners,
            ctx.pipeline,
            ctx.stage,
            ctx.heredoc_of,
        ):
            return ctx
        return _Context(owners, pipeline, stage, heredoc_of, background, ctx.function)

    def error(self, node: Node) -> None:
        where = f"{node.start_point[0] + 1}:{node.start_point[1] + 1}"
        what = f"missing {node.type!r}" if node.is_missing else "unexpected text"
        self.errors.append(f"{what} at {where}")

    def visit(self, node: Node, ctx: _Context) -> None:
        kind = node.type
        if kind == "command":
            command = self.command(node, ctx)
            self.commands.append(command)
            self.by_key[_key(node)] = command
            if ctx.function is not None:
                self.functions.setdefault(ctx.function, []).append(command)
        elif kind == "file_redirect":
            redirect = _file_redirect(node)
            if redirect is not None:
                self.redirects.append(redirect)
        elif kind == "herestring_redirect":
            self.redirects.append(_herestring(node))
        elif kind == "variable_assignment":
            self.assignments.append(_assignment(node))
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None:
                for value in node.children_by_field_name("value"):
                    self.assignments.append(Assignment(_text(variable), word(value)))
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                self.functions.setdefault(_text(name), [])

    def command(self, node: Node, ctx: _Context) -> Command:
        words: list[Word] = []
        prefix: list[Assignment] = []
        redirects: list[Redirect] = []
        heredocs: list[HereDoc] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                prefix.append(_assignment(child))
            elif kind == "command_name":
                words.append(_concat(child.children, child))
            elif kind == "file_redirect":
                redirect = _file_redirect(child)
                if redirect is not None:
                    redirects.append(redirect)
            elif kind == "herestring_redirect":
                redirects.append(_herestring(child))
            elif child.is_named and kind not in ("comment", "subscript", *_BLOCKS):
                words.append(word(child))
        # The grammar hangs ``cmd && bash <<EOF`` on the whole list, not on ``bash``:
        # every command in the statement's body gets it (for the gate, more is safe).
        for owner in ctx.owners:
            for child in owner.children_by_field_name("redirect"):
                if child.type == "heredoc_redirect":
                    heredocs.append(_heredoc(child))
                elif child.type == "herestring_redirect":
                    redirects.append(_herestring(child))
                elif child.type == "file_redirect":
                    redirect = _file_redirect(child)
                    if redirect is not None:
                        redirects.append(redirect)
        return Command(
            words=tuple(words),
            assignments=tuple(prefix),
            redirects=tuple(redirects),
            heredocs=tuple(heredocs),
            upstream=self.upstream(ctx),
            background=ctx.background,
        )

    def upstream(self, ctx: _Context) -> tuple[Command | None, ...]:
        """The stages before this one in the nearest pipeline it is part of (the last 16).

        ``x | (a; sh)`` feeds ``sh`` too: the pipeline is the nearest around the
        command, not beyond a substitution or a function body. Stages further
        back are one ``None``: unknown, as a compound command is.
        """
        if ctx.pipeline is None or ctx.stage is None:
            return ()
        stages = self.pipelines.get(_key(ctx.pipeline))
        if stages is None:
            stages = _Stages(ctx.pipeline, ctx.heredoc_of)
            self.pipelines[_key(ctx.pipeline)] = stages
        index = stages.index.get(_key(ctx.stage), 0)
        start = max(0, index - _MAX_UPSTREAM)
        found: list[Command | None] = [None] if start > 0 else []
        for key in stages.keys[start:index]:
            found.append(self.by_key.get(key) if key is not None else None)
        return tuple(found)


_MAX_UPSTREAM = 16


class _Stages:
    """A pipeline's stages: the command of each (``None`` for a compound), by position."""

    def __init__(self, pipeline: Node, heredoc_of: Node | None) -> None:
        self.keys: list[tuple[int, int, str] | None] = []
        self.index: dict[tuple[int, int, str], int] = {}
        if heredoc_of is not None:
            # ``cat <<EOF | sh``: the grammar hangs the rest of the pipeline on the here-doc
            self.keys.append(_key(heredoc_of) if heredoc_of.type == "command" else None)
        for child in pipeline.named_children:
            self.index[_key(child)] = len(self.keys)
            if child.type == "redirected_statement":
                body = child.child_by_field_name("body")
                child = body if body is not None else child
            self.keys.append(_key(child) if child.type == "command" else None)


def _assignment(node: Node) -> Assignment:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    label = _text(name) if name is not None else ""
    if name is not None and name.type == "subscript":
        inner = name.child_by_field_name("name")
        label = _text(inner) if inner is not None else label
    if value is None or value.type == "array":
        return Assignment(label, None if value is not None else Word.of(""))
    return Assignment(label, word(value))


_FD_OPS = re.compile(r"^\d*")


def _file_redirect(node: Node) -> Redirect | None:
    op = ""
    target: Word | None = None
    for child in node.children:
        if child.type == "file_descriptor":
            continue
        if not child.is_named and target is None and not op:
            op = _text(child)
        elif child.is_named:
            target = word(child) if target is None else target
    if not op or target is None:
        return None
    return Redirect(_FD_OPS.sub("", op), target)


def _herestring(node: Node) -> Redirect:
    values = list(node.named_children)
    return Redirect("<<<", _concat(values, values[0]) if values else Word.of(""))


def _heredoc(node: Node) -> HereDoc:
    start = node.child_by_field_name("start") or _first(node, "heredoc_start")
    delimiter = _text(start) if start is not None else ""
    expands = not any(q in delimiter for q in "'\"\\")
    body_node = _first(node, "heredoc_body")
    body = _text(body_node) if body_node is not None else ""
    return HereDoc(body, expands)


def _first(node: Node, kind: str) -> Node | None:
    for child in node.children:
        if child.type == kind:
            return child
    return None
