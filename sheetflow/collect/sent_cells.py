"""The pack's own cells changed in a return: named, never read.

sheetflow reads only the answer cells, so text a rater types over the study's own
(an instruction, a case title, a guide, a heading) or a formula replaced by a value
would go unsaid. ``generate`` records in each pack's manifest entry, per visible
sheet, a digest of its fixed cells (``sheet_digests``, see
:mod:`sheetflow.workbook.sent_cells`): every cell with content but the answer cells
and the locked text, whose own digests collect checks already
(``locked-text-changed``). The return's sheet is digested the same way from the cells
collect reads; only when the two differ is the pack read (``packs/<file>``, by
:func:`.outside_answers.open_pack`), and each cell that held something in the pack and
holds something else now (other text, a value where a formula was, nothing) is named
in a ``sent-text-changed`` warning. A cell that held nothing and holds text now is
``text-outside-answers`` (:mod:`.outside_answers`).

The Scoring sheet is compared where its answer lines are in place: where rows were
inserted or sorted (``row-inserted``, ``rows-reordered``) the cells no longer sit
where the digest has them, and the sheet is left to :mod:`.outside_answers`. A round
trip through Excel or LibreOffice changes no digest: a formula counts as a formula
whatever its text and cached value, a number by its value, text by its text. A
manifest written before generate recorded the digests has none: no check is made.

The hidden identity sheet's row table is compared whole by :mod:`.file_check`; a table
that is neither this pack's nor another's has its rows named here
(:func:`report_row_table`).
"""

from __future__ import annotations

from itertools import compress, filterfalse
from typing import Any

from ..workbook import layout as L
from ..workbook import sent_cells as S
from .reader import Book, Cells
from .rows import raw_text
from .validate import cell_name, show_value
from .values import Formula

CODE = "sent-text-changed"
_AS_READ = frozenset((str, float, Formula))  # what the digest takes as read (formulas: one mark)

SHOWN = 20
"""Cells named one by one in a file; the rest are counted in one line."""

Changed = tuple[str, str, Cells, set[tuple[int, int]]]
"""A sheet whose fixed cells differ: its name in the return, in the pack, the return's
cells compared, and the places left out (answer cells, locked text)."""


def token(value: Any) -> Any:
    """A cell as read (:meth:`.reader.Book.cells`) as the digest takes it; None for
    nothing or ""."""
    if isinstance(value, Formula):
        return S.FORMULA
    return S.canonical(value)


def sheet_digest(cells: Cells, skip: set[tuple[int, int]]) -> str:
    """The digest of the fixed cells among ``cells``: those not in ``skip``.

    One pass over the cells collect read already; text and floats (nearly all of
    them) go in as they are."""
    # in the cells' own order (nearly the digest's): sorted in one pass, not n log n
    places = sorted(filterfalse(skip.__contains__, cells))
    values = list(map(cells.__getitem__, places))
    kinds = set(map(type, values))
    if not kinds <= _AS_READ:  # a date, a bool, an error: each cell by the rules
        found = [(place, token(value)) for place, value in zip(places, values, strict=True)
                 if value != ""]
        return S.digest([cell for cell in found if cell[1] is not None])
    # text, numbers and formulas (a Scoring sheet's 50,000 cells): by whole lists
    if Formula in kinds:
        values = [S.FORMULA if type(value) is Formula else value for value in values]
    if "" in values:
        keep = [value != "" for value in values]
        places, values = list(compress(places, keep)), list(compress(values, keep))
    return S.ordered_digest(places, values)


def changed_sheets(checker: Any, recorded: dict[str, Any], scoring_read: bool) -> list[Changed]:
    """Each visible sheet of the return whose fixed cells' digest is not the pack's.

    Parameters
    ----------
    checker : :class:`.file_check.FileChecker`
        The file's checker, after its answers were read (when they could be).
    recorded : dict
        The pack's ``sheet_digests``: sheet name -> digest.
    scoring_read : bool
        Whether the Scoring sheet's answer lines were found; it is compared only then,
        and only when none of them moved.
    """
    changed = []
    for name, want in recorded.items():
        if name == L.SCORING_SHEET:
            if not scoring_read or any(checker.shift.values()):
                continue
            here, cells = checker.sheet, checker.cells
            skip = set(checker.plan.positions.values())
        else:
            here = checker.renamed.get(name, name)
            if here not in checker.book.scans:
                continue  # a sheet removed: its own issue (sheet_changes)
            cells, skip = _whole_sheet(checker.book, here, checker.job.limits), set()
        if sheet_digest(cells, skip) != want:
            changed.append((here, name, cells, skip))
    return changed


def _whole_sheet(book: Book, sheet: str, limits: Any) -> Cells:
    """The cells of ``sheet`` up to its extent, within the limits read."""
    last_row, last_col = book.extents.get(sheet, (0, 0))
    return book.cells(sheet, min(last_row, limits.max_rows), min(last_col, limits.max_columns))


def changed_cells(checker: Any, pack: Book, sheet: Changed
                  ) -> list[tuple[str, tuple[int, int], Any, Any]]:
    """(sheet, place, what the pack had, what the return has) of each fixed cell of
    ``sheet`` that holds something else now, in reading order."""
    here, name, cells, skip = sheet
    if name == L.SCORING_SHEET:
        before = pack.cells(name, *checker.plan.window)
    else:
        before = _whole_sheet(pack, name, checker.job.limits)
    found = []
    for place in sorted(before):
        was, now = token(before[place]), token(cells.get(place))
        # by type too: True == 1.0, so a 1 typed over TRUE would otherwise pass
        if was is not None and place not in skip and (type(now) is not type(was) or now != was):
            found.append((here, place, before[place], cells.get(place)))
    return found


