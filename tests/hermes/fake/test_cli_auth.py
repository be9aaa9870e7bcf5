"""``hermes fake-provider`` requires a key unless told ``--no-auth`` (issue 20 item 11)."""

from __future__ import annotations

import re
import signal
import subprocess

import httpx2
import trio

from .conftest import MODEL, user
from .test_cli import HERMES, read_all, read_line

BODY = {"model": MODEL, "max_tokens": 20, "messages": user("hello")}


async def test_without_api_key_it_draws_one_prints_it_and_requires_it() -> None:
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            HERMES, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            url = (await read_line(proc.stdout)).strip()
            notice = await read_line(proc.stderr)
            found = re.search(r"clients must send the API key (\S+) ", notice)
            assert found, notice
            key = found.group(1)
            async with httpx2.AsyncClient(trust_env=False) as http:
                refused = await http.post(f"{url}/v1/messages", json=BODY)
                wrong = await http.post(
                    f"{url}/v1/messages", json=BODY, headers={"x-api-key": "guess"}
                )
                served = await http.post(
                    f"{url}/v1/messages", json=BODY, headers={"x-api-key": key}
                )
            for answer in (refused, wrong):
                assert answer.status_code == 401
                assert answer.json()["type"] == "error"
                assert answer.json()["error"]["type"] == "authentication_error"
            assert served.status_code == 200
            assert served.json()["content"][0]["type"] == "text"
            proc.send_signal(signal.SIGTERM)
            assert await proc.wait() == 0
            await read_all(proc.stderr)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await proc.stdout.aclose()
            await proc.stderr.aclose()


def test_api_key_and_no_auth_exclude_each_other() -> None:
    done = subprocess.run(
        [*HERMES, "--api-key", "k", "--no-auth"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "--api-key and --no-auth exclude each other" in done.stderr
