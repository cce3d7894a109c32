"""Read every answer cell of one returned file into rating rows and issues.

Runs in the reader child after :mod:`sheetflow.collect.file_check` has matched the file to
its pack and aligned its rows: values are parsed by :mod:`sheetflow.collect.values`, derived
points and totals recomputed (never read from the sheet), and the self-check input
gathered.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from operator import itemgetter
from typing import Any, Protocol

from ..spec.rubric import Dimension, Total, answer_required, total_range
from ..spec.study import Study
from ..spec.verdicts import verdict_rule
from ..workbook import layout as L
from .content_checks import SelfCheckInput, check_batch_times, check_word_count
from .copies import answer_print
from .protocol_checks import flag_notes_missing, verdicts_off_band
from .rows import PackedBlock, RatingBlock, table_raw, value_text
from .validate import show_value
from .values import (
    CONFIDENCE_DOMAIN,
    ParsedValue,
    describe_domain,
    is_blank,
    parse_confidence,
    parse_time,
    parse_value,
)


class CheckedFile(Protocol):
    """What :class:`AnswerReader` needs of the file being checked.

    :class:`sheetflow.collect.file_check.FileChecker` is the one implementation; naming the
    needs here keeps this module below it (the checker creates the reader).
    """

    study: Study
    result: Any  # the file's PackCheck: issues found so far, the rating block
    head: Any  # the pack's PackHead in the manifest
    job: Any  # the FileJob: limits, manifest
    plan: Any  # the pack's layout, positions moved as the file's rows moved
    sheet: str
    date1904: bool  # the workbook counts dates from 1904

    def add(self, code: str, **fields: Any) -> None:
        """Record an issue at the current place."""

    def moved(self, ref: str, anchor_row: int) -> tuple[str, Any]:
        """Where cell ``ref`` is now, and its value."""

    def value_at(self, ref: str) -> Any:
        """The value at the pack position ``ref``."""

    def quoted(self, ref: str, raw: Any) -> str:
        """Cell ``ref``'s value ``raw`` as an issue quotes it (what the rater sees)."""


