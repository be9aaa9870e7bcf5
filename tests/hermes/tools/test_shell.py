"""The shell-line reader behind the approval gate."""

from __future__ import annotations

import pytest

from hermes.tools.shell import HereDoc, Redirect, ShellSyntaxError, parse


def words(text: str) -> list[list[list[str]]]:
    return [[cmd.words for cmd in pipeline] for pipeline in parse(text).pipelines]


def test_quotes_escapes_and_operators() -> None:
    assert words("a 'b c' \"d $X\" e\\ f") == [[["a", "b c", "d $X", "e f"]]]
    assert words("a | b && c; d & e || f") == [[["a"], ["b"]], [["c"]], [["d"]], [["e"]], [["f"]]]
    assert words("(a) { b; }") == [[["a"]], [["{", "b"]], [["}"]]]
    assert words("a # b c\nd") == [[["a"]], [["d"]]]


def test_redirects_are_not_words() -> None:
    cmd = parse("ls 2>&1 >out.txt <in &>all >> log").commands()[0]
    assert cmd.words == ["ls"]
    assert cmd.redirects == [
        Redirect(">&", "1"),
        Redirect(">", "out.txt"),
        Redirect("<", "in"),
        Redirect("&>", "all"),
        Redirect(">>", "log"),
    ]


def test_substitutions_run_except_in_single_quotes() -> None:
    parsed = parse("echo $(a) \"$(b)\" `c` <(d) '$(e)'")
    assert parsed.substitutions == ("a", "b", "c", "d")
    assert parse('echo $(echo "(")').substitutions == ('echo "("',)


def test_heredocs() -> None:
    parsed = parse("cat <<EOF >x\nbody $(run)\nEOF\nbash <<-'END'\n\tcode\n\tEND\nls")
    first, second, third = parsed.commands()
    assert first.heredocs == [HereDoc("body $(run)", True)]
    assert second.heredocs == [HereDoc("\tcode", False)]
    assert third.words == ["ls"]
    assert parsed.substitutions == ("run",)
    assert "body" not in parsed.masked


def test_masked_blanks_quoted_text() -> None:
    assert parse("echo 'a|b' x").masked == "echo '   ' x"


@pytest.mark.parametrize("text", ["echo 'x", 'echo "x', "echo $(x", "echo `x", "ls >"])
def test_malformed(text: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(text)
