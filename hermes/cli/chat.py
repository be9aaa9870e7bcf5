"""``hermes chat``: an interactive chat with a session, through the daemon."""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from typing import Any

import click

from .app import daemon_endpoint, main, run_async
from .commands import render_tree, wait_turn


@main.command("chat")
@click.argument("prompt", required=False)
@click.option("--session", "session_id", default=None, help="Resume this session.")
def chat(prompt: str | None, session_id: str | None) -> None:
    """Chat with the agent: streams the answer, shows tools, asks approvals inline.

    With PROMPT, runs that one turn and exits. Ctrl+C interrupts the turn;
    twice within 2 s exits. Starts the daemon if none runs.
    """
    endpoint = daemon_endpoint(start=True)
    code = run_async(lambda: _chat(endpoint, prompt, session_id))
    sys.exit(code)


async def _chat(endpoint: Any, prompt: str | None, session_id: str | None) -> int:
    import trio

    from hermes.gateway.client import GatewayError, connect

    async with connect(endpoint) as client:
        status = await client.call("daemon.status")
        if session_id is None:
            session_id = (
                await client.call("session.create", title=prompt[:60] if prompt else None)
            )["id"]
        else:
            await client.call("session.resume", session=session_id)
        sid: str = session_id
        if status["demo"]:
            click.echo(
                f"[offline demo model {status['model']}: set ANTHROPIC_API_KEY for Claude]",
                err=True,
            )
        click.echo(f"[session {sid}]", err=True)
        await client.call("events.subscribe", session=sid, approvals=True)
        state = _ChatState()

        async def on_signals() -> None:
            with trio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    now = time.monotonic()
                    if now - state.last_sigint < 2.0:
                        state.code = 130
                        state.done.set()
                        return
                    state.last_sigint = now
                    click.echo("\n[^C: interrupting; again within 2 s to exit]", err=True)
                    with contextlib.suppress(GatewayError):
                        await client.call("interrupt", session=sid)

        def render(event: dict[str, Any]) -> None:
            kind, payload = event["type"], event.get("payload") or {}
            if kind == "text.delta":
                click.echo(payload["text"], nl=False)
            elif kind == "tool.started":
                click.echo(f"\n[tool {payload['name']} {payload['call_id']}]", err=True)
            elif kind == "tool.completed":
                click.echo(f"[tool {payload['name']}: {payload['status']}]", err=True)
            elif kind == "approval.requested":
                click.echo(
                    f"\n[approval {payload['request_id']}: {payload['command']} "
                    f"({payload['reasons']}) - answer /approve {payload['request_id']} "
                    "once|session|always|deny]",
                    err=True,
                )
            elif kind == "error.occurred":
                click.echo(f"\n[error: {payload['message']}]", err=True)
            elif kind == "message.completed" and payload.get("text"):
                click.echo("")
            elif kind == "turn.completed" and payload["reason"] != "completed":
                click.echo(f"\n[turn {payload['turn']} {payload['reason']}]", err=True)
            elif kind == "events.dropped":
                click.echo(f"\n[{payload.get('count')} events dropped]", err=True)
            else:
                note = context_note(kind, payload)
                if note:
                    click.echo(note, err=True)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(on_signals)

            async def stop_when_done() -> None:
                await state.done.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(stop_when_done)
            if prompt is not None:
                accepted = await client.call("prompt.submit", session=sid, text=prompt)
                end = await wait_turn(client, accepted, prompt, render)
                state.code = 0 if end["reason"] in ("completed", "interrupted") else 1
                nursery.cancel_scope.cancel()
                return state.code

            async def printer() -> None:
                async for event in client.events:
                    render(event)

            nursery.start_soon(printer)
            while True:
                line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
                if not line:
                    break
                text = line.strip()
                if not text:
                    continue
                try:
                    if await _slash(client, sid, text):
                        break
                except GatewayError as exc:
                    click.echo(f"[{exc.code}: {exc.message}]", err=True)
            nursery.cancel_scope.cancel()
        return state.code


def context_note(kind: str, payload: dict[str, Any]) -> str | None:
    """A one-line note for compaction and memory-review events (None: nothing to show)."""
    if kind == "compaction.started":
        return f"\n[compacting the context ({payload['trigger']})...]"
    if kind == "compaction.completed":
        return (
            f"[compacted: {payload['messages_before']} -> {payload['messages_after']} messages, "
            f"~{payload['tokens_before']:,} -> {payload['tokens_after']:,} tokens; "
            f"{payload['detail']}]"
        )
    if kind == "compaction.skipped":
        return f"[no compaction: {payload['reason']}]"
    if kind == "review.completed" and (payload["added"] or payload["staged"]):
        return (
            f"\n[memory review: {payload['added']} saved, {payload['staged']} waiting for "
            "approval (hermes memory pending)]"
        )
    return None


class _ChatState:
    """What the chat loop's tasks share: the exit code and the double-Ctrl+C clock."""

    def __init__(self) -> None:
        import trio  # the CLI imports trio lazily, for a fast start

        self.last_sigint = 0.0
        self.code = 0
        self.done = trio.Event()


async def _slash(client: Any, sid: str, text: str) -> bool:
    """Handle one typed line; True to quit."""
    if not text.startswith("/"):
        await client.call("prompt.submit", session=sid, text=text)
        return False
    command, _, rest = text.partition(" ")
    rest = rest.strip()
    if command in ("/quit", "/exit"):
        return True
    if command == "/steer":
        await client.call("steer", session=sid, text=rest)
    elif command == "/redirect":
        await client.call("redirect", session=sid, text=rest)
    elif command == "/stop":
        await client.call("interrupt", session=sid)
    elif command == "/cancel":
        await client.call("cancel", session=sid)
    elif command == "/tree":
        for line in render_tree(await client.call("tree.snapshot")):
            click.echo(line)
    elif command == "/sessions":
        for row in await client.call("session.list"):
            click.echo(f"{row['id']}  {row['messages']} msgs  {row['title'] or ''}")
    elif command == "/yolo":
        on = rest.lower() not in ("off", "no", "false", "0")
        answer = await client.call("session.yolo", session=sid, on=on)
        state = "on: dangerous commands run unasked" if answer["yolo"] else "off"
        click.echo(f"[yolo {state}; the hardline floor always holds]", err=True)
    elif command == "/compress":
        params = {"session": sid, "focus": rest} if rest else {"session": sid}
        answer = await client.call("session.compress", **params)
        how = "now" if answer["how"] == "compacting" else "before the turn's next step"
        click.echo(f"[compacting the context {how}]", err=True)
    elif command == "/approve":
        request_id, _, choice = rest.partition(" ")
        await client.call(
            "approval.respond", session=sid, request_id=int(request_id), choice=choice or "once"
        )
    else:
        click.echo(
            f"[{command}: not available (try /steer /redirect /stop /cancel /tree "
            "/sessions /compress [focus] /approve /yolo [off] /quit)]",
            err=True,
        )
    return False
