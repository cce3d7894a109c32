"""Text a rater typed outside the answer cells: named, never read.

sheetflow reads only the answer cells, so whatever else a rater types (a note beside a
case, a remark on an instructions sheet) would be lost without a word. ``generate``
records in each pack's manifest entry how many cells each visible sheet had that a
reader gives a value (``sheet_cells``: a number, a formula, text other than ""). On
the common path nothing more is read: the return's Scoring sheet is counted in the
window its answers were read from (what lies beyond is ``content-outside-window``),
each other sheet by the scan of its XML (:attr:`.safety.SheetScan.cells`, which also
counts a cell holding "": never fewer). Only when a sheet holds more than its pack did
(on the Scoring sheet: plus the answer cells filled in) is the pack itself read,
``packs/<file>``, its bytes checked against the sha256 its entry records: each cell
that holds something in the return, was empty in the pack and is no answer cell is
named in a ``text-outside-answers`` warning.

The count only decides whether to look; the cells decide what is said. A round trip
through LibreOffice or Excel that writes cells of its own looks and finds nothing; one
that drops the pack's cells holding "" (openpyxl does) changes no count. A manifest
written before generate recorded the counts has none: no check is done.
"""

from __future__ import annotations

from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from ..packs.manifest import PackHead
from ..workbook import layout as L
from .reader import Book, Cells, open_book
from .rows import raw_text
from .safety import Problem
from .validate import cell_name, show_value
from .values import is_blank


class FileChecker(Protocol):
    """What the check needs of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    plan: Any  # where things are in the pack: ``pack``, ``window``, ``positions``
    job: Any  # the file's job: ``study_dir``, ``limits``
    head: PackHead
    book: Book
    sheet: str  # the Scoring sheet's name in the return
    cells: Cells  # the Scoring sheet's window
    renamed: dict[str, str]  # another sheet of the pack -> its name in the return
    result: Any  # its ``entered``: how many answer cells hold anything

    def add(self, code: str, **fields: Any) -> None: ...


CODE = "text-outside-answers"
SHOWN = 20
"""Cells named one by one in a file; the rest are counted in one line (a pasted block
must not flood the report)."""


def check_outside_answers(checker: FileChecker, scoring_in_place: bool) -> None:
    """Name each cell of a visible sheet that holds something the pack did not, outside
    the answer cells, as a warning of ``checker``'s file.

    Parameters
    ----------
    checker : FileChecker
        The file's checker, after its answers were read (when they could be).
    scoring_in_place : bool
        Whether the Scoring sheet's answer lines are all where the pack put them:
        when not (rows inserted, deleted, moved, sorted), that sheet is left out, as
        its cells no longer line up with the pack's and the moves are errors already.
    """
    recorded = checker.plan.pack.get("sheet_cells")
    if not isinstance(recorded, dict):
        return  # a manifest from before generate recorded the counts
    grown = _grown_sheets(checker, recorded, scoring_in_place)
    if not grown:
        return  # the usual return: nothing typed outside the answer cells
    pack = open_pack(checker)
    if isinstance(pack, str):
        for here, _, more in grown:
            checker.add(CODE, sheet=here, what=f"Sheet '{here}' holds {more} more "
                        f"cell{'s' if more != 1 else ''} with content than the workbook as "
                        "sent, outside the answer cells; which ones cannot be told, as "
                        f"{L.PACKS_DIR}/{checker.head.file} {pack}")
        return
    try:
        found = [(here, place, value) for here, name, _ in grown
                 for place, value in _typed_cells(checker, pack, here, name)]
    finally:
        pack.close()
    _report(checker, found)
    for here, name, _ in grown:
        if name != L.SCORING_SHEET:
            _beyond_limits(checker, here)


def _grown_sheets(checker: FileChecker, recorded: dict[str, Any],
                  scoring_in_place: bool) -> list[tuple[str, str, int]]:
    """(sheet in the return, sheet in the pack, how many more cells) of each sheet
    holding more cells with content than the pack's, plus the answers filled in."""
    grown = []
    for name, count in recorded.items():
        scoring = name == L.SCORING_SHEET
        if scoring and not scoring_in_place:
            continue
        # any sheet may be renamed (:mod:`.sheet_changes` finds the others)
        here = checker.sheet if scoring else checker.renamed.get(name, name)
        scan = checker.book.scans.get(here)
        if scan is None or not isinstance(count, int):
            continue  # a sheet removed (its own issue when it is the Scoring sheet)
        # the Scoring sheet's window is read already; a count of its XML would include
        # the cells holding "" a pack has there, which Excel keeps and openpyxl drops
        found = len(checker.cells) if scoring else scan.cells
        expected = count + (checker.result.entered if scoring else 0)
        if found > expected:
            grown.append((here, name, found - expected))
    return grown


