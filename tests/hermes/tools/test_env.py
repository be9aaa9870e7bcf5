"""Children never see the daemon's secrets."""

from __future__ import annotations

import pytest

from hermes.tools import is_secret_name, scrub_env

SECRET = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "HF_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "CLIENT_SECRET",
    "DB_PASSWORD",
    "SLACK_BOT_TOKEN",
    "STRIPE_KEY",
    "MY_APIKEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "token",
]
KEPT = [
    "PATH",
    "HOME",
    "LANG",
    "TERM",
    "SSH_AUTH_SOCK",
    "TOKENIZERS_PARALLELISM",
    "KEYBOARD_LAYOUT",
    "PYTHONPATH",
    "MONKEY_BUSINESS",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", KEPT)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_scrub_env() -> None:
    env = scrub_env(
        {"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-1", "GITHUB_TOKEN": "ghp", "NPM_TOKEN": "n"},
        keep=["NPM_TOKEN"],
        extra={"EXTRA_TOKEN": "chosen"},
    )
    assert env["PATH"] == "/bin"
    assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["NPM_TOKEN"] == "n" and env["EXTRA_TOKEN"] == "chosen"
    assert env["PYTHONUNBUFFERED"] == "1" and env["PAGER"] == "cat"
