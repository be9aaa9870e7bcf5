"""The daemon's curator child end to end (issue 28, item 6): a real daemon whose last
recorded pass is older than ``[curator] interval_hours`` runs one as it starts, and
``hermes curator status`` (a real subprocess) shows what that pass did."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hermes.skills.curator import DAY
from hermes.skills.usage import write_usage
from tests.hermes.daemon.daemon_proc import Daemon, daemon_env, write_config

from .conftest import write_skill

BOUND = 60.0
"""Generous: the machine is shared."""


def test_the_daemon_runs_a_due_pass_and_the_cli_shows_it(tmp_path: Path) -> None:
    write_config(tmp_path, "[review]\nenabled = false\n[curator]\ninterval_hours = 1\n")
    daemon = Daemon(tmp_path, daemon_env(tmp_path))
    user_dir = daemon.paths.data_dir / "skills"
    now = time.time()
    write_skill(user_dir, "old-recipe", "An old recipe", "Do the old thing.")
    write_skill(user_dir, "mine", "The person's own", "Never archived.")
    write_usage(user_dir, {"old-recipe": {"created_by": "agent", "last_used": now - 40 * DAY}})
    (user_dir / ".curator.json").write_text(json.dumps({"last_run": now - 2 * 3600}))
    daemon.start()
    try:
        deadline = time.monotonic() + BOUND
        while (user_dir / "old-recipe").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # a poll on a file the daemon writes, bounded
        status = daemon.cli("curator", "status", "--json")
    finally:
        daemon.stop()
    assert not (user_dir / "old-recipe").exists()
    assert [p.name.split("-")[:2] for p in (user_dir / ".archive").iterdir()] == [["old", "recipe"]]
    assert (user_dir / "mine" / "SKILL.md").is_file()  # not the agent's: never managed
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["last_run"] >= now and shown["interval_hours"] == 1
    assert [a["name"] for a in shown["last_report"]["archived"]] == ["old-recipe"]
