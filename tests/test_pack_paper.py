"""Packs as LibreOffice prints them: the Instructions sheet and the blank highlight.

The Instructions sheet prints on a page or two and no page of it ends on a heading.
A fresh pack shows no orange at all; once the rater answers something in a case, the
required blanks of that case and of every case before it (skipped on the way) turn
orange, and the cases after it stay plain yellow. LibreOffice prints the packs to PDF
and pdfplumber reads the text lines and the fill colour of every rectangle it drew.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pdfplumber
import pytest
from render_helpers import print_to_pdf
from roundtrip_helpers import needs_soffice

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.writer import COLOURS
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.libreoffice

TEMPLATES = ["anchored-plan", "answer-review", "judge-likert", "keep-known", "paired-rubric"]
ORANGE = tuple(int(COLOURS["blank"][i:i + 2], 16) / 255 for i in (1, 3, 5))
ANSWERED_CASE = 2  # 1-based: the case the rater has started


def _is_orange(rect: dict) -> bool:
    colour = rect.get("non_stroking_color")
    return bool(colour) and len(colour) == 3 and all(
        abs(a - b) < 0.01 for a, b in zip(colour, ORANGE, strict=True))


def _orange(pdf: Path) -> list[tuple[int, float]]:
    """(page, top) of every orange rectangle LibreOffice drew."""
    with pdfplumber.open(pdf) as doc:
        return [(n, float(r["top"])) for n, page in enumerate(doc.pages)
                for r in page.rects if _is_orange(r)]


def _title_position(pdf: Path, case: int, of: int) -> tuple[int, float]:
    """(page, top) of the title line of card ``case``."""
    with pdfplumber.open(pdf) as doc:
        for n, page in enumerate(doc.pages):
            found = page.search(f"Case {case} of {of} ")
            if found:
                return n, float(found[0]["top"])
    raise AssertionError(f"no title of case {case} in {pdf.name}")


@needs_soffice
@pytest.mark.parametrize(("template", "case_requires"), [
    ("paired-rubric", True),
    ("keep-known", False),  # a case's marks are not required; the batch's start time is
])
def test_blanks_turn_orange_only_in_the_cases_reached(tmp_path, template, case_requires):
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / template, folder)
    result = generate_packs(folder)
    pack = read_manifest(result.manifest_path)["packs"][0]
    cards = pack["cards"]
    fresh = tmp_path / "fresh.xlsx"
    shutil.copy(result.packs[0].path, fresh)
    answer = next(a for a in L.iter_answer_cells(pack)
                  if a["item_id"] == cards[ANSWERED_CASE - 1]["item_id"]
                  and a["scope"] == "response" and a["validation"]["type"] == "list")
    wb = openpyxl.load_workbook(fresh)
    wb[answer["sheet"]][answer["cell"]] = answer["validation"]["choices"][0]
    started = tmp_path / "started.xlsx"
    wb.save(started)
    pdfs = print_to_pdf([fresh, started], tmp_path / "pdf")

    assert _orange(pdfs[fresh]) == [], "a fresh pack must show no orange"
    orange = _orange(pdfs[started])
    answered = _title_position(pdfs[started], ANSWERED_CASE, len(cards))
    after = _title_position(pdfs[started], ANSWERED_CASE + 1, len(cards))
    # the blanks before the case started (a case skipped, a batch's start time) and in
    # it are orange ...
    assert [o for o in orange if o < answered], "a blank skipped on the way shows no orange"
    if case_requires:
        assert [o for o in orange if answered <= o < after], "the started case: no orange"
    # ... and nothing after it does
    assert not [o for o in orange if o >= after], "a case not reached is orange"


def _instruction_pages(pdf: Path) -> list[list[str]]:
    """The lines of each page the Instructions sheet (printed first) fills: the pages
    before the Scoring sheet's first, which carries its progress line."""
    out = []
    with pdfplumber.open(pdf) as doc:
        for page in doc.pages:
            lines = [x.strip() for x in (page.extract_text() or "").split("\n") if x.strip()]
            if any(x.startswith("Progress ") for x in lines[:4]):
                break
            out.append(lines)
    return out


@needs_soffice
def test_instructions_print_on_a_page_or_two_never_ending_on_a_heading(tmp_path):
    books, headings = [], {}
    for template in TEMPLATES:
        folder = tmp_path / template
        shutil.copytree(ROOT / "templates" / template, folder)
        result = generate_packs(folder)
        books.append(result.packs[0].path)
        ws = openpyxl.load_workbook(books[-1])[L.INSTRUCTIONS_SHEET]
        headings[books[-1]] = {str(c.value).strip() for c in ws["B"]
                               if c.value is not None and c.font.sz >= 12}
    for book, pdf in print_to_pdf(books, tmp_path / "pdf").items():
        pages = _instruction_pages(pdf)
        assert 1 <= len(pages) <= 2, (book.stem, len(pages))
        assert not {page[-1] for page in pages} & headings[book], (book.stem, pages)
        assert {"Before you start", "What you score on each case"} <= set(pages[0])
