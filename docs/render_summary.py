"""Regenerate docs/summary-sheet.png: the demo's Summary sheet as LibreOffice renders it.

Run from the repository root with the environment sheetflow is installed in::

    python docs/render_summary.py

It runs ``sheetflow demo`` in a temporary folder, converts ``out/analysis.xlsx`` to PDF
with headless LibreOffice (``soffice``; the Summary sheet is the first page) and turns
that page into a PNG with ``pdftoppm`` (poppler). Both programs must be on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sheetflow.demo import run_demo

OUT = Path(__file__).resolve().parent / "summary-sheet.png"
DPI = 80
TIMEOUT = 300  # seconds for each external program


def main() -> int:
    """Build the demo, render its Summary sheet, write :data:`OUT`; 0 on success."""
    soffice, pdftoppm = shutil.which("soffice"), shutil.which("pdftoppm")
    if not soffice or not pdftoppm:
        sys.stderr.write("needs soffice (LibreOffice) and pdftoppm (poppler) on PATH\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result = run_demo(work / "demo")
        profile = (work / "profile").as_uri()  # a private profile: no clash with a user's
        subprocess.run([soffice, f"-env:UserInstallation={profile}", "--headless",
                        "--convert-to", "pdf", "--outdir", str(work), str(result.workbook)],
                       check=True, timeout=TIMEOUT, capture_output=True)
        pdf = work / (result.workbook.stem + ".pdf")
        subprocess.run([pdftoppm, "-png", "-r", str(DPI), "-f", "1", "-l", "1",
                        "-singlefile", str(pdf), str(work / "summary")],
                       check=True, timeout=TIMEOUT, capture_output=True)
        shutil.copyfile(work / "summary.png", OUT)
    sys.stdout.write(f"wrote {OUT}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
