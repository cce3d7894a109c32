"""``sheetflow status`` names each rater and shows the file actually returned."""

from __future__ import annotations

import json

from click.testing import CliRunner
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.cli import cli
from sheetflow.packs import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec import init_study, load_study
from sheetflow.workbook import layout as L


def test_status_shows_the_name_and_the_file_returned(tmp_path):
    root = init_study(tmp_path / "s", "answer-review")
    generate_packs(root)
    first, second = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][:2]
    renamed = "HV responses (1) final.xlsx"  # as a mail program or "Save as" names it
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    fill_openpyxl(root / L.PACKS_DIR / first["file"], root / L.RETURNS_DIR / renamed,
                  plan_answers(first))
    result = CliRunner().invoke(cli, ["status", str(root)])
    assert result.exit_code == 1, result.output  # the other packs are still out
    rater = load_study(root).rater(first["rater_id"])
    line = next(ln for ln in result.output.splitlines() if ln.startswith(first["rater_id"]))
    assert f"{rater.name} {rater.last_name}" in line and line.endswith(renamed)
    other = next(ln for ln in result.output.splitlines()
                 if ln.startswith(second["rater_id"]))
    # nothing was sent: the pack is named, not said to be "sent"
    assert other.endswith(f"(not returned; pack {second['file']}, not sent by sheetflow)")
    doc = json.loads(CliRunner().invoke(cli, ["status", str(root), "--json"]).output)
    row = next(r for r in doc["raters"] if r["rater"] == first["rater_id"])
    assert row["returned_file"] == renamed and row["file"] == first["file"]