def report(checker: Any, found: list[tuple[str, tuple[int, int], Any, Any]]) -> None:
    """One warning per cell for the first :data:`SHOWN`, one line for the rest."""
    totals = _total_cells(checker) if found else {}
    for sheet, place, was, now in found[:SHOWN]:
        cell = cell_name(*place)
        text = raw_text(now)
        total = totals.get(cell) if sheet == checker.sheet else None
        checker.add(CODE, sheet=sheet, cell=cell, value=text,
                    what=f"Cell {cell} of sheet '{sheet}' {_now(now)}, where the workbook "
                         f"as sent had {_was(was)}{_recomputed(checker, total, now)}")
    rest = found[SHOWN:]
    if rest:
        sheet, place, _, _ = rest[0]
        cell = cell_name(*place)
        checker.add(CODE, sheet=sheet, cell=cell, what=f"From cell {cell} of sheet '{sheet}' "
                    f"on, {len(rest)} more cells no longer hold what the workbook as sent "
                    f"had; only the first {SHOWN} are named one by one")


def _total_cells(checker: Any) -> dict[str, tuple[str, str, str, str]]:
    """Scoring-sheet cell -> (case as the rater sees it, case, label, total id) of each
    formula the pack wrote for a total."""
    out = {}
    for card in checker.plan.pack.get("cards", []):
        for row in card["rows"]:
            for total_id, where in (row.get("derived") or {}).items():
                out[where["cell"]] = (L.case_name(card), card["item_id"],
                                      row.get("label") or "", total_id)
    return out


def _named(total_id: str, checker: Any) -> str:
    """The total by its id only where a line has more than one."""
    many = any(len(row.get("derived") or {}) > 1
               for card in checker.plan.pack.get("cards", []) for row in card["rows"])
    return f"the total '{total_id}'" if many else "the total"


def _recomputed(checker: Any, total: tuple[str, str, str, str] | None, now: Any) -> str:
    """What sheetflow does with a total's cell typed over ("" for another cell): it
    recomputes the total from the scores, so a value typed there is not the one used."""
    if total is None:
        return ""
    shown, case, label, total_id = total
    whose = f"case {shown}, response {label}" if label else f"case {shown}"
    said = f": {_named(total_id, checker)} of {whose}, which sheetflow recomputes from the scores"
    value = checker.result.totals.get((case, label, total_id))
    typed = token(now) is not None and not isinstance(now, Formula)
    if value is None:
        return said + (" (not from the value typed)" if typed else "")
    return said + f" and uses: {value:g}" + (
        f", not the {show_value(raw_text(now))} typed" if typed else "")


def report_unknown(checker: Any, sheets: list[Changed], why: str) -> None:
    """One line per changed sheet when the pack cannot be read to name the cells."""
    for here, _, _, _ in sheets:
        checker.add(CODE, sheet=here, what=f"Sheet '{here}' no longer holds everything the "
                    "workbook as sent had outside the answer cells; which cells changed "
                    f"cannot be told, as {L.PACKS_DIR}/{checker.head.file} {why}")


def _now(value: Any) -> str:
    if token(value) is None:
        return "is empty"
    if isinstance(value, Formula):
        return f"holds a formula ('{show_value(raw_text(value))}')"
    return f"holds '{show_value(raw_text(value))}'"


def _was(value: Any) -> str:
    if isinstance(value, Formula):
        return "a formula there"
    # the study's own text, quoted to be recognised: on one line
    return "'" + " ".join(show_value(raw_text(value)).splitlines()) + "'"


def report_row_table(checker: Any, found: dict[int, tuple[str, ...]],
                     packed: list[tuple[str, ...]]) -> None:
    """Name each row of the identity sheet's row table that is not the pack's.

    Parameters
    ----------
    checker : :class:`.file_check.FileChecker`
    found : dict
        Row number -> the row's four cells as text, for each row from the table's first.
    packed : list of tuple
        The pack's rows in order, from the same first row.
    """
    first = L.IDENTITY_ROW_TABLE_FIRST
    last = max([*found, first + len(packed) - 1])
    empty = ("",) * 4
    rows = [r for r in range(first, last + 1)
            if found.get(r, empty) != (packed[r - first] if r - first < len(packed) else empty)]
    for r in rows[:SHOWN]:
        want = packed[r - first] if r - first < len(packed) else empty
        checker.add(CODE, sheet=L.IDENTITY_SHEET, cell=f"A{r}",
                    value=" | ".join(found.get(r, empty)),
                    what=f"Row {r} of the hidden sheet '{L.IDENTITY_SHEET}' (the table sheetflow "
                         f"knows the answer lines by) holds {_row(found.get(r, empty))}, where "
                         f"the workbook as sent had {_row(want)}")
    if len(rows) > SHOWN:
        checker.add(CODE, sheet=L.IDENTITY_SHEET, cell=f"A{rows[SHOWN]}",
                    what=f"From row {rows[SHOWN]} of the hidden sheet '{L.IDENTITY_SHEET}' "
                         f"on, {len(rows) - SHOWN} more rows of its table differ from the "
                         f"workbook as sent; only the first {SHOWN} are named one by one")


def _row(values: tuple[str, ...]) -> str:
    if not any(values):
        return "nothing"
    return "'" + " | ".join(show_value(v) for v in values) + "'"
