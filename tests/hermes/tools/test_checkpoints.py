"""Checkpoints with real git: a turn's writes and an ``rm -rf``, rolled back and forward."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.bell import Bell
from hermes.tools import ToolCall, ToolContext, ToolOutcome, ToolRegistry, run_batch
from hermes.tools.checkpoint import CheckpointService, ShadowRepo, is_destructive


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def project(workdir: Path) -> Path:
    (workdir / "build" / "obj").mkdir(parents=True)
    (workdir / "build" / "obj" / "a.o").write_text("object\n")
    (workdir / "main.py").write_text("print('v1')\n")
    git(workdir, "init", "-q")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "project's own history")
    return workdir


@pytest.fixture
def service(tmp_path: Path) -> CheckpointService:
    return CheckpointService(root=tmp_path / "data" / "checkpoints")


def turn(ctx: ToolContext, service: CheckpointService) -> ToolContext:
    """A turn's context: its own interrupt event, checkpoints on, yolo for the rm."""
    ctx.approvals.yolo = True
    return attrs.evolve(ctx, interrupt=Bell(), services={CheckpointService: service})


async def call(registry: ToolRegistry, ctx: ToolContext, tool: str, **args: Any) -> ToolOutcome:
    with trio.fail_after(60):
        return await registry.call(ToolCall("c1", tool, args), ctx)


async def test_a_turn_of_ten_writes_and_rm_rf_build_is_rolled_back_and_forward(
    registry: ToolRegistry, ctx: ToolContext, project: Path, service: CheckpointService
) -> None:
    own_log = git(project, "log", "--oneline")
    now = turn(ctx, service)
    calls = [
        ToolCall(f"w{i}", "write_file", {"path": f"src/f{i}.py", "content": f"x = {i}\n"})
        for i in range(10)
    ]
    with trio.fail_after(60):
        results = await run_batch(calls, registry, now)
    assert all(not r.outcome.is_error for r in results)
    removed = await call(registry, now, "terminal", command="rm -rf build")
    assert not removed.is_error, removed.content
    assert not (project / "build").exists()

    listed = await service.list(project)
    assert len(listed) == 2
    assert listed[0].reason == "before terminal: rm -rf build"
    assert listed[1].reason.startswith("before write_file ")
    diff = await service.diff(project, 2)
    assert "src/f9.py" in diff and "build/obj/a.o" in diff

    target, before = await service.restore(project, 2)  # as it was before the turn
    assert target == listed[1] and before is not None
    assert (project / "build" / "obj" / "a.o").read_text() == "object\n"
    assert not (project / "src").exists()
    assert (project / "main.py").read_text() == "print('v1')\n"

    await service.restore(project, 1)  # the restore is itself checkpointed: undo it
    assert not (project / "build").exists()
    assert sorted(p.name for p in (project / "src").iterdir()) == [f"f{i}.py" for i in range(10)]
    # The project's own repository never saw any of it.
    assert git(project, "log", "--oneline") == own_log
    assert project not in service.root.parents


async def test_one_checkpoint_per_turn_and_none_without_the_service(
    registry: ToolRegistry, ctx: ToolContext, project: Path, service: CheckpointService
) -> None:
    off = await call(registry, ctx, "write_file", path="plain.txt", content="1\n")
    assert not off.is_error and not service.root.exists()  # off by default: no service
    first = turn(ctx, service)
    for i in range(3):
        await call(registry, first, "write_file", path=f"n{i}.txt", content="1\n")
    assert len(await service.list(project)) == 1
    second = turn(ctx, service)
    await call(registry, second, "patch", path="n0.txt", old_string="1", new_string="2")
    assert len(await service.list(project)) == 2
    quiet = await call(registry, second, "terminal", command="echo hi > n1.txt")
    assert not quiet.is_error and len(await service.list(project)) == 3
    await call(registry, second, "terminal", command="ls > /dev/null; cat n1.txt")
    assert len(await service.list(project)) == 3  # not destructive: no checkpoint


async def test_ignored_and_large_files_are_left_out_and_left_alone(
    registry: ToolRegistry, ctx: ToolContext, project: Path, tmp_path: Path
) -> None:
    service = CheckpointService(root=tmp_path / "cp", max_file_bytes=1_000)
    (project / ".gitignore").write_text("*.log\n")
    (project / "run.log").write_text("log line\n")
    (project / "blob.bin").write_bytes(b"\0" * 5_000)
    (project / ".env").write_text("API_KEY=sk-1\n")
    now = turn(ctx, service)
    await call(registry, now, "write_file", path="new.txt", content="n\n")
    repo = service.repo(project)
    files = repo.git("ls-tree", "-r", "--name-only", "HEAD").split()
    assert "main.py" in files and ".gitignore" in files
    assert not {"run.log", "blob.bin", ".env"} & set(files)
    assert "blob.bin" in repo.git("log", "-1", "--format=%B")  # said what was left out
    await service.restore(project, 1)
    assert not (project / "new.txt").exists()
    assert (project / "run.log").exists() and (project / "blob.bin").exists()


async def test_a_tree_too_large_is_not_snapshotted_and_the_write_still_happens(
    registry: ToolRegistry, ctx: ToolContext, project: Path, tmp_path: Path
) -> None:
    service = CheckpointService(root=tmp_path / "cp", max_files=1)
    done = await call(registry, turn(ctx, service), "write_file", path="x.txt", content="x\n")
    assert not done.is_error and (project / "x.txt").exists()
    assert await service.list(project) == []


def test_old_checkpoints_are_pruned_to_the_newest(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    repo = ShadowRepo.for_dir(tmp_path / "cp", work, keep=3)
    for i in range(14):
        (work / "f.txt").write_text(f"{i}\n")
        assert repo.snapshot(f"step {i}") is not None
    assert [c.reason for c in repo.list()] == ["step 13", "step 12", "step 11"]
    repo.restore(3)
    assert (work / "f.txt").read_text() == "11\n"


@pytest.mark.parametrize(
    ("command", "destructive"),
    [
        ("rm -rf build", True),
        ("sudo mv a b", True),
        ("sed -i s/a/b/ f", True),
        ("echo x > f", True),
        ("echo x >> f", False),
        ("make 2>&1 > /dev/null", False),
        ("git reset --hard", True),
        ("git status", False),
        ("cat f | tee out", True),
        ("tee -a log", False),
        ("find . -name '*.o' -delete", True),
        ("ls -la && pytest -q", False),
    ],
)
def test_which_commands_are_destructive(command: str, destructive: bool) -> None:
    assert is_destructive(command) is destructive


async def test_outside_the_working_directory_only_a_git_project_is_snapshotted(
    registry: ToolRegistry, ctx: ToolContext, project: Path, tmp_path: Path
) -> None:
    service = CheckpointService(root=tmp_path / "cp")
    loose = tmp_path / "loose"
    loose.mkdir()
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    git(other, "init", "-q")
    now = turn(ctx, service)
    await call(registry, now, "write_file", path=str(loose / "x.txt"), content="x\n")
    await call(registry, now, "write_file", path=str(other / "lib" / "y.txt"), content="y\n")
    assert await service.list(loose) == []
    assert len(await service.list(other)) == 1
    assert await service.list(project) == []  # nothing was written there
