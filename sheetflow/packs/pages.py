"""Printing the Scoring sheet: a print scale that fits the width, and page breaks between
cards so that no card shorter than a page is split (a taller one starts a page and is
cut before each response and before its scores, each part printed whole where it fits
a page and headed with the case), and the text sheets likewise.

Excel ignores manual page breaks when "fit to page" is on, so the sheet is printed at a
fixed scale computed from the column widths instead, and the cards are packed onto
pages by their row heights (the writer sets every row's height, so the sum is known).
"""

from __future__ import annotations

from collections.abc import Sequence

A4 = (842.0, 595.0)  # long and short side in points
MARGINS = {"left": 0.4, "right": 0.4, "top": 0.5, "bottom": 0.5}  # inches
MAX_BREAKS = 1023  # Excel's most manual page breaks on one sheet
MIN_SCALE = 70  # percent: 10 pt text prints at 7 pt
SLACK = 0.94  # room for rounding in row heights and the application's own layout


def column_points(width: float) -> float:
    """Printed width in points of a column ``width`` characters wide, on the safe side.

    Excel with Calibri prints a column's pixels at 0.75 point each; LibreOffice without
    Calibri measures characters in a wider fallback font, about one point per pixel. The
    larger figure is used so the columns fit the page in both (Excel prints a little
    smaller than it could).
    """
    return float(int(width * 7 + 0.5) + 5 if width >= 1 else int(width * 12 + 0.5))


def print_scale(widths: Sequence[float], landscape: bool = True) -> int:
    """The largest whole percentage (10-100) at which columns of ``widths`` fit a page."""
    usable = (A4[0] if landscape else A4[1]) - (MARGINS["left"] + MARGINS["right"]) * 72
    total = sum(column_points(w) for w in widths)
    return max(10, min(100, int(usable / total * 100))) if total else 100


def page_room(scale: int, header: float, landscape: bool = True) -> float:
    """Sheet points of rows that fit on one printed page below the repeated header."""
    height = (A4[1] if landscape else A4[0]) - (MARGINS["top"] + MARGINS["bottom"]) * 72
    return (height * 100 / scale - header) * SLACK


def block_sizes(heights: Sequence[float], starts: Sequence[int]) -> list[float]:
    """The height in points of each block starting at ``starts`` (see :func:`page_breaks`)."""
    ends = [*starts[1:], len(heights)]
    return [sum(heights[a:b]) for a, b in zip(starts, ends, strict=True)]


def choose_orientation(widths: Sequence[float], heights: Sequence[float],
                       starts: Sequence[int], header: float) -> tuple[bool, int]:
    """Landscape when every block fits a landscape page; else portrait when every block
    fits a portrait page at :data:`MIN_SCALE` or more; else landscape, a taller block
    running on over pages (never portrait at a scale too small to read). And the scale.

    Returns
    -------
    (bool, int)
        Whether to print landscape, and the print scale in percent.
    """
    tallest = max(block_sizes(heights, starts), default=0.0)
    scale = print_scale(widths, True)
    if tallest <= page_room(scale, header, True):
        return True, scale
    portrait = print_scale(widths, False)
    if portrait >= MIN_SCALE and tallest <= page_room(portrait, header, False):
        return False, portrait
    return True, scale


def last_page_used(parts: Sequence[float], page: float) -> float:
    """Points used on the last page by ``parts`` packed as :func:`page_breaks` packs a
    block's parts: each on the page before when it fits, else on a fresh page."""
    used = 0.0
    for part in parts:
        if used and used + part > page:
            used = 0.0
        used = min(used + part, page)
    return used


def page_breaks(heights: Sequence[float], starts: Sequence[int], first: int,
                header: float, scale: int, landscape: bool = True,
                inner: Sequence[int] = ()) -> list[int]:
    """Rows (0-based) before which a new page starts, so cards stay whole.

    Parameters
    ----------
    heights : sequence of float
        Every row's height in points, index = row.
    starts : sequence of int
        The first row of each block that must not be split (a card, with the batch line
        before it), in order; a block runs to the row before the next start.
    first : int
        The first row after the header rows repeated on each page.
    header : float
        Height in points of the repeated header rows.
    scale : int
        Print scale in percent.
    landscape : bool
        The page orientation.
    inner : sequence of int
        Rows inside blocks where a block taller than a page is cut into parts, each
        kept whole where it fits a page (a long card's responses and answer lines,
        each starting on a line that names the case).

    Returns
    -------
    list of int
        At most :data:`MAX_BREAKS` rows, each one a block's (or part's) first row. A
        block taller than a page starts a page and runs on over the next ones.
    """
    page = page_room(scale, header, landscape)
    cuts = sorted(set(inner))
    breaks: list[int] = []
    used = sum(heights[first:starts[0]]) if starts else 0.0
    ends = [*starts[1:], len(heights)]
    for start, end, size in zip(starts, ends, block_sizes(heights, starts), strict=True):
        bounds = [start]
        if size > page:
            bounds += [r for r in cuts if start < r < end]
        for part_start, part in zip(bounds, block_sizes(heights[:end], bounds), strict=True):
            # a block taller than a page starts one: its first part (a case's title) is
            # never left at the foot of the page before, apart from the rest
            fresh = part_start == start and size > page
            if used and (fresh or used + part > page):
                breaks.append(part_start)
                used = 0.0
            used += part
            if used > page:  # a part longer than a page: the next one starts a fresh page
                used = page
    return breaks[:MAX_BREAKS]
