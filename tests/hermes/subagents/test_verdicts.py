"""The pure verdict rules: how a task ended, and when a running child is stale."""

from __future__ import annotations

import trio

from hermes.session import TurnEnd
from hermes.subagents.config import SubagentConfig
from hermes.subagents.driver import RunOutcome
from hermes.subagents.progress import Progress
from hermes.subagents.results import TaskStatus
from hermes.subagents.verdicts import liveness_verdict, task_verdict


def test_task_verdicts_follow_the_last_turn() -> None:
    done = RunOutcome(TurnEnd.COMPLETED, text="all done")
    assert task_verdict(done, has_schema=False) == (TaskStatus.COMPLETED, "")
    empty = RunOutcome(TurnEnd.COMPLETED, text="  ")
    assert task_verdict(empty, has_schema=False)[0] is TaskStatus.FAILED
    bad = RunOutcome(TurnEnd.COMPLETED, text="x", output_error="missing 'name'")
    assert task_verdict(bad, has_schema=True) == (
        TaskStatus.COMPLETED,
        "schema_valid: false, its output still did not fit the schema after the retry: "
        "missing 'name'; the raw text is the summary",
    )
    capped = RunOutcome(TurnEnd.MAX_ITERATIONS, text="partial", detail="budget spent")
    assert task_verdict(capped, has_schema=False) == (
        TaskStatus.COMPLETED,
        "truncated: budget spent; its summary may be partial",
    )
    silent = RunOutcome(TurnEnd.MAX_ITERATIONS, detail="budget spent")
    assert task_verdict(silent, has_schema=False)[0] is TaskStatus.FAILED
    stopped = RunOutcome(TurnEnd.CANCELLED, detail="stopped")
    assert task_verdict(stopped, has_schema=False)[0] is TaskStatus.INTERRUPTED
    assert task_verdict(None, has_schema=False) == (
        TaskStatus.FAILED,
        "the child ended before it ran",
    )
    broken = RunOutcome(None, detail="its driver failed: ValueError: boom")
    assert task_verdict(broken, has_schema=False) == (
        TaskStatus.FAILED,
        "its driver failed: ValueError: boom",
    )


async def test_liveness_verdicts_stalled_between_and_inside_tools_and_timed_out() -> None:
    config = SubagentConfig(stale_between_tools=10.0, stale_in_tool=100.0, child_timeout=50.0)
    progress = Progress()
    now = trio.current_time()
    progress.last_progress = now - 5.0
    assert liveness_verdict(progress, now - 5.0, now, config) is None
    progress.last_progress = now - 11.0
    stalled = liveness_verdict(progress, now - 11.0, now, config)
    assert stalled is not None and stalled[0] is TaskStatus.STALLED
    assert "between tools (limit 10s)" in stalled[1]
    progress.tools_running, progress.current_tool = 1, "terminal"
    assert liveness_verdict(progress, now - 11.0, now, config) is None  # a tool may take 100 s
    progress.last_progress = now - 1.0
    late = liveness_verdict(progress, now - 51.0, now, config)
    assert late is not None and late[0] is TaskStatus.TIMED_OUT and "cap of 50s" in late[1]
