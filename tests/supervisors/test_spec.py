"""Child specs and supervisor flags: defaults, and every invalid value rejected by field."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from actors import LivenessSpec, MailboxConfig
from supervisors import (
    INFINITY,
    Admission,
    AutoShutdown,
    Backoff,
    ChildSpec,
    ChildType,
    DynamicSupervisor,
    Restart,
    SpecError,
    Strategy,
    Supervisor,
    SupervisorFlags,
)

from .helpers import Worker, spec


def factory() -> Worker:
    return Worker("w")


def rejects(field: str, value: Any) -> Any:
    """``pytest.raises(SpecError)`` whose message names ``field`` and ``repr(value)``."""
    return pytest.raises(SpecError, match=re.escape(f"invalid {field}: {value!r}"))


def test_child_spec_defaults() -> None:
    worker = ChildSpec("w", factory)
    assert (worker.restart, worker.type, worker.shutdown) == (
        Restart.PERMANENT,
        ChildType.WORKER,
        5.0,
    )
    assert (worker.args, worker.significant, worker.liveness, worker.stash_capacity) == (
        (),
        False,
        None,
        1000,
    )
    sup = ChildSpec("s", factory, type=ChildType.SUPERVISOR)
    assert sup.shutdown == INFINITY


def test_supervisor_flag_defaults() -> None:
    flags = SupervisorFlags()
    assert flags.strategy is Strategy.ONE_FOR_ONE
    assert (flags.intensity, flags.period) == (1, 5.0)  # OTP's defaults
    assert flags.auto_shutdown is AutoShutdown.NEVER
    assert flags.backoff is None


def test_make_appends_extra_args_to_spec_args() -> None:
    made = ChildSpec("w", Worker, args=("w", None, 1)).make(2, 3)
    assert isinstance(made, Worker)
    assert made.extra == (1, 2, 3)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", ""),
        ("id", "a/b"),
        ("id", 7),
        ("id", None),
        ("start", "not callable"),
        ("start", Worker("instance")),
        ("args", ["a", "list"]),
        ("restart", "permanent"),
        ("type", "worker"),
        ("shutdown", -1),
        ("shutdown", "5"),
        ("shutdown", True),
        ("shutdown", math.nan),
        ("significant", 1),
        ("significant", "yes"),
        ("liveness", 3.0),
        ("mailbox", 100),
        ("stash_capacity", -1),
        ("stash_capacity", 1.5),
        ("stash_capacity", True),
    ],
)
def test_invalid_child_spec_field_is_named_with_its_value(field: str, value: Any) -> None:
    fields: dict[str, Any] = {"id": "w", "start": factory, field: value}
    if field == "significant":
        fields["restart"] = Restart.TRANSIENT
    with rejects(f"child spec {field}", value):
        ChildSpec(**fields)


def test_valid_optional_fields_are_accepted() -> None:
    child = ChildSpec(
        "w",
        factory,
        restart=Restart.TRANSIENT,
        shutdown=INFINITY,
        significant=True,
        liveness=LivenessSpec(1.0),
        mailbox=MailboxConfig(capacity=5),
        stash_capacity=0,
    )
    assert child.significant and child.stash_capacity == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("strategy", "one_for_all"),
        ("intensity", -1),
        ("intensity", 1.5),
        ("intensity", True),
        ("period", 0),
        ("period", -5),
        ("period", math.inf),
        ("period", "5"),
        ("auto_shutdown", "any_significant"),
        ("backoff", 1.0),
    ],
)
def test_invalid_supervisor_flag_is_named_with_its_value(field: str, value: Any) -> None:
    with rejects(f"supervisor {field}", value):
        SupervisorFlags(**{field: value})
    # The same check applies to flags given to the Supervisor directly.
    with rejects(f"supervisor {field}", value):
        Supervisor([], **{field: value})


def test_unknown_flag_and_mixed_flag_styles_are_rejected() -> None:
    with pytest.raises(SpecError, match=r"invalid supervisor flags: .*stratgy"):
        Supervisor([], stratgy=Strategy.ONE_FOR_ALL)
    with pytest.raises(
        SpecError, match=r"pass flags or flag fields, not both \(got \['intensity'\]"
    ):
        Supervisor([], SupervisorFlags(), intensity=2)


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"min": -1, "max": 1}, "min", -1),
        ({"min": 1, "max": math.inf}, "max", math.inf),
        ({"min": 2, "max": 1}, "max", 1),
        ({"min": 1, "max": 2, "random_factor": -0.1}, "random_factor", -0.1),
        ({"min": 1, "max": 2, "reset_after": -3}, "reset_after", -3),
        ({"min": "1", "max": 2}, "min", "1"),
    ],
)
def test_invalid_backoff_is_named_with_its_value(
    fields: dict[str, Any], field: str, value: Any
) -> None:
    with rejects(f"backoff {field}", value):
        Backoff(**fields)


def test_duplicate_child_ids_are_rejected() -> None:
    with rejects("child spec id", "a") as info:
        Supervisor([spec("a"), spec("b"), spec("a")])
    assert "duplicate" in str(info.value)


def test_non_spec_child_is_rejected() -> None:
    with pytest.raises(SpecError, match=r"invalid child spec: 'a' \(expected a ChildSpec\)"):
        Supervisor(["a"])  # type: ignore[list-item]


def test_significant_permanent_child_is_rejected() -> None:
    with rejects("child spec significant", True) as info:
        ChildSpec("w", factory, significant=True)
    assert "permanent" in str(info.value)


@pytest.mark.parametrize("restart", [Restart.TRANSIENT, Restart.TEMPORARY])
def test_significant_child_needs_auto_shutdown(restart: Restart) -> None:
    child = spec("a", restart=restart, significant=True)
    with rejects("child spec significant", True) as info:
        Supervisor([child])
    assert "'a'" in str(info.value) and "auto_shutdown is never" in str(info.value)
    for mode in (AutoShutdown.ANY_SIGNIFICANT, AutoShutdown.ALL_SIGNIFICANT):
        Supervisor([child], auto_shutdown=mode)


@pytest.mark.parametrize(
    ("kwargs", "field", "value"),
    [
        ({"max_children": 0}, "max_children", 0),
        ({"max_children": True}, "max_children", True),
        ({"max_children": 2.0}, "max_children", 2.0),
        ({"admission": "queue"}, "admission", "queue"),
        ({"queue_capacity": 0}, "queue_capacity", 0),
        ({"intensity": -1}, "supervisor intensity", -1),
    ],
)
def test_invalid_dynamic_supervisor_option(kwargs: dict[str, Any], field: str, value: Any) -> None:
    with rejects(field, value):
        DynamicSupervisor(spec("w"), **kwargs)


def test_dynamic_template_must_be_a_non_significant_spec() -> None:
    with rejects("template", "w"):
        DynamicSupervisor("w")  # type: ignore[arg-type]
    significant = spec("w", restart=Restart.TEMPORARY, significant=True)
    with rejects("template significant", True):
        DynamicSupervisor(significant)
    DynamicSupervisor(spec("w"), max_children=1, admission=Admission.QUEUE, queue_capacity=1)


def test_flags_of_the_wrong_type_are_rejected() -> None:
    with rejects("supervisor flags", "one_for_all"):
        Supervisor([], "one_for_all")  # type: ignore[arg-type]
