"""Write one locked rater workbook with xlsxwriter, following :mod:`.layout`.

Every text comes from the spec and is written with ``write_string`` (never ``write``),
in a workbook created with ``strings_to_formulas``, ``strings_to_urls`` and
``strings_to_numbers`` off, so a response starting with ``=`` stays text. Every
xlsxwriter call that returns a status is checked: a non-zero code raises
:class:`~sheetflow.errors.SheetflowError` naming the item or cell.

Long text is split into display chunks of at most :data:`~.layout.CHUNK_CHARS`
characters (and about 26 wrapped lines, so a row never needs more than 409 points),
broken at white space where possible, written in consecutive merged rows. Nothing is
lost: the chunks concatenate back to the original exactly. Text longer than Excel's
32,767-unit cell limit is therefore written whole, split across cells, never
truncated. Input messages and titles are truncated to Excel's limits (255 and 32
characters), never an error.

The writer knows nothing about arms: it receives the response text under each label.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._gc import collector_paused
from ..errors import SheetflowError, close_workbook, known_name
from ..spec.rubric import Dimension
from ..workbook import layout as L
from ..workbook import sent_cells
from . import pages
from .answer_lines import AnswerLines
from .answer_rules import PROTECT, AnswerRules
from .book import StructureLockedWorkbook, content_cells, fixed_digest, write_identity
from .case_headings import CaseHeadings
from .flag_notes import FlagNotes
from .guides import flags_needing_notes, legend
from .instructions import TextSheet, write_text_sheets
from .rules import Pos, Validations, _col, boxes, grouped_refs
from .text import LINE_POINTS, TextCache, clip, row_points, split_text, utf16_len
from .timed_rows import TimedRows

HEADER_POINTS = (24.0, LINE_POINTS, 30.0, LINE_POINTS)  # title, progress, legend, headings

__all__ = ["CardSpec", "PackSpec", "TextCache", "clip", "split_text", "utf16_len",
           "write_pack"]

COLOURS = {
    "title": "#1F3864",
    "card": "#2F5597",
    "field": "#D9E1F2",
    "text": "#F2F2F2",
    "answer": "#FFF2CC",
    "blank": "#F8CBAD",
    "derived": "#E2EFDA",
    "batch": "#FCE4D6",
    "invalid": "#FF8080",
    "hint": "#CCC0DA",  # purple: a text outside its word range, allowed (collect warns)
    "done": "#00B050",
}
WIDTHS_SINGLE = {"A": 4, "B": 32, "C": 46, "D": 13, "E": 44}
WIDTHS_PAIRED = {"A": 4, "B": 32, "C": 24, "D": 13, "E": 24, "F": 13, "G": 36}
HELPER_WIDTH = 1  # the helper columns right of the guide show nothing (see layout)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class CardSpec:
    """What one card shows: an item, its case-level fields and its responses.

    ``responses`` maps a label (None in a single design) to the response text.
    """

    item_id: str
    shown: tuple[tuple[str, str, str], ...]  # (field column, label, text)
    responses: tuple[tuple[str | None, str], ...]
    code: str = ""  # what the card shows for the item: a neutral code, never the id


@dataclass(frozen=True)
class PackSpec:
    """Everything the writer needs for one workbook (no arm names, no seeds)."""

    title: str
    instructions: str
    identity: dict[str, str]
    labels: tuple[str, ...]
    dimensions: tuple[Dimension, ...]
    totals: tuple[Any, ...]
    cards: tuple[CardSpec, ...]
    batch_size: int | None
    include_study_answers: bool
    created: dt.datetime
    row_key: str
    rater_label: str = ""
    notice: str = ""  # shown first on the Instructions sheet (a second sitting's note)
    structure_password: str = ""  # locks the workbook structure (see :mod:`.book`)




class PackWriter(AnswerRules, AnswerLines, FlagNotes, TimedRows, CaseHeadings):
    """Lays out one workbook; :meth:`write` returns the manifest entry parts."""

    def __init__(self, path: Path, spec: PackSpec, texts: TextCache | None = None):
        self.path = path
        self.spec = spec
        self.texts = texts if texts is not None else TextCache()
        self.paired = bool(spec.labels)
        self.cols = L.answer_columns(spec.labels)
        self.guide_col = L.guide_column(spec.labels)
        self.done_col = L.done_column(spec.labels)
        self.bad_col = L.to_correct_column(spec.labels)
        self.marks_col = L.marks_column(spec.labels)
        self.reached_col = L.reached_column(spec.labels)
        self.notes_col = L.notes_column(spec.labels)
        self.hints_col = L.hints_column(spec.labels)
        self.helpers = L.helper_columns(spec.labels)
        self.widths = {**(WIDTHS_PAIRED if self.paired else WIDTHS_SINGLE),
                       **dict.fromkeys(self.helpers, HELPER_WIDTH)}
        self.text_cpl = int(sum(self.widths[c] for c in self._text_span_letters()) * 1.05)
        self.guide_cpl = int(self.widths[self.guide_col] * 1.25)  # guide text is 10 pt
        self.label_cpl = int(self.widths["B"] * 1.05)
        self.dims = {d.id: d for d in spec.dimensions}
        # confidence columns show only when the rubric asks for a confidence somewhere
        self.asks_confidence = any(d.confidence for d in spec.dimensions)
        self.heights: dict[tuple[str, str, bool], float] = {}
        self.one_line = self._one_line_cards()  # short texts, packed densely
        self.show_guides = True  # False on a one-line card that is not a batch's first
        self.validations = Validations()
        # the dimension behind a rule whose test needs it: a text's word range, a scale's
        # numbers (read as collect reads them)
        self.rule_dims: dict[Any, Dimension] = {}
        self.required: list[Pos] = []  # every required answer cell, once, in sheet order
        self.defaulted: list[Pos] = []  # marks whose blank is an answer (blank_means)
        self.entries: list[Pos] = []  # every answer cell (the cards reached, see layout)
        self.blank_answers: set[str] = set()  # what those blanks mean
        self.note_flags = flags_needing_notes(spec.dimensions)  # notes a flag can require
        self.flag_note_cells: dict[tuple[int, int, str], Pos] = {}  # see FlagNotes
        self.row_points: list[float] = list(HEADER_POINTS)  # every row's height, in order
        self.submission_row: int | None = None
        self.blocks: list[int] = []  # first row of each card (or batch line), unsplit
        self.cuts: list[int] = []  # each response and a card's scores with their
        # heading, all naming the case: where a card taller than a page is cut (see
        # pages.page_breaks)
        self.list_columns: dict[tuple[str, ...], str] = {}
        self.row = L.HEADER_ROWS  # 0-based index of the next free row
        self.wb = StructureLockedWorkbook(str(path), {
            "strings_to_formulas": False,
            "strings_to_urls": False,
            "strings_to_numbers": False,
        }, spec.structure_password)
        self.fmt = self._formats()
        self.what = "workbook"

    # -- plumbing ------------------------------------------------------------------------

    def check(self, code: int | None, what: str) -> None:
        """Raise when an xlsxwriter call reports failure (``-1``, ``-2``...)."""
        if code not in (0, None):
            raise SheetflowError(f"could not write {what} in {known_name(self.path.name)} "
                                 f"(xlsxwriter code {code}); the text or rule breaks an Excel "
                                 "limit")

    def _formats(self) -> dict[str, Any]:
        base = {"font_name": "Calibri", "font_size": 11, "valign": "top"}
        answer = {**base, "locked": False, "bg_color": COLOURS["answer"], "border": 1,
                  "border_color": "#BF9000"}
        specs = {
            "title": {**base, "bold": True, "font_size": 15, "font_color": COLOURS["title"]},
            "progress": {**base, "bold": True, "font_color": "#C00000"},
            "legend": {**base, "italic": True, "font_color": "#595959", "text_wrap": True},
            "colhead": {**base, "bold": True, "bg_color": "#BFBFBF", "border": 1,
                        "text_wrap": True},
            "card": {**base, "bold": True, "font_size": 12, "font_color": "#FFFFFF",
                     "bg_color": COLOURS["card"]},
            "field": {**base, "bold": True, "bg_color": COLOURS["field"], "text_wrap": True},
            "text": {**base, "text_wrap": True, "bg_color": COLOURS["text"], "border": 1,
                     "border_color": "#D9D9D9"},
            "label": {**base, "text_wrap": True, "bold": True},
            "sublabel": {**base, "text_wrap": True, "indent": 1},
            "guide": {**base, "text_wrap": True, "italic": True, "font_size": 10,
                      "font_color": "#404040"},
            "answer": {**answer, "align": "center"},
            "answer_text": {**answer, "text_wrap": True},
            "answer_time": {**answer, "align": "center", "num_format": "yyyy-mm-dd hh:mm"},
            "derived": {**base, "bold": True, "bg_color": COLOURS["derived"], "align": "center",
                        "border": 1},
            "batch": {**base, "bold": True, "bg_color": COLOURS["batch"]},
            "blank": {"bg_color": COLOURS["blank"]},
            "hint": {"bg_color": COLOURS["hint"]},
            "invalid": {"bg_color": COLOURS["invalid"], "font_color": "#9C0006",
                        "bold": True},
            "done": {"font_color": COLOURS["done"]},
            "plain": base,
            "wrap": {**base, "text_wrap": True},
            "h1": {**base, "bold": True, "font_size": 16, "font_color": COLOURS["title"],
                   "text_wrap": True},
            "h2": {**base, "bold": True, "font_size": 13, "font_color": COLOURS["card"],
                   "bottom": 1, "text_wrap": True},
            "hidden": {**base, "font_color": "#808080"},
            # the helper columns' numbers show nothing, on screen or paper (see layout)
            "count": {**base, "num_format": ";;;", "hidden": True},
        }
        return {name: self.wb.add_format(props) for name, props in specs.items()}

    def _text_span_letters(self) -> list[str]:
        return [chr(c) for c in range(ord("C"), ord(self.guide_col) + 1)]

    def _string(self, ws: Any, r: int, letter: str, text: str, fmt: Any, what: str) -> None:
        # row/column numbers, not "B12": xlsxwriter would parse every A1 string back
        self.check(ws.write_string(r, _col(letter), text, fmt), what)

    def _blank(self, pos: Pos, fmt: Any) -> None:
        """An empty answer cell: no value at all, so readers see None, not ''."""
        self.check(self.ws.write_blank(*pos, None, fmt), self.what)
        self.entries.append(pos)

    def _merged_string(self, ws: Any, row: int, first: str, last: str, text: str, fmt: Any,
                       what: str) -> None:
        c1, c2 = _col(first), _col(last)
        self.check(ws.merge_range(row, c1, row, c2, "", fmt), what)
        # merge_range writes through write(); overwrite its first cell as a plain string
        self.check(ws.write_string(row, c1, text, fmt), what)

    # -- the workbook --------------------------------------------------------------------

    def write(self) -> dict[str, Any]:
        """Write the workbook and return its manifest entry (cells and hashes)."""
        spec = self.spec
        self.wb.set_properties({**L.pack_properties(spec.title), "created": spec.created})
        self.instructions = self.wb.add_worksheet(L.INSTRUCTIONS_SHEET)
        self.ws = self.wb.add_worksheet(L.SCORING_SHEET)
        more = self.wb.add_worksheet(L.MORE_SHEET)
        self.lists: Any = None
        self._write_instructions(more)
        entry = self._write_scoring()
        write_identity(self.wb, spec.identity, self.row_table, self.check, PROTECT)
        # what collect compares a return's sheets with, to see text typed outside the
        # answer cells without opening the pack (see sheetflow.collect.outside_answers)
        entry["sheet_cells"] = {ws.get_name(): content_cells(ws)
                                for ws in (self.instructions, self.ws, more)}
        # and to see the pack's own cells typed over (sheetflow.collect.sent_cells)
        answers = sent_cells.entry_places(entry)
        entry["sheet_digests"] = {ws.get_name(): fixed_digest(ws, answers if ws is self.ws
                                                              else set())
                                  for ws in (self.instructions, self.ws, more)}
        close_workbook(self.wb, self.path)
        return entry

    def release(self) -> None:
        """Drop the workbook's parts, written or not: xlsxwriter's workbook and sheets
        refer to each other, so without this only the cyclic collector frees their
        cells, by traversing every one of them (a tenth of a 500-case pack's time)."""
        for ws in self.wb.worksheets():
            vars(ws).clear()
        vars(self.wb).clear()

    # -- instructions --------------------------------------------------------------------

    def _write_instructions(self, more: Any) -> None:
        """The Instructions and More instructions sheets (see :mod:`.instructions`)."""
        sheets = [TextSheet(ws, self.fmt, self.texts, self.check)
                  for ws in (self.instructions, more)]
        write_text_sheets(*sheets, self.spec, self.paired)
        for ws in (self.instructions, more):
            self.check(ws.protect("", PROTECT), "the instructions' protection")

    # -- scoring sheet -------------------------------------------------------------------

    def _write_scoring(self) -> dict[str, Any]:
        ws = self.ws
        for letter, width in self.widths.items():
            ws.set_column(f"{letter}:{letter}", width, None,
                          {"hidden": letter in self._hidden_columns()})
        ws.hide_gridlines(2)
        self._write_header()
        room = self._landscape_room()  # on every page of scores
        entry: dict[str, Any] = {"progress": {"sheet": L.SCORING_SHEET,
                                              "cell": L.PROGRESS_CELL},
                                 "batches": [], "cards": [], "study_answers": {}}
        self.row_table: list[tuple[str, str, str, str]] = []
        cards = self.spec.cards
        size = self.spec.batch_size
        for k, card in enumerate(cards):
            batch = k // size + 1 if size else None
            self.blocks.append(self.row)
            if size and k % size == 0:
                entry["batches"].append(self._batch_start(batch, k, size, len(cards)))
            entry["cards"].append(self._write_card(k + 1, len(cards), card, batch, room))
            if size and (k % size == size - 1 or k == len(cards) - 1):
                entry["batches"][-1]["end"] = self._batch_end(batch)
        if self.spec.include_study_answers:
            self.submission_row = self.row + 1
            entry["study_answers"] = self._write_study_answers()
        self._finish_scoring()
        return entry

    def _hidden_columns(self) -> set[str]:
        """Row ids; the confidence columns when nothing asks for one."""
        hidden = {L.ROW_ID_COLUMN}
        if not self.asks_confidence:
            hidden |= {conf for _, conf in self.cols.values()}
        return hidden

    def _write_header(self) -> None:
        ws, f = self.ws, self.fmt
        last = self.guide_col
        self._string(ws, 0, "B", self.spec.title, f["title"], "the title")
        self._string(ws, 1, "B", "Progress", f["progress"], "the progress line")
        self._merged_string(ws, 2, "B", last,
                            legend(self.spec.dimensions, bool(self.spec.batch_size),
                                   bool(self.spec.totals)),
                            f["legend"], "the legend")
        if self.paired:  # the labels' columns are headed above each case's scores, so
            # the heading repeated on every page says nothing of them (the Submission)
            self._merged_string(ws, 3, "C", chr(ord(last) - 1), "Your answers",
                                f["colhead"], "the headings")
            for letter, text in (("B", "Question"), (last, "Guide")):
                self._string(ws, 3, letter, text, f["colhead"], "the headings")
        else:
            self._column_heads(3)
        for r, points in enumerate(HEADER_POINTS):
            ws.set_row(r, points)
        ws.freeze_panes(L.HEADER_ROWS, 0)
        ws.repeat_rows(0, L.HEADER_ROWS - 1)
        ws.set_landscape()
        ws.set_paper(9)
        ws.set_margins(**pages.MARGINS)

    def _column_heads(self, r: int, first: str = "Question", last: str = "Guide") -> None:
        """Column headings on row ``r``: each label's answer (and confidence) column."""
        heads = [first]
        for label in self.cols:
            answer = f"{label}: your answer" if label else "Your answer"
            confidence = f"{label}: confidence" if label else "Confidence"
            heads += [answer, confidence if self.asks_confidence else ""]
        heads.append(last)
        for i, text in enumerate(heads):
            self.check(self.ws.write_string(r, 1 + i, text, self.fmt["colhead"]),
                       "the headings")

    def _next(self, height: float = LINE_POINTS) -> int:
        """The next free row, ``height`` points tall (set explicitly: pages add them up)."""
        r = self.row
        self.ws.set_row(r, height)
        self.row_points.append(height)
        self.row += 1
        return r

    def _cell(self, letter: str, row: int) -> str:
        return f"{letter}{row + 1}"

    def _ref(self, letter: str, row: int) -> dict[str, str]:
        return {"sheet": L.SCORING_SHEET, "cell": self._cell(letter, row)}

    def _one_line_cards(self) -> bool:
        """Whether every card shows one short response (a line or two) and nothing else
        (keep-known's items). Such cards are packed densely: the case's title line holds
        the text, and the guide beside the answers shows on the first card of each batch
        only (every answer cell's input message repeats it)."""
        if self.paired or not self.spec.cards:
            return False
        for card in self.spec.cards:
            if card.shown or len(card.responses) != 1:
                return False
            text = card.responses[0][1]
            if "\n" in text or len(text) > 2 * self.text_cpl:
                return False
        return True

    def _write_card(self, k: int, n: int, card: CardSpec, batch: int | None,
                    room: float) -> dict[str, Any]:
        """Card ``k`` of ``n``, its answer lines on landscape pages of ``room`` points
        where it is taller than a page (see :meth:`_part_full`)."""
        f = self.fmt
        self.what = f"item {card.item_id!r}"
        size = self.spec.batch_size
        self.show_guides = not self.one_line or k == 1 or bool(size and (k - 1) % size == 0)
        if self.one_line:  # the title line holds the text
            r = self._next(row_points(card.responses[0][1], self.text_cpl, 18.0))
        else:
            r = self._next(20)
        code = f" \u2014 {card.code}" if card.code else ""
        title = f"Case {k} of {n}{code}"
        if self.one_line:
            self._string(self.ws, r, "B", title, f["card"], self.what)
        else:
            self._band(r, title, f["card"])
        out: dict[str, Any] = {"card": k, "item_id": card.item_id, "code": card.code,
                               "batch": batch,
                               "title": self._ref("B", r), "locked": [], "rows": [],
                               "case_answers": {}}
        for column, label, text in card.shown:
            out["locked"].append(self._locked_field(column, label, text))
        card_hashes = [x["sha256"] for x in out["locked"]]
        rows = []
        for label, text in card.responses:
            heading = f"Response {label}" if label else "Response"
            locked = [self._one_line_field(r, heading, text) if self.one_line else
                      self._response_field(heading, text, title)]
            shown_as = card.code or card.item_id  # a row id in a pack never names the item
            base = f"{shown_as}/{label}" if label else shown_as
            row_id = L.keyed_row_id(self.spec.row_key, self.spec.identity["pack_id"], base)
            digest = L.row_digest([*card_hashes, locked[0]["sha256"]])
            rows.append({"row_id": row_id, "item_id": card.item_id, "label": label,
                         "locked": locked, "locked_sha256": digest, "answers": {},
                         "derived": {}})
            # the row table names the card as the rater sees it, never by its item id
            self.row_table.append((row_id, card.code, label or "", digest))
        self._answer_lines(rows, title, f"Case {k}{code}", room)
        out["rows"] = rows
        out["case_answers"] = self._case_answers(card)
        self._next(6)  # a thin gap between cards
        return out

    def _band(self, r: int, text: str, fmt: Any) -> None:
        """A full-width coloured line: the text in B over formatted blanks (no merge)."""
        self._string(self.ws, r, "B", text, fmt, self.what)
        for c in range(_col("C"), _col(self.guide_col) + 1):
            self.check(self.ws.write_blank(r, c, None, fmt), self.what)

    def _one_line_field(self, r: int, label: str, text: str) -> dict[str, Any]:
        """A one-line card's response, on its title line right of the title."""
        self._merged_string(self.ws, r, "C", self.guide_col, text, self.fmt["text"],
                            f"{self.what} ({label})")
        return {"field": "response", "label": label, "sheet": L.SCORING_SHEET,
                "cells": [self._cell("C", r)], "sha256": self.texts.sha256(text)}

    def _locked_field(self, column: str, label: str, text: str,
                      band: str = "") -> dict[str, Any]:
        ws, f = self.ws, self.fmt
        self._band(self._next(), band or label, f["field"])
        cells = []
        for chunk, points in self.texts.chunks(text, self.text_cpl):
            r = self._next(points)
            self._merged_string(ws, r, "C", self.guide_col, chunk, f["text"],
                                f"{self.what} ({label})")
            cells.append(self._cell("C", r))
        return {"field": column, "label": label, "sheet": L.SCORING_SHEET, "cells": cells,
                "sha256": self.texts.sha256(text)}

    def _case_answers(self, card: CardSpec) -> dict[str, Any]:
        out = {}
        for dim in (d for d in self.spec.dimensions if d.scope == "case"):
            out[dim.id] = self._wide_answer(dim)
        return out

    def _finish_scoring(self) -> None:
        ws = self.ws
        last = max(self.row, L.HEADER_ROWS + 1)
        notes, (hints, times) = self._count_notes_to_write(), self._count_hints()
        self.check(ws.write_formula(L.PROGRESS_CELL,
                                    self._progress_formula(last, notes, hints, times),
                                    self.fmt["progress"], self._progress_start()),
                   "the progress line")
        self.check(ws.conditional_format(L.PROGRESS_CELL, {
            "type": "formula", "criteria": f'=LEFT({L.PROGRESS_CELL},4)="All "',
            "format": self.fmt["done"]}), "the progress line")
        self._count_cells(self.required, self.done_col, less=True)
        self._count_cells(self.defaulted, self.marks_col)
        self._count_to_correct()
        self._mark_reached(last)
        for key, cells in self.validations.groups.items():
            for refs in grouped_refs(boxes(cells)):
                self.check(ws.data_validation(refs[0], {**self.validations.options[key],
                                                        "multi_range": " ".join(refs)}),
                           f"the answer rules ({refs[0]})")
        self._highlight_invalid()
        self._highlight_word_hints()
        self._highlight_blanks()
        self._highlight_notes()
        ws.print_area(0, 1, last, _col(self.guide_col))
        self._paginate()
        self.check(ws.protect("", PROTECT), "the Scoring sheet protection")
        ws.activate()
        self.instructions.activate()

    def _paginate(self) -> None:
        """Print at a fixed scale with page breaks between cards (see :mod:`.pages`)."""
        unprinted = self._hidden_columns() | set(self.helpers)
        shown = [w for c, w in self.widths.items() if c not in unprinted]
        header = sum(HEADER_POINTS)
        landscape, scale = pages.choose_orientation(shown, self.row_points, self.blocks,
                                                    header)
        if not landscape:
            self.ws.set_portrait()
        self.ws.set_print_scale(scale)
        if self.blocks:
            self.ws.set_h_pagebreaks(pages.page_breaks(self.row_points, self.blocks,
                                                       L.HEADER_ROWS, header, scale,
                                                       landscape, self.cuts))


# --------------------------------------------------------------------------- helpers


def write_pack(path: Path, spec: PackSpec, texts: TextCache | None = None) -> dict[str, Any]:
    """Write one rater workbook at ``path``.

    Parameters
    ----------
    path : Path
        Where to write the ``.xlsx``.
    spec : PackSpec
        The cards, rubric, identity and texts (no arm names, no seeds).
    texts : TextCache, optional
        Shared by the packs of one study so each text is split and hashed once; a
        private cache by default.

    Returns
    -------
    dict
        The layout part of the manifest entry: ``progress``, ``batches``, ``cards``,
        ``study_answers``, ``sheet_cells`` (see :mod:`sheetflow.workbook.layout`).

    Raises
    ------
    SheetflowError
        When xlsxwriter reports a failure; the message names the item or cell.
    """
    with collector_paused():
        writer = PackWriter(path, spec, texts)
        try:
            return writer.write()
        finally:
            writer.release()

