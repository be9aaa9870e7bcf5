"""``Settings``: the running configuration and what the daemon's actors share.

Apart from ``config.py`` so that reading the configuration (the CLI does) does
not import the store: a ``Settings`` carries the store's lane.
"""

from __future__ import annotations

import attrs

from hermes.paths import Paths
from hermes.store import StoreLane

from .config import Config
from .sessions_view import SessionsView


@attrs.define(slots=True, kw_only=True)
class Settings:
    """The running configuration, shared by the daemon's actors; SIGHUP swaps ``config``."""

    config: Config
    paths: Paths
    boot_id: str = ""
    started_at: float = 0.0
    store_lane: StoreLane = attrs.field(factory=StoreLane)
    """Shared by the store actor and the actors' store clients (see ``hermes/store/actor.py``)."""
    sessions_view: SessionsView = attrs.field(factory=SessionsView)
    """Filled by the sessions manager, read by its clients (see ``sessions_view.py``)."""
    gateway_port: int | None = None
    """The port the first gateway bound; a restarted gateway binds it again."""
