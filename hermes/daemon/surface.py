"""The daemon's API to its network surface (the gateway): how it is built, what it answers.

The gateway uses the sessions manager's client, the daemon's errors and its
settings, so it sits above this package in the import graph, and this package
imports nothing of it (``tests/test_layers.py``). The tree is handed the
surface's factory (``build_root(settings, token, surface)``; ``hermes daemon``
passes ``GatewayActor``), and talks to the child named ``gateway`` with the
calls below, which the gateway answers.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from actors import Actor, Call

from .settings import Settings


class SurfaceFactory(Protocol):
    """Builds the surface actor (the gateway) of one incarnation of the tree."""

    def __call__(self, settings: Settings, token: str) -> Actor:
        """A new surface serving with ``settings``, admitting clients with ``token``."""
        ...


@attrs.frozen(slots=True)
class GetAddress(Call[tuple[str, int]]):
    """The host and port the surface listens on (the daemon prints them once started)."""


@attrs.frozen(slots=True)
class StopInput(Call[None]):
    """The shutdown began: refuse new connections and requests (``shutdown.py``)."""


@attrs.frozen(slots=True)
class CloseSurfaces(Call[int]):
    """Close the listeners and every connection, WebSocket clients with a notice and
    a 1001 close frame; answered with how many connections were open."""


__all__ = ["CloseSurfaces", "GetAddress", "StopInput", "SurfaceFactory"]
