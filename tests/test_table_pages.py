"""Page breaks of the analysis workbook's table sheets and its Chart data sheet.

The Alpha sheet's rows are tall (its note column wraps), and printed one page wide its
last row landed alone on a page under the repeated header; the Chart data sheet's
stacked tables were cut across pages, the last rows of one apart from its heading.
Laid out as LibreOffice pages them (rows by their heights, at the scale fit to one page
wide prints, with the manual breaks), every table sheet's last page holds at least two
body rows and every Chart data table shorter than a page sits whole on one; the demo's
analysis workbook printed by LibreOffice shows the Alpha sheet's last page so.
"""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pdfplumber
import pytest
from demo_helpers import analysed_templates, built_demo
from render_helpers import print_to_pdf
from roundtrip_helpers import needs_soffice

from sheetflow.packs.pages import page_room
from sheetflow.report.paging import fit_scale

NOT_TABLES = ("Summary", "Chart data", "Methods")  # sheets that are no single table


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> dict[str, Path]:
    """Label -> analysis workbook: the demo's and each template study's."""
    base = tmp_path_factory.mktemp("table-pages")
    out = {"demo": built_demo(base / "demo") / "out" / "analysis.xlsx"}
    for template, root in analysed_templates(base).items():
        out[template] = root / "out" / "analysis.xlsx"
    return out


def _widths(ws: openpyxl.worksheet.worksheet.Worksheet) -> list[float]:
    """Every column's width (openpyxl groups equal neighbours in one entry)."""
    return [d.width for d in ws.column_dimensions.values() if d.width
            for _ in range(d.min, d.max + 1)]


def _pages(ws: openpyxl.worksheet.worksheet.Worksheet, first: int,
           one_page_wide: bool = True) -> list[list[int]]:
    """The rows (1-based) from ``first`` on that each page prints, the rows above
    repeated on every page (``one_page_wide``: as set_print was told)."""
    breaks = {b.id for b in ws.row_breaks.brk}  # a break after row id (1-based)
    heights = [ws.row_dimensions[r].height or 15.0 for r in range(1, ws.max_row + 1)]
    landscape = ws.page_setup.orientation == "landscape"
    room = page_room(fit_scale(_widths(ws), landscape, one_page_wide),
                     sum(heights[:first - 1]), landscape)
    pages: list[list[int]] = [[]]
    used = 0.0
    for r in range(first, ws.max_row + 1):
        if pages[-1] and (r - 1 in breaks or used + heights[r - 1] > room):
            pages.append([])
            used = 0.0
        pages[-1].append(r)
        used += heights[r - 1]
    return pages


def test_no_table_sheet_prints_its_last_row_alone(books):
    checked = 0
    for label, path in books.items():
        for ws in openpyxl.load_workbook(path).worksheets:
            if ws.title in NOT_TABLES or ws.freeze_panes is None:
                continue
            first = ws[ws.freeze_panes].row  # the body starts below the frozen header
            pages = _pages(ws, first)
            checked += len(pages) > 1
            assert len(pages) == 1 or len(pages[-1]) >= 2, (label, ws.title, pages[-1])
    assert checked >= 3  # the demo's Alpha, Cohen kappa and Direction run on


def test_no_chart_data_table_is_cut_from_its_heading(books):
    for label, path in books.items():
        ws = openpyxl.load_workbook(path)["Chart data"]
        pages = _pages(ws, 1, one_page_wide=False)
        page_of = {r: n for n, rows in enumerate(pages) for r in rows}
        landscape = ws.page_setup.orientation == "landscape"
        # printed as set_print sets it up: fit to width, never below MIN_SCALE
        room = page_room(fit_scale(_widths(ws), landscape, one_page_wide=False), 0.0,
                         landscape)
        # a table: its heading (bold, alone in column A) to the first blank row
        heads = [r for r in range(1, ws.max_row + 1)
                 if ws.cell(r, 1).font.b and ws.cell(r, 2).value is None]
        assert heads, label
        for head in heads:
            end = next((r for r in range(head + 1, ws.max_row + 1)
                        if all(c.value is None for c in ws[r])), ws.max_row + 1)
            size = sum(ws.row_dimensions[r].height or 15.0 for r in range(head, end))
            assert size > room or page_of[head] == page_of[end - 1], \
                (label, ws.cell(head, 1).value)


LEVELS = re.compile(r"\b(nominal|ordinal|interval|ratio)\b")  # one per Alpha row


@needs_soffice
@pytest.mark.libreoffice
def test_the_demo_alpha_sheet_last_page_holds_two_rows(books, tmp_path):
    """Printed by LibreOffice: the last page under the Alpha sheet's header holds two
    measures or more (it held one, "Improvement direction", alone); with rows as tall
    as their notes the sheet may fit one page, which holds them all."""
    pdf = print_to_pdf([books["demo"]], tmp_path)[books["demo"]]
    with pdfplumber.open(pdf) as doc:
        texts = [page.extract_text() or "" for page in doc.pages]
    alpha = [t for t in texts if re.match(r"measure\s+kind\s+level\s+alpha", t)]
    assert alpha
    assert len(LEVELS.findall(alpha[-1])) >= 2, alpha[-1]
