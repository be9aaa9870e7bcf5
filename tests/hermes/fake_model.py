"""The fake provider and a fast retry policy, as the shared fixtures (and the worlds
that build their own client) set them up.

``tests/hermes/conftest.py`` opens ``fake`` with a ``FakeSetup`` and gives ``client``
a ``fast_retry`` policy; a directory or module overrides the small fixture that
differs (``fake_setup``, ``retry_attempts``, ``retry``, ``client_type``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs

from hermes.fake import FakeProvider, open_fake_provider
from hermes.model import RetryPolicy

KEY = "test-key"
"""The key the fake requires and the shared ``client`` sends."""


@attrs.frozen(kw_only=True)
class FakeSetup:
    """How the ``fake`` fixture opens the provider, and what it checks once it is closed."""

    api_key: str = KEY
    demo: bool = True
    """Unscripted requests get the demo model's answer (off: they fail)."""
    no_errors: bool = False
    """The fake itself had no error (a bug in it or in a scripted responder)."""
    all_used: bool = False
    """Every scripted reply was asked for (a request the test expected did happen)."""


SCRIPTED = FakeSetup(demo=False)
"""Only what the test scripts is answered."""
CHECKED = FakeSetup(demo=False, no_errors=True)
"""Scripted, and the fake had no error."""
STRICT = FakeSetup(demo=False, no_errors=True, all_used=True)
"""Scripted, no error, and every scripted reply used."""


@asynccontextmanager
async def open_fake(setup: FakeSetup = FakeSetup()) -> AsyncIterator[FakeProvider]:
    """The fake provider on loopback as ``setup`` says; its checks run on exit."""
    async with open_fake_provider(api_key=setup.api_key, demo=setup.demo) as provider:
        yield provider
    if setup.no_errors:
        assert provider.errors == [], provider.errors
    if setup.all_used:
        assert provider.script.pending == 0, f"{provider.script.pending} replies never used"


def fast_retry(attempts: int, deadline: float = 30) -> RetryPolicy:
    """A client's policy for tests: ``attempts`` per model, millisecond backoff."""
    return RetryPolicy(max_attempts=attempts, base_delay=0.001, max_delay=0.01, deadline=deadline)
