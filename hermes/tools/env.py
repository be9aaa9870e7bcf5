"""The environment handed to child processes: the daemon's, minus its secrets.

The daemon holds API keys and tokens in its own environment; a shell command
the model runs must not see them (a ``env`` or ``printenv`` would put them in
the transcript). A variable is a secret when one of the ``_``-separated
segments of its upper-cased name is a secret word (``API_KEY``, ``TOKEN``,
``SECRET``, ``PASSWORD``..., or a final ``_KEY``), so ``ANTHROPIC_API_KEY``,
``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` and ``DB_PASSWORD`` go, while
``TOKENIZERS_PARALLELISM`` and ``SSH_AUTH_SOCK`` stay.

An operator may pass named secrets on (``[tools] env_passthrough``, e.g.
``GITHUB_TOKEN`` for ``gh``): ``scrub_env(keep=...)``. The daemon's own
credentials (``NEVER_PASSED``: the model provider's key and token) are dropped
even when named there; the configuration refuses them too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|ACCESS_?KEY|PRIVATE_?KEY|SECRET_?KEY|SECRETS?|TOKENS?"
    r"|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|SESSION_?KEY)(?:_|$)"
    r"|_KEY$"
)

NEVER_PASSED = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
"""The daemon's own credentials: no passthrough list hands them to a child."""

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What an environment variable's name may be (for a passthrough list)."""

CHILD_DEFAULTS: Mapping[str, str] = {
    "PYTHONUNBUFFERED": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}
"""Set in every child: unbuffered Python output, no pagers, no git credential prompts."""


def is_secret_name(name: str) -> bool:
    """True when an environment variable's name marks it as a secret."""
    return _SECRET_NAME.search(name.upper()) is not None


def scrub_env(
    environ: Mapping[str, str],
    *,
    keep: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A copy of ``environ`` without secrets, plus ``CHILD_DEFAULTS`` and ``extra``.

    ``keep`` names secret-looking variables a caller deliberately passes on
    (never one of ``NEVER_PASSED``); ``extra`` is applied last and is never
    scrubbed (the caller chose it).
    """
    kept = set(keep) - NEVER_PASSED
    env = {k: v for k, v in environ.items() if k in kept or not is_secret_name(k)}
    env.update(CHILD_DEFAULTS)
    if extra:
        env.update(extra)
    return env
