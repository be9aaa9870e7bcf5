from __future__ import annotations

from hermes.compression import SECTIONS, CompressionSettings, accept_summary, static_summary
from hermes.model.types import Message

from .builders import assistant, result, results, use, user


def _middle() -> list[Message]:
    return [
        user("First, look around."),
        assistant(
            "", use("t1", "read_file", path="src/a.py"), use("t2", "shell", command="make  test")
        ),
        results(result("t1", "code"), result("t2", "FAILED: 3 errors\nmore detail", error=True)),
        assistant("", use("t3", "write_file", file_path="src/b.py", content="z" * 500)),
        results(result("t3", "written")),
        assistant("", use("t4", "read_file", path="src/a.py")),
        results(result("t4", "again")),
        user("Now make the tests pass."),
        assistant("I could not find the fixture. Should I create it?"),
    ]


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_static_summary_contents() -> None:
    text = static_summary(_middle(), None)
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        f"## {s}" for s in SECTIONS
    ]
    goal = _section(text, "Goal and user requests")
    assert "Now make the tests pass." in goal and "look around" not in goal
    progress = _section(text, "Progress and completed actions")
    assert "- read_file(src/a.py) -> ok" in progress
    assert "- shell(make test) -> error: FAILED: 3 errors" in progress
    assert "- write_file(src/b.py) -> ok" in progress
    files = _section(text, "Files and commands touched")
    assert files.count("- file: src/a.py") == 1  # de-duplicated, in order
    assert files.index("src/a.py") < files.index("src/b.py")
    assert "- command: make test" in files
    problems = _section(text, "Open problems and next steps")
    assert "shell failed: FAILED: 3 errors" in problems
    assert "Should I create it?" in problems


def test_static_summary_is_deterministic_and_passes_the_check() -> None:
    assert static_summary(_middle(), "prev") == static_summary(_middle(), "prev")
    assert accept_summary(static_summary(_middle(), None), CompressionSettings())


def test_previous_summary_kept_shortened() -> None:
    previous = "## Goal\nOLD GOAL " + "p" * 20_000 + " OLD END"
    text = static_summary(_middle(), previous, max_chars=8_000)
    assert len(text) <= 8_000
    facts = _section(text, "Key decisions and facts")
    assert "Earlier summary (kept, shortened, quoted)" in facts
    assert "> ## Goal" in facts and "OLD GOAL" in facts and "OLD END" in facts
    assert "chars omitted" in facts


def test_bounded_for_huge_middles() -> None:
    middle: list[Message] = [user("go")]
    for i in range(400):
        middle.append(assistant("", use(f"t{i}", "shell", command=f"cmd {i} " + "a" * 300)))
        middle.append(results(result(f"t{i}", "e" * 300 + "\nx", error=i % 2 == 0)))
    for limit in (500, 2_000, 8_000):
        text = static_summary(middle, "old " * 5000, max_chars=limit)
        assert len(text) <= limit
    text = static_summary(middle, None)
    assert "earlier actions omitted" in text
    assert "## Open problems and next steps" in text


def test_no_assistant_question_no_problem() -> None:
    text = static_summary([user("hi"), assistant("All done, tests pass.")], None)
    assert _section(text, "Open problems and next steps").strip().endswith("None.")
    assert _section(text, "Progress and completed actions").strip().endswith("None.")
