"""The CLI's one-line errors hold when a request's error arrives inside an exception group."""

from __future__ import annotations

import pytest

from hermes.cli.app import run_async
from hermes.gateway.client import GatewayError


def test_a_gateway_error_is_one_line_even_grouped_with_the_readers_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def request() -> None:
        raise ExceptionGroup(
            "client", [ExceptionGroup("inner", [GatewayError("not_found", "no live actor")]),
                       RuntimeError("reader")]
        )  # fmt: skip

    with pytest.raises(SystemExit) as info:
        run_async(request)
    assert info.value.code == 1
    assert capsys.readouterr().err == "hermes: not_found: no live actor\n"


def test_a_connection_failure_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    async def request() -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    with pytest.raises(SystemExit):
        run_async(request)
    assert capsys.readouterr().err.startswith("hermes: cannot talk to the daemon: Connection")


def test_an_unrelated_group_is_not_hidden() -> None:
    async def request() -> None:
        raise ExceptionGroup("bug", [KeyError("x")])

    with pytest.raises(ExceptionGroup):
        run_async(request)
