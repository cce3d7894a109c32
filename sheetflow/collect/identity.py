"""The three identity stores of a returned workbook: document properties, defined
names and the hidden identity sheet, read as plain text for the pack check.

A return is attributed by the rows it proves, not by what these claim; they are
compared with each other and with the pack they name (:mod:`.file_check`).
"""

from __future__ import annotations

from ..workbook import layout as L
from .reader import Book, Cells
from .safety import Limits
from .validate import show_value


def identity_sheet(book: Book, limits: Limits) -> Cells:
    """The identity sheet's four columns, down to its last row with content."""
    return book.cells(L.IDENTITY_SHEET, identity_rows(book, limits), 4)


def identity_rows(book: Book, limits: Limits) -> int:
    """The identity sheet's last row with content, within the limits."""
    return min(book.extents.get(L.IDENTITY_SHEET, (0, 0))[0], limits.max_rows)


def identity_stores(book: Book, limits: Limits) -> dict[str, dict[str, str]]:
    """Identity key -> value from each of the three stores (empty dict when absent)."""
    props = {k: book.properties[L.identity_property(k)] for k in L.READ_IDENTITY_KEYS
             if L.identity_property(k) in book.properties}
    names = {k: book.names[L.identity_name(k)] for k in L.READ_IDENTITY_KEYS
             if L.identity_name(k) in book.names}
    sheet: dict[str, str] = {}
    cells = identity_sheet(book, limits)
    for r in range(1, len(L.IDENTITY_KEYS) + 1):
        key, value = cells.get((r, 1)), cells.get((r, 2))
        if key in L.READ_IDENTITY_KEYS and value is not None:
            sheet[str(key)] = show_value(value)
    return {"document properties": props, "defined names": names,
            f"sheet {L.IDENTITY_SHEET}": sheet}
