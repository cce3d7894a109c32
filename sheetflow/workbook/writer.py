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
import gc
import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import xlsxwriter
from xlsxwriter.utility import xl_col_to_name

from ..errors import SheetflowError
from ..rubric import Dimension
from . import layout as L

MAX_LINES = 26  # 26 lines x 15 pt stays under Excel's 409-point row height
LINE_POINTS = 15.0
MAX_ROW_POINTS = 409.0
TITLE_LIMIT = 32
GROUP_SIZE = 250  # ranges per validation / conditional-format element
COUNT_ARGS = 255  # Excel's most arguments to one function (COUNTA)

COLOURS = {
    "title": "#1F3864",
    "card": "#2F5597",
    "field": "#D9E1F2",
    "text": "#F2F2F2",
    "answer": "#FFF2CC",
    "blank": "#F8CBAD",
    "derived": "#E2EFDA",
    "batch": "#FCE4D6",
}
WIDTHS_SINGLE = {"A": 4, "B": 32, "C": 46, "D": 13, "E": 44, "F": 4}
WIDTHS_PAIRED = {"A": 4, "B": 32, "C": 24, "D": 13, "E": 24, "F": 13, "G": 36, "H": 4}


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


# --------------------------------------------------------------------------- text


_TOKEN = re.compile(r"\S+[^\S\n]*\n?|[^\S\n]+\n?|\n")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Excel counts."""
    return len(text.encode("utf-16-le")) // 2


def split_text(text: str, chars_per_line: int, limit: int = L.CHUNK_CHARS,
               max_lines: int = MAX_LINES) -> tuple[str, ...]:
    """Split ``text`` into display chunks that concatenate back to it exactly.

    Parameters
    ----------
    text : str
    chars_per_line : int
        Estimated characters per wrapped line of the target cell.
    limit : int
        Most characters per chunk.
    max_lines : int
        Most estimated wrapped lines per chunk.

    Returns
    -------
    tuple of str
        At least one chunk (``("",)`` for empty text).
    """
    chunks: list[str] = []
    current: list[str] = []
    size, closed, open_len = 0, 0, 0
    for token in _tokens(text, min(limit, chars_per_line * max_lines)):
        t_closed, t_open = _advance(closed, open_len, token, chars_per_line)
        lines = t_closed + max(1, math.ceil(t_open / chars_per_line))
        if current and (size + len(token) > limit or lines > max_lines):
            chunks.append("".join(current))
            current, size, closed, open_len = [], 0, 0, 0
            t_closed, t_open = _advance(0, 0, token, chars_per_line)
        current.append(token)
        size += len(token)
        closed, open_len = t_closed, t_open
    chunks.append("".join(current))
    if "".join(chunks) != text:  # a guard on the promise that nothing is lost
        raise SheetflowError("internal error: text split lost characters")
    return tuple(chunks)


def _tokens(text: str, longest: int) -> list[str]:
    """Words with their trailing blanks (at most one newline each), long ones cut."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        out.extend(token[i:i + longest] for i in range(0, len(token), longest))
    return out


def _advance(closed: int, open_len: int, token: str, cpl: int) -> tuple[int, int]:
    """Wrapped-line counters after appending ``token`` (closed lines, open length)."""
    if token.endswith("\n"):
        return closed + max(1, math.ceil((open_len + len(token) - 1) / cpl)), 0
    return closed, open_len + len(token)


def estimate_lines(text: str, chars_per_line: int) -> int:
    """Wrapped lines ``text`` needs in a cell ``chars_per_line`` wide."""
    return sum(max(1, math.ceil(len(part) / chars_per_line)) for part in text.split("\n"))


