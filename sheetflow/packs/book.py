"""The pack's xlsxwriter workbook, with its structure locked, and its identity sheet.

xlsxwriter protects sheets but has no call for workbook-structure protection, the
``<workbookProtection lockStructure="1">`` element that stops Excel from showing a
hidden sheet, adding, renaming or deleting sheets without the password. This
subclass writes it beside ``<workbookPr>`` (the position the schema requires).

It is a deterrent, not the seal: LibreOffice drops the element, and the legacy hash
(ECMA-376 part 4, 18.2.29) is 16 bits. So nothing a rater could use is on a hidden
sheet in the first place (no item id, arm or seed; see :mod:`sheetflow.packs.secret`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import xlsxwriter

from ..workbook import layout as L


def legacy_password_hash(password: str) -> str:
    """The 16-bit hash Excel stores for a protection password (hex, upper case)."""
    digest = 0
    for char in password[::-1]:
        digest = ((digest >> 14) & 0x01) | ((digest << 1) & 0x7FFF)
        digest ^= ord(char)
    digest = ((digest >> 14) & 0x01) | ((digest << 1) & 0x7FFF)
    digest ^= len(password) ^ 0xCE4B
    return f"{digest:X}"


class StructureLockedWorkbook(xlsxwriter.Workbook):
    """An ``xlsxwriter.Workbook`` whose structure is protected with ``password``."""

    def __init__(self, filename: str, options: dict[str, Any], password: str) -> None:
        super().__init__(filename, options)
        self._structure_hash = legacy_password_hash(password)

    def _write_workbook_pr(self) -> None:
        super()._write_workbook_pr()
        self._xml_empty_tag("workbookProtection", [("workbookPassword", self._structure_hash),
                                                   ("lockStructure", 1)])


def write_identity(wb: xlsxwriter.Workbook, identity: dict[str, str],
                   row_table: Iterable[tuple[str, ...]],
                   check: Callable[[int | None, str], None],
                   protect: dict[str, bool]) -> None:
    """The pack's identity, three times over (see :mod:`sheetflow.workbook.layout`).

    Document properties, defined names and the very hidden identity sheet, which also
    holds the row table. ``check`` raises on an xlsxwriter failure code.
    """
    ws = wb.add_worksheet(L.IDENTITY_SHEET)
    for i, key in enumerate(L.IDENTITY_KEYS):
        value = identity[key]
        check(ws.write_string(i, 0, key), "the identity sheet")
        check(ws.write_string(i, 1, value), "the identity sheet")
        check(wb.set_custom_property(L.identity_property(key), value, "text"),
              "a document property")
        constant = '="' + value.replace('"', '""') + '"'
        check(wb.define_name(L.identity_name(key), constant), "a defined name")
    header = L.IDENTITY_ROW_TABLE_HEADER - 1
    for c, text in enumerate(("row_id", "code", "label", "sha256")):
        check(ws.write_string(header, c, text), "the identity sheet")
    for i, values in enumerate(row_table, start=L.IDENTITY_ROW_TABLE_FIRST - 1):
        for c, text in enumerate(values):
            check(ws.write_string(i, c, text), "the identity sheet")
    ws.very_hidden()
    check(ws.protect("", protect), "the identity sheet protection")
