"""The validator factories of ``hermes.checks``: one message format for every record."""

from __future__ import annotations

import math

import attrs
import pytest

from hermes.checks import at_least, count, one_of, optional, positive, seconds

LABEL = "test settings"


@attrs.frozen(kw_only=True)
class Record:
    size: int = attrs.field(default=1, validator=count(LABEL))
    ratio: float = attrs.field(default=0.5, validator=positive(LABEL))
    floor: float = attrs.field(default=0.0, validator=at_least(LABEL, 0))
    timeout: float | None = attrs.field(default=None, validator=optional(seconds(LABEL)))
    mode: str = attrs.field(default="a", validator=one_of(LABEL, ("a", "b")))


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
    ],
)
def test_a_bad_value_is_refused_naming_the_record_field_and_value(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        Record(**fields)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_good_values_pass() -> None:
    record = Record(size=3, ratio=0.1, floor=0, timeout=2.5, mode="b")
    assert (record.size, record.timeout, record.mode) == (3, 2.5, "b")
    assert Record(timeout=None).timeout is None
