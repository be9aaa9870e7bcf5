"""Each child of a session's subtree crashes; the outcome is the one ``tree.POLICY`` says.

A supervised session (as the daemon runs it: restarted by its supervisor on the
same transcript and event hub) over the fake provider, a real store, real tools
and real processes. Crashes are real: a model client that raises inside the
turn or the compressor, a tool that raises, and actors killed by ref with an
error (``InjectedCrash``), the way an operator's ``hermes kill`` or a bug would
end them. Outcomes are read through the session's handle, events and store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorRef, ActorSystem, ExitReason, open_system
from hermes.fake import ErrorReply, FakeProvider, Hang, Reply, ToolUse
from hermes.memory import MemoryStore, MemoryTool
from hermes.model import EventSink, ModelClient, ModelRequest, ModelResponse
from hermes.review import ReviewSettings
from hermes.session import SessionConfig, SessionDeps, SessionHandle, TurnEnd
from hermes.session import events as ev
from hermes.session.session import SessionActor
from hermes.session.tree import POLICY, SERVICES_INTENSITY
from hermes.store import StoreClient, Transcript, spawn_store
from hermes.subagents import SubagentConfig, SubagentRuntime, with_delegation
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, default_registry
from supervisors import ChildSpec, Supervisor, SupervisorClient

from ..fake_model import KEY, SCRIPTED, fast_retry, open_fake
from .compaction.conftest import (
    AUX,
    MAX_TOKENS,
    SETTINGS,
    WINDOW,
    four_turns_then_big,
    is_summary,
    small,
)
from .control_helpers import next_event
from .helpers import assert_valid, results_by_id
from .review.conftest import is_review

MODEL = "claude-test"
SESSION_ID = "crashes"
CRASH = "CRASH-THE-TURN"
"""A prompt holding this makes the model client raise inside the turn."""


class InjectedCrash(Exception):
    """What the tests kill actors with."""


class CrashingClient(ModelClient):
    """A real client that raises ``RuntimeError`` (no ``ModelError``) for picked requests:
    a bug in the caller's path, which neither the turn nor the compressor catches."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crash_if: Callable[[ModelRequest], bool] = lambda request: False

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.crash_if(request):
            raise RuntimeError(f"a bug in the client ({request.model})")
        return await super().complete(request, on_event)


class RaisingTool(Tool):
    """A tool with a bug."""

    name = "raises"
    description = "Raises (test tool)."
    kind = ToolKind.OTHER

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        raise ValueError("a bug in the tool")


@attrs.define
class World:
    system: ActorSystem
    fake: FakeProvider
    client: CrashingClient
    store: StoreClient
    handle: SessionHandle
    incarnations: list[SessionActor]
    memory: MemoryStore

    path: str
    """The session actor's path (the same across its restarts; while it restarts the
    handle has no ref to read it from)."""

    def lookup(self, below: str) -> ActorRef | None:
        return self.system.lookup(f"{self.path}/{below}")

    async def wait_for(self, below: str, other_than: ActorRef | None = None) -> ActorRef:
        """The actor at ``below`` once it exists (and is not ``other_than``)."""
        while True:
            ref = self.lookup(below)
            if ref is not None and ref != other_than and ref.is_alive:
                return ref
            await trio.sleep(0.01)

    async def transcript(self) -> Transcript:
        return await self.store.load(SESSION_ID)


