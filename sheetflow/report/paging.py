"""Page breaks of the analysis workbook's long sheets: a table never split from its
heading where it fits a page, and a table sheet's last row never alone on a page.

The sheets print fit to one page wide; Excel ignores manual breaks under fit to page
(:mod:`sheetflow.packs.pages`), so the breaks are placed for LibreOffice's pages, at
the scale it prints the columns at (:func:`fit_scale`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xlsxwriter.worksheet import Worksheet

from ..packs.pages import page_breaks
from ..workbook.printing import MIN_SCALE, column_pixels, page_pixels, row_pixels

LAST_ROWS = 2  # body rows a table sheet's last page holds at least


def fit_scale(widths: Sequence[float], landscape: bool = True,
              one_page_wide: bool = True) -> int:
    """The scale (percent) columns of ``widths`` print at fit to one page wide, as
    LibreOffice lays them out (a point per pixel:
    :func:`~sheetflow.workbook.printing.page_pixels`); without ``one_page_wide`` never
    below :data:`~sheetflow.workbook.printing.MIN_SCALE`, as
    :func:`~sheetflow.workbook.printing.set_print` prints a wider sheet."""
    total = sum(column_pixels(w) for w in widths) or 1
    scale = min(100, int(page_pixels(landscape) * 100 / total))
    return scale if one_page_wide else max(scale, int(MIN_SCALE * 100))


def row_heights(ws: Worksheet, end: int) -> list[float]:
    """The heights in points of rows 0 to ``end - 1``, as set on ``ws`` (LibreOffice
    prints a row at its set height in points, its default one at the default's)."""
    return [row_pixels(ws, r) * 0.75 for r in range(end)]


def keep_blocks_whole(ws: Worksheet, starts: Sequence[int], end: int,
                      widths: Sequence[float], *, first: int = 0,
                      landscape: bool = True, one_page_wide: bool = True) -> None:
    """Page breaks before each block (rows from one of ``starts`` to the next) that
    would not fit the rest of its page; a block taller than a page starts one and
    runs on. ``first``: the rows above it repeat on every page; ``widths``,
    ``landscape`` and ``one_page_wide``: as the sheet was set up to print
    (:func:`~sheetflow.workbook.printing.set_print`)."""
    blocks = sorted({r for r in starts if first <= r < end})
    if not blocks:
        return
    heights = row_heights(ws, end)
    breaks = page_breaks(heights, blocks, first, sum(heights[:first]),
                         fit_scale(widths, landscape, one_page_wide),
                         landscape=landscape)
    if breaks:
        ws.set_h_pagebreaks(breaks)


def keep_last_rows(ws: Worksheet, first: int, end: int, widths: Sequence[float], *,
                   landscape: bool = True) -> None:
    """Page breaks in a table whose body is rows ``first`` to ``end - 1`` (the rows
    above repeat on every page) so that its last page holds at least
    :data:`LAST_ROWS` body rows: every row a block, the last ones one block."""
    last = max(first, end - LAST_ROWS)
    keep_blocks_whole(ws, [*range(first, last), last], end, widths, first=first,
                      landscape=landscape)
