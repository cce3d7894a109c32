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

from collections.abc import Iterator
from typing import Any

import defusedxml.ElementTree as SafeET

from .reader import Book
from .sheet_changes import FileChecker, Found, Wording, name_found, read_related

DRAWING_TEXT = "drawing-text"
_DRAWING_TYPE = "/drawing"  # a sheet's relationship to its drawing part
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
# Excel wraps newer shapes in markup-compatibility blocks: the "Choice" is what it
# shows, the "Fallback" a copy for older programs (read, it would name a shape twice)
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_ANCHORS = {f"{_XDR}twoCellAnchor", f"{_XDR}oneCellAnchor", f"{_XDR}absoluteAnchor"}
_DRAWING_WORDS = Wording(
    unreadable="The workbook holds drawings (text boxes or shapes) that could not be read "
               "({error}); open it to read any text in them",
    one="A text box or shape {where} holds the text '{text}'",
    more="From the text box or shape {where} on, {count} more hold text; only the first "
         "{shown} are named one by one")


def check_drawings(checker: FileChecker) -> None:
    """Name each text box or shape holding text, with its text, as a warning of
    ``checker``'s file (see :func:`.sheet_changes.name_found`)."""
    if not checker.book.drawing_parts:
        return  # the usual return: nothing drawn anywhere
    name_found(checker, DRAWING_TEXT, read_drawings, _DRAWING_WORDS)


def read_drawings(book: Book) -> list[Found]:
    """(sheet, (row, column), text) of each shape holding text, read from the drawing
    parts as :func:`.sheet_changes.read_related` reads (and raises)."""
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
