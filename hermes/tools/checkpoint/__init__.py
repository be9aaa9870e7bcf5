"""Checkpoints: snapshots of a working directory in a shadow git repository.

| module | one job |
|---|---|
| ``shadow.py`` | ``ShadowRepo``: snapshot, list, diff and restore one directory |
| ``service.py`` | ``CheckpointService``: when (a turn's first write, destructive commands) |
"""

from .service import (
    CheckpointService,
    checkpoint_before_command,
    checkpoint_before_write,
    is_destructive,
    working_dir,
)
from .shadow import DEFAULT_EXCLUDES, Checkpoint, CheckpointError, ShadowRepo, age

__all__ = [
    "DEFAULT_EXCLUDES",
    "Checkpoint",
    "CheckpointError",
    "CheckpointService",
    "ShadowRepo",
    "age",
    "checkpoint_before_command",
    "checkpoint_before_write",
    "is_destructive",
    "working_dir",
]