class AnswerReader:
    """Parses every answer cell of one file into rating rows and issues."""

    def __init__(self, checker: CheckedFile):
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
        self.batch_times: list[tuple[int, str, dt.datetime, str]] = []
        self.untimed: list[dict[str, Any]] = []  # batches with neither time filled in
        # issues name a case as the rater saw it (card number, display code), never by
        # its item id: reply drafts quote them, and item ids may follow the arms
        self.shown = {card["item_id"]: L.case_name(card)
                      for card in checker.plan.pack.get("cards", [])}
        # most answer cells hold one of a few clean values: (dimension id, raw) -> the
        # parsed value and the row's value and raw texts, for a raw of an exact plain
        # type (a bool equals 1 as a key, so it never comes this way)
        self._clean: dict[tuple[str, Any], tuple[ParsedValue, str, str]] = {}
        self._required: dict[tuple[str, str], bool] = {}  # (dimension id, part)

    def read_all(self) -> None:
        pack = self.k.plan.pack
        read = self._answer
        for card, (first, last) in zip(pack.get("cards", []), self.k.plan.anchors,
                                       strict=True):
            case = card["item_id"]
            for row in card["rows"]:
                label, row_id = row.get("label") or "", row.get("row_id") or ""
                for dim_id, answer in row["answers"].items():
                    read(dim_id, answer, case, label, row_id, first)
            for dim_id, answer in card["case_answers"].items():
                read(dim_id, answer, case, "", "", last)
        for dim_id, answer in pack.get("study_answers", {}).items():
            read(dim_id, answer, "", "", "", self.last_line)
        for batch in pack.get("batches", []):
            self._batch_times(batch)
        self._unscored_batches()
        self._flag_notes()
        self._consent()
        self._totals()
        self._verdict_bands()
        self.result.self_check = self._self_check_input()
        self.result.block = self._block()
        self.result.answers = answer_print(self.rows, pack, self.dims, self._labels())

    # -- one answer ---------------------------------------------------------------------

    def _answer(self, dim_id: str, answer: dict[str, Any], case: str, label: str,
                row_id: str, anchor: int) -> None:
        dim = self.dims.get(dim_id)
        if dim is None:
            return
        confidence = self._confidence(dim, answer, case, label, anchor)
        if dim.kind == "checklist":
            yes = 0
            complete = True
            for i, q in enumerate(answer["questions"], 1):
                parsed = self._cell(dim, q["cell"], case, label, anchor, f"q{i}", row_id,
                                    confidence, question=q["question"])
                complete &= parsed.value is not None
                yes += parsed.value == "Yes"
            if complete:
                self._derived(dim, case, label, row_id, "points", yes)
            return
        parsed = self._cell(dim, answer["cell"], case, label, anchor, "value", row_id,
                            confidence)
        if dim.kind == "count" and isinstance(parsed.value, int):
            self._derived(dim, case, label, row_id, "points",
                          dim.points_for_count(parsed.value))
        elif dim.kind in ("scale", "number") and isinstance(parsed.value, int):
            self.points[(case, label)][dim.id] = float(parsed.value)
        if dim.kind == "preference" and parsed.value is not None:
            self.directions.append((case, parsed.value))

    def _cell(self, dim: Dimension, ref: str, case: str, label: str, anchor: int,
              part: str, row_id: str, confidence: str,
              question: str | None = None) -> ParsedValue:
        """One answer cell: its rating row, its issues, its parsed value.

        ``question`` is a checklist question's text (the issue names it after the
        dimension; built only when there is an issue).
        """
        moved, raw = self.k.moved(ref, anchor)
        clean = self._clean.get((dim.id, raw)) if type(raw) in _PLAIN else None
        if clean is not None:  # a value seen before in this file, and clean: no issue
            parsed, value, shown = clean
            self.result.entered += 1
            self._count(self._is_required(dim, part), parsed.value, _blank_is_answer(dim))
            if dim.kind == "preference":
                self.direction_cells[self.shown.get(case, case)] = (self.k.sheet, moved)
            self.rows.append((case, row_id, label, dim.id, part, value, shown, confidence,
                              moved))
            return parsed
        self.result.entered += not is_blank(raw)
        parsed = parse_value(dim, raw)
        if parsed.blank and dim.kind == "binary" and dim.blank_means:
            parsed = ParsedValue(dim.blank_means)
        self._count(self._is_required(dim, part), parsed.value, _blank_is_answer(dim))
        if parsed.code or (parsed.blank and dim.required):
            where = self._where(moved, case, label, dim)
            what = self._what(dim.label if question is None else f"{dim.label}: {question}",
                              case, label)
            if parsed.code:
                self.k.add(parsed.code, **where, value=self.k.quoted(moved, raw), what=what,
                           expected=parsed.expected, accepted=parsed.value)
            else:
                self.k.add("answer-missing", **where, what=what,
                           expected=parsed.expected or _expected(dim))
        if dim.kind == "text" and isinstance(parsed.value, str):
            self._word_range(dim, parsed.value, moved, case, label)
        if dim.kind == "preference":
            self.direction_cells[self.shown.get(case, case)] = (self.k.sheet, moved)
        self._emit(case, label, row_id, dim.id, part, parsed.value, raw, confidence, moved)
        if parsed.code is None and parsed.value is not None and dim.kind != "text" \
                and type(raw) in _PLAIN and len(self._clean) < _CLEAN_KEPT:
            # what the next cell holding the same value gives: the same row, no issue
            self._clean[(dim.id, raw)] = (parsed, value_text(parsed.value), table_raw(raw))
        return parsed

    def _is_required(self, dim: Dimension, part: str) -> bool:
        """:func:`answer_required`, worked out once per dimension and part."""
        required = self._required.get((dim.id, part))
        if required is None:
            required = self._required[(dim.id, part)] = answer_required(dim, part)
        return required

    def _count(self, required: bool, value: Any, mark: bool = False) -> None:
        """Count one answer cell in the completeness: a ``required`` one as the pack's
        progress line does, and apart a ``mark`` whose blank stands for an answer
        (:func:`_blank_is_answer`). ``value``: its answer (None: blank or refused)."""
        if required:
            self.result.required += 1
            self.result.answered += value is not None
        elif mark:
            self.result.marks += 1
            self.result.marks_held += value is not None

    def _where(self, cell: str, case: str, label: str, dim: Dimension) -> dict[str, str]:
        return {"sheet": self.k.sheet, "cell": cell, "case": self.shown.get(case, case),
                "label": label, "dimension": dim.id}

    def _what(self, what: str, case: str, label: str) -> str:
        return _describe(what, self.shown.get(case, case), label)

    def _word_range(self, dim: Dimension, text: str, cell: str, case: str,
                    label: str) -> None:
        outside = check_word_count(text, dim.min_words, dim.max_words)
        if outside is not None:
            self.k.add("text-word-count", **self._where(cell, case, label, dim),
                       value=outside[0], what=self._what(dim.label, case, label),
                       expected=outside[1])

    def _confidence(self, dim: Dimension, answer: dict[str, Any], case: str, label: str,
                    anchor: int) -> str:
        conf = answer.get("confidence")
        if conf is None:
            return ""
        moved, raw = self.k.moved(conf["cell"], anchor)
        self.result.entered += not is_blank(raw)
        parsed = parse_confidence(raw)
        self._count(self._is_required(dim, "confidence"), parsed.value)
        # the message's words are made only for a cell with an issue (one in thousands)
        if parsed.code:
            self.k.add(parsed.code, **self._where(moved, case, label, dim),
                       value=self.k.quoted(moved, raw),
                       what=self._what(f"Confidence for {dim.label}", case, label),
                       expected=parsed.expected, accepted=parsed.value)
        elif parsed.blank and self._is_required(dim, "confidence"):
            # required as the pack shows it (orange, counted by its progress line): the
            # protocol asks a confidence for every score, and a reply that named only
            # the blank scores left the rater's line short of "done"
            self.k.add("answer-missing", **self._where(moved, case, label, dim),
                       what=self._what(f"Confidence for {dim.label}", case, label),
                       expected=CONFIDENCE_DOMAIN)
        if parsed.value:
            self.confidences.append(parsed.value)
        return parsed.value or ""

    def _batch_times(self, batch: dict[str, Any]) -> None:
        raws = {}
        for part in ("start", "end"):
            ref = batch[part]["cell"]
            raw = raws[part] = self.k.value_at(ref)
            self.result.entered += not is_blank(raw)
            when = parse_time(raw, self.k.date1904).value
            self._count(answer_required(None, part), when)
            value = when.isoformat() if when is not None else show_value(raw)
            if isinstance(when, dt.datetime):
                self.batch_times.append((batch["batch"], part, when, ref))
            self._emit("", "", "", "batch", f"{batch['batch']}:{part}", value or None, raw,
                       "", ref)
        if all(is_blank(raw) for raw in raws.values()):
            self.untimed.append(batch)
        for found in check_batch_times(batch["batch"], raws["start"], raws["end"],
                                       self.k.date1904):
            ref = batch[found.part]["cell"]
            self.k.add(found.code, sheet=self.k.sheet, cell=ref, dimension="batch",
                       value=self.k.quoted(ref, raws[found.part]), detail=found.detail)

    def _unscored_batches(self) -> None:
        """A batch with no time and no mark was never scored: its blanks must not be
        read as answers (a blank KEEP means "No" only in a batch the rater did)."""
        marked = {r[0] for r in self.rows if r[6] != ""}  # cases with any answer typed
        cards = self.k.plan.pack.get("cards", [])
        for batch in self.untimed:
            cases = {c["item_id"] for c in cards if c.get("batch") == batch["batch"]}
            if cases and not marked & cases:
                # the error asks for the batch's times too: its two blank-time warnings
                # would only say so again, below it, in the rater's reply
                times = {batch["start"]["cell"], batch["end"]["cell"]}
                self.result.issues = [i for i in self.result.issues if not (
                    i.code == "batch-time-missing" and i.cell in times)]
                self.k.add("batch-not-scored", sheet=self.k.sheet, cell=batch["start"]["cell"],
                           dimension="batch", detail=batch["batch"])

    def _flag_notes(self) -> None:
        """A marked flag whose ``note`` dimension is blank (003: a dispute needs a line)."""
        read = {(r[0], r[2], r[3]): (r[5], r[8]) for r in self.rows}
        for f in flag_notes_missing(read, self.dims):
            # the note's own cell is named: the flag's is not where the line goes
            note_cell = read.get((f.case, f.label, f.note.id), ("", ""))[1]
            note = f"{f.note.label} ({note_cell})" if note_cell else f.note.label
            self.k.add("flag-note-missing", **self._where(f.cell, f.case, f.label, f.flag),
                       value=f.value, what=self._what(f.flag.label, f.case, f.label),
                       detail=note)

    def _consent(self) -> None:
        """A consent question answered with another choice than the one giving consent
        (a blank one is ``answer-missing``: the question is required)."""
        for case, _, label, dim_id, _, value, _, _, cell in self.rows:
            dim = self.dims.get(dim_id)
            if dim is not None and dim.consent and value and value != dim.consent:
                self.k.add("consent-refused", **self._where(cell, case, label, dim),
                           value=value, what=self._what(dim.label, case, label),
                           expected=dim.consent)

    def _verdict_bands(self) -> None:
        """A verdict that is not the band of its own total (protocol 004), after the
        totals are computed."""
        rule = verdict_rule(self.study.plan.params)
        if rule is None:
            return
        read = {(r[0], r[2], r[3]): (r[5], r[8]) for r in self.rows}
        dim = self.dims[rule.dimension]
        for f in verdicts_off_band(read, rule):
            self.k.add("verdict-off-band", **self._where(f.cell, f.case, f.label, dim),
                       value=f.value, what=self._what(dim.label, f.case, f.label),
                       detail=f.detail)

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
                    # a value typed over the total's formula is named beside this one
                    self.result.totals[(case, label, total.id)] = float(value)

    def _emit(self, case: str, label: str, row_id: str, dim_id: str, part: str, value: Any,
              raw: Any, confidence: str, cell: str) -> None:
        self.rows.append((case, row_id, label, dim_id, part, value_text(value), table_raw(raw),
                          confidence, cell))

    def _block(self) -> PackedBlock:
        head, job = self.k.head, self.k.job
        # the table is sorted by rater, sitting, case, label, dimension, field, file;
        # within one file the first two and the last are the same for every row
        rows = sorted(self.rows, key=_TABLE_ORDER)
        block = RatingBlock(self.study.id, head.rater_id, str(head.sitting), self.k.sheet,
                            job.name, job.sha256, rows)
        return block.packed(job.csv)

    # -- self-checks --------------------------------------------------------------------

    def _self_check_input(self) -> SelfCheckInput:
        study = self.study
        total = study.rubric.totals[0] if study.rubric.totals else None
        per_row = self._row_totals(total) if total else {}
        labels = self._labels()
        pref = next((d for d in study.rubric.dimensions if d.kind == "preference"), None)
        directions = []
        for case, direction in self.directions:
            a, b = per_row.get((case, labels[0])), per_row.get((case, labels[-1]))
            margin = a - b if a is not None and b is not None else None
            directions.append((self.shown.get(case, case), direction, margin))
        return SelfCheckInput(
            totals=[per_row[k] for k in sorted(per_row)],
            total_range=total_range(total, study.rubric) if total else None,
            confidences=self.confidences,
            directions=directions,
            direction_cells=self.direction_cells,
            extreme_low_max=study.plan.params.get("extreme_low_max"),
            extreme_high_min=study.plan.params.get("extreme_high_min"),
            confidence_target=study.plan.targets.get("confidence_medium_high"),
            labels=(labels[0], labels[-1]),
            preference_choices=tuple(pref.choices) if pref else ("A>B", "B>A", "Tied"),
            batch_times=self.batch_times,
        )

    def _labels(self) -> tuple[str, ...]:
        """The pair's labels, first then second (a preference's first two choices)."""
        design = self.study.design
        return tuple(design.labels) if design.paired else ("A", "B")

    def _row_totals(self, total: Total) -> dict[tuple[str, str], float]:
        out = {}
        for key, pts in self.points.items():
            if all(d in pts for d in total.of):
                values = [pts[d] for d in total.of]
                out[key] = sum(values) / len(values) if total.method == "mean" else sum(values)
        return out


_PLAIN = frozenset((str, int, float))
_TABLE_ORDER = itemgetter(0, 2, 3, 4)  # case, label, dimension, field
_CLEAN_KEPT = 4096


def _blank_is_answer(dim: Dimension) -> bool:
    """Whether a dimension's cells are marks whose blank stands for an answer
    (``blank_means``): never required, yet each holds an answer, blank or marked.
    Left out of the completeness, a keep-known return holding every mark and no
    batch time was 0% complete."""
    return dim.kind == "binary" and bool(dim.blank_means)


def _describe(what: str, case: str, label: str) -> str:
    if case and label:
        return f"{what} for case {case}, response {label}"
    if case:
        return f"{what} for case {case}"
    return what


def _expected(dim: Dimension) -> str:
    return describe_domain(dim)
