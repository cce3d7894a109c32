"""Regenerate the README's pictures, each as LibreOffice renders it.

Run from the repository root with the environment sheetflow is installed in::

    python docs/render.py              # every picture
    python docs/render.py status card  # some of them

Pictures (names -> files in docs/):

- ``card``: a generated pack's Scoring sheet, the page holding its first card's scores,
  one answer given (``scoring-sheet.png``);
- ``status``: the coordinator's ``out/validation.xlsx`` Status sheet after a collect
  where one rater has not returned and one file has an error (``status-sheet.png``);
- ``summary``: the demo's analysis workbook, Summary sheet (``summary-sheet.png``);
- ``closing``: the closing lines of ``sheetflow demo`` (``demo-closing.png``).

Each workbook is printed to PDF with headless LibreOffice (``soffice --headless
--convert-to pdf``, a private profile) and one page turned into a PNG with poppler's
``pdftoppm -png``. Both programs must be on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
TIMEOUT = 300  # seconds for each external program


class Renderer:
    """Print files to PDF with LibreOffice and pages of them to PNG, in one work folder."""

    def __init__(self, work: Path):
        self.work = work
        self.demo: Any = None  # the demo run, shared by the pictures that need it
        self.soffice = shutil.which("soffice") or "soffice"
        self.pdftoppm = shutil.which("pdftoppm") or "pdftoppm"

    def pdf(self, source: Path) -> Path:
        """``source`` (xlsx, txt...) printed to PDF as LibreOffice prints it."""
        profile = (self.work / "lo-profile").as_uri()  # no clash with a user's profile
        subprocess.run([self.soffice, f"-env:UserInstallation={profile}", "--headless",
                        "--convert-to", "pdf", "--outdir", str(self.work), str(source)],
                       check=True, timeout=TIMEOUT, capture_output=True)
        return self.work / (source.stem + ".pdf")

    def png(self, source: Path, out: Path, *, page: int = 1, dpi: int = 80) -> Path:
        """Page ``page`` of ``source`` as a PNG at ``out``."""
        pdf = source if source.suffix == ".pdf" else self.pdf(source)
        stem = self.work / f"page-{out.stem}"
        subprocess.run([self.pdftoppm, "-png", "-r", str(dpi), "-f", str(page), "-l",
                        str(page), "-singlefile", str(pdf), str(stem)],
                       check=True, timeout=TIMEOUT, capture_output=True)
        shutil.copyfile(stem.with_suffix(".png"), out)
        _trim(out)
        return out


def _trim(png: Path, margin: int = 12) -> None:
    """Cut the blank paper around the printed content (when Pillow is installed)."""
    try:
        from PIL import Image, ImageChops
    except ImportError:
        return
    with Image.open(png) as image:
        rgb = image.convert("RGB")
    box = ImageChops.difference(rgb, Image.new("RGB", rgb.size, "white")).getbbox()
    if box:
        left, top, right, bottom = box
        rgb.crop((max(left - margin, 0), max(top - margin, 0),
                  min(right + margin, rgb.width), min(bottom + margin, rgb.height))).save(png)


def only_sheet(workbook: Path, sheet: str, dest: Path) -> Path:
    """A copy of ``workbook`` where ``sheet`` is the only visible sheet (printed first)."""
    import openpyxl

    wb = openpyxl.load_workbook(workbook)
    for ws in wb.worksheets:
        ws.sheet_state = "visible" if ws.title == sheet else "hidden"
    wb.active = wb.sheetnames.index(sheet)
    wb.save(dest)
    return dest


def render_card(r: Renderer) -> Path:
    """The scores of the first card of a paired-rubric pack, from its Scoring sheet,
    with the first answer given (so the case's remaining blanks show in orange)."""
    import openpyxl

    from sheetflow.packs.generate import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec.templates import init_study
    from sheetflow.workbook import layout as L

    study = init_study(r.work / "card-study", "paired-rubric")
    result = generate_packs(study)
    pack = read_manifest(result.manifest_path)["packs"][0]
    first = next(a for a in L.iter_answer_cells(pack) if a["scope"] == "response")
    scoring = only_sheet(result.packs[0].path, L.SCORING_SHEET, r.work / "scoring.xlsx")
    wb = openpyxl.load_workbook(scoring)
    wb[first["sheet"]][first["cell"]] = 4  # the first count of case 1
    wb.save(scoring)
    pdf = r.pdf(scoring)
    return r.png(pdf, DOCS / "scoring-sheet.png", page=_first_scores_page(pdf), dpi=110)


def _first_scores_page(pdf: Path) -> int:
    """The first page that shows a card's scores (under their A/B heading)."""
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                           text=True, timeout=TIMEOUT).stdout.split("\f")
    for number, text in enumerate(pages, 1):
        if "A: your answer" in text:
            return number
    return 1


