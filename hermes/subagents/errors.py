"""Refusals of ``delegate_task`` and of the subagent verbs; their text is for the model."""

from __future__ import annotations

from hermes.session import SessionError


class DelegationError(SessionError):
    """Base class: a delegation or a subagent verb was refused; nothing started."""


class SpawningPaused(DelegationError):
    """An operator paused spawning (daemon-wide)."""


class DepthLimit(DelegationError):
    """This session is too deep in the tree to delegate."""


class InvalidBatch(DelegationError):
    """The tasks themselves are wrong (empty, placeholders, too many...)."""


class AtCapacity(DelegationError):
    """Every slot is taken and admission rejects (or the queue is full)."""


class UnknownSubagent(DelegationError):
    """No subagent with that id belongs to this session."""
