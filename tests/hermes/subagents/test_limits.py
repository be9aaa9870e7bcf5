"""Spawn checks in order, concurrency limits and the admission queue (issue items 1, 2)."""

from __future__ import annotations

import trio

from hermes.fake import FakeProvider, Reply
from hermes.store import StoreClient
from hermes.subagents import (
    AtCapacity,
    DepthLimit,
    ParentSlots,
    SpawnGate,
    SpawningPaused,
    SubagentConfig,
    SubagentQueued,
    SubagentStarted,
    Ticket,
    parse_batch,
    placeholder_problem,
)
from hermes.subagents.service import spawn_checks
from supervisors import Admission

from .conftest import Parent, child_of, script_parent
from .test_delegate import parent_result_text


async def test_spawn_checks_run_in_order_pause_then_depth_then_the_batch(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    script_parent(fake, {"tasks": [{"goal": "task 1"}, {"goal": "{goal}"}]})
    parent, runtime = await open_parent()
    runtime.pause()
    with trio.fail_after(10):
        await parent.run("go")
    assert "paused by the operator" in parent_result_text(fake)

    runtime.resume()
    fake.script.clear()
    script_parent(fake, {"tasks": [{"goal": "task 1"}, {"goal": "check {goal} now"}]})
    with trio.fail_after(10):
        await parent.run("again")
    text = parent_result_text(fake)
    assert "task 1: the goal 'task 1' is a placeholder" in text
    assert "task 2: the goal holds an unexpanded template '{goal}'" in text
    assert await store.list_sessions(parent_id=parent.id) == []  # nothing started


def test_depth_is_checked_after_the_pause_and_before_the_batch() -> None:
    config = SubagentConfig(max_depth=2)
    gate = SpawnGate(10, 10)
    spawn_checks(gate, config, 1)  # a child at depth 1 of 2 may orchestrate
    try:
        spawn_checks(gate, config, 2)
    except DepthLimit as error:
        assert "depth 2 of at most 2" in str(error)
    else:
        raise AssertionError("depth 2 of 2 delegated")
    gate.paused = True
    try:
        spawn_checks(gate, config, 2)
    except SpawningPaused:
        pass
    else:
        raise AssertionError("the pause is not checked first")


def test_placeholder_goals_and_templates_are_refused_real_goals_pass() -> None:
    for bad in (
        "task 1",
        "Task #2",
        "TODO",
        "...",
        "goal",
        "  ",
        "do {task} now",
        "{{ item }}",
        "${TASK}",
        "<goal>",
        "[insert goal here]",
        "ab",
    ):
        assert placeholder_problem(bad) is not None, bad
    for good in ("count the files in src", "test the parser on empty input", "task: fix bug #12"):
        assert placeholder_problem(good) is None, good
    tasks = parse_batch(
        {
            "tasks": [{"goal": "read a.txt", "toolsets": ["file"]}, {"goal": "read b.txt"}],
            "toolsets": ["terminal"],
            "output_schema": {"type": "object"},
        },
        max_batch=5,
    )
    assert [t.toolsets for t in tasks] == [("file",), ("terminal",)]
    assert all(t.output_schema == {"type": "object"} for t in tasks)


async def test_at_most_max_concurrent_children_run_and_the_rest_start_in_order(
    fake: FakeProvider, open_parent: Parent
) -> None:
    for name in ("one", "two", "three", "four"):
        fake.when(Reply.of(f"{name} done", delay=0.15), predicate=child_of(f"job {name}"))
    goals = [{"goal": f"run job {n}"} for n in ("one", "two", "three", "four")]
    script_parent(fake, {"tasks": goals})
    parent, runtime = await open_parent(max_concurrent_children=2)
    with parent.subscribe() as sub, trio.fail_after(10):
        await parent.run("go")
        events = sub.drain()
    queued = [e.payload for e in events if isinstance(e.payload, SubagentQueued)]
    assert [q.position for q in queued] == [1, 2]
    assert [q.goal for q in queued] == ["run job three", "run job four"]
    started = [e.payload for e in events if isinstance(e.payload, SubagentStarted)]
    assert [s.goal for s in started] == [g["goal"] for g in goals]
    assert started[0].waited == 0 and started[2].waited >= 0.1
    # Never more than two children's requests in flight at once.
    spans = sorted(
        (r.started_monotonic, r.ended_monotonic)
        for r in fake.message_requests
        if "job" in str(r.body["system"])
    )
    for start, _ in spans:
        assert sum(1 for s, e in spans if s <= start < e) <= 2
    assert "4 completed" in parent_result_text(fake)
    assert runtime.gate.running == 0 and runtime.gate.queued == 0


async def test_the_daemon_wide_cap_holds_across_parents(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Reply.of("a done", delay=0.2), predicate=child_of("first parent job"))
    fake.when(Reply.of("b done"), predicate=child_of("second parent job"))
    first, runtime = await open_parent(max_total_children=1)
    second, _ = await open_parent(runtime=runtime)
    script_parent(fake, {"goal": "first parent job"})
    with trio.fail_after(10):
        await first.prompt("go")
        while runtime.gate.running == 0:  # noqa: ASYNC110 - polling a counter
            await trio.sleep(0.01)
        fake.script.clear()
        fake.when(Reply.of("a done", delay=0.2), predicate=child_of("first parent job"))
        fake.when(Reply.of("b done"), predicate=child_of("second parent job"))
        script_parent(fake, {"goal": "second parent job"})
        with second.subscribe() as sub:
            await second.run("go")
            events = sub.drain()
    queued = [e.payload for e in events if isinstance(e.payload, SubagentQueued)]
    started = [e.payload for e in events if isinstance(e.payload, SubagentStarted)]
    assert len(queued) == 1 and queued[0].position == 1
    assert started[0].waited > 0.05
    assert runtime.gate.high_water == 1


async def test_reject_admission_refuses_a_batch_that_does_not_fit_and_starts_nothing(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    script_parent(fake, {"tasks": [{"goal": f"reject case {i}"} for i in range(3)]})
    parent, runtime = await open_parent(max_concurrent_children=2, admission="reject")
    with trio.fail_after(10):
        await parent.run("go")
    assert "admission is set to reject" in parent_result_text(fake)
    assert await store.list_sessions(parent_id=parent.id) == []
    assert runtime.gate.running == 0


def test_the_gate_is_fifo_across_parents_and_bounded() -> None:
    async def main() -> None:
        gate = SpawnGate(capacity=2, queue_capacity=3)
        a, b = ParentSlots(1), ParentSlots(5)
        admitted: list[str] = []

        def ticket(key: str, parent: ParentSlots) -> Ticket:
            return Ticket(key, parent, lambda t: admitted.append(t.key) is None)

        a1, a2, b1, b2, b3 = (
            ticket("a1", a),
            ticket("a2", a),
            ticket("b1", b),
            ticket("b2", b),
            ticket("b3", b),
        )
        assert gate.submit([a1, a2]) == [a2]  # a's own limit is 1
        assert gate.submit([b1, b2]) == [b2]  # the daemon's is 2
        assert gate.position(a2) == 1 and gate.position(b2) == 2
        try:
            gate.submit([b3, ticket("b4", b)])
        except AtCapacity as error:
            assert "queue is full" in str(error)
        else:
            raise AssertionError("the queue overflowed")
        gate.release(b1)  # a slot frees: a2 is first but a is full, so b2 goes
        assert admitted == ["b2"]
        gate.release(a1)
        assert admitted == ["b2", "a2"]
        gate.withdraw(b3)
        assert gate.running == 2 and gate.queued == 0
        reject = SpawnGate(capacity=1, queue_capacity=3, admission=Admission.REJECT)
        reject.submit([ticket("r1", b)])
        try:
            reject.submit([ticket("r2", b)])
        except AtCapacity:
            pass
        else:
            raise AssertionError("reject admission queued")

    trio.run(main)
