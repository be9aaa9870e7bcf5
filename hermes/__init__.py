"""Hermes on Trio: a long-running agent daemon built from supervised actors."""

__version__ = "0.1.0"
