"""Settings records with more than four fields are keyword-only (issue 22, item 4).

A settings record is an ``attrs`` class of ``hermes`` named ``...Config``,
``...Settings`` (frozen or not: the daemon's mutable ``Settings`` counts) or a
frozen ``...Policy``: the values a configuration file or a caller
sets by name. Positional construction of one with many fields is a bug waiting
for the next field to be inserted, so each of them must be ``kw_only``.
"""

from __future__ import annotations

import importlib
import pkgutil

import attrs

import hermes

SUFFIXES = ("Config", "Settings", "Policy")
SETTINGS = ("Config", "Settings")
"""A mutable class named so is settings too (the daemon's ``Settings``, whose ``config``
a SIGHUP swaps); a mutable ``...Policy`` is a policy's state (``CompressionPolicy``)."""


def _frozen(cls: type) -> bool:
    """Made by ``attrs.frozen``."""
    return getattr(cls.__setattr__, "__name__", "") == "_frozen_setattrs"


def settings_records() -> list[type]:
    found: list[type] = []
    for info in pkgutil.walk_packages(hermes.__path__, "hermes."):
        if info.name == "hermes.__main__":
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and obj.__module__ == module.__name__
                and obj.__name__.endswith(SUFFIXES)
                and attrs.has(obj)
                and (_frozen(obj) or obj.__name__.endswith(SETTINGS))
            ):
                found.append(obj)
    return found


def test_the_scan_finds_the_settings_records() -> None:
    names = {cls.__name__ for cls in settings_records()}
    assert {"SessionConfig", "CompressionSettings", "RetryPolicy", "GoalSettings"} <= names
    assert "Settings" in names


def test_settings_records_with_more_than_four_fields_are_keyword_only() -> None:
    positional = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in settings_records()
        if len([f for f in attrs.fields(cls) if f.init]) > 4
        and not all(f.kw_only for f in attrs.fields(cls) if f.init)
    ]
    assert positional == []
