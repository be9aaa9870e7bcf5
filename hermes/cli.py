"""The ``hermes`` command line."""

from __future__ import annotations

import click

from . import __version__


@click.group()
@click.version_option(__version__, prog_name="hermes")
def main() -> None:
    """Hermes on Trio: an agent daemon built from supervised actors.

    The daemon is not built yet; today the runtime and its benchmark are
    (`python -m bench runtime`).
    """
