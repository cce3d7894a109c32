"""Table bodies rendered as sheet XML when written, beside the cells xlsxwriter holds.

xlsxwriter spends about 10 microseconds on each cell: a call that checks and stores
it, then an XML writer when the workbook closes. The feedback workbooks of a
500-rater study hold about 900,000 cells, so that was most of what writing them cost.
A :class:`BodySheet` takes the rows under a table's header already rendered, one
``<c>`` element per cell, built a column at a time (:class:`ColumnCells`), and
splices them in row order among xlsxwriter's own rows when the sheet is assembled.

Everything else stays xlsxwriter's: a cell's style is its format's index in the
workbook's style table and its text an index in the shared-string table, each taken
when the cell is written (as ``write_string`` and the assembly of a sheet take them),
so ``styles.xml`` and ``sharedStrings.xml`` are written by xlsxwriter as always. The
cells come out as xlsxwriter writes them (``<c r="B5" s="3" t="s"><v>12</v></c>``,
numbers as ``%.16G``), without the optional ``spans`` of their rows;
``tests/test_table_body.py`` compares each cell, style and row height with the same
table written through ``write_string``/``write_number``/``write_blank``.

Reaches into xlsxwriter's worksheet assembly (``_write_rows``, ``_write_row``,
``_check_dimensions``, the shared-string table's index and count of references,
``Format._get_xf_index``): the tests
run on the lowest xlsxwriter the package allows and on the newest.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet

from ..workbook.printing import row_settings

MAX_TEXT = 32767
"""Characters (UTF-16 code units) a cell holds; longer text is cut, as by xlsxwriter."""


class BodySheet(Worksheet):
    """A worksheet that also takes whole table bodies (see the module docstring).

    Create it with ``wb.add_worksheet(name, worksheet_class=BodySheet)``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._bodies: list[tuple[int, list[str]]] = []  # (first row, each row's cells)
        # a format's style attribute, shared by the sheet's columns: xlsxwriter works
        # out a format's key again on each use when an equal format has its index
        self.style_attributes: dict[int, str] = {}

    def add_body(self, first_row: int, first_col: int, columns: list[list[str]]) -> None:
        """Take the rows from ``first_row`` down, columns from ``first_col`` on:
        ``columns`` holds, per column, one rendered cell per row (see
        :class:`ColumnCells`), all the same length. No other cell may be written in
        these rows; their heights may be set with ``set_row``."""
        if not columns or not columns[0]:
            return
        rows = ["".join(cells) for cells in zip(*columns, strict=True)]
        last = first_row + len(rows) - 1
        for start, body in self._bodies:
            if first_row <= start + len(body) - 1 and start <= last:
                raise ValueError(f"rows {first_row + 1}-{last + 1} overlap another table body")
        # the sheet's used range (its <dimension>) covers the body
        if self._check_dimensions(first_row, first_col) or \
                self._check_dimensions(last, first_col + len(columns) - 1):
            raise ValueError(f"a table body reaches row {last + 1}, beyond the sheet")
        self._bodies.append((first_row, rows))
        self._bodies.sort(key=lambda body: body[0])

    def _write_rows(self) -> None:
        """xlsxwriter's rows, with each body spliced in at its place in row order."""
        if not self._bodies:
            super()._write_rows()
            return
        low, high = self.dim_rowmin, self.dim_rowmax
        try:
            start = low
            for first, rows in self._bodies:
                self._write_own_rows(start, first - 1)
                self._write_body(first, rows)
                start = first + len(rows)
            self._write_own_rows(start, high)
        finally:
            self.dim_rowmin, self.dim_rowmax = low, high

    def _write_own_rows(self, first: int, last: int) -> None:
        """The rows xlsxwriter holds from ``first`` to ``last``, if any."""
        if first <= last:
            self.dim_rowmin, self.dim_rowmax = first, last
            super()._write_rows()

    def _write_body(self, first: int, rows: list[str]) -> None:
        heights = row_settings(self)  # each row's set_row properties (its height)
        head, tail = self._plain_row_tag()
        for row, cells in enumerate(rows, start=first):
            if self.table.get(row) or row in self.comments:
                raise ValueError(f"row {row + 1} has cells besides its table body")
            info = heights.get(row)
            if info is None:  # most rows: xlsxwriter's own tag, its number put in
                self.fh.write(f"{head}{row + 1}{tail}{cells}</row>")
            else:
                self._write_row(row, None, info)
                self.fh.write(cells)
                self.fh.write("</row>")

    def _plain_row_tag(self) -> tuple[str, str]:
        """The start tag xlsxwriter writes for a row without properties, split around
        the row's number (it checks and escapes each of a row's attributes, a tenth of
        writing a feedback workbook)."""
        sheet_file = self.fh
        self.fh = io.StringIO()
        try:
            self._write_row(0, None, None)
            tag = self.fh.getvalue()
        finally:
            self.fh = sheet_file
        head, number, tail = tag.partition(' r="1"')
        if not number:
            raise ValueError(f"unexpected row tag from xlsxwriter: {tag}")
        return f'{head} r="', f'"{tail}'


