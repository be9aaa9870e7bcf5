"""The approval gate's tables: the hardline floor, the dangerous list, and the vocabulary.

``danger.py`` walks a command line with these; nothing here reads a command.
"""

from __future__ import annotations

import re

import attrs

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
    "dynamic_command": "a command name that is not literal text (variable, substitution, glob)",
    "dynamic_code": "shell code that is not literal text (eval, bash -c, a pipe of computed text)",
    "dynamic_target": "a recursive delete or device write whose target is not literal text",
    "unparseable": "a command line the safety check could not parse",
    "too_deep": "shells nested too deeply (or too much nested code) to check",
}
"""Needs approval (once / session / always), unless yolo is on (and not opaque)."""

OPAQUE_RULES: frozenset[str] = frozenset(
    {
        "dynamic_command",
        "dynamic_code",
        "dynamic_target",
        "pipe_to_shell",
        "unparseable",
        "too_deep",
    }
)
"""What the gate cannot see through: a person must allow each one; never yolo, never remembered."""


@attrs.frozen(slots=True)
class Finding:
    """One reason a command is hardline or dangerous; ``opaque``: the gate cannot read it."""

    key: str
    description: str
    hardline: bool
    opaque: bool = False

    @classmethod
    def of(cls, key: str) -> Finding:
        if key in HARDLINE_RULES:
            return cls(key, HARDLINE_RULES[key], True)
        return cls(key, DANGEROUS_RULES[key], False, key in OPAQUE_RULES)


# -- vocabulary ------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_INTERPRETER = re.compile(r"^(?:python|perl|ruby|node|nodejs|php|lua|tclsh|pwsh)[\d.]*$")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lynx"})
_DECODERS = _words("base64 base32 xxd openssl gunzip zcat xz rev")
_PASSTHROUGH = _words("cat tee")
_STDIN_PATHS = _words("- /dev/stdin /dev/fd/0 /proc/self/fd/0")
_SQL_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "duckdb", "clickhouse-client", "cockroach"}
)
_WIPERS = _words("mkswap wipefs shred blkdiscard sgdisk")
_HYPOTHESES = ("rm", "dd", "wipefs", "systemctl")
"""What a command word the gate cannot read is tried as, for the floor only."""


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
# command): anchored at word starts, possessive where a quantifier could backtrack.
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
_RAW_SEPARATORS = re.compile(r"[\s;&|()`{},]+")
_RAW_BLOCK_REDIRECT = re.compile(r">[\s\"']*+(/dev/[^\s\"';&|)]++)")
_RAW_WINDOW = 32
_MAX_DEPTH = 5
_MAX_CHOICES = 16
"""Alternatives tried per command when its words have values (x=rm; $x)."""
_MAX_VALUES = 8
_MAX_INLINED = 2_000
"""Commands of called functions read per ``classify``: past it the rest is opaque."""
_MAX_SCANS = 200
"""Scripts read per ``classify`` (nested code, tried values): past it the rest is opaque."""
THREAD_THRESHOLD = 8_192
_DEFAULT_IFS = " \t\n"
