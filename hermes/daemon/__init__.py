"""The daemon: paths, configuration, the lock, logs and the supervision tree.

| module | one job |
|---|---|
| ``paths.py`` | XDG config, data and runtime directories |
| ``config.py`` | the TOML schema, validation, reload (``docs/config.md``) |
| ``lock.py`` | one daemon per user; stale-lock takeover |
| ``security.py`` | the connection token (0600 file) |
| ``logs.py`` | JSON-lines rotating log with actor paths |
| ``hub.py`` | per-session event hub with a replay ring |
| ``providers.py`` | the model client; the in-process fake provider offline |
| ``manager.py`` | the sessions manager (dynamic supervisor of sessions) |
| ``app.py`` | the tree as an application (``hermes daemon``) |
| ``control.py`` | start/stop a background daemon (CLI) |

This package is imported by the CLI: keep its ``__init__`` free of imports.
"""
