"""``hermes fake-provider``: the fake Messages API as a process of its own."""

from __future__ import annotations

import click

from .app import main


@main.command("fake-provider")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--api-key", default=None, help="Key clients must send (default: accept any).")
@click.option(
    "--event-delay",
    default=0.0,
    show_default=True,
    type=float,
    help="Seconds between the demo model's SSE events.",
)
@click.option(
    "--reply", default=None, help="Answer every request with this text instead of the demo model."
)
@click.option("-v", "--verbose", is_flag=True, help="Log each request to stderr.")
def fake_provider(
    host: str,
    port: int,
    api_key: str | None,
    event_delay: float,
    reply: str | None,
    verbose: bool,
) -> None:
    """Serve the fake Anthropic Messages API (offline demo model) until SIGINT/SIGTERM.

    Prints the base URL (for ANTHROPIC_BASE_URL) on the first line of stdout.
    """
    import trio

    from actors import tune_gc
    from hermes.fake.standalone import serve_standalone

    tune_gc()  # a process of its own: fewer cyclic-GC passes over the request records
    trio.run(
        lambda: serve_standalone(
            host,
            port,
            verbose=verbose,
            reply=reply,
            api_key=api_key,
            demo_event_delay=event_delay,
            record_limit=1000,
        )
    )
