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

Where the rater inserted or sorted rows on the Scoring sheet (``row-inserted``,
``rows-reordered``: warnings, the answers found by their hidden ids), its rows are
matched to the pack's first (:func:`moved_rows`): each answer line by its hidden id,
each other row by the pack's row whose content it holds. A row that holds no pack
row's content was inserted, and whatever was typed in it, outside the answer cells
read, is named like any other text.

The count only decides whether to look; the cells decide what is said. A round trip
through LibreOffice or Excel that writes cells of its own looks and finds nothing; one
that drops the pack's cells holding "" (openpyxl does) changes no count. A manifest
written before generate recorded the counts has none: no check is done.

A sheet whose fixed cells changed (:mod:`.sent_cells`: its digest differs) has its
pack read too, whatever its count: a cell emptied and another written leave the count
as it was, and the text written is named here all the same.
"""

from __future__ import annotations

from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from ..packs.manifest import PackHead
from ..workbook import layout as L
from . import sent_cells
from .reader import Book, Cells, open_book
from .rows import raw_text
from .safety import Problem
from .validate import cell_name, show_value
from .values import Formula, is_blank


class FileChecker(Protocol):
    """What the check needs of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    plan: Any  # where things are in the pack: ``pack``, ``window``, ``positions``
    job: Any  # the file's job: ``study_dir``, ``limits``
    head: PackHead
    book: Book
    sheet: str  # the Scoring sheet's name in the return
    cells: Cells  # the Scoring sheet's window
    shift: dict[int, int]  # each answer line's row in the pack -> how far it moved
    read_places: set[tuple[int, int]]  # the answer cells read, where the lines moved
    renamed: dict[str, str]  # another sheet of the pack -> its name in the return
    result: Any  # its ``entered``: how many answer cells hold anything

    def add(self, code: str, **fields: Any) -> None: ...


CODE = "text-outside-answers"
SHOWN = 20
"""Cells named one by one in a file; the rest are counted in one line (a pasted block
must not flood the report)."""


def check_outside_answers(checker: FileChecker, scoring_read: bool) -> None:
    """Name each cell of a visible sheet that holds something the pack did not, outside
    the answer cells, as a warning of ``checker``'s file.

    Parameters
    ----------
    checker : FileChecker
        The file's checker, after its answers were read (when they could be).
    scoring_read : bool
        Whether the Scoring sheet's answers were read: its answer lines found by their
        hidden ids, in place or moved (rows inserted or sorted). When not, that sheet
        is left out, as its cells cannot be lined up with the pack's; each reason
        (the sheet missing, rows deleted, unknown or moved within a case) is an error
        of its own.
    """
    recorded = checker.plan.pack.get("sheet_cells")
    digests = checker.plan.pack.get("sheet_digests")
    # a manifest from before generate recorded the counts, or the digests, has none
    grown = _grown_sheets(checker, recorded, scoring_read) \
        if isinstance(recorded, dict) else []
    changed = sent_cells.changed_sheets(checker, digests, scoring_read) \
        if isinstance(digests, dict) else []
    if not grown and not changed:
        return  # the usual return: nothing typed outside the answer cells
    pack = open_pack(checker)
    if isinstance(pack, str):
        for here, _, more in grown:
            checker.add(CODE, sheet=here, what=f"Sheet '{here}' holds {more} more "
                        f"cell{'s' if more != 1 else ''} with content than the workbook as "
                        "sent, outside the answer cells; which ones cannot be told, as "
                        f"{L.PACKS_DIR}/{checker.head.file} {pack}")
        sent_cells.report_unknown(checker, changed, pack)
        return
    # a sheet whose cells changed but did not grow may hold new text too (a cell
    # emptied, another written); not looked for without the counts (that check's own)
    looked = {here for here, _, _ in grown}
    typed = grown + [(here, name, 0) for here, name, _, _ in changed
                     if here not in looked and isinstance(recorded, dict)]
    try:
        found = [(here, place, value) for here, name, _ in typed
                 for place, value in _typed_cells(checker, pack, here, name)]
        edited = [cell for sheet in changed for cell in sent_cells.changed_cells(checker, pack,
                                                                                 sheet)]
    finally:
        pack.close()
    _report(checker, found)
    sent_cells.report(checker, edited)
    for here, name, _ in grown:
        if name != L.SCORING_SHEET:
            _beyond_limits(checker, here)


