"""Cyclic-GC settings for a process that holds many actors.

With CPython's default thresholds (700, 10, 10) the cyclic collector runs so
often while thousands of tasks and actors are created that starting and
stopping 10k of them costs about 15x the time for 1k, for raw trio tasks and
actors alike (``python -m bench supervision`` measures both). Raising the
first threshold restores near-linear scaling (about 10.5x) at the cost of
collecting cyclic garbage less often. Daemons call ``tune_gc()`` once at boot;
the library never changes global GC settings by itself.
"""

from __future__ import annotations

import gc

from ._checks import is_count

DEFAULT_THRESHOLDS = (50_000, 50, 100)


def tune_gc(thresholds: tuple[int, int, int] = DEFAULT_THRESHOLDS) -> tuple[int, int, int]:
    """Set the collector's thresholds; return the previous ones (to restore them)."""
    if len(thresholds) != 3 or any(not is_count(t) or t < 1 for t in thresholds):
        raise ValueError(f"GC thresholds must be three ints >= 1, got {thresholds!r}")
    previous: tuple[int, int, int] = gc.get_threshold()
    gc.set_threshold(*thresholds)
    return previous
