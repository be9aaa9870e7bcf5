"""Auto-shutdown: significant children exiting on their own (never admin or strategy stops)."""

from __future__ import annotations

import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind
from supervisors import (
    AutoShutdown,
    AutoShutdownTriggered,
    ChildSpec,
    ChildType,
    Restart,
    Strategy,
    Supervisor,
    SupervisorClient,
)

from .helpers import Log, crash, of_type, ref_of, spec, start_sup, states, stops

ANY, ALL = AutoShutdown.ANY_SIGNIFICANT, AutoShutdown.ALL_SIGNIFICANT
TRANSIENT, TEMPORARY = Restart.TRANSIENT, Restart.TEMPORARY


def significant(cid: str, log: Log, restart: Restart = TRANSIENT) -> ChildSpec:
    return spec(cid, log, restart=restart, significant=True)


async def test_any_significant_shuts_down_when_one_exits_on_its_own(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [significant("a", log), significant("b", log), spec("c", log)]
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, specs, auto_shutdown=ANY)
        await crash(client, "a", "normal", sync=False)
        reason = await sup.wait_exited()
        triggered = of_type(sub.drain(), AutoShutdownTriggered)
    assert reason.kind is ExitKind.SHUTDOWN
    assert reason.detail == "auto_shutdown: significant child 'a'"
    assert [(e.supervisor, e.child_id) for e in triggered] == [("/sup", "a")]
    assert stops(log) == [
        ("a", ExitKind.NORMAL),
        ("c", ExitKind.SHUTDOWN),
        ("b", ExitKind.SHUTDOWN),
    ]


async def test_significant_temporary_child_triggers_even_on_a_crash(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(
            system, [significant("t", log, TEMPORARY), spec("p", log)], auto_shutdown=ANY
        )
        await crash(client, "t", sync=False)
        reason = await sup.wait_exited()
    assert reason.kind is ExitKind.SHUTDOWN
    assert "'t'" in reason.detail


async def test_significant_transient_child_restarted_after_a_crash_does_not_trigger(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(system, [significant("a", log)], auto_shutdown=ANY)
        await crash(client, "a")
        assert sup.is_alive
        assert await states(client) == {"a": "running"}


async def test_non_significant_child_exit_does_not_trigger(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(
            system, [significant("a", log), spec("n", log, restart=TRANSIENT)], auto_shutdown=ANY
        )
        await crash(client, "n", "normal")
        assert sup.is_alive


async def test_all_significant_shuts_down_after_the_last_one(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [significant("a", log), significant("b", log, TEMPORARY), spec("c", log)]
    with trio.fail_after(10):
        sup, client = await start_sup(system, specs, auto_shutdown=ALL)
        await crash(client, "a", "normal")
        assert sup.is_alive
        assert await states(client) == {"a": "stopped", "b": "running", "c": "running"}
        await crash(client, "b", "shutdown", sync=False)
        reason = await sup.wait_exited()
    assert reason.kind is ExitKind.SHUTDOWN
    assert "'b'" in reason.detail


async def test_terminate_child_never_triggers_auto_shutdown(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(
            system, [significant("a", log), significant("b", log)], auto_shutdown=ANY
        )
        await client.terminate_child("a")
        await client.terminate_child("b")
        await trio.sleep(1)
        assert sup.is_alive
        assert await states(client) == {"a": "stopped", "b": "stopped"}


async def test_all_significant_counts_terminated_children_as_gone(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(
            system, [significant("a", log), significant("b", log)], auto_shutdown=ALL
        )
        await client.terminate_child("a")
        assert sup.is_alive
        await crash(client, "b", "normal", sync=False)  # the last active significant child
        reason = await sup.wait_exited()
    assert reason.kind is ExitKind.SHUTDOWN


async def test_strategy_stop_of_a_significant_bystander_never_triggers(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [spec("p", log), significant("t", log, TEMPORARY), significant("u", log)]
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(
            system, specs, strategy=Strategy.ONE_FOR_ALL, auto_shutdown=ANY
        )
        await crash(client, "p")
        await trio.sleep(1)
        assert sup.is_alive
        assert await states(client) == {"p": "running", "u": "running"}
        assert of_type(sub.drain(), AutoShutdownTriggered) == []


async def test_auto_shutdown_of_a_transient_child_supervisor_is_not_restarted(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []

    def session() -> Supervisor:
        return Supervisor([significant("main", log), spec("helper", log)], auto_shutdown=ANY)

    inner = ChildSpec("session", session, type=ChildType.SUPERVISOR, restart=TRANSIENT)
    with trio.fail_after(10):
        root, root_client = await start_sup(system, [inner, spec("other", log)], name="root")
        session_ref = await ref_of(root_client, "session")
        await crash(SupervisorClient(session_ref), "main", "normal", sync=False)
        reason = await session_ref.wait_exited()
        assert reason.kind is ExitKind.SHUTDOWN
        await root_client.count_children()
        assert await states(root_client) == {"session": "stopped", "other": "running"}
        assert root.is_alive
