"""Typed requests: ``Call[R]`` gives ``ref.call`` its reply type; the classes stay plain attrs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from mypy import api as mypy_api

from actors import Actor, ActorSystem, Call
from supervisors._admin import GetChild, WhichChildren

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ROOT / "tests" / "typing_checks" / "typed_calls.py"


@attrs.frozen(slots=True)
class Add(Call[int]):
    n: int


@attrs.frozen(slots=True)
class Empty(Call[None]):
    pass


class Adder(Actor):
    def __init__(self) -> None:
        self.total = 0

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Add):
            self.total += message.n
            return self.total
        return ("untyped", message)


def _mypy(*paths: Path) -> tuple[str, int]:
    out, err, status = mypy_api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), *map(str, paths)]
    )
    return out + err, status


def test_reply_types_check_under_mypy_strict() -> None:
    report, status = _mypy(CHECKS)
    assert status == 0, report


def test_a_wrong_reply_type_is_an_error(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong_reply.py"
    wrong.write_text(
        "from typing import assert_type\n"
        "import attrs\n"
        "from actors import ActorRef, Call\n\n"
        "@attrs.frozen(slots=True)\n"
        "class Add(Call[int]):\n"
        "    n: int\n\n"
        "async def f(ref: ActorRef) -> None:\n"
        "    assert_type(await ref.call(Add(1)), str)\n"
        "    total = await ref.call(Add(1))\n"
        "    text: str = total\n"
    )
    report, status = _mypy(wrong)
    assert status == 1, report
    assert 'Expression is of type "int", not "str"' in report, report
    assert 'Incompatible types in assignment (expression has type "int"' in report, report


def test_call_requests_stay_frozen_slotted_value_classes() -> None:
    a = Add(2)
    assert a == Add(2) and a != Add(3) and hash(a) == hash(Add(2))
    assert Empty() == Empty()
    assert isinstance(a, Call) and isinstance(WhichChildren(), Call)
    assert not hasattr(a, "__dict__") and Call.__slots__ == ()
    assert GetChild("x") == GetChild("x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        a.n = 5  # type: ignore[misc]
    with pytest.raises((AttributeError, attrs.exceptions.FrozenInstanceError)):
        a.other = 1  # type: ignore[attr-defined]
    assert repr(a) == "Add(n=2)"


async def test_a_typed_call_and_an_untyped_one_both_reach_the_actor(system: ActorSystem) -> None:
    ref = await system.spawn(Adder(), name="adder")
    assert await ref.call(Add(2)) == 2
    assert await ref.call(Add(3)) == 5
    assert await ref.call("hi") == ("untyped", "hi")
