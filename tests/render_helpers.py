"""Print workbooks with LibreOffice and read what landed on paper.

:func:`print_to_pdf` prints ``.xlsx`` files as LibreOffice prints them (its own page
setup: orientation, scale, repeated rows, page breaks); :func:`paper_faults` reads the
PDF back with pdfplumber and lists what a reader of the paper would stumble on: text
smaller than :data:`MIN_POINTS`, a cell's text not on paper whole (cut by its
neighbour, by its row height or by the page), a glyph beyond the page's edges, a number
shown as ``###``, a chart split over two pages.

LibreOffice leaves out the glyphs of a cell's text that fall outside the cell it may
use, and writes each cell's text as one run of glyphs in the page's content stream; so a
cell's text (blanks left out) is on paper whole exactly when it is a substring of the
glyph runs of the document.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pdfplumber
from roundtrip_helpers import find_soffice, libreoffice_profile

MIN_POINTS = 7.0
_BLANKS = re.compile(r"\s+")
TIMEOUT = 600


def print_to_pdf(files: list[Path], out: Path) -> dict[Path, Path]:
    """Each of ``files`` printed to PDF in ``out`` by one headless LibreOffice run."""
    out.mkdir(parents=True, exist_ok=True)
    soffice = find_soffice()
    assert soffice, "LibreOffice (soffice) is needed to print the workbooks"
    subprocess.run([soffice, f"-env:UserInstallation={libreoffice_profile(out).as_uri()}",
                    "--headless", "--convert-to", "pdf", "--outdir", str(out),
                    *map(str, files)], check=True, timeout=TIMEOUT, capture_output=True)
    pdfs = {f: out / (f.stem + ".pdf") for f in files}
    missing = [str(f) for f, p in pdfs.items() if not p.exists()]
    assert not missing, f"LibreOffice printed no PDF for {missing}"
    return pdfs


@dataclass
class Paper:
    """What one PDF holds: per page, the smallest text and its glyphs in stream order."""

    pages: list[str]
    smallest: list[float]
    off_page: list[str]  # per page, the glyphs printed beyond its edges

    @classmethod
    def read(cls, pdf: Path) -> Paper:
        pages, smallest, off_page = [], [], []
        with pdfplumber.open(pdf) as doc:
            for page in doc.pages:
                glyphs = [c for c in page.chars if c["text"].strip()]
                pages.append("".join(c["text"] for c in glyphs))
                smallest.append(min((_points(c) for c in glyphs), default=99.0))
                off_page.append("".join(c["text"] for c in glyphs if _beyond(c, page)))
        return cls(pages, smallest, off_page)


def _beyond(char: dict, page: object) -> bool:
    """Whether a glyph lies (by more than half a point) outside its page."""
    return (char["x0"] < -0.5 or char["top"] < -0.5 or char["x1"] > page.width + 0.5
            or char["bottom"] > page.height + 0.5)


def _points(char: dict) -> float:
    """A glyph's printed font size, turned or not: pdfplumber's ``size`` is the glyph's
    extent across its line only for upright text; for text turned a quarter (an axis
    title) that extent is the box's width on the page."""
    return float(char["size"]) if char["upright"] else float(char["x1"] - char["x0"])


def cell_texts(xlsx: Path) -> list[tuple[str, str, str]]:
    """(sheet, cell, text without blanks) of every text cell a printout shows: on
    visible sheets, not in hidden rows or columns."""
    wb = openpyxl.load_workbook(xlsx)
    out = []
    for ws in wb.worksheets:
        if ws.sheet_state != "visible":
            continue
        hidden_cols = {k for k, d in ws.column_dimensions.items() if d.hidden}
        hidden_rows = {k for k, d in ws.row_dimensions.items() if d.hidden}
        for row in ws.iter_rows():
            for cell in row:
                if not isinstance(cell.value, str) or cell.data_type == "f":
                    continue
                if cell.column_letter in hidden_cols or cell.row in hidden_rows:
                    continue
                text = _BLANKS.sub("", cell.value)
                if text:
                    out.append((ws.title, cell.coordinate, text))
    return out


def chart_titles(xlsx: Path) -> list[str]:
    """The title of every chart in ``xlsx`` (blanks left out), read from its XML."""
    import zipfile

    titles = []
    with zipfile.ZipFile(xlsx) as z:
        for name in z.namelist():
            if re.fullmatch(r"xl/charts/chart\d+\.xml", name):
                xml = z.read(name).decode("utf-8")
                title = re.search(r"<c:title>.*?</c:title>", xml, re.S)
                if title:
                    titles.append(_BLANKS.sub("", "".join(
                        re.findall(r"<a:t>([^<]*)</a:t>", title.group(0)))))
    return titles


def paper_faults(xlsx: Path, pdf: Path, *, min_points: float = MIN_POINTS) -> list[str]:
    """Every fault a reader of ``xlsx`` printed as ``pdf`` would meet (empty: none)."""
    paper = Paper.read(pdf)
    faults = [f"page {n}: text at {size:.1f} pt (< {min_points} pt)"
              for n, size in enumerate(paper.smallest, start=1) if size < min_points - 0.05]
    faults += [f"page {n}: a number shown as ###" for n, text in enumerate(paper.pages, 1)
               if "###" in text]
    faults += [f"page {n}: {text[:60]!r} off the page"
               for n, text in enumerate(paper.off_page, 1) if text]
    whole = "\x00".join(paper.pages)
    faults += [f"{sheet}!{cell}: text not whole on paper: {text[:60]!r}"
               for sheet, cell, text in cell_texts(xlsx)
               if text not in whole and not _split_by_page(text, paper.pages)]
    for title in chart_titles(xlsx):
        count = Counter(title in page for page in paper.pages)[True]
        if count != 1:
            faults.append(f"chart {title!r} on {count} pages (one wanted)")
    return faults


def _split_by_page(text: str, pages: list[str]) -> bool:
    """Whether ``text`` runs from the end of one page into the next (a long wrapped
    cell continued on the following page is whole on paper)."""
    return any(text in pages[i][-len(text):] + pages[i + 1][:len(text)]
               for i in range(len(pages) - 1))


def summary(faults: dict[str, list[str]], limit: int = 40) -> str:
    lines = [f"{name}: {f}" for name, fs in faults.items() for f in fs]
    return "\n".join(lines[:limit]) + (f"\n... {len(lines) - limit} more"
                                       if len(lines) > limit else "")




