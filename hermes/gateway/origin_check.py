"""Refuse requests a web page made: a cross-site ``Origin``, or a ``Host`` that is not ours.

A page on another site can make the browser send requests to the daemon's
loopback port (with ``Origin`` naming that site), and with DNS rebinding a
name the attacker controls can point at 127.0.0.1 (then ``Host`` carries that
name). Both are refused with 403 before the token is looked at, for plain
HTTP and the WebSocket handshake alike (they share the request head).

Accepted:

- ``Host`` (absent, or with or without a port): ``127.0.0.1``, ``localhost``,
  ``[::1]``, the address the connection came in on, ``daemon.host``, and
  ``gateway.allowed_hosts``. Not checked on the unix socket (no address).
- ``Origin`` (absent, or): ``http://`` + one of the loopback names or the
  connection's address + ``:<the daemon's port>`` (a page the daemon itself
  would serve), or one of ``gateway.allowed_origins``. On the unix socket the
  loopback names with any port.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import trio

from hermes.daemon.config import Config

from .wire_http import BadRequest, RequestHead

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def check_origin_and_host(head: RequestHead, stream: trio.SocketStream, config: Config) -> None:
    """Raise ``BadRequest`` (403) naming the refused header, or return."""
    gateway: dict[str, Any] = dict(config.values["gateway"])
    if stream.socket.family == socket.AF_UNIX:
        local_host, local_port = None, None
    else:
        address = stream.socket.getsockname()
        local_host, local_port = _name(str(address[0])), int(address[1])
    hosts = set(LOOPBACK)
    if local_host is not None:
        hosts.add(local_host)
        bound = _name(str(config.get("daemon", "host")))
        if bound not in ("0.0.0.0", "::"):  # a wildcard is no name a client sends
            hosts.add(bound)
        hosts.update(_name(h) for h in gateway["allowed_hosts"])
        host = head.header("host")
        if host is not None and _split(host, "Host header")[0] not in hosts:
            raise BadRequest(
                403,
                "forbidden_host",
                f"refused the Host header {host!r}: this daemon answers only to "
                f"{', '.join(sorted(_shown(h) for h in hosts))} (a guard against DNS "
                "rebinding); add the name to [gateway] allowed_hosts to accept it",
            )
    origin = head.header("origin")
    if origin is not None and not _origin_ok(origin, hosts, local_port, gateway):
        raise BadRequest(
            403,
            "forbidden_origin",
            f"refused the Origin header {origin!r}: requests from web pages of other sites "
            "are not accepted (only http://127.0.0.1, localhost or [::1] with this daemon's "
            "port); add the origin to [gateway] allowed_origins to accept it",
        )


def _origin_ok(origin: str, hosts: set[str], port: int | None, gateway: dict[str, Any]) -> bool:
    wanted = origin.strip().lower().rstrip("/")
    if wanted in {o.lower().rstrip("/") for o in gateway["allowed_origins"]}:
        return True
    scheme, sep, rest = wanted.partition("://")
    if scheme != "http" or not sep:
        return False
    try:
        name, given = _split(rest, "Origin header")
    except BadRequest:
        return False
    if port is None:  # the unix socket: no port to compare
        return name in LOOPBACK
    return name in hosts and (given if given is not None else 80) == port


def _split(value: str, what: str) -> tuple[str, int | None]:
    """``host[:port]`` as a normalized name and the port (``BadRequest`` if malformed)."""
    text = value.strip().lower()
    if text.startswith("["):
        name, bracket, after = text[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise BadRequest(400, "bad_request", f"malformed {what} {value!r}")
        port_text = after[1:] if after else None
    else:
        name, colon, port_text_or_empty = text.partition(":")
        port_text = port_text_or_empty if colon else None
    if not name:
        raise BadRequest(400, "bad_request", f"malformed {what} {value!r}")
    port = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise BadRequest(400, "bad_request", f"malformed port in the {what} {value!r}")
        port = int(port_text)
    return _name(name), port


def _name(host: str) -> str:
    """A host name or address in one spelling (``[::1]`` and ``::1`` alike, lower case)."""
    text = host.strip().lower().removeprefix("[").removesuffix("]")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return text
    mapped = getattr(address, "ipv4_mapped", None)  # a v4 client on a dual-stack listener
    return str(mapped or address)


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host
