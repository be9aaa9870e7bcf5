"""The README's example must keep running and printing what it claims."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None, "README lost its python example"
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "3"
    assert lines[1].startswith("error (/counter in receive(int): ValueError: negative")
    assert "'path': '/counter'" in lines[2]


def test_readme_supervision_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README lost its supervision example"
    script = tmp_path / "supervision.py"
    script.write_text(blocks[1])
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=True
    )
    assert out.stdout.splitlines() == ["/app/b (restarts: 1) got ping"]


def test_readme_names_the_two_commands() -> None:
    text = README.read_text()
    assert "make run" in text and "make test" in text


def test_readme_session_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    session = [b for b in blocks if "start_session" in b]
    assert session, "README lost its session example"
    script = tmp_path / "session.py"
    script.write_text(session[0])
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "completed after 1 tool step"
    assert lines[1] == str(
        ["TurnStarted", "ToolStarted", "ToolOutput", "ToolCompleted", "TurnCompleted"]
    )
    assert lines[2] == str(["user", "assistant", "user", "assistant"])
