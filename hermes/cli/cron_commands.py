"""``hermes cron add|list|edit|pause|resume|run|rm|runs`` (scheduled jobs, docs/cron.md) and
``hermes pause`` / ``hermes resume`` (the emergency stop, seed #218)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from .app import daemon_endpoint, main, print_json, run_async


async def call_daemon(method: str, **params: Any) -> Any:
    """One request to the daemon, with ``params`` sent as they are (a job's ``timeout``
    is a param here, not the client's own call timeout)."""
    from hermes.gateway.client import connect

    async with connect(daemon_endpoint()) as client:
        return await client.request(method, params, 30.0)


SCRIPT_HELP = "A pre-run script, relative to <data_dir>/scripts (its output joins the prompt)."
DELIVER_HELP = "Where results go: session:<id>, file:<path>, webhook:<url> or events."


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _line(job: dict[str, Any]) -> str:
    state = "running" if job["running"] else job["state"]
    last = job["last_outcome"] or "never run"
    return (
        f"{job['id']}  {state:7}  {job['schedule']} ({job['tz']})  next {_when(job['next_run_at'])}"
        f"  last {last}  {job['name']}"
    )


@main.group("cron")
def cron() -> None:
    """Scheduled jobs: each run is a fresh session's turn."""


@cron.command("add")
@click.argument("schedule")
@click.argument("prompt")
@click.option("--name", default=None, help="A short name (default: the prompt's first line).")
@click.option("--tz", default=None, help="IANA time zone for a cron expression (default UTC).")
@click.option("--cwd", default=None, help="Working directory of the job's sessions.")
@click.option("--model", default=None, help="Model of the job's sessions (default: the daemon's).")
@click.option("--toolset", "toolsets", multiple=True, help="A tool or toolset (repeatable).")
@click.option("--overlap", type=click.Choice(["skip", "queue", "cancel"]), default=None)
@click.option("--timeout", type=float, default=None, help="Seconds of inactivity (0: none).")
@click.option("--script", default=None, help=SCRIPT_HELP)
@click.option("--deliver", default=None, help=DELIVER_HELP)
@click.option("--paused", is_flag=True, help="Add it paused.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def add(
    schedule: str,
    prompt: str,
    name: str | None,
    tz: str | None,
    cwd: str | None,
    model: str | None,
    toolsets: tuple[str, ...],
    overlap: str | None,
    timeout: float | None,
    script: str | None,
    deliver: str | None,
    paused: bool,
    as_json: bool,
) -> None:
    """Add a job. SCHEDULE: '0 9 * * 1-5', 'every 30m', 'in 2h' or an ISO time."""
    params: dict[str, Any] = {"schedule": schedule, "prompt": prompt, "paused": paused}
    extra = {"name": name, "tz": tz, "cwd": cwd, "model": model, "overlap": overlap}
    extra.update(script=script, deliver=deliver)
    params.update({k: v for k, v in extra.items() if v is not None})
    if toolsets:
        params["toolsets"] = list(toolsets)
    if timeout is not None:
        params["timeout"] = timeout
    job = run_async(lambda: call_daemon("cron.add", **params))
    if as_json:
        print_json(job)
        return
    click.echo(f"added {job['id']}: {job['schedule']}, next run {_when(job['next_run_at'])}")


@cron.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_jobs(as_json: bool) -> None:
    """Every job with its state, next run and last outcome."""
    jobs: list[dict[str, Any]] = run_async(lambda: call_daemon("cron.list"))
    if as_json:
        print_json(jobs)
        return
    if not jobs:
        click.echo("no cron jobs")
    for job in jobs:
        click.echo(_line(job))


@cron.command("edit")
@click.argument("job")
@click.option("--schedule", default=None)
@click.option("--prompt", default=None)
@click.option("--name", default=None)
@click.option("--tz", default=None)
@click.option("--cwd", default=None)
@click.option("--model", default=None)
@click.option("--overlap", type=click.Choice(["skip", "queue", "cancel"]), default=None)
@click.option("--timeout", type=float, default=None)
@click.option("--script", default=None, help=SCRIPT_HELP)
@click.option("--deliver", default=None, help=DELIVER_HELP)
@click.option("--no-script", is_flag=True, help="Remove the job's pre-run script.")
@click.option("--no-deliver", is_flag=True, help="Deliver nowhere (runs are only recorded).")
def edit(
    job: str, timeout: float | None, no_script: bool, no_deliver: bool, **fields: str | None
) -> None:
    """Change a job's fields (a new schedule is checked and moves the next run)."""
    params: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
    if timeout is not None:
        params["timeout"] = timeout
    if no_script:
        params["script"] = None
    if no_deliver:
        params["deliver"] = None
    changed = run_async(lambda: call_daemon("cron.edit", job=job, **params))
    click.echo(_line(changed))


def _one(verb: str, summary: str) -> None:
    @cron.command(verb, help=summary)
    @click.argument("job")
    def command(job: str) -> None:
        answer = run_async(lambda: call_daemon(f"cron.{verb}", job=job))
        if verb == "rm":
            cancelled = " (its running run was cancelled)" if answer["run_cancelled"] else ""
            click.echo(f"removed {job}{cancelled}")
        else:
            click.echo(_line(answer))


_one("pause", "Pause a job (it keeps its row; runs missed while paused are not made up).")
_one("resume", "Resume a paused job from its next time.")
_one("run", "Run a job now (its overlap policy applies; the schedule does not move).")
_one("rm", "Remove a job and its run history (a running run is cancelled).")


@cron.command("runs")
@click.argument("job")
@click.option("--limit", type=click.IntRange(1, 1000), default=20)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs(job: str, limit: int, as_json: bool) -> None:
    """A job's past runs, newest first: outcome, duration, session."""
    rows: list[dict[str, Any]] = run_async(lambda: call_daemon("cron.runs", job=job, limit=limit))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo(f"{job}: no runs yet")
    for row in rows:
        took = row["finished_at"] - row["started_at"]
        detail = " ".join(row["detail"].split())[:100]
        session = row["session_id"] or "-"
        click.echo(
            f"{_when(row['started_at'])}  {row['outcome']:9} {took:7.1f}s  {session}  {detail}"
        )
        if row.get("delivery"):
            click.echo(f"    delivery {row['delivery'][:200]}")


@main.command("pause")
def pause() -> None:
    """Emergency stop: cancel running job runs and background delegations; start neither
    (nor goal or loop turns) until `hermes resume`."""
    answer = run_async(lambda: call_daemon("estop.set"))
    click.echo(
        f"emergency stop on: {answer['runs_cancelled']} running job run(s) and "
        f"{answer.get('delegations_stopped', 0)} background subagent task(s) stopped; "
        "no job, delegation or goal turn starts until `hermes resume` "
        "(this holds across daemon restarts)"
    )


@main.command("resume")
def resume() -> None:
    """Clear the emergency stop: jobs run again from their next times, delegations may start."""
    run_async(lambda: call_daemon("estop.clear"))
    click.echo(
        "emergency stop cleared: jobs run again from their next times and subagents may "
        "start; stopped work is not restarted"
    )
