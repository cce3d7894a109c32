"""Every workbook sheetflow writes names sheetflow as the application that wrote it.

``docProps/app.xml`` said "Microsoft Excel" 12.0 (xlsxwriter's default) in
``validation.xlsx``, ``analysis.xlsx``, the feedback workbooks and ``plan.xlsx``: a
claim about a program that never touched them (the packs already said sheetflow).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from click.testing import CliRunner
from demo_helpers import built_demo
from render_helpers import print_to_pdf

from sheetflow.cli import cli


def _application(book: Path) -> str:
    with zipfile.ZipFile(book) as z:
        return z.read("docProps/app.xml").decode("utf-8")


def test_every_workbook_names_sheetflow_and_libreoffice_opens_it(tmp_path):
    root = built_demo(tmp_path / "demo")
    planned = CliRunner().invoke(cli, ["plan", str(root)])
    assert planned.exit_code == 0, planned.output
    out = root / "out"
    books = [out / "validation.xlsx", out / "analysis.xlsx", out / "plan.xlsx",
             *sorted(out.glob("feedback-*.xlsx")), next((root / "packs").glob("*.xlsx"))]
    assert len(books) == 8 and all(b.is_file() for b in books)
    for book in books:
        app = _application(book)
        assert "<Application>sheetflow</Application>" in app, (book.name, app[:300])
        assert "Excel" not in app and "AppVersion" not in app, book.name
    # the parts listed are xlsxwriter's own: the plan's chart sheet among them
    assert "<vt:lpstr>Chart</vt:lpstr>" in _application(out / "plan.xlsx")
    assert "<vt:lpstr>Issues</vt:lpstr>" in _application(out / "validation.xlsx")
    pdfs = print_to_pdf(books, tmp_path / "printed")  # a file LibreOffice cannot open
    assert all(pdf.stat().st_size > 0 for pdf in pdfs.values())  # prints nothing
