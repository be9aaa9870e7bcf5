"""Generated obfuscations of the hardline commands: none may ever pass the gate unseen.

Each example is a real bash spelling of a floor command: the command word split
by quotes or backslashes, read from a variable or a substitution, joined with
``${IFS}``, behind wrappers, env prefixes and full paths, handed to ``eval``,
``bash -c``, a pipe into ``sh``, ``xargs``, ``find -exec``, ``trap``, a function
or a script the line writes, with these layered on each other. None is
ever classed safe, none is left where yolo or a remembered approval could
allow it (hardline or opaque), and each of these is in fact refused (hardline).
A bash check confirms the generator's spellings really run the command.
"""

from __future__ import annotations

import base64
import shlex
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.tools import classify

BASES: list[tuple[str, ...]] = [
    ("rm", "-rf", "/"),
    ("rm", "-rf", "/*"),
    ("rm", "-fr", "~"),
    ("rm", "-r", "/etc"),
    ("rm", "--no-preserve-root", "-rf", "/"),
    ("mkfs.ext4", "/dev/sda1"),
    ("dd", "if=/dev/zero", "of=/dev/sda"),
    ("wipefs", "-a", "/dev/sdb"),
    ("shutdown", "-h", "now"),
    ("reboot",),
]
WRAPPERS = [
    "sudo",
    "sudo -u root",
    "env",
    "env A=1",
    "nice -n 5",
    "timeout 10",
    "nohup",
    "command",
    "exec",
    "time",
    "stdbuf -oL",
    "ionice -c3",
    "setsid",
    "doas",
    "builtin",
]


LAYERS = [
    *("bash -c", "sh -c", "eval", "pipe", "base64", "subst", "here"),
    *("script", "xargs", "find", "trap", "function"),
]


def _name_spellings(name: str) -> list[str]:
    """Ways to write one command word that bash reads as ``name``."""
    half = len(name) // 2 or 1
    head, tail = name[:half], name[half:]
    hexed = "".join(f"\\x{ord(c):02x}" for c in name)
    return [
        f"{head}''{tail}",
        f'"{head}"{tail}',
        f"{head}\\{tail}",
        f"'{name}'",
        f"$'{hexed}'",
        f"/bin/{name}" if not name.startswith("mk") else f"/sbin/{name}",
        f"/usr/bin/{name}",
        f"$(echo {name})",
        f"`echo {name}`",
        f'"$(printf %s {name})"',
        f"{head}\\\n{tail}",
    ]


@st.composite
def obfuscated(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(BASES))
    name, args = base[0], list(base[1:])
    # 1. the command word itself
    word = draw(st.sampled_from([name, *_name_spellings(name)]))
    line = " ".join([word, *args])
    how = draw(st.sampled_from(["plain", "var", "var_quoted", "var_braced", "ifs", "array"]))
    if how == "var":
        line = f"v={shlex.quote(name)}; $v {' '.join(args)}"
    elif how == "var_quoted":
        line = f'c={shlex.quote(name)}; "$c" {" ".join(args)}'
    elif how == "var_braced":
        line = f"x={shlex.quote(name)}; ${{x}} {' '.join(args)}"
    elif how == "ifs":
        line = "${IFS}".join([word, *args])
    elif how == "array" and args:
        line = f'f() {{ {word} "$@"; }}; f {" ".join(args)}'
    # 2. prefixes and wrappers, in any number
    for _ in range(draw(st.integers(0, 2))):
        layer = draw(st.sampled_from(["wrapper", "env_prefix", "none"]))
        if layer == "wrapper":
            line = f"{draw(st.sampled_from(WRAPPERS))} {line}" if ";" not in line else line
        elif layer == "env_prefix":
            line = f"A=1 B=two {line}" if ";" not in line and "()" not in line else line
    # 3. handed to another shell, in any number of layers
    for _ in range(draw(st.integers(0, 2))):
        shell = draw(st.sampled_from(LAYERS))
        if shell in ("bash -c", "sh -c", "eval"):
            line = f"{shell} {shlex.quote(line)}"
        elif shell == "pipe":
            line = f"echo {shlex.quote(line)} | bash"
        elif shell == "base64":
            encoded = base64.b64encode(line.encode()).decode()
            line = f'bash -c "$(echo {encoded} | base64 -d)"'
        elif shell == "subst":
            line = f"eval \"$(printf '%s' {shlex.quote(line)})\""
        elif shell == "here":
            line = f"bash <<'EOF'\n{line}\nEOF"
        elif shell == "script":
            line = f"printf '%s\\n' {shlex.quote(line)} > /tmp/x.sh; bash /tmp/x.sh"
        elif shell == "xargs":
            line = f"printf '%s' {shlex.quote(line)} | xargs -0 bash -c"
        elif shell == "find":
            line = f"find / -maxdepth 0 -exec sh -c {shlex.quote(line)} \\;"
        elif shell == "trap":
            line = f"trap {shlex.quote(line)} EXIT"
        else:
            line = f"go() {{ {line}\n}}; go"
    # 4. a harmless neighbour
    before = draw(st.sampled_from(["", "cd /tmp && ", "ls; ", "true || "]))
    return before + line


@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(obfuscated())
def test_no_obfuscation_of_a_hardline_command_passes_unseen(command: str) -> None:
    findings = classify(command)
    assert findings, f"classed safe: {command!r}"
    assert any(f.hardline or f.opaque for f in findings), (command, findings)
    # and in fact the values the line gives are followed to the floor: refused outright
    assert findings[0].hardline, (command, findings)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.sampled_from(["k=kill; $k", "$(echo kill)", "ki''ll", "/bin/kill", "sudo kill", "kill"]),
    st.sampled_from(["-9 -1", "-KILL -1", "-s KILL -1", "-- -1"]),
)
def test_no_spelling_of_kill_all_is_safe(word: str, args: str) -> None:
    assert classify(f"{word} {args}")


def _bash_argv(command: str) -> list[str]:
    """What bash runs for ``command``: every base command is shadowed by a recorder function,
    and ``PATH`` leads nowhere, so nothing real can run."""
    names = sorted({b[0] for b in BASES if "." not in b[0]})
    recorders = "".join(f"{n}() {{ printf '%s\\0' {n} \"$@\"; }}\n" for n in names)
    done = subprocess.run(
        ["bash", "-c", f"PATH=/nonexistent\nset -f\n{recorders}{command}"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.sampled_from([b for b in BASES if "." not in b[0]]).flatmap(
        lambda base: st.tuples(st.just(base), st.sampled_from(_name_spellings(base[0])))
    )
)
def test_the_spellings_are_real(case: tuple[tuple[str, ...], str]) -> None:
    """The generator's command-word spellings are what bash runs (not strings we invented)."""
    base, word = case
    if word.startswith(("/bin/", "/usr/bin/", "/sbin/")):
        return  # a full path runs the binary, not the recorder
    argv = _bash_argv(" ".join([word, *base[1:]]))
    assert argv[:1] == [base[0]] and len(argv) == len(base), (word, argv)
