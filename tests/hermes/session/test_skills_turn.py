"""Skills in a session: the index in the stable tier, skill_view in a turn, /skill-name,
and the delta note when the set changes mid-session (fake provider over real HTTP)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionDeps
from hermes.skills import SkillLibrary, SkillManageTool, SkillViewTool
from hermes.tools import ToolRegistry, default_registry

from .conftest import SessionFactory
from .helpers import system_text


def _skill(root: Path, name: str, description: str, body: str) -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    )


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    _skill(root, "release-notes", "Write release notes", "Group changes by area; FIXED-PHRASE-42.")
    return root


@pytest.fixture
def registry(skills_dir: Path) -> ToolRegistry:
    registry = default_registry()
    registry.register(SkillViewTool(SkillLibrary(skills_dir, bundled_dir=None)))
    return registry


@pytest.fixture
def deps(deps: SessionDeps, registry: ToolRegistry) -> SessionDeps:
    return attrs.evolve(deps, registry=registry)


def _user_texts(body: dict[str, object]) -> list[str]:
    texts = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(b.get("text", "") for b in content if b.get("type") == "text")
    return texts


async def test_the_model_views_a_skill_and_gets_its_body(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of("Loading the skill.", ToolUse("skill_view", {"name": "release-notes"})),
        Reply.of("Done, by area."),
    )
    with trio.fail_after(30):
        session = await open_session()
        result = await session.run("write the release notes")
    assert result.text == "Done, by area."
    first, second = fake.message_requests
    system = system_text(first.body)
    assert "- release-notes: Write release notes" in system
    assert "FIXED-PHRASE-42" not in system  # only the name and description are listed
    (tool_result,) = [
        b
        for m in second.body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    content = tool_result["content"]
    text = content if isinstance(content, str) else "".join(b["text"] for b in content)
    assert "FIXED-PHRASE-42" in text and not tool_result.get("is_error")
    assert system_text(second.body) == system  # the stable tier did not move


async def test_slash_skill_invokes_it_and_a_new_skill_brings_one_note(
    open_session: SessionFactory, fake: FakeProvider, skills_dir: Path
) -> None:
    fake.enqueue(Reply.of("one"), Reply.of("two"), Reply.of("three"))
    with trio.fail_after(30):
        session = await open_session()
        await session.run("/release-notes for v2")
        _skill(skills_dir, "triage", "Sort incoming bugs", "Label them.")
        await session.run("hello")
        await session.run("again")
    first, second, third = fake.message_requests
    invoked = _user_texts(first.body)[-1]
    assert invoked.startswith('[The person invoked the skill "release-notes".')
    assert "FIXED-PHRASE-42" in invoked and invoked.endswith("The person's request: for v2")
    noted = _user_texts(second.body)[-1]
    assert "- added: triage: Sort incoming bugs" in noted and noted.endswith("hello")
    assert "triage" not in system_text(second.body)  # the cached prompt is untouched
    assert _user_texts(third.body)[-1] == "again"  # the note was one-shot


async def test_a_skill_the_model_writes_is_announced_on_the_next_turn(
    open_session: SessionFactory, fake: FakeProvider, skills_dir: Path, registry: ToolRegistry
) -> None:
    tool = registry.get("skill_view")
    assert isinstance(tool, SkillViewTool)
    registry.register(SkillManageTool(tool.library))
    content = "---\nname: bisect\ndescription: Find the bad commit\n---\nUse git bisect run.\n"
    fake.enqueue(
        Reply.of(
            ToolUse("skill_manage", {"action": "create", "name": "bisect", "content": content})
        ),
        Reply.of("Saved."),
        Reply.of("ok"),
    )
    with trio.fail_after(30):
        session = await open_session()
        await session.run("that was hard; keep the recipe")
        await session.run("next")
    assert (skills_dir / "bisect" / "SKILL.md").read_text() == content
    last = fake.message_requests[-1]
    assert "- added: bisect: Find the bad commit" in _user_texts(last.body)[-1]
    assert "bisect" not in system_text(last.body)
