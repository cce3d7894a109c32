"""Studies for the generate tests: a bundled template with raters of its own."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from sheetflow.packs.manifest import read_manifest
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ["paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert"]
RATERS = {
    # protocol 002's plan freezes two rater IDs: a primary rater and a second rater
    "anchored-plan": [("P-1", "primary"), ("S-1", "second")],
    # the locked trio's judge mapping names these raters
    "judge-likert": [("judge-1", "primary"), ("judge-2", "primary"), ("judge-3", "primary")],
}
SECRET = bytes(range(32))  # a fixed study secret for draws tested directly


def make_study(tmp: Path, template: str) -> Path:
    """A copy of a bundled template with raters of our own: three, or the two protocol
    002 fixes."""
    folder = tmp / template
    shutil.copytree(ROOT / "templates" / template, folder)
    raters = RATERS.get(template, [("R-1", "primary"), ("R-2", "primary"), ("R-3", "primary")])
    with (folder / "raters.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i, (rid, role) in enumerate(raters, 1):
            w.writerow([rid, f"Rater {i}", f"Last{i}", f"r{i}@example.org", role])
    return folder


def manifest_of(folder: Path) -> dict:
    return read_manifest(folder / "packs" / L.MANIFEST_FILE)
