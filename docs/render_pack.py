"""Regenerate docs/scoring-sheet.png: the first printed page of a generated pack's
Scoring sheet, as LibreOffice prints it.

Run from the repository root (needs LibreOffice's ``soffice`` and poppler's
``pdftoppm`` on PATH)::

    python docs/render_pack.py [--template paired-rubric] [--out docs/scoring-sheet.png]

The bundled template is copied to a temporary folder, its packs generated, the first
pack's Instructions sheet hidden (so the PDF starts at the Scoring sheet), printed to
PDF by LibreOffice and the first page turned into a PNG.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import openpyxl

from sheetflow.generate import generate_packs
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent


def render(template: str, out: Path, dpi: int = 110, page: int = 1) -> Path:
    """Write the PNG of ``page`` of the Scoring sheet of ``template``'s first pack."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / template
        shutil.copytree(ROOT / "templates" / template, folder)
        result = generate_packs(folder)
        wb = openpyxl.load_workbook(result.packs[0].path)
        wb[L.INSTRUCTIONS_SHEET].sheet_state = "hidden"
        wb.active = wb.sheetnames.index(L.SCORING_SHEET)
        scoring = work / "scoring.xlsx"
        wb.save(scoring)
        subprocess.run(["soffice", f"-env:UserInstallation={(work / 'lo').as_uri()}",
                        "--headless", "--convert-to", "pdf", "--outdir", str(work),
                        str(scoring)], check=True, capture_output=True, timeout=300)
        subprocess.run(["pdftoppm", "-png", "-r", str(dpi), "-f", str(page), "-l", str(page),
                        "-singlefile", str(work / "scoring.pdf"), str(work / "page")],
                       check=True, capture_output=True, timeout=120)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / "page.png", out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default="paired-rubric")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "scoring-sheet.png")
    parser.add_argument("--dpi", type=int, default=110)
    args = parser.parse_args(argv)
    print(render(args.template, args.out, args.dpi))
    return 0


if __name__ == "__main__":
    sys.exit(main())
