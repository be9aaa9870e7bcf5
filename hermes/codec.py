"""The daemon's one converter between in-process attrs objects and plain data.

Design rule: in process, messages are frozen attrs classes and nothing is
serialized; at the edges (database, WebSocket, HTTP) this module turns them into
plain data (dicts, lists, str, int, float, bool, None) with one ``cattrs``
converter, then into bytes: msgpack for stored blobs and binary frames, JSON
for text.

Content blocks are a tagged union: each block's plain form is a dict whose
first key is ``"type"`` with the Anthropic wire name (``text``, ``thinking``,
``redacted_thinking``, ``tool_use``, ``tool_result``, ``image``), followed by
the attrs fields in declaration order. Every field is written, defaults
included, and tuples become lists, so the plain form, and therefore the packed
bytes, of equal objects are identical (``pack(a) == pack(b)`` when ``a == b``).

Structuring is strict, so a malformed blob is an error rather than a quiet
coercion: ``str`` fields take only ``str``, ``int`` only ``int`` (not
``bool``), ``bool`` only ``bool``, unknown keys and unknown block types are
refused, and a tool's ``input`` must be JSON data (dicts with ``str`` keys,
lists, ``str``, ``int``, finite ``float``, ``bool``, ``None``; no tuples, which
would come back as lists and break equality). Every failure is a
``CodecError`` whose message names the path of each bad value, for example
``malformed Message: content[1].tool_use_id: expected str, got int``.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, overload

import attrs
import cattrs
import msgpack  # type: ignore[import-untyped]
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from hermes.model.types import (
    ContentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "BLOCK_TYPES",
    "Blocks",
    "CodecError",
    "converter",
    "from_json",
    "from_plain",
    "pack",
    "pack_blocks",
    "to_json",
    "to_plain",
    "unpack",
    "unpack_blocks",
]

T = TypeVar("T")

Blocks = tuple[ContentBlock, ...]
"""A message's content: the type to pass as ``as_type``/``cls`` for bare block tuples."""

BLOCK_TYPES: Mapping[str, type[Any]] = {
    "text": TextBlock,
    "thinking": ThinkingBlock,
    "redacted_thinking": RedactedThinkingBlock,
    "tool_use": ToolUseBlock,
    "tool_result": ToolResultBlock,
    "image": ImageBlock,
}
"""Block classes by their tag (the Anthropic wire name of the block type)."""

_TAG_OF: Mapping[type[Any], str] = {cls: tag for tag, cls in BLOCK_TYPES.items()}

_JsonDict = dict[str, Any]


class CodecError(ValueError):
    """Data that cannot be converted: names what and where (``content[2].text``)."""


class _Invalid(ValueError):
    """A value refused by one of our hooks; its message is shown as is.

    ``subpath`` locates the bad value inside the value the hook was given.
    """

    def __init__(self, message: str, subpath: str = "") -> None:
        super().__init__(message)
        self.subpath = subpath


# -- the converter ------------------------------------------------------------------------

converter = cattrs.Converter(forbid_extra_keys=True, unstruct_collection_overrides={tuple: list})
"""The one converter. Use the functions below rather than calling it directly."""


def _type_name(value: object) -> str:
    return type(value).__name__


