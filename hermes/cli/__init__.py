"""The ``hermes`` command line: a click group whose commands live in one module per area.

| module | commands |
|---|---|
| ``app.py`` | the group; shared helpers (paths, finding or starting the daemon, errors) |
| ``daemon_commands.py`` | ``daemon [start|stop|status]``, ``logs`` |
| ``commands.py`` | one-shot commands: ``sessions``, ``send``, ``steer``, ``stop``, ... |
| ``cron_commands.py`` | ``cron [add|list|edit|pause|resume|run|rm|runs]``, ``pause``, ``resume`` |
| ``memory_commands.py`` | ``memory [show|pending|approve|reject]``, ``compress`` |
| ``mcp_commands.py`` | ``mcp [list|test|enable|disable|login|serve]`` |
| ``mcp_serve.py`` | ``mcp serve``: the daemon as an MCP server over stdio |
| ``skills_commands.py`` | ``skills [list|show|install|remove|trust|pending|approve|scan|...]`` |
| ``curator_commands.py`` | ``curator [status|run|lock|unlock]`` |
| ``subagent_commands.py`` | ``subagents [pause|resume|status]`` (the spawn pause) |
| ``kanban_commands.py`` | ``kanban [add|list|show|edit|move|block|unblock|run|specify|...]`` |
| ``goal_commands.py`` | ``goal``, ``subgoal``, ``loop`` (a session's standing goal and loop) |
| ``safety_commands.py`` | ``checkpoints [list|diff|restore]``, ``approvals [list|revoke]`` |
| ``chat.py`` | ``chat`` |
| ``bench.py`` | ``bench`` (the benchmarks, run from a checkout) |
| ``fake_provider.py`` | ``fake-provider`` |
"""

from . import (
    bench,
    chat,
    commands,
    cron_commands,
    curator_commands,
    daemon_commands,
    fake_provider,
    goal_commands,
    kanban_commands,
    mcp_commands,
    memory_commands,
    safety_commands,
    skills_commands,
    subagent_commands,
)
from .app import main

__all__ = [
    "bench",
    "chat",
    "commands",
    "cron_commands",
    "curator_commands",
    "daemon_commands",
    "fake_provider",
    "goal_commands",
    "kanban_commands",
    "main",
    "mcp_commands",
    "memory_commands",
    "safety_commands",
    "skills_commands",
    "subagent_commands",
]
