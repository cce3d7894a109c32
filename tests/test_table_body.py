"""A table body rendered as sheet XML (:mod:`sheetflow.report.body`) is the workbook
xlsxwriter writes for the same cells.

The referee is xlsxwriter itself: each table is written twice by ``write_table``, once
into a :class:`~sheetflow.report.body.BodySheet` and once with every cell going through
``write_string``/``write_number``/``write_blank`` into a plain worksheet. The two files
must hold the same cells (value, type, number format, font, fill, alignment, border),
row heights, widths and used range, read back by openpyxl and, as each cell is shown,
by LibreOffice.
"""

from __future__ import annotations

import csv
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
import xlsxwriter
from roundtrip_helpers import needs_soffice
from xlsxwriter.worksheet import Worksheet

from sheetflow.report import body, cells
from sheetflow.report.body import BodySheet, ColumnCells

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def awkward_table() -> pd.DataFrame:
    """One column of each kind write_table tells apart, with its edge cases."""
    n = 40
    rng = np.random.default_rng(3)
    floats = rng.normal(size=n)
    floats[[1, 7]] = np.nan
    floats[3], floats[4], floats[5] = np.inf, -np.inf, 1e-9
    mixed = [None, "text", 2.5, float("nan"), True, 7, "  padded  ", "x" * 60] * 5
    return pd.DataFrame({
        "measure": [f"measure {i % 3}" for i in range(n)],
        "value": floats,
        "p": np.linspace(0.00001, 0.9, n),
        "share_within": np.linspace(0, 1, n),
        "n_units": np.arange(n, dtype="int64"),
        "flag": [bool(i % 2) for i in range(n)],
        "note": ["a note long enough to wrap across its column " * (i % 3) or "short"
                 for i in range(n)],
        "mixed": mixed,
        "category": pd.Categorical(["α", "β <&> \"q\""] * (n // 2)),
        "tiny_seconds": floats * 1e-4,
        # finite throughout (a column rendered at once): tiny values, a zero, a -0.0
        "effect": np.r_[np.linspace(-2, 2, n - 4), 1e-9, -2e-4, 0.0, -0.0],
    })


class ThroughXlsxwriter(ColumnCells):
    """Writes each cell with xlsxwriter's own calls and renders nothing."""

    def __init__(self, ws: Worksheet, col: int) -> None:
        self.ws, self.col = ws, col

    def number(self, row, value, fmt):
        self.ws.write_number(row, self.col, value, fmt)
        return ""

    def string(self, row, text, fmt):
        self.ws.write_string(row, self.col, text, fmt)
        return ""

    def blank(self, row, fmt):
        self.ws.write_blank(row, self.col, None, fmt)
        return ""

    def numbers(self, first, values, formats, choice=None):
        choice = choice or [0] * len(values)
        return [self.number(row, v, formats[k]) for row, v, k in
                zip(range(first, first + len(values)), values, choice, strict=True)]

    def strings(self, first, texts, fmt):
        return [self.string(row, text, fmt) for row, text in
                zip(range(first, first + len(texts)), texts, strict=True)]


class PlainSheet(Worksheet):
    def add_body(self, first_row, first_col, columns):
        """Every cell is already in xlsxwriter's table."""


def write_book(path: Path, tables: list[pd.DataFrame], sheet_class: type) -> Path:
    """Two sheets: one table alone under a title, and tables stacked with text between
    them and after them (as the chart-data sheet stacks them)."""
    wb = xlsxwriter.Workbook(str(path), cells.OPTIONS)
    fmt = cells.formats(wb)
    ws = wb.add_worksheet("One", worksheet_class=sheet_class)
    widths = cells.column_widths(tables[0])
    for j, width in enumerate(widths):
        ws.set_column(j, j, width)
    ws.write_string(0, 0, "A title", fmt["title"])
    cells.write_table(ws, 2, tables[0], fmt, widths=widths)
    stacked = wb.add_worksheet("Stacked", worksheet_class=sheet_class)
    row = 0
    for table in tables:
        stacked.write_string(row, 0, "heading", fmt["bold"])
        cells.write_table(stacked, row + 1, table, fmt, widths=cells.column_widths(table))
        row += len(table) + 3
    stacked.write_string(row, 2, "a line under the last table", fmt["grey"])
    wb.close()
    return path


@pytest.fixture
def pair(tmp_path, monkeypatch) -> tuple[Path, Path]:
    tables = [awkward_table(), awkward_table().iloc[:5, ::-1], awkward_table().iloc[:0]]
    fast = write_book(tmp_path / "fast.xlsx", tables, BodySheet)
    monkeypatch.setattr(cells, "ColumnCells", ThroughXlsxwriter)
    slow = write_book(tmp_path / "slow.xlsx", tables, PlainSheet)
    return fast, slow


def _look(cell) -> tuple:
    font, fill, align = cell.font, cell.fill, cell.alignment
    return (cell.value, cell.data_type, cell.number_format, font.b, font.i, font.sz,
            font.color.rgb if font.color is not None else None, fill.fill_type,
            fill.fgColor.rgb, align.wrap_text, align.vertical, align.horizontal,
            cell.border.left.style)


def test_every_cell_row_and_column_is_as_xlsxwriter_writes_it(pair):
    fast, slow = (openpyxl.load_workbook(p) for p in pair)
    assert fast.sheetnames == slow.sheetnames
    for name in fast.sheetnames:
        a, b = fast[name], slow[name]
        assert a.dimensions == b.dimensions, name
        assert a.max_row > 10
        for row_a, row_b in zip(a.iter_rows(), b.iter_rows(), strict=True):
            for x, y in zip(row_a, row_b, strict=True):
                assert _look(x) == _look(y), (name, x.coordinate)
        heights = {r: d.height for r, d in a.row_dimensions.items() if d.height}
        assert heights == {r: d.height for r, d in b.row_dimensions.items() if d.height}
        assert any(h for h in heights.values()), "the long notes make rows tall"
        assert {k: d.width for k, d in a.column_dimensions.items()} == \
            {k: d.width for k, d in b.column_dimensions.items()}
    shared = openpyxl.load_workbook(pair[0])["One"]
    assert shared["B7"].value == "inf" and shared["B5"].value is None  # not a number


def test_rows_and_cells_are_in_order_and_the_text_is_shared(pair):
    with zipfile.ZipFile(pair[0]) as z:
        for name in ("xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"):
            rows = ET.fromstring(z.read(name)).find(f"{MAIN}sheetData")
            numbers = [int(r.get("r")) for r in rows]
            assert numbers == sorted(set(numbers)), name
            for r in rows:
                cols = [openpyxl.utils.cell.coordinate_from_string(c.get("r"))
                        for c in r]
                assert all(row == int(r.get("r")) for _, row in cols)
                indices = [openpyxl.utils.column_index_from_string(c) for c, _ in cols]
                assert indices == sorted(set(indices))
        assert b"inlineStr" not in z.read("xl/worksheets/sheet1.xml")


def test_text_longer_than_a_cell_holds_is_cut_as_xlsxwriter_cuts_it():
    text = "é" * 20000 + "😀" * 10000  # 40,000 UTF-16 units, a pair at the cut
    cut = body._cut(text)
    assert len(cut.encode("utf-16-le")) <= 2 * body.MAX_TEXT
    assert cut == text[:len(cut)] and len(cut.encode("utf-16-le")) >= 2 * body.MAX_TEXT - 2
    assert body._cut("short") == "short"


def test_a_cell_written_inside_a_body_is_refused(tmp_path):
    wb = xlsxwriter.Workbook(str(tmp_path / "x.xlsx"))
    ws = wb.add_worksheet("S", worksheet_class=BodySheet)
    fmt = cells.formats(wb)
    cells.write_table(ws, 0, pd.DataFrame({"a": [1.0, 2.0, 3.0]}), fmt)
    with pytest.raises(ValueError, match="overlap"):
        cells.write_table(ws, 2, pd.DataFrame({"a": [1.0]}), fmt)
    ws.write_string(2, 0, "in the body")
    with pytest.raises(ValueError, match="row 3 has cells besides its table body"):
        wb.close()


@needs_soffice
@pytest.mark.libreoffice
def test_libreoffice_shows_every_cell_alike(pair, tmp_path):
    shown = {}
    for path in pair:
        out = tmp_path / f"csv-{path.stem}"
        proc = subprocess.run(
            ["soffice", f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}", "--headless",
             "--convert-to",
             "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1",
             "--outdir", str(out), str(path)],
            capture_output=True, text=True, timeout=180, check=False)
        assert proc.returncode == 0, proc.stderr
        shown[path.stem] = {f.name.split("-", 1)[1]: list(csv.reader(
            f.read_text(encoding="utf-8").splitlines())) for f in sorted(out.glob("*.csv"))}
    assert sorted(shown["fast"]) == ["One.csv", "Stacked.csv"]
    assert shown["fast"] == shown["slow"]
    rows = shown["fast"]["One.csv"]
    assert rows[2][:3] == ["measure", "value", "p"] and rows[3][0] == "measure 0"
    assert rows[3][3] == "0.0%" and rows[-1][3] == "100.0%" and rows[6][1] == "inf"


@pytest.mark.parametrize("meaning", ["p", "num", "share", "count"])
def test_a_column_at_once_takes_the_format_each_value_would(meaning, tmp_path) -> None:
    """``number_formats`` (a finite column at once) against ``number_format`` value by
    value, across the p-value steps and the tiny-number edge, signs and zeros."""
    wb = xlsxwriter.Workbook(str(tmp_path / "formats.xlsx"))
    fmt = cells.formats(wb)
    wb.close()
    values = np.array([0.0, -0.0, 1e-9, -1e-9, 0.0004999, 0.0005, -0.0005, 0.000999,
                       0.001, 0.00999, 0.01, 0.0999, 0.1, 0.5, 1.0, -3.0, 250.0])
    formats, choice = cells.number_formats(meaning, values, fmt)
    chosen = [formats[k] for k in (choice or [0] * len(values))]
    assert chosen == [cells.number_format(meaning, v, fmt) for v in values.tolist()]
