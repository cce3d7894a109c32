"""The pack's xlsxwriter workbook, with its structure locked, and its identity sheet.

xlsxwriter protects sheets but has no call for workbook-structure protection, the
``<workbookProtection lockStructure="1">`` element that stops Excel from showing a
hidden sheet, adding, renaming or deleting sheets without the password. This
subclass writes it beside ``<workbookPr>`` (the position the schema requires).

It is a deterrent, not the seal: LibreOffice drops the element, and the legacy hash
(ECMA-376 part 4, 18.2.29) is 16 bits. So nothing a rater could use is on a hidden
sheet in the first place (no item id, arm or seed; see :mod:`sheetflow.packs.secret`).

Its ``docProps/app.xml`` names sheetflow as the application that wrote the file, as
every workbook sheetflow writes does (:mod:`sheetflow.workbook.app_props`).

Its sheets also note where they were given "" to write as text, so
:func:`content_cells` counts each sheet's cells with content without a pass over them
all for that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from operator import countOf
from typing import Any

import xlsxwriter
from xlsxwriter import worksheet as _worksheet
from xlsxwriter.worksheet import Worksheet

from ..workbook import layout as L
from ..workbook import sent_cells
from ..workbook.app_props import SheetflowWorkbook


def legacy_password_hash(password: str) -> str:
    """The 16-bit hash Excel stores for a protection password (hex, upper case)."""
    digest = 0
    for char in password[::-1]:
        digest = ((digest >> 14) & 0x01) | ((digest << 1) & 0x7FFF)
        digest ^= ord(char)
    digest = ((digest >> 14) & 0x01) | ((digest << 1) & 0x7FFF)
    digest ^= len(password) ^ 0xCE4B
    return f"{digest:X}"


class NotingWorksheet(Worksheet):
    """An xlsxwriter worksheet that notes each cell it was given "" to write as text
    (a few hundred in a 500-case pack, among some 30,000 texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.empty_texts: set[tuple[int, int]] = set()

    def _write_string(self, row: int, col: int, string: str,
                      cell_format: Any = None) -> int:
        if not string:
            self.empty_texts.add((row, col))
        return super()._write_string(row, col, string, cell_format)


class StructureLockedWorkbook(SheetflowWorkbook):
    """An ``xlsxwriter.Workbook`` whose structure is protected with ``password``."""

    worksheet_class = NotingWorksheet

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
    for i, (key, value) in enumerate(identity.items()):  # in the order of IDENTITY_KEYS
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


def content_cells(ws: NotingWorksheet) -> int:
    """How many cells of ``ws`` a reader gives a value, as written: a number, a
    formula, or text other than "".

    Every cell written but a blank carrying only a format and an empty text: the cells
    collect's reader gives a value (:meth:`sheetflow.collect.reader.Book.cells`),
    whatever program saved the return (openpyxl drops a cell holding "", Excel keeps
    it). Counted from the cells xlsxwriter holds until the workbook is released, the
    blanks by C-level iterators (a 500-case Scoring sheet has some 60,000 cells).
    """
    table = ws.table
    written = sum(map(len, table.values()))
    blanks = countOf(map(type, chain.from_iterable(map(dict.values, table.values()))),
                     _BLANK)
    empty = ws.str_table.string_table.get("")  # read, never added: the bytes stay
    # a cell given "" may have been written over since: only those still "" count
    empties = 0 if empty is None else sum(
        1 for r, c in ws.empty_texts
        if type(cell := table.get(r, {}).get(c)) is _STRING and cell[0] == empty)
    return written - blanks - empties


# xlsxwriter's types of a blank and a text cell (cell_..._tuple before its 3.2)
_BLANK = getattr(_worksheet, "CellBlankTuple", None) or _worksheet.cell_blank_tuple
_STRING = getattr(_worksheet, "CellStringTuple", None) or _worksheet.cell_string_tuple


def fixed_digest(ws: NotingWorksheet, skip: set[tuple[int, int]]) -> str:
    """The digest of ``ws``'s fixed cells (:func:`sheetflow.workbook.sent_cells.digest`):
    every cell with content but those in ``skip`` (1-based row, column), described as
    collect's reader will give them back.

    Read from the cells xlsxwriter holds until the workbook is released: a text cell
    holds its index in the workbook's shared strings.
    """
    texts = list(ws.str_table.string_table)  # in index order: each added at the end
    cells = []
    for row, line in ws.table.items():
        for col, cell in line.items():
            place = (row + 1, col + 1)
            if place in skip:
                continue
            found = _token(cell, texts)
            if found is not None:
                cells.append((place, found))
    return sent_cells.digest(cells)


def _token(cell: Any, texts: list[str]) -> Any:
    """One xlsxwriter cell as :func:`sheetflow.workbook.sent_cells.canonical` gives it;
    None for a blank or ""."""
    kind = type(cell).__name__  # the same namedtuple names in xlsxwriter 3.1 and 3.2
    if kind == "String":
        return sent_cells.canonical(texts[cell.string])
    if kind == "RichString":
        return sent_cells.canonical(cell.raw_string)
    if kind in ("Number", "Datetime"):
        return float(cell.number)
    if kind == "Boolean":
        return bool(cell.boolean)
    if kind in ("Formula", "ArrayFormula"):
        return sent_cells.FORMULA
    if kind == "Blank":
        return None
    return sent_cells.canonical(getattr(cell, "error", kind) or kind)
