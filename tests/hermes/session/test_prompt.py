"""The three-tier system prompt and project context discovery (real files)."""

from __future__ import annotations

import datetime
from pathlib import Path

from hermes.model.convert import request_params
from hermes.model.types import Message, ModelRequest
from hermes.session import PromptParts, build_system_prompt, find_context_file
from hermes.session.prompt import CONTEXT_FILE_LIMIT

TODAY = datetime.date(2026, 11, 29)


def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    work = tmp_path / "pkg" / "sub"
    work.mkdir(parents=True)
    return work


def test_three_tiers_with_cache_breakpoints_after_stable_and_context(tmp_path: Path) -> None:
    work = repo(tmp_path)
    (work / "AGENTS.md").write_text("Run make test before committing.")
    blocks = build_system_prompt(
        PromptParts(
            cwd=work,
            today=TODAY,
            tool_guidance=("Use read_file before patch.",),
            caller_system="Answer in French.",
            memory_snapshot="The user prefers short answers.",
        )
    )
    stable, context, volatile = blocks
    assert stable.cache and "Hermes" in stable.text and "read_file before patch" in stable.text
    assert context.cache
    assert "Run make test before committing." in context.text
    assert context.text.endswith("Answer in French.")
    assert not volatile.cache
    assert "The user prefers short answers." in volatile.text
    assert "2026-11-29" in volatile.text


def test_same_inputs_give_byte_identical_requests(tmp_path: Path) -> None:
    work = repo(tmp_path)
    (work / "AGENTS.md").write_text("rules")
    parts = PromptParts(cwd=work, today=TODAY, caller_system="x")
    request = ModelRequest(
        model="m", system=build_system_prompt(parts), messages=(Message.user("hi"),)
    )
    again = ModelRequest(
        model="m", system=build_system_prompt(parts), messages=(Message.user("hi"),)
    )
    assert request_params(request, "m") == request_params(again, "m")


def test_no_context_tier_when_there_is_nothing_to_put_in_it(tmp_path: Path) -> None:
    blocks = build_system_prompt(PromptParts(cwd=tmp_path, today=TODAY))
    assert len(blocks) == 2
    assert blocks[0].cache and not blocks[1].cache


def test_hermes_md_wins_over_agents_md_and_is_found_up_to_the_git_root(tmp_path: Path) -> None:
    work = repo(tmp_path)
    (tmp_path / ".hermes.md").write_text("hermes rules")
    (work / "AGENTS.md").write_text("agents rules")
    found = find_context_file(work)
    assert found is not None
    assert found[0] == (tmp_path / ".hermes.md").resolve()
    assert found[1] == "hermes rules"


def test_agents_md_chain_runs_from_git_root_to_working_directory(tmp_path: Path) -> None:
    work = repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text("root rules")
    (work / "AGENTS.md").write_text("leaf rules")
    found = find_context_file(work)
    assert found is not None
    assert found[1] == "root rules\n\nleaf rules"


def test_claude_md_then_cursorrules_as_fallbacks(tmp_path: Path) -> None:
    (tmp_path / ".cursorrules").write_text("cursor rules")
    found = find_context_file(tmp_path)
    assert found is not None and found[1] == "cursor rules"
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    found = find_context_file(tmp_path)
    assert found is not None and found[1] == "claude rules"


def test_nothing_above_the_git_root_or_outside_a_repo_is_read(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("outside")
    inner = tmp_path / "project"
    (inner / ".git").mkdir(parents=True)
    assert find_context_file(inner) is None
    loose = tmp_path / "loose" / "dir"
    loose.mkdir(parents=True)
    assert find_context_file(loose) is None  # no repo: only the directory itself counts


def test_huge_context_files_are_cut_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("x" * (CONTEXT_FILE_LIMIT + 500))
    found = find_context_file(tmp_path)
    assert found is not None
    assert found[1].startswith("x" * CONTEXT_FILE_LIMIT)
    assert "[... 500 more characters of AGENTS.md cut]" in found[1]


def test_context_files_can_be_skipped(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("rules")
    blocks = build_system_prompt(PromptParts(cwd=tmp_path, today=TODAY, load_context_files=False))
    assert all("rules" not in b.text for b in blocks)
