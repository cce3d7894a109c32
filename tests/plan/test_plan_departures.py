"""A design whose item count departs from the one the protocol fixes says so: its note,
the plan's notes and the headline never offer it as the protocol's design."""

from __future__ import annotations

import json

import openpyxl
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.plan import plan_study
from sheetflow.spec import init_study


def _plan(folder, *args):
    result = CliRunner().invoke(cli, ["plan", str(folder), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_cheapest_design_below_the_protocols_items_is_not_offered_as_its_own(tmp_path):
    """Protocol 004 fixes 12 records; at --width 0.5 the cheapest design meeting the
    target has 10 (it was printed as '3 raters x 10 items' with no word)."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    output = _plan(folder, "--width", "0.5")
    headline = output.splitlines()[-1]
    assert "3 raters x 10 items" in headline
    assert "(fewer items than the protocol's 12: not the protocol's design)" in headline
    row = next(line for line in output.splitlines() if line.endswith("<- cheapest"))
    assert "fewer items than the protocol's 12" in row
    assert ("note: The cheapest design meeting the target (3 raters x 10 items) has fewer "
            "items than the protocol's 12, so it is not the protocol's design: protocol "
            "004's pilot has 12 records, 3 tasks x 4 cells. The cheapest one with the "
            "protocol's 12 items is 3 raters x 12 items (expected width 0.426).") in output
    designs = json.loads(_plan(folder, "--width", "0.5", "--json"))["designs"]
    notes = {d["items"]: d["note"] for d in designs}
    assert notes[12] == "" and notes[10] == "fewer items than the protocol's 12"
    assert notes[25] == "more items than the protocol's 12"
    sheet = openpyxl.load_workbook(folder / "out" / "plan.xlsx")["Plan"]
    cells = [c.value for row in sheet.iter_rows() for c in row]
    assert "Note" in cells and "fewer items than the protocol's 12" in cells


def test_a_cheapest_design_above_the_protocols_items_says_none_keeps_it(tmp_path):
    folder = init_study(tmp_path / "jl", template="judge-likert")
    output = _plan(folder, "--width", "0.3")
    assert output.splitlines()[-1].endswith(
        "(more items than the protocol's 12: not the protocol's design)")
    assert "No design of the grid with 12 items meets the target." in output


def test_repeated_items_below_protocol_001s_thirty_are_marked(tmp_path):
    folder = init_study(tmp_path / "kk", template="keep-known")
    result = plan_study(folder, target=None, items=[15, 30, 60], expected=0.75)
    notes = dict(zip(result.table["items"], result.table["note"], strict=True))
    assert notes == {15: "fewer repeated items than the protocol's 30", 30: "",
                     60: "more repeated items than the protocol's 30"}


def test_a_protocol_fixing_no_item_count_marks_nothing(tmp_path):
    folder = init_study(tmp_path / "ap", template="anchored-plan")  # 002 fixes none
    output = _plan(folder, "--width", "0.9")
    assert "protocol's" not in output
    result = plan_study(folder, items=[10, 40])
    assert not result.table["note"].astype(bool).any()


def test_a_recorded_design_that_departs_from_the_protocol_says_so(tmp_path):
    """sizing.json recorded 3 x 10 for protocol 004 (12 records) with no word that it is
    not the protocol's design; a design keeping the 12 records no departure."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    _plan(folder, "--width", "0.5", "--record")
    sizing = json.loads((folder / "sizing.json").read_text("utf-8"))
    assert (sizing["raters"], sizing["items"]) == (3, 10)
    assert sizing["departure"] == "fewer items than the protocol's 12"
    _plan(folder, "--width", "0.45", "--items", "10,25", "--record")
    sizing = json.loads((folder / "sizing.json").read_text("utf-8"))
    assert sizing["items"] == 12 and "departure" not in sizing