@asynccontextmanager
async def open_world(tmp_path: Path, **overrides: Any) -> AsyncIterator[World]:
    """A supervised session hosting subagents, with memory (for reviews) and the raising tool."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    async with open_fake(SCRIPTED) as fake:
        client = CrashingClient(
            api_key=KEY, base_url=fake.base_url, retry=fast_retry(2), trust_env=False
        )
        async with client, open_system("crashes", call_timeout=10.0) as system:
            yield await _world(tmp_path, workdir, fake, client, system, overrides)


async def _world(
    tmp_path: Path,
    workdir: Path,
    fake: FakeProvider,
    client: CrashingClient,
    system: ActorSystem,
    overrides: Mapping[str, Any],
) -> World:
    """The world's store, deps and supervised session."""
    store = await spawn_store(system, tmp_path / "data", register=None)
    memory = MemoryStore(tmp_path / "memories")
    registry = with_delegation(default_registry())
    registry.register(MemoryTool())
    registry.register(RaisingTool())
    runtime = SubagentRuntime(SubagentConfig(check_interval=0.05))
    deps = SessionDeps(
        store=store, client=client, registry=registry, memory=memory, subagents=runtime.host()
    )
    config = SessionConfig(
        model=MODEL,
        cwd=workdir,
        spill_dir=tmp_path / "spill",
        load_context_files=False,
        **{"review": ReviewSettings(enabled=False), **overrides},
    )
    hub = ev.EventHub(SESSION_ID)  # one hub for every incarnation, as the daemon does
    incarnations: list[SessionActor] = []

    def make_session() -> SessionActor:
        actor = SessionActor(config, deps, SESSION_ID, hub=hub)
        incarnations.append(actor)
        return actor

    sup = await system.spawn(
        Supervisor([ChildSpec(SESSION_ID, make_session)], intensity=10, period=30.0),
        name="sessions",
    )
    child = await SupervisorClient(sup).child(SESSION_ID)
    handle = SessionHandle(child, hub, timeout=10)
    await handle.state()  # started
    path = child.ref.path  # type: ignore[attr-defined]
    return World(system, fake, client, store, handle, incarnations, memory, path)


async def crash(ref: ActorRef, why: str) -> None:
    await ref.kill(ExitReason.from_exception(InjectedCrash(why)))


def policy(path: str) -> Any:
    (found,) = [p for p in POLICY if p.path == path]
    return found


def test_the_policy_names_every_child_of_a_session() -> None:
    assert {p.path for p in POLICY} == {
        "services/processes",
        "services",
        "subagents",
        "turn-<n>",
        "turn-<n>/tool-<id>",
        "turn-<n>/compressor",
        "reviewer",
    }
    fails = {p.path for p in POLICY if p.session == "fails"}
    assert fails == {"services", "subagents"}


# -- services/processes: restarted in place; it re-adopts its processes --------------------


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_a_registry_crash_restarts_it_and_its_processes_go_with_it(tmp_path: Path) -> None:
    assert policy("services/processes").session == "survives"
    async with open_world(tmp_path) as world:
        command = "sleep 60 & echo $! > pid; wait"
        world.fake.enqueue(
            Reply.of(ToolUse("terminal", {"command": command, "background": True}, id="t1")),
            Reply.of("started it"),
        )
        with trio.fail_after(20):
            assert (await world.handle.run("start a server")).reason is TurnEnd.COMPLETED
            pid_file = tmp_path / "work" / "pid"
            while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110
                await trio.sleep(0.01)  # the background shell writes it: no event to wait on
            pid = int(pid_file.read_text())
            assert alive(pid)
            session = world.handle.target.ref  # type: ignore[attr-defined]
            registry = await world.wait_for("services/processes")
            await crash(registry, "registry")
            restarted = await world.wait_for("services/processes", other_than=registry)
            running = await world.store.list_processes(session_id=SESSION_ID, active_only=True)
            world.fake.enqueue(
                Reply.of(ToolUse("process", {"action": "list"}, id="t2")), Reply.of("listed")
            )
            assert (await world.handle.run("what runs?")).reason is TurnEnd.COMPLETED
            transcript = await world.transcript()
            after = world.handle.target.ref  # type: ignore[attr-defined]
    assert restarted != registry
    assert after == session and len(world.incarnations) == 1
    assert not alive(pid)  # killed and reaped with the registry's watcher, before the restart
    assert running == []
    listed = results_by_id(transcript)["t2"]
    assert not listed.is_error and "No background processes" in str(listed.content), listed
    assert_valid(transcript)


