"""The deterministic fallback summary, built from the messages without a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes.compression.marker import is_summary_block
from hermes.compression.render import result_text, shorten
from hermes.compression.summary import SECTIONS
from hermes.compression.tokens import json_text
from hermes.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

MAX_ACTIONS = 40
MAX_FILES = 40
MAX_COMMANDS = 15
MAX_ERRORS = 10
_FILE_KEYS = ("path", "file_path")
_COMMAND_KEYS = ("command", "cmd")
_ARG_KEYS = (*_FILE_KEYS, *_COMMAND_KEYS, "pattern", "query", "url", "name")
_SHARES = (0.15, 0.25, 0.30, 0.15, 0.15)
"""Each section's share of ``max_chars``, in ``SECTIONS`` order."""
_PROBLEM_WORDS = ("error", "fail", "cannot", "can't", "unable", "problem", "blocked", "stuck")


def _texts(message: Message) -> str:
    return "\n".join(
        b.text
        for b in message.content
        if isinstance(b, TextBlock) and not is_summary_block(b) and b.text.strip()
    ).strip()


def _short_args(tool_input: dict[str, Any]) -> str:
    for key in _ARG_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return shorten(" ".join(value.split()), 80)
    return shorten(json_text(tool_input), 80) if tool_input else ""


def _first_line(text: str, limit: int) -> str:
    stripped = text.strip()
    return shorten(stripped.splitlines()[0] if stripped else "(empty)", limit)


def _capped(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [f"- ({len(lines) - limit} earlier {what} omitted)", *lines[-limit:]]


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def static_summary(
    middle: Sequence[Message], previous_summary: str | None, *, max_chars: int = 8_000
) -> str:
    """A summary body under the usual headings, at most ``max_chars`` characters."""
    results = {
        b.tool_use_id: b for m in middle for b in m.content if isinstance(b, ToolResultBlock)
    }
    last_request = ""
    last_assistant = ""
    actions: list[str] = []
    errors: list[str] = []
    files: list[str] = []
    commands: list[str] = []
    for message in middle:
        text = _texts(message)
        if message.role == "user" and text:
            last_request = text
        elif message.role == "assistant" and text:
            last_assistant = text
        for block in message.content:
            if not isinstance(block, ToolUseBlock):
                continue
            result = results.get(block.id)
            if result is None:
                status = "no result"
            elif result.is_error:
                problem = _first_line(result_text(result), 160)
                status = f"error: {problem}"
                errors.append(f"- {block.name} failed: {problem}")
            else:
                status = "ok"
            actions.append(f"- {block.name}({_short_args(block.input)}) -> {status}")
            for key in _FILE_KEYS:
                value = block.input.get(key)
                if isinstance(value, str) and value.strip():
                    files.append(value.strip())
            for key in _COMMAND_KEYS:
                value = block.input.get(key)
                if isinstance(value, str) and value.strip():
                    commands.append(shorten(" ".join(value.split()), 120))

    open_items = _capped(errors, MAX_ERRORS, "errors")
    tail_words = last_assistant[-300:].lower()
    if last_assistant and (
        last_assistant.rstrip().endswith("?") or any(w in tail_words for w in _PROBLEM_WORDS)
    ):
        open_items.append(f"- The assistant's last words: {shorten(last_assistant, 600)}")

    touched = _capped([f"- file: {f}" for f in _unique(files)], MAX_FILES, "files")
    touched += _capped([f"- command: {c}" for c in _unique(commands)], MAX_COMMANDS, "commands")
    facts = ["(Built without a model: details of the removed messages are lost.)"]
    if last_assistant:
        facts.append(f"Last assistant note: {shorten(last_assistant, 800)}")
    if previous_summary and previous_summary.strip():
        quoted = "\n".join(f"> {line}" for line in previous_summary.strip().splitlines())
        facts.append("Earlier summary (kept, shortened, quoted):\n" + quoted)

    bodies = (
        last_request or "None.",
        "\n".join(_capped(actions, MAX_ACTIONS, "actions")) or "None.",
        "\n".join(facts),
        "\n".join(touched) or "None.",
        "\n".join(open_items) or "None.",
    )
    room = max_chars - sum(len(f"## {t}\n\n\n") for t in SECTIONS)
    text = "\n\n".join(
        f"## {title}\n{shorten(body, int(room * share))}"
        for title, body, share in zip(SECTIONS, bodies, _SHARES, strict=True)
    )
    return shorten(text, max_chars)