def _grown_sheets(checker: FileChecker, recorded: dict[str, Any],
                  scoring_read: bool) -> list[tuple[str, str, int]]:
    """(sheet in the return, sheet in the pack, how many more cells) of each sheet
    holding more cells with content than the pack's, plus the answers filled in."""
    grown = []
    for name, count in recorded.items():
        scoring = name == L.SCORING_SHEET
        if scoring and not scoring_read:
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
        if any(checker.shift.values()):  # lines moved: compare each row with its own
            return _typed_in_moved_rows(checker, pack.cells(name, rows, cols))
    else:
        last_row, last_col = checker.book.extents.get(here, (0, 0))
        rows = min(last_row, checker.job.limits.max_rows)
        cols = min(last_col, checker.job.limits.max_columns)
        cells, answers = checker.book.cells(here, rows, cols), set()
    before = pack.cells(name, rows, cols)
    return sorted(((place, value) for place, value in cells.items()
                   if place not in before and place not in answers and not is_blank(value)),
                  key=itemgetter(0))


def _typed_in_moved_rows(checker: FileChecker,
                         before: Cells) -> list[tuple[tuple[int, int], Any]]:
    """The Scoring sheet's cells that hold something where the pack's row they stand
    for (:func:`moved_rows`) had nothing, or in a row inserted, and that are no answer
    cells read, in reading order."""
    rows = moved_rows(checker, before)
    found = []
    for (row, col), value in checker.cells.items():
        if is_blank(value) or (row, col) in checker.read_places:
            continue
        was = rows.get(row)
        if was is None or (was, col) not in before:
            found.append(((row, col), value))
    return sorted(found, key=itemgetter(0))


def moved_rows(checker: FileChecker, before: Cells) -> dict[int, int]:
    """Each row of the return's Scoring sheet -> the pack's row it holds; a row
    inserted is left out.

    An answer line is where its hidden id moved it. Another row holds the pack's row
    whose cells (apart from "") it holds, at the same columns with the same values (a
    formula counts as any formula: moved, its references change); the fullest such
    row, the nearest of equals, each pack row once. The answer cells read are no
    content of a row (they were empty in the pack).
    """
    lines = checker.plan.lines
    rows = {line + checker.shift.get(line, 0): line for line in lines}
    packed = _row_contents(before, set(lines))
    returned = _row_contents(checker.cells, set(rows), checker.read_places)
    free = {row: content for row, content in packed.items() if content}
    by_content: dict[frozenset, list[int]] = {}
    for row, content in free.items():
        by_content.setdefault(content, []).append(row)
    # whole rows first: a row holding a pack row and a note never takes a row's match
    for row, content in sorted(returned.items()):
        same = [r for r in by_content.get(content, []) if r in free]
        if content and same:
            rows[row] = min(same, key=lambda r: abs(r - row))
            del free[rows[row]]
    for row, content in sorted(returned.items()):
        if row in rows:
            continue
        held = [r for r, c in free.items() if c <= content]
        if held:
            rows[row] = min(held, key=lambda r: (-len(free[r]), abs(r - row)))
            del free[rows[row]]
    return rows


def _row_contents(cells: Cells, skip_rows: set[int],
                  skip: set[tuple[int, int]] | frozenset = frozenset()
                  ) -> dict[int, frozenset]:
    """Row -> its cells holding something, as (column, value) with any formula as
    one value, for the rows not in ``skip_rows`` and the cells not in ``skip``."""
    out: dict[int, set] = {}
    for (row, col), value in cells.items():
        if row in skip_rows or (row, col) in skip or is_blank(value):
            continue
        out.setdefault(row, set()).add((col, _FORMULA if isinstance(value, Formula)
                                        else value))
    return {row: frozenset(content) for row, content in out.items()}


_FORMULA = object()
"""What any formula is, compared as a row's content (its references move with it)."""


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
