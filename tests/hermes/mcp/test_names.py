"""Tool names and schemas as the Messages API needs them (pure)."""

from __future__ import annotations

import re

from hermes.mcp.tools import MAX_NAME, schema_problem, shown_arguments, tool_name


def test_tool_names_are_namespaced_safe_and_short_enough() -> None:
    assert tool_name("github", "create_issue") == "mcp_github_create_issue"
    assert tool_name("fs", "read/file.v2") == "mcp_fs_read_file_v2"
    long = tool_name("srv", "x" * 100)
    assert len(long) == MAX_NAME and re.fullmatch(r"mcp_srv_x+_[0-9a-f]{8}", long)
    assert tool_name("srv", "x" * 100) != tool_name("srv", "x" * 101)  # the hash tells them apart


def test_schemas_the_api_refuses_are_named() -> None:
    assert schema_problem({"type": "object", "properties": {"a": {"type": "string"}}}) is None
    assert schema_problem([]) == "its input schema is not a JSON object"
    assert schema_problem({"type": "array"}) == "its input schema's type is not 'object'"
    assert schema_problem({"type": "object", "oneOf": []}) == (
        "its input schema uses oneOf at the top level"
    )
    problem = schema_problem({"type": "object", "properties": {"a": {"minLength": -1}}})
    assert problem is not None and problem.startswith("its input schema is not valid JSON Schema")


def test_arguments_shown_for_approval_hide_secret_named_values() -> None:
    shown = shown_arguments({"repo": "x", "api_token": "s3cret", "opts": {"password": "p"}})
    assert shown == '{"api_token": "***", "opts": {"password": "***"}, "repo": "x"}'
    assert shown_arguments({"text": "y" * 1000}).endswith("...")
    assert len(shown_arguments({"text": "y" * 1000})) == 600
