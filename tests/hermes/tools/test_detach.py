"""Which foreground lines would detach (``detach.py``, seed #148), read with the bash grammar."""

from __future__ import annotations

import pytest

from hermes.tools.detach import detaches


@pytest.mark.parametrize(
    ("command", "kind", "what", "runs"),
    [
        ("nohup ./serve.sh > log 2>&1 &", "detacher", "nohup", "nohup ./serve.sh > log 2>&1"),
        ("sudo setsid worker", "detacher", "setsid", "sudo setsid worker"),
        ("long_job & disown", "detacher", "disown", "long_job & disown"),
        ("make watch &", "trailing_ampersand", "&", "make watch"),
        ("cd app && npm run dev", "server", "npm run dev", "cd app && npm run dev"),
        ("pnpm start", "server", "pnpm start", "pnpm start"),
        ("npx vite", "server", "vite", "npx vite"),
        ("docker compose up", "server", "docker compose up", "docker compose up"),
        ("uvicorn app:app --reload", "server", "uvicorn", "uvicorn app:app --reload"),
        ("python3 -m http.server 8000", "server", "python3 -m http.server", None),
    ],
)
def test_detaching_lines(command: str, kind: str, what: str, runs: str | None) -> None:
    found = detaches(command)
    assert found is not None, command
    assert (found.kind, found.what) == (kind, what)
    assert found.command == (runs if runs is not None else command)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'npm run dev &'",  # quoted text is data
        "vite --help",
        "docker compose up -d",
        "npm run build",
        "sleep 1 & wait",  # the & is not the line's last
        "python3 script.py -m http.server",  # a script's own arguments
        "echo $(",  # unreadable: never promoted
        "ls",
    ],
)
def test_lines_that_do_not_detach(command: str) -> None:
    assert detaches(command) is None, command
