"""The ``providers`` actor: the model client the sessions use.

With ``ANTHROPIC_API_KEY`` it is a ``ModelClient`` for Claude. Without it, the
built-in fake provider (the offline demo model) runs in-process on a loopback
port, in a child actor ``fake``, and the client talks to it over real HTTP:
the same code path as with Claude. The fake requires a key, drawn at random
at every start and known only to this process: another local user who finds
its port gets the Messages API's 401 ``authentication_error``.
"""

from __future__ import annotations

import logging
import secrets

import attrs
import trio

from actors import Actor, Call
from hermes.fake import FakeProvider
from hermes.model import ModelClient

from .config import Config

log = logging.getLogger("hermes.daemon.providers")


@attrs.frozen(slots=True)
class GetProviders(Call["Providers"]):
    pass


@attrs.frozen(slots=True)
class Providers:
    client: ModelClient
    model: str
    demo: bool
    base_url: str | None


@attrs.frozen(slots=True)
class _Serve(Call[str]):
    pass


class FakeServer(Actor):
    """Serves the fake provider in its ``receive`` until stopped; answers the base URL."""

    def __init__(self, api_key: str, event_delay: float = 0.0) -> None:
        # No request records: nothing in the daemon reads them, and each one holds its
        # request's parsed JSON body (the whole conversation: hundreds of dicts and lists
        # in a long session). With 100 kept, at ~50 requests/s (bench gateway) those bodies
        # stayed alive ~2 s past their exchange and were traversed by young collections.
        self.provider = FakeProvider(api_key=api_key, record_limit=0, demo_event_delay=event_delay)

    async def receive(self, message: object) -> None:
        if isinstance(message, _Serve):
            reply = self.ctx.defer_reply()
            async with trio.open_nursery() as nursery:
                await nursery.start(self.provider.serve, "127.0.0.1", 0)
                reply.send(self.provider.base_url)
                await trio.sleep_forever()


class ProvidersActor(Actor):
    def __init__(self, config: Config) -> None:
        self.config = config
        self.providers: Providers | None = None

    async def on_start(self) -> None:
        config = self.config
        fallback: list[str] = config.get("model", "fallback_models")
        if config.api_key:
            base_url = config.get("model", "base_url") or None
            client = ModelClient(
                api_key=config.api_key, base_url=base_url, fallback_models=fallback
            )
            self.providers = Providers(client, config.model, False, base_url)
            log.info("model %s through the Messages API", config.model)
            return
        key = "fake-" + secrets.token_urlsafe(24)
        fake = await self.ctx.spawn(
            FakeServer(key, config.get("model", "fake_event_delay")), name="fake", shutdown=0
        )
        fake_url = await fake.call(_Serve())
        client = ModelClient(
            api_key=key, base_url=fake_url, trust_env=False, fallback_models=fallback
        )
        self.providers = Providers(client, config.model, True, fake_url)
        log.warning(
            "no ANTHROPIC_API_KEY: using the built-in fake provider (offline demo model %s at %s)",
            config.model,
            fake_url,
        )

    async def receive(self, message: object) -> object:
        if isinstance(message, GetProviders):
            return self.providers
        return None

    async def on_stop(self, reason: object) -> None:
        if self.providers is not None:
            with trio.move_on_after(1.0):
                await self.providers.client.aclose()
