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

import math
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


def row_settings(ws: Any) -> dict[int, Any]:
    """Each row's ``set_row`` properties by row index, as the installed xlsxwriter keeps
    them: ``row_info`` from 3.2 (entries with a ``height`` in pixels), ``set_rows``
    before it (lists, the height first, in points)."""
    return ws.row_info if hasattr(ws, "row_info") else ws.set_rows


def row_pixels(ws: Any, row: int) -> float:
    """A row's height in pixels as xlsxwriter 3.2 holds it (the default where none was
    set). Earlier versions hold points: converted as 3.2 does, so every supported
    version gives the same height."""
    entry = row_settings(ws).get(row)
    if hasattr(ws, "row_info"):
        height = getattr(entry, "height", None)
        return float(height) if height is not None else float(ws.default_row_height)
    points = entry[0] if entry and entry[0] is not None else ws.default_row_height
    return float(int(points * 4.0 / 3.0 + 0.5))


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


def print_used_range(ws: Any) -> None:
    """Print ``ws``'s used range and nothing past it: its first cell to its last
    written row and column (a sheet with no cell keeps the default).

    Parameters
    ----------
    ws : xlsxwriter.worksheet.Worksheet
        A worksheet whose cells are all written (call it last, before closing).
    """
    if ws.dim_rowmax is None or ws.dim_colmax is None:
        return
    ws.print_area(0, 0, ws.dim_rowmax, ws.dim_colmax)


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


def text_lines(text: str, width: float, *, proportional: bool = False) -> int:
    """Lines ``text`` takes wrapped in a column ``width`` characters wide, on the safe
    side: a word is never split, a line holds one digit width less than the column.

    Parameters
    ----------
    text : str
    width : float
        The column's width in characters (digit widths).
    proportional : bool, default False
        Measure each character by :func:`prose_width` (regular weight prose: a space
        or an "i" takes half a digit's width, an "m" more than one and a half).
        Otherwise every character counts as wide as a digit, a full-width one
        (Chinese, Japanese, Korean) as two: safe for any text, bold or codes, but a
        line of prose is counted some 25% longer than it prints.

    Returns
    -------
    int
    """
    measure = prose_width if proportional else _digit_width
    room = max(int(width) - 1, 1)
    space = measure(" ")
    lines = 0
    for paragraph in str(text).split("\n"):
        used, count = 0.0, 1
        for word in paragraph.split(" "):
            size = measure(word)
            if used and used + space + size > room:
                count, used = count + 1, 0.0
            if size > room:  # a word longer than the column breaks inside it
                extra = math.ceil(size / room) - 1
                count += extra
                used = size - extra * room
            else:
                used += size + (space if used else 0)
        lines += count
    return lines


def _digit_width(text: str) -> float:
    """``text``'s width counting every character as a digit (a full-width one as two)."""
    return len(text) if text.isascii() else text_width(text)


# Advance widths of printable ASCII in digit widths as DejaVu Sans draws them (the
# wide face LibreOffice falls back on where Calibri is missing), each rounded up to
# the next eighth; any other ASCII character is one digit wide.
_ASCII_WIDTHS = {0.5: " ',.IJijl", 0.625: "()-/:;[\\]ft|", 0.75: '!"r', 0.875: "*?_`csz",
                 1.125: "ABCKRVXZ", 1.25: "&DGHNOQU", 1.375: "#+<=>M^w~", 1.5: "%",
                 1.625: "@Wm"}
_CHAR_WIDTHS = {ch: w for w, chars in _ASCII_WIDTHS.items() for ch in chars}
_WIDEST_ASCII = max(_ASCII_WIDTHS)  # a letter outside ASCII (an accent, a dash) at most


def prose_width(text: str) -> float:
    """``text``'s printed width in digit widths, character by character, in a
    regular-weight proportional face: :data:`_ASCII_WIDTHS` for ASCII, two for a
    full-width character (see :func:`text_width`) and the widest ASCII width for
    any other."""
    return sum(_CHAR_WIDTHS.get(ch, 1.0) if ch.isascii()
               else 2.0 if east_asian_width(ch) in "WF" else _WIDEST_ASCII for ch in text)


def text_width(text: str) -> int:
    """``text``'s width in digit widths: two for a character of East Asian width "W"
    or "F" (Unicode UAX #11: its glyph is full-width, as wide as two digits), one
    for any other."""
    return len(text) + sum(east_asian_width(ch) in "WF" for ch in text)


def row_points(cells: Iterable[tuple[str, float]], *, line: float = LINE_POINTS,
               proportional: bool = False) -> float:
    """The height of a row whose wrapped cells are ``(text, width)``: the tallest one's
    lines (:func:`text_lines`, ``proportional`` as there), at most Excel's largest
    row height."""
    lines = max((text_lines(t, w, proportional=proportional) for t, w in cells), default=1)
    return min(max(lines, 1), MAX_LINES) * line
