"""``sudo -S`` without a configured password: refused before anything runs (#91, #141).

``sudo -S`` reads its password from stdin. A terminal command's stdin is
``/dev/null`` and it has no controlling terminal (its own session), so sudo can
never prompt and never hang: without ``-S`` it fails at once ("a terminal is
required"), and with ``-S`` it would fail the same way after reading nothing.
Unless a sudo password is configured (``SudoPassword`` in the tool context's
services; the daemon does not configure one yet), a line that runs ``sudo -S``
anywhere (pipelines, ``bash -c``, substitutions) is refused with a reason and
what to do instead.
"""

from __future__ import annotations

import posixpath

import attrs

from .shell import parse

_MAX_DEPTH = 3


@attrs.frozen(slots=True)
class SudoPassword:
    """A configured sudo password (never shown: ``repr`` hides it)."""

    password: str = attrs.field(repr=False)


def runs_sudo_stdin(command: str, depth: int = 0) -> bool:
    """True when ``command`` runs ``sudo`` with ``-S``/``--stdin`` (literal words only)."""
    if depth > _MAX_DEPTH:
        return False
    try:
        script = parse(command)
    except RecursionError:
        return False
    for cmd in script.commands:
        words = [w.text for w in cmd.words]
        for i, word in enumerate(words):
            name = posixpath.basename(word)
            if name == "sudo" and _stdin_flag(words[i + 1 :]):
                return True
            if name in ("bash", "sh", "zsh", "dash") and "-c" in words[i + 1 : i + 3]:
                at = words.index("-c", i + 1)
                if at + 1 < len(words) and runs_sudo_stdin(words[at + 1], depth + 1):
                    return True
    return False


def _stdin_flag(args: list[str]) -> bool:
    for arg in args:
        if arg == "--stdin":
            return True
        if arg == "--" or not arg.startswith("-"):
            return False
        if not arg.startswith("--") and "S" in arg[1:]:
            return True
    return False


SUDO_REFUSAL = (
    "Command NOT run: it runs sudo -S, which reads a password from stdin, and no sudo "
    "password is configured (stdin is empty here and there is no terminal to prompt on). "
    "Nothing was executed. Run the command without sudo if it does not need it, use sudo -n "
    "(it fails at once when a password would be needed), or ask the user to run it themselves."
)
