"""The built-in tools: terminal, read_file, write_file, patch, search_files.

``default_registry()`` adds the ``process`` tool (``process_tool.py``, on ``hermes.processes``),
which manages the background processes ``terminal(background=true)`` starts.
"""

from __future__ import annotations

from ..base import Tool
from ..registry import ToolRegistry
from .patch import PatchTool
from .read_file import ReadFileTool
from .search import SearchFilesTool
from .terminal import (
    EXIT_INTERRUPTED,
    EXIT_TIMEOUT,
    FOREGROUND_DEFAULT_TIMEOUT,
    FOREGROUND_MAX_TIMEOUT,
    TerminalTool,
)
from .write_file import WriteFileTool


def builtin_tools(
    *,
    terminal_timeout: int = FOREGROUND_DEFAULT_TIMEOUT,
    terminal_max_timeout: int = FOREGROUND_MAX_TIMEOUT,
) -> list[Tool]:
    """Fresh instances of every built-in tool; the terminal's foreground timeouts as given."""
    terminal = TerminalTool(default_timeout=terminal_timeout, max_timeout=terminal_max_timeout)
    return [terminal, ReadFileTool(), WriteFileTool(), PatchTool(), SearchFilesTool()]


def default_registry(
    *,
    processes: bool = True,
    terminal_timeout: int = FOREGROUND_DEFAULT_TIMEOUT,
    terminal_max_timeout: int = FOREGROUND_MAX_TIMEOUT,
) -> ToolRegistry:
    """A registry holding the built-in tools and (unless ``processes=False``) ``process``.

    The ``process`` tool answers with a clear error in a session that has no
    ``ProcessService`` in its tool context. ``terminal_timeout`` and
    ``terminal_max_timeout``: the terminal's default and foreground cap (``[tools]``).
    """
    tools = builtin_tools(
        terminal_timeout=terminal_timeout, terminal_max_timeout=terminal_max_timeout
    )
    if processes:
        from .process_tool import ProcessTool  # loads hermes.processes (and the store): late

        tools.append(ProcessTool())
    return ToolRegistry(tools)


__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TIMEOUT",
    "FOREGROUND_DEFAULT_TIMEOUT",
    "FOREGROUND_MAX_TIMEOUT",
    "PatchTool",
    "ReadFileTool",
    "SearchFilesTool",
    "TerminalTool",
    "WriteFileTool",
    "builtin_tools",
    "default_registry",
]
