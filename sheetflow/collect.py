"""Collect returned rater workbooks: identify, validate, and build the ratings table.

:func:`collect` reads every returned file safely (:mod:`sheetflow.workbook.reader`),
identifies it by the identity embedded in it (never by its name), checks it against
the blinded manifest ``packs/manifest.json`` (the sealed key is never opened),
reports every problem at once as :class:`~sheetflow.validate.Issue` objects, and
recomputes derived points and totals. A file with an error contributes no ratings;
the others still do. Returned files are only ever opened for reading.

Duplicate returns
-----------------
- The same bytes given twice (same sha256): the first by file name is used, each
  other copy gets the warning ``duplicate-file``.
- Two different files for one pack (same rater and sitting): the error
  ``duplicate-rater`` on each, and neither contributes. The coordinator removes the
  wrong one and runs collect again. sheetflow never guesses which one is newer:
  save times inside a workbook are set by the rater's machine.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SheetflowError, UsageError
from .rubric import Dimension, Total, total_bounds
from .study import Study, load_study
from .validate import (
    ERROR,
    WARNING,
    FileStatus,
    Issue,
    SelfCheckInput,
    ValidationReport,
    check_word_count,
    issue,
    self_checks,
    show_value,
    sort_issues,
)
from .values import Formula, ParsedValue, is_blank, parse_confidence, parse_value
from .workbook import layout as L
from .workbook.reader import RawBook, ReadJob, file_sha256, read_workbooks
from .workbook.safety import Limits, column_number

RATING_COLUMNS = ("study_id", "rater_id", "sitting", "case_id", "row_id", "label",
                  "dimension", "field", "value", "raw", "confidence", "sheet", "cell",
                  "file", "source_sha256")
RETURNS_DIR, OUT_DIR = "returns", "out"
ROW_SLACK, COLUMN_SLACK = 40, 4
_SKIP_PREFIXES = (".", "~$")


@dataclass
class Collection:
    """The result of :func:`collect`.

    Attributes
    ----------
    ratings : list of dict
        The tidy ratings table (columns :data:`RATING_COLUMNS`), sorted.
    report : ValidationReport
        Every file's status and every issue.
    outputs : dict
        Output name -> path written ("" when not written).
    """

    ratings: list[dict[str, str]]
    report: ValidationReport
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        """True when no file has an error."""
        return self.report.valid

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: the report plus the number of rating rows."""
        return {**self.report.to_dict(), "ratings": len(self.ratings),
                "outputs": dict(sorted(self.outputs.items()))}


def collect(study_dir: str | Path, paths: list[str | Path] | None = None, *,
            write: bool = True, limits: Limits | None = None,
            workers: int | None = None) -> Collection:
    """Collect returned workbooks of the study in ``study_dir``.

    Parameters
    ----------
    study_dir : str or Path
        The study folder (with ``packs/manifest.json`` from ``generate``).
    paths : list of str or Path, optional
        Files or folders to collect (default: ``study_dir/returns``). Folders are
        read non-recursively; hidden files and Office lock files are skipped.
    write : bool
        Whether to write ``out/ratings.csv`` and ``out/validation.xlsx``.
    limits : Limits, optional
        Safety limits for reading (sizes, memory, time).
    workers : int, optional
        Reader child processes.

    Returns
    -------
    Collection

    Raises
    ------
    SheetflowError
        The study or its manifest cannot be loaded (not a data problem).
    """
    root = Path(study_dir)
    study = load_study(root)
    manifest = load_manifest(root)
    files = find_files(root, paths)
    collector = _Collector(study, manifest)
    result = collector.run(files, limits, workers)
    if write:
        result.outputs = write_outputs(root / OUT_DIR, result)
    return result


def load_manifest(root: Path) -> dict[str, Any]:
    """The blinded manifest ``packs/manifest.json`` (UsageError when missing)."""
    path = root / L.PACKS_DIR / L.MANIFEST_FILE
    if not path.is_file():
        raise UsageError(f"{path}: no manifest; run 'sheetflow generate {root}' first")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SheetflowError(f"{path}: the manifest is not valid JSON ({exc})") from None


