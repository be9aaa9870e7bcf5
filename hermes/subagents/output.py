"""Structured output: find the child's JSON answer and check it against the schema.

The child is told to answer with one JSON value matching the schema. Its final
text may wrap it in a fenced block or put prose around it; ``extract_json``
takes the fenced block if there is one, else the text from the first ``{`` or
``[`` to the matching last bracket. ``check_output`` returns the parsed value
or the errors to send back (one retry, with the errors, in the same child).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from hermes.tools import ArgumentError, validate

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.DOTALL)


@attrs.frozen(slots=True)
class OutputCheck:
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def extract_json(text: str) -> str | None:
    """The JSON part of a reply, or None when there is none."""
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else None


def check_output(text: str, schema: Mapping[str, Any]) -> OutputCheck:
    """Parse and validate the child's answer against ``schema``."""
    raw = extract_json(text)
    if raw is None:
        return OutputCheck(error="the reply holds no JSON value")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return OutputCheck(error=f"the JSON does not parse: {exc}")
    try:
        if isinstance(value, dict) and schema.get("type", "object") == "object":
            checked: Any = validate(schema, value)
        else:  # a non-object answer: checked as the one field of a wrapper object
            wrapper = {"type": "object", "properties": {"answer": schema}, "required": ["answer"]}
            checked = validate(wrapper, {"answer": value})["answer"]
    except ArgumentError as exc:
        return OutputCheck(error=f"the JSON does not fit the schema: {exc}")
    return OutputCheck(value=checked)


def schema_instructions(schema: Mapping[str, Any]) -> str:
    """The system-prompt section that asks for structured output."""
    return (
        "# Output format\n\nEnd with a final reply that is only one JSON value (you may put it "
        "in a ```json block) matching this JSON schema:\n\n"
        + json.dumps(schema, indent=2, sort_keys=True)
    )


def retry_prompt(error: str, schema: Mapping[str, Any]) -> str:
    """The follow-up a child gets when its output did not fit."""
    return (
        f"Your final answer could not be used: {error}. Reply again with only one JSON value "
        "matching this schema, and nothing else:\n\n" + json.dumps(schema, sort_keys=True)
    )
