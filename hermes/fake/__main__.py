"""``python -m hermes.fake``: the same as ``hermes fake-provider``."""

from ..cli import fake_provider

if __name__ == "__main__":
    fake_provider(prog_name="python -m hermes.fake")
