"""Child specs and supervisor flags, validated field by field.

Every invalid value is rejected with ``SpecError`` naming the field and the
bad value, so a wrong spec fails where it is written, not at the first crash.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import Any

import attrs

from actors import Actor, LivenessSpec, MailboxConfig, Task, is_count, is_number

from ._backoff import Backoff
from ._errors import SpecError


class Restart(enum.Enum):
    """When a child is restarted after it exits."""

    PERMANENT = "permanent"
    """Always."""
    TRANSIENT = "transient"
    """Only after an abnormal exit (anything but normal and shutdown)."""
    TEMPORARY = "temporary"
    """Never; its spec is forgotten when it exits."""


class ChildType(enum.Enum):
    WORKER = "worker"
    SUPERVISOR = "supervisor"


class Strategy(enum.Enum):
    ONE_FOR_ONE = "one_for_one"
    """Restart only the child that exited."""
    ONE_FOR_ALL = "one_for_all"
    """Stop the others in reverse start order, restart all in start order."""
    REST_FOR_ONE = "rest_for_one"
    """Stop the later children in reverse order, restart it and them in order."""


class AutoShutdown(enum.Enum):
    NEVER = "never"
    ANY_SIGNIFICANT = "any_significant"
    """Shut down when any significant child exits on its own and is not restarted."""
    ALL_SIGNIFICANT = "all_significant"
    """Shut down when the last significant child has so exited."""


BRUTAL = 0.0
"""``shutdown=BRUTAL``: cancel the child at once (its exit reason is ``killed``)."""
INFINITY = math.inf
"""``shutdown=INFINITY``: wait for the child however long it takes (default for supervisors)."""


class Ignore(enum.Enum):
    IGNORE = "ignore"


IGNORE = Ignore.IGNORE
"""A start factory may return ``IGNORE``: nothing starts; the spec is kept unless temporary."""

StartFactory = Callable[..., Any]
"""Returns a new ``Actor`` instance (or ``IGNORE``) each time it is called."""


def _fail(field: str, value: object, expected: str) -> SpecError:
    return SpecError(f"invalid {field}: {value!r} (expected {expected})")


def _check_id(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, str) or not value or "/" in value:
        raise _fail("child spec id", value, "a non-empty str without '/'")


def _check_start(_: Any, __: Any, value: Any) -> None:
    if not callable(value) or isinstance(value, Actor):
        raise _fail("child spec start", value, "a callable returning a new Actor or IGNORE")


def _check_enum(kind: type[enum.Enum], field: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, kind):
            raise _fail(field, value, f"one of {[m.name for m in kind]}")

    return check


def _check_shutdown(_: Any, __: Any, value: Any) -> None:
    if not is_number(value) or not value >= 0:
        raise _fail("child spec shutdown", value, "seconds >= 0, BRUTAL (0) or INFINITY")


def _check_optional(kind: type, field: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if value is not None and not isinstance(value, kind):
            raise _fail(field, value, f"None or a {kind.__name__}")

    return check


def _check_stash(_: Any, __: Any, value: Any) -> None:
    if not is_count(value) or value < 0:
        raise _fail("child spec stash_capacity", value, "an int >= 0")


def _check_args(_: Any, __: Any, value: Any) -> None:
    if not isinstance(value, tuple):
        raise _fail("child spec args", value, "a tuple")


def _default_shutdown(spec: Any) -> float:
    return INFINITY if spec.type is ChildType.SUPERVISOR else 5.0


@attrs.frozen(slots=True)
class ChildSpec:
    """How to start, restart and stop one child (OTP's child spec, plus liveness and stash)."""

    id: str = attrs.field(validator=_check_id)
    start: StartFactory = attrs.field(validator=_check_start)
    args: tuple[Any, ...] = attrs.field(default=(), validator=_check_args)
    restart: Restart = attrs.field(
        default=Restart.PERMANENT, validator=_check_enum(Restart, "child spec restart")
    )
    type: ChildType = attrs.field(
        default=ChildType.WORKER, validator=_check_enum(ChildType, "child spec type")
    )
    shutdown: float = attrs.field(
        default=attrs.Factory(_default_shutdown, takes_self=True), validator=_check_shutdown
    )
    significant: bool = attrs.field(default=False)
    liveness: LivenessSpec | None = attrs.field(
        default=None, validator=_check_optional(LivenessSpec, "child spec liveness")
    )
    mailbox: MailboxConfig | None = attrs.field(
        default=None, validator=_check_optional(MailboxConfig, "child spec mailbox")
    )
    stash_capacity: int = attrs.field(default=1000, validator=_check_stash)
    """Messages kept for the child while it restarts; beyond that they are dead letters."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.significant, bool):
            raise _fail("child spec significant", self.significant, "a bool")
        if self.significant and self.restart is Restart.PERMANENT:
            raise _fail("child spec significant", True, "False for a permanent child (OTP rule)")

    def make(self, *extra: Any) -> Any:
        """Call the start factory with the spec's args plus ``extra``."""
        return self.start(*self.args, *extra)


def task_spec(
    id: str,
    start: Callable[..., Any],
    *args: Any,
    restart: Restart = Restart.TEMPORARY,
    shutdown: float = 5.0,
    significant: bool = False,
) -> ChildSpec:
    """A child spec for a one-shot task (``actors.Task``): temporary unless told otherwise.

    ``start`` is a ``Task`` subclass (called with ``args``) or an async function
    (run as ``fn(*args)``); its return is a ``normal`` exit, a raise a crash, so
    ``TRANSIENT`` runs it again until it returns. No one awaits the value.
    """
    if isinstance(start, type) and issubclass(start, Task):
        return ChildSpec(
            id, start, args=args, restart=restart, shutdown=shutdown, significant=significant
        )
    if isinstance(start, (Actor, type)) or not callable(start):
        raise _fail("task spec start", start, "a Task subclass or an async function")
    return ChildSpec(
        id,
        Task.of,
        args=(start, *args),
        restart=restart,
        shutdown=shutdown,
        significant=significant,
    )


def _check_intensity(_: Any, __: Any, value: Any) -> None:
    if not is_count(value) or value < 0:
        raise _fail("supervisor intensity", value, "an int >= 0")


def _check_period(_: Any, __: Any, value: Any) -> None:
    if not is_number(value) or not (0 < value < math.inf):
        raise _fail("supervisor period", value, "a finite number of seconds > 0")


@attrs.frozen(slots=True)
class SupervisorFlags:
    """Strategy and restart limits of one supervisor.

    Defaults are OTP's: ``intensity=1`` restart in ``period=5`` seconds. A
    supervisor of children that routinely crash twice in a few seconds says so
    with its own intensity.
    """

    strategy: Strategy = attrs.field(
        default=Strategy.ONE_FOR_ONE, validator=_check_enum(Strategy, "supervisor strategy")
    )
    intensity: int = attrs.field(default=1, validator=_check_intensity)
    period: float = attrs.field(default=5.0, validator=_check_period)
    auto_shutdown: AutoShutdown = attrs.field(
        default=AutoShutdown.NEVER,
        validator=_check_enum(AutoShutdown, "supervisor auto_shutdown"),
    )
    backoff: Backoff | None = attrs.field(
        default=None, validator=_check_optional(Backoff, "supervisor backoff")
    )