def row_points(text: str, chars_per_line: int, minimum: float = LINE_POINTS) -> float:
    """A row height that shows ``text`` whole (capped at Excel's maximum)."""
    return min(MAX_ROW_POINTS, max(minimum, estimate_lines(text, chars_per_line) * LINE_POINTS
                                   + 3))


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-16 units (with an ellipsis when cut)."""
    if utf16_len(text) <= limit:
        return text
    out = text
    while utf16_len(out) > limit - 1:
        out = out[: max(0, len(out) - max(1, utf16_len(out) - limit + 1))]
    return out + "\u2026"


# --------------------------------------------------------------------------- writer


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during the block, then collect its cycles.

    A workbook holds some 10^5 cell objects until it is saved, none of them garbage; as
    they pile up the collector would traverse them (and everything else alive) again and
    again. Reference counting frees everything else as usual. Everything the block
    allocated is still in the youngest generation afterwards, so one young collection
    frees the cycles it left (xlsxwriter's workbook and sheets refer to each other)
    before the next workbook is built. The collector's previous state is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


Pos = tuple[int, int]  # (row, column), 0-based
Box = tuple[int, int, int, int]  # (first row, first column, last row, last column)


class TextCache:
    """Display chunks, row heights and hashes of texts, each computed once.

    The packs of one study show the same item texts to every rater, in other orders and
    under other labels. One cache shared by all packs of a ``generate`` run splits and
    hashes each text once instead of once per rater; drop it when the run ends.
    """

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, int], tuple[tuple[str, float], ...]] = {}
        self._sha256: dict[str, str] = {}

    def chunks(self, text: str, chars_per_line: int) -> tuple[tuple[str, float], ...]:
        """``text``'s :func:`split_text` chunks, each with its :func:`row_points` height.

        Parameters
        ----------
        text : str
        chars_per_line : int
            Estimated characters per wrapped line of the target cell.

        Returns
        -------
        tuple of (str, float)
        """
        key = (text, chars_per_line)
        found = self._chunks.get(key)
        if found is None:
            found = tuple((chunk, row_points(chunk, chars_per_line))
                          for chunk in split_text(text, chars_per_line))
            self._chunks[key] = found
        return found

    def sha256(self, text: str) -> str:
        """:func:`~.layout.text_sha256` of ``text``."""
        found = self._sha256.get(text)
        if found is None:
            found = self._sha256[text] = L.text_sha256(text)
        return found


@dataclass
class _Validations:
    """Cells grouped by identical validation, written as few elements as possible.

    Rules are keyed by what defines them (dimension, question, choices), so each rule's
    options are built once per workbook, not once per cell.
    """

    groups: dict[Hashable, list[Pos]] = field(default_factory=dict)
    options: dict[Hashable, dict[str, Any]] = field(default_factory=dict)
    described: dict[Hashable, dict[str, Any]] = field(default_factory=dict)

    def add(self, pos: Pos, key: Hashable,
            build: Callable[[], tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
        """Put the cell at ``pos`` under rule ``key`` (built on first use); describe it."""
        if key not in self.options:
            self.options[key], self.described[key] = build()
            self.groups[key] = []
        self.groups[key].append(pos)
        return self.described[key]


class PackWriter:
    """Lays out one workbook; :meth:`write` returns the manifest entry parts."""

    def __init__(self, path: Path, spec: PackSpec, texts: TextCache | None = None):
        self.path = path
        self.spec = spec
        self.texts = texts if texts is not None else TextCache()
        self.paired = bool(spec.labels)
        self.cols = L.answer_columns(spec.labels)
        self.guide_col = L.guide_column(spec.labels)
        self.done_col = L.done_column(spec.labels)
        self.widths = WIDTHS_PAIRED if self.paired else WIDTHS_SINGLE
        self.text_cpl = int(sum(self.widths[c] for c in self._text_span_letters()) * 1.05)
        self.guide_cpl = int(self.widths[self.guide_col] * 1.4)  # guide text is 9 pt
        self.label_cpl = int(self.widths["B"] * 1.05)
        self.dims = {d.id: d for d in spec.dimensions}
        self.heights: dict[tuple[str, str, bool], float] = {}
        self.validations = _Validations()
        self.required: list[Pos] = []  # every required answer cell, once, in sheet order
        self.list_columns: dict[tuple[str, ...], str] = {}
        self.row = L.HEADER_ROWS  # 0-based index of the next free row
        self.wb = xlsxwriter.Workbook(str(path), {
            "strings_to_formulas": False,
            "strings_to_urls": False,
            "strings_to_numbers": False,
        })
        self.fmt = self._formats()
        self.what = "workbook"

    # -- plumbing ------------------------------------------------------------------------

    def check(self, code: int | None, what: str) -> None:
        """Raise when an xlsxwriter call reports failure (``-1``, ``-2``...)."""
        if code not in (0, None):
            raise SheetflowError(f"could not write {what} in {self.path.name} "
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
            "guide": {**base, "text_wrap": True, "italic": True, "font_size": 9,
                      "font_color": "#404040"},
            "answer": {**answer, "align": "center"},
            "answer_text": {**answer, "text_wrap": True},
            "answer_time": {**answer, "align": "center", "num_format": "yyyy-mm-dd hh:mm"},
            "derived": {**base, "bold": True, "bg_color": COLOURS["derived"], "align": "center",
                        "border": 1},
            "batch": {**base, "bold": True, "bg_color": COLOURS["batch"]},
            "blank": {"bg_color": COLOURS["blank"]},
            "plain": base,
            "wrap": {**base, "text_wrap": True},
            "h1": {**base, "bold": True, "font_size": 16, "font_color": COLOURS["title"]},
            "h2": {**base, "bold": True, "font_size": 13, "font_color": COLOURS["card"],
                   "bottom": 1},
            "hidden": {**base, "font_color": "#808080"},
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
        self.wb.set_properties({"title": spec.title, "author": "sheetflow",
                                "comments": "Rater workbook generated by sheetflow",
                                "created": spec.created})
        self.instructions = self.wb.add_worksheet(L.INSTRUCTIONS_SHEET)
        self.ws = self.wb.add_worksheet(L.SCORING_SHEET)
        self.lists: Any = None
        self._write_instructions()
        entry = self._write_scoring()
        self._write_identity(entry)
        try:
            self.wb.close()
        except Exception as exc:  # xlsxwriter raises its own exception types on close
            raise SheetflowError(f"could not save {self.path.name}: {exc}") from exc
        return entry

    # -- instructions --------------------------------------------------------------------

    def _write_instructions(self) -> None:
        ws = self.instructions
        ws.set_column("A:A", 2)
        ws.set_column("B:B", 100)
        ws.hide_gridlines(2)
        ws.set_landscape()
        ws.fit_to_pages(1, 0)
        row = 0
        row = self._para(ws, row, self.spec.title, self.fmt["h1"])
        if self.spec.rater_label:
            row = self._para(ws, row, self.spec.rater_label, self.fmt["plain"])
        row = self._para(ws, row + 1, "Study instructions", self.fmt["h2"])
        for line in self.spec.instructions.split("\n"):
            row = self._para(ws, row, line, self.fmt["wrap"])
        row = self._para(ws, row + 1, "How to use this workbook", self.fmt["h2"])
        for line in self._how_to():
            row = self._para(ws, row, "\u2022 " + line, self.fmt["wrap"])
        row = self._para(ws, row + 1, "The rubric", self.fmt["h2"])
        for dim in self.spec.dimensions:
            row = self._para(ws, row, dim.label, self.fmt["label"])
            for line in _rubric_lines(dim):
                row = self._para(ws, row, line, self.fmt["wrap"])
        self.check(ws.protect("", _PROTECT), "the Instructions sheet protection")

    def _para(self, ws: Any, row: int, text: str, fmt: Any) -> int:
        for chunk, points in self.texts.chunks(text, 100):
            self.check(ws.write_string(row, 1, chunk, fmt), "the instructions")
            if "\n" in chunk or len(chunk) > 100:
                ws.set_row(row, points)
            row += 1
        return row

    def _how_to(self) -> list[str]:
        dims = self.spec.dimensions
        lines = [
            f"Go to the '{L.SCORING_SHEET}' sheet. Each case is a card: read the grey text, "
            "then fill in the yellow cells on its answer lines. Only the yellow cells can be "
            "changed.",
            "Orange cells are required answers that are still blank. The red progress line at "
            "the top of the sheet counts the required answers you have filled.",
            "Cells with a dropdown: click the cell and pick from the arrow. Number cells take a "
            "whole number in the range shown when you click the cell. Anything else is refused.",
        ]
        if self.paired:
            a, b = self.spec.labels
            lines.append(f"Each case shows two responses, labelled {a} and {b}. The labels are "
                         "assigned at random for each case; score each response on its own "
                         f"lines ({a} in the left answer columns, {b} in the right ones).")
        if any(d.confidence for d in dims):
            lines.append("Where a Confidence cell is shown beside a score, choose Low, Medium "
                         "or High: how sure you are of that score.")
        if any(d.kind == "checklist" for d in dims):
            lines.append("Checklist questions: answer Yes or No to each question.")
        if any(d.kind == "text" for d in dims):
            lines.append("Text cells (notes) take free text; the word range, if any, is shown "
                         "when you click the cell.")
        if self.spec.totals:
            lines.append("Green cells show points and totals computed from your answers, for "
                         "your convenience; they are recomputed when your workbook is "
                         "collected.")
        if self.spec.batch_size:
            lines.append(f"Cards come in batches of {self.spec.batch_size}. Type the date and "
                         "time (yyyy-mm-dd hh:mm, e.g. 2026-11-02 14:05) when you start each "
                         "batch and when you finish it.")
        if self.spec.include_study_answers and any(d.scope == "study" for d in dims):
            lines.append("After the last card, answer the study-level questions at the bottom "
                         f"of the '{L.SCORING_SHEET}' sheet.")
        lines += [
            "Type or pick answers; do not paste into answer cells (pasting can remove the "
            "dropdown rules) and do not type formulas.",
            "Do not rename, add, move or delete sheets, rows or columns, and do not rename the "
            "file.",
            "When you are done, save the workbook as .xlsx (File > Save) and email it back to "
            "the study coordinator as an attachment.",
        ]
        return lines

    # -- scoring sheet -------------------------------------------------------------------

    def _write_scoring(self) -> dict[str, Any]:
        ws = self.ws
        for letter, width in self.widths.items():
            hidden = letter in (L.ROW_ID_COLUMN, self.done_col)
            ws.set_column(f"{letter}:{letter}", width, None, {"hidden": hidden})
        ws.hide_gridlines(2)
        self._write_header()
        entry: dict[str, Any] = {"progress": {"sheet": L.SCORING_SHEET,
                                              "cell": L.PROGRESS_CELL},
                                 "batches": [], "cards": [], "study_answers": {}}
        self.row_table: list[tuple[str, str, str, str]] = []
        cards = self.spec.cards
        size = self.spec.batch_size
        for k, card in enumerate(cards):
            batch = k // size + 1 if size else None
            if size and k % size == 0:
                entry["batches"].append(self._batch_start(batch, k, size, len(cards)))
            entry["cards"].append(self._write_card(k + 1, len(cards), card, batch))
            if size and (k % size == size - 1 or k == len(cards) - 1):
                entry["batches"][-1]["end"] = self._batch_end(batch)
        if self.spec.include_study_answers:
            entry["study_answers"] = self._write_study_answers()
        self._finish_scoring()
        return entry

    def _write_header(self) -> None:
        ws, f = self.ws, self.fmt
        last = self.guide_col
        self._merged_string(ws, 0, "B", last, self.spec.title, f["title"], "the title")
        ws.set_row(0, 24)
        self._string(ws, 1, "B", "Progress", f["progress"], "the progress line")
        legend = ("Yellow: your answers. Orange: required and still blank. Grey: the material "
                  "to judge (locked). Green: computed for you.")
        self._merged_string(ws, 2, "B", last, legend, f["legend"], "the legend")
        heads = ["Question"]
        for label, _ in self.cols.items():
            prefix = f"{label}: " if label else ""
            heads += [f"{prefix}answer", f"{prefix}confidence"]
        heads.append("Guide")
        for i, text in enumerate(heads):
            self.check(ws.write_string(3, 1 + i, text, f["colhead"]), "the headings")
        ws.freeze_panes(L.HEADER_ROWS, 0)
        ws.repeat_rows(0, L.HEADER_ROWS - 1)
        ws.set_landscape()
        ws.set_paper(9)
        ws.fit_to_pages(1, 0)
        ws.set_margins(left=0.4, right=0.4, top=0.5, bottom=0.5)

    def _next(self, height: float | None = None) -> int:
        r = self.row
        if height is not None:
            self.ws.set_row(r, height)
        self.row += 1
        return r

    def _cell(self, letter: str, row: int) -> str:
        return f"{letter}{row + 1}"

    def _ref(self, letter: str, row: int) -> dict[str, str]:
        return {"sheet": L.SCORING_SHEET, "cell": self._cell(letter, row)}

    def _write_card(self, k: int, n: int, card: CardSpec, batch: int | None) -> dict[str, Any]:
        ws, f = self.ws, self.fmt
        self.what = f"item {card.item_id!r}"
        r = self._next(20)
        title = f"Case {k} of {n}" + (f" \u2014 {card.code}" if card.code else "")
        self._merged_string(ws, r, "B", self.guide_col, title, f["card"], self.what)
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
            locked = [self._locked_field("response", heading, text)]
            shown_as = card.code or card.item_id  # a row id in a pack never names the item
            base = f"{shown_as}/{label}" if label else shown_as
            row_id = L.keyed_row_id(self.spec.row_key, self.spec.identity["pack_id"], base)
            digest = L.row_digest([*card_hashes, locked[0]["sha256"]])
            rows.append({"row_id": row_id, "item_id": card.item_id, "label": label,
                         "locked": locked, "locked_sha256": digest, "answers": {},
                         "derived": {}})
            self.row_table.append((row_id, card.item_id, label or "", digest))
        self._answer_lines(rows, card)
        out["rows"] = rows
        out["case_answers"] = self._case_answers(card)
        self._next(6)  # a thin gap between cards
        return out

    def _locked_field(self, column: str, label: str, text: str) -> dict[str, Any]:
        ws, f = self.ws, self.fmt
        r = self._next()
        self._merged_string(ws, r, "B", self.guide_col, label, f["field"], self.what)
        cells = []
        for chunk, points in self.texts.chunks(text, self.text_cpl):
            r = self._next(points)
            self._merged_string(ws, r, "C", self.guide_col, chunk, f["text"],
                                f"{self.what} ({label})")
            cells.append(self._cell("C", r))
        return {"field": column, "label": label, "sheet": L.SCORING_SHEET, "cells": cells,
                "sha256": self.texts.sha256(text)}

    # -- answers -------------------------------------------------------------------------

    def _answer_lines(self, rows: list[dict[str, Any]], card: CardSpec) -> None:
        dims = [d for d in self.spec.dimensions if d.scope == "response"]
        for dim in dims:
            if dim.kind == "checklist":
                self._checklist_lines(dim, rows)
            else:
                self._value_line(dim, rows)
        for total in self.spec.totals:
            self._total_line(total, rows)

    def _value_line(self, dim: Dimension, rows: list[dict[str, Any]]) -> None:
        guide = _guide(dim)
        r = self._next(self._line_height(dim, dim.label, guide))
        self._line_labels(r, dim.label, guide, rows)
        for row in rows:
            ans_col, conf_col = self.cols[row["label"]]
            answer = self._answer(dim, ans_col, r)
            if dim.confidence:
                answer["confidence"] = self._confidence(dim, conf_col, r)
            row["answers"][dim.id] = answer

    def _checklist_lines(self, dim: Dimension, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["answers"][dim.id] = {"kind": "checklist", "questions": []}
        for i, question in enumerate(dim.questions):
            guide = _guide(dim) if i == 0 else ""
            label = f"{dim.label}: {question}" if i == 0 else question
            r = self._next(self._line_height(dim, label, guide))
            self._line_labels(r, label, guide, rows, sub=i > 0)
            for row in rows:
                ans_col, conf_col = self.cols[row["label"]]
                pos = (r, _col(ans_col))
                validation = self._list_rule(pos, YES_NO_LIST, dim.label, question, dim.help)
                self._blank(pos, self.fmt["answer"])
                self._require(pos, dim.required)
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
            self.heights[key] = max(row_points(label, self.label_cpl, minimum),
                                    row_points(guide, self.guide_cpl, minimum))
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
        self._require(pos, dim.required)
        return {"sheet": L.SCORING_SHEET, "cell": self._cell(letter, r), "kind": dim.kind,
                "validation": validation}

    def _confidence(self, dim: Dimension, letter: str, r: int) -> dict[str, str]:
        pos = (r, _col(letter))
        self._blank(pos, self.fmt["answer"])
        self._list_rule(pos, L.CONFIDENCE_CHOICES, f"Confidence: {dim.label}",
                        "How sure are you of this score?", "")
        self._require(pos, dim.required)
        return self._ref(letter, r)

    def _dimension_rule(self, dim: Dimension, pos: Pos) -> dict[str, Any]:
        """Add the validation for ``dim`` at ``pos``; return its manifest description."""
        kind = dim.kind
        if kind in ("categorical", "binary", "flag", "preference"):
            return self._list_rule(pos, dim.entry_choices(), dim.label, "", dim.help)
        if kind == "scale" and (dim.na_choices or dim.maximum - dim.minimum <= 10):
            values = [str(v) for v in range(dim.minimum, dim.maximum + 1)]
            return self._list_rule(pos, (*values, *dim.na_choices), dim.label, "", dim.help)
        if kind in ("count", "scale", "number"):
            return self._whole_rule(pos, dim)
        return self._text_rule(pos, dim)

    def _list_rule(self, pos: Pos, choices: Sequence[str], title: str, prompt: str,
                   help_text: str) -> dict[str, Any]:
        choices = tuple(choices)

        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            shown = ", ".join(choices)
            message = " ".join(x for x in (prompt, help_text, f"Pick one: {shown}.") if x)
            options = {"validate": "list", "source": self._list_source(list(choices)),
                       **_messages(title, message, f"Pick one of: {shown}.")}
            return options, {"type": "list", "choices": list(choices)}

        return self.validations.add(pos, ("list", choices, title, prompt, help_text), build)

    def _whole_rule(self, pos: Pos, dim: Dimension) -> dict[str, Any]:
        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            lo, hi = dim.minimum or 0, dim.maximum
            if hi is None:
                rule: dict[str, Any] = {"criteria": ">=", "value": lo}
                span = f"a whole number, {lo} or more"
            else:
                rule = {"criteria": "between", "minimum": lo, "maximum": hi}
                span = f"a whole number from {lo} to {hi}"
            message = " ".join(x for x in (dim.help, f"Enter {span}.") if x)
            options = {"validate": "integer", **rule,
                       **_messages(dim.label, message, f"Enter {span}.")}
            return options, {"type": "whole", "min": lo, "max": hi}

        return self.validations.add(pos, ("whole", dim.id), build)

    def _text_rule(self, pos: Pos, dim: Dimension) -> dict[str, Any]:
        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            message = " ".join(x for x in (dim.help, _word_range(dim)) if x)
            options = {"validate": "any", **_messages(dim.label, message or "Free text.", "")}
            return options, {"type": "any"}

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
                self.check(self.lists.protect("", _PROTECT), "the lists sheet protection")
            col = len(self.list_columns)
            for i, choice in enumerate(choices):
                self.check(self.lists.write_string(i, col, choice), "a dropdown list")
            letter = xl_col_to_name(col)
            self.list_columns[key] = f"={L.LISTS_SHEET}!${letter}$1:${letter}${len(choices)}"
        return self.list_columns[key]

    def _count_done(self) -> None:
        """Count the filled required answers in the hidden done column, for the progress.

        The required cells, joined into rectangles, are counted :data:`COUNT_ARGS`
        rectangles per ``COUNTA`` (some 30 paired cards), each formula on the row of its
        first rectangle: a few dozen formulas per pack rather than one per answer line.
        At most six rectangles start on one row, so those rows all differ.
        """
        for piece in _chunks(_boxes(self.required), COUNT_ARGS):
            formula = "=COUNTA(" + ",".join(map(_a1, piece)) + ")"
            self.check(self.ws.write_formula(piece[0][0], _col(self.done_col), formula,
                                             self.fmt["hidden"], 0), "the progress line")

    def _total_line(self, total: Any, rows: list[dict[str, Any]]) -> None:
        r = self._next()
        label = f"{total.label} (computed)"
        self._string(self.ws, r, "B", label, self.fmt["label"], self.what)
        for row in rows:
            ans_col, _ = self.cols[row["label"]]
            formula = _total_formula(total, row["answers"], self.dims)
            self.check(self.ws.write_formula(r, _col(ans_col), formula, self.fmt["derived"],
                                             ""), self.what)
            row["derived"][total.id] = self._ref(ans_col, r)

    def _case_answers(self, card: CardSpec) -> dict[str, Any]:
        out = {}
        for dim in (d for d in self.spec.dimensions if d.scope == "case"):
            out[dim.id] = self._wide_answer(dim)
        return out

    def _wide_answer(self, dim: Dimension) -> dict[str, Any]:
        """A case- or study-level answer in column C (text merged up to the guide's left)."""
        guide = _guide(dim)
        r = self._next(self._line_height(dim, dim.label, guide))
        self._string(self.ws, r, "B", dim.label, self.fmt["label"], self.what)
        if guide:
            self._string(self.ws, r, self.guide_col, guide, self.fmt["guide"], self.what)
        last = chr(ord(self.guide_col) - 1)
        if dim.kind == "text" and last != "C":
            self.check(self.ws.merge_range(r, 2, r, _col(last), "", self.fmt["answer_text"]),
                       self.what)
        answer = self._answer(dim, "C", r)
        if dim.confidence:
            answer["confidence"] = self._confidence(dim, "D", r)
        return answer

    def _batch_start(self, batch: int, k: int, size: int, n: int) -> dict[str, Any]:
        last = min(n, k + size)
        r = self._next(20)
        text = f"Batch {batch} (cases {k + 1}-{last}): start time"
        self._string(self.ws, r, "B", text, self.fmt["batch"], "a batch line")
        cell = self._time_cell(r, f"Batch {batch} start")
        ids = [c.item_id for c in self.spec.cards[k:last]]
        return {"batch": batch, "row_ids": ids, "start": cell}

    def _batch_end(self, batch: int) -> dict[str, str]:
        r = self._next(20)
        self._string(self.ws, r, "B", f"Batch {batch}: end time", self.fmt["batch"],
                     "a batch line")
        cell = self._time_cell(r, f"Batch {batch} end")
        self._next(10)
        return cell

    def _time_cell(self, r: int, title: str) -> dict[str, str]:
        pos = (r, _col("C"))
        self.check(self.ws.write_blank(*pos, None, self.fmt["answer_time"]), title)
        # a date and time, never a time of day alone: protocol 001 needs 24 h between
        # sittings, which a time of day cannot show (a time alone is below the minimum)
        message = "Type the date and time as yyyy-mm-dd hh:mm, for example 2026-11-02 14:05."

        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            return {"validate": "date", "criteria": "between",
                    "minimum": dt.datetime(2000, 1, 1),
                    "maximum": dt.datetime(2099, 12, 31, 23, 59),
                    **_messages(title, message, message)}, {"type": "datetime"}

        self.validations.add(pos, ("datetime", title), build)
        self._require(pos, True)
        return self._ref("C", r)

    def _write_study_answers(self) -> dict[str, Any]:
        dims = [d for d in self.spec.dimensions if d.scope == "study"]
        if not dims:
            return {}
        r = self._next(22)
        self.what = "the study-level questions"
        self._merged_string(self.ws, r, "B", self.guide_col,
                            "Study-level questions (answer once, after the last case)",
                            self.fmt["card"], self.what)
        out = {}
        for dim in dims:
            answer = self._wide_answer(dim)
            if dim.kind == "text":
                self.ws.set_row(self.row - 1, 120)
            out[dim.id] = answer
        return out

    def _finish_scoring(self) -> None:
        ws = self.ws
        last = max(self.row, L.HEADER_ROWS + 1)
        total = len(self.required)
        formula = (f'=SUM({self.done_col}{L.HEADER_ROWS + 1}:{self.done_col}{last})&" of '
                   f'{total} required answers filled"')
        self.check(ws.write_formula(L.PROGRESS_CELL, formula, self.fmt["progress"],
                                    f"0 of {total} required answers filled"), "the progress line")
        self._count_done()
        for key, cells in self.validations.groups.items():
            for refs in _grouped_refs(_boxes(cells)):
                self.check(ws.data_validation(refs[0], {**self.validations.options[key],
                                                        "multi_range": " ".join(refs)}),
                           f"the answer rules ({refs[0]})")
        self._highlight_blanks()
        ws.print_area(0, 1, last, _col(self.guide_col))
        self.check(ws.protect("", _PROTECT), "the Scoring sheet protection")
        ws.activate()
        self.instructions.activate()

    def _highlight_blanks(self) -> None:
        """Orange while blank: a conditional format per answer column and 250 ranges.

        The rule's relative formula (``LEN(TRIM(C12))=0``) names the top-left cell of its
        first range. Grouping the ranges by first column and sorting them by row makes
        that cell the top-left of all of them, so the rule reads the same whether an
        application anchors it on the first range or on the whole area.
        """
        by_column: dict[int, list[Box]] = {}
        for box in _boxes(self.required):
            by_column.setdefault(box[1], []).append(box)
        for column in sorted(by_column):
            for refs in _grouped_refs(by_column[column]):
                self.check(self.ws.conditional_format(refs[0], {
                    "type": "blanks", "format": self.fmt["blank"],
                    "multi_range": " ".join(refs)}), "the blank-cell highlight")

    # -- identity ------------------------------------------------------------------------

    def _write_identity(self, entry: dict[str, Any]) -> None:
        ident = self.spec.identity
        ws = self.wb.add_worksheet(L.IDENTITY_SHEET)
        for i, key in enumerate(L.IDENTITY_KEYS):
            value = ident[key]
            self.check(ws.write_string(i, 0, key), "the identity sheet")
            self.check(ws.write_string(i, 1, value), "the identity sheet")
            self.check(self.wb.set_custom_property(L.identity_property(key), value, "text"),
                       "a document property")
            constant = '="' + value.replace('"', '""') + '"'
            self.check(self.wb.define_name(L.identity_name(key), constant), "a defined name")
        header = L.IDENTITY_ROW_TABLE_HEADER - 1
        for c, text in enumerate(("row_id", "item_id", "label", "sha256")):
            self.check(ws.write_string(header, c, text), "the identity sheet")
        for i, values in enumerate(self.row_table, start=L.IDENTITY_ROW_TABLE_FIRST - 1):
            for c, text in enumerate(values):
                self.check(ws.write_string(i, c, text), "the identity sheet")
        ws.very_hidden()
        self.check(ws.protect("", _PROTECT), "the identity sheet protection")


# --------------------------------------------------------------------------- helpers

YES_NO_LIST = ("Yes", "No")
_PROTECT = {"format_columns": True, "format_rows": True, "select_locked_cells": True,
            "select_unlocked_cells": True}


def _col(letter: str) -> int:
    return ord(letter) - ord("A")


T = TypeVar("T")


def _chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _boxes(cells: Iterable[Pos]) -> list[Box]:
    """``cells`` as few rectangles as possible, sorted by first row then column.

    Runs along a row are joined, then equal runs on consecutive rows are stacked (the
    Yes/No columns of a checklist's later questions, for example).
    """
    boxes: list[list[int]] = []
    stacks: dict[tuple[int, int], list[int]] = {}
    for row, first, last in _runs(sorted(set(cells))):
        box = stacks.get((first, last))
        if box is not None and box[2] == row - 1:
            box[2] = row
        else:
            box = stacks[(first, last)] = [row, first, row, last]
            boxes.append(box)
    return sorted((b[0], b[1], b[2], b[3]) for b in boxes)


def _runs(cells: list[Pos]) -> list[list[int]]:
    """``[row, first column, last column]`` of each run of adjacent sorted cells."""
    runs: list[list[int]] = []
    for row, col in cells:
        if runs and runs[-1][0] == row and runs[-1][2] == col - 1:
            runs[-1][2] = col
        else:
            runs.append([row, col, col])
    return runs


def _grouped_refs(boxes: list[Box]) -> list[list[str]]:
    """A1 references of ``boxes``, at most :data:`GROUP_SIZE` per element."""
    return _chunks([_a1(b) for b in boxes], GROUP_SIZE)


def _a1(box: Box) -> str:
    """``C12``, or ``C12:F13`` for a larger box (the Scoring sheet's columns are A-H)."""
    r1, c1, r2, c2 = box
    first = f"{_LETTERS[c1]}{r1 + 1}"
    return first if (r1, c1) == (r2, c2) else f"{first}:{_LETTERS[c2]}{r2 + 1}"


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _messages(title: str, message: str, error: str) -> dict[str, Any]:
    out = {"input_title": clip(title, TITLE_LIMIT), "input_message": clip(message, 255)}
    if error:
        out.update({"error_type": "stop", "error_title": clip(title, TITLE_LIMIT),
                    "error_message": clip(error, 255)})
    return out


def _word_range(dim: Dimension) -> str:
    lo, hi = dim.min_words, dim.max_words
    if lo is not None and hi is not None:
        return f"Write {lo}-{hi} words."
    if hi is not None:
        return f"At most {hi} words."
    if lo is not None:
        return f"At least {lo} words."
    return ""


def _guide(dim: Dimension) -> str:
    """Short guidance shown beside an answer line (bins, anchors, word range)."""
    if dim.kind == "count":
        return "Points: " + "; ".join(b.describe() for b in dim.bins)
    if dim.kind == "checklist":
        return "Yes or No for each question; 1 point per Yes."
    if dim.kind == "scale" and dim.labels:
        return "\n".join(f"{v} = {text}" for v, text in dim.labels.items())
    if dim.kind == "text":
        return _word_range(dim) or ("Optional." if not dim.required else "")
    if dim.kind == "flag":
        return f"Mark {dim.choices[0]} if it applies; otherwise leave blank."
    if dim.kind == "binary" and dim.blank_means:
        return f"Blank counts as {dim.blank_means}."
    return ""


def _rubric_lines(dim: Dimension) -> list[str]:
    lines = [dim.help] if dim.help else []
    extra = {
        "count": "Enter the count (a whole number). ",
        "checklist": "Answer Yes or No to each question: " + "; ".join(dim.questions),
        "number": f"Enter a whole number from {dim.minimum} to {dim.maximum}.",
        "scale": f"Enter a whole number from {dim.minimum} to {dim.maximum}.",
    }.get(dim.kind, "")
    if dim.kind in ("categorical", "binary", "flag", "preference"):
        extra = "Choose one of: " + ", ".join(dim.choices) + "."
    if dim.kind == "count":
        extra += _guide(dim)
    lines += [x for x in (extra, _guide(dim) if dim.kind == "scale" else "",
                          _word_range(dim)) if x]
    if dim.confidence:
        lines.append("Also give your confidence: Low, Medium or High.")
    lines.append("Required." if dim.required else "Optional.")
    return lines


def _points_expr(dim: Dimension, answer: dict[str, Any]) -> str:
    """An Excel expression giving ``dim``'s points (0 while blank)."""
    if dim.kind == "checklist":
        cells = [q["cell"] for q in answer["questions"]]
        return "+".join(f'({c}="Yes")' for c in cells)
    cell = answer["cell"]
    if dim.kind == "count":
        lows = ",".join(str(b.low) for b in dim.bins)
        points = ",".join(_num(b.points) for b in dim.bins)
        return f"IF(ISNUMBER({cell}),LOOKUP({cell},{{{lows}}},{{{points}}}),0)"
    return f"IF(ISNUMBER({cell}),{cell},0)"


def _total_formula(total: Any, answers: dict[str, Any], dims: dict[str, Dimension]) -> str:
    parts = [_points_expr(dims[d], answers[d]) for d in total.of if d in answers]
    inputs = []
    for d in total.of:
        if d in answers:
            a = answers[d]
            inputs += [q["cell"] for q in a["questions"]] if "questions" in a else [a["cell"]]
    expr = "+".join(f"({p})" for p in parts) or "0"
    if total.method == "mean" and parts:
        expr = f"({expr})/{len(parts)}"
    return f'=IF(COUNTA({",".join(inputs)})=0,"",{expr})'


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


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
        ``study_answers`` (see :mod:`sheetflow.workbook.layout`).

    Raises
    ------
    SheetflowError
        When xlsxwriter reports a failure; the message names the item or cell.
    """
    with _collector_paused():
        return PackWriter(path, spec, texts).write()

