"""The daemon: configuration, the lock, logs and the supervision tree (its places on
disk are ``hermes/paths.py``, below every package).

| module | one job |
|---|---|
| ``config.py`` | the TOML schema, validation, reload (``docs/config.md``); the CLI reads it |
| ``settings.py`` | ``Settings``: the running configuration and what the actors share |
| ``lock.py`` | one daemon per runtime and per data directory; stale-lock takeover |
| ``trust.py`` | the runtime directory and its files must be ours and private |
| ``pidcheck.py`` | a pid is our hermes daemon (uid, command, start time) before a signal |
| ``startup.py`` | private directories (umask 0077) and start-up failures as one line |
| ``exitnote.py`` | one line for a tree that fails to start or whose root gives up |
| ``security.py`` | the connection token (0600 file) |
| ``logs.py`` | JSON-lines rotating log with actor paths |
| ``hub.py`` | per-session event hub with a replay ring |
| ``providers.py`` | the model client; the in-process fake provider offline |
| ``manager.py`` | the sessions manager (dynamic supervisor of sessions) |
| ``manager_api.py`` | the manager's requests, answers and ``ManagerClient`` |
| ``estop.py`` | the emergency stop's file, the stop of delegations, the spawn pause |
| ``app.py`` | the tree as an application (``hermes daemon``) |
| ``surface.py`` | what the tree asks of its gateway (handed in: the gateway imports this package) |
| ``endpoint.py`` | finding the running daemon: its address and token (every client) |
| ``shutdown.py`` | the shutdown's phases (input, turns, stores, surfaces) |
| ``shutdown_report.py`` | the last shutdown's report, read by ``hermes daemon stop`` |
| ``control.py`` | start/stop a background daemon (CLI) |
| ``ready.py`` | the ready pipe: the started daemon tells ``hermes daemon start`` it serves |

This package is imported by the CLI: keep its ``__init__`` free of imports, and keep
``config``, ``trust``, ``lock``, ``pidcheck``, ``endpoint``, ``control`` and
``shutdown_report`` free of the store, the sessions and the model
(``tests/hermes/cli/test_import_graph.py``).
"""
