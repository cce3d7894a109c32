"""Print setup every workbook sheetflow writes shares: legible on paper, nothing cut.

A sheet is printed fit to the page width when that keeps the scale at
:data:`MIN_SCALE` or more (text of the default 11 pt font then prints at 7.7 pt or
more); a sheet too wide for that prints at :data:`MIN_SCALE` and continues on pages to
the right, its first column repeated. Orientation follows the width: portrait when the
columns fit a portrait page at full size, landscape otherwise. Header rows repeat on
every page. Page sizes are the narrower of A4 and US Letter in each orientation, so the
setup holds on either paper.

Widths are in Excel's character units (as ``set_column`` takes them); a column prints
``int(width * 7 + 0.5) + 5`` pixels wide (see :func:`page_pixels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from unicodedata import east_asian_width

MIN_SCALE = 0.70
MARGINS = {"left": 0.4, "right": 0.4, "top": 0.5, "bottom": 0.5}  # inches
# printable width in inches: the narrower of A4 (8.27 x 11.69) and Letter (8.5 x 11)
PORTRAIT_INCHES = 8.27 - MARGINS["left"] - MARGINS["right"]
LANDSCAPE_INCHES = 11.0 - MARGINS["left"] - MARGINS["right"]
LINE_POINTS = 14.5  # height of one line of the default 11 pt font
MAX_LINES = 27  # 409 points, the tallest row Excel allows


def column_pixels(width: float) -> int:
    """Printed pixels (at 100%) of a column ``width`` characters wide."""
    return int(width * 7 + 0.5) + 5 if width >= 1 else int(width * 12 + 0.5)


def page_pixels(landscape: bool) -> float:
    """Pixels of sheet width one page holds at 100%, on the safe side.

    Excel with Calibri prints a pixel at 0.75 point; LibreOffice without Calibri (or
    its metric twin Carlito) lays text out in a wider fallback font, about a point per
    pixel. The page is measured the second way, so the setup holds in both.
    """
    return (LANDSCAPE_INCHES if landscape else PORTRAIT_INCHES) * 72


def set_print(ws: Any, widths: Sequence[float], *, header_rows: int = 0,
              landscape: bool | None = None, header_from: int = 0,
              one_page_wide: bool = False) -> None:
    """Set up ``ws`` for printing (see the module notes).

    Parameters
    ----------
    ws : xlsxwriter.worksheet.Worksheet
    widths : sequence of float
        The width of every printed column, left to right.
    header_rows : int, default 0
        Rows at the top repeated on every page (0: none).
    header_from : int, default 0
        The first of the repeated rows (a table's header below a heading repeats
        alone: rows ``header_from`` to ``header_rows - 1``).
    landscape : bool, optional
        The orientation; by default portrait when the columns fit a portrait page.
    one_page_wide : bool, default False
        Always fit to the page width, even below :data:`MIN_SCALE` (for a sheet whose
        columns are narrowed to fit it first: see :func:`fitted_widths`).
    """
    total = sum(column_pixels(w) for w in widths) or 1
    if landscape is None:
        landscape = total > page_pixels(False)
    if landscape:
        ws.set_landscape()
    else:
        ws.set_portrait()
    ws.set_margins(**MARGINS)
    if one_page_wide or total * MIN_SCALE <= page_pixels(landscape):
        ws.fit_to_pages(1, 0)  # one page wide, as many tall as needed
    else:  # too wide for one legible page: go on to the right, the first column repeated
        ws.set_print_scale(int(MIN_SCALE * 100))
        ws.repeat_columns(0)
    if header_rows:
        ws.repeat_rows(header_from, header_rows - 1)


def fitted_widths(widths: Sequence[float], *floors: Sequence[float]) -> list[float]:
    """``widths`` narrowed until the columns print one landscape page wide at
    :data:`MIN_SCALE` (as narrow as the last floors allow when they cannot).

    Parameters
    ----------
    widths : sequence of float
        Each column's width (characters), as its contents ask.
    *floors : sequence of float
        Floors tried in turn, each the narrowest every column may be at that step
        (e.g. text to its longest word first, then numbers to what they print in,
        then text to a narrower width that breaks words).

    Returns
    -------
    list of float
        ``widths`` when they fit; else, at the first step that fits, each column capped
        at the widest cap that fits (a column wider than the cap wraps its text), none
        below its floor.
    """
    room = page_pixels(True) / MIN_SCALE
    current = [float(w) for w in widths]
    for floor in floors:
        if sum(map(column_pixels, current)) <= room:
            break
        current = _capped(current, [min(w, f) for w, f in zip(current, floor, strict=True)],
                          room)
    return current


def _capped(widths: list[float], floors: list[float], room: float) -> list[float]:
    """``widths`` each capped at the widest whole cap whose columns fit ``room``
    pixels, none below its floor (the floors themselves when no cap fits)."""
    for cap in range(int(max(widths, default=1)), 0, -1):
        capped = [max(f, min(w, float(cap))) for w, f in zip(widths, floors, strict=True)]
        if sum(map(column_pixels, capped)) <= room:
            return capped
    return list(floors)


def text_lines(text: str, width: float) -> int:
    """Lines ``text`` takes wrapped in a column ``width`` characters wide (on the safe
    side: a character is counted as wide as a digit, a full-width one (Chinese,
    Japanese, Korean) as two, a word never split)."""
    room = max(int(width) - 1, 1)
    lines = 0
    for paragraph in str(text).split("\n"):
        used, count = 0, 1
        for word in paragraph.split(" "):
            size = len(word) if word.isascii() else text_width(word)
            if used and used + 1 + size > room:
                count, used = count + 1, 0
            if size > room:  # a word longer than the column breaks inside it
                count += (size - 1) // room
                used = size % room or room
            else:
                used += size + (1 if used else 0)
        lines += count
    return lines


def text_width(text: str) -> int:
    """``text``'s width in digit widths: two for a character of East Asian width "W"
    or "F" (Unicode UAX #11: its glyph is full-width, as wide as two digits), one
    for any other."""
    return len(text) + sum(east_asian_width(ch) in "WF" for ch in text)


def row_points(cells: Iterable[tuple[str, float]], *, line: float = LINE_POINTS) -> float:
    """The height of a row whose wrapped cells are ``(text, width)``: the tallest one's
    lines, at most Excel's largest row height."""
    lines = max((text_lines(t, w) for t, w in cells), default=1)
    return min(max(lines, 1), MAX_LINES) * line
