"""The path guard's tables: which names and places are protected, and how.

Paths under the home directory are written relative to it (``.ssh``); the
policy joins them to the real home. Everything is compared on resolved real
paths (``policy.py``); instruction-file names in any letter case.
"""

from __future__ import annotations

PROTECTED_INSTRUCTION_NAMES = frozenset(
    {
        "agents.md",
        "claude.md",
        "soul.md",
        "hermes.md",
        ".cursorrules",
        ".windsurfrules",
        ".clinerules",
        "copilot-instructions.md",
    }
)
"""Files that steer every later session: a write needs a person, each time (#106, #107)."""

PROJECT_AGENT_DIR = ".hermes"
"""A project's own agent folder: a file directly inside it is an instruction file too."""

SYSTEM_PREFIXES = (
    "/etc",
    "/boot",
    "/usr/lib/systemd",
    "/lib/systemd",
    "/private/etc",
    "/System",
    "/Library/LaunchDaemons",
    "/Library/LaunchAgents",
    "/proc",
    "/sys",
    "/dev",
)
"""File tools never write here (#108); the terminal's own gate still asks for approval."""

DOCKER_SOCKETS = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/var/run/podman/podman.sock",
)
HOME_DOCKER_SOCKETS = (".docker/run/docker.sock", ".docker/desktop/docker.sock")
RUNTIME_DIR_SOCKETS = ("docker.sock", "podman/podman.sock")
"""Under ``$XDG_RUNTIME_DIR``: a rootless Docker or Podman socket."""

HOME_CREDENTIALS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".gnupg",
    ".password-store",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
)
"""Credential files and stores (#109): never written, never read (#113)."""

SSH_APPROVAL = ".ssh/config"
"""The one credential-area file a write may reach, through the ordinary approval (#110)."""

SSH_READABLE = frozenset({"config", "known_hosts", "known_hosts.old", "authorized_keys"})
"""Files under ``~/.ssh`` that are not secrets (public keys, ``*.pub``, are readable too)."""

SYSTEM_CREDENTIALS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh")
"""Never read by a file tool (writes there are refused as system paths anyway)."""

ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist", "defaults", "schema"})
"""``.env.example`` and its kind hold no secrets: readable and writable."""

OFFICE_EXTENSIONS = frozenset(
    {
        ".docx",
        ".docm",
        ".dotx",
        ".xlsx",
        ".xlsm",
        ".xltx",
        ".pptx",
        ".pptm",
        ".odt",
        ".ods",
        ".odp",
        ".odg",
        ".pages",
        ".numbers",
        ".key",
        ".doc",
        ".xls",
        ".ppt",
    }
)
"""Zipped or binary documents: text written over one destroys it (#111)."""

SQLITE_SUFFIXES = (
    ".db",
    ".sqlite",
    ".sqlite3",
    ".db3",
    "-wal",
    "-shm",
    "-journal",
)
"""SQLite databases and their sidecars: a text write corrupts the database (#111)."""

BINARY_EXTENSIONS = frozenset(
    {
        ".pdf",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".webp",
        ".ico",
        ".bmp",
        ".tiff",
        ".zip",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".zst",
        ".7z",
        ".rar",
        ".tar",
        ".jar",
        ".whl",
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".o",
        ".a",
        ".class",
        ".pyc",
        ".wasm",
        ".mp3",
        ".mp4",
        ".mov",
        ".wav",
        ".flac",
        ".ogg",
        ".woff",
        ".woff2",
        ".ttf",
        ".otf",
        ".parquet",
        ".pkl",
        ".npy",
    }
)
"""Binary formats: overwriting an existing one with text is refused; a new one is fine."""
