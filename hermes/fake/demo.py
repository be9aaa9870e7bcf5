"""The built-in offline demo model: a small deterministic policy, used when nothing is scripted.

Rules, first match wins (the text checks look at the final user message only):

1. The final message carries ``tool_result`` blocks: summarise them, one line per
   result (tool name, first line of its output, "failed" if ``is_error``).
2. The user asks to do several things in parallel ("in parallel",
   "concurrently", "simultaneously", "at the same time") and ``delegate_task``
   is offered: call ``delegate_task`` with ``{"tasks": [{"goal": ...}, ...]}``,
   one task per item (items split on newlines, ``;``, ``,`` and " and ").
3. The user asks to list files ("list files", "list the files", "show files",
   "ls") and ``terminal`` is offered: call ``terminal`` with ``{"command": "ls"}``.
4. The user asks to read/open/show/cat a file with a path-like word (has a
   ``.`` or ``/``) and ``read_file`` is offered: call ``read_file`` with
   ``{"path": <that word>}``.
5. Otherwise answer in plain text, saying that this is the offline demo model,
   echoing the request and naming what it can do. If rule 2-4 matched but the
   tool is not offered, the answer says which tool is missing.

Every reply starts with a ``thinking`` block when the request enables thinking.
Text is cut at the first custom stop sequence (``stop_reason: stop_sequence``)
and at about ``4 * max_tokens`` characters (``stop_reason: max_tokens``).
"""

from __future__ import annotations

import re

from .request import MessagesRequest
from .script import Block, Reply, Text, Thinking, ToolUse

#: The name the demo model gives itself in every plain answer.
DEMO_NAME = "offline demo model"

_PARALLEL = re.compile(
    r"\b(?:in parallel|parallel|concurrently|simultaneously|at the same time|at once)\b", re.I
)
_LIST_FILES = re.compile(r"\b(?:list|show)\b[\w ]{0,20}?\bfiles?\b|\bls\b", re.I)
_READ_FILE = re.compile(r"\b(?:read|open|show|cat|print)\b", re.I)
_PATH = re.compile(r"(?<![\w/~.-])[\w~][\w./~-]*[./][\w./~-]*\w|/[\w./~-]*\w")
_SPLIT_TASKS = re.compile(r"\s*(?:\n|;|,|\band\b)\s*", re.I)
_BULLET = re.compile(r"^(?:[-*\u2022]|\d+[.)])\s+")
_FILLER = re.compile(r"^(?:please\s+|can you\s+|could you\s+|also\s+|then\s+)+", re.I)
_CHUNK_WORDS = 6


def _chunks(text: str) -> tuple[str, ...]:
    """Split ``text`` into deltas of about six words (their concatenation is ``text``)."""
    words = text.split(" ")
    if len(words) <= _CHUNK_WORDS:
        return (text,)
    pieces = [
        " ".join(words[i : i + _CHUNK_WORDS]) + " " for i in range(0, len(words), _CHUNK_WORDS)
    ]
    pieces[-1] = pieces[-1][:-1]
    return tuple(pieces)


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no output)"
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _result_text(result: dict[str, object]) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def split_tasks(text: str) -> list[str]:
    """The task list in a "do these in parallel" request (at least one task)."""
    body = text.split(":", 1)[1] if ":" in text else text
    body = _PARALLEL.sub(" ", body)
    tasks = []
    for part in _SPLIT_TASKS.split(body):
        part = _FILLER.sub("", _BULLET.sub("", part.strip(" .!?\t"))).strip(" .!?\t")
        if part:
            tasks.append(part)
    return tasks or [text.strip()]


def find_path(text: str) -> str | None:
    """The first path-like word (contains ``.`` or ``/``), without trailing punctuation."""
    m = _PATH.search(text)
    return m.group(0).rstrip(".,;:!?") if m else None


def _summary(req: MessagesRequest) -> str:
    names = req.tool_use_names()
    lines = [f"Here is what the tools returned ({DEMO_NAME}):"]
    for result in req.tool_results():
        tool_id = str(result.get("tool_use_id"))
        name = names.get(tool_id, "tool")
        status = "failed" if result.get("is_error") else "ok"
        lines.append(f"- {name} ({status}): {_first_line(_result_text(result))}")
    return "\n".join(lines)


def _plain(text: str, missing_tool: str | None) -> str:
    said = " ".join(text.split())
    if len(said) > 200:
        said = said[:197] + "..."
    if missing_tool is not None:
        return (
            f"I am the {DEMO_NAME} of Hermes on Trio, not Claude. I would use the "
            f"`{missing_tool}` tool for that, but this request does not offer it."
        )
    return (
        f"I am the {DEMO_NAME} of Hermes on Trio, not Claude: no API key is configured, "
        f'so I follow fixed rules. You said: "{said}". Ask me to list files, read a file, '
        "or do several things in parallel to see tool use."
    )


def _decide(req: MessagesRequest) -> tuple[str, list[Block]]:
    """The rule that fired and the blocks it produces (before limits and thinking)."""
    if req.tool_results():
        return "summarise tool results", [Text(_summary(req))]
    text = req.last_user_text()
    missing: str | None = None
    if _PARALLEL.search(text):
        if req.offers_tool("delegate_task"):
            tasks = split_tasks(text)
            return "delegate in parallel", [
                Text(f"I'll run {len(tasks)} task(s) in parallel with subagents."),
                ToolUse("delegate_task", {"tasks": [{"goal": t} for t in tasks]}),
            ]
        missing = "delegate_task"
    elif _LIST_FILES.search(text):
        if req.offers_tool("terminal"):
            return "list files", [
                Text("I'll list the files."),
                ToolUse("terminal", {"command": "ls"}),
            ]
        missing = "terminal"
    elif _READ_FILE.search(text) and (path := find_path(text)) is not None:
        if req.offers_tool("read_file"):
            return "read a file", [
                Text(f"I'll read {path}."),
                ToolUse("read_file", {"path": path}),
            ]
        missing = "read_file"
    return "plain answer", [Text(_plain(text, missing))]


def demo_reply(req: MessagesRequest, *, event_delay: float = 0.0) -> Reply:
    """The demo model's reply to ``req`` (deterministic: same request, same reply)."""
    rule, blocks = _decide(req)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    out: list[Block] = []
    budget = 4 * req.max_tokens
    for block in blocks:
        if isinstance(block, Text):
            text = block.text
            for seq in req.stop_sequences:
                cut = text.find(seq)
                if cut >= 0:
                    text, stop_reason, stop_sequence = text[:cut], "stop_sequence", seq
            if len(text) > budget:
                text, stop_reason, stop_sequence = text[:budget], "max_tokens", None
            block = Text(text, deltas=_chunks(text) if text else None)
            budget -= len(text)
        out.append(block)
        if stop_reason is not None:
            break
    if req.thinking_enabled:
        thought = f"The user wrote {len(req.last_user_text())} characters; demo rule: {rule}."
        out.insert(0, Thinking(thought, signature="demo-signature-" + rule.replace(" ", "-")))
    return Reply(
        tuple(out), stop_reason=stop_reason, stop_sequence=stop_sequence, event_delay=event_delay
    )
