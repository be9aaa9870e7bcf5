"""Unique names and paths of live actors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._errors import NameTaken

if TYPE_CHECKING:
    from ._cell import ActorCell
    from ._ref import ActorRef


class Registry:
    """Look-up of live actors by registered name and by path.

    Names are unique per system; both entries are released when the actor
    exits, whatever the reason.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, ActorCell] = {}
        self._by_path: dict[str, ActorCell] = {}

    def add_path(self, cell: ActorCell) -> None:
        holder = self._by_path.get(cell.path)
        if holder is not None:
            raise NameTaken(cell.path, holder.path)
        self._by_path[cell.path] = cell

    def check_free(self, name: str) -> None:
        """Raise ``ValueError`` for a malformed name, ``NameTaken`` for a used one."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"registered name must be a non-empty str, got {name!r}")
        holder = self._by_name.get(name)
        if holder is not None:
            raise NameTaken(name, holder.path)

    def register(self, name: str, cell: ActorCell) -> None:
        """Give ``cell`` the system-wide ``name``; raises ``NameTaken`` on a duplicate."""
        self.check_free(name)
        self._by_name[name] = cell
        cell.registered_name = name

    def unregister(self, name: str) -> None:
        """Release ``name`` (no error if it is not registered)."""
        cell = self._by_name.pop(name, None)
        if cell is not None:
            cell.registered_name = None

    def release(self, cell: ActorCell) -> None:
        """Drop every entry of an exiting actor."""
        if self._by_path.get(cell.path) is cell:
            del self._by_path[cell.path]
        if cell.registered_name is not None and self._by_name.get(cell.registered_name) is cell:
            del self._by_name[cell.registered_name]

    def whereis(self, name: str) -> ActorRef | None:
        """The live actor registered as ``name``, or None."""
        cell = self._by_name.get(name)
        return cell.ref if cell is not None else None

    def lookup(self, path: str) -> ActorRef | None:
        """The live actor at ``path`` (for example ``/hermes/sessions``), or None."""
        cell = self._by_path.get(path)
        return cell.ref if cell is not None else None

    def names(self) -> dict[str, str]:
        """Registered name -> path, for introspection."""
        return {name: cell.path for name, cell in self._by_name.items()}

    def __len__(self) -> int:
        return len(self._by_path)
