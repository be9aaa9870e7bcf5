"""The floor of a CLI control command: one request over a bare ``trio-websocket`` connection.

``python bench/cli_baseline.py RUNTIME_DIR METHOD PARAMS_JSON`` reads the
running daemon's endpoint and token from ``RUNTIME_DIR`` (as ``hermes`` does),
opens the same WebSocket connection (``Authorization: Bearer`` token, the
``hermes.json`` subprotocol), sends the same request, prints the result as
JSON and exits 0 (1 on an error answer). ``bench/cli.py`` times it against
the ``hermes`` command that sends that request. It imports nothing from
``hermes``: this is what the command cannot go below.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio
import trio_websocket


async def request(runtime_dir: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The daemon's answer frame to ``method`` with ``params``."""
    info = json.loads((runtime_dir / "daemon.json").read_text())
    token = (runtime_dir / "token").read_text().strip()
    async with trio_websocket.open_websocket_url(
        info["ws"],
        extra_headers=[(b"authorization", f"Bearer {token}".encode())],
        subprotocols=["hermes.json"],
        max_message_size=16 << 20,
        connect_timeout=10,
        disconnect_timeout=2,
    ) as ws:
        await ws.send_message(json.dumps({"id": "r1", "method": method, "params": params}))
        while True:
            frame: dict[str, Any] = json.loads(await ws.get_message())
            if frame.get("id") == "r1":
                return frame


def main(argv: list[str]) -> int:
    runtime_dir, method, params = Path(argv[0]), argv[1], json.loads(argv[2])
    frame = trio.run(request, runtime_dir, method, params)
    if "error" in frame:
        print(json.dumps(frame["error"]), file=sys.stderr)
        return 1
    print(json.dumps(frame.get("result"), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
