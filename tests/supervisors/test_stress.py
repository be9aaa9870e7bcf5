"""Stress: a random supervision tree of 500+ actors under concurrent calls and injected crashes.

The tree (seeded ``random.Random``) nests ``Supervisor``s with mixed strategies and
a few ``DynamicSupervisor``s; leaf workers echo calls, crash on ``"crash"`` and now
and then on their own. Fifty clients call workers through ``ChildHandle``s while
a chaos task crashes workers and kills whole subtrees. Afterwards:

- every call resolved: a reply (from the right worker), ``ActorExited`` or
  ``CallTimeout``, none hung;
- no supervisor incarnation restarted more than its intensity within its period
  (from ``ChildRestarting`` / ``RestartFailed`` events stamped when published),
  and escalations are recorded (``Escalated`` plus the parent's ``ChildExited``);
- the tree recovers (every worker answers again), stops cleanly, and leaves no
  registry entry, no unkillable actor and no trio task behind.
"""

from __future__ import annotations

import itertools
import logging
import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from actors import (
    Actor,
    ActorExited,
    ActorRef,
    ActorStarted,
    ActorSystem,
    CallTimeout,
    ExitKind,
    open_system,
)
from supervisors import (
    ChildExited,
    ChildHandle,
    ChildNotFound,
    ChildRestartingEvent,
    ChildSpec,
    ChildState,
    ChildType,
    DynamicSupervisor,
    Escalated,
    RestartFailed,
    Strategy,
    Supervisor,
    SupervisorClient,
    gave_up,
)

CRASH = "crash"
GENEROUS = 100_000
"""Intensity no supervisor reaches in these tests."""
PERIOD = 5.0
CLIENTS = 50
CALLS_PER_CLIENT = 80
CALL_TIMEOUT = 0.5
SLOW = 0.7
"""A slow reply: beyond the call timeout, within a worker's shutdown budget (1 s)."""
HUNG_SLACK = 5.0
"""A call still pending this long after its timeout counts as hung."""


@attrs.define(eq=False)
class Shared:
    """What every worker incarnation shares: one seeded generator and the odds."""

    rng: random.Random
    p_crash: float
    p_slow: float


class Boom(Exception):
    """A worker crash (injected or random)."""


class Worker(Actor):
    """Echoes ``("echo", value)`` with its path; crashes on ``"crash"`` or at random.

    Now and then it is also slower than the clients' call timeout.
    """

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    async def receive(self, message: Any) -> Any:
        if message == CRASH:
            raise Boom(f"{self.ctx.path}: injected crash")
        kind, value = message
        assert kind == "echo"
        draw = self.shared.rng.random()
        if draw < self.shared.p_crash:
            raise Boom(f"{self.ctx.path}: random crash")
        if draw > 1 - self.shared.p_slow:
            await trio.sleep(SLOW)
        return self.ctx.path, value


