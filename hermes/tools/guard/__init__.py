"""The path guard: one policy for every tool that touches files.

| module | one job |
|---|---|
| ``rules.py`` | the tables: instruction files, system paths, credentials, formats |
| ``policy.py`` | ``PathPolicy``: may this real path be read, written, deleted? (a ``Ruling``) |
| ``reads.py`` | ``ReadLedger``: what a session has seen of each file (stale writes) |
| ``gate.py`` | ``guard_read`` / ``guard_write``: a file tool's call refused, asked or let run |
| ``commands.py`` | ``command_rulings``: what a terminal command line writes, deletes or kills |
"""

from .policy import ALLOW, Action, PathPolicy, Ruling
from .reads import ReadLedger, Stamp

__all__ = ["ALLOW", "Action", "PathPolicy", "ReadLedger", "Ruling", "Stamp"]
