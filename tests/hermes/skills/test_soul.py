"""SOUL.md sets the identity in the stable tier (seed #19), else the built-in one."""

from __future__ import annotations

from pathlib import Path

from hermes.session import SessionConfig
from hermes.session.prompt import DEFAULT_IDENTITY, session_system_prompt
from hermes.tools import default_registry


def _stable(config: SessionConfig) -> str:
    return session_system_prompt(config, default_registry(processes=False), None)[0].text


def test_soul_md_replaces_the_built_in_identity(tmp_path: Path) -> None:
    soul = tmp_path / "SOUL.md"
    config = SessionConfig(model="m", cwd=tmp_path, spill_dir=tmp_path / "s", soul_file=soul)
    assert _stable(config).startswith(DEFAULT_IDENTITY)  # missing: built-in
    soul.write_text("   \n")
    assert _stable(config).startswith(DEFAULT_IDENTITY)  # empty: built-in
    soul.write_text("You are Ada, terse and exact.\n")
    stable = _stable(config)
    assert stable.startswith("You are Ada, terse and exact.")
    assert DEFAULT_IDENTITY not in stable
    unattended = SessionConfig(
        model="m", cwd=tmp_path, spill_dir=tmp_path / "s", soul_file=soul, unattended=True
    )
    assert _stable(unattended).startswith(DEFAULT_IDENTITY)  # subagents keep the built-in
