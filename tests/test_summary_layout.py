"""How the analysis workbook's tables read when printed.

The Summary's checks and arms tables had header cells only over their filled columns
(A-E and H, A-F and H): the columns between were blank, without the header's fill, and
the table printed as if broken in two. With no arm ahead (001's best candidate not
above the control) the arms row said "none" beside an effect without naming the two
arms it compared. 004's Hypotheses sheet showed the direction tolerance, a setting, in
the scientific format of a tiny result (1.00E-09).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import openpyxl
import pytest
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.report.summary_sheet import ARMS_MEASURE_HEADER

CONTROL = "b1_random_pairing"
SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "summary-schema.json"


@pytest.fixture(scope="module")
def control_ahead(tmp_path_factory) -> tuple[dict, list[tuple]]:
    """A keep-known study where only the control's items are kept: no candidate is
    above it. Its summary and the Summary sheet's rows as cells."""
    root = study_from("keep-known", tmp_path_factory.mktemp("keep") / "study")

    def answer(cell):
        if cell["scope"] != "response" or cell["dimension"] not in ("keep", "known"):
            return KEEP
        return "Yes" if cell["dimension"] == "keep" and cell["arm"] == CONTROL else "No"

    plant(root, answer)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    return summary, list(sheet.iter_rows())


def test_summary_tables_have_no_gap_in_their_header(control_ahead):
    _, rows = control_ahead
    for first, last in (("check", "note"), ("arm ahead", ARMS_MEASURE_HEADER)):
        head = next(r for r in rows if r[0].value == first)
        assert head[7].value == last
        fills = {c.fill.fgColor.rgb for c in head}
        assert len(fills) == 1 and fills != {"00000000"}, (first, fills)  # unbroken bar
        assert all(c.font.b for c in head), first


def test_an_effect_without_an_arm_ahead_names_the_two_arms_it_compares(control_ahead):
    summary, rows = control_ahead
    arms = summary["arms"]
    assert arms["winner"] == "" and arms["other"] == CONTROL
    candidate = arms["compared"]
    assert candidate and candidate != CONTROL
    assert any(c["name"] == f"permutation p ({candidate} vs {CONTROL})"
               for c in summary["decision"]["checks"])
    row = next(r for r in rows if r[0].value == "none")
    assert row[7].value.startswith(
        f"yield difference (Newcombe 95% CI), {candidate} minus {CONTROL}"), row[7].value
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        summary)
    # the arms line (summary.json, the console) said "no arm ahead (the best candidate
    # is not above the control)", naming neither
    assert arms["sentence"] == (f"no arm ahead (the best candidate, {candidate}, is not "
                                f"above the control, {CONTROL})"), arms["sentence"]


def test_hypotheses_show_the_direction_tolerance_as_the_plan_writes_it(tmp_path):
    """The tolerance printed as 0.000000001, to be counted zero by zero (and before
    that as 1.00E-09, like a tiny result); now it reads 1e-9, as the study file has it,
    on the sheet and in the Methods rule."""
    root = study_from("judge-likert", tmp_path / "study")
    fill_packs(root, seed=3)
    collect(root)
    out, _, _ = run_analyze(root)
    assert out.exit_code in (0, 1), out.output  # 1: the pilot's FAIL, said as a decision
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Hypotheses"]
    head = [c.value for c in sheet[1]]
    col = head.index("tolerance") + 1
    cells = [sheet.cell(r, col) for r in range(2, sheet.max_row + 1)]
    # the setting as written, not 1.00E-09 like a tiny result, nor 0.000000001
    assert cells and all(c.value == "1e-9" and c.data_type == "s" for c in cells)
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    rule = next(r[1] for r in methods.iter_rows(values_only=True) if r[0] == "Judge trio (004)")
    assert "directional pass = delta > 1e-9 (direction_tolerance;" in rule, rule
    delta = sheet.cell(2, head.index("delta") + 1)
    assert delta.number_format == "0.000"  # a result keeps its format