def find_files(root: Path, paths: list[str | Path] | None) -> list[Path]:
    """The files to collect, sorted by name (then path) for a stable order."""
    targets = [Path(p) for p in paths] if paths else [root / RETURNS_DIR]
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            found += [p for p in target.iterdir()
                      if p.is_file() and not p.name.startswith(_SKIP_PREFIXES)]
        elif target.is_file():
            found.append(target)
        else:
            raise UsageError(f"{target}: no such file or folder")
    return sorted(set(found), key=lambda p: (p.name, str(p)))


# --------------------------------------------------------------------------- collector


@dataclass
class _FileWork:
    """One input file on its way through the collector."""

    path: Path
    sha256: str
    issues: list[Issue] = field(default_factory=list)
    pack: dict[str, Any] | None = None
    book: RawBook | None = None
    duplicate_of: str = ""
    ratings: list[dict[str, str]] = field(default_factory=list)
    answered: int = 0
    required: int = 0
    self_check: SelfCheckInput | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def rater(self) -> str:
        return self.pack["rater_id"] if self.pack else ""

    @property
    def failed(self) -> bool:
        return any(i.severity == ERROR for i in self.issues)


class _Collector:
    """Runs the checks for one study over a list of files."""

    def __init__(self, study: Study, manifest: dict[str, Any]):
        self.study = study
        self.manifest = manifest
        self.packs = {p["identity"]["pack_id"]: p for p in manifest.get("packs", [])}
        self.window = _scoring_window(manifest)
        self.id_window = (L.IDENTITY_ROW_TABLE_FIRST + max(
            (len(_row_table(p)) for p in self.packs.values()), default=0) + ROW_SLACK, 4)

    def run(self, files: list[Path], limits: Limits | None,
            workers: int | None) -> Collection:
        works = [_FileWork(p, file_sha256(p)) for p in files]
        first_by_hash: dict[str, _FileWork] = {}
        for work in works:
            if work.sha256 in first_by_hash:
                work.duplicate_of = first_by_hash[work.sha256].name
            else:
                first_by_hash[work.sha256] = work
        unique = [w for w in works if not w.duplicate_of]
        jobs = [self._job(w.path) for w in unique]
        for work, result in zip(unique, read_workbooks(jobs, limits, workers), strict=True):
            if result.problem is not None:
                work.issues.append(issue(result.problem.code, file=work.name,
                                         detail=result.problem.detail))
            else:
                work.book = result.book
                self._identify(work)
        for work in unique:
            if work.pack is not None and work.book is not None and not work.failed:
                _FileChecker(self, work).check()
        self._duplicate_raters(unique)  # after the checks: report every problem at once
        for work in works:
            if work.duplicate_of:
                work.issues.append(issue("duplicate-file", file=work.name,
                                         detail=work.duplicate_of))
        return self._result(works)

    def _job(self, path: Path) -> ReadJob:
        windows = {L.SCORING_SHEET: self.window, L.IDENTITY_SHEET: self.id_window,
                   L.INSTRUCTIONS_SHEET: (0, 0), L.LISTS_SHEET: (0, 0)}
        return ReadJob(str(path), windows, default_window=self.window)

    # -- identity ------------------------------------------------------------------------

    def _identify(self, work: _FileWork) -> None:
        book, name = work.book, work.name
        assert book is not None
        stores = _identity_stores(book)
        present = {store: values for store, values in stores.items() if values}
        if not present:
            work.issues.append(issue("identity-missing", file=name))
            return
        identity: dict[str, str] = {}
        for key in L.IDENTITY_KEYS:
            seen = {store: values[key] for store, values in present.items() if key in values}
            if len(set(seen.values())) > 1:
                detail = "; ".join(f"{store} says {key}={v!r}" for store, v in sorted(seen.items()))
                work.issues.append(issue("identity-conflict", file=name, detail=detail))
                return
            if seen:
                identity[key] = next(iter(seen.values()))
        missing = sorted(set(stores) - set(present))
        if missing:
            work.issues.append(issue("identity-partial", file=name,
                                     detail="no " + ", no ".join(missing)))
        self._match_identity(work, identity)

    def _match_identity(self, work: _FileWork, identity: dict[str, str]) -> None:
        name, m = work.name, self.manifest
        rater = identity.get("rater_id", "")
        checks = [
            ("schema-unsupported", identity.get("schema_version"), m.get("schema_version")),
            ("wrong-study", identity.get("study_id"), m.get("study_id")),
            ("spec-hash-mismatch", identity.get("spec_hash"), m.get("spec_hash")),
        ]
        for code, found, wanted in checks:
            if found != wanted:
                detail = show_value(found) if code != "spec-hash-mismatch" else (
                    f"spec hash {str(found)[:12]}..., current {str(wanted)[:12]}...")
                work.issues.append(issue(code, file=name, rater=rater,
                                         detail=detail or "(none)"))
                return
        pack = self.packs.get(identity.get("pack_id", ""))
        if pack is None or pack["rater_id"] != rater:
            work.issues.append(issue("unknown-rater", file=name, rater=rater,
                                     detail=rater or "(none)"))
            return
        work.pack = pack
        self._check_file_name(work)

    def _check_file_name(self, work: _FileWork) -> None:
        for other in self.packs.values():
            if other is not work.pack and other["file"] == work.name:
                work.issues.append(issue("file-name-mismatch", file=work.name,
                                         rater=work.rater, detail=other["rater_id"]))

    def _duplicate_raters(self, works: list[_FileWork]) -> None:
        by_pack: dict[str, list[_FileWork]] = defaultdict(list)
        for work in works:
            if work.pack is not None:
                by_pack[work.pack["identity"]["pack_id"]].append(work)
        for group in by_pack.values():
            if len(group) < 2:
                continue
            for work in group:
                others = ", ".join(w.name for w in group if w is not work)
                work.issues.append(issue("duplicate-rater", file=work.name, rater=work.rater,
                                         detail=f"also {others}"))

    # -- result --------------------------------------------------------------------------

    def _result(self, works: list[_FileWork]) -> Collection:
        ratings: list[dict[str, str]] = []
        statuses = []
        issues: list[Issue] = []
        for work in works:
            used = work.pack is not None and not work.failed and not work.duplicate_of
            if work.self_check is not None:
                work.issues += self_checks(work.self_check, file=work.name, rater=work.rater)
            if used:
                ratings += work.ratings
            issues += work.issues
            statuses.append(FileStatus(
                file=work.name, sha256=work.sha256, rater=work.rater, used=used,
                pack_id=work.pack["identity"]["pack_id"] if work.pack else "",
                errors=sum(i.severity == ERROR for i in work.issues),
                warnings=sum(i.severity == WARNING for i in work.issues),
                answered=work.answered, required=work.required))
        ratings.sort(key=_rating_key)
        report = ValidationReport(sorted(statuses, key=lambda s: (s.file, s.sha256)),
                                  sort_issues(issues))
        return Collection(ratings, report)