def _strict(kind: type[Any]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        if type(value) is not kind:
            raise _Invalid(f"expected {kind.__name__}, got {_type_name(value)}")
        return value

    return structure


def _structure_float(value: Any, _: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    raise _Invalid(f"expected float, got {_type_name(value)}")


for _kind in (str, int, bool):
    converter.register_structure_hook(_kind, _strict(_kind))
converter.register_structure_hook(float, _structure_float)


def _is_literal(tp: Any) -> bool:
    return typing.get_origin(tp) is Literal


def _structure_literal_factory(tp: Any) -> Callable[[Any, Any], Any]:
    allowed = typing.get_args(tp)

    def structure(value: Any, _: Any) -> Any:
        # ``True == 1``: compare types too so that a bool never passes for an int.
        if not any(type(value) is type(a) and value == a for a in allowed):
            choices = ", ".join(repr(a) for a in allowed)
            raise _Invalid(f"expected one of {choices}, got {value!r}")
        return value

    return structure


converter.register_structure_hook_factory(_is_literal, _structure_literal_factory)


def _is_homogeneous_tuple(tp: Any) -> bool:
    args = typing.get_args(tp)
    return typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _structure_tuple_factory(tp: Any) -> Callable[[Any, Any], Any]:
    item_type = typing.get_args(tp)[0]
    item_hook = converter.get_structure_hook(item_type)

    def structure(value: Any, _: Any) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise _Invalid(f"expected a list, got {_type_name(value)}")
        items = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                items.append(item_hook(item, item_type))
            except Exception as exc:
                exc.__notes__ = [*getattr(exc, "__notes__", ()), f"at [{index}]"]
                errors.append(exc)
        if errors:
            raise _ItemErrors(errors)
        return tuple(items)

    return structure


class _ItemErrors(Exception):
    """Failures of several items of one list, each noted with its index."""

    def __init__(self, errors: list[Exception]) -> None:
        super().__init__(f"{len(errors)} invalid item(s)")
        self.errors = errors


converter.register_structure_hook_factory(_is_homogeneous_tuple, _structure_tuple_factory)


# -- tool input: JSON data -------------------------------------------------------------


def _json_copy(value: Any, path: str) -> Any:
    """A fresh copy of JSON data, or ``_Invalid`` naming the first bad value's path."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _Invalid(f"{value!r} is not JSON data (not finite)", path)
        return value
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _Invalid(f"key {key!r} is not a str", path)
            out[key] = _json_copy(item, f"{path}[{key!r}]")
        return out
    if kind is list:
        return [_json_copy(item, f"{path}[{i}]") for i, item in enumerate(value)]
    hint = " (use a list)" if kind is tuple else ""
    raise _Invalid(f"{_type_name(value)} is not JSON data{hint}", path)


def _structure_json_object(value: Any, _: Any) -> _JsonDict:
    if type(value) is not dict:
        raise _Invalid(f"expected a JSON object (dict), got {_type_name(value)}")
    copied: _JsonDict = _json_copy(value, "")
    return copied


def _unstructure_json_object(value: Any) -> _JsonDict:
    if type(value) is not dict:
        raise _Invalid(f"expected a JSON object (dict), got {_type_name(value)}", "input")
    try:
        copied: _JsonDict = _json_copy(value, "input")
        return copied
    except RecursionError:
        raise _Invalid("input is nested too deeply") from None


def _is_json_object(tp: Any) -> bool:
    return bool(tp == _JsonDict)


converter.register_structure_hook_func(_is_json_object, _structure_json_object)
converter.register_unstructure_hook_func(_is_json_object, _unstructure_json_object)


# -- attrs classes: mapping check, tags for blocks -------------------------------------


def _structure_attrs_factory(cls: type[Any]) -> Callable[[Any, Any], Any]:
    generated = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True)
    tag = _TAG_OF.get(cls)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _Invalid(f"expected a mapping for {cls.__name__}, got {_type_name(value)}")
        if tag is not None:
            found = value.get("type", None)
            if found != tag:
                what = "missing" if "type" not in value else f"is {found!r}"
                raise _Invalid(f"block type {what}, expected {tag!r}")
            value = {k: v for k, v in value.items() if k != "type"}
        return generated(value, cls)

    return structure


def _unstructure_attrs_factory(cls: type[Any]) -> Callable[[Any], Any]:
    generated = make_dict_unstructure_fn(cls, converter)
    tag = _TAG_OF.get(cls)
    if tag is None:
        return generated

    def unstructure(value: Any) -> dict[str, Any]:
        return {"type": tag, **generated(value)}

    return unstructure


converter.register_structure_hook_factory(attrs.has, _structure_attrs_factory)
converter.register_unstructure_hook_factory(attrs.has, _unstructure_attrs_factory)


# -- unions ----------------------------------------------------------------------------


def _union_args(tp: Any) -> tuple[Any, ...]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return ()


def _is_block_union(tp: Any) -> bool:
    args = _union_args(tp)
    return bool(args) and all(arg in _TAG_OF for arg in args)


def _structure_block_union_factory(tp: Any) -> Callable[[Any, Any], Any]:
    members = {_TAG_OF[arg]: arg for arg in _union_args(tp)}
    expected = ", ".join(repr(tag) for tag in members)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _Invalid(f"expected a block (mapping), got {_type_name(value)}")
        if "type" not in value:
            raise _Invalid(f"block has no 'type' (expected one of {expected})")
        tag = value["type"]
        cls = members.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise _Invalid(f"unknown block type {tag!r} here (expected one of {expected})")
        return converter.structure(value, cls)

    return structure


converter.register_structure_hook_factory(_is_block_union, _structure_block_union_factory)


def _is_str_or_blocks(tp: Any) -> bool:
    args = _union_args(tp)
    return len(args) == 2 and str in args and any(_is_homogeneous_tuple(a) for a in args)


def _structure_str_or_blocks_factory(tp: Any) -> Callable[[Any, Any], Any]:
    (blocks_type,) = (a for a in _union_args(tp) if a is not str)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is str:
            return value
        if isinstance(value, list | tuple):
            return converter.structure(value, blocks_type)
        raise _Invalid(f"expected a str or a list of blocks, got {_type_name(value)}")

    return structure


converter.register_structure_hook_factory(_is_str_or_blocks, _structure_str_or_blocks_factory)


# -- errors ----------------------------------------------------------------------------


def _leaf_errors(exc: BaseException, path: str) -> list[str]:
    """Flatten cattrs' validation groups into ``path: what`` lines."""
    if isinstance(exc, cattrs.ClassValidationError | cattrs.IterableValidationError):
        lines = []
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            index = getattr(note, "index", None)
            name = getattr(note, "name", None)
            if name is not None:
                sub_path = f"{path}.{name}" if path else str(name)
            elif index is not None:
                sub_path = f"{path}[{index}]"
            else:
                sub_path = path
            lines.extend(_leaf_errors(sub, sub_path))
        for sub in without:
            lines.extend(_leaf_errors(sub, path))
        return lines
    if isinstance(exc, _ItemErrors):
        lines = []
        for sub in exc.errors:
            notes = [n for n in getattr(sub, "__notes__", ()) if n.startswith("at [")]
            index = notes[-1][3:] if notes else "[?]"
            lines.extend(_leaf_errors(sub, f"{path}{index}"))
        return lines
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        extra = ", ".join(sorted(repr(k) for k in exc.extra_fields))
        return [f"{path or '(top)'}: unknown field(s) {extra}"]
    if isinstance(exc, KeyError):
        return [f"{path or '(top)'}: required field missing"]
    if isinstance(exc, _Invalid):
        return [f"{path + exc.subpath or '(top)'}: {exc}"]
    if isinstance(exc, RecursionError):
        return [f"{path or '(top)'}: nested too deeply"]
    return [f"{path or '(top)'}: {type(exc).__name__}: {exc}"]


def _name_of(tp: Any) -> str:
    if tp is Blocks:
        return "content blocks"
    return getattr(tp, "__name__", None) or str(tp)


# -- public functions ------------------------------------------------------------------


def to_plain(value: Any, as_type: Any = None) -> Any:
    """``value`` as plain data (dicts, lists, scalars).

    ``as_type`` is needed only for containers whose element type matters, such as
    a bare tuple of blocks (pass ``Blocks``).
    """
    try:
        return converter.unstructure(value, unstructure_as=as_type)
    except _Invalid as exc:
        where = f" at {exc.subpath}" if exc.subpath else ""
        raise CodecError(f"cannot convert {_type_name(value)}: {exc}{where}") from None
    except RecursionError:
        raise CodecError(f"cannot convert {_type_name(value)}: nested too deeply") from None


@overload
def from_plain(data: Any, cls: type[T]) -> T: ...
@overload
def from_plain(data: Any, cls: Any) -> Any: ...


def from_plain(data: Any, cls: Any) -> Any:
    """Build a ``cls`` (an attrs class, or a type such as ``Blocks``) from plain data.

    Raises ``CodecError`` naming every malformed value's path.
    """
    try:
        return converter.structure(data, cls)
    except RecursionError:
        raise CodecError(f"malformed {_name_of(cls)}: nested too deeply") from None
    except Exception as exc:
        lines = _leaf_errors(exc, "")
        raise CodecError(f"malformed {_name_of(cls)}: " + "; ".join(lines)) from exc


def pack(value: Any, as_type: Any = None) -> bytes:
    """``value`` as msgpack bytes (deterministic for equal values)."""
    plain = to_plain(value, as_type)
    try:
        packed: bytes = msgpack.packb(plain, use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as exc:
        # ValueError: a str with lone surrogates (not UTF-8); Overflow: int > 64 bits.
        raise CodecError(f"cannot pack {_type_name(value)}: {type(exc).__name__}: {exc}") from exc
    return packed


@overload
def unpack(data: bytes, cls: type[T]) -> T: ...
@overload
def unpack(data: bytes, cls: Any) -> Any: ...


def unpack(data: bytes, cls: Any) -> Any:
    """Read msgpack ``data`` written by ``pack`` back into a ``cls``."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CodecError(f"cannot unpack {_name_of(cls)}: expected bytes, got {_type_name(data)}")
    try:
        plain = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:
        # ExtraData, FormatError, StackError, UnicodeDecodeError, ValueError...
        detail = f"{type(exc).__name__}: {str(exc) or 'bad format'}"
        raise CodecError(f"cannot unpack {_name_of(cls)}: not valid msgpack ({detail})") from exc
    return from_plain(plain, cls)


def pack_blocks(blocks: Blocks) -> bytes:
    """A message's content as msgpack bytes: a list of tagged block dicts."""
    return pack(blocks, Blocks)


def unpack_blocks(data: bytes) -> Blocks:
    """Content blocks from ``pack_blocks`` bytes."""
    blocks: Blocks = unpack(data, Blocks)
    return blocks


def to_json(value: Any, as_type: Any = None) -> str:
    """``value`` as compact JSON text (for text frames and HTTP)."""
    plain = to_plain(value, as_type)
    try:
        return json.dumps(plain, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        raise CodecError(f"cannot write {_type_name(value)} as JSON: {exc}") from exc


@overload
def from_json(text: str | bytes, cls: type[T]) -> T: ...
@overload
def from_json(text: str | bytes, cls: Any) -> Any: ...


def from_json(text: str | bytes, cls: Any) -> Any:
    """Read JSON text written by ``to_json`` back into a ``cls``."""
    try:
        plain = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise CodecError(f"cannot read {_name_of(cls)}: not valid JSON ({exc})") from exc
    return from_plain(plain, cls)
