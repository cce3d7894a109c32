"""Sheets a rater added, deleted, renamed, hid or showed: named.

sheetflow reads the answer cells of the Scoring sheet and nothing else, so what a
rater puts elsewhere would be lost without a word: a sheet of their own ("My notes").
Each change to the pack's sheets is named, as a warning of the file (the ratings are
still used):

- ``sheet-added``: a sheet the workbook as sent did not have, holding cells with
  content (an empty one loses nothing and is not named). A copy of the Scoring sheet
  is ``sheet-duplicated`` and the Scoring sheet found under another name
  ``sheet-renamed`` already: neither is named twice;
- ``sheet-renamed`` for the Instructions or More instructions sheet found under another
  name: the pack is read (only then) and a sheet holding all of its cells is the one
  renamed; ``sheet-deleted`` when it is nowhere (the identity sheet deleted is
  ``identity-partial``, the Scoring sheet ``sheet-missing``);
- ``sheet-visibility-changed``: a sheet of the pack hidden, or one of its hidden
  sheets shown.

All of it costs almost nothing on the usual return: the sheet list is read with the
workbook already.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..packs.manifest import PackHead
from ..workbook import layout as L
from .outside_answers import open_pack
from .reader import Book

SHEET_ADDED = "sheet-added"
SHEET_DELETED = "sheet-deleted"
SHEET_RENAMED = "sheet-renamed"
SHEET_VISIBILITY = "sheet-visibility-changed"

_VISIBLE = "visible"
# every sheet generate writes, with its state there (the lists sheet only when some
# choice list is too long to write into its rule)
_PACK_SHEETS = {L.INSTRUCTIONS_SHEET: _VISIBLE, L.SCORING_SHEET: _VISIBLE,
                L.MORE_SHEET: _VISIBLE, L.LISTS_SHEET: "hidden",
                L.IDENTITY_SHEET: "veryHidden"}
# the pack's sheets whose loss no other check names (the Scoring sheet's is
# sheet-missing, the identity sheet's identity-partial; whether a pack had a lists
# sheet its manifest does not say)
_DELETABLE = (L.INSTRUCTIONS_SHEET, L.MORE_SHEET)


class FileChecker(Protocol):
    """What the check needs of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    job: Any  # the file's job: ``study_dir``, ``limits``
    head: PackHead
    book: Book
    sheet: str  # the Scoring sheet's name in the return
    copies: set[str]  # the sheets named as copies of the Scoring sheet
    renamed: dict[str, str]  # pack sheet -> its name in the return (filled in here)

    def add(self, code: str, **fields: Any) -> None: ...


# --------------------------------------------------------------------------- sheets


def check_sheets(checker: FileChecker) -> None:
    """Name the sheets added, deleted, renamed, hidden or shown since the workbook was
    sent, as warnings of ``checker``'s file; record the renamed ones in
    ``checker.renamed``."""
    states = dict(checker.book.sheets)
    known = {*_PACK_SHEETS, checker.sheet, *checker.copies}
    added = [name for name in states if name not in known]
    gone = [name for name in _DELETABLE if name not in states]
    if gone and added:  # rare: a sheet of the pack may be there under another name
        _find_renamed(checker, gone, added)
        added = [name for name in added if name not in checker.renamed.values()]
        gone = [name for name in gone if name not in checker.renamed]
    for name in added:
        _report_added(checker, name)
    for name in gone:
        checker.add(SHEET_DELETED, sheet=name)
    for name, was in _PACK_SHEETS.items():
        now = states.get(checker.renamed.get(name, checker.sheet if name == L.SCORING_SHEET
                                             else name))
        if now is not None and (now == _VISIBLE) != (was == _VISIBLE):
            checker.add(SHEET_VISIBILITY, sheet=name,
                        detail="visible" if was == _VISIBLE else "hidden",
                        what="hidden" if was == _VISIBLE else "visible")


def _report_added(checker: FileChecker, name: str) -> None:
    """One warning for sheet ``name``, added by the rater, when it holds anything."""
    scan = checker.book.scans.get(name)
    count = scan.cells if scan is not None else 0
    if count:
        checker.add(SHEET_ADDED, sheet=name,
                    detail=f"{count} cell{'s' if count != 1 else ''}")


def _find_renamed(checker: FileChecker, gone: list[str], added: list[str]) -> None:
    """Record as renamed each sheet of ``gone`` whose every cell in the pack is, with
    the same value, on one sheet of ``added`` (whatever the rater typed beside)."""
    pack = open_pack(checker)
    if isinstance(pack, str):
        return  # cannot be told: each is named as added or deleted, both true
    try:
        for name in gone:
            rows, cols = pack.extents.get(name, (0, 0))
            before = pack.cells(name, rows, cols)
            for here in added:
                now = checker.book.cells(here, rows, cols)
                if before and here not in checker.renamed.values() and \
                        all(now.get(place) == value for place, value in before.items()):
                    checker.renamed[name] = here
                    checker.add(SHEET_RENAMED, sheet=name, detail=here)
                    break
    finally:
        pack.close()
