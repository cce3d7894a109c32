"""Text a rater puts in a text box or shape drawn on a sheet: named, never lost.

sheetflow reads the answer cells and nothing else, so words a rater writes in a text
box (Insert > Text Box) or a shape laid over the sheet would be lost without a word.
Each shape holding text is named, as a ``drawing-text`` warning of the file (the
ratings are still used; it makes the exit code 1 until the file is marked read, as a
comment on a cell does): its sheet, the cell its top-left corner is anchored to, and
its text.

A pack holds no drawing, so every one in a return is the rater's. Whether a return
holds any is known from the zip member names the safety checks listed
(:attr:`.safety.Inspection.drawings`): the usual return costs a test of an empty
tuple, and only a file with drawings has them read, with defusedxml (like comments).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from typing import Any

import defusedxml.ElementTree as SafeET

from .reader import Book
from .sheet_changes import SHOWN, FileChecker, read_related
from .validate import cell_name, show_value

DRAWING_TEXT = "drawing-text"
_DRAWING_TYPE = "/drawing"  # a sheet's relationship to its drawing part
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
# Excel wraps newer shapes in markup-compatibility blocks: the "Choice" is what it
# shows, the "Fallback" a copy for older programs (read, it would name a shape twice)
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_ANCHORS = {f"{_XDR}twoCellAnchor", f"{_XDR}oneCellAnchor", f"{_XDR}absoluteAnchor"}

Found = tuple[str, tuple[int, int], str]
"""(sheet, (row, column) of the anchor cell, (0, 0) when none), text) of one shape."""


def check_drawings(checker: FileChecker) -> None:
    """Name each text box or shape holding text, with its text, as a warning of
    ``checker``'s file (the first :data:`SHOWN` one by one, then one line)."""
    if not checker.book.drawing_parts:
        return  # the usual return: nothing drawn anywhere
    try:
        found = read_drawings(checker.book)
    except (SyntaxError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        # ParseError is a SyntaxError; defusedxml's refusals are ValueErrors
        checker.add(DRAWING_TEXT, what="The workbook holds drawings (text boxes or "
                    f"shapes) that could not be read ({type(exc).__name__}); open it to "
                    "read any text in them")
        return
    for sheet, place, text in found[:SHOWN]:
        _report(checker, sheet, place, value=text,
                what=f"A text box or shape {_where(sheet, place)} holds the text "
                     f"'{show_value(text)}'")
    rest = found[SHOWN:]
    if rest:
        sheet, place, _ = rest[0]
        _report(checker, sheet, place,
                what=f"From the text box or shape {_where(sheet, place)} on, {len(rest)} "
                     f"more hold text; only the first {SHOWN} are named one by one")


def _report(checker: FileChecker, sheet: str, place: tuple[int, int], **fields: Any) -> None:
    """One ``drawing-text`` warning at ``place`` of ``sheet`` (no cell when unknown)."""
    cell = cell_name(*place) if place != (0, 0) else ""
    checker.add(DRAWING_TEXT, sheet=sheet, cell=cell, **fields)


def _where(sheet: str, place: tuple[int, int]) -> str:
    """Where a shape is, for a message: its anchor cell when it has one."""
    if place == (0, 0):
        return f"on sheet '{sheet}'"
    return f"at cell {cell_name(*place)} of sheet '{sheet}'"


def read_drawings(book: Book) -> list[Found]:
    """(sheet, (row, column), text) of each shape holding text, in sheet order then
    reading order; a drawing part no sheet refers to is shown nowhere and left out.

    Raises
    ------
    SyntaxError, ValueError, KeyError, zipfile.BadZipFile
        When a part cannot be read.
    """
    return read_related(book, _DRAWING_TYPE, _shapes)


def _shapes(data: bytes) -> list[tuple[tuple[int, int], str]]:
    """((row, column), text) of each shape of a drawing part that holds text."""
    out = []
    for anchor in _anchors(SafeET.fromstring(data)):
        place = _anchor_cell(anchor)
        for shape in anchor.iter(f"{_XDR}sp"):
            text = _shape_text(shape)
            if text:  # a shape with no text holds no words to lose
                out.append((place, text))
    return out


def _anchors(element: Any) -> Iterator[Any]:
    """The anchors (each a shape, picture or group, placed) under ``element``, those
    of a markup-compatibility fallback left out."""
    for child in element:
        if child.tag in _ANCHORS:
            yield child
        elif child.tag != _FALLBACK:
            yield from _anchors(child)


def _anchor_cell(anchor: Any) -> tuple[int, int]:
    """(row, column), 1-based, of the cell an anchor's top-left corner is in; (0, 0)
    for an anchor placed by position alone."""
    start = anchor.find(f"{_XDR}from")
    if start is None:
        return (0, 0)
    row, col = start.findtext(f"{_XDR}row", ""), start.findtext(f"{_XDR}col", "")
    if not (row.strip().isdigit() and col.strip().isdigit()):
        return (0, 0)
    return (int(row) + 1, int(col) + 1)  # the drawing counts from 0


def _shape_text(shape: Any) -> str:
    """A shape's text on one line: its paragraphs' runs, paragraphs joined by a space."""
    body = shape.find(f"{_XDR}txBody")
    if body is None:
        return ""
    paragraphs = ("".join(t.text or "" for t in p.iter(f"{_A}t"))
                  for p in body.iter(f"{_A}p"))
    return " ".join(" ".join(paragraphs).split())