async def test_a_registry_crashing_too_often_fails_the_session(tmp_path: Path) -> None:
    assert policy("services").session == "fails"
    async with open_world(tmp_path) as world:
        world.fake.enqueue(Reply.of("first"))
        with trio.fail_after(30):
            assert (await world.handle.run("hello")).reason is TurnEnd.COMPLETED
            services = await world.wait_for("services")
            registry: ActorRef | None = None
            for _ in range(SERVICES_INTENSITY):  # restarts within the intensity: it survives
                registry = await world.wait_for("services/processes", other_than=registry)
                await crash(registry, "registry")
            await world.wait_for("services/processes", other_than=registry)
            assert len(world.incarnations) == 1
            assert world.lookup("services") == services
            registry = await world.wait_for("services/processes")
            await crash(registry, "one too many")  # the services give up, the session fails
            await world.wait_for("services", other_than=services)
            world.fake.enqueue(Reply.of("second"))
            result = await world.handle.run("still there?")
            transcript = await world.transcript()
    assert len(world.incarnations) == 2
    assert result.reason is TurnEnd.COMPLETED and result.text == "second"
    assert [m.text() for m in transcript.messages] == ["hello", "first", "still there?", "second"]
    assert_valid(transcript)


# -- subagents: the session fails and is restarted on its transcript -----------------------


async def test_a_subagent_supervisor_crash_fails_the_session(tmp_path: Path) -> None:
    assert policy("subagents").session == "fails"
    async with open_world(tmp_path) as world:
        world.fake.enqueue(Reply.of("first"))
        with trio.fail_after(30):
            assert (await world.handle.run("hello")).reason is TurnEnd.COMPLETED
            subagents = await world.wait_for("subagents")
            await crash(subagents, "subagents")
            again = await world.wait_for("subagents", other_than=subagents)
            world.fake.enqueue(Reply.of("second"))
            result = await world.handle.run("still there?")
            transcript = await world.transcript()
    assert again != subagents and len(world.incarnations) == 2
    assert world.incarnations[-1].conversation.messages == list(transcript.messages)
    assert result.reason is TurnEnd.COMPLETED and result.text == "second"
    assert_valid(transcript)


# -- the running turn: it ends failed, the transcript is repaired, the queue goes on ---------


async def test_a_turn_crash_fails_the_turn_and_the_next_input_runs(tmp_path: Path) -> None:
    assert policy("turn-<n>").session == "survives"
    async with open_world(tmp_path) as world:
        world.fake.enqueue(
            Reply.of("calling", ToolUse("terminal", {"command": "echo one"}, id="t1")),
            Reply.of("the queued prompt ran"),
        )
        world.client.crash_if = lambda request: (
            any(  # the request after the tool result
                CRASH in m.text() for m in request.messages
            )
            and len(request.messages) > 1
        )
        with trio.fail_after(20), world.handle.subscribe() as sub:
            accepted = await world.handle.prompt(f"{CRASH}: run a tool")
            queued = await world.handle.prompt("next one", mode="queue")
            first = (await next_event(sub, "TurnCompleted", lambda p: p.turn == 1)).payload
            world.client.crash_if = lambda request: False
            second = (await next_event(sub, "TurnCompleted", lambda p: p.turn == 2)).payload
            transcript = await world.transcript()
            state = await world.handle.state()
    assert (accepted.how, queued.how) == ("started", "queued")
    assert first.reason == TurnEnd.FAILED.value
    assert first.detail.startswith("the turn crashed: RuntimeError: a bug in the client"), first
    assert second.reason == TurnEnd.COMPLETED.value and second.text == "the queued prompt ran"
    assert len(world.incarnations) == 1 and not state.busy
    assert str(results_by_id(transcript)["t1"].content).startswith("one\n")
    assert_valid(transcript)


# -- a tool worker: the call gets an error result and the turn goes on ------------------------


async def test_a_tool_that_raises_is_an_error_result_and_the_turn_goes_on(tmp_path: Path) -> None:
    assert policy("turn-<n>/tool-<id>").session == "survives"
    async with open_world(tmp_path) as world:
        world.fake.enqueue(Reply.of(ToolUse("raises", {}, id="t1")), Reply.of("went on"))
        with trio.fail_after(20):
            result = await world.handle.run("use the buggy tool")
            transcript = await world.transcript()
    assert result.reason is TurnEnd.COMPLETED and result.text == "went on"
    raised = results_by_id(transcript)["t1"]
    assert raised.is_error and "a bug in the tool" in str(raised.content), raised
    assert_valid(transcript)