class ColumnCells:
    """Renders the cells of one column of a :class:`BodySheet` as xlsxwriter writes them.

    Parameters
    ----------
    ws : BodySheet
        The sheet (for its workbook's shared strings).
    col : int
        The column, from 0.
    """

    def __init__(self, ws: BodySheet, col: int) -> None:
        self._strings = ws.str_table
        self._letter = xl_col_to_name(col)
        self._styles = ws.style_attributes

    def _style(self, fmt: Any) -> str:
        # the index is taken now, as a cell written through xlsxwriter takes it when
        # the sheet is assembled: before the workbook lays out its style table
        key = id(fmt)
        if key not in self._styles:
            self._styles[key] = f' s="{fmt._get_xf_index()}"' if fmt is not None else ""
        return self._styles[key]

    def number(self, row: int, value: float, fmt: Any) -> str:
        """A finite number."""
        return self.numbers(row, [value], [fmt])[0]

    def numbers(self, first: int, values: list[float], formats: list[Any],
                choice: list[int] | None = None) -> list[str]:
        """Finite numbers from row ``first`` down, in one pass (a feedback workbook's
        column). Each takes ``formats[0]``, or with ``choice`` the format
        ``formats[choice[i]]``."""
        letter, rows = self._letter, range(first + 1, first + 1 + len(values))
        if choice is None:
            style = self._style(formats[0]) if values else ""
            # a column holds few distinct numbers (scores, counts): each written once
            tails = _number_tails(values, style)
            if tails is not None:
                return [f'<c r="{letter}{row}"{tails[value]}'
                        for row, value in zip(rows, values, strict=True)]
            return [f'<c r="{letter}{row}"{style}><v>{value:.16G}</v></c>'
                    for row, value in zip(rows, values, strict=True)]
        # styles taken in the order the cells first use them, and only those used:
        # taking a style adds its format to the workbook's style table
        styles = {k: self._style(formats[k]) for k in dict.fromkeys(choice)}
        return [f'<c r="{letter}{row}"{styles[k]}><v>{value:.16G}</v></c>'
                for row, value, k in zip(rows, values, choice, strict=True)]

    def strings(self, first: int, texts: list[str], fmt: Any) -> list[str]:
        """Texts from row ``first`` down in one format, in one pass; each cut at
        :data:`MAX_TEXT` UTF-16 code units, as xlsxwriter does."""
        style, letter = self._style(fmt) if texts else "", self._letter
        index = self._strings._get_shared_string_index
        rows = range(first + 1, first + 1 + len(texts))
        # each distinct text's shared-string index, taken in the order the cells first
        # use them (as cell by cell); every other cell counted as xlsxwriter counts it
        tails = {text: f' t="s"><v>{index(_cut(text) if len(text) > MAX_TEXT // 2 else text)}'
                       "</v></c>" for text in dict.fromkeys(texts)}
        self._strings.count += len(texts) - len(tails)
        return [f'<c r="{letter}{row}"{style}{tails[text]}'
                for row, text in zip(rows, texts, strict=True)]

    def string(self, row: int, text: str, fmt: Any) -> str:
        """Text (cut as :meth:`strings` cuts it)."""
        return self.strings(row, [text], fmt)[0]

    def typed(self, row: int, value: Any, fmt: Any) -> str:
        """Any value, held as :func:`typed` says (blank, number or text)."""
        kind, held = typed(value)
        return self.blank(row, fmt) if kind == "blank" else \
            self.number(row, held, fmt) if kind == "number" else self.string(row, held, fmt)

    def blank(self, row: int, fmt: Any) -> str:
        """An empty cell that keeps its format (none without one, as xlsxwriter)."""
        return f'<c r="{self._letter}{row + 1}"{self._style(fmt)}/>' if fmt is not None else ""


def _number_tails(values: list[float], style: str) -> dict[float, str] | None:
    """Each distinct number's cell after its reference (style, value, end tag), or
    None when a zero is negative (-0.0 and 0.0 are one key, written "-0" and "0")."""
    tails = {value: f'{style}><v>{value:.16G}</v></c>' for value in dict.fromkeys(values)}
    if 0.0 in tails:
        numbers = np.array(values, dtype=float)
        if np.signbit(numbers[numbers == 0]).any():
            return None
    return tails


def _cut(text: str) -> str:
    """``text`` within :data:`MAX_TEXT` UTF-16 code units, never splitting a pair."""
    units = text.encode("utf-16-le")
    if len(units) <= 2 * MAX_TEXT:
        return text
    return units[:2 * MAX_TEXT].decode("utf-16-le", errors="ignore")


def typed(value: Any) -> tuple[str, Any]:
    """How a cell holds ``value``: ``("blank", None)`` for a missing one, ``("number",
    float)`` for a finite number, else ``("string", text)`` (a bool as Yes or No, an
    infinite number as its name)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "blank", None
    if isinstance(value, (bool, np.bool_)):
        return "string", "Yes" if value else "No"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return ("number", number) if math.isfinite(number) else ("string", str(number))
    return "string", str(value)
