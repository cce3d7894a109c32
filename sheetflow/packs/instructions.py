"""The two text sheets of a pack: what a rater needs before scoring, and the rest.

``Instructions`` (the sheet a pack opens on) holds only what a rater needs before the
first card: how to fill the workbook, what is scored on each case and, when they are
short, the study's own instructions. ``More instructions`` holds the rest: the study's
own instructions when they are long, the rubric in detail and more about the
workbook. Nothing is read from either sheet.

Each paragraph is one row of column B (a long one in consecutive rows; the study's own
text is read into paragraphs by :func:`study_paragraphs`), every row's
height set, so the rows' heights add up to the printed length. The sheets print at a
fixed scale with manual page breaks (Excel ignores those under "fit to page", see
:mod:`.pages`), so a heading always starts a page with the paragraph after it and is
never the last line of one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..workbook import layout as L
from ..workbook.printing import text_lines
from . import pages
from .guides import (
    answer_label,
    flags_needing_notes,
    how_to_lines,
    note_requirement,
    rubric_lines,
    rule_text,
)
from .text import LINE_POINTS, MAX_ROW_POINTS, TextCache, estimate_lines

TEXT_WIDTH = 76  # characters: column B of both sheets, a portrait page at about 96%
CHARS_PER_LINE = 90  # of prose at 11 pt in it (digits are wider than most letters)
SHORT_INSTRUCTIONS = 1500  # characters: a study's own text this short stays on page 1
HEADING_SIZES = {"h1": 16, "h2": 13}  # font points of the heading styles (the writer's)
BULLET = "\u2022 "
CASES_PLACEHOLDER = "{n_cases}"
"""Stands for the number of cases in the rater's workbook in the study's instructions
(as in the invitation's subject and body, :func:`sheetflow.packs.mail.fill`)."""
BATCH_PLACEHOLDER = "{batch_size}"
"""Stands for ``[design] batch_size``, the cards in each batch, in the study's
instructions (and the invitation's subject and body); the spec loader refuses a text
using it in a study without batches (there is no count to say)."""


class TextSheet:
    """One printed sheet of paragraphs in column B, headings kept with what follows."""

    def __init__(self, ws: Any, fmt: dict[str, Any], texts: TextCache,
                 check: Callable[[int | None, str], None]) -> None:
        self.ws, self.fmt, self.texts, self.check = ws, fmt, texts, check
        self.heights: list[float] = []  # every row's height, index = row
        self.blocks: list[int] = []  # first row of each part never split over pages
        self.keep_next = False  # the next paragraph joins the heading's block
        ws.set_column("A:A", 2)
        ws.set_column("B:B", TEXT_WIDTH)
        ws.hide_gridlines(2)

    def gap(self) -> None:
        """A half-line space (it joins the part before it)."""
        self._row("", self.fmt["plain"], LINE_POINTS / 2)

    def heading(self, text: str, style: str = "h2") -> None:
        """A heading, printed on the same page as the paragraph after it."""
        self.para(text, style)
        self.keep_next = True

    def para(self, text: str, style: str = "wrap", keep_next: bool = False) -> None:
        """A paragraph: one row, or consecutive rows when longer than one cell shows.

        An empty line joins the part before it; ``keep_next`` keeps the paragraph on
        the page of the next one (a heading, a line leading into a list).
        """
        if not text.strip():  # a blank line of the study's text: half a line of space
            self._row(text, self.fmt[style], LINE_POINTS / 2)
            return
        if not self.keep_next:
            self.blocks.append(len(self.heights))
        self.keep_next = keep_next
        for chunk, _ in self.texts.chunks(text, CHARS_PER_LINE):
            self._row(chunk, self.fmt[style], _heading_points(chunk, style) or
                      _text_points(chunk))

    def _row(self, text: str, fmt: Any, points: float) -> None:
        row = len(self.heights)
        if text:
            self.check(self.ws.write_string(row, 1, text, fmt), "the instructions")
        self.ws.set_row(row, points)
        self.heights.append(points)

    def finish(self) -> None:
        """Print setup: A4 portrait, the scale the width allows, page breaks between
        blocks."""
        ws = self.ws
        scale = pages.print_scale([2, TEXT_WIDTH], landscape=False)
        ws.set_portrait()
        ws.set_paper(9)
        ws.set_margins(**pages.MARGINS)
        ws.set_print_scale(scale)
        breaks = pages.page_breaks(self.heights, self.blocks or [0], 0, 0.0, scale, False)
        if breaks:
            ws.set_h_pagebreaks(breaks)


def write_text_sheets(first: TextSheet, more: TextSheet, spec: Any, paired: bool) -> None:
    """Fill the Instructions sheet (``first``) and the More instructions sheet (``more``).

    Parameters
    ----------
    first, more : TextSheet
    spec : PackSpec
        The writer's pack spec (title, rater label, notice, instructions, rubric).
    paired : bool
        Whether the cards show two labelled responses.
    """
    essential, details = how_to_lines(spec, paired)
    short = len(spec.instructions) <= SHORT_INSTRUCTIONS
    first.para(spec.title, "h1")
    if spec.rater_label:
        first.para(spec.rater_label, "plain")
    if spec.notice:
        first.gap()
        first.para(spec.notice, "label")
    first.gap()
    first.heading("Before you start")
    for line in essential:
        first.para(BULLET + line)
    where = f"the '{L.MORE_SHEET}' sheet"
    if short:
        first.para(f"{BULLET}More on {where}: the rubric in detail and more about this "
                   "workbook.")
    else:
        first.para(f"{BULLET}Read the study's own instructions on {where} once before you "
                   "score; it also has the rubric in detail and more about this workbook.")
    first.gap()
    first.heading("What you score on each case")
    notes = flags_needing_notes(spec.dimensions)
    for dim in (d for d in spec.dimensions if d.scope in ("response", "case")):
        when = f" {note_requirement(notes[dim.id])}" if dim.id in notes else ""
        first.para(f"{BULLET}{answer_label(dim)}: {_one_line(rule_text(dim))}{when}")
    if short and spec.instructions.strip():
        first.gap()
        _study_text(first, spec.instructions)
    first.finish()

    more.para(spec.title, "h1")
    more.para(f"More instructions: read '{L.INSTRUCTIONS_SHEET}' first.", "plain")
    if not short:
        more.gap()
        _study_text(more, spec.instructions)
    more.gap()
    more.heading("The rubric in detail")
    # a later sitting has no Submission area: its study questions were asked once
    asked = [d for d in spec.dimensions if d.scope != "study" or spec.include_study_answers]
    for dim in asked:
        more.heading(answer_label(dim), "label")
        for line in rubric_lines(dim, notes.get(dim.id, ())):
            more.para(line)
    more.gap()
    more.heading("More about this workbook")
    for line in details:
        more.para(BULLET + line)
    more.finish()


def _text_points(text: str) -> float:
    """The height of a row of body text: its lines wrapped word by word, a character
    counted as wide as a digit (a long word such as an address breaks where it must,
    which a count of characters alone misses), capped at Excel's tallest row."""
    return min(MAX_ROW_POINTS, text_lines(text, TEXT_WIDTH) * LINE_POINTS + 3)


def _heading_points(text: str, style: str) -> float:
    """The height of a heading row (its larger font wraps sooner), or 0 for body text."""
    size = HEADING_SIZES.get(style)
    if size is None:
        return 0.0
    lines = estimate_lines(text, int(CHARS_PER_LINE * 11 / size))
    return lines * size * 1.35 + 6


def with_case_count(instructions: str, cases: int) -> str:
    """The study's instructions with :data:`CASES_PLACEHOLDER` saying ``cases``, the
    number of cases in this workbook: a template's text must not name a count of its
    own sample study's items ("all 18 test cases") to a study of another size."""
    return instructions.replace(CASES_PLACEHOLDER, str(cases))


def with_batch_size(instructions: str, batch_size: int | None) -> str:
    """The study's instructions with :data:`BATCH_PLACEHOLDER` saying ``batch_size``,
    the cards in each batch of this workbook: a template's "one batch of 20" would be
    untrue of a pack batched by another size. Left as written without batches (which
    the spec loader refuses)."""
    if batch_size is None:
        return instructions
    return instructions.replace(BATCH_PLACEHOLDER, str(batch_size))


def _study_text(sheet: TextSheet, instructions: str) -> None:
    """The study's own instructions, one row per paragraph (see
    :func:`study_paragraphs`); a line that reads as a heading or leads into what follows
    is kept on the page of the next one."""
    sheet.heading("The study's instructions")
    for line in study_paragraphs(instructions):
        sheet.para(line, keep_next=_leads_on(line))


def study_paragraphs(text: str) -> list[str]:
    """The study's text as paragraphs, the way Markdown reads it: lines broken by a
    single line end are one paragraph (text hard-wrapped in ``study.toml`` is not
    shown one row per line, with gaps mid-sentence), a blank line stays a gap (""),
    and a line starting a list item ("- ", "* ", "\u2022 ", "1. ", "a) ") starts a new
    one."""
    out: list[str] = []
    joining = False  # whether the next line may join the last paragraph
    for line in text.split("\n"):
        if not line.strip():
            out.append(line)
            joining = False
        elif joining and not _LIST_ITEM.match(line):
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line.rstrip())
            joining = True
    return out


_LIST_ITEM = re.compile(r"\s*([-*+\u2022\u2013]|\d{1,3}[.)]|[a-zA-Z][.)])\s")
"""The start of a list item: a bullet, or a number or letter with a dot or bracket."""


def _leads_on(line: str) -> bool:
    """Whether a line of the study's text reads as a heading or a list's lead-in: short
    and not ending a sentence ("Step 1: Familiarization", "Checklist (1 point each):")."""
    text = line.strip()
    return 0 < len(text) <= 80 and not text.endswith((".", "!", "?", '"', "\u201d"))


def _one_line(text: str) -> str:
    """A rule text on one line (a scale's anchors become ``1 = ...; 2 = ...``)."""
    return "; ".join(part for part in text.split("\n") if part)
