"""``hermes chat``: an interactive chat with a session, through the daemon.

The loop here wires three parts together: the input (``chat_input``: a
prompt_toolkit editor on a terminal, plain lines otherwise), the output
(``chat_render``: rich on a terminal, plain for scripts and ``--plain``) and the
slash commands (``chat_commands``). prompt_toolkit and rich are imported only here,
on the chat path, so the control commands stay fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

import click

from .app import daemon_endpoint, daemon_paths, main, run_async
from .commands import wait_turn


@main.command("chat")
@click.argument("prompt", required=False)
@click.option("--session", "session_id", default=None, help="Resume this session.")
@click.option(
    "--plain", is_flag=True, help="Plain text output (the default when stdout is not a terminal)."
)
def chat(prompt: str | None, session_id: str | None, plain: bool) -> None:
    """Chat with the agent: streams the answer, shows tools, asks approvals inline.

    With PROMPT, runs that one turn and exits. Ctrl+C interrupts the turn (twice
    within 1 s cancels it, a third time leaves); Ctrl+D leaves; /help lists the
    commands. Starts the daemon if none runs.
    """
    editor = prompt is None and sys.stdin.isatty() and sys.stdout.isatty()
    plain = plain or not sys.stdout.isatty() or os.environ.get("TERM") == "dumb"
    with contextlib.ExitStack() as stack:
        if editor:  # from the start, so keys typed early reach the prompt as keys
            from .chat_input import raw_terminal

            stack.enter_context(raw_terminal())
        endpoint = daemon_endpoint(start=True)
        code = run_async(lambda: _chat(endpoint, prompt, session_id, plain, editor))
    sys.exit(code)


async def _chat(
    endpoint: Any, prompt: str | None, session_id: str | None, plain: bool, use_editor: bool
) -> int:
    import trio

    from hermes.gateway.client import GatewayError, connect

    from .chat_commands import ChatContext, refresh_sessions
    from .chat_state import ChatState

    async with connect(endpoint) as client:
        status = await client.call("daemon.status")
        since: int | None = None
        if session_id is None:
            title = prompt[:60] if prompt else None
            session_id = (await client.call("session.create", title=title))["id"]
            since = 0  # what the session said as it started (a BLOCKED context file)
        else:
            await client.call("session.resume", session=session_id)
        state = ChatState(session=session_id, model=str(status.get("model") or ""))
        actions_send, actions = trio.open_memory_channel[tuple[Any, ...]](64)
        token = trio.lowlevel.current_trio_token()

        def post(action: tuple[Any, ...]) -> None:  # from the prompt's thread
            token.run_sync_soon(_post_nowait, actions_send, action)

        reader: Any = None
        if use_editor:
            from .chat_input import PromptInput, history_path

            ctx_holder: list[ChatContext] = []
            reader = PromptInput(
                state,
                history_path(daemon_paths().data_dir),
                post,
                lambda: ctx_holder[0].sessions if ctx_holder else [],
            )
        out = _renderer(plain, state, live=prompt is not None, file=getattr(reader, "stdout", None))
        ctx = ChatContext(client=client, state=state, out=out)
        if use_editor:
            ctx_holder.append(ctx)
        try:
            if status["demo"]:
                out.note(f"offline demo model {status['model']}: set ANTHROPIC_API_KEY for Claude")
            out.note(f"session {session_id}")
            await client.call("events.subscribe", session=session_id, approvals=True, since=since)
            with contextlib.suppress(GatewayError):
                await refresh_sessions(ctx)
            return await _run(ctx, prompt, reader, actions)
        finally:
            out.close()
            if reader is not None:
                reader.close()


def _post_nowait(channel: Any, action: tuple[Any, ...]) -> None:
    import trio

    with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
        channel.send_nowait(action)


def _renderer(plain: bool, state: Any, live: bool, file: Any) -> Any:
    from .chat_render import PlainRenderer, RichRenderer

    if plain:
        return PlainRenderer(out=file, err=file)
    from rich.console import Console

    # The width follows the terminal (rich asks the standard streams at each print).
    console = Console(file=file, force_terminal=True, highlight=False)
    return RichRenderer(console, state, live=live)


async def _run(ctx: Any, prompt: str | None, reader: Any, actions: Any) -> int:
    import trio

    from hermes.gateway.client import GatewayError

    from .chat_commands import run_line
    from .chat_input import EXIT, LineInput

    client, state, out = ctx.client, ctx.state, ctx.out

    async def ctrl_c(action: str) -> None:
        if action == "exit":
            state.code = 130
            nursery.cancel_scope.cancel()
            return
        if state.turn is None and prompt is not None:
            return
        what = "interrupting" if action == "interrupt" else "cancelling"
        more = "again within 1 s to cancel" if action == "interrupt" else "again to leave"
        out.note(f"^C: {what} the turn; {more}")
        with contextlib.suppress(GatewayError):
            await client.call(action, session=state.session)

    async def on_signals() -> None:
        with trio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                if state.turn is None and prompt is None and reader is None:
                    state.code = 130
                    nursery.cancel_scope.cancel()
                    return
                await ctrl_c(state.ctrl_c())

    async def on_actions() -> None:
        async for action in actions:
            try:
                if action[0] == "ctrl-c":
                    await ctrl_c(action[1])
                elif action[0] == "approve":
                    await client.call(
                        "approval.respond",
                        session=state.session,
                        request_id=action[1],
                        choice=action[2],
                    )
            except GatewayError as exc:
                out.note(f"{exc.code}: {exc.message}")

    ended = [trio.Event()]
    """Set (and replaced) at each turn end, for ``settle``."""

    def show(event: dict[str, Any]) -> None:
        if event.get("session") not in (None, state.session):
            return  # a session this chat left
        kind = event["type"]
        state.apply(kind, event.get("payload") or {})
        out.event(event)
        if reader is not None:
            reader.invalidate()
        if kind == "turn.completed":
            ended[0].set()
            ended[0] = trio.Event()

    async def settle() -> None:
        """At the end of piped input: wait until the session has run what it was sent."""
        while True:
            turn_end = ended[0]
            view = await client.call("session.get", session=state.session)
            if not view["busy"] and not view["queued"]:
                return
            await turn_end.wait()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(on_signals)
        nursery.start_soon(on_actions)
        if prompt is not None:
            accepted = await client.call("prompt.submit", session=state.session, text=prompt)
            end = await wait_turn(client, accepted, prompt, show)
            state.code = 0 if end["reason"] in ("completed", "interrupted") else 1
            nursery.cancel_scope.cancel()
            return int(state.code)

        async def printer() -> None:
            async for event in client.events:
                show(event)
            out.note("the daemon closed the connection")
            nursery.cancel_scope.cancel()

        async def ticker() -> None:  # the toolbar's spinner and elapsed times
            while True:
                await trio.sleep(0.15)
                if reader.animated:
                    reader.invalidate()

        nursery.start_soon(printer)
        if reader is not None:
            nursery.start_soon(ticker)
        lines = reader if reader is not None else LineInput()
        while True:
            line = await lines.read()
            if line is EXIT:
                if reader is None:
                    await settle()
                break
            assert isinstance(line, str)
            text = line.strip()
            if not text:
                continue
            try:
                if await run_line(ctx, text):
                    break
            except GatewayError as exc:
                out.note(f"{exc.code}: {exc.message}")
        nursery.cancel_scope.cancel()
    return int(state.code)