def open_pack(checker: FileChecker) -> Book | str:
    """The pack as generated, its bytes those whose sha256 the manifest records; or
    why not, worded to follow its file name."""
    path = Path(checker.job.study_dir) / L.PACKS_DIR / checker.head.file
    if not checker.head.sha256:
        return "has no sha256 in the manifest to check it by"
    try:
        book = open_book(path, checker.job.limits, sha256=checker.head.sha256)
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return f"could not be read ({exc.strerror or type(exc).__name__})"
    if isinstance(book, Problem):
        if book.code == "file-changed-while-collecting":
            return "is not the workbook generate wrote (its sha256 differs from the manifest's)"
        return f"could not be read ({book.code})"
    return book


def _typed_cells(checker: FileChecker, pack: Book, here: str,
                 name: str) -> list[tuple[tuple[int, int], Any]]:
    """The cells of sheet ``here`` that hold something, while the pack's sheet
    ``name`` had nothing there and they are no answer cells, in reading order.

    The Scoring sheet is compared within the window collect reads (what lies beyond
    is ``content-outside-window``), another sheet up to its extent, within the limits.
    """
    if name == L.SCORING_SHEET:
        rows, cols = checker.plan.window
        cells: Cells = checker.cells
        answers = set(checker.plan.positions.values())  # and locked cells: never empty
    else:
        last_row, last_col = checker.book.extents.get(here, (0, 0))
        rows = min(last_row, checker.job.limits.max_rows)
        cols = min(last_col, checker.job.limits.max_columns)
        cells, answers = checker.book.cells(here, rows, cols), set()
    before = pack.cells(name, rows, cols)
    return sorted(((place, value) for place, value in cells.items()
                   if place not in before and place not in answers and not is_blank(value)),
                  key=itemgetter(0))


def _beyond_limits(checker: FileChecker, here: str) -> None:
    """Say so when sheet ``here`` holds content beyond the rows and columns read."""
    limits = checker.job.limits
    last_row, last_col = checker.book.extents.get(here, (0, 0))
    if last_row > limits.max_rows or last_col > limits.max_columns:
        checker.add(CODE, sheet=here, what=f"Sheet '{here}' holds content as far as "
                    f"{cell_name(last_row, last_col)}, beyond the first {limits.max_rows:,} "
                    f"rows and {limits.max_columns} columns sheetflow compares with the "
                    "workbook as sent")


def _report(checker: FileChecker, found: list[tuple[str, tuple[int, int], Any]]) -> None:
    """One warning per cell for the first :data:`SHOWN`, one line for the rest."""
    for sheet, (row, col), value in found[:SHOWN]:
        cell = cell_name(row, col)
        text = raw_text(value)
        checker.add(CODE, sheet=sheet, cell=cell, value=text,
                    what=f"Cell {cell} of sheet '{sheet}' holds '{show_value(text)}', "
                         "where the workbook as sent had nothing")
    rest = found[SHOWN:]
    if rest:
        sheet, place, _ = rest[0]
        cell = cell_name(*place)
        sheets = list(dict.fromkeys(s for s, _, _ in rest))
        named = ", ".join(f"'{s}'" for s in sheets)
        checker.add(CODE, sheet=sheet, cell=cell, what=f"From cell {cell} of sheet "
                    f"'{sheet}' on, {len(rest)} more cells (on sheet{'s' * (len(sheets) > 1)} "
                    f"{named}) hold something where the workbook as sent had nothing; only the "
                    f"first {SHOWN} are named one by one")
