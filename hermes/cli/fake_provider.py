"""``hermes fake-provider``: the fake Messages API as a process of its own."""

from __future__ import annotations

import click

from .app import main


@main.command("fake-provider")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=0, show_default=True, type=int, help="Port (0: any free port).")
@click.option(
    "--api-key", default=None, help="Key clients must send (default: a random one, on stderr)."
)
@click.option(
    "--no-auth", is_flag=True, help="Accept requests without a key (anyone who reaches the port)."
)
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
    no_auth: bool,
    event_delay: float,
    reply: str | None,
    verbose: bool,
) -> None:
    """Serve the fake Anthropic Messages API (offline demo model) until SIGINT/SIGTERM.

    Prints the base URL (for ANTHROPIC_BASE_URL) on the first line of stdout.
    Clients must send the API key (``x-api-key``): ``--api-key KEY``, or a random
    key printed on stderr; ``--no-auth`` accepts any request.
    """
    import secrets

    import trio

    from actors import tune_gc
    from hermes.fake.standalone import serve_standalone

    if no_auth and api_key is not None:
        raise click.UsageError("--api-key and --no-auth exclude each other")
    if api_key is None and not no_auth:
        api_key = "fake-" + secrets.token_urlsafe(24)
        click.echo(
            f"fake provider: clients must send the API key {api_key} "
            "(x-api-key, or ANTHROPIC_API_KEY for the SDK); --no-auth to accept any",
            err=True,
        )
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
