"""Studies for the generate tests: a bundled template with raters of its own; or one
made by ``init`` and generated with two first-sitting packs or more."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
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


def generated_with_two_first_packs(root: Path, template: str) -> list[dict]:
    """``init`` ``template`` into ``root`` and generate it so that sitting 1 has two
    packs or more: protocol 002's second rater drawn at generate, not at the lock, and a
    template with fewer than two raters given one more; the packs of sitting 1."""
    init_study(root, template)
    raters = root / "raters.csv"
    spec = root / "study.toml"
    if template == "anchored-plan":  # its two raters (002 fixes them): both packs now
        spec.write_text(spec.read_text(encoding="utf-8").replace(
            'select_at = "lock"', 'select_at = "generate"'), encoding="utf-8")
    elif len(raters.read_text(encoding="utf-8").splitlines()) < 3:  # keep-known has one
        with raters.open("a", encoding="utf-8") as out:
            out.write("extra-01,Extra Rater,Extra,extra01@example.org,primary\n")
    generate_packs(root)
    return [p for p in manifest_of(root)["packs"] if p["sitting"] == 1]


def manifest_of(folder: Path) -> dict:
    return read_manifest(folder / "packs" / L.MANIFEST_FILE)


def manifest_before(root: Path, key: str) -> None:
    """Make ``root``'s pack manifest one written before each pack entry recorded
    ``key``: the checks that read it must then be skipped, not raise a false alarm."""
    path = root / L.PACKS_DIR / L.MANIFEST_FILE
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for entry in manifest["packs"]:
        del entry[key]
    path.write_text(json.dumps(manifest), encoding="utf-8")
