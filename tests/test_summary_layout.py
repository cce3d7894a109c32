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


def test_a_number_beside_text_keeps_room_after_it(tmp_path):
    """Right-aligned against the left-aligned text of the column on its right, a number
    printed as one with it: 002's Acceptance sheet read "1 0 (R-3MD)" for a count of 1
    beside "0 (R-3MD)". Such a column's numbers now keep a digit's room after them (a
    format's padding, the values unchanged); a number beside a number is as it was."""
    import pandas as pd
    import xlsxwriter

    from sheetflow.report.cells import formats, table_sheet

    table = pd.DataFrame({"ratings": [2, 1], "mean_total": [100.0, 48.0],
                          "material_errors": [2.0, 0.0], "each": ["2 (R-3MD)", "0 (R-3MD)"],
                          "delta": [0.3, 1e-9], "tolerance": ["1e-9", "1e-9"],
                          "p": [0.04, 0.0001], "passed": [True, False],
                          "n": [3, 4], "yield": [0.25, 0.5], "note": ["a", "b"]})
    path = tmp_path / "t.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    fmt = formats(wb)
    table_sheet(wb, "T", table, fmt, number_formats={"yield": fmt["share"]})
    wb.close()
    sheet = openpyxl.load_workbook(path)["T"]
    got = [[c.number_format for c in row] for row in sheet.iter_rows(min_row=2)]
    assert got[0] == ["General", "0", "0_0", "General", "0.000_0", "General", "0.0000_0",
                      "General", "General", "0.0%_0", "General"]
    assert got[1][4] == '0.00E+00"  "' and got[1][6] == '"< 0.001"_0'
    assert [c.value for c in sheet[2]] == [2, 100, 2, "2 (R-3MD)", 0.3, "1e-9", 0.04, "Yes",
                                           3, 0.25, "a"]
