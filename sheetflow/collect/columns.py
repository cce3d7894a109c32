"""Columns inserted into or deleted from the Scoring sheet: one issue, not a cascade.

Answers are read at the cells the pack put them in. A column inserted (to type notes
beside the answers) moves every cell right of it one column on, on every row: read
where they were, the prompts and responses looked edited, each answer was read under
the wrong question or as blank, and the rater was asked to fix hundreds of problems
that were one column. Rows have their hidden ids; columns have none, so the pack's
own fixed text stands in for them: the hidden row ids (column A), each answer line's
label (column B), the heading row's "Question" and "Guide", and the locked texts
(prompt, responses). Each column holding such text is looked for a few columns to
either side (:func:`column_move`); when every one is found, those left of some point
in place and all those right of it moved by the same number of columns, that is one
``column-inserted`` (moved right) or ``column-deleted`` (moved left) error, and no
answer is read from the file.

Nothing is searched on the usual return: when the first probe of every column holds
where the pack put it, the columns are in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..workbook import layout as L
from .reader import Cells
from .safety import column_number
from .validate import cell_name

COLUMN_INSERTED = "column-inserted"
COLUMN_DELETED = "column-deleted"


@dataclass(frozen=True)
class Probe:
    """Text the pack wrote in one column: the cells of ``rows`` joined read ``text``,
    or, for a locked field (whose text the manifest keeps only as a digest), hash to
    ``sha256``."""

    rows: tuple[int, ...]
    text: str | None = None
    sha256: str | None = None


Show = Callable[[Any], str]
"""A cell's value as text, exactly (:func:`.locked_check.show_full`)."""


@dataclass(frozen=True)
class ColumnMove:
    """Columns inserted (``shift`` > 0) or deleted (``shift`` < 0) on the sheet.

    The columns inserted or deleted lie between ``after`` and ``first``, columns of
    the sheet as sent (0: none before): the last column found in place and the first
    found moved, or around the columns deleted when those are known (their text found
    nowhere).
    """

    shift: int
    after: int
    first: int

    @property
    def code(self) -> str:
        """The issue code."""
        return COLUMN_INSERTED if self.shift > 0 else COLUMN_DELETED

    @property
    def count(self) -> int:
        """How many columns were inserted or deleted."""
        return abs(self.shift)

    def now(self, col: int) -> int | None:
        """Where column ``col`` of the sheet as sent is now; ``None`` when unknown
        (deleted, or between the columns found in place and those found moved)."""
        if col <= self.after:
            return col
        return col + self.shift if col >= self.first else None

    def fields(self) -> dict[str, str]:
        """The issue's message fields: ``detail`` (which columns), ``verb`` (was,
        were), ``noun`` (column, columns), ``it`` (it, them) and ``what`` (how far the
        rest moved)."""
        n = self.count
        if self.shift > 0:  # named as they are now: that is where the rater finds them
            low, high, when = self.after + 1, self.first + self.shift - 1, "now"
        else:  # named as they were: they are gone
            low, high, when = self.after + 1, self.first - 1, "was" if n == 1 else "were"
        among = "" if high - low + 1 == n else "one of " if n == 1 else "among "
        return {"detail": f"{'A column' if n == 1 else f'{n} columns'} ({when} {among}"
                          f"{_columns(low, high)})",
                "verb": "was" if n == 1 else "were", "noun": "column" if n == 1 else "columns",
                "it": "it" if n == 1 else "them",
                "what": "one column" if n == 1 else f"{n} columns"}


def _columns(low: int, high: int) -> str:
    """"column C", or "columns C to E"."""
    first, last = _letter(low), _letter(high)
    return f"column {first}" if low == high else f"columns {first} to {last}"


def _letter(col: int) -> str:
    return cell_name(1, col)[:-1]


