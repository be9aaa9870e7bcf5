"""What the cron runner asks the sessions manager for: a scheduled session (seed #190)."""

from __future__ import annotations

from typing import Any

from actors import Actor, ActorSystem
from hermes.daemon.cron_runner import SessionRunner
from hermes.daemon.errors import ShuttingDown
from hermes.daemon.manager import Create, ManagerClient
from hermes.daemon.manager_api import Failed
from hermes.store.cron_queries import CronJob


class Refusing(Actor):
    """A manager that is shutting down; keeps every request it was sent."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def receive(self, message: Any) -> Any:
        self.asked.append(message)
        return Failed(ShuttingDown("the daemon is shutting down: no new sessions"))


async def test_a_cron_run_asks_for_a_scheduled_session(system: ActorSystem) -> None:
    manager = Refusing()
    runner = SessionRunner(ManagerClient(await system.spawn(manager, name="sessions")))
    job = CronJob(id="job_1", name="nightly", schedule="0 3 * * *", tz="UTC", prompt="p")
    outcome = await runner(job, "run the nightly checks")
    assert outcome.outcome == "skipped" and "shutting down" in outcome.detail
    [create] = manager.asked
    assert isinstance(create, Create) and create.scheduled  # its looping turns halt
    assert create.title == "cron: nightly"
