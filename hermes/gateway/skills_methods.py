"""``skills.list``, ``skills.show``, ``skills.install``, ``skills.remove``, ``skills.trust``,
``skills.pending``, ``skills.approve``, ``skills.reject``.

The same operations as ``hermes skills`` (``hermes.skills.views``), on the
daemon's skill places: ``<data_dir>/skills``, the bundled skills and, for a
``cwd`` whose project is in ``[skills] trusted_projects``, its
``.hermes/skills``. Paths (``cwd``, ``path``, ``project``) are absolute paths on
the daemon's machine. ``skills.install`` follows the install policy of seed
#133 (a threat scan first; ``force`` lifts a caution, never a dangerous
verdict from outside the bundled skills). ``skills.trust`` edits the config
file; running sessions keep the list they started with until the daemon
restarts. ``skills.pending``, ``.approve`` and ``.reject`` are ``hermes skills
pending|approve|reject``: the changes ``[skills] write_approval`` staged in
``<data_dir>/skills/.pending``. File work runs in a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from hermes.daemon.errors import RequestError
from hermes.daemon.settings import Settings
from hermes.daemon.workdir import PATH_LIMIT
from hermes.skills import SkillLibrary, SkillWriteError
from hermes.skills.trust import TrustError, set_trust
from hermes.skills.views import decided, installed, listing, removed, shown, staged

from .params import Method, Params

TIMEOUT = 60.0
PENDING = ".pending"
"""The HTTP path segment of the staged changes (``/skills/.pending``)."""
WIRE_CODES = {
    "locked": "skill_locked",
    "exists": "skill_exists",
    "invalid": "invalid_skill",
    "too_large": "invalid_skill",
    "threat": "unsafe_skill",
    "needs_force": "needs_force",
    "unknown_skill": "unknown_skill",
    "quarantined": "quarantined",
    "io": "skill_error",
    "unknown_change": "unknown_change",
    "unreadable": "skill_error",
}
"""A refused skill operation's reason -> its wire code (``locked`` alone is the memory
file lock's code already)."""


def skills_methods(settings: Settings) -> dict[str, Method]:
    """The ``skills.*`` entries of the method table."""

    def library() -> SkillLibrary:
        config = settings.config
        return SkillLibrary(
            config.data_dir(settings.paths) / "skills",
            trusted_projects=tuple(config.get("skills", "trusted_projects")),
            pinned=tuple(config.get("skills", "pinned")),
        )

    def path(p: Params, name: str, *, required: bool) -> Path | None:
        given = p.text(name, limit=PATH_LIMIT) if required else p.opt_str(name, limit=PATH_LIMIT)
        if given is None:
            return None
        if not os.path.isabs(given):
            raise RequestError(
                f"{p.method}: param {name!r} must be an absolute path, got {given[:200]!r}",
                "invalid_params",
            )
        if not os.path.isdir(given):
            raise RequestError(
                f"{p.method}: param {name!r} is not a directory: {given[:200]!r}",
                "invalid_params",
            )
        return Path(given)

    async def run(fn: Callable[[], Any]) -> Any:
        with trio.fail_after(TIMEOUT):
            try:
                return await trio.to_thread.run_sync(fn)
            except SkillWriteError as exc:
                raise RequestError(str(exc), WIRE_CODES.get(exc.reason, "skill_error")) from None
            except TrustError as exc:
                raise RequestError(str(exc), "config_error") from None

    async def list_(p: Params) -> Any:
        cwd = path(p, "cwd", required=False)
        p.done()
        return await run(lambda: listing(library(), cwd))

    async def show(p: Params) -> Any:
        name = p.text("name", limit=200)
        cwd = path(p, "cwd", required=False)
        p.done()
        return await run(lambda: shown(library(), cwd, name))

    async def install(p: Params) -> Any:
        folder = path(p, "path", required=True)
        force = p.opt_bool("force", False)
        p.done()
        assert folder is not None
        return await run(lambda: installed(library(), folder, force=force))

    async def remove(p: Params) -> Any:
        name = p.text("name", limit=200)
        p.done()
        return await run(lambda: removed(library(), name))

    async def trust(p: Params) -> Any:
        project = path(p, "project", required=True)
        trusted = p.opt_bool("trusted", True)
        p.done()
        assert project is not None

        def change() -> dict[str, Any]:
            root, changed = set_trust(settings.paths.config_file, project, trusted)
            return {
                "project": str(root),
                "trusted": trusted,
                "changed": changed,
                "applies": "to sessions of a restarted daemon",
            }

        return await run(change)

    async def pending(p: Params) -> Any:
        p.done()
        return await run(lambda: staged(library()))

    def decide(approved: bool) -> Method:
        async def method(p: Params) -> Any:
            change = p.text("change", limit=200)
            p.done()
            return await run(lambda: decided(library(), change, approved=approved))

        return method

    return {
        "skills.list": list_,
        "skills.pending": pending,
        "skills.approve": decide(True),
        "skills.reject": decide(False),
        "skills.show": show,
        "skills.install": install,
        "skills.remove": remove,
        "skills.trust": trust,
    }


def skills_route(
    verb: str, rest: list[str], body: dict[str, Any], cwd: str | None
) -> tuple[str, dict[str, Any]] | None:
    """HTTP routes under ``/skills`` (``http_api.py``): ``GET /skills[?cwd=]``,
    ``GET /skills/{name}[?cwd=]``, ``POST /skills/install`` ``{"path", "force"}``,
    ``POST /skills/trust`` ``{"project", "trusted"}``, ``POST /skills/{name}/remove``,
    ``GET /skills/.pending``, ``POST /skills/.pending/{change}/{approve,reject}`` (the
    dot keeps them apart from a skill's name, which cannot start with one)."""
    where = {} if cwd is None else {"cwd": cwd}
    if rest[:1] == [PENDING]:
        if verb == "GET" and len(rest) == 1:
            return "skills.pending", {}
        if verb == "POST" and len(rest) == 3 and rest[2] in ("approve", "reject"):
            return f"skills.{rest[2]}", {"change": rest[1]}
        return None
    if verb == "GET" and not rest:
        return "skills.list", where
    if verb == "GET" and len(rest) == 1:
        return "skills.show", {**where, "name": rest[0]}
    if verb == "POST" and rest in (["install"], ["trust"]):
        return f"skills.{rest[0]}", body
    if verb == "POST" and len(rest) == 2 and rest[1] == "remove":
        return "skills.remove", {"name": rest[0]}
    return None
