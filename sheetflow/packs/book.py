"""The pack's xlsxwriter workbook, with its structure locked.

xlsxwriter protects sheets but has no call for workbook-structure protection, the
``<workbookProtection lockStructure="1">`` element that stops Excel from showing a
hidden sheet, adding, renaming or deleting sheets without the password. This
subclass writes it beside ``<workbookPr>`` (the position the schema requires).

It is a deterrent, not the seal: LibreOffice drops the element, and the legacy hash
(ECMA-376 part 4, 18.2.29) is 16 bits. So nothing a rater could use is on a hidden
sheet in the first place (no item id, arm or seed; see :mod:`sheetflow.packs.secret`).
"""

from __future__ import annotations

from typing import Any

import xlsxwriter


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
