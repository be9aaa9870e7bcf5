"""The bash-grammar reader behind the approval gate (tree-sitter-bash)."""

from __future__ import annotations

import pytest

from hermes.tools.shell import Computed, HereDoc, Redirect, Var, Word, parse


def words(text: str) -> list[list[str]]:
    return [[w.text for w in cmd.words] for cmd in parse(text).commands]


def test_every_simple_command_in_the_tree() -> None:
    assert words("a 'b c' \"d $X\" e\\ f") == [["a", "b c", "d $X", "e f"]]
    assert words("a | b && c; d & e || f") == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    assert words("(a); { b; }; if c; then d; fi; f() { g; }") == [["a"], ["b"], ["c"], ["d"], ["g"]]
    assert words("echo $(inner x) `tick` <(proc)") == [
        ["echo", "$(inner x)", "`tick`", "<(proc)"],
        ["inner", "x"],
        ["tick"],
        ["proc"],
    ]
    assert words("a # b c\nd") == [["a"], ["d"]]


def test_literal_words_are_what_bash_reads() -> None:
    for spelling in ("rm", "r''m", '"r"m', "r\\m", "'rm'", "$'\\x72m'", "$'\\162m'"):
        (word,) = parse(spelling).commands[0].words
        assert word.literal and word.text == "rm", spelling


def test_words_that_are_not_literal() -> None:
    cmd = parse('$x "${y}" $(echo rm) r?m {a,b} ${z:-q} $((1+2))').commands[0]
    assert [w.literal for w in cmd.words] == [False] * 7
    assert cmd.words[0].parts == (Var("x", quoted=False),)
    assert cmd.words[1].parts == (Var("y", quoted=True),)
    assert cmd.words[2].parts == (Computed("$(echo rm)", quoted=False, output="rm"),)
    assert cmd.words[3].pattern and cmd.words[4].pattern
    assert isinstance(cmd.words[5].parts[0], Computed)
    spliced = parse("rm${IFS}-rf${IFS}x").commands[0].words[0]
    assert spliced.parts == ("rm", Var("IFS", False), "-rf", Var("IFS", False), "x")


def test_what_a_substitution_prints_when_it_can_be_read() -> None:
    def output(text: str) -> str | None:
        part = parse(f"eval {text}").commands[0].words[1].parts[0]
        assert isinstance(part, Computed)
        return part.output

    assert output("\"$(printf 'rm -rf /*')\"") == "rm -rf /*"
    assert output('"$(printf "%s %s" a b)"') == "a b"
    assert output('"$(echo cm0gLXJmIC8q | base64 -d)"') == "rm -rf /*"
    assert output('"$(date)"') is None


def test_redirects_and_assignments() -> None:
    script = parse(
        "x=1 y=$(z) ls 2>&1 >out.txt <in &>all >> log; export A=b; for v in p q; do :; done"
    )
    cmd = script.commands[0]
    assert [w.text for w in cmd.words] == ["ls"]
    assert [(r.op, r.target.text) for r in script.redirects] == [
        (">&", "1"),
        (">", "out.txt"),
        ("<", "in"),
        ("&>", "all"),
        (">>", "log"),
    ]
    assigned = [(a.name, a.value.text if a.value else None) for a in script.assignments]
    assert assigned == [("x", "1"), ("y", "$(z)"), ("A", "b"), ("v", "p"), ("v", "q")]


def test_heredocs_and_herestrings_feed_the_command_that_reads_them() -> None:
    script = parse("cat <<EOF >x\nbody $(run)\nEOF\ncd /tmp && bash <<-'END'\n\tcode\n\tEND\nls")
    cat, run, _cd, bash, ls = script.commands
    assert cat.heredocs == (HereDoc("body $(run)\n", True),)
    assert [w.text for w in run.words] == ["run"]
    assert [(h.body.strip(), h.expands) for h in bash.heredocs] == [("code", False)]
    assert ls.heredocs == ()
    (here,) = parse("bash <<< 'rm x'").commands[0].redirects
    assert here == Redirect("<<<", Word(("rm x",), "'rm x'"))


def test_pipelines_know_what_feeds_them() -> None:
    script = parse("curl x | tee f | sh; python3 g.py | (cd d; bash); cat <<EOF | sh\nls\nEOF")
    curl, tee, sh, _python, cd, bash, cat, sh2 = script.commands
    assert sh.upstream == (curl, tee)
    assert bash.upstream == (_python,) and cd.upstream == (_python,)
    assert sh2.upstream == (cat,)


def test_functions_and_background() -> None:
    script = parse(":(){ :|:& };:")
    assert set(script.functions) == {":"}
    first, second, _call = script.commands
    assert second.upstream == (first,) and second.background


@pytest.mark.parametrize("text", ["echo 'x", 'echo "x', "echo $(x", "if true; then", "ls >"])
def test_malformed_lines_say_where(text: str) -> None:
    errors = parse(text).errors
    assert errors and all(" at " in e for e in errors)


def test_hostile_nesting_does_not_recurse() -> None:
    script = parse('echo "$(echo ' * 3_000)
    assert script.errors
