"""Check one returned workbook against its pack; runs inside a sandbox child.

:func:`check_file` is the sandbox target of :func:`sheetflow.collect.collect`. In the
child it inspects and opens the file (:func:`~sheetflow.workbook.reader.open_book`),
reads the three identity stores, and for each pack the stores name (normally one)
decodes that pack's manifest entry and checks the workbook against it: the row
table, the Scoring sheet, hidden row ids, locked text (hashed here), every answer,
batch times, derived points and totals. What goes back to the parent is small: the
identity stores, the issues, counts, the self-check input, and the rating rows with
their CSV lines, never the text of the workbook. Which pack the file really belongs
to, duplicates, and the outputs are the parent's business.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import pickle
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Any

from .manifest import Manifest, PackHead
from .rubric import Dimension, Total, answer_required, total_bounds
from .study import Study, load_study
from .validate import (
    ERROR,
    Issue,
    SelfCheckInput,
    check_batch_times,
    check_word_count,
    issue,
    show_value,
)
from .values import Formula, ParsedValue, is_blank, parse_confidence, parse_time, parse_value
from .workbook import layout as L
from .workbook.reader import Book, Cells, open_book
from .workbook.safety import Limits, Problem, column_number

ROW_SLACK, COLUMN_SLACK = 40, 4
RATING_COLUMNS = ("study_id", "rater_id", "sitting", "case_id", "row_id", "label",
                  "dimension", "field", "value", "raw", "confidence", "sheet", "cell",
                  "file", "source_sha256")
ROW_FIELDS = ("case_id", "row_id", "label", "dimension", "field", "value", "raw",
              "confidence", "cell")
"""The columns that vary within one file; the rest are the same for all its rows."""
_SKIP_SHEETS = (L.IDENTITY_SHEET, L.INSTRUCTIONS_SHEET, L.LISTS_SHEET)
_SHIFT_SPAN = 64  # inserted rows searched for a card's moved locked text
_SHIFT_TRIES = 64  # most per-chunk shift combinations tried


@dataclass(frozen=True)
class FileJob:
    """One returned file to check in a child.

    ``name`` and ``sha256`` are as the parent knows them (issues and rows carry
    them); ``csv`` says whether to format the rating rows as CSV lines too.
    """

    path: str
    name: str
    sha256: str
    study_dir: str
    manifest: Manifest
    limits: Limits
    csv: bool = True


@dataclass
class RatingBlock:
    """One file's rating rows, sorted.

    Every row shares the columns stored once here; ``rows`` holds the others, in
    the order of :data:`ROW_FIELDS`. ``sheet`` is filled in only on rows with a cell.
    """

    study_id: str
    rater_id: str
    sitting: str
    sheet: str
    file: str
    source_sha256: str
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def packed(self, with_csv: bool) -> PackedBlock:
        """The block as bytes for the parent's spool (pickled once, here)."""
        data = pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        return PackedBlock(len(self.rows), csv_lines(self) if with_csv else b"", data)

    def dicts(self) -> list[dict[str, str]]:
        """The rows as full dicts keyed by :data:`RATING_COLUMNS`."""
        out = []
        for row in self.rows:
            item = dict(zip(ROW_FIELDS, row, strict=True))
            out.append({"study_id": self.study_id, "rater_id": self.rater_id,
                        "sitting": self.sitting, **item,
                        "sheet": self.sheet if item["cell"] else "",
                        "file": self.file, "source_sha256": self.source_sha256})
        return [{c: d[c] for c in RATING_COLUMNS} for d in out]


@dataclass(frozen=True)
class PackedBlock:
    """A :class:`RatingBlock` ready to spool: row count, CSV lines, pickled rows."""

    count: int
    csv: bytes
    data: bytes


