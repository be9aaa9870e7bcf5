"""Finding the running daemon: its address and token, from the runtime directory.

The daemon writes the endpoint file (the gateway, once bound); every client reads
it here (``hermes.gateway.client``, ``hermes daemon start`` and ``stop``), without
trio or the WebSocket stack.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from hermes.paths import Paths

from .lock import holder
from .trust import check_private_dir, check_private_file, read_private_file


class NoDaemon(Exception):
    """No daemon is running (or it left no endpoint)."""


@attrs.frozen(slots=True)
class Endpoint:
    """The daemon's HTTP and WebSocket addresses, its token and pid (from its endpoint file)."""

    url: str
    ws: str
    token: str
    pid: int
    info: dict[str, Any]


def find_daemon(paths: Paths) -> Endpoint:
    """The running daemon's address and token (``NoDaemon`` if none runs).

    The runtime directory and the files read from it must be this user's and
    private (``hermes.daemon.trust``); otherwise ``Untrusted`` is raised and
    nothing in them is used.
    """
    if not check_private_dir(paths.runtime_dir) or not check_private_file(paths.lock_file):
        raise NoDaemon("no hermes daemon is running (start one with `hermes daemon start`)")
    pid = holder(paths.lock_file)
    if pid is None:
        raise NoDaemon("no hermes daemon is running (start one with `hermes daemon start`)")
    try:
        endpoint_text = read_private_file(paths.endpoint_file)
        token_text = read_private_file(paths.token_file)
        if endpoint_text is None or token_text is None:
            raise ValueError("not written yet")
        info = json.loads(endpoint_text)
        token = token_text.strip()
    except (OSError, ValueError):
        raise NoDaemon(f"the hermes daemon (pid {pid}) is starting or stopping") from None
    if info.get("pid") != pid:
        raise NoDaemon(f"the hermes daemon (pid {pid}) has not written its endpoint yet")
    return Endpoint(info["url"], info["ws"], token, pid, info)
