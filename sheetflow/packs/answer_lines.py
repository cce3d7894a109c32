"""A card's answer lines: the value, points, checklist and total lines under each
response, their labels, guides and heights, and the answer cells they hold (each with
its rule, counted in the progress line when required). A mixin of
:class:`.writer.PackWriter`, which provides the sheet, its formats and the row cursor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..spec.rubric import Dimension, answer_required
from ..workbook import layout as L
from .guides import answer_label, display_label, guide, question_label
from .rules import Pos, _col, points_expr, total_formula
from .text import LINE_POINTS, row_points

GUIDE_LINE = 13.0  # points per wrapped line of 10-point guide text
YES_NO_LIST = ("Yes", "No")


class AnswerLines:
    """The answer lines of a card and the answer cells on them."""

    # provided by PackWriter
    spec: Any
    ws: Any
    fmt: dict[str, Any]
    what: str
    cols: dict[str | None, tuple[str, str]]  # response label -> answer, confidence column
    dims: dict[str, Dimension]
    heights: dict[tuple[str, str, bool], float]
    one_line: bool
    show_guides: bool
    note_flags: dict[str, tuple[Dimension, ...]]  # note id -> the flags needing it
    label_cpl: int
    guide_cpl: int
    guide_col: str
    required: list[Pos]
    defaulted: list[Pos]
    blank_answers: set[str]
    check: Callable[[int | None, str], None]  # raises on an xlsxwriter failure code

    def _answer_lines(self, rows: list[dict[str, Any]], title: str, case: str,
                      room: float) -> None:
        """The card's answer lines, under a heading naming the case (``title``; a
        continuation, where a page of ``room`` points is full, names it shortly,
        ``case``, to fit its cell)."""
        dims = [d for d in self.spec.dimensions if d.scope == "response"]
        if not self.one_line:
            self._scores_heading(f"{title}: scores")
        for dim in dims:
            if not self.one_line and self._part_full(self._lines_height(dim), room):
                self._scores_heading(f"{case}: more scores")
            if dim.kind == "checklist":
                self._checklist_lines(dim, rows)
            else:
                self._value_line(dim, rows)
        for total in self.spec.totals:
            self._total_line(total, rows)

    def _hint(self, dim: Dimension) -> str:
        """The guide beside ``dim``'s answers, or none (see :meth:`_one_line_cards`)."""
        return guide(dim, self.note_flags.get(dim.id, ())) if self.show_guides else ""

    def _value_line(self, dim: Dimension, rows: list[dict[str, Any]]) -> None:
        hint, label = self._hint(dim), answer_label(dim)
        r = self._next(self._line_height(dim, label, hint))
        self._line_labels(r, label, hint, rows)
        for row in rows:
            ans_col, conf_col = self.cols[row["label"]]
            answer = self._answer(dim, ans_col, r)
            if dim.confidence:
                answer["confidence"] = self._confidence(dim, conf_col, r)
            row["answers"][dim.id] = answer
        if dim.kind == "count":
            self._points_line(dim, rows)

    def _points_line(self, dim: Dimension, rows: list[dict[str, Any]]) -> None:
        """The points each count earns, right under it (a formula, never read)."""
        r = self._next()
        self._string(self.ws, r, "B", "\u2192 points earned", self.fmt["sublabel"], self.what)
        for row in rows:
            ans_col, _ = self.cols[row["label"]]
            expr = points_expr(dim, row["answers"][dim.id])
            cell = row["answers"][dim.id]["cell"]
            self.check(self.ws.write_formula(r, _col(ans_col), f'=IF(ISNUMBER({cell}),{expr},"")',
                                             self.fmt["derived"], ""), self.what)

    def _checklist_lines(self, dim: Dimension, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["answers"][dim.id] = {"kind": "checklist", "questions": []}
        for i, question in enumerate(dim.questions):
            hint = self._hint(dim) if i == 0 else ""
            label = question_label(dim, i, question)
            r = self._next(self._line_height(dim, label, hint))
            self._line_labels(r, label, hint, rows, sub=i > 0)
            for row in rows:
                ans_col, conf_col = self.cols[row["label"]]
                pos = (r, _col(ans_col))
                validation = self._list_rule(pos, YES_NO_LIST, display_label(dim),
                                             "Answer this line's question.", dim.help)
                self._blank(pos, self.fmt["answer"])
                self._require(pos, answer_required(dim, f"q{i + 1}"))
                entry = row["answers"][dim.id]
                entry["questions"].append({"sheet": L.SCORING_SHEET,
                                           "cell": self._cell(ans_col, r),
                                           "question": question, "validation": validation})
                if i == 0 and dim.confidence:
                    entry["confidence"] = self._confidence(dim, conf_col, r)

    def _line_labels(self, r: int, label: str, guide: str, rows: list[dict[str, Any]],
                     sub: bool = False) -> None:
        fmt = self.fmt["sublabel"] if sub else self.fmt["label"]
        self._string(self.ws, r, "B", label, fmt, self.what)
        if guide:
            self._string(self.ws, r, self.guide_col, guide, self.fmt["guide"], self.what)
        self._string(self.ws, r, L.ROW_ID_COLUMN, " ".join(row["row_id"] for row in rows),
                     self.fmt["hidden"], self.what)

    def _line_height(self, dim: Dimension, label: str, guide: str) -> float:
        key = (label, guide, dim.kind == "text")
        if key not in self.heights:  # the same few lines recur on every card
            minimum = 48.0 if dim.kind == "text" else LINE_POINTS
            if self.one_line and not guide and minimum == LINE_POINTS and \
                    len(label) <= self.label_cpl:  # a packed card's line: no room to spare
                self.heights[key] = LINE_POINTS
                return LINE_POINTS
            self.heights[key] = max(row_points(label, self.label_cpl, minimum),
                                    row_points(guide, self.guide_cpl, minimum, GUIDE_LINE))
        return self.heights[key]

    def _require(self, pos: Pos, required: bool) -> None:
        """Count the cell at ``pos`` in the progress line and highlight it while blank."""
        if required:
            self.required.append(pos)

    def _answer(self, dim: Dimension, letter: str, r: int) -> dict[str, Any]:
        pos = (r, _col(letter))
        fmt = self.fmt["answer_text" if dim.kind == "text" else "answer"]
        self._blank(pos, fmt)
        validation = self._dimension_rule(dim, pos)
        required = answer_required(dim, "value")
        self._require(pos, required)
        self._keep_for_notes(dim, pos)
        if not required and dim.blank_means:
            self.defaulted.append(pos)
            self.blank_answers.add(dim.blank_means)
        return {"sheet": L.SCORING_SHEET, "cell": self._cell(letter, r), "kind": dim.kind,
                "validation": validation}

    def _confidence(self, dim: Dimension, letter: str, r: int) -> dict[str, str]:
        pos = (r, _col(letter))
        self._blank(pos, self.fmt["answer"])
        self._list_rule(pos, L.CONFIDENCE_CHOICES, "Confidence",
                        "How sure are you of the score on this line?", "")
        self._require(pos, answer_required(dim, "confidence"))
        return self._ref(letter, r)

    def _total_line(self, total: Any, rows: list[dict[str, Any]]) -> None:
        r = self._next()
        label = f"{total.label} (computed)"
        self._string(self.ws, r, "B", label, self.fmt["label"], self.what)
        for row in rows:
            ans_col, _ = self.cols[row["label"]]
            formula = total_formula(total, row["answers"], self.dims)
            self.check(self.ws.write_formula(r, _col(ans_col), formula, self.fmt["derived"],
                                             ""), self.what)
            row["derived"][total.id] = self._ref(ans_col, r)

    def _wide_answer(self, dim: Dimension, room: float = 0.0) -> dict[str, Any]:
        """A case- or study-level answer in column C (text merged up to the guide's left).

        ``room`` is the least height in points of the line (a long text answer).
        """
        hint, label = self._hint(dim), answer_label(dim)
        r = self._next(max(room, self._line_height(dim, label, hint)))
        self._string(self.ws, r, "B", label, self.fmt["label"], self.what)
        if hint:
            self._string(self.ws, r, self.guide_col, hint, self.fmt["guide"], self.what)
        last = chr(ord(self.guide_col) - 1)
        if dim.kind == "text" and last != "C":
            self.check(self.ws.merge_range(r, 2, r, _col(last), "", self.fmt["answer_text"]),
                       self.what)
        answer = self._answer(dim, "C", r)
        if dim.confidence:
            answer["confidence"] = self._confidence(dim, "D", r)
        return answer
