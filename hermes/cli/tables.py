"""Aligned tables for the control commands on a terminal.

``rich`` is imported inside :func:`print_table` only, so ``--json`` and piped
output (scripts) never load it; those keep their plain one-line-per-row form.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any


def on_terminal() -> bool:
    """Whether stdout is a terminal (a table is shown; otherwise plain lines)."""
    return sys.stdout.isatty()


def print_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    right: Sequence[str] = (),
    wrap: Sequence[str] = (),
) -> None:
    """Print ``rows`` under ``headers`` as one aligned table (see :func:`make_table`)."""
    from rich.console import Console

    Console(highlight=False, soft_wrap=False).print(make_table(headers, rows, right, wrap))


def make_table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    right: Sequence[str] = (),
    wrap: Sequence[str] = (),
) -> Any:
    """``rows`` under ``headers`` as one aligned ``rich`` table.

    ``right`` names the columns aligned right (numbers). Only the ``wrap`` columns
    fold onto more lines when the terminal is narrow (the last of them gets three
    shares of the room, the others one; each at least 16 wide); the others keep their full width, so
    each starts under its header.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    cells = [[Text(str(cell)) for cell in row] for row in rows]  # no markup from data
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
        expand=bool(wrap),
    )
    for index, header in enumerate(headers):
        folds = header in wrap
        widest = max([len(header), *(row[index].cell_len for row in cells)])
        table.add_column(
            header,
            justify="right" if header in right else "left",
            no_wrap=not folds,
            overflow="fold",
            min_width=min(widest, 16) if folds else widest,
            ratio=(3 if header == wrap[-1] else 1) if folds else None,
        )
    for row in cells:
        table.add_row(*row)
    return table
