"""Every workbook sheetflow writes, printed by LibreOffice, is legible on paper.

For each template (its bundled items, simulated raters) and for the demo: a pack of each
kind (role and sitting), the coordinator's ``validation.xlsx``, the analysis workbook
and a feedback workbook are printed to PDF and read back (``render_helpers``): text on
every page at 7 pt or more, no cell's text cut, no ``###``, each chart on one page.
The 500-rater paired-rubric study of the bench is the ``slow`` case.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from render_helpers import paper_faults, print_to_pdf, summary
from roundtrip_helpers import needs_soffice

from sheetflow.analysis import analyze
from sheetflow.collect import collect
from sheetflow.demo.run import run_demo
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.report import write_analysis_outputs
from sheetflow.spec import init_study, list_templates
from sheetflow.workbook import layout as L

# LibreOffice prints every workbook here: CI runs these with the other round trips, once
pytestmark = pytest.mark.libreoffice

def _study(root: Path, template: str, raters: int | None = None) -> Path:
    init_study(root, template)
    if raters:
        with (root / "raters.csv").open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["rater_id", "name", "last_name", "email", "role"])
            writer.writerows([f"R{i:03d}", f"Rater {i}", f"Surname{i:03d}",
                              f"r{i:03d}@example.org", "primary"] for i in range(raters))
    generate_packs(root)
    fill_packs(root, seed=5)
    collect(root)
    # anchored-plan's second rater gets a pack only at its lock: before it they are
    # expected and missing, which only --allow-partial analyses
    write_analysis_outputs(analyze(root, allow_partial=True), root / "out")
    return root


def _workbooks(name: str, root: Path) -> dict[str, Path]:
    """Label -> workbook: one pack per (role, sitting), validation, analysis, feedback."""
    out = {f"{name}--validation": root / "out" / "validation.xlsx",
           f"{name}--analysis": root / "out" / "analysis.xlsx"}
    kinds: dict[tuple[str, int], str] = {}
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        kinds.setdefault((pack.get("role", ""), int(pack.get("sitting", 1))), pack["file"])
    for n, file in enumerate(kinds.values(), start=1):
        out[f"{name}--pack-{n}"] = root / L.PACKS_DIR / file
    feedback = sorted((root / "out").glob("**/feedback-*.xlsx"))
    if feedback:
        out[f"{name}--feedback"] = feedback[0]
    return out


def _printed(books: dict[str, Path], work: Path) -> dict[str, list[str]]:
    copies = {}
    work.mkdir(parents=True, exist_ok=True)
    for label, path in books.items():
        copies[label] = work / f"{label}.xlsx"
        copies[label].write_bytes(path.read_bytes())
    pdfs = print_to_pdf(list(copies.values()), work / "pdf")
    return {label: paper_faults(copy, pdfs[copy]) for label, copy in copies.items()}


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    base = tmp_path_factory.mktemp("render")
    books: dict[str, Path] = {}
    for template in sorted(list_templates()):
        books |= _workbooks(template, _study(base / template, template))
    books |= _workbooks("demo", run_demo(base / "demo").folder)
    return _printed(books, base / "print")


@needs_soffice
def test_every_workbook_is_legible_on_paper(printed):
    faults = {label: f for label, f in printed.items() if f}
    assert not faults, summary(faults)
    assert len(printed) >= 5 * 3 + 3  # every template's packs, validation and analysis


@needs_soffice
@pytest.mark.slow
def test_the_500_rater_study_is_legible_on_paper(tmp_path):
    root = _study(tmp_path / "big", "paired-rubric", raters=500)
    faults = {label: found for label, found in
              _printed(_workbooks("big", root), tmp_path / "print").items() if found}
    assert not faults, summary(faults)
