"""The malware check before a stdio server launched through ``npx``, ``uvx`` or ``pipx`` starts.

Hermes' rule (seed #130): the package the launcher would fetch is looked up
in the OSV database (``POST {"package": {"name", "ecosystem"}, "version"}``
to ``[mcp] osv_url``); the launch is blocked only when an advisory's id
starts with ``MAL-`` (ordinary CVEs are ignored). Verdicts are cached for an
hour. A network error, a bad answer or a check slower than ``OSV_TIMEOUT``
lets the server start (fail-open), and says so in the log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import attrs
import httpx2
import trio

log = logging.getLogger("hermes.mcp")

OSV_URL = "https://api.osv.dev/v1/query"
OSV_TIMEOUT = 12.0
CACHE_SECONDS = 3600.0


@attrs.frozen(slots=True)
class Package:
    """What a launcher would fetch: ecosystem (``npm``, ``PyPI``), name, version if pinned."""

    ecosystem: str
    name: str
    version: str | None = None

    def __str__(self) -> str:
        pinned = f"@{self.version}" if self.version else ""
        return f"{self.ecosystem} package {self.name}{pinned}"


_NPX_VALUE_OPTIONS = ("-p", "--package", "-c", "--call")
_UVX_VALUE_OPTIONS = ("--from", "--with", "-w", "--python", "-p", "--index", "--index-url")


def launched_package(command: str, args: Sequence[str]) -> Package | None:
    """The package ``command args`` would fetch and run, when it is npx, uvx or pipx."""
    launcher = os.path.basename(command)
    if launcher == "npx":
        spec = _option(args, ("-p", "--package")) or _first_positional(args, _NPX_VALUE_OPTIONS)
        return _npm(spec) if spec else None
    if launcher == "uvx" or (launcher == "uv" and args[:2] == ["tool", "run"]):
        rest = list(args[2:]) if launcher == "uv" else list(args)
        spec = _option(rest, ("--from",)) or _first_positional(rest, _UVX_VALUE_OPTIONS)
        return _pypi(spec) if spec else None
    if launcher == "pipx" and args[:1] == ["run"]:
        rest = list(args[1:])
        spec = _option(rest, ("--spec",)) or _first_positional(rest, ("--spec", "--python"))
        return _pypi(spec) if spec else None
    return None


def _option(args: Sequence[str], names: tuple[str, ...]) -> str | None:
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def _first_positional(args: Sequence[str], value_options: tuple[str, ...]) -> str | None:
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            continue
        elif arg.startswith("-"):
            skip = arg in value_options
        else:
            return arg
    return None


def _npm(spec: str) -> Package:
    scoped = spec.startswith("@")
    body = spec[1:] if scoped else spec
    name, _, version = body.partition("@")
    return Package("npm", ("@" if scoped else "") + name, version or None)


def _pypi(spec: str) -> Package:
    for sep in ("==", "@"):
        if sep in spec:
            name, version = spec.split(sep, 1)
            return Package("PyPI", name.split("[", 1)[0].strip(), version.strip() or None)
    return Package("PyPI", spec.split("[", 1)[0].strip())


class OsvChecker:
    """Asks OSV about packages, caching each verdict for an hour (shared by every server)."""

    def __init__(self, url: str = OSV_URL, timeout: float = OSV_TIMEOUT) -> None:
        self.url = url
        self.timeout = timeout
        self._cache: dict[Package, tuple[float, tuple[str, ...]]] = {}
        self.queries = 0
        """Requests actually sent (the cache answers the rest)."""

    async def malware(self, package: Package) -> tuple[str, ...]:
        """The ``MAL-`` advisory ids for ``package``; empty when none or when OSV fails."""
        now = trio.current_time()
        cached = self._cache.get(package)
        if cached is not None and cached[0] > now:
            return cached[1]
        found = await self._query(package)
        if found is not None:
            self._cache[package] = (now + CACHE_SECONDS, found)
        return found or ()

    async def _query(self, package: Package) -> tuple[str, ...] | None:
        body: dict[str, object] = {
            "package": {"name": package.name, "ecosystem": package.ecosystem}
        }
        if package.version:
            body["version"] = package.version
        self.queries += 1
        try:
            with trio.fail_after(self.timeout):
                async with httpx2.AsyncClient(timeout=self.timeout) as client:
                    response = await client.post(self.url, json=body)
                    response.raise_for_status()
                    data = response.json()
            vulns = data.get("vulns", []) if isinstance(data, dict) else []
            ids = tuple(
                str(v["id"]) for v in vulns if isinstance(v, dict) and isinstance(v.get("id"), str)
            )
        except (trio.TooSlowError, httpx2.HTTPError, ValueError) as exc:
            why = str(exc) or type(exc).__name__
            log.warning("OSV check of %s failed (%s); starting it anyway", package, why)
            return None
        return tuple(i for i in ids if i.startswith("MAL-"))
