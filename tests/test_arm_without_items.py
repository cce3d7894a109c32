"""An arm of the design that no item is in (001: a candidate arm dropped from items.csv).

``check`` said "ok" and "4 arms" without a word about it, and ``analyze`` showed the
arm's yield as "n/a" in the arms line and "0/0 = n/a" on the Summary. ``check`` now
warns, naming the arm and items.csv; ``analyze`` says "no items" wherever the other
arms' yields stand, and summary.json lists the arm in ``arms.without_items``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import openpyxl
from click.testing import CliRunner
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.analysis.decision import Arms
from sheetflow.cli import cli
from sheetflow.collect.run import collect

EMPTY = "b3_distance_forced"
AHEAD = "b6_distance_forced_critic"
SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "summary-schema.json"


def _drop_arm(root: Path) -> None:
    path = root / "items.csv"
    rows = list(csv.DictReader(path.open(newline="", encoding="utf-8")))
    out = io.StringIO()
    writer = csv.DictWriter(out, list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(r for r in rows if r["arm"] != EMPTY)
    path.write_text(out.getvalue(), encoding="utf-8")


def _arm_of(root: Path) -> dict[str, str]:
    with (root / "items.csv").open(newline="", encoding="utf-8") as f:
        return {r["item_id"]: r["arm"] for r in csv.DictReader(f)}


def test_check_names_an_arm_without_items(tmp_path):
    root = study_from("keep-known", tmp_path / "study", _drop_arm)
    result = CliRunner().invoke(cli, ["check", str(root)])
    warnings = [ln for ln in result.output.splitlines() if ln.startswith("warning: ")]
    assert warnings == [
        f"warning: {root}/items.csv: arm {EMPTY!r} of [design] arms has no item (no row has "
        "it in column 'arm'); analyze reports it as having no items: add its items, or "
        "remove it from [design] arms"], result.output


def test_analyze_says_no_items_where_the_yields_stand(tmp_path):
    root = study_from("keep-known", tmp_path / "study", _drop_arm)
    arm_of = _arm_of(root)

    def answer(cell):  # the critic arm is kept, nothing else: it is ahead of the control
        if cell["scope"] != "response" or cell["dimension"] not in ("keep", "known"):
            return KEEP
        return "Yes" if cell["dimension"] == "keep" and arm_of[cell["item_id"]] == AHEAD \
            else "No"

    plant(root, answer)
    collect(root)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    arms_line = next(ln for ln in out.output.splitlines() if ln.startswith("arms: "))
    assert arms_line.startswith(f"arms: {AHEAD} ahead of b1_random_pairing"), arms_line
    assert f"{EMPTY} no items vs" in arms_line and "n/a" not in arms_line, arms_line
    assert f"yield {EMPTY}: no items (none of items.csv is in this arm), so no yield" in rows
    assert not [r for r in rows if "0/0" in r], rows
    per_arm = next(r for r in rows if r.startswith("yield per arm: "))
    assert f"{EMPTY} no items," in per_arm, per_arm
    cells = list(openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
                 .iter_rows(max_col=2, values_only=True))
    assert (EMPTY, "no items") in cells
    assert summary["arms"]["without_items"] == [EMPTY]
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        summary)


def test_no_arm_ahead_still_names_the_arm_without_items():
    arms = Arms(winner="", other="b1_random_pairing", effect=-0.1,
                effect_measure="yield difference (Newcombe 95% CI)", ci=[-0.3, 0.1], p=0.8,
                test="permutation test of the yield gap (one-sided)",
                means={"b1_random_pairing": 0.2, EMPTY: None}, means_label="yield",
                note="the best candidate is not above the control", proportion=True,
                without_items=[EMPTY])
    assert arms.sentence() == ("no arm ahead (the best candidate is not above the control); "
                               f"{EMPTY}: no items")