def scoring_probes(pack: dict[str, Any], lines: dict[int, str],
                   labels: Iterable[tuple[int, str]]) -> dict[int, list[Probe]]:
    """Column -> the pack's fixed text in it, top to bottom.

    Parameters
    ----------
    pack : dict
        The pack's manifest entry.
    lines : dict
        Row -> hidden id text of each answer line (column A).
    labels : iterable of (int, str)
        (row, label) of each answer line (column B).
    """
    probes: dict[int, list[Probe]] = {}

    def put(col: int, probe: Probe) -> None:
        probes.setdefault(col, []).append(probe)

    cards = pack.get("cards") or [{"rows": []}]
    guide = L.guide_column(tuple(r["label"] for r in cards[0]["rows"] if r["label"]))
    put(column_number(L.LABEL_COLUMN), Probe((L.HEADER_ROWS,), "Question"))
    put(column_number(guide), Probe((L.HEADER_ROWS,), "Guide"))
    for row, key in lines.items():
        put(column_number(L.ROW_ID_COLUMN), Probe((row,), key))
    for row, label in labels:
        put(column_number(L.LABEL_COLUMN), Probe((row,), label.strip()))
    for card in pack.get("cards", []):
        for locked in card["locked"] + [x for r in card["rows"] for x in r["locked"]]:
            places = [_place(ref) for ref in locked["cells"]]
            cols = {c for _, c in places}
            if len(cols) == 1:  # a field split over columns says nothing of one column
                put(cols.pop(), Probe(tuple(r for r, _ in places), sha256=locked["sha256"]))
    return {col: sorted(found, key=lambda p: p.rows) for col, found in probes.items()}


def _place(ref: str) -> tuple[int, int]:
    letters = ref.rstrip("0123456789")
    return int(ref[len(letters):]), column_number(letters)


def column_move(cells: Cells, probes: Callable[[bool], dict[int, list[Probe]]],
                show: Show, reach: int) -> ColumnMove | None:
    """The columns inserted or deleted on the sheet ``cells``, or ``None`` when its
    columns are in place or moved in no way one insertion or deletion explains.

    Parameters
    ----------
    cells : Cells
        The sheet's cells, (row, column) -> value.
    probes : callable
        Column -> the pack's fixed text in it (:func:`scoring_probes`): of the first
        card only when called with ``True``, of every card with ``False``.
    show : callable
        A cell's value as text, exactly.
    reach : int
        How many columns to either side a column is looked for.
    """
    first = probes(True)
    if all(_holds(cells, found[0], col, show) for col, found in first.items()):
        return None  # the usual return: no need to look further
    every = probes(False)
    shifts = {col: _shift(cells, found, col, show, reach) for col, found in every.items()}
    return _one_move(shifts)


def _shift(cells: Cells, probes: list[Probe], col: int, show: Show,
           reach: int) -> int | None:
    """How far column ``col`` moved: the shift at which all its probes hold, nearest
    first; ``None`` when none does."""
    for shift in sorted(range(-reach, reach + 1), key=abs):
        if col + shift >= 1 and all(_holds(cells, p, col + shift, show) for p in probes):
            return shift
    return None


def _holds(cells: Cells, probe: Probe, col: int, show: Show) -> bool:
    """Whether ``probe``'s text is in column ``col``."""
    text = "".join(show(cells.get((row, col))) for row in probe.rows)
    if probe.sha256 is not None:
        return L.text_sha256(text) == probe.sha256
    return text.strip() == probe.text


def _one_move(shifts: dict[int, int | None]) -> ColumnMove | None:
    """The one insertion or deletion ``shifts`` (column -> how far it moved, ``None``
    when not found) show: columns in place, then (a deletion only) columns not found,
    then columns all moved by one amount; ``None`` for anything else."""
    moved = {s for s in shifts.values() if s}
    if len(moved) != 1:
        return None
    shift = moved.pop()
    order = sorted(shifts)
    first = min(c for c in order if shifts[c] == shift)
    before, after_first = [c for c in order if c < first], [c for c in order if c > first]
    if any(shifts[c] != shift for c in after_first):
        return None
    in_place = [c for c in before if shifts[c] == 0]
    lost = [c for c in before if shifts[c] is None]
    after = max(in_place, default=0)
    if any(c < after for c in lost):
        return None  # a column lost left of one in place: text edited, not a deletion
    if lost and (shift > 0 or len(lost) > -shift):
        return None
    if shift < 0 and first - after - 1 < -shift:
        return None  # not room for the columns deleted between the two
    if len(lost) == -shift and max(lost, default=0) - min(lost, default=0) + 1 == len(lost):
        return ColumnMove(shift, min(lost) - 1, max(lost) + 1)  # those deleted
    return ColumnMove(shift, after, first)