@pytest.fixture(autouse=True)
def quiet_logs() -> Iterator[None]:
    """Thousands of crashes: keep only errors (escalations) in the captured log."""
    loggers = [logging.getLogger(name) for name in ("actors", "supervisors")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


# -- the random tree ------------------------------------------------------------------


@attrs.define(eq=False)
class Node:
    name: str
    kind: str
    """``sup``, ``dyn`` or ``worker``."""
    path: str
    strategy: Strategy = Strategy.ONE_FOR_ONE
    intensity: int = GENEROUS
    period: float = PERIOD
    children: list[Node] = attrs.Factory(list)
    dynamic: int = 0
    """Children a dynamic supervisor gets through ``start_child`` once the tree is up."""


@attrs.define(eq=False)
class Tree:
    root: Node
    supervisors: dict[str, Node]
    """Absolute path -> supervisor node (static and dynamic, root included)."""
    workers: list[tuple[str, ...]]
    """Each worker as the child ids below the root, dynamic children included."""
    actors: int

    def static_subsupervisors(self) -> list[Node]:
        return [n for n in self.supervisors.values() if n.kind == "sup" and n is not self.root]


def build_tree(rng: random.Random, min_actors: int = 520) -> Tree:
    names = itertools.count(1)
    root = Node("root", "sup", "/root")
    supervisors = {root.path: root}
    total = 1

    def add(parent: Node, kind: str, prefix: str, **fields: Any) -> Node:
        nonlocal total
        name = f"{prefix}{next(names)}"
        node = Node(name, kind, f"{parent.path}/{name}", **fields)
        parent.children.append(node)
        total += 1
        if kind != "worker":
            supervisors[node.path] = node
        return node

    def grow(node: Node, depth: int) -> None:
        for _ in range(rng.randint(2, 7)):
            if depth < 4 and rng.random() < 0.4:
                grow(add(node, "sup", "s", strategy=rng.choice(list(Strategy))), depth + 1)
            else:
                add(node, "worker", "w")

    while total < min_actors - 60:
        grow(add(root, "sup", "s", strategy=rng.choice(list(Strategy))), 2)
        if rng.random() < 0.3:
            add(root, "worker", "w")
    for _ in range(3):
        dyn = add(root, "dyn", "d", dynamic=rng.randint(12, 20))
        total += dyn.dynamic

    workers: list[tuple[str, ...]] = []

    def collect(node: Node, prefix: tuple[str, ...]) -> None:
        for child in node.children:
            here = (*prefix, child.name)
            if child.kind == "worker":
                workers.append(here)
            elif child.kind == "dyn":
                workers.extend((*here, f"dw{i}") for i in range(child.dynamic))
            else:
                collect(child, here)

    collect(root, ())
    return Tree(root, supervisors, workers, total)


def spec_for(node: Node, shared: Shared) -> ChildSpec:
    if node.kind == "worker":
        return ChildSpec(node.name, Worker, args=(shared,), shutdown=1.0)
    factory = make_dynamic if node.kind == "dyn" else make_supervisor
    return ChildSpec(node.name, factory, args=(node, shared), type=ChildType.SUPERVISOR)


def make_supervisor(node: Node, shared: Shared) -> Supervisor:
    return Supervisor(
        [spec_for(child, shared) for child in node.children],
        strategy=node.strategy,
        intensity=node.intensity,
        period=node.period,
    )


def make_dynamic(node: Node, shared: Shared) -> DynamicSupervisor:
    template = ChildSpec("dw", Worker, args=(shared,), shutdown=1.0)
    return DynamicSupervisor(template, intensity=node.intensity, period=node.period)


# -- clients ------------------------------------------------------------------------------


class Directory:
    """Finds a worker's ``ChildHandle`` by walking ``SupervisorClient.child`` from the root.

    Handles are cached and looked up again once their supervisor incarnation is
    gone (the handle is then ``stopped``).
    """

    def __init__(self, root: ActorRef, stats: Counter[str]) -> None:
        self.root = root
        self.stats = stats
        self._cache: dict[tuple[str, ...], ChildHandle] = {}

    def forget(self, segments: tuple[str, ...]) -> None:
        self._cache.pop(segments, None)

    async def handle(self, segments: tuple[str, ...]) -> ChildHandle | None:
        cached = self._cache.get(segments)
        if cached is not None and cached.state is not ChildState.STOPPED:
            return cached
        self._cache.pop(segments, None)
        ref: ActorRef | None = self.root
        handle: ChildHandle | None = None
        for segment in segments:
            if ref is None:  # an intermediate supervisor is restarting
                self.stats["lookup_restarting"] += 1
                return None
            try:
                handle = await SupervisorClient(ref, timeout=CALL_TIMEOUT).child(segment)
            except (ActorExited, CallTimeout, ChildNotFound) as exc:
                self.stats[f"lookup_{type(exc).__name__}"] += 1
                return None
            ref = handle.ref
        assert handle is not None
        self._cache[segments] = handle
        return handle

    async def wait_handle(self, segments: tuple[str, ...], patience: float) -> ChildHandle | None:
        with trio.move_on_after(patience):
            while True:
                handle = await self.handle(segments)
                if handle is not None:
                    return handle
                await trio.sleep(0.005)
        return None


@attrs.define
class CallLog:
    made: int = 0
    replies: int = 0
    exited: int = 0
    timeouts: int = 0
    hung: int = 0
    unroutable: int = 0
    misrouted: list[Any] = attrs.Factory(list)


async def client(index: int, tree: Tree, directory: Directory, seed: int, calls: CallLog) -> None:
    rng = random.Random(seed)
    made = 0
    while made < CALLS_PER_CLIENT:
        segments = rng.choice(tree.workers)
        handle = await directory.wait_handle(segments, 1.0)
        if handle is None:
            calls.unroutable += 1
            continue
        made += 1
        calls.made += 1
        token = (index, made)
        with trio.move_on_after(CALL_TIMEOUT + HUNG_SLACK) as guard:
            try:
                path, echoed = await handle.call(("echo", token), timeout=CALL_TIMEOUT)
            except ActorExited:
                calls.exited += 1
                if handle.state is ChildState.STOPPED:
                    directory.forget(segments)
            except CallTimeout:
                calls.timeouts += 1
            else:
                calls.replies += 1
                if (path, echoed) != (handle.path, token):
                    calls.misrouted.append((handle.path, token, path, echoed))
        if guard.cancelled_caught:
            calls.hung += 1
        await trio.sleep(rng.uniform(0, 0.03))


async def chaos(
    tree: Tree,
    directory: Directory,
    rng: random.Random,
    stats: Counter[str],
    targets: list[tuple[str, ...]] | None = None,
    kill_every: int = 25,
) -> None:
    """Crash random workers (half of the time one of ``targets``) and kill subtrees."""
    subtrees = [tuple(node.path.split("/")[2:]) for node in tree.static_subsupervisors()]
    for tick in itertools.count(1):
        await trio.sleep(rng.uniform(0.001, 0.004))
        if tick % kill_every == 0:
            handle = await directory.handle(rng.choice(subtrees))
            ref = handle.ref if handle is not None else None
            if ref is not None:
                reason = await ref.kill()
                stats[f"subtree_kill_{reason.kind.value}"] += 1
            continue
        pool = targets if targets and rng.random() < 0.5 else tree.workers
        handle = await directory.handle(rng.choice(pool))
        if handle is not None and await handle.cast(CRASH):
            stats["crashes_injected"] += 1


# -- checks ---------------------------------------------------------------------------------


@contextmanager
def stamped_events(system: ActorSystem) -> Iterator[list[tuple[float, Any]]]:
    """Every event published on the bus, with the trio time at which it was published."""
    stamped: list[tuple[float, Any]] = []
    with system.events.subscribe(capacity=1) as sub:
        # The bus offers each event synchronously as it is published: stamp it there.
        sub.offer = lambda event: stamped.append((trio.current_time(), event))  # type: ignore[method-assign]
        yield stamped


def restarts_by_incarnation(
    stamped: list[tuple[float, Any]],
) -> dict[tuple[str, int], list[tuple[float, Any]]]:
    """(supervisor path, incarnation) -> its restart decisions and escalations, in order.

    ``ActorStarted`` is published when a cell is spawned, before it runs, so it
    separates the events of one incarnation from those of the next.
    """
    incarnation: Counter[str] = Counter()
    out: dict[tuple[str, int], list[tuple[float, Any]]] = defaultdict(list)
    for at, event in stamped:
        if isinstance(event, ActorStarted):
            incarnation[event.path] += 1
        elif isinstance(event, ChildRestartingEvent | RestartFailed | Escalated):
            out[(event.supervisor, incarnation[event.supervisor])].append((at, event))
    return out


def check_intensity(tree: Tree, stamped: list[tuple[float, Any]]) -> None:
    """No incarnation restarted more than ``intensity`` times within ``period``."""
    for (path, number), events in restarts_by_incarnation(stamped).items():
        node = tree.supervisors[path]
        times = [at for at, e in events if not isinstance(e, Escalated)]
        for i, at in enumerate(times):
            in_window = sum(1 for earlier in times[: i + 1] if earlier > at - node.period)
            assert in_window <= node.intensity, (path, number, in_window, node.intensity)
        escalations = [e for _, e in events if isinstance(e, Escalated)]
        assert len(escalations) <= 1, (path, number, escalations)
        if escalations:
            # It gave up on the restart after the last one allowed, and did nothing after.
            assert isinstance(events[-1][1], Escalated), (path, number)
            assert len(times) == node.intensity, (path, number, len(times))


def count_tasks() -> int:
    def walk(task: trio.lowlevel.Task) -> int:
        return 1 + sum(
            walk(child) for nursery in task.child_nurseries for child in nursery.child_tasks
        )

    return walk(trio.lowlevel.current_root_task())


async def settle_tasks(baseline: int, patience: float = 5.0) -> int:
    """The task count once exiting tasks (child hosts closing) are done."""
    with trio.move_on_after(patience):
        while count_tasks() != baseline:
            await trio.testing.wait_all_tasks_blocked(cushion=0.01)
            if count_tasks() != baseline:
                await trio.sleep(0.05)
    return count_tasks()


async def every_worker_answers(tree: Tree, directory: Directory) -> int:
    """Call every worker until it replies; returns how many attempts that took."""
    attempts = 0
    for segments in tree.workers:
        while True:
            attempts += 1
            handle = await directory.wait_handle(segments, 5.0)
            assert handle is not None, f"worker {'/'.join(segments)} cannot be found"
            try:
                path, _ = await handle.call(("echo", "final"), timeout=1.0)
            except (ActorExited, CallTimeout):
                directory.forget(segments)
                continue
            assert path == handle.path
            break
    return attempts


# -- the tests ------------------------------------------------------------------------------


async def run_stress(seed: int, tight: int | None = None) -> dict[str, Any]:
    """Build, stress, verify and stop one random tree; returns what happened."""
    rng = random.Random(seed)
    tree = build_tree(rng)
    tight_node: Node | None = None
    targets: list[tuple[str, ...]] | None = None
    if tight is not None:
        # A supervisor below the root with direct workers gets a tight intensity.
        candidates = [
            n
            for n in tree.static_subsupervisors()
            if n.path.count("/") >= 3 and sum(c.kind == "worker" for c in n.children) >= 2
        ]
        tight_node = rng.choice(candidates)
        tight_node.intensity, tight_node.period = tight, 60.0
        base = tuple(tight_node.path.split("/")[2:])
        targets = [(*base, c.name) for c in tight_node.children if c.kind == "worker"]
    shared = Shared(random.Random(seed + 1), p_crash=0.01, p_slow=0.004)
    outside = count_tasks()
    calls = CallLog()
    stats: Counter[str] = Counter()
    async with open_system("stress", kill_grace=1.0, call_timeout=20.0) as system:
        baseline = await settle_tasks(count_tasks())
        with stamped_events(system) as stamped:
            root = await system.spawn(make_supervisor(tree.root, shared), name="root")
            top = SupervisorClient(root, timeout=5.0)
            for node in tree.root.children:
                if node.kind == "dyn":
                    dyn_ref = (await top.child(node.name)).ref
                    assert dyn_ref is not None
                    dyn = SupervisorClient(dyn_ref)
                    for i in range(node.dynamic):
                        assert await dyn.start_child(name=f"dw{i}") is not None
            assert len(system.registry) == tree.actors >= 500

            directory = Directory(root, stats)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(chaos, tree, directory, random.Random(seed + 2), stats, targets)
                async with trio.open_nursery() as clients:
                    for index in range(CLIENTS):
                        clients.start_soon(
                            client, index, tree, directory, seed * 1000 + index, calls
                        )
                nursery.cancel_scope.cancel()

            stats["final_attempts"] = await every_worker_answers(tree, directory)
            assert root.is_alive
            assert len(system.registry) == tree.actors
            which = await top.which_children()
            reason = await root.stop()

        assert reason.kind is ExitKind.SHUTDOWN
        assert len(system.registry) == 0
        assert system.unkillable() == []
        assert await settle_tasks(baseline) == baseline
    assert count_tasks() == outside

    # Every call resolved one way or another, from the worker it was meant for.
    assert calls.made == CLIENTS * CALLS_PER_CLIENT
    assert calls.replies + calls.exited + calls.timeouts == calls.made
    assert calls.hung == 0
    assert calls.misrouted == []
    assert calls.replies > calls.made // 2
    assert stats["crashes_injected"] > 100

    # Restart limits, checked against the events as published.
    check_intensity(tree, stamped)
    restarts = Counter(
        e.child_id
        for _, e in stamped
        if isinstance(e, ChildRestartingEvent) and e.supervisor == "/root"
    )
    # The root (one_for_one, never restarted) restarted exactly what it announced.
    assert {c.id: c.restarts for c in which} == {
        n.name: restarts[n.name] for n in tree.root.children
    }
    assert not any(
        isinstance(e, ActorStarted) and e.path == "/root" and e.restarts for _, e in stamped
    )
    return {
        "tree": tree,
        "tight": tight_node,
        "calls": calls,
        "stats": stats,
        "stamped": stamped,
    }


async def test_random_tree_of_500_actors_survives_chaos_within_its_intensity() -> None:
    with trio.fail_after(60):
        result = await run_stress(seed=20240611)
    tree: Tree = result["tree"]
    stamped: list[tuple[float, Any]] = result["stamped"]
    assert {n.strategy for n in tree.static_subsupervisors()} == set(Strategy)
    assert sum(n.kind == "dyn" for n in tree.supervisors.values()) == 3
    # Generous intensities: nothing escalated, yet plenty was restarted.
    assert [e for _, e in stamped if isinstance(e, Escalated)] == []
    assert sum(isinstance(e, ChildRestartingEvent) for _, e in stamped) > 100
    assert result["stats"]["subtree_kill_cancelled"] > 0


async def test_tight_intensity_in_the_tree_escalates_visibly_and_the_parent_recovers() -> None:
    with trio.fail_after(60):
        result = await run_stress(seed=77, tight=1)
    tight: Node = result["tight"]
    stamped: list[tuple[float, Any]] = result["stamped"]
    escalated = [e for _, e in stamped if isinstance(e, Escalated)]
    # Only the tight supervisor gave up, and it did so (more than once, under this chaos).
    assert escalated
    assert {e.supervisor for e in escalated} == {tight.path}
    for event in escalated:
        assert len(event.history) == tight.intensity + 1
    # Its parent saw each escalation as a shutdown exit of a supervisor that gave up ...
    parent_path = tight.path.rsplit("/", 1)[0]
    seen = [
        e.reason
        for _, e in stamped
        if isinstance(e, ChildExited)
        and e.supervisor == parent_path
        and e.child_id == tight.name
        and gave_up(e.reason)
    ]
    assert seen
    assert len(seen) <= len(escalated)
    for reason in seen:
        assert reason.kind is ExitKind.SHUTDOWN and reason.error is None
    # ... and started it again.
    restarted = [
        e
        for _, e in stamped
        if isinstance(e, ChildRestartingEvent)
        and e.supervisor == parent_path
        and e.child_id == tight.name
    ]
    assert restarted
