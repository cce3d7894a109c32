"""Hidden row ids edited in place: named, and no answer read by them.

collect finds each case's answer lines by the hidden id in column A
(:func:`~sheetflow.workbook.layout.keyed_row_id`). The id binds a line to its pack and
its case, not to the text beside it: ids swapped between two cases whose lines lie
alike align every label, and each case's answers would be read from the other's lines.
When every line's label, every locked text and every other cell of the id rows is
still where the pack put it, nothing moved but the ids: :func:`edited_ids` names those
cells, and the file is refused with ``row-ids-edited`` rather than read by them or
told that rows moved. Where rows were also inserted or deleted, :func:`ids_bound`
holds each case whose lines were found out of order to the locked text above its
lines: a case moved whole carries its text along; ids swapped leave it behind.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from ..spec.study import Study
from ..workbook import layout as L
from .lines import line_labels
from .locked_check import FileChecker as _LockedChecker
from .locked_check import digest, locked_fields, locked_in_place
from .outside_answers import open_pack
from .validate import cell_name
from .values import Formula


class FileChecker(_LockedChecker, Protocol):
    """What these checks need of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    study: Study

    def _label_at(self, row: int) -> str: ...

CODE = "row-ids-edited"
_NAMED = 6  # cells listed in the message; the rest are counted
# a line cut and inserted with its formulas renumbered (LibreOffice, Excel) reads as its
# id edited: the words hold for both
_CHANGED = ("name other cases than the lines beside them: the ids were changed, or whole "
            "lines were moved between cases")
_ASTRAY = "name another case than the locked text above those lines"
# LibreOffice saves the constants TRUE and FALSE of a formula as the calls TRUE() and
# FALSE(): the same formula, which must not read as a line moved
_LOGICAL_CALL = re.compile(r"\b(TRUE|FALSE)\(\)", re.ASCII)


def edited_ids(checker: FileChecker, ids: list[tuple[int, str]]) -> list[int]:
    """Rows whose hidden id is not the one the pack wrote there, when everything else
    about those rows reads as sent without any shift; else none.

    Parameters
    ----------
    checker : FileChecker
        The checker of one return, its Scoring sheet read (``cells``) and its plan made.
    ids : list of (int, str)
        Each row's hidden id in column A, as the alignment read them (read once: the
        sheet's cells are not scanned again).
    """
    expected: dict[int, str] = checker.plan.lines
    found = dict(ids)
    if set(found) != set(expected) or not set(found.values()) <= set(expected.values()):
        return []  # rows added, deleted or foreign: the alignment says which
    rows = sorted(r for r, key in found.items() if key != expected[r])
    if not rows or not _labels_in_place(checker):
        return []
    cards = checker.plan.pack.get("cards", [])
    fields = [x for card in cards for x in locked_fields(card)]
    if not all(locked_in_place(checker, fields)) or not _rows_as_sent(checker, rows):
        return []
    return rows


def report(checker: FileChecker, rows: list[int], what: str = _CHANGED) -> None:
    """One error naming the id cells (``rows``), saying ``what`` of them."""
    cells = [cell_name(r, 1) for r in rows]
    more = len(cells) - _NAMED
    listed = ", ".join(cells[:_NAMED]) + (f" and {more} more" if more > 0 else "")
    checker.add(CODE, sheet=checker.sheet, cell=cells[0], detail=listed, what=what)


def ids_bound(checker: FileChecker) -> bool:
    """Whether each case whose lines were found out of order (``rows-reordered``)
    has its locked text moved as its lines moved; if not, one error names the ids.

    Without it, a case's locked text found where the pack put it (the previous
    case's lines did not move) passed for rows inserted above the case's lines, and
    the lines of another case, carrying its ids, were read as its own.
    """
    if not any(i.code == "rows-reordered" for i in checker.result.issues):
        return True  # rows inserted or deleted only: their shifts are searched as before
    cards = checker.plan.pack.get("cards", [])
    for card, (first, _) in zip(cards, checker.plan.anchors, strict=True):
        shift = checker.shift.get(first, 0)
        fields = locked_fields(card)
        if not shift or all(_text_at(checker, f, shift) for f in fields):
            continue
        key = checker.plan.lines[first]
        checker.result.issues = [i for i in checker.result.issues
                                 if i.code not in ("rows-reordered", "row-inserted")]
        report(checker, [row + checker.shift[row] for row, k in
                         sorted(checker.plan.lines.items()) if k == key], _ASTRAY)
        return False
    return True


def _text_at(checker: FileChecker, locked: dict[str, Any], shift: int) -> bool:
    """Whether a locked field's text is whole ``shift`` rows from where the pack put it."""
    cells = [checker.plan.position(ref) for ref in locked["cells"]]
    return digest(checker, cells, [shift] * len(cells)) == locked["sha256"]


def _labels_in_place(checker: FileChecker) -> bool:
    """Every answer line's label (column B) is where the pack wrote it."""
    dims = {d.id: d for d in checker.study.rubric.dimensions}
    for card in checker.plan.pack.get("cards", []):
        answers = [a for r in card["rows"] for a in r["answers"].items()]
        for row, label in line_labels(answers + list(card["case_answers"].items()), dims):
            if checker._label_at(row) != label.strip():
                return False
    return True


def _rows_as_sent(checker: FileChecker, rows: list[int]) -> bool:
    """The cells of ``rows`` but their ids and answers (labels, guides, the pack's own
    formulas, written with their own row numbers) are those of the pack as sent: a
    line whose cells were moved with their formulas' text unchanged (they then name
    other rows) is not an id edited. A spreadsheet app's cut and insert renumbers the
    formulas and reads as one: the message's words hold for both."""
    pack = open_pack(checker)
    if isinstance(pack, str):
        return False  # the pack cannot be compared: say only what the labels show
    n_rows, n_cols = checker.plan.window
    sent = pack.cells(L.SCORING_SHEET, n_rows, n_cols)
    answers = set(checker.plan.positions.values())
    for row in rows:
        for col in range(2, n_cols + 1):
            if (row, col) not in answers and \
                    _text(sent.get((row, col))) != _text(checker.cells.get((row, col))):
                return False
    return True


def _text(value: Any) -> Any:
    """A cell compared with the pack's: a formula by its text, TRUE() read as TRUE
    outside its string literals (the odd pieces between double quotes)."""
    if not isinstance(value, Formula):
        return value
    pieces = value.text.split('"')
    return "=" + '"'.join(_LOGICAL_CALL.sub(r"\1", p) if i % 2 == 0 else p
                          for i, p in enumerate(pieces))
