"""Check one returned workbook against its pack; runs inside a sandbox child.

:func:`check_file` is the sandbox target of :func:`sheetflow.collect.run.collect`. In
the child it inspects and opens the file (:func:`~sheetflow.collect.reader.open_book`),
reads the three identity stores, and for each pack the stores name (normally one)
decodes that pack's manifest entry and checks the workbook against it: the row table,
the Scoring sheet, its columns (:mod:`.columns`), hidden row ids (:mod:`.row_ids`),
locked text (:mod:`.locked_check`), every answer, batch times, derived points and
totals, and text written outside the answer cells (:mod:`.outside_answers`). What goes
back to the parent is small: the identity stores, the issues, counts, the self-check
input, and the rating rows with their CSV lines, never the text of the workbook. Which
pack the file really belongs to, duplicates, and the outputs are the parent's business.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .._gc import collector_paused
from ..packs.manifest import Manifest, PackHead
from ..spec.study import Study, load_study
from ..workbook import layout as L
from .answers import AnswerReader
from .columns import Probe, column_move, scoring_probes
from .content_checks import SelfCheckInput
from .copies import AnswerPrint
from .drawings import check_drawings
from .hazards import Hazard
from .identity import identity_rows, identity_sheet, identity_stores, pack_names
from .lines import line_labels, line_names, missing_lines
from .locked_check import check_locked, locked_fields, show_full
from .outside_answers import check_outside_answers
from .part_text import check_part_text
from .reader import Book, Cells, open_book
from .row_ids import edited_ids, ids_bound
from .row_ids import report as report_edited_ids
from .rows import (
    RATING_COLUMNS,
    ROW_FIELDS,
    PackedBlock,
    RatingBlock,
    csv_header,
    csv_lines,
    neutralise,
    raw_text,
    value_text,
)
from .safety import Limits, Problem, column_number
from .sent_cells import report_row_table
from .sheet_changes import check_comments, check_sheets
from .validate import ERROR, Issue, cell_name, issue, show_value
from .values import date_text, percent_text

__all__ = [
    "RATING_COLUMNS", "ROW_FIELDS", "FileChecker", "FileJob", "FileResult", "PackCheck",
    "PackedBlock", "RatingBlock", "cell_name", "check_file", "csv_header", "csv_lines",
    "identity_stores", "known_study", "neutralise", "raw_text", "row_table", "split_cell",
    "value_text",
]

ROW_SLACK, COLUMN_SLACK = 40, 4
_SKIP_SHEETS = (L.IDENTITY_SHEET, L.INSTRUCTIONS_SHEET, L.LISTS_SHEET)


@dataclass(frozen=True)
class FileJob:
    """One returned file to check in a child.

    ``name`` and ``sha256`` are as the parent knows them (issues and rows carry
    them); ``csv`` says whether to format the rating rows as CSV lines too;
    ``spec_current`` whether the study's spec hash is the manifest's, worked out once
    in the parent (:mod:`.part_text`: only then is the title a pack carries known
    without reading the pack; ``False``, the pack is read to compare).
    """

    path: str
    name: str
    sha256: str
    study_dir: str
    manifest: Manifest
    limits: Limits
    csv: bool = True
    member: int = -1  # a saved message's attachment (see sheetflow.collect.mailbox)
    spec_current: bool = False



@dataclass
class PackCheck:
    """The outcome of checking a file against one pack."""

    issues: list[Issue] = field(default_factory=list)
    answered: int = 0
    required: int = 0
    marks: int = 0
    """Answer cells of a binary whose blank stands for an answer (``blank_means``),
    which the progress line counts apart from the required ones."""
    marks_held: int = 0
    """Those of :attr:`marks` holding an answer: marked or blank, not refused."""
    entered: int = 0
    """Answer cells of any kind (required or not, confidences, batch times) that hold
    anything: 0 for a workbook sent back with nothing filled in."""
    self_check: SelfCheckInput | None = None
    block: PackedBlock | None = None
    totals: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """(case, label, total id) -> the total recomputed from the answers read."""
    answers: AnswerPrint | None = None
    """The answers in a form compared across raters (:mod:`.copies`)."""
    rows_of: str | None = None
    """``None`` while the rows may be the claimed pack's; else the pack id they prove
    (another rater's), or ``""`` when they prove no pack at all."""
    rows_proven: bool = False
    """Whether some answer line, or the row table, carries this pack's own hidden row
    ids. Keyed by the study's secret, they cannot be made from any other workbook: a
    file without them (its sheet or ids deleted) may claim the pack but not prove it."""
    read: bool = False
    """Whether the answers were read (not when the sheet is missing, or its lines are
    not where the pack put them): only then does ``answered``/``required`` mean
    anything."""

    @property
    def failed(self) -> bool:
        """Whether any issue is an error."""
        return any(i.severity == ERROR for i in self.issues)


def blanks_only(issues: list[Issue]) -> bool:
    """Whether every error among ``issues`` is a blank required answer."""
    errors = [i.code for i in issues if i.severity == ERROR]
    return bool(errors) and all(code == BLANK_ANSWER for code in errors)


BLANK_ANSWER = "answer-missing"


@dataclass
class FileResult:
    """What a child sends back for one file.

    Attributes
    ----------
    problem : Problem or None
        Why the file was refused before parsing.
    stores : dict
        Store name -> identity key -> value, for each of the three identity stores.
    checks : dict
        Pack id -> :class:`PackCheck`, for each manifest pack the stores name.
    """

    problem: Problem | None = None
    stores: dict[str, dict[str, str]] = field(default_factory=dict)
    checks: dict[str, PackCheck] = field(default_factory=dict)
    saved_by: str = ""
    """The user name the file was last saved under (:attr:`.reader.Book.saved_by`)."""
    hazards: list[Hazard] = field(default_factory=list)
    """What would act if the file were opened in Excel (:mod:`.hazards`)."""


def check_file(job: FileJob) -> FileResult:
    """Inspect, read and check one returned file (the sandbox target).

    Parameters
    ----------
    job : FileJob

    Returns
    -------
    FileResult
    """
    with collector_paused():  # a 500-case pack's check builds some 10^5 objects
        return _check_book(job)


def _check_book(job: FileJob) -> FileResult:
    book = open_book(job.path, job.limits, sha256=job.sha256 or None, member=job.member)
    if isinstance(book, Problem):
        return FileResult(problem=book)
    try:
        stores = identity_stores(book, job.limits)
        heads = job.manifest.by_id
        named = {values.get("pack_id", "") for values in stores.values()}
        checks = {}
        for pack_id in sorted(p for p in named if p in heads):
            checker = FileChecker(_study(job.study_dir), job, book, heads[pack_id])
            checks[pack_id] = checker.check()
        return FileResult(None, stores, checks, book.saved_by, book.hazards)
    finally:
        book.close()


def _study(study_dir: str) -> Study:
    """The study, loaded once per child (a forked child has the parent's already)."""
    found = _LOADED.get(study_dir)
    if found is None:
        _LOADED.clear()
        found = _LOADED[study_dir] = load_study(study_dir)
    return found


def known_study(study_dir: str, study: Study) -> None:
    """Keep ``study`` as the one in ``study_dir``, for the children forked from here."""
    _LOADED.clear()
    _LOADED[study_dir] = study


_LOADED: dict[str, Study] = {}


# --------------------------------------------------------------------------- addresses


def split_cell(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 address."""
    place = _PLACES.get(ref)
    if place is not None:
        return place
    found = _A1.fullmatch(ref)
    if found is None:
        raise ValueError(f"not a cell address: {ref!r}")
    place = int(found[2]), _column(found[1])
    if len(_PLACES) < _PLACES_KEPT:
        _PLACES[ref] = place
    return place


_A1 = re.compile(r"([A-Za-z]{1,3})([0-9]+)")
# the packs of a study put their answer cells at mostly the same addresses: a child
# checking many files parses each address once
_PLACES: dict[str, tuple[int, int]] = {}
_PLACES_KEPT = 1 << 18
_column = lru_cache(maxsize=1024)(column_number)


# --------------------------------------------------------------------------- the pack


class _Plan:
    """Where things are in a fresh copy of one pack, worked out once."""

    def __init__(self, pack: dict[str, Any]):
        self.pack = pack
        cards = pack.get("cards", [])
        # each card's answer cells, gathered once: they set the window and the lines
        answers = [[ref for r in card["rows"] for answer in r["answers"].values()
                    for ref in _refs(answer)] for card in cards]
        refs = self._other_refs(pack)
        for card_answers in answers:
            refs += card_answers
        self.positions: dict[str, tuple[int, int]] = dict(zip(refs, map(split_cell, refs),
                                                                  strict=True))
        self.window = self._window()
        self.row_table = row_table(pack)
        self.lines: dict[int, str] = {}  # row -> hidden id text of each answer line
        self.cases: dict[str, str] = {}  # hidden id text -> its card, as the rater sees it
        self.card_of: dict[str, int] = {}  # hidden id text -> its card's index
        self.anchors: list[tuple[int, int]] = []  # per card: first, last answer line
        positions = self.positions
        for card, card_answers in zip(cards, answers, strict=True):
            key = " ".join(r["row_id"] for r in card["rows"])
            self.cases[key] = L.case_name(card)
            self.card_of[key] = len(self.card_of)
            rows = sorted({positions[ref][0] for ref in card_answers})
            for row in rows:
                self.lines[row] = key
            self.anchors.append((rows[0], rows[-1]) if rows else (0, 0))

    @staticmethod
    def _other_refs(pack: dict[str, Any]) -> list[str]:
        """Every cell of the pack but its cards' row answers: batch times, study and
        case answers, locked text."""
        refs = [ref for batch in pack.get("batches", []) for ref in
                (batch["start"]["cell"], batch["end"]["cell"])]
        for answer in pack.get("study_answers", {}).values():
            refs += _refs(answer)
        for card in pack.get("cards", []):
            for answer in card["case_answers"].values():
                refs += _refs(answer)
            for locked in locked_fields(card):
                refs += locked["cells"]
        return refs

    def _window(self) -> tuple[int, int]:
        """Rows and columns of the Scoring sheet this pack uses, plus slack."""
        rows, cols = zip(*self.positions.values(), strict=True) if self.positions \
            else ((1,), (1,))
        # the helper columns right of the guide hold the pack's own formulas (layout)
        cards = self.pack.get("cards") or [{"rows": []}]
        labels = tuple(r["label"] for r in cards[0]["rows"] if r["label"])
        last_col = max(1, *cols, _column(L.helper_columns(labels)[-1]))
        return max(1, *rows) + ROW_SLACK, last_col + COLUMN_SLACK

    def position(self, ref: str) -> tuple[int, int]:
        """(row, column) of a cell of the pack, parsed once."""
        found = self.positions.get(ref)
        return found if found is not None else split_cell(ref)


def _refs(answer: dict[str, Any]) -> list[str]:
    """Every cell of one answer: its value or questions, and its confidence."""
    refs = [q["cell"] for q in answer["questions"]] if "questions" in answer \
        else [answer["cell"]]
    if "confidence" in answer:
        refs.append(answer["confidence"]["cell"])
    return refs


def row_table(pack: dict[str, Any], *, legacy: bool = False) -> list[tuple[str, str, str, str]]:
    """The row table a fresh pack carries on its identity sheet.

    Its second column is the card's display code; packs made before that change
    carried the item id there (``legacy``), and are still recognised."""
    return [(r["row_id"], r["item_id"] if legacy else card.get("code", ""), r["label"] or "",
             r["locked_sha256"]) for card in pack.get("cards", []) for r in card["rows"]]


# --------------------------------------------------------------------------- one file


class FileChecker:
    """Checks one file against one manifest pack and reads its answers."""

    def __init__(self, study: Study, job: FileJob, book: Book, head: PackHead):
        self.study = study
        self.job = job
        self.book = book
        self.date1904 = book.date1904
        self.head = head
        self.result = PackCheck()
        self.where = {"file": job.name, "rater": head.rater_id}
        self.sheet = L.SCORING_SHEET
        self.cells: Cells = {}
        self.shift: dict[int, int] = {}
        self.copies: set[str] = set()  # sheets named as copies of the Scoring sheet
        self.renamed: dict[str, str] = {}  # another sheet of the pack -> its name now
        self._in_place = False  # set once the rows are aligned
        # where answer lines moved: the cells read (or located) at their new places
        self.read_places: set[tuple[int, int]] = set()

    def check(self) -> PackCheck:
        self.plan = _Plan(self.job.manifest.pack(self.head))
        if self._check_row_table() and self._find_scoring_sheet():
            self._check_extents()
            if not self._columns_moved() and self._align_rows() and self._lines_in_place() \
                    and ids_bound(self):
                check_locked(self)
                AnswerReader(self).read_all()
                self.result.read = True
        check_sheets(self)  # before: a renamed sheet is compared under its new name
        check_outside_answers(self, self.result.read)
        check_comments(self)
        check_drawings(self)
        check_part_text(self)
        if self.result.failed and not blanks_only(self.result.issues):
            # a file with an error contributes no ratings; one whose only errors are
            # blank required answers keeps its rows for analyze --allow-partial
            self.result.block = None
        return self.result

    def add(self, code: str, **fields: Any) -> None:
        self.result.issues.append(issue(code, **self.where, **fields))

    # -- structure -----------------------------------------------------------------------

    def _check_row_table(self) -> bool:
        cells = identity_sheet(self.book, self.job.limits)
        if not cells:
            return True  # identity sheet deleted: the other stores identified the file
        rows: dict[int, tuple[str, ...]] = {}
        for r in range(L.IDENTITY_ROW_TABLE_FIRST, identity_rows(self.book, self.job.limits) + 1):
            values = tuple(show_value(cells.get((r, c))) for c in range(1, 5))
            if any(values):
                rows[r] = values
        found = list(rows.values())
        legacy = row_table(self.plan.pack, legacy=True)
        if found == self.plan.row_table or found == legacy:
            self.result.rows_proven = bool(found)
            return True
        for other in self.job.manifest.packs():  # rare: only for an edited row table
            if other["identity"]["pack_id"] != self.head.pack_id and \
                    found in (row_table(other), row_table(other, legacy=True)):
                self.add("rows-from-other-rater", sheet=L.IDENTITY_SHEET,
                         **pack_names(self.head, other["rater_id"], other["sitting"]))
                self.result.rows_of = other["identity"]["pack_id"]
                return False
        # an edited row table: the answer lines still prove whose rows these are (their
        # hidden ids), but what was changed is named, against the form closer to it
        same = [sum(a == b for a, b in zip(found, table, strict=False))
                for table in (self.plan.row_table, legacy)]
        report_row_table(self, rows, self.plan.row_table if same[0] >= same[1] else legacy)
        return True

    def _find_scoring_sheet(self) -> bool:
        names = [name for name, _ in self.book.sheets if name not in _SKIP_SHEETS]
        wanted = set(self.plan.lines.values())
        if L.SCORING_SHEET in names:
            self.cells = self._sheet_cells(L.SCORING_SHEET)
        else:
            for name in names:
                cells = self._sheet_cells(name)
                ids = {str(v) for (r, c), v in cells.items() if c == 1}
                if ids and ids >= wanted:
                    self.sheet, self.cells = name, cells
                    self.add("sheet-renamed", sheet=L.SCORING_SHEET, detail=name)
                    break
            else:
                self.add("sheet-missing", sheet=L.SCORING_SHEET)
                return False
        for name in names:  # a copy of the answer sheet: which answers are meant?
            if name != self.sheet and \
                    wanted & {str(v) for (r, c), v in self._sheet_cells(name).items() if c == 1}:
                self.add("sheet-duplicated", sheet=name, detail=self.sheet)
                self.copies.add(name)
        return True

    def _sheet_cells(self, name: str) -> Cells:
        rows, cols = self.plan.window
        return self.book.cells(name, rows, cols)

    def _check_extents(self) -> None:
        rows, cols = self.plan.window
        last_row, last_col = self.book.extents.get(self.sheet, (0, 0))
        if last_row > rows or last_col > cols:
            where = cell_name(last_row, last_col) if last_row > rows else \
                f"column {cell_name(1, last_col)[:-1]}"
            self.add("content-outside-window", sheet=self.sheet,
                     detail=f"up to {where}, beyond {cell_name(rows, cols)}")

    def _columns_moved(self) -> bool:
        """Whether columns were inserted or deleted on the Scoring sheet (one issue says
        so, and no answer is read: each would be read one column off)."""
        move = column_move(self.cells, self._column_probes, show_full, COLUMN_SLACK)
        if move is None:
            return False
        # the hidden ids found columns off still prove whose rows these are
        ids = {str(v) for (_, c), v in self.cells.items() if c == move.now(1)}
        self.result.rows_proven |= bool(ids & set(self.plan.lines.values()))
        self.add(move.code, sheet=self.sheet, **move.fields())
        return True

    def _column_probes(self, first_card: bool) -> dict[int, list[Probe]]:
        """The pack's fixed text on the Scoring sheet, by column (:mod:`.columns`): of
        its first card only (``first_card``), or of all."""
        dims = {d.id: d for d in self.study.rubric.dimensions}
        cards = self.plan.pack.get("cards", [])[:1 if first_card else None]
        labels = [pair for card in cards for pair in
                  line_labels([a for r in card["rows"] for a in r["answers"].items()]
                              + list(card["case_answers"].items()), dims)]
        last = self.plan.anchors[0][1] if first_card and self.plan.anchors else None
        lines = {row: key for row, key in self.plan.lines.items()
                 if last is None or row <= last}
        return scoring_probes({**self.plan.pack, "cards": cards}, lines, labels)

    def _align_rows(self) -> bool:
        """Map each expected answer line to the row it is on now, by its hidden ids."""
        expected = self.plan.lines
        found = sorted((r, str(v)) for (r, c), v in self.cells.items() if c == 1)
        by_key_expected: dict[str, list[int]] = defaultdict(list)
        for row, key in sorted(expected.items()):
            by_key_expected[key].append(row)
        by_key_found: dict[str, list[int]] = defaultdict(list)
        for row, key in found:
            by_key_found[key].append(row)
        if found and not any(key in by_key_expected for _, key in found):
            self._foreign_rows({i for _, key in found for i in key.split()})
            return False
        self.result.rows_proven |= any(key in by_key_expected for _, key in found)
        edited = edited_ids(self, found)  # ids swapped in place: answers would cross cases
        if edited:
            report_edited_ids(self, edited)
            return False
        ok = True
        for row, key in found:
            if key not in by_key_expected:
                self.add("row-unknown", sheet=self.sheet, cell=f"A{row}", value=key,
                         detail=row)
                ok = False
        for key, rows in sorted(by_key_expected.items()):
            got = len(by_key_found.get(key, []))
            case = self.plan.cases[key]
            if 0 < got < len(rows):  # some of the case's lines, not the whole case
                self._lines_missing(key, rows, by_key_found[key])
                ok = False
            elif got != len(rows):
                self.add("row-missing" if got < len(rows) else "row-duplicated",
                         sheet=self.sheet, case=case,
                         what=f"The row for case {case} is missing")
                ok = False
        if not ok:
            return False
        for key, rows in by_key_expected.items():
            for want, have in zip(rows, by_key_found[key], strict=True):
                self.shift[want] = have - want
        self._in_place = not any(self.shift.values())
        self._report_moves(found)
        return True

    def _lines_missing(self, key: str, expected: list[int], found: list[int]) -> None:
        """Name the answer lines of case ``key`` that were deleted, by the labels of
        those left (the hidden id is the same on all of them); count them when the
        labels do not tell which."""
        case = self.plan.cases[key]
        card = self.plan.pack["cards"][self.plan.card_of[key]]
        names = line_names(card, {d.id: d for d in self.study.rubric.dimensions})
        label_at = self._label_at
        gone = missing_lines(expected, found, {r: n[0] for r, n in names.items()}, label_at)
        if gone is None:
            count = len(expected) - len(found)
            self.add("row-missing", sheet=self.sheet, case=case,
                     what=f"{count} of the {len(expected)} answer lines of case {case} "
                          f"{'is' if count == 1 else 'are'} missing")
            return
        for row in gone:
            _, name, dim_id = names.get(row, ("", "", ""))
            self.add("row-missing", sheet=self.sheet, case=case, dimension=dim_id,
                     what=f"The line for '{name}' in case {case}, row {row} of the "
                          "workbook as sent, is missing")

    def _label_at(self, row: int) -> str:
        """The label column's text on ``row`` of the Scoring sheet now."""
        found = self.cells.get((row, _column(L.LABEL_COLUMN)))
        return str(found if found is not None else "").strip()

    def _lines_in_place(self) -> bool:
        """Each answer line still carries its own label (column B) where its answers
        will be read.

        The hidden id in column A is one per case, so lines sorted or swapped within a
        case align as if in place, and their answers would be read under each other's
        questions (a KEEP answer as KNOWN); a row inserted inside a card moves the
        lines below it away from where they are read. The labels show both.
        """
        dims = {d.id: d for d in self.study.rubric.dimensions}
        cards = self.plan.pack.get("cards", [])
        for card, (first, last) in zip(cards, self.plan.anchors, strict=True):
            for anchor, answers in ((first, [a for r in card["rows"]
                                             for a in r["answers"].items()]),
                                    (last, list(card["case_answers"].items()))):
                shift = self.shift.get(anchor, 0)
                for row, label in sorted(line_labels(answers, dims)):  # name the first moved
                    found = self.cells.get((row + shift, _column(L.LABEL_COLUMN)))
                    text = str(found if found is not None else "").strip()
                    if text != label.strip():
                        # the lines were not found by their ids after all: no warning
                        # saying they were
                        self.result.issues = [i for i in self.result.issues
                                              if i.code not in _MOVED_WARNINGS]
                        self.add("answer-line-moved", sheet=self.sheet,
                                 cell=cell_name(row + shift, _column(L.LABEL_COLUMN)),
                                 case=L.case_name(card), detail=label, value=found,
                                 what=f"now says '{show_value(text)}'" if text
                                 else "is empty")
                        return False
        return True

    def _foreign_rows(self, ids: set[str]) -> None:
        """No answer line carries this pack's row ids: say whose they are, if anyone's.

        Row ids are keyed per pack (:func:`~sheetflow.workbook.layout.keyed_row_id`),
        so rows copied from another rater's workbook name that rater whatever the
        identity stores say, and rows edited to match no pack match no one.
        """
        for other in self.job.manifest.packs():  # rare: only for a forged or copied file
            if other["identity"]["pack_id"] != self.head.pack_id and \
                    ids & {r[0] for r in row_table(other)}:
                self.add("rows-from-other-rater", sheet=self.sheet,
                         **pack_names(self.head, other["rater_id"], other["sitting"]))
                self.result.rows_of = other["identity"]["pack_id"]
                return
        self.add("rows-not-this-rater", sheet=self.sheet)
        self.result.rows_of = ""

    def _report_moves(self, found: list[tuple[int, str]]) -> None:
        if all(v == 0 for v in self.shift.values()):
            return
        order_expected = [key for _, key in sorted(self.plan.lines.items())]
        order_found = [key for _, key in found]
        code = "row-inserted" if order_found == order_expected else "rows-reordered"
        self.add(code, sheet=self.sheet)

    def moved(self, ref: str, anchor_row: int) -> tuple[str, Any]:
        """Where cell ``ref`` is now, moved as the answer line ``anchor_row`` moved,
        and its value there."""
        if self._in_place:  # no answer line moved (the usual return): no arithmetic
            place = self.plan.positions.get(ref)
            if place is not None:
                return ref, self.cells.get(place)
        row, col = self.plan.position(ref)
        shift = self.shift.get(anchor_row, 0)
        where = ref if not shift else cell_name(row + shift, col)
        self.read_places.add((row + shift, col))
        return where, self.cells.get((row + shift, col))

    def value_at(self, ref: str) -> Any:
        place = self.plan.position(ref)
        if not self._in_place:
            self.read_places.add(place)
        return self.cells.get(place)

    def quoted(self, ref: str, raw: Any) -> str:
        """Cell ``ref``'s value as a message quotes it: a number formatted as a
        percentage as the rater sees it (3% for the 0.03 stored), a date or time as
        it shows (2026-01-05, 12:30), else as stored."""
        if isinstance(raw, dt.date | dt.time | dt.timedelta):
            return date_text(raw)
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            shown = percent_text(raw, self.book.number_format(self.sheet, ref))
            if shown is not None:
                return shown
            if abs(raw) >= _GENERAL_LIMIT:  # as a General cell shows it: 1E+308, not
                return f"{float(raw):G}"  # 309 digits cut short
        return raw_text(raw)


_GENERAL_LIMIT = 1e11  # from here on Excel's General format shows a number as 1E+11
_MOVED_WARNINGS = frozenset({"row-inserted", "rows-reordered"})
