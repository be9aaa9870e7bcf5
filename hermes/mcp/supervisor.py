"""``McpSupervisor``: one ``McpServerActor`` per enabled server, one_for_one.

Each server is a permanent child named after it (``/…/mcp/github``). A
server's own failures never reach the supervisor (its actor retries with
backoff, see ``server.py``); a crash of an actor is a bug, and the
supervisor restarts it (with ``supervisors.Backoff`` between restarts) while
the other servers go on untouched. The ``ServerLink`` of each server is made
here and given to every incarnation of its actor, so the tools registered
from it survive a restart of the actor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hermes.tools import ToolRegistry
from supervisors import Backoff, ChildSpec, Strategy, Supervisor, SupervisorFlags

from .config import McpConfig
from .link import ServerLink
from .osv import OsvChecker
from .sampling import Sampler, SamplingGate
from .server import McpOptions, McpServerActor

RESTART_BACKOFF = Backoff(min=0.5, max=30.0)


class McpSupervisor(Supervisor):
    """See the module docstring; ``links`` maps each enabled server's name to its state."""

    def __init__(
        self,
        config: McpConfig,
        registry: ToolRegistry,
        *,
        environ: Mapping[str, str] | None = None,
        options: McpOptions | None = None,
        sampler: Sampler | None = None,
    ) -> None:
        environ = dict(os.environ if environ is None else environ)
        options = options or McpOptions()
        self.osv = OsvChecker(config.osv_url) if config.osv_check else None
        """Shared by every server, so its cache outlives an actor's restart."""
        self.links: dict[str, ServerLink] = {s.name: ServerLink(config=s) for s in config.enabled}
        specs = [  # links and sampling gates made once: a restarted actor keeps them
            ChildSpec(
                name,
                McpServerActor,
                args=(link, registry, environ, options, self.osv, self._gate(link, sampler)),
                shutdown=McpServerActor.shutdown_budget,
            )
            for name, link in self.links.items()
        ]
        super().__init__(
            specs,
            SupervisorFlags(
                strategy=Strategy.ONE_FOR_ONE,
                intensity=max(10, 3 * len(specs)),
                period=60.0,
                backoff=RESTART_BACKOFF,
            ),
        )

    @staticmethod
    def _gate(link: ServerLink, sampler: Sampler | None) -> SamplingGate | None:
        """The server's sampling gate, or None: sampling off, or no model to lend."""
        if sampler is None or not link.config.sampling.enabled:
            return None
        return SamplingGate(link.name, link.config.sampling, sampler)
