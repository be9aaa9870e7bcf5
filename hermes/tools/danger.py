"""Classifying shell commands: the hardline floor and the dangerous-pattern list.

``classify(command)`` reads the command with ``hermes.tools.shell`` (quote-aware,
no expansion) and returns ``Finding``s. Commands are matched at *command
position*, after peeling wrappers (``sudo``, ``env``, ``nohup``, ``timeout``,
``xargs``...), with flags in any order and any spacing; quoted data is not a
command (``echo 'rm -rf /'`` is safe) but code handed to a shell is
(``bash -c '...'``, ``eval``, ``$(...)``, a here-document or literal text piped
into ``sh``). A command line that cannot be parsed is checked by conservative
raw patterns and always needs approval. ``approval.py`` turns findings into a
decision.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Iterator

import attrs

from .shell import ShellSyntaxError, SimpleCommand, parse

# -- the lists -------------------------------------------------------------------------

HARDLINE_RULES: dict[str, str] = {
    "delete_root": "recursive delete of the filesystem root",
    "delete_home": "recursive delete of a home directory",
    "delete_system_dir": "recursive delete of a system directory (/etc, /usr, /home...)",
    "no_preserve_root": "rm --no-preserve-root",
    "format_filesystem": "formatting a filesystem (mkfs)",
    "dd_block_device": "dd writing to a block device",
    "wipe_block_device": "wiping a block device (wipefs, mkswap, shred, blkdiscard)",
    "redirect_block_device": "redirecting output onto a block device",
    "fork_bomb": "fork bomb",
    "shutdown": "shutting down, halting or rebooting the machine",
}
"""The floor: refused always, yolo or not, approved or not."""

DANGEROUS_RULES: dict[str, str] = {
    "recursive_delete": "recursive delete (rm -r)",
    "find_delete": "find -delete",
    "pipe_to_shell": "downloaded or decoded content run by a shell or interpreter",
    "world_writable": "making files world-writable (chmod 777, o+w)",
    "recursive_chmod_system": "recursive chmod/chown of a system or home directory",
    "git_reset_hard": "git reset --hard (discards uncommitted changes)",
    "git_clean": "git clean -f (deletes untracked files)",
    "git_force_push": "git push --force (rewrites remote history)",
    "git_discard": "discarding git changes (checkout/restore ., stash drop/clear)",
    "git_branch_delete": "git branch -D (force-deletes a branch)",
    "sql_destructive": "SQL DROP / TRUNCATE / DELETE without WHERE",
    "kill_all": "kill -1 (signals every process you may signal)",
    "write_system_path": "writing to a system, device or shell-startup file",
    "service_stop": "stopping or disabling system services",
    "crontab_remove": "crontab -r (removes all cron jobs)",
    "container_delete": "deleting cluster or container resources",
    "unparseable": "a command line the safety check could not parse",
    "too_deep": "shells nested too deeply to check",
}
"""Needs approval (once / session / always), unless yolo is on."""


@attrs.frozen(slots=True)
class Finding:
    """One reason a command is hardline or dangerous."""

    key: str
    description: str
    hardline: bool

    @classmethod
    def of(cls, key: str) -> Finding:
        if key in HARDLINE_RULES:
            return cls(key, HARDLINE_RULES[key], True)
        return cls(key, DANGEROUS_RULES[key], False)


# -- classification --------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_INTERPRETER = re.compile(r"^(?:python|perl|ruby|node|nodejs|php|lua|tclsh|pwsh)[\d.]*$")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lynx"})
_DECODERS = _words("base64 base32 xxd openssl gunzip zcat xz rev")
_SQL_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "duckdb", "clickhouse-client", "cockroach"}
)
_RESERVED = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time"}
)

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")

# wrapper -> (options that take a value, positional words before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (_words("-u -g -C -D -h -p -r -t -U -T --user --group --host --prompt"), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "pkexec": (frozenset({"--user"}), 0),
    "run0": (frozenset({"-u", "--user"}), 0),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "nohup": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-t", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "setsid": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "busybox": (frozenset(), 0),
    "toybox": (frozenset(), 0),
    "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u"}), 0),
    "xargs": (
        _words(
            "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines "
            "--max-args --max-procs --max-chars"
        ),
        0,
    ),
}

_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:(?:sd|hd|vd|xvd)[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|nbd\d|r?disk\d"
    r"|mapper/|disk/by-)"
)
_HARMLESS_DEVICES = _words(
    "/dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/stdin /dev/stdout "
    "/dev/stderr /dev/ptmx"
)
_HARMLESS_DEVICE_DIRS = ("/dev/fd/", "/dev/pts/", "/dev/shm/")
_SYSTEM_DIRS = _words(
    "/bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /opt /proc /root /run /sbin /srv "
    "/sys /usr /var /snap /mnt /media"
)
_PROTECTED_WRITE = re.compile(
    r"^(?:/etc|/boot|/usr|/bin|/sbin|/lib\w*|/sys|/proc|/var/lib|/var/spool/cron|/root)(?:/|$)"
)
_HOME_STARTUP = re.compile(
    r"^~/(?:\.ssh(?:/|$)|\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv"
    r"|login|netrc|pgpass|npmrc|pypirc|gitconfig)$|\.config/autostart/)"
)
# Every pattern here runs in linear time on hostile input (a model can send a 100 KB
# command): matched on whitespace-squashed text, anchored at word starts, possessive where
# a quantifier could otherwise backtrack.
_FORK_BOMB = re.compile(
    r"(?<![^\s;&|(){}])(?:function )?(?P<f>[^\s(){};|&<>]++) ?(?:\( ?\))? ?\{ ?(?P=f) ?\|"
    r" ?&? ?(?P=f) ?&"
)
_DOWNLOAD_SUBST = re.compile(r"(?:\$\(|`|<\()\s*+(?:[^\s/]*+/)*+(?:curl|wget|fetch)\b")
_SQL = (
    re.compile(r"\bDROP\s++(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|TABLESPACE)\b", re.I),
    re.compile(r"\bTRUNCATE\s++(?:TABLE\s++)?[\w.\"`\[]", re.I),
    re.compile(r"\bDELETE\s++FROM\s++[^\s;'\")]++\s*+(?:;|$|['\")])", re.I | re.M),
)
_RAW_SEPARATORS = re.compile(r"[\s;&|()`{}]+")
_RAW_BLOCK_REDIRECT = re.compile(r">[\s\"']*+(/dev/[^\s\"';&|)]++)")
_RAW_WINDOW = 32
_MAX_DEPTH = 5
THREAD_THRESHOLD = 8_192


def classify(command: str) -> tuple[Finding, ...]:
    """Every hardline or dangerous finding in ``command``, hardline first, no repeats."""
    keys: dict[str, None] = {}
    _scan(command, 0, keys)
    findings = [Finding.of(k) for k in keys]
    return tuple(sorted(findings, key=lambda f: not f.hardline))


def is_hardline(command: str) -> bool:
    return any(f.hardline for f in classify(command))


def _scan(text: str, depth: int, out: dict[str, None]) -> None:
    if depth > _MAX_DEPTH:
        out["too_deep"] = None
        return
    try:
        parsed = parse(text)
    except ShellSyntaxError:
        _raw_floor(text, depth, out)
        out["unparseable"] = None
        return
    if _FORK_BOMB.search(_squash(parsed.masked)):
        out["fork_bomb"] = None
    names: set[str] = set()
    for pipeline in parsed.pipelines:
        _scan_pipeline(pipeline, depth, out, names)
    if names & _SQL_CLIENTS and any(p.search(text) for p in _SQL):
        out["sql_destructive"] = None
    for body in parsed.substitutions:
        _scan(body, depth + 1, out)


def _squash(text: str) -> str:
    """Whitespace runs as one space, so patterns need no ambiguous ``\\s*`` runs."""
    return " ".join(text.split())


def _raw_floor(text: str, depth: int, out: dict[str, None]) -> None:
    """The floor for a line the reader cannot split: every word is tried as a command.

    Conservative on purpose (``echo 'rm -rf /`` with its quote unclosed is refused):
    bash would not run such a line either, so nothing useful is lost.
    """
    if _FORK_BOMB.search(_squash(text)):
        out["fork_bomb"] = None
    for match in _RAW_BLOCK_REDIRECT.finditer(text):
        if _BLOCK_DEVICE.match(_normalize_target(match.group(1))):
            out["redirect_block_device"] = None
    words = [w.strip("\"'\\") for w in _RAW_SEPARATORS.split(text)]
    words = [w for w in words if w]
    for i, word in enumerate(words):
        found: dict[str, None] = {}
        _check_command(posixpath.basename(word), words[i + 1 : i + 1 + _RAW_WINDOW], depth, found)
        for key in found:
            if key in HARDLINE_RULES:
                out[key] = None


def _scan_pipeline(
    pipeline: tuple[SimpleCommand, ...], depth: int, out: dict[str, None], names: set[str]
) -> None:
    upstream: list[list[str]] = []
    for cmd in pipeline:
        _check_redirects(cmd, out)
        words = _strip_wrappers(cmd.words)
        if words:
            name = posixpath.basename(words[0])
            names.add(name)
            _check_command(name, words[1:], depth, out)
            if _runs_code(name):
                _check_code_input(name, words[1:], cmd, upstream, depth, out)
            upstream.append(words)
        else:
            upstream.append([])


def _strip_wrappers(words: list[str]) -> list[str]:
    """Drop assignments, reserved words and wrappers (sudo, env, timeout...) before the command."""
    i = 0
    while i < len(words):
        word = words[i]
        if word in _RESERVED or _ASSIGNMENT.match(word):
            i += 1
            continue
        name = posixpath.basename(word)
        if name not in _WRAPPERS:
            break
        takes_value, positional = _WRAPPERS[name]
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            option = words[i]
            if option == "--":
                i += 1
                break
            if name == "command" and option.lstrip("-")[:1] in ("v", "V"):
                return []  # command -v: a lookup, runs nothing
            i += 2 if option in takes_value else 1
        if name == "env":
            while i < len(words) and _ASSIGNMENT.match(words[i]):
                i += 1
        if name == "nice" and i < len(words) and re.fullmatch(r"-?\d+", words[i]):
            i += 1
        i += positional
    return words[i:]


def _options(args: list[str]) -> tuple[list[str], list[str]]:
    """GNU-style split: options anywhere before ``--``, operands after it."""
    options: list[str] = []
    operands: list[str] = []
    ended = False
    for arg in args:
        if ended:
            operands.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            operands.append(arg)
    return options, operands


def _short_flag(options: Iterable[str], letters: str, *long: str) -> bool:
    for option in options:
        if option.startswith("--"):
            if option.split("=", 1)[0] in long:
                return True
        elif any(ch in option[1:] for ch in letters):
            return True
    return False


def _home() -> str:
    return posixpath.normpath(os.path.expanduser("~"))


def _normalize_target(path: str) -> str:
    """``$HOME``/``${HOME}``/the real home -> ``~``; slashes collapsed; trailing globs dropped."""
    path = re.sub(r"^\$\{?HOME\}?(?=/|$)", "~", path)
    path = re.sub(r"/{2,}", "/", path)
    home = _home()
    if home != "/" and (path == home or path.startswith(home + "/")):
        path = "~" + path[len(home) :]
    if path.startswith("/"):
        path = posixpath.normpath(path)
        path = "/" + path.lstrip("/")
    changed = True
    while changed:
        changed = False
        for suffix in ("/*", "/.*", "/."):
            if path.endswith(suffix):
                path = path[: -len(suffix)] or "/"
                changed = True
        if len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/") or "/"
            changed = True
    return path


def _catastrophic(path: str) -> str | None:
    """The hardline key for deleting ``path`` recursively, or ``None``."""
    target = _normalize_target(path)
    if target in ("/", "/*"):
        return "delete_root"
    if target == "~" or re.fullmatch(r"~[A-Za-z_][\w.-]*", target):
        return "delete_home"
    if re.fullmatch(r"/home/[^/]+", target):
        return "delete_home"
    if target in _SYSTEM_DIRS:
        return "delete_system_dir"
    return None


def _protected_write(path: str) -> str | None:
    """The finding key for writing to ``path``, or ``None`` when it is an ordinary file."""
    target = _normalize_target(path)
    if target.startswith("/dev/"):
        if _BLOCK_DEVICE.match(target):
            return "redirect_block_device"
        if target in _HARMLESS_DEVICES or target.startswith(_HARMLESS_DEVICE_DIRS):
            return None
        return "write_system_path"
    if _PROTECTED_WRITE.match(target) or _HOME_STARTUP.match(target):
        return "write_system_path"
    return None


_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def _check_redirects(cmd: SimpleCommand, out: dict[str, None]) -> None:
    for redirect in cmd.redirects:
        writes = redirect.op in _OUTPUT_REDIRECTS
        if writes or (redirect.op == ">&" and not redirect.target.isdigit()):
            key = _protected_write(redirect.target)
            if key:
                out[key] = None


def _check_command(name: str, args: list[str], depth: int, out: dict[str, None]) -> None:
    options, operands = _options(args)
    if name == "rm":
        if "--no-preserve-root" in options:
            out["no_preserve_root"] = None
        if _short_flag(options, "rR", "--recursive"):
            out["recursive_delete"] = None
            for operand in operands:
                key = _catastrophic(operand)
                if key:
                    out[key] = None
    elif name.startswith("mkfs") or name == "mke2fs":
        out["format_filesystem"] = None
    elif name in ("mkswap", "wipefs", "shred", "blkdiscard", "sgdisk") or name.startswith("newfs"):
        if any(_BLOCK_DEVICE.match(_normalize_target(a)) for a in operands):
            out["wipe_block_device"] = None
    elif name == "dd":
        _check_dd(args, out)
    elif name in ("shutdown", "reboot", "halt", "poweroff") or (
        name in ("init", "telinit") and operands[:1] in (["0"], ["6"])
    ):
        out["shutdown"] = None
    elif name == "systemctl":
        _check_systemctl(operands, out)
    elif name in ("service",) and len(operands) >= 2 and operands[1] == "stop":
        out["service_stop"] = None
    elif name == "chmod":
        _check_chmod(options, operands, out)
    elif name == "chown" or name == "chgrp":
        if _short_flag(options, "R", "--recursive") and any(_catastrophic(o) for o in operands):
            out["recursive_chmod_system"] = None
    elif name == "git":
        _check_git(args, out)
    elif name == "kill":
        _check_kill(args, out)
    elif name == "find":
        _check_find(args, depth, out)
    elif name in ("tee",):
        for operand in operands:
            key = _protected_write(operand)
            if key:
                out[key] = None
    elif name in ("cp", "mv", "install", "ln", "rsync") and len(operands) >= 2:
        key = _protected_write(operands[-1])
        if key:
            out[key] = None
    elif name == "sed" and _short_flag(options, "i", "--in-place"):
        for operand in operands[1:]:
            if _protected_write(operand):
                out["write_system_path"] = None
    elif name == "crontab" and _short_flag(options, "r", "--remove"):
        out["crontab_remove"] = None
    elif _deletes_containers(name, operands):
        out["container_delete"] = None


def _deletes_containers(name: str, operands: list[str]) -> bool:
    if name in ("kubectl", "oc"):
        return operands[:1] == ["delete"]
    if name in ("docker", "podman"):
        return operands[:2] in (["system", "prune"], ["volume", "rm"], ["volume", "prune"])
    return False


def _check_dd(args: list[str], out: dict[str, None]) -> None:
    for arg in args:
        if arg.startswith("of="):
            target = _normalize_target(arg[3:])
            if _BLOCK_DEVICE.match(target):
                out["dd_block_device"] = None
            elif _protected_write(target):
                out["write_system_path"] = None


def _check_systemctl(operands: list[str], out: dict[str, None]) -> None:
    verb = operands[0] if operands else ""
    if verb in ("poweroff", "reboot", "halt", "kexec", "emergency", "rescue"):
        out["shutdown"] = None
    elif verb in ("stop", "disable", "mask", "kill", "isolate"):
        out["service_stop"] = None


_WORLD_WRITABLE_SYMBOLIC = re.compile(r"(?:^|,)[ugo]*[ao][ugoa]*[+=][rwxXst]*w")


def _check_chmod(options: list[str], operands: list[str], out: dict[str, None]) -> None:
    if not operands:
        return
    mode, targets = operands[0], operands[1:]
    octal = re.fullmatch(r"[0-7]{3,4}", mode)
    if (octal and int(mode[-1]) & 2) or _WORLD_WRITABLE_SYMBOLIC.search(mode):
        out["world_writable"] = None
    if _short_flag(options, "R", "--recursive") and any(_catastrophic(t) for t in targets):
        out["recursive_chmod_system"] = None


_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _check_git(args: list[str], out: dict[str, None]) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    if i >= len(args):
        return
    sub, rest = args[i], args[i + 1 :]
    options, operands = _options(rest)
    if sub == "reset" and "--hard" in options:
        out["git_reset_hard"] = None
    elif sub == "clean" and _short_flag(options, "f", "--force"):
        out["git_clean"] = None
    elif sub == "push" and (
        _short_flag(options, "f", "--force", "--mirror") or any(o.startswith("+") for o in operands)
    ):
        out["git_force_push"] = None
    elif sub == "branch" and (
        "-D" in options or (_short_flag(options, "d", "--delete") and "--force" in options)
    ):
        out["git_branch_delete"] = None
    elif (sub in ("checkout", "restore") and "." in operands) or (
        sub == "stash" and operands[:1] in (["drop"], ["clear"])
    ):
        out["git_discard"] = None


def _check_kill(args: list[str], out: dict[str, None]) -> None:
    """``kill [-s SIG | -n NUM | -SIG] [--] PID...``: flag a pid of -1 (every process)."""
    rest = args
    if rest[:1] in (["-s"], ["-n"]):
        rest = rest[2:]
    elif rest[:1] in (["-l"], ["-L"]):
        return
    elif rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[1:]  # the signal: -9, -KILL, and -1 is SIGHUP here
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if "-1" in rest:
        out["kill_all"] = None


def _check_find(args: list[str], depth: int, out: dict[str, None]) -> None:
    if "-delete" in args:
        out["find_delete"] = None
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            inner = _strip_wrappers(args[i + 1 : j])
            if inner:
                name = posixpath.basename(inner[0])
                _check_command(name, inner[1:], depth, out)
                if _runs_code(name):
                    _check_code_input(name, inner[1:], SimpleCommand(), [], depth, out)
            i = j
        i += 1


def _runs_code(name: str) -> bool:
    return (
        name in _SHELLS
        or name in ("eval", "su", "watch", "source", ".")
        or bool(_INTERPRETER.match(name))
    )


def _check_code_input(
    name: str,
    args: list[str],
    cmd: SimpleCommand,
    upstream: list[list[str]],
    depth: int,
    out: dict[str, None],
) -> None:
    """A shell, interpreter or ``eval``: check the code it is given, wherever it comes from."""
    for payload in _inline_code(name, args):
        if _DOWNLOAD_SUBST.search(payload):
            out["pipe_to_shell"] = None
        if name in _SHELLS or name in ("eval", "su", "watch"):
            _scan(payload, depth + 1, out)
    if any(_DOWNLOAD_SUBST.search(a) for a in args) and (
        name in _SHELLS or name in ("source", ".") or _INTERPRETER.match(name)
    ):
        out["pipe_to_shell"] = None  # bash <(curl ...), source <(wget ...)
    shell_like = name in _SHELLS
    for heredoc in cmd.heredocs:
        if shell_like:
            _scan(heredoc.body, depth + 1, out)
    for redirect in cmd.redirects:
        if redirect.op == "<<<" and shell_like:
            _scan(redirect.target, depth + 1, out)
    if not upstream or not _reads_stdin(name, args):
        return
    for words in upstream:
        if not words:
            continue
        source = posixpath.basename(words[0])
        if source in _DOWNLOADERS or source in _DECODERS:
            out["pipe_to_shell"] = None
        elif source in ("echo", "printf") and shell_like:
            _scan(" ".join(words[1:]), depth + 1, out)


def _inline_code(name: str, args: list[str]) -> Iterator[str]:
    """The code given on the command line: ``bash -c CODE``, ``eval CODE``, ``su -c CODE``."""
    if name == "eval":
        yield " ".join(args)
        return
    if name == "watch":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("-n", "--interval", "-q", "--equexit") else 1
        yield " ".join(args[i:])
        return
    if name == "su":
        for i, arg in enumerate(args):
            if arg in ("-c", "--command") and i + 1 < len(args):
                yield args[i + 1]
            elif arg.startswith("--command="):
                yield arg.split("=", 1)[1]
        return
    if name not in _SHELLS and not _INTERPRETER.match(name):
        return
    code_flag = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if arg.startswith("--"):
            i += 1
            continue
        if arg.startswith(("-", "+")) and len(arg) > 1:
            if name in _SHELLS and "c" in arg[1:]:
                code_flag = True
            i += 1
            continue
        if code_flag:
            yield arg
        return


def _reads_stdin(name: str, args: list[str]) -> bool:
    """True when a shell or interpreter takes its program from stdin (no script operand)."""
    if name in ("eval", "su", "watch", "source", "."):
        return False
    if any(a in ("-c", "-e", "-E") or (a.startswith("-") and "c" in a[1:]) for a in args):
        return False
    _, operands = _options(args)
    return not operands or operands[0] == "-" or "-s" in args