def _rating_key(row: dict[str, str]) -> tuple:
    return (row["rater_id"], row["sitting"], row["case_id"], row["label"], row["dimension"],
            row["field"], row["file"])


def _scoring_window(manifest: dict[str, Any]) -> tuple[int, int]:
    """Rows and columns of the Scoring sheet that any pack uses, plus slack."""
    last_row = last_col = 1
    for pack in manifest.get("packs", []):
        for ref in _all_cells(pack):
            row, col = split_cell(ref)
            last_row, last_col = max(last_row, row), max(last_col, col)
    return last_row + ROW_SLACK, last_col + COLUMN_SLACK


def _all_cells(pack: dict[str, Any]) -> list[str]:
    cells = [a["cell"] for a in L.iter_answer_cells(pack)]
    for card in pack.get("cards", []):
        for locked in card["locked"] + [x for r in card["rows"] for x in r["locked"]]:
            cells += locked["cells"]
    return cells


def _row_table(pack: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The row table a fresh pack carries on its identity sheet."""
    return [(r["row_id"], r["item_id"], r["label"] or "", r["locked_sha256"])
            for card in pack.get("cards", []) for r in card["rows"]]


def _identity_stores(book: RawBook) -> dict[str, dict[str, str]]:
    """Identity key -> value from each of the three stores (empty dict when absent)."""
    props = {k: book.properties[L.identity_property(k)] for k in L.IDENTITY_KEYS
             if L.identity_property(k) in book.properties}
    names = {k: book.names[L.identity_name(k)] for k in L.IDENTITY_KEYS
             if L.identity_name(k) in book.names}
    sheet: dict[str, str] = {}
    cells = book.cells.get(L.IDENTITY_SHEET, {})
    for r in range(1, len(L.IDENTITY_KEYS) + 1):
        key, value = cells.get((r, 1)), cells.get((r, 2))
        if key in L.IDENTITY_KEYS and value is not None:
            sheet[str(key)] = show_value(value)
    return {"document properties": props, "defined names": names,
            f"sheet {L.IDENTITY_SHEET}": sheet}


def split_cell(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 address."""
    letters = "".join(ch for ch in ref if ch.isalpha())
    return int(ref[len(letters):]), column_number(letters)


def cell_name(row: int, col: int) -> str:
    """The A1 address of (row, column)."""
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"


# --------------------------------------------------------------------------- one file


class _FileChecker:
    """Checks one identified file against its manifest pack and reads its answers."""

    def __init__(self, collector: _Collector, work: _FileWork):
        self.c = collector
        self.study = collector.study
        self.work = work
        self.pack = work.pack or {}
        self.book = work.book or RawBook()
        self.where = {"file": work.name, "rater": work.rater}
        self.sheet = L.SCORING_SHEET
        self.cells: dict[tuple[int, int], Any] = {}
        self.shift: dict[int, int] = {}

    def check(self) -> None:
        if not self._check_row_table() or not self._find_scoring_sheet():
            return
        self._check_extents()
        if not self._align_rows():
            return
        self._check_locked()
        self._read_answers()

    def _add(self, code: str, **fields: Any) -> None:
        self.work.issues.append(issue(code, **self.where, **fields))

    # -- structure -----------------------------------------------------------------------

    def _check_row_table(self) -> bool:
        cells = self.book.cells.get(L.IDENTITY_SHEET)
        if not cells:
            return True  # identity sheet deleted: the other stores identified the file
        found = []
        for r in range(L.IDENTITY_ROW_TABLE_FIRST, self.c.id_window[0] + 1):
            values = tuple(show_value(cells.get((r, c))) for c in range(1, 5))
            if any(values):
                found.append(values)
        if found == _row_table(self.pack):
            return True
        for other in self.c.packs.values():
            if other is not self.pack and found == _row_table(other):
                self._add("rows-from-other-rater", sheet=L.IDENTITY_SHEET,
                          detail=other["rater_id"])
                return False
        return True  # edited row table: the Scoring sheet checks below will say what

    def _find_scoring_sheet(self) -> bool:
        if L.SCORING_SHEET in self.book.cells:
            self.cells = self.book.cells[L.SCORING_SHEET]
            return True
        expected = _expected_lines(self.pack)
        for name, _state in self.book.sheets:
            cells = self.book.cells.get(name, {})
            ids = {str(v) for (r, c), v in cells.items() if c == 1}
            if name != L.IDENTITY_SHEET and ids and ids >= set(expected.values()):
                self.sheet, self.cells = name, cells
                self._add("sheet-renamed", sheet=L.SCORING_SHEET, detail=name)
                return True
        self._add("sheet-missing", sheet=L.SCORING_SHEET)
        return False

    def _check_extents(self) -> None:
        rows, cols = self.c.window
        last_row, last_col = self.book.extents.get(self.sheet, (0, 0))
        if last_row > rows or last_col > cols:
            where = cell_name(last_row, last_col) if last_row > rows else \
                f"column {cell_name(1, last_col)[:-1]}"
            self._add("content-outside-window", sheet=self.sheet,
                      detail=f"up to {where}, beyond {cell_name(rows, cols)}")

    def _align_rows(self) -> bool:
        """Map each expected answer line to the row it is on now, by its hidden ids."""
        expected = _expected_lines(self.pack)
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
                self._add("row-unknown", sheet=self.sheet, cell=f"A{row}", value=key,
                          detail=row)
                ok = False
        for key, rows in sorted(by_key_expected.items()):
            got = len(by_key_found.get(key, []))
            case = key.split()[0].split("/")[0]
            if got < len(rows):
                self._add("row-missing", sheet=self.sheet, case=case)
                ok = False
            elif got > len(rows):
                self._add("row-duplicated", sheet=self.sheet, case=case)
                ok = False
        if not ok:
            return False
        for key, rows in by_key_expected.items():
            for want, have in zip(rows, by_key_found[key], strict=True):
                self.shift[want] = have - want
        self._report_moves(expected, found)
        return True

    def _report_moves(self, expected: dict[int, str], found: list[tuple[int, str]]) -> None:
        if all(v == 0 for v in self.shift.values()):
            return
        order_expected = [key for _, key in sorted(expected.items())]
        order_found = [key for _, key in found]
        code = "row-inserted" if order_found == order_expected else "rows-reordered"
        self._add(code, sheet=self.sheet)

    def _moved(self, ref: str, anchor_row: int) -> str:
        """Where cell ``ref`` is now, moved as the answer line ``anchor_row`` moved."""
        row, col = split_cell(ref)
        return cell_name(row + self.shift.get(anchor_row, 0), col)

    def _card_anchor(self, card: dict[str, Any], last: bool) -> int:
        rows = sorted({split_cell(a["cell"])[0] for r in card["rows"]
                       for a in L.iter_answer_cells({"cards": [{**card, "case_answers": {}}]})
                       if a["row_id"] == r["row_id"]})
        if not rows:
            return 0
        return rows[-1] if last else rows[0]

    # -- locked text -----------------------------------------------------------------------

    def _check_locked(self) -> None:
        for card in self.pack.get("cards", []):
            anchor = self._card_anchor(card, last=False)
            fields = card["locked"] + [x for r in card["rows"] for x in r["locked"]]
            for locked in fields:
                cells = [self._moved(ref, anchor) for ref in locked["cells"]]
                text = "".join(show_full(self.cells.get(split_cell(ref))) for ref in cells)
                if L.text_sha256(text) != locked["sha256"]:
                    self._add("locked-text-changed", sheet=self.sheet, cell=cells[0],
                              case=card["item_id"])

    # -- answers -----------------------------------------------------------------------------

    def _read_answers(self) -> None:
        reader = _AnswerReader(self)
        reader.read_all()


def show_full(value: Any) -> str:
    """A locked cell's text exactly (numbers written as text stay text)."""
    if value is None:
        return ""
    if isinstance(value, Formula):
        return "=" + value.text
    return show_value(value) if not isinstance(value, str) else value


def _expected_lines(pack: dict[str, Any]) -> dict[int, str]:
    """Row -> hidden id text of every response answer line of a fresh pack."""
    out: dict[int, str] = {}
    for card in pack.get("cards", []):
        key = " ".join(r["row_id"] for r in card["rows"])
        for a in L.iter_answer_cells({"cards": [{**card, "case_answers": {}}]}):
            out[split_cell(a["cell"])[0]] = key
    return out


class _AnswerReader:
    """Parses every answer cell of one file into ratings rows and issues."""

    def __init__(self, checker: _FileChecker):
        self.k = checker
        self.study = checker.study
        self.work = checker.work
        self.dims = {d.id: d for d in self.study.rubric.dimensions}
        self.points: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
        self.confidences: list[str] = []
        self.directions: list[tuple[str, str]] = []
        self.last_line = max(_expected_lines(checker.pack), default=0)

    def read_all(self) -> None:
        pack = self.k.pack
        for card in pack.get("cards", []):
            first = self.k._card_anchor(card, last=False)
            last = self.k._card_anchor(card, last=True)
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
        self.work.self_check = self._self_check_input()

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
        moved = self.k._moved(ref, anchor)
        raw = self.k.cells.get(split_cell(moved))
        parsed = parse_value(dim, raw)
        if parsed.blank and dim.kind == "binary" and dim.blank_means:
            parsed = ParsedValue(dim.blank_means)
        where = {"sheet": self.k.sheet, "cell": moved, "case": case, "label": label,
                 "dimension": dim.id}
        what = _describe(what, case, label)
        if dim.required:
            self.work.required += 1
            self.work.answered += parsed.value is not None
        if parsed.code:
            self.k._add(parsed.code, **where, value=_raw_text(raw), what=what,
                        expected=parsed.expected, accepted=parsed.value)
        elif parsed.blank and dim.required:
            self.k._add("answer-missing", **where, what=what, expected=parsed.expected or
                        _expected(dim))
        if dim.kind == "text" and isinstance(parsed.value, str):
            self._word_range(dim, parsed.value, where, what)
        self._emit(case, label, row_id, dim.id, part, parsed.value, raw, confidence, moved)
        return parsed

    def _word_range(self, dim: Dimension, text: str, where: dict[str, str], what: str) -> None:
        outside = check_word_count(text, dim.min_words, dim.max_words)
        if outside is not None:
            self.k._add("text-word-count", **where, value=outside[0], what=what,
                        expected=outside[1])

    def _confidence(self, dim: Dimension, answer: dict[str, Any], case: str, label: str,
                    anchor: int) -> str:
        conf = answer.get("confidence")
        if conf is None:
            return ""
        moved = self.k._moved(conf["cell"], anchor)
        raw = self.k.cells.get(split_cell(moved))
        parsed = parse_confidence(raw)
        where = {"sheet": self.k.sheet, "cell": moved, "case": case, "label": label,
                 "dimension": dim.id}
        what = _describe(f"Confidence for {dim.label}", case, label)
        if parsed.code:
            self.k._add(parsed.code, **where, value=_raw_text(raw), what=what,
                        expected=parsed.expected, accepted=parsed.value)
        elif parsed.blank and dim.required and not self._answer_blank(dim, answer, anchor):
            self.k._add("confidence-missing", **where, what=_describe(dim.label, case, label))
        if parsed.value:
            self.confidences.append(parsed.value)
        return parsed.value or ""

    def _answer_blank(self, dim: Dimension, answer: dict[str, Any], anchor: int) -> bool:
        refs = [q["cell"] for q in answer["questions"]] if dim.kind == "checklist" \
            else [answer["cell"]]
        return all(is_blank(self.k.cells.get(split_cell(self.k._moved(r, anchor))))
                   for r in refs)

    def _batch_times(self, batch: dict[str, Any]) -> None:
        for part in ("start", "end"):
            ref = batch[part]["cell"]
            raw = self.k.cells.get(split_cell(ref))
            value = "" if raw is None else show_value(raw)
            self._emit("", "", "", "batch", f"{batch['batch']}:{part}", value or None, raw, "",
                       ref)

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
        pack = self.k.pack
        self.work.ratings.append({
            "study_id": self.study.id, "rater_id": pack["rater_id"],
            "sitting": str(pack.get("sitting", 1)), "case_id": case, "row_id": row_id,
            "label": label, "dimension": dim_id, "field": part,
            "value": _value_text(value),
            "raw": _raw_text(raw), "confidence": confidence,
            "sheet": self.k.sheet if cell else "", "cell": cell, "file": self.work.name,
            "source_sha256": self.work.sha256,
        })

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


def _value_text(value: Any) -> str:
    """A parsed value in full (numbers without a trailing '.0')."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _raw_text(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, Formula):
        return "=" + raw.text
    if isinstance(raw, dt.date | dt.time | dt.datetime):
        return raw.isoformat()
    return _value_text(raw)


# --------------------------------------------------------------------------- outputs


def neutralise(text: str) -> str:
    """Prefix ``'`` to text that a spreadsheet would run as a formula (OWASP)."""
    if text and text[0] in "=+-@\t\r\n\uff1d\uff0b\uff0d\uff20":
        return "'" + text
    return text


def ratings_csv(ratings: list[dict[str, str]]) -> bytes:
    """The ratings table as CSV bytes: all fields quoted, formula starts neutralised."""
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(RATING_COLUMNS)
    for row in ratings:
        writer.writerow([_csv_field(col, row[col]) for col in RATING_COLUMNS])
    return buf.getvalue().encode("utf-8")


def _csv_field(column: str, value: str) -> str:
    # numbers such as -1 in value/raw columns are data, not formulas, but a number
    # with a leading '-' is still prefixed: a spreadsheet then shows it as text.
    return neutralise(value)


def write_outputs(out_dir: Path, result: Collection) -> dict[str, str]:
    """Write ``ratings.csv`` and ``validation.xlsx`` into ``out_dir``; their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "ratings.csv"
    csv_path.write_bytes(ratings_csv(result.ratings))
    xlsx_path = out_dir / "validation.xlsx"
    write_validation_workbook(xlsx_path, result.report)
    return {"ratings": str(csv_path), "validation": str(xlsx_path)}


def write_validation_workbook(path: Path, report: ValidationReport) -> None:
    """The per-file status sheet and the issue list, written with xlsxwriter.

    Every string goes through ``write_string`` (text from returned files is never
    turned into a formula or link), and the creation date is pinned so two runs
    give the same file.
    """
    import datetime as dt

    import xlsxwriter

    options = {"strings_to_formulas": False, "strings_to_urls": False,
               "strings_to_numbers": False}
    wb = xlsxwriter.Workbook(str(path), options)
    wb.set_properties({"created": dt.datetime(2000, 1, 1)})
    bold = wb.add_format({"bold": True})
    status = wb.add_worksheet("Status")
    heads = ("file", "rater", "used", "errors", "warnings", "percent_complete", "sha256")
    for c, h in enumerate(heads):
        status.write_string(0, c, h, bold)
    for r, f in enumerate(report.files, 1):
        status.write_string(r, 0, f.file)
        status.write_string(r, 1, f.rater)
        status.write_string(r, 2, "yes" if f.used else "no")
        status.write_number(r, 3, f.errors)
        status.write_number(r, 4, f.warnings)
        status.write_number(r, 5, f.percent_complete)
        status.write_string(r, 6, f.sha256)
    issues = wb.add_worksheet("Issues")
    columns = ("severity", "code", "file", "sheet", "cell", "rater", "case", "label",
               "dimension", "value", "message")
    for c, h in enumerate(columns):
        issues.write_string(0, c, h, bold)
    for r, item in enumerate(report.issues, 1):
        data = item.to_dict()
        for c, h in enumerate(columns):
            issues.write_string(r, c, data[h])
    status.autofit()
    issues.autofit()
    wb.close()


# --------------------------------------------------------------------------- status


@dataclass(frozen=True)
class RaterStatus:
    """One pack's return status (for ``sheetflow status``)."""

    rater: str
    sitting: int
    file: str
    returned: bool
    percent_complete: float
    errors: int
    warnings: int

    def to_dict(self) -> dict[str, Any]:
        """The status as a plain dict."""
        return dict(self.__dict__)


def status(study_dir: str | Path, paths: list[str | Path] | None = None,
           limits: Limits | None = None) -> list[RaterStatus]:
    """Per pack: returned or not, how complete, how many errors and warnings.

    Parameters
    ----------
    study_dir : str or Path
        The study folder.
    paths : list, optional
        Where the returns are (default ``study_dir/returns``; a missing default folder
        means nothing was returned yet).
    limits : Limits, optional

    Returns
    -------
    list of RaterStatus
        One per pack in the manifest, in manifest order; writes nothing.
    """
    root = Path(study_dir)
    manifest = load_manifest(root)
    if paths is None and not (root / RETURNS_DIR).is_dir():
        result = None
    else:
        result = collect(root, paths, write=False, limits=limits)
    files = result.report.files if result else []
    out = []
    for pack in manifest.get("packs", []):
        mine = [f for f in files if f.pack_id == pack["identity"]["pack_id"]]
        best = mine[0] if mine else None
        out.append(RaterStatus(
            rater=pack["rater_id"], sitting=int(pack.get("sitting", 1)), file=pack["file"],
            returned=best is not None,
            percent_complete=best.percent_complete if best else 0.0,
            errors=sum(f.errors for f in mine), warnings=sum(f.warnings for f in mine)))
    return out
