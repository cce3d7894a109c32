"""The rules on a pack's answer cells: data validation, out-of-rule, word-range and blank
highlights, and the done counts behind the progress line. A mixin of
:class:`.writer.PackWriter`.

What turns red and is counted "to correct" is what collect refuses (an error: the file
is not used); what collect only warns about is not. A text outside its word range is
such a warning (``text-word-count``), and so is a batch time that is not a date and time
(``batch-time-invalid``, ``batch-time-no-date``): they turn purple and the line names
them as hints.

Cells are grouped by rule (one validation element per rule, answer column and 250
ranges), so a 500-case pack carries a few dozen elements rather than one per cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..spec.rubric import Dimension
from ..workbook import layout as L
from .guides import display_label, messages, number_span, word_range
from .rules import (
    Box,
    Pos,
    a1,
    blank_test,
    boxes,
    chunks,
    column_name,
    filled_test,
    grouped_refs,
    invalid_formula,
    time_hint_formula,
    word_range_formula,
)
from .text import TIME_HINT, WORD_HINT, progress_text

COUNT_ARGS = 255  # Excel's most arguments to one function (COUNTA)
PROTECT = {"format_columns": True, "format_rows": True, "select_locked_cells": True,
           "select_unlocked_cells": True}


class AnswerRules:
    """Validation and highlight methods; the writer provides the workbook state."""

    # provided by PackWriter
    wb: Any
    ws: Any
    fmt: dict[str, Any]
    lists: Any
    validations: Any
    rule_dims: dict[Any, Dimension]  # rule key -> a text's or a scale's dimension
    list_columns: dict[tuple[str, ...], str]
    required: list[Pos]
    defaulted: list[Pos]
    entries: list[Pos]
    blocks: list[int]
    blank_answers: set[str]
    done_col: str
    bad_col: str
    marks_col: str
    reached_col: str
    notes_col: str
    hints_col: str
    row: int
    submission_row: int | None  # the Submission area's first row (1-based), if any
    check: Callable[[int | None, str], None]  # raises on an xlsxwriter failure code

    def _dimension_rule(self, dim: Dimension, pos: Pos) -> dict[str, Any]:
        """Add the validation for ``dim`` at ``pos``; return its manifest description."""
        kind = dim.kind
        title = display_label(dim)
        if kind in ("categorical", "binary", "flag", "preference"):
            return self._list_rule(pos, dim.entry_choices(), title, "", dim.help)
        if kind == "scale" and (dim.na_choices or dim.maximum - dim.minimum <= 10):
            values = [str(v) for v in range(dim.minimum, dim.maximum + 1)]
            return self._list_rule(pos, (*values, *dim.na_choices), title, "", dim.help, dim)
        if kind in ("count", "scale", "number"):
            return self._whole_rule(pos, dim)
        return self._text_rule(pos, dim)

    def _list_rule(self, pos: Pos, choices: Sequence[str], title: str, prompt: str,
                   help_text: str, scale: Dimension | None = None) -> dict[str, Any]:
        """The dropdown ``choices``; a ``scale``'s numbers are read as collect reads
        numbers (see :func:`.rules.invalid_formula`)."""
        choices = tuple(choices)
        key = ("list", choices, title, prompt, help_text)
        if scale is not None:
            self.rule_dims[key] = scale

        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            shown = ", ".join(choices)
            message = " ".join(x for x in (prompt, help_text, f"Pick one: {shown}.") if x)
            options = {"validate": "list", "source": self._list_source(list(choices)),
                       **messages(title, message, f"Pick one of: {shown}.")}
            return options, {"type": "list", "choices": list(choices)}

        return self.validations.add(pos, key, build)

    def _whole_rule(self, pos: Pos, dim: Dimension) -> dict[str, Any]:
        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            lo, hi = dim.minimum or 0, dim.maximum
            decimal = dim.kind == "number" and dim.decimals > 0
            if hi is None:
                rule: dict[str, Any] = {"criteria": ">=", "value": lo}
            else:
                rule = {"criteria": "between", "minimum": lo, "maximum": hi}
            span = number_span(dim)
            if dim.kind == "count":
                span += " (the count, not the points)"
            message = " ".join(x for x in (dim.help, f"Enter {span}.") if x)
            options = {"validate": "decimal" if decimal else "integer", **rule,
                       **messages(display_label(dim), message, f"Enter {span}.")}
            described = {"type": "whole", "min": lo, "max": hi}
            if decimal:
                described = {"type": "decimal", "min": lo, "max": hi, "places": dim.decimals}
            return options, described

        return self.validations.add(pos, ("whole", dim.id), build)

    def _text_rule(self, pos: Pos, dim: Dimension) -> dict[str, Any]:
        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            message = " ".join(x for x in (dim.help, word_range(dim)) if x)
            options = {"validate": "any",
                       **messages(display_label(dim), message or "Free text.", "")}
            return options, {"type": "any"}

        self.rule_dims[("text", dim.id)] = dim
        return self.validations.add(pos, ("text", dim.id), build)

    def _list_source(self, choices: list[str]) -> list[str] | str:
        """Inline source, or a range on the hidden lists sheet when Excel cannot inline."""
        inline = ",".join(choices)
        if len(inline) <= L.MESSAGE_LIMIT and not any(
                "," in c or '"' in c for c in choices):
            return choices
        key = tuple(choices)
        if key not in self.list_columns:
            if self.lists is None:
                self.lists = self.wb.add_worksheet(L.LISTS_SHEET)
                self.lists.hide()
                self.check(self.lists.protect("", PROTECT), "the lists sheet protection")
            col = len(self.list_columns)
            for i, choice in enumerate(choices):
                self.check(self.lists.write_string(i, col, choice), "a dropdown list")
            letter = column_name(col)
            self.list_columns[key] = f"={L.LISTS_SHEET}!${letter}$1:${letter}${len(choices)}"
        return self.list_columns[key]

    def _progress_formula(self, last: int, notes: bool = False, hints: bool = False,
                          times: bool = False) -> str:
        """Valid answers, not filled cells: refused values come first, in red, and
        keep the line from saying "All ... done" (see :func:`.text.progress_text`);
        with ``notes``, so do the notes a marked flag needs (:mod:`.flag_notes`); with
        ``hints``, the texts outside their word range are named after it, and with
        ``times`` the batch times that are not a date and time: hints that never keep
        the line from "done" (collect only warns of them). The hints column holds the
        texts as positive counts and the times as negative ones (their lines differ),
        so ``SUMIF`` tells them apart in a formula of fixed length."""
        def total_of(col: str) -> str:
            return f"SUM({col}{L.HEADER_ROWS + 1}:{col}{last})"

        def hints_of(sign: str) -> str:
            span = f"{self.hints_col}{L.HEADER_ROWS + 1}:{self.hints_col}{last}"
            return f'{"-" if sign == "<" else ""}SUMIF({span},"{sign}0")'

        total, bad = len(self.required), total_of(self.bad_col)
        done = f"({total}+{total_of(self.done_col)})"  # the lines hold filled - required
        blank_at = self._first_where(self.done_col, "<0", *self._first_required())
        bad_at = self._first_where(self.bad_col, ">0")
        filled = (f'{done}&" of {total} required answers filled"'
                  f'&IF({blank_at}="",""," (first blank: "&{blank_at}&")")')
        finished = f"{done}>={total}"
        if notes:
            lacking = total_of(self.notes_col)
            filled += (f'&IF({lacking}>0,"; "&{lacking}&IF({lacking}=1," note"," notes")'
                       '&" to write (orange)","")')
            finished = f"AND({finished},{lacking}=0)"
        line = (f'IF({bad}>0,{bad}&" to correct (red cells, first: "&{bad_at}&"); "&{filled},'
                f'IF({finished},"All {total} answers done",{filled}))')
        if hints:
            off = hints_of(">")
            line += (f'&IF({off}>0,"; "&{off}&IF({off}=1," text outside its word range",'
                     f'" texts outside their word range")&" {WORD_HINT}","")')
        if times:
            off = hints_of("<")
            line += (f'&IF({off}>0,"; "&{off}&IF({off}=1," batch time that is",'
                     f'" batch times that are")&" {TIME_HINT}","")')
        if self.defaulted:
            line += (f'&"; "&{total_of(self.marks_col)}&" of {len(self.defaulted)} marks set '
                     f'({self._blank_meaning()})"')
        return "=" + line

    def _first_where(self, column: str, test: str, row_now: int = 0, now: str = "") -> str:
        """The cell (in ``column``'s rows 2 and 3, which show nothing) naming where the
        first answer line whose count in ``column`` passes ``test`` is: "case 2, row
        40", "the Submission area, row 460", or "" when no line does.

        Row 2 holds the line's row (``MIN(IF(..))`` as an array formula, read the same
        by Excel and LibreOffice; 0 for none); row 3 the words, the case being the
        number of cards begun by then (the cards' formulas in the reached column).
        ``row_now`` and ``now`` are their values in the pack as sent."""
        span = f"{column}{L.HEADER_ROWS + 1}:{column}{max(self.row, L.HEADER_ROWS + 1)}"
        index = ord(column) - ord("A")
        self.check(self.ws.write_array_formula(1, index, 1, index,
                                               f"{{=MIN(IF({span}{test},ROW({span})))}}",
                                               self.fmt["count"], row_now), "the progress line")
        row, reached = f"${column}$2", self.reached_col
        case = f"COUNT({reached}{L.HEADER_ROWS + 1}:INDEX({reached}:{reached},{row}))"
        where = f'"case "&{case}&", row "&{row}'
        if self.submission_row is not None:
            where = (f'IF({row}>={self.submission_row},"the Submission area, row "&{row},'
                     f"{where})")
        self.check(self.ws.write_formula(2, index, f'=IF({row}=0,"",{where})',
                                         self.fmt["count"], now), "the progress line")
        return f"${column}$3"

    def _blank_meaning(self) -> str:
        if len(self.blank_answers) == 1:
            return f"a blank mark means {next(iter(self.blank_answers))}"
        return "a blank mark counts as its default answer"

    def _progress_start(self) -> str:
        marks = (0, len(self.defaulted), self._blank_meaning()) if self.defaulted else None
        first = self._first_required()[1]
        return progress_text(0, len(self.required), 0, marks, first_blank=first)

    def _first_required(self) -> tuple[int, str]:
        """The row of the first required cell and where the progress line says it is,
        in the pack as sent (all blank); (0, "") when nothing is required."""
        if not self.required:
            return 0, ""
        row = min(r for r, _ in self.required) + 1
        if self.submission_row is not None and row >= self.submission_row:
            return row, f"the Submission area, row {row}"
        return row, f"case {sum(b + 1 <= row for b in self.blocks)}, row {row}"

    def _count_cells(self, cells: list[Pos], column: str, less: bool = False) -> None:
        """Count the filled ``cells`` in the hidden ``column``, for the progress line.

        A cell counts when it is not blank as collect reads it (:func:`.rules.blank_test`,
        added up per answer line): collect reads a cell of spaces, tabs or line breaks as
        blank, and ``COUNTA`` counted it, so the line said "All ... done" of a pack
        collect refused. An error value counts as filled (``IFERROR(..,1)``: it is red,
        "to correct") and no longer turns the whole line into ``#N/A``. One formula per
        answer line: ``TRIM`` reads a rectangle only in an array formula, which
        ``COUNTA`` did not need.
        """
        terms: dict[int, list[str]] = {}
        for pos in sorted(cells):
            terms.setdefault(pos[0], []).append(
                f"IFERROR({filled_test(a1((*pos, *pos)))},1)")
        for row, parts in terms.items():  # 0+(TRUE) is 1 in Excel and LibreOffice
            start = f"=-{len(parts)}+" if less else "=0+"
            self.check(self.ws.write_formula(row, ord(column) - ord("A"),
                                             start + "+".join(parts), self.fmt["count"],
                                             -len(parts) if less else 0),
                       "the progress line")

    def _count_to_correct(self) -> None:
        """Per answer line, the number of values its rules refuse, in the hidden column.

        The same formulas as the red highlight (:func:`.rules.invalid_formula`), added
        as numbers (``0+(TRUE)`` is 1 in Excel and LibreOffice), so the progress line
        counts exactly the cells shown red.
        """
        self._count_per_line(self.bad_col, self._refused)

    def _count_hints(self) -> tuple[bool, bool]:
        """Per answer line, in the hints column (the purple highlight's own formulas),
        the texts outside their word range, and, negated, the batch times that are
        not a date and time (each on a batch line of its own).

        Returns
        -------
        tuple of bool
            Whether the pack has a word range, and batch times (else the line never
            names them).
        """
        texts = self._count_per_line(self.hints_col, self._word_hint)
        times = self._count_per_line(self.hints_col, self._time_hint, "0-")
        return texts, times

    def _refused(self, key: Any, ref: str) -> str | None:
        """The red test of the rule ``key`` at ``ref`` (None: nothing is refused)."""
        return invalid_formula(self.validations.described[key], ref, self.rule_dims.get(key))

    def _off_range(self, key: Any, ref: str) -> str | None:
        """The purple test of the rule ``key`` at ``ref`` (None: no hint)."""
        return self._word_hint(key, ref) or self._time_hint(key, ref)

    def _word_hint(self, key: Any, ref: str) -> str | None:
        """A text outside its word range (None: not a text with a word range)."""
        dim = self.rule_dims.get(key)
        return word_range_formula(ref, dim) if key[0] == "text" and dim else None

    def _time_hint(self, key: Any, ref: str) -> str | None:
        """A batch time that is not a date and time (None: not a batch time)."""
        return time_hint_formula(ref) if key[0] == "datetime" else None

    def _count_per_line(self, column: str, test: Callable[[Any, str], str | None],
                        start: str = "0+") -> bool:
        """On each answer line, in ``column``, how many of its cells ``test`` (a
        formula per rule key and cell) finds true (``start`` ``0-``: negated);
        whether any cell has a test."""
        per_row: dict[int, list[str]] = {}
        for key, cells in self.validations.groups.items():
            for pos in cells:
                formula = test(key, a1((*pos, *pos)))
                if formula is not None:
                    per_row.setdefault(pos[0], []).append(formula)
        index = ord(column) - ord("A")
        for row, tests in per_row.items():
            self.check(self.ws.write_formula(row, index, f"={start}(" + "+".join(
                f"({t})" for t in tests) + ")", self.fmt["count"], 0), "the progress line")
        return bool(per_row)

    def _highlight_invalid(self) -> None:
        """Red when a cell holds a value its rule refuses (pasted values included)."""
        self._highlight(self._refused, self.fmt["invalid"], "the value-not-allowed highlight")

    def _highlight_word_hints(self) -> None:
        """Purple while a text is outside its word range: allowed, worth a look."""
        self._highlight(self._off_range, self.fmt["hint"], "the word-range highlight")

    def _highlight(self, test: Callable[[Any, str], str | None], fmt: Any,
                   what: str) -> None:
        """``fmt`` where ``test`` holds: one conditional format per rule, answer column
        and 250 ranges, its formula anchored on the top-left cell of its first range as
        in :meth:`_highlight_blanks`."""
        for key, cells in self.validations.groups.items():
            for column_boxes in by_column(cells):
                for refs in grouped_refs(column_boxes):
                    formula = test(key, refs[0].split(":")[0])
                    if formula is None:
                        continue
                    self.check(self.ws.conditional_format(refs[0], {
                        "type": "formula", "criteria": "=" + formula, "format": fmt,
                        "multi_range": " ".join(refs)}), what)

    def _mark_reached(self, last: int) -> None:
        """The cards the rater has reached, for the blank highlight (see the layout).

        On the first row of each block (a card with its batch lines, or the Submission
        area), ``=IF(COUNTA(its answer cells)>0, its last row, 0)``; in row 2, the
        largest of them: the last row of the last card with any answer. One formula
        per card and no chain from card to card, so neither application recurses.
        """
        column = ord(self.reached_col) - ord("A")
        ends = [*self.blocks[1:], last]
        cells = sorted(self.entries)
        i = 0
        for start, end in zip(self.blocks, ends, strict=True):
            mine: list[Pos] = []
            while i < len(cells) and cells[i][0] < end:
                if cells[i][0] >= start:
                    mine.append(cells[i])
                i += 1
            if not mine:
                continue
            counts = "+".join("COUNTA(" + ",".join(map(a1, piece)) + ")"
                              for piece in chunks(boxes(mine), COUNT_ARGS))
            self.check(self.ws.write_formula(start, column, f"=IF({counts}>0,{end},0)",
                                             self.fmt["count"], 0), "the blank highlight")
        letter = self.reached_col
        self.check(self.ws.write_formula(1, column, f"=MAX({letter}{L.HEADER_ROWS + 1}:"
                                         f"{letter}{max(last, L.HEADER_ROWS + 1)})",
                                         self.fmt["count"], 0), "the blank highlight")

    def _highlight_blanks(self) -> None:
        """Orange while blank in a card reached: a conditional format per answer column
        and 250 ranges.

        The rule's relative formula (``AND(blank,ROW(C12)<=$K$2)``, blank as collect
        reads it: :func:`.rules.blank_test`) names the
        top-left cell of its first range. Grouping the ranges by first column and
        sorting them by row makes that cell the top-left of all of them, so the rule
        reads the same whether an application anchors it on the first range or on the
        whole area.
        """
        reached = f"${self.reached_col}$2"
        for column_boxes in by_column(self.required):
            for refs in grouped_refs(column_boxes):
                top = refs[0].split(":")[0]
                self.check(self.ws.conditional_format(refs[0], {
                    "type": "formula", "format": self.fmt["blank"],
                    "criteria": f"=AND({blank_test(top)},ROW({top})<={reached})",
                    "multi_range": " ".join(refs)}), "the blank-cell highlight")


def by_column(cells: list[Pos]) -> list[list[Box]]:
    """``cells`` as rectangles grouped by first column (columns in order, rows sorted)."""
    columns: dict[int, list[Box]] = {}
    for box in boxes(cells):
        columns.setdefault(box[1], []).append(box)
    return [columns[c] for c in sorted(columns)]