def render_status(r: Renderer) -> Path:
    """The Status sheet after a collect with a missing rater and a file with an error."""

    import openpyxl

    from sheetflow.collect.run import collect
    from sheetflow.demo.simulate import fill_packs
    from sheetflow.packs.generate import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec.templates import init_study
    from sheetflow.workbook import layout as L

    study = init_study(r.work / "my-study", "paired-rubric")
    generate_packs(study)
    files = fill_packs(study, seed=7)
    files[-1].unlink()  # the last rater has not returned
    manifest = read_manifest(study / L.PACKS_DIR / L.MANIFEST_FILE)  # the compact form read
    cell = next(a for a in L.iter_answer_cells(manifest["packs"][0])
                if a["validation"]["type"] == "list")
    wb = openpyxl.load_workbook(files[0])
    wb[cell["sheet"]][cell["cell"]].value = "Maybe"  # a pasted value outside the list
    wb.save(files[0])
    # collected as a coordinator types it, in the folder holding the study: the hints on
    # the sheet name the folder as given ('sheetflow remind my-study')
    here = Path.cwd()
    os.chdir(r.work)
    try:
        collect(Path(study.name))
    finally:
        os.chdir(here)
    status = only_sheet(study / "out" / "validation.xlsx", "Status", r.work / "status.xlsx")
    return r.png(status, DOCS / "status-sheet.png", dpi=150)


def _demo(r: Renderer) -> Any:
    from sheetflow.demo.run import run_demo

    if r.demo is None:
        r.demo = run_demo(r.work / "demo")
    return r.demo


def render_summary(r: Renderer) -> Path:
    """The demo's Summary sheet (the first page of its analysis workbook)."""
    result = _demo(r)
    return r.png(result.workbook, DOCS / "summary-sheet.png", dpi=80)


def render_closing(r: Renderer) -> Path:
    """The last lines ``sheetflow demo`` prints, as a dark terminal shows them.

    The lines are laid into a one-column workbook (monospace, light on dark) so that
    LibreOffice Calc, the part of LibreOffice sheetflow needs, can print them too.
    """
    import xlsxwriter

    from sheetflow.demo.run import closing_lines

    result = _demo(r)
    folder = str(result.folder)
    lines = ["$ sheetflow demo", "...",
             *(line.replace(folder, "sheetflow-demo") for line in closing_lines(result))]
    path = r.work / "demo-closing.xlsx"
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False,
                                         "strings_to_urls": False})
    ws = wb.add_worksheet("Terminal")
    base = {"font_name": "DejaVu Sans Mono", "font_size": 9, "bg_color": "#1E1E1E",
            "font_color": "#E8E8E8"}
    plain = wb.add_format(base)
    strong = wb.add_format({**base, "bold": True, "font_color": "#9CDB8F"})
    width = max(len(line) for line in lines) + 2
    ws.set_column(0, 0, width * 1.05)
    for row, line in enumerate(lines):
        ws.write_string(row, 0, line, strong if line.startswith("winner") else plain)
    ws.hide_gridlines(2)
    ws.set_landscape()
    ws.fit_to_pages(1, 1)
    ws.set_margins(0.2, 0.2, 0.2, 0.2)
    wb.close()
    return r.png(path, DOCS / "demo-closing.png", dpi=110)


PICTURES: dict[str, Callable[[Renderer], Path]] = {
    "card": render_card, "status": render_status, "summary": render_summary,
    "closing": render_closing,
}


def main(argv: list[str] | None = None) -> int:
    """Render the pictures named in ``argv`` (all by default); 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pictures", nargs="*", metavar="PICTURE",
                        help=f"any of {', '.join(PICTURES)} (default: all)")
    names = parser.parse_args(argv).pictures or list(PICTURES)
    unknown = [n for n in names if n not in PICTURES]
    if unknown:
        parser.error(f"unknown picture {', '.join(unknown)}; choose from {', '.join(PICTURES)}")
    if not shutil.which("soffice") or not shutil.which("pdftoppm"):
        sys.stderr.write("needs soffice (LibreOffice) and pdftoppm (poppler) on PATH\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        renderer = Renderer(Path(tmp))
        for name in names:
            sys.stdout.write(f"wrote {PICTURES[name](renderer)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
