"""Scheduled jobs in a real daemon (offline demo model): runs, records, restarts, surfaces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon

BOUND = 60.0


async def until_ok(client: Client, job_id: str, count: int) -> list[dict[str, Any]]:
    """The job's successful runs (newest first) once there are ``count`` (bounded).

    A run that comes due while one still runs is recorded ``skipped`` on a busy
    machine; only the ``ok`` ones are counted."""
    with trio.fail_after(BOUND):
        while True:
            runs: list[dict[str, Any]] = await client.call("cron.runs", job=job_id)
            done = [run for run in runs if run["outcome"] == "ok"]
            if len(done) >= count:
                return done
            await trio.sleep(0.1)


async def http(daemon: Daemon, verb: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One HTTP request on a new connection: the status and the JSON body."""
    endpoint = daemon.endpoint
    assert endpoint is not None
    host, port = endpoint.info["host"], int(endpoint.info["port"])
    data = b"" if body is None else json.dumps(body).encode()
    head = (
        f"{verb} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {endpoint.token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        await stream.send_all(head.encode() + data)
        answer = b""
        while chunk := await stream.receive_some(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    answered = json.loads(rest.partition(b"\r\n\r\n")[2])
    return int(status_line.split()[1]), answered.get("result", answered.get("error"))


async def until_done(client: Client, job_id: str) -> list[dict[str, Any]]:
    """The job's runs once there is one (bounded)."""
    with trio.fail_after(BOUND):
        while True:
            runs: list[dict[str, Any]] = await client.call("cron.runs", job=job_id)
            if runs:
                return runs
            await trio.sleep(0.1)


def test_a_job_runs_a_session_turn_records_it_and_survives_a_restart(tmp_path: Path) -> None:
    async def first(daemon: Daemon) -> str:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            with pytest.raises(GatewayError) as bad:
                await client.call("cron.add", schedule="*/5 * *", prompt="x")
            assert bad.value.code == "invalid_params"
            assert "5 fields" in bad.value.message and "'*/5 * *'" in bad.value.message
            with pytest.raises(GatewayError, match="unknown time zone 'Nowhere/City'"):
                await client.call("cron.add", schedule="0 9 * * *", tz="Nowhere/City", prompt="x")
            job = await client.call("cron.add", schedule="every 1s", prompt="cron says hello")
            (run, *_) = await until_ok(client, job["id"], 1)
            assert "cron says hello" in run["detail"]  # the demo model echoes the prompt
            session = await client.call("session.get", session=run["session_id"])
            assert session["ended"] and session["messages"] >= 2
            assert session["title"].startswith("cron: ")
            paused = await client.call("cron.pause", job=job["id"])
            assert paused["state"] == "paused"
            with pytest.raises(GatewayError) as unknown:
                await client.call("cron.run", job="job-nope")
            assert unknown.value.code == "not_found"
            return str(job["id"])

    with running_daemon(tmp_path) as daemon:
        job_id = trio.run(first, daemon)
        listed = daemon.cli("cron", "list")
        assert listed.returncode == 0, listed.stderr
        assert job_id in listed.stdout and "paused" in listed.stdout

    async def second(daemon: Daemon) -> None:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            (job,) = await client.call("cron.list")
            assert job["id"] == job_id and job["state"] == "paused" and job["runs"] >= 1
            before = len(await until_ok(client, job_id, 1))
            await client.call("cron.resume", job=job_id)
            await until_ok(client, job_id, before + 1)
        status, refused = await http(
            daemon, "POST", "/cron", {"schedule": "every 5x", "prompt": "x"}
        )
        assert status == 400 and "'5x' is not a duration" in json.dumps(refused)
        status, added = await http(
            daemon, "POST", "/cron", {"schedule": "0 9 * * 1-5", "tz": "Europe/Paris",
                                      "prompt": "weekday report", "paused": True},
        )  # fmt: skip
        assert status == 200 and added["state"] == "paused" and added["tz"] == "Europe/Paris"
        status, shown = await http(daemon, "GET", f"/cron/{added['id']}")
        assert status == 200 and shown["prompt"] == "weekday report"
        status, gone = await http(daemon, "POST", f"/cron/{added['id']}/rm")
        assert status == 200 and gone["removed"] == added["id"]

    with running_daemon(tmp_path) as daemon:
        trio.run(second, daemon)
        shown = daemon.cli("cron", "runs", job_id, "--json")
        assert shown.returncode == 0, shown.stderr
        assert "ok" in {row["outcome"] for row in json.loads(shown.stdout)}
        added = daemon.cli("cron", "add", "every 1h", "x", "--timeout", "42", "--paused", "--json")
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["timeout"] == 42.0  # the job's, not the client's
        stopped = daemon.cli("pause")
        assert stopped.returncode == 0 and "emergency stop on" in stopped.stdout, stopped.stderr
        assert (daemon.paths.data_dir / "ESTOP").exists()
        refused = daemon.cli("cron", "run", job_id)
        assert refused.returncode != 0 and "the emergency stop is on" in refused.stderr
        cleared = daemon.cli("resume")
        assert cleared.returncode == 0 and not (daemon.paths.data_dir / "ESTOP").exists()
        removed = daemon.cli("cron", "rm", job_id)
        assert removed.returncode == 0 and f"removed {job_id}" in removed.stdout


def test_a_run_without_activity_for_its_timeout_is_cut_off_and_recorded(tmp_path: Path) -> None:
    async def body(daemon: Daemon) -> None:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            # ``request``: the job's ``timeout`` is a param, not the client call's timeout
            params = {"schedule": "every 1h", "prompt": "a slow answer", "timeout": 0.5}
            job = await client.request("cron.add", params, 30.0)
            assert job["timeout"] == 0.5
            await client.call("cron.run", job=job["id"])
            (run,) = await until_done(client, job["id"])
            assert run["outcome"] == "timeout", run
            assert run["detail"] == "cron run timed out: no activity for 0.5s"
            assert run["finished_at"] - run["started_at"] < 30  # not the turn's 5 deltas x 8 s
            session = await client.call("session.get", session=run["session_id"])
            assert session["ended"] and not session["running"]
            assert session["end_reason"] == run["detail"]

    # each streamed delta of the demo model comes 8 s after the one before
    with running_daemon(tmp_path, "[model]\nfake_event_delay = 8.0\n") as daemon:
        trio.run(body, daemon)


def test_a_pre_run_script_gets_the_passthrough_secrets_and_no_others(tmp_path: Path) -> None:
    """``[tools] env_passthrough`` reaches a job's pre-run script as it reaches the tools;
    every other secret-looking variable of the daemon is scrubbed (seed #121)."""
    config = '[tools]\nenv_passthrough = ["GITHUB_TOKEN"]\n'
    secrets = {"GITHUB_TOKEN": "ghp_passed", "DEPLOY_SECRET": "hidden"}

    async def scenario(daemon: Daemon) -> None:
        scripts = daemon.paths.data_dir / "scripts"
        scripts.mkdir(parents=True, exist_ok=True)
        (scripts / "env.sh").write_text('echo "gh:$GITHUB_TOKEN; deploy:$DEPLOY_SECRET; end"\n')
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            job = await client.call(
                "cron.add", schedule="every 1h", prompt="report", script="env.sh"
            )
            await client.call("cron.run", job=job["id"])
            (run, *_) = await until_done(client, job["id"])
            hits = await client.call("search", query="deploy", session=run["session_id"])
        assert run["outcome"] == "ok", run
        [hit] = hits  # the run's prompt, which holds the script's output; [...]: the match
        assert "gh:ghp_passed; [deploy]:; end" in hit["snippet"], hit

    with running_daemon(tmp_path, config, **secrets) as daemon:
        trio.run(scenario, daemon)
