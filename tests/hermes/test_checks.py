"""The validator factories of ``hermes.checks``: one message format for every record."""

from __future__ import annotations

import math

import attrs
import pytest

from hermes.checks import (
    at_least,
    count,
    durations,
    flag,
    fraction,
    name,
    one_of,
    optional,
    positive,
    seconds,
)

LABEL = "test settings"


@attrs.frozen(kw_only=True)
class Record:
    size: int = attrs.field(default=1, validator=count(LABEL))
    ratio: float = attrs.field(default=0.5, validator=positive(LABEL))
    floor: float = attrs.field(default=0.0, validator=at_least(LABEL, 0))
    timeout: float | None = attrs.field(default=None, validator=optional(seconds(LABEL)))
    mode: str = attrs.field(default="a", validator=one_of(LABEL, ("a", "b")))
    depth: int = attrs.field(default=1, validator=count(LABEL, 1, 3))
    delay: float = attrs.field(default=0.0, validator=seconds(LABEL, zero=True, below=60))
    waits: tuple[float, ...] = attrs.field(default=(1.0,), validator=durations(LABEL))
    share: float = attrs.field(default=0.5, validator=fraction(LABEL))
    saving: float = attrs.field(default=0.0, validator=fraction(LABEL, zero=True))
    on: bool = attrs.field(default=True, validator=flag(LABEL))
    model: str | None = attrs.field(default=None, validator=optional(name(LABEL, "a model name")))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"size": 0}, "test settings size: expected an integer >= 1, got 0"),
        ({"size": True}, "test settings size: expected an integer >= 1, got True"),
        ({"size": 2.0}, "test settings size: expected an integer >= 1, got 2.0"),
        ({"ratio": 0}, "test settings ratio: expected a number > 0, got 0"),
        ({"ratio": math.nan}, "test settings ratio: expected a number > 0, got nan"),
        ({"ratio": "1"}, "test settings ratio: expected a number > 0, got '1'"),
        ({"floor": -0.5}, "test settings floor: expected a number >= 0, got -0.5"),
        ({"timeout": 0}, "test settings timeout: expected seconds > 0, got 0"),
        ({"mode": "c"}, "test settings mode: expected one of 'a', 'b', got 'c'"),
        ({"timeout": math.inf}, "test settings timeout: expected seconds > 0, got inf"),
        ({"depth": 4}, "test settings depth: expected an integer from 1 to 3, got 4"),
        ({"delay": -1}, "test settings delay: expected seconds >= 0 and < 60, got -1"),
        ({"delay": 60}, "test settings delay: expected seconds >= 0 and < 60, got 60"),
        ({"waits": ()}, "test settings waits: expected a non-empty list of seconds >= 0, got ()"),
        (
            {"waits": (1, True)},
            "test settings waits: expected a non-empty list of seconds >= 0, got (1, True)",
        ),
        ({"share": 0}, "test settings share: expected a number in (0, 1], got 0"),
        ({"saving": 1.5}, "test settings saving: expected a number in [0, 1], got 1.5"),
        ({"on": 1}, "test settings on: expected true or false, got 1"),
        ({"model": "  "}, "test settings model: expected a model name, got '  '"),
    ],
)
def test_a_bad_value_is_refused_naming_the_record_field_and_value(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        Record(**fields)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_good_values_pass() -> None:
    record = Record(size=3, ratio=0.1, floor=0, timeout=2.5, mode="b", depth=3, delay=0)
    assert Record(waits=[0, 2.5], share=1, saving=0, on=False, model="m").model == "m"  # type: ignore[arg-type]
    assert (record.size, record.timeout, record.mode) == (3, 2.5, "b")
    assert Record(timeout=None).timeout is None
