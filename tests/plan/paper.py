"""Print a workbook with LibreOffice and read what landed on paper with poppler.

:func:`print_pdf` prints an ``.xlsx`` as LibreOffice prints it (the workbook's own page
setup). :func:`paper_faults` reads the PDF back and lists what a reader would stumble
on: text under :data:`MIN_POINTS` (the size each text run is set in, from the pages'
content streams, times its text matrix's scale), a word outside the page
(``pdftotext -bbox``), a number shown as ``###``, a text cell not whole on paper, a
chart title on other than one page.

A text cell is whole on paper when its text, blanks left out, is in the page text
``pdftotext -raw`` reads (stream order): LibreOffice writes each cell's text as one run
and leaves out the glyphs that fall outside the cell it may use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from pathlib import Path
from xml.etree import ElementTree

import openpyxl

MIN_POINTS = 7.0
_BLANKS = re.compile(r"\s+")
_NUMBER = r"-?[\d.]+(?:e-?\d+)?"


def print_pdf(xlsx: Path, out: Path) -> Path:
    """``xlsx`` printed to PDF in ``out`` by headless LibreOffice."""
    soffice = shutil.which("soffice")
    assert soffice, "LibreOffice (soffice) is needed to print the workbook"
    profile = out / "lo-profile"  # a private profile: the user's is never touched
    profile.mkdir(parents=True, exist_ok=True)
    subprocess.run([soffice, f"-env:UserInstallation={profile.as_uri()}",
                    "--headless", "--convert-to", "pdf", "--outdir", str(out), str(xlsx)],
                   check=True, timeout=300, capture_output=True)
    pdf = out / (xlsx.stem + ".pdf")
    assert pdf.exists(), f"LibreOffice printed no PDF for {xlsx}"
    return pdf


def text_sizes(pdf: Path) -> list[float]:
    """The printed size of every text run: each ``Tf`` size times the scale of the
    text matrix (``Tm``) set in its BT ... ET block (1 where none is)."""
    sizes = []
    for stream in re.findall(rb"stream\r?\n(.*?)endstream", pdf.read_bytes(), re.S):
        try:
            text = zlib.decompress(stream).decode("latin-1")
        except zlib.error:
            continue  # an image or font program, not a content stream
        for block in re.findall(r"BT(.*?)ET", text, re.S):
            scale = 1.0
            matrix = re.search(rf"({_NUMBER}) ({_NUMBER}) ({_NUMBER}) ({_NUMBER}) "
                               rf"{_NUMBER} {_NUMBER} Tm", block)
            if matrix:
                a, b, c, d = map(float, matrix.groups())
                scale = abs(a * d - b * c) ** 0.5
            sizes += [float(s) * scale for s in re.findall(rf"({_NUMBER}) Tf", block)]
    return sizes


def words(pdf: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """Per page, every word's box (x0, y0, x1, y1) and text, as ``pdftotext -bbox``
    reads them; the page's width and height come first as a word of text ''."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True,
                         capture_output=True, text=True).stdout
    xml = re.sub(r"<!DOCTYPE[^>]*>", "", xml).replace(' xmlns="http://www.w3.org/1999/xhtml"',
                                                       "")
    pages = []
    for page in ElementTree.fromstring(xml).iter("page"):
        size = (0.0, 0.0, float(page.get("width")), float(page.get("height")), "")
        pages.append([size] + [(float(w.get("xMin")), float(w.get("yMin")),
                                float(w.get("xMax")), float(w.get("yMax")), w.text or "")
                               for w in page.iter("word")])
    return pages


def page_texts(pdf: Path, count: int) -> list[str]:
    """Each page's text in stream order (``pdftotext -raw``), blanks left out."""
    return [_BLANKS.sub("", subprocess.run(
        ["pdftotext", "-raw", "-f", str(n), "-l", str(n), str(pdf), "-"], check=True,
        capture_output=True, text=True).stdout) for n in range(1, count + 1)]


def cell_texts(xlsx: Path) -> list[tuple[str, str, str]]:
    """(sheet, cell, text without blanks) of every text cell on the worksheets."""
    wb = openpyxl.load_workbook(xlsx)
    return [(ws.title, cell.coordinate, _BLANKS.sub("", cell.value))
            for ws in wb.worksheets for row in ws.iter_rows() for cell in row
            if isinstance(cell.value, str) and cell.value.strip()]


def chart_titles(xlsx: Path) -> list[str]:
    """Every chart's title (blanks left out), from the workbook's chart XML."""
    import zipfile

    titles = []
    with zipfile.ZipFile(xlsx) as z:
        for name in z.namelist():
            if re.fullmatch(r"xl/charts/chart\d+\.xml", name):
                title = re.search(r"<c:title>.*?</c:title>", z.read(name).decode(), re.S)
                if title:
                    titles.append("".join(re.findall(r"<a:t>([^<]*)</a:t>", title.group(0))))
    return [_BLANKS.sub("", t) for t in titles]


def paper_faults(xlsx: Path, pdf: Path) -> list[str]:
    """Every fault a reader of ``xlsx`` printed as ``pdf`` would meet (empty: none)."""
    sizes = text_sizes(pdf)
    faults = [f"text at {min(sizes):.1f} pt (< {MIN_POINTS} pt)"] if not sizes or \
        min(sizes) < MIN_POINTS - 0.05 else []
    pages = words(pdf)
    for n, page in enumerate(pages, start=1):
        (_, _, width, height, _), *rest = page
        faults += [f"page {n}: {text!r} off the page" for x0, y0, x1, y1, text in rest
                   if x0 < 0 or y0 < 0 or x1 > width + 0.5 or y1 > height + 0.5]
        faults += [f"page {n}: a number shown as ###" for *_, text in rest if "###" in text]
    texts = page_texts(pdf, len(pages))
    whole = "\x00".join(texts)
    faults += [f"{sheet}!{cell}: not whole on paper: {text[:60]!r}"
               for sheet, cell, text in cell_texts(xlsx) if text not in whole]
    for title in chart_titles(xlsx):
        on = sum(title in page for page in texts)
        if on != 1:
            faults.append(f"chart {title!r} on {on} pages (one wanted)")
    return faults
