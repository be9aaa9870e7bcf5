"""Token estimates and a small prompt-cache simulation for usage reporting.

Tokens are estimated at about 4 bytes each. If the request carries
``cache_control`` markers, the prompt prefix (tools, then system blocks, then
message blocks, in that order) is hashed block by block, ignoring the markers
themselves. A marker *writes* its prefix to the cache; a later request whose
prefix matches a stored one up to some block boundary *reads* that much. So
the second turn of a conversation whose prefix is byte-stable reports
``cache_read_input_tokens > 0``, as the real API does. Entries never expire; the
store keeps the most recent ``capacity`` prefixes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

_CACHE_MARKER = b'"cache_control"'

_encode_sorted = json.JSONEncoder(sort_keys=True).encode
"""``json.dumps(value, sort_keys=True)`` with one encoder object for every call."""


def estimate_tokens(nbytes: int) -> int:
    """About 4 bytes per token, at least 1."""
    return max(1, nbytes // 4)


def _prefix_elements(body: dict[str, Any]) -> list[Any]:
    """The cacheable elements in API order: tools, system blocks, message blocks."""
    elements: list[Any] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        elements.extend(tools)
    system = body.get("system")
    if isinstance(system, list):
        elements.extend(system)
    elif isinstance(system, str):
        elements.append({"type": "text", "text": system})
    for msg in body.get("messages", ()):
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        role = msg.get("role")
        if isinstance(content, list):
            elements.extend({"role": role, "block": b} for b in content)
        else:
            elements.append({"role": role, "block": content})
    return elements


def _has_marker(element: Any) -> bool:
    if not isinstance(element, dict):
        return False
    if "cache_control" in element:
        return True
    block = element.get("block")
    return isinstance(block, dict) and "cache_control" in block


def _strip_marker(element: Any) -> Any:
    if not isinstance(element, dict):
        return element
    out = {k: v for k, v in element.items() if k != "cache_control"}
    block = out.get("block")
    if isinstance(block, dict) and "cache_control" in block:
        out["block"] = {k: v for k, v in block.items() if k != "cache_control"}
    return out


class PromptCache:
    """Remembers cached prompt prefixes and splits a request's input tokens."""

    def __init__(self, capacity: int = 4096, min_tokens: int = 0) -> None:
        self.capacity = capacity
        #: Prefixes shorter than this (in tokens) are not cached (the real API's
        #: minimum is 1024-4096 depending on the model; the fake defaults to 0).
        self.min_tokens = min_tokens
        self._store: dict[str, int] = {}

    def usage(self, body: dict[str, Any], raw_body: bytes) -> tuple[int, int, int]:
        """``(input_tokens, cache_creation_input_tokens, cache_read_input_tokens)``.

        ``input_tokens`` is the uncached remainder, as in the real API.
        """
        total = estimate_tokens(len(raw_body))
        if _CACHE_MARKER not in raw_body:
            return total, 0, 0
        running = hashlib.sha256()
        nbytes = 0
        read = 0
        last_mark = 0
        marks: list[tuple[str, int]] = []
        for element in _prefix_elements(body):
            marked = _has_marker(element)
            data = _encode_sorted(_strip_marker(element) if marked else element).encode()
            running.update(data)
            nbytes += len(data)
            tokens = min(total, estimate_tokens(nbytes))
            digest = running.hexdigest()
            if digest in self._store:
                read = tokens
            if marked and tokens >= self.min_tokens:
                last_mark = tokens
                marks.append((digest, tokens))
        for digest, tokens in marks:
            self._store.pop(digest, None)
            self._store[digest] = tokens
        while len(self._store) > self.capacity:
            del self._store[next(iter(self._store))]
        read = min(read, last_mark) if last_mark else 0
        creation = max(0, last_mark - read)
        return max(0, total - last_mark), creation, read
