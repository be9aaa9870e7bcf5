"""``hermes fake-provider`` as a real subprocess: URL on the first line, clean exit on signals."""

from __future__ import annotations

import signal
import subprocess
import sys

import anthropic
import httpx2
import pytest
import trio

from hermes.fake.standalone import is_loopback

from .conftest import MODEL, user

HERMES = [sys.executable, "-c", "from hermes.cli import main; main()", "fake-provider"]


async def read_line(stream: trio.abc.ReceiveStream) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some(1)
        if not chunk:
            break
        data += chunk
    return data.decode()


async def read_all(stream: trio.abc.ReceiveStream) -> str:
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data.decode()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_cli_serves_and_exits_cleanly(signum: signal.Signals) -> None:
    with trio.fail_after(20):
        proc = await trio.lowlevel.open_process(
            [*HERMES, "--api-key", "cli-key", "--verbose"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            url = (await read_line(proc.stdout)).strip()
            assert url.startswith("http://127.0.0.1:") and int(url.rsplit(":", 1)[1]) > 0
            async with anthropic.AsyncAnthropic(
                api_key="cli-key",
                base_url=url,
                max_retries=0,
                http_client=httpx2.AsyncClient(trust_env=False),
            ) as client:
                message = await client.messages.create(
                    model=MODEL, max_tokens=200, messages=user("hello")
                )
            assert message.content[0].type == "text"
            assert "offline demo model" in message.content[0].text
            proc.send_signal(signum)
            assert await proc.wait() == 0
            err = await read_all(proc.stderr)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await proc.stdout.aclose()
            await proc.stderr.aclose()
    assert "POST /v1/messages 200 demo completed" in err
    assert f"{signum.name}, stopping" in err


async def test_cli_reply_option_and_non_loopback_warning() -> None:
    with trio.fail_after(20):
        proc = await trio.lowlevel.open_process(
            [*HERMES, "--host", "0.0.0.0", "--no-auth", "--reply", "fixed answer"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            url = (await read_line(proc.stdout)).strip()
            port = int(url.rsplit(":", 1)[1])
            async with httpx2.AsyncClient(trust_env=False) as http:
                response = await http.post(
                    f"http://127.0.0.1:{port}/v1/messages",
                    json={"model": MODEL, "max_tokens": 5, "messages": user("a")},
                )
            assert response.json()["content"] == [{"type": "text", "text": "fixed answer"}]
            proc.send_signal(signal.SIGTERM)
            assert await proc.wait() == 0
            err = await read_all(proc.stderr)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await proc.stdout.aclose()
            await proc.stderr.aclose()
    assert url.startswith("http://0.0.0.0:")
    assert "warning" in err and "not loopback" in err


def test_is_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.1.2.3") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert not is_loopback("example.com")
