"""The curator (seeds #268-#271): a pass over real skill folders, and the supervised actor
on trio's autojump clock (wall time is trio's clock plus a fixed epoch)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem
from hermes.skills import SkillLibrary, SkillViewTool, SkillWriteError, SkillWriter, curator_actor
from hermes.skills.curator import DAY, CuratorPolicy, curate
from hermes.skills.curator_actor import Curator, CuratorStatus, RunCurator
from hermes.skills.curator_state import UnknownProposal, dismiss, read_state
from hermes.skills.usage import read_usage, set_locked, write_usage
from hermes.tools import ToolContext

from .conftest import write_skill
from .test_cli import _hermes

EPOCH = datetime(2026, 12, 3, 12, 0, tzinfo=UTC).timestamp()
DEPLOY = "Deploy the web site: build the bundle, upload it to the bucket, purge the cache."


def wall() -> float:
    return EPOCH + trio.current_time()


@pytest.fixture
def autojump_clock(monkeypatch: pytest.MonkeyPatch) -> MockClock:
    # Each jump waits 0.2 s of real idle time: re-anchor once a trio day, not once an hour
    # (two simulated weeks were 336 jumps, 68 s); the re-reads of the file still happen.
    monkeypatch.setattr(curator_actor, "REANCHOR", DAY)
    return MockClock(autojump_threshold=0.2)


def agent_skill(user_dir: Path, name: str, last_used_days_ago: float | None, **kw: str) -> None:
    """A skill the agent created, last used that many days before EPOCH (None: never,
    created that long ago instead)."""
    write_skill(user_dir, name, kw.get("description", f"Use {name}"), kw.get("body", name))
    usage = read_usage(user_dir)
    record = usage.setdefault(name, {"created_by": "agent"})
    if last_used_days_ago is not None:
        record["last_used"] = EPOCH - last_used_days_ago * DAY
    else:
        record["created_at"] = EPOCH - 1 * DAY
    write_usage(user_dir, usage)


def test_a_pass_marks_stale_archives_old_and_spares_the_persons(user_dir: Path) -> None:
    agent_skill(user_dir, "old-one", 40)
    agent_skill(user_dir, "stale-one", 20)
    agent_skill(user_dir, "fresh", 1)
    agent_skill(user_dir, "never-used", None)  # young and never used: left active
    agent_skill(user_dir, "locked-old", 40)
    agent_skill(user_dir, "pinned-old", 40)
    set_locked(user_dir, "locked-old", True)
    write_skill(user_dir, "mine", "my own, never used")  # the person's: never archived
    policy = CuratorPolicy(pinned=("pinned-old",))
    report = curate(user_dir, policy, now=EPOCH)
    assert [name for name, _ in report.archived] == ["old-one"]
    assert not (user_dir / "old-one").exists()
    assert (Path(report.archived[0][1]) / "SKILL.md").is_file()  # recoverable
    assert report.stale == ("stale-one",)
    assert sorted(report.skipped) == ["locked-old: locked", "pinned-old: pinned"]
    for kept in ("fresh", "never-used", "locked-old", "pinned-old", "mine", "stale-one"):
        assert (user_dir / kept / "SKILL.md").is_file(), kept
    usage = read_usage(user_dir)
    assert usage["stale-one"]["state"] == "stale" and "old-one" not in usage
    state = read_state(user_dir)
    assert state["last_run"] == EPOCH and state["runs"][-1]["stale"] == ["stale-one"]


async def test_a_use_through_skill_view_clears_stale_and_is_the_new_activity_date(
    user_dir: Path, tmp_path: Path
) -> None:
    agent_skill(user_dir, "stale-one", 20)
    curate(user_dir, CuratorPolicy(), now=EPOCH)
    assert read_usage(user_dir)["stale-one"]["state"] == "stale"
    tool = SkillViewTool(SkillLibrary(user_dir, bundled_dir=None))
    ctx = ToolContext.create(tmp_path, tmp_path / "spill", environ={})
    outcome = await tool.run({"name": "stale-one"}, ctx)
    assert not outcome.is_error
    record = read_usage(user_dir)["stale-one"]
    assert "state" not in record and record["uses"] == 1 and record["last_used"] > EPOCH
    missing = await tool.run({"name": "nope"}, ctx)
    assert missing.is_error and "nope" not in read_usage(user_dir)


def test_near_duplicates_are_proposed_once_and_never_merged(user_dir: Path) -> None:
    agent_skill(user_dir, "deploy-site", 1, description="Deploy the web site", body=DEPLOY)
    agent_skill(
        user_dir, "site-deploy", 2, description="Deploy the web site", body=DEPLOY + " Done."
    )
    agent_skill(user_dir, "brew-tea", 1, description="Make tea", body="Boil water, steep 3 min.")
    usage = read_usage(user_dir)
    usage["site-deploy"]["uses"] = 5
    write_usage(user_dir, usage)
    report = curate(user_dir, CuratorPolicy(), now=EPOCH)
    (proposal,) = report.proposals
    assert (proposal["keep"], proposal["merge"]) == ("site-deploy", "deploy-site")
    assert proposal["similarity"] >= 0.7
    assert (user_dir / "deploy-site" / "SKILL.md").is_file()  # staged, not applied
    again = curate(user_dir, CuratorPolicy(), now=EPOCH + DAY)
    assert again.proposals == ()  # already staged
    assert [p["id"] for p in read_state(user_dir)["proposals"]] == [proposal["id"]]


def test_a_dismissed_proposal_is_not_proposed_again_while_both_skills_exist(
    user_dir: Path,
) -> None:
    agent_skill(user_dir, "deploy-site", 1, description="Deploy the web site", body=DEPLOY)
    agent_skill(user_dir, "site-deploy", 1, description="Deploy the web site", body=DEPLOY)
    (proposal,) = curate(user_dir, CuratorPolicy(), now=EPOCH).proposals
    with pytest.raises(
        UnknownProposal, match=rf"no curator proposal 'merge-x' \(proposed: {proposal['id']}\)"
    ):
        dismiss(user_dir, "merge-x")
    assert dismiss(user_dir, proposal["id"]) == proposal
    state = read_state(user_dir)
    assert state["proposals"] == [] and state["dismissed"] == [["deploy-site", "site-deploy"]]
    assert curate(user_dir, CuratorPolicy(), now=EPOCH + DAY).proposals == ()
    assert read_state(user_dir)["proposals"] == []
    with pytest.raises(UnknownProposal, match=r"\(proposed: none\)"):
        dismiss(user_dir, proposal["id"])
    SkillWriter(user_dir).delete("site-deploy")  # the pair is gone: the dismissal goes too
    curate(user_dir, CuratorPolicy(), now=EPOCH + 2 * DAY)
    assert read_state(user_dir)["dismissed"] == []


def test_hermes_curator_dismiss(tmp_path: Path, user_dir: Path) -> None:
    agent_skill(user_dir, "deploy-site", 1, description="Deploy the web site", body=DEPLOY)
    agent_skill(user_dir, "site-deploy", 1, description="Deploy the web site", body=DEPLOY)
    (proposal,) = curate(user_dir, CuratorPolicy(), now=EPOCH).proposals
    shown = _hermes(tmp_path, "status", group="curator").stdout
    assert f"id {proposal['id']}" in shown
    wrong = _hermes(tmp_path, "dismiss", "merge-nothing", group="curator")
    assert wrong.returncode == 1 and proposal["id"] in wrong.stderr
    done = _hermes(tmp_path, "dismiss", proposal["id"], group="curator")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"dismissed: merge {proposal['merge']} into {proposal['keep']}"
    status = json.loads(_hermes(tmp_path, "status", "--json", group="curator").stdout)
    assert status["proposals"] == [] and status["dismissed"] == [["deploy-site", "site-deploy"]]


def test_a_rename_is_followed_by_the_other_skills_references(user_dir: Path) -> None:
    writer = SkillWriter(user_dir)
    agent_skill(user_dir, "build-web", 1, body="Build the site.")
    agent_skill(user_dir, "release", 1, body="First run `build-web`, then tag.\n/build-web too.")
    agent_skill(user_dir, "frozen", 1, body="Uses build-web.")
    agent_skill(user_dir, "unrelated", 1, body="build-website is another thing.")
    set_locked(user_dir, "frozen", True)
    renamed = writer.rename("build-web", "build-site")
    assert renamed.name == "build-site" and not (user_dir / "build-web").exists()
    assert "name: build-site" in (user_dir / "build-site" / "SKILL.md").read_text()
    assert read_usage(user_dir)["build-site"]["created_by"] == "agent"
    assert read_state(user_dir)["renames"] == {"build-web": "build-site"}
    with pytest.raises(SkillWriteError, match="locked"):
        writer.rename("frozen", "thawed")

    report = curate(user_dir, CuratorPolicy(), now=EPOCH)
    assert report.rewritten == (("release", "build-web", "build-site"),)
    release = (user_dir / "release" / "SKILL.md").read_text()
    assert "`build-site`" in release and "/build-site too." in release
    assert "build-web" in (user_dir / "frozen" / "SKILL.md").read_text()
    assert "frozen: locked, still names build-web (now build-site)" in report.skipped
    assert "build-website" in (user_dir / "unrelated" / "SKILL.md").read_text()
    assert read_state(user_dir)["renames"] == {}


async def test_the_actor_defers_its_first_pass_one_interval_then_runs_weekly(
    system: ActorSystem, user_dir: Path, autojump_clock: MockClock
) -> None:
    agent_skill(user_dir, "old-one", 40)
    agent_skill(user_dir, "slowly-stale", 20)  # 27 days idle at the first pass, 34 at the next
    ref = await system.spawn(Curator(user_dir, CuratorPolicy(), wall), name="curator")
    status = await ref.call(CuratorStatus())
    assert status["last_run"] == EPOCH and status["passes"] == 0  # only recorded (seed #268)
    assert status["next_run"] == EPOCH + 7 * DAY
    await trio.sleep(7 * DAY - 60)
    assert (user_dir / "old-one").exists()  # not before the interval
    await trio.sleep(120)
    status = await ref.call(CuratorStatus())
    assert status["passes"] == 1 and status["last_report"]["stale"] == ["slowly-stale"]
    assert [a["name"] for a in status["last_report"]["archived"]] == ["old-one"]
    await trio.sleep(7 * DAY)
    status = await ref.call(CuratorStatus())
    assert status["passes"] == 2
    assert [a["name"] for a in status["last_report"]["archived"]] == ["slowly-stale"]
    report = await ref.call(RunCurator())  # on demand, and the schedule restarts from it
    assert report["archived"] == [] and (await ref.call(CuratorStatus()))["passes"] == 3


async def test_a_restarted_curator_keeps_the_schedule_from_the_file(
    system: ActorSystem, user_dir: Path, autojump_clock: MockClock
) -> None:
    (user_dir / ".curator.json").write_text(json.dumps({"last_run": EPOCH - 6 * DAY}))
    agent_skill(user_dir, "old-one", 40)
    ref = await system.spawn(Curator(user_dir, CuratorPolicy(), wall), name="curator")
    assert (await ref.call(CuratorStatus()))["passes"] == 0
    await trio.sleep(DAY + 60)  # due one interval after the recorded pass, not after start
    assert (await ref.call(CuratorStatus()))["passes"] == 1
    assert not (user_dir / "old-one").exists()


async def test_a_disabled_curator_never_runs(
    system: ActorSystem, user_dir: Path, autojump_clock: MockClock
) -> None:
    agent_skill(user_dir, "old-one", 40)
    ref = await system.spawn(Curator(user_dir, CuratorPolicy(enabled=False), wall), name="curator")
    await trio.sleep(30 * DAY)
    assert (await ref.call(CuratorStatus()))["passes"] == 0
    assert (user_dir / "old-one").exists() and not (user_dir / ".curator.json").exists()


def test_the_cli_runs_a_pass_and_shows_the_status(tmp_path: Path, user_dir: Path) -> None:
    agent_skill(user_dir, "old-one", 10_000)
    agent_skill(user_dir, "deploy-site", 1, description="Deploy the web site", body=DEPLOY)
    agent_skill(user_dir, "site-deploy", 1, description="Deploy the web site", body=DEPLOY)
    ran = _hermes(tmp_path, "run", group="curator")
    assert ran.returncode == 0, ran.stderr
    assert "archived old-one" in ran.stdout
    assert "proposed: merge" in ran.stdout
    status = _hermes(tmp_path, "status", "--json", group="curator")
    shown = json.loads(status.stdout)
    assert shown["enabled"] and shown["last_run"] is not None
    assert [p["keep"] for p in shown["proposals"]] in (["deploy-site"], ["site-deploy"])
    text = _hermes(tmp_path, "status", group="curator").stdout
    assert "last pass archived: old-one" in text and "proposed: merge" in text
    locked = _hermes(tmp_path, "lock", "deploy-site", group="curator")
    assert locked.returncode == 0 and "deploy-site: locked" in locked.stdout
    assert json.loads(_hermes(tmp_path, "status", "--json", group="curator").stdout)["locked"] == [
        "deploy-site"
    ]