@dataclass
class PackCheck:
    """The outcome of checking a file against one pack."""

    issues: list[Issue] = field(default_factory=list)
    answered: int = 0
    required: int = 0
    self_check: SelfCheckInput | None = None
    block: PackedBlock | None = None

    @property
    def failed(self) -> bool:
        """Whether any issue is an error."""
        return any(i.severity == ERROR for i in self.issues)


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


def check_file(job: FileJob) -> FileResult:
    """Inspect, read and check one returned file (the sandbox target).

    Parameters
    ----------
    job : FileJob

    Returns
    -------
    FileResult
    """
    book = open_book(job.path, job.limits)
    if isinstance(book, Problem):
        return FileResult(problem=book)
    try:
        stores = identity_stores(book, job.limits)
        heads = job.manifest.by_id
        named = {values.get("pack_id", "") for values in stores.values()}
        checks = {}
        for pack_id in sorted(p for p in named if p in heads):
            checker = _FileChecker(_study(job.study_dir), job, book, heads[pack_id])
            checks[pack_id] = checker.check()
        return FileResult(None, stores, checks)
    finally:
        book.close()


@lru_cache(maxsize=2)
def _study(study_dir: str) -> Study:
    """The study, loaded once per child."""
    return load_study(study_dir)


def identity_sheet(book: Book, limits: Limits) -> Cells:
    """The identity sheet's four columns, down to its last row with content."""
    return book.cells(L.IDENTITY_SHEET, _identity_rows(book, limits), 4)


def _identity_rows(book: Book, limits: Limits) -> int:
    return min(book.extents.get(L.IDENTITY_SHEET, (0, 0))[0], limits.max_rows)


def identity_stores(book: Book, limits: Limits) -> dict[str, dict[str, str]]:
    """Identity key -> value from each of the three stores (empty dict when absent)."""
    props = {k: book.properties[L.identity_property(k)] for k in L.IDENTITY_KEYS
             if L.identity_property(k) in book.properties}
    names = {k: book.names[L.identity_name(k)] for k in L.IDENTITY_KEYS
             if L.identity_name(k) in book.names}
    sheet: dict[str, str] = {}
    cells = identity_sheet(book, limits)
    for r in range(1, len(L.IDENTITY_KEYS) + 1):
        key, value = cells.get((r, 1)), cells.get((r, 2))
        if key in L.IDENTITY_KEYS and value is not None:
            sheet[str(key)] = show_value(value)
    return {"document properties": props, "defined names": names,
            f"sheet {L.IDENTITY_SHEET}": sheet}


# --------------------------------------------------------------------------- addresses