async def test_a_tool_worker_crash_is_the_calls_error_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    async with open_world(tmp_path) as world:
        world.fake.enqueue(
            Reply.of(
                ToolUse("terminal", {"command": "sleep 30"}, id="slow"),
                ToolUse("terminal", {"command": "echo quick"}, id="quick"),
            ),
            Reply.of("went on"),
        )
        with trio.fail_after(20), world.handle.subscribe() as sub:
            await world.handle.prompt("two calls")
            await next_event(sub, "ToolStarted", lambda p: p.call_id == "slow")
            state = await world.handle.state()
            assert state.turn_path is not None
            worker = await world.wait_for(f"{state.turn_path.rsplit('/', 1)[-1]}/tool-slow")
            await crash(worker, "tool worker")
            done = (await next_event(sub, "TurnCompleted")).payload
            transcript = await world.transcript()
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "went on"
    results = results_by_id(transcript)
    assert str(results["quick"].content).startswith("quick\n") and not results["quick"].is_error
    crashed = results["slow"]
    assert crashed.is_error and "was stopped while running" in str(crashed.content), crashed
    assert "InjectedCrash" in str(crashed.content) or "tool worker" in str(crashed.content)
    assert len(world.incarnations) == 1
    assert_valid(transcript)


# -- the compressor: the static summary stands in, the compaction commits -------------------


@pytest.mark.parametrize("how", ["raises", "killed"])
async def test_a_compressor_crash_falls_back_to_the_static_summary(
    tmp_path: Path, how: str
) -> None:
    assert policy("turn-<n>/compressor").session == "survives"
    compaction = {
        "compression": attrs.evolve(SETTINGS, summary_timeout=30.0),
        "context_window": WINDOW,
        "max_tokens": MAX_TOKENS,
    }
    async with open_world(tmp_path, **compaction) as world:
        if how == "raises":
            world.client.crash_if = lambda request: request.model == AUX
        else:
            world.fake.when(Hang(), model=AUX, times=1)
        # the failed aux summary is retried once on the main model (seed #198): fail that too
        world.fake.when(
            ErrorReply(500, "the main model is down too"),
            predicate=lambda request: is_summary(request) and request.model != AUX,
        )
        with trio.fail_after(30), world.handle.subscribe() as sub:
            await four_turns_then_big(world.handle, world.fake)
            world.fake.enqueue(small("answer 5"))
            await world.handle.prompt("question 5")
            await next_event(sub, "CompactionStarted")
            if how == "killed":
                state = await world.handle.state()
                assert state.turn_path is not None
                turn = state.turn_path.rsplit("/", 1)[-1]
                await crash(await world.wait_for(f"{turn}/compressor"), "compressor")
            completed = (await next_event(sub, "CompactionCompleted")).payload
            done = (await next_event(sub, "TurnCompleted", lambda p: p.turn == 5)).payload
            transcript = await world.transcript()
            compactions = await world.store.list_compactions(SESSION_ID)
    assert completed.method == "static"
    assert "the compressor stopped" in completed.detail, completed.detail
    assert "the main model is down too" in completed.detail
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "answer 5"
    assert [c.method for c in compactions] == ["static"]
    assert len(world.incarnations) == 1
    assert_valid(transcript)


# -- the reviewer: the review is reported failed, nothing is saved ---------------------------


async def test_a_reviewer_crash_is_a_failed_review_and_saves_nothing(tmp_path: Path) -> None:
    assert policy("reviewer").session == "survives"
    async with open_world(tmp_path, review=ReviewSettings(interval=1)) as world:
        world.fake.enqueue(Reply.of("Done."))
        world.fake.when(Hang(), predicate=is_review)
        with trio.fail_after(20), world.handle.subscribe() as sub:
            assert (await world.handle.run("remember this")).reason is TurnEnd.COMPLETED
            await next_event(sub, "ReviewStarted")
            await crash(await world.wait_for("reviewer"), "reviewer")
            review = (await next_event(sub, "ReviewCompleted")).payload
            state = await world.handle.state()
            world.fake.script.clear()
            world.fake.enqueue(Reply.of("still here"))
            result = await world.handle.run("next")
            transcript = await world.transcript()
    assert review.outcome == "failed" and review.detail.startswith("the reviewer crashed")
    assert (review.added, review.staged) == (0, 0)
    assert world.memory.entries("memory") == [] and not world.memory.path("memory").exists()
    assert not state.reviewing and len(world.incarnations) == 1
    assert result.reason is TurnEnd.COMPLETED and result.text == "still here"
    assert_valid(transcript)
