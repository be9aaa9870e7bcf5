"""``python -m hermes``: the same as the ``hermes`` command."""

from .cli import main

main()