def split_cell(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 address."""
    found = _A1.fullmatch(ref)
    if found is None:
        raise ValueError(f"not a cell address: {ref!r}")
    return int(found[2]), _column(found[1])


_A1 = re.compile(r"([A-Za-z]{1,3})([0-9]+)")
_column = lru_cache(maxsize=1024)(column_number)


def cell_name(row: int, col: int) -> str:
    """The A1 address of (row, column)."""
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"


# --------------------------------------------------------------------------- the pack


class _Plan:
    """Where things are in a fresh copy of one pack, worked out once."""

    def __init__(self, pack: dict[str, Any]):
        self.pack = pack
        self.positions: dict[str, tuple[int, int]] = {}
        self.window = self._window()
        self.row_table = row_table(pack)
        self.lines: dict[int, str] = {}  # row -> hidden id text of each answer line
        self.anchors: list[tuple[int, int]] = []  # per card: first, last answer line
        for card in pack.get("cards", []):
            key = " ".join(r["row_id"] for r in card["rows"])
            rows = sorted({self.positions[ref][0] for r in card["rows"]
                           for answer in r["answers"].values() for ref in _refs(answer)})
            for row in rows:
                self.lines[row] = key
            self.anchors.append((rows[0], rows[-1]) if rows else (0, 0))

    def _window(self) -> tuple[int, int]:
        """Rows and columns of the Scoring sheet this pack uses, plus slack."""
        pack = self.pack
        refs = [ref for batch in pack.get("batches", []) for ref in
                (batch["start"]["cell"], batch["end"]["cell"])]
        for answer in pack.get("study_answers", {}).values():
            refs += _refs(answer)
        for card in pack.get("cards", []):
            for answer in card["case_answers"].values():
                refs += _refs(answer)
            for row in card["rows"]:
                for answer in row["answers"].values():
                    refs += _refs(answer)
            for locked in card["locked"] + [x for r in card["rows"] for x in r["locked"]]:
                refs += locked["cells"]
        last_row = last_col = 1
        for ref in refs:
            row, col = self.positions[ref] = split_cell(ref)
            last_row, last_col = max(last_row, row), max(last_col, col)
        return last_row + ROW_SLACK, last_col + COLUMN_SLACK

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


def row_table(pack: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The row table a fresh pack carries on its identity sheet."""
    return [(r["row_id"], r["item_id"], r["label"] or "", r["locked_sha256"])
            for card in pack.get("cards", []) for r in card["rows"]]


# --------------------------------------------------------------------------- one file


class _FileChecker:
    """Checks one file against one manifest pack and reads its answers."""

    def __init__(self, study: Study, job: FileJob, book: Book, head: PackHead):
        self.study = study
        self.job = job
        self.book = book
        self.head = head
        self.result = PackCheck()
        self.where = {"file": job.name, "rater": head.rater_id}
        self.sheet = L.SCORING_SHEET
        self.cells: Cells = {}
        self.shift: dict[int, int] = {}

    def check(self) -> PackCheck:
        self.plan = _Plan(self.job.manifest.pack(self.head))
        if self._check_row_table() and self._find_scoring_sheet():
            self._check_extents()
            if self._align_rows():
                self._check_locked()
                _AnswerReader(self).read_all()
        if self.result.failed:
            self.result.block = None  # a file with an error contributes no ratings
        return self.result

    def add(self, code: str, **fields: Any) -> None:
        self.result.issues.append(issue(code, **self.where, **fields))

    # -- structure -----------------------------------------------------------------------

    def _check_row_table(self) -> bool:
        cells = identity_sheet(self.book, self.job.limits)
        if not cells:
            return True  # identity sheet deleted: the other stores identified the file
        found = []
        for r in range(L.IDENTITY_ROW_TABLE_FIRST, _identity_rows(self.book, self.job.limits) + 1):
            values = tuple(show_value(cells.get((r, c))) for c in range(1, 5))
            if any(values):
                found.append(values)
        if found == self.plan.row_table:
            return True
        for other in self.job.manifest.packs():  # rare: only for an edited row table
            if other["identity"]["pack_id"] != self.head.pack_id and found == row_table(other):
                self.add("rows-from-other-rater", sheet=L.IDENTITY_SHEET,
                         detail=other["rater_id"])
                return False
        return True  # edited row table: the Scoring sheet checks below will say what

    def _find_scoring_sheet(self) -> bool:
        rows, cols = self.plan.window
        names = [name for name, _ in self.book.sheets]
        if L.SCORING_SHEET in names:
            self.cells = self.book.cells(L.SCORING_SHEET, rows, cols)
            return True
        wanted = set(self.plan.lines.values())
        for name in names:
            if name in _SKIP_SHEETS:
                continue
            cells = self.book.cells(name, rows, cols)
            ids = {str(v) for (r, c), v in cells.items() if c == 1}
            if ids and ids >= wanted:
                self.sheet, self.cells = name, cells
                self.add("sheet-renamed", sheet=L.SCORING_SHEET, detail=name)
                return True
        self.add("sheet-missing", sheet=L.SCORING_SHEET)
        return False

    def _check_extents(self) -> None:
        rows, cols = self.plan.window
        last_row, last_col = self.book.extents.get(self.sheet, (0, 0))
        if last_row > rows or last_col > cols:
            where = cell_name(last_row, last_col) if last_row > rows else \
                f"column {cell_name(1, last_col)[:-1]}"
            self.add("content-outside-window", sheet=self.sheet,
                     detail=f"up to {where}, beyond {cell_name(rows, cols)}")

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
        ok = True
        for row, key in found:
            if key not in by_key_expected:
                self.add("row-unknown", sheet=self.sheet, cell=f"A{row}", value=key,
                         detail=row)
                ok = False
        for key, rows in sorted(by_key_expected.items()):
            got = len(by_key_found.get(key, []))
            case = key.split()[0].split("/")[0]
            if got != len(rows):
                self.add("row-missing" if got < len(rows) else "row-duplicated",
                         sheet=self.sheet, case=case)
                ok = False
        if not ok:
            return False
        for key, rows in by_key_expected.items():
            for want, have in zip(rows, by_key_found[key], strict=True):
                self.shift[want] = have - want
        self._report_moves(found)
        return True

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
        row, col = self.plan.position(ref)
        shift = self.shift.get(anchor_row, 0)
        where = ref if not shift else cell_name(row + shift, col)
        return where, self.cells.get((row + shift, col))

    def value_at(self, ref: str) -> Any:
        return self.cells.get(self.plan.position(ref))

    # -- locked text ---------------------------------------------------------------------

    def _check_locked(self) -> None:
        previous = 0  # shift of the line above the card's locked text
        for card, (first, last) in zip(self.plan.pack.get("cards", []), self.plan.anchors,
                                       strict=True):
            below = self.shift.get(first, 0)
            for locked in card["locked"] + [x for r in card["rows"] for x in r["locked"]]:
                if not self._locked_found(locked, below, previous):
                    cell, _ = self.moved(locked["cells"][0], first)
                    self.add("locked-text-changed", sheet=self.sheet, cell=cell,
                             case=card["item_id"])
            previous = self.shift.get(last, 0)

    def _locked_found(self, locked: dict[str, Any], below: int, above: int) -> bool:
        """Whether the field's text is intact, wherever inserted rows moved its cells.

        The text lies between the previous card's last answer line (moved by
        ``above``) and this card's first (moved by ``below``); rows inserted in between
        move each chunk by an amount between the two, never backwards. Only a few
        such placements are tried: sorted rows (shifts of hundreds) are not searched.
        """
        cells = [self.plan.position(ref) for ref in locked["cells"]]
        for shift in dict.fromkeys((below, above)):
            if self._digest(cells, [shift] * len(cells)) == locked["sha256"]:
                return True
        low, high = min(above, below), max(above, below)
        if high - low > _SHIFT_SPAN:
            return False
        options = range(low, high + 1)
        if len(options) ** len(cells) > _SHIFT_TRIES:
            tries = ([d] * len(cells) for d in options)
        else:
            tries = (list(c) for c in product(options, repeat=len(cells))
                     if list(c) == sorted(c))
        return any(self._digest(cells, shifts) == locked["sha256"] for shifts in tries)

    def _digest(self, cells: list[tuple[int, int]], shifts: list[int]) -> str:
        text = "".join(show_full(self.cells.get((r + d, c)))
                       for (r, c), d in zip(cells, shifts, strict=True))
        return L.text_sha256(text)


def show_full(value: Any) -> str:
    """A locked cell's text exactly (numbers written as text stay text)."""
    if value is None:
        return ""
    if isinstance(value, Formula):
        return "=" + value.text
    return show_value(value) if not isinstance(value, str) else value


# --------------------------------------------------------------------------- answers


class _AnswerReader:
    """Parses every answer cell of one file into rating rows and issues."""

    def __init__(self, checker: _FileChecker):
        self.k = checker
        self.study = checker.study
        self.result = checker.result
        self.dims = {d.id: d for d in self.study.rubric.dimensions}
        self.points: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        self.confidences: list[str] = []
        self.directions: list[tuple[str, str]] = []
        self.direction_cells: dict[str, tuple[str, str]] = {}
        self.last_line = max(checker.plan.lines, default=0)
        self.rows: list[tuple[str, ...]] = []

    def read_all(self) -> None:
        pack = self.k.plan.pack
        for card, (first, last) in zip(pack.get("cards", []), self.k.plan.anchors,
                                       strict=True):
            for row in card["rows"]:
                for dim_id, answer in row["answers"].items():
                    self._answer(dim_id, answer, card["item_id"], row, first)
            for dim_id, answer in card["case_answers"].items():
                self._answer(dim_id, answer, card["item_id"], None, last)
        for dim_id, answer in pack.get("study_answers", {}).items():
            self._answer(dim_id, answer, "", None, self.last_line)
        for batch in pack.get("batches", []):
            self._batch_times(batch)
        self._totals()
        self.result.self_check = self._self_check_input()
        self.result.block = self._block()

    # -- one answer ---------------------------------------------------------------------

    def _answer(self, dim_id: str, answer: dict[str, Any], case: str,
                row: dict[str, Any] | None, anchor: int) -> None:
        dim = self.dims.get(dim_id)
        if dim is None:
            return
        label = (row or {}).get("label") or ""
        row_id = (row or {}).get("row_id") or ""
        confidence = self._confidence(dim, answer, case, label, anchor)
        if dim.kind == "checklist":
            yes = 0
            complete = True
            for i, q in enumerate(answer["questions"], 1):
                parsed = self._cell(dim, q["cell"], case, label, anchor, f"q{i}", row_id,
                                    confidence, what=f"{dim.label}: {q['question']}")
                complete &= parsed.value is not None
                yes += parsed.value == "Yes"
            if complete:
                self._derived(dim, case, label, row_id, "points", yes)
            return
        parsed = self._cell(dim, answer["cell"], case, label, anchor, "value", row_id,
                            confidence, what=dim.label)
        if dim.kind == "count" and isinstance(parsed.value, int):
            self._derived(dim, case, label, row_id, "points",
                          dim.points_for_count(parsed.value))
        elif dim.kind in ("scale", "number") and isinstance(parsed.value, int):
            self.points[(case, label)][dim.id] = float(parsed.value)
        if dim.kind == "preference" and parsed.value is not None:
            self.directions.append((case, parsed.value))

    def _cell(self, dim: Dimension, ref: str, case: str, label: str, anchor: int,
              part: str, row_id: str, confidence: str, what: str) -> ParsedValue:
        moved, raw = self.k.moved(ref, anchor)
        parsed = parse_value(dim, raw)
        if parsed.blank and dim.kind == "binary" and dim.blank_means:
            parsed = ParsedValue(dim.blank_means)
        self._count(answer_required(dim, part), parsed.value)
        if parsed.code or (parsed.blank and dim.required):
            where = self._where(moved, case, label, dim)
            what = _describe(what, case, label)
            if parsed.code:
                self.k.add(parsed.code, **where, value=raw_text(raw), what=what,
                           expected=parsed.expected, accepted=parsed.value)
            else:
                self.k.add("answer-missing", **where, what=what,
                           expected=parsed.expected or _expected(dim))
        if dim.kind == "text" and isinstance(parsed.value, str):
            self._word_range(dim, parsed.value, moved, case, label)
        if dim.kind == "preference":
            self.direction_cells[case] = (self.k.sheet, moved)
        self._emit(case, label, row_id, dim.id, part, parsed.value, raw, confidence, moved)
        return parsed

    def _count(self, required: bool, value: Any) -> None:
        """Count one answer cell in the completeness, as the pack's progress line does."""
        if required:
            self.result.required += 1
            self.result.answered += value is not None

    def _where(self, cell: str, case: str, label: str, dim: Dimension) -> dict[str, str]:
        return {"sheet": self.k.sheet, "cell": cell, "case": case, "label": label,
                "dimension": dim.id}

    def _word_range(self, dim: Dimension, text: str, cell: str, case: str,
                    label: str) -> None:
        outside = check_word_count(text, dim.min_words, dim.max_words)
        if outside is not None:
            self.k.add("text-word-count", **self._where(cell, case, label, dim),
                       value=outside[0], what=_describe(dim.label, case, label),
                       expected=outside[1])

    def _confidence(self, dim: Dimension, answer: dict[str, Any], case: str, label: str,
                    anchor: int) -> str:
        conf = answer.get("confidence")
        if conf is None:
            return ""
        moved, raw = self.k.moved(conf["cell"], anchor)
        parsed = parse_confidence(raw)
        self._count(answer_required(dim, "confidence"), parsed.value)
        if parsed.code:
            self.k.add(parsed.code, **self._where(moved, case, label, dim),
                       value=raw_text(raw),
                       what=_describe(f"Confidence for {dim.label}", case, label),
                       expected=parsed.expected, accepted=parsed.value)
        elif parsed.blank and dim.required and not self._answer_blank(dim, answer, anchor):
            self.k.add("confidence-missing", **self._where(moved, case, label, dim),
                       what=_describe(dim.label, case, label))
        if parsed.value:
            self.confidences.append(parsed.value)
        return parsed.value or ""

    def _answer_blank(self, dim: Dimension, answer: dict[str, Any], anchor: int) -> bool:
        refs = [q["cell"] for q in answer["questions"]] if dim.kind == "checklist" \
            else [answer["cell"]]
        return all(is_blank(self.k.moved(r, anchor)[1]) for r in refs)

    def _batch_times(self, batch: dict[str, Any]) -> None:
        raws = {}
        for part in ("start", "end"):
            ref = batch[part]["cell"]
            raw = raws[part] = self.k.value_at(ref)
            value = "" if raw is None else show_value(raw)
            self._count(answer_required(None, part), parse_time(raw).value)
            self._emit("", "", "", "batch", f"{batch['batch']}:{part}", value or None, raw,
                       "", ref)
        for found in check_batch_times(batch["batch"], raws["start"], raws["end"]):
            ref = batch[found.part]["cell"]
            self.k.add(found.code, sheet=self.k.sheet, cell=ref, dimension="batch",
                       value=raw_text(raws[found.part]), detail=found.detail)

    # -- derived ------------------------------------------------------------------------

    def _derived(self, dim: Dimension, case: str, label: str, row_id: str, part: str,
                 value: float) -> None:
        self.points[(case, label)][dim.id] = float(value)
        self._emit(case, label, row_id, dim.id, part, value, None, "", "")

    def _totals(self) -> None:
        for (case, label), pts in sorted(self.points.items()):
            for total in self.study.rubric.totals:
                if all(d in pts for d in total.of):
                    values = [pts[d] for d in total.of]
                    value = sum(values) / len(values) if total.method == "mean" else sum(values)
                    self._emit(case, label, "", total.id, "total", value, None, "", "")

    def _emit(self, case: str, label: str, row_id: str, dim_id: str, part: str, value: Any,
              raw: Any, confidence: str, cell: str) -> None:
        self.rows.append((case, row_id, label, dim_id, part, value_text(value), raw_text(raw),
                          confidence, cell))

    def _block(self) -> PackedBlock:
        head, job = self.k.head, self.k.job
        # the table is sorted by rater, sitting, case, label, dimension, field, file;
        # within one file the first two and the last are the same for every row
        rows = sorted(self.rows, key=lambda r: (r[0], r[2], r[3], r[4]))
        block = RatingBlock(self.study.id, head.rater_id, str(head.sitting), self.k.sheet,
                            job.name, job.sha256, rows)
        return block.packed(job.csv)

    # -- self-checks --------------------------------------------------------------------

    def _self_check_input(self) -> SelfCheckInput:
        study = self.study
        total = study.rubric.totals[0] if study.rubric.totals else None
        per_row = self._row_totals(total) if total else {}
        labels = tuple(study.design.labels) if study.design.paired else ("A", "B")
        pref = next((d for d in study.rubric.dimensions if d.kind == "preference"), None)
        directions = []
        for case, direction in self.directions:
            a, b = per_row.get((case, labels[0])), per_row.get((case, labels[-1]))
            margin = a - b if a is not None and b is not None else None
            directions.append((case, direction, margin))
        return SelfCheckInput(
            totals=[per_row[k] for k in sorted(per_row)],
            total_range=_total_range(total, study) if total else None,
            confidences=self.confidences,
            directions=directions,
            direction_cells=self.direction_cells,
            extreme_low_max=study.plan.params.get("extreme_low_max"),
            extreme_high_min=study.plan.params.get("extreme_high_min"),
            confidence_target=study.plan.targets.get("confidence_medium_high"),
            labels=(labels[0], labels[-1]),
            preference_choices=tuple(pref.choices) if pref else ("A>B", "B>A", "Tied"),
        )

    def _row_totals(self, total: Total) -> dict[tuple[str, str], float]:
        out = {}
        for key, pts in self.points.items():
            if all(d in pts for d in total.of):
                values = [pts[d] for d in total.of]
                out[key] = sum(values) / len(values) if total.method == "mean" else sum(values)
        return out


def _total_range(total: Total, study: Study) -> tuple[float, float]:
    lo, hi = total_bounds(total, study.rubric)
    return (total.minimum if total.minimum is not None else lo,
            total.maximum if total.maximum is not None else hi)


def _describe(what: str, case: str, label: str) -> str:
    if case and label:
        return f"{what} for case {case}, response {label}"
    if case:
        return f"{what} for case {case}"
    return what


def _expected(dim: Dimension) -> str:
    from .values import describe_domain

    return describe_domain(dim)


def value_text(value: Any) -> str:
    """A parsed value in full (numbers without a trailing '.0')."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def raw_text(raw: Any) -> str:
    """A raw cell in full, as the ratings table shows it."""
    if raw is None:
        return ""
    if isinstance(raw, Formula):
        return "=" + raw.text
    if isinstance(raw, dt.date | dt.time | dt.datetime):
        return raw.isoformat()
    return value_text(raw)


# --------------------------------------------------------------------------- CSV


_FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")


def neutralise(text: str) -> str:
    """Prefix ``'`` to text that a spreadsheet would run as a formula (OWASP)."""
    if text and text[0] in _FORMULA_STARTS:
        return "'" + text
    return text


def csv_lines(block: RatingBlock) -> bytes:
    """A block's rows as CSV lines: all fields quoted, formula starts neutralised.

    The same bytes as :func:`csv.writer` with ``QUOTE_ALL`` and ``\\r\\n`` line ends,
    built by joining (twice as fast): the constant columns are quoted once, and a
    row's quotes are doubled only when one of its fields holds any. Numbers such as
    -1 in the value and raw columns are prefixed too: a spreadsheet then shows them
    as text, which is safe; the analysis removes the prefix.
    """
    starts = _FORMULA_STARTS
    head = ",".join(_quoted(neutralise(x))
                    for x in (block.study_id, block.rater_id, block.sitting)) + ',"'
    tail = '",' + ",".join(_quoted(neutralise(x))
                           for x in (block.file, block.source_sha256)) + "\r\n"
    sheet = neutralise(block.sheet)
    separators = 2 * len(ROW_FIELDS)  # the quotes '","' puts between the 10 fields
    lines = []
    for row in block.rows:
        fields = [("'" + x) if x and x[0] in starts else x for x in row]
        fields.insert(8, sheet if fields[8] else "")
        line = '","'.join(fields)
        if line.count('"') != separators:
            line = '","'.join(x.replace('"', '""') for x in fields)
        lines.append(head + line + tail)
    return "".join(lines).encode("utf-8")


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def csv_header() -> bytes:
    """The header line of ``ratings.csv``."""
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerow(RATING_COLUMNS)
    return buf.getvalue().encode("utf-8")
