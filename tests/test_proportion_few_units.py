"""Intervals of a proportion or of the arms' difference on fewer than 10 units carry the
same mark as an agreement interval on so few, wherever they are shown.

Protocol 001 with one owner and 8 items per arm: every yield's Wilson interval, the
gap's Newcombe interval and each band's interval rest on fewer than 10 ratings.
"""

from __future__ import annotations

import csv
from pathlib import Path

import openpyxl
import pytest
from decision_helpers import run_analyze
from test_decision_001 import _study

from sheetflow.words import FEW_UNITS_NOTE, few_units_method

PER_ARM = 8
MARKS = {"owner-01": {"b3_distance_forced": 6, "b6_distance_forced_critic": 2,
                      "b1_random_pairing": 1, "b4_single_note": 1}}


def _few_items(root: Path) -> None:
    """Keep the first PER_ARM items of each arm in items.csv (32: the 30 repeats fit)."""
    path = root / "items.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    kept, seen = [], {}
    for row in rows:
        seen[row["arm"]] = seen.get(row["arm"], 0) + 1
        if seen[row["arm"]] <= PER_ARM:
            kept.append(row)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)


@pytest.fixture(scope="module")
def few(tmp_path_factory):
    root = _study(tmp_path_factory.mktemp("few") / "s", ("owner-01",), marks=MARKS,
                  edit=_few_items)
    return (root, *run_analyze(root))


def test_yields_and_their_gap_are_marked_in_summary_json(few):
    _, out, summary, _ = few
    assert out.exit_code == 0, out.output
    assert {arm: (c["n"], c["note"]) for arm, c in summary["yield_ci"].items()} == {
        arm: (PER_ARM, FEW_UNITS_NOTE) for arm in MARKS["owner-01"]}
    assert summary["fisher"] and all(f["gap_note"] == FEW_UNITS_NOTE
                                     for f in summary["fisher"])
    arms = summary["arms"]
    assert arms["ci_note"] == FEW_UNITS_NOTE
    assert f"] ({FEW_UNITS_NOTE}); " in arms["sentence"]


def test_the_summary_sheet_and_the_screen_mark_them(few):
    root, out, summary, rows = few
    assert f"arms: {summary['arms']['sentence']}" in rows
    assert f"arms: {summary['arms']['sentence']}" in out.output
    yields = [r for r in rows if r.startswith("yield b") or r.startswith("gap b")]
    assert len(yields) == 6 and all(r.endswith(f"] ({FEW_UNITS_NOTE})") for r in yields)
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    head = next(r for r in sheet.iter_rows(values_only=True) if r[0] == "arm ahead")
    measured = next(r for r in sheet.iter_rows(values_only=True)
                    if r[0] == summary["arms"]["winner"])
    assert head[7] == "effect measured as; note"
    arms = summary["arms"]
    assert measured[7] == (f"yield difference (Newcombe 95% CI), {arms['winner']} minus "
                           f"{arms['other']}; {FEW_UNITS_NOTE}")


def test_own_sheets_results_files_and_methods_say_it(few):
    root, *_ = few
    t2 = list(csv.DictReader((root / "out" / "results" / "T2.csv").open(encoding="utf-8")))
    t3 = list(csv.DictReader((root / "out" / "results" / "T3.csv").open(encoding="utf-8")))
    assert all(r["note"] == FEW_UNITS_NOTE for r in t2 + t3)
    book = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    methods = [str(c) for r in book["Methods"].iter_rows(values_only=True) for c in r if c]
    text = next(c for c in methods if c.startswith("Every interval of a"))
    assert "Other intervals" not in text and "carry no such mark" not in text
    assert "each arm's yield's Wilson interval" in text and "Newcombe" in text


def test_the_methods_text_names_only_what_ran():
    alone = few_units_method(["yield_fisher"])
    assert alone.startswith("Every interval of a proportion or of the arms' difference "
                            f"that rests on fewer than 10 units is marked \"{FEW_UNITS_NOTE}\"")
    both = few_units_method(["alpha", "wilcoxon_totals"])
    assert "So is every interval of a proportion or of the arms' difference on fewer than " \
        "10 units: the arms' mean total difference's t interval" in both
    assert "Wilson interval" not in both and few_units_method(["permutation"]) == ""


def test_the_marks_validate_against_the_schema(few):
    """summary.json's new marks are in docs/summary-schema.json (``arms`` admits no
    field it does not name), each a string described there."""
    import json

    import jsonschema

    _, _, summary, _ = few
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs" /
                         "summary-schema.json").read_text(encoding="utf-8"))
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(summary)]
    assert errors == []
    props = schema["properties"]
    for where in (props["yield_ci"]["additionalProperties"]["properties"]["note"],
                  props["fisher"]["items"]["properties"]["gap_note"],
                  schema["$defs"]["arms"]["properties"]["ci_note"],
                  props["position_bias"]["items"]["properties"]["note"],
                  props["position_free_preference"]["items"]["properties"]["note"]):
        assert where["type"] == "string" and FEW_UNITS_NOTE in where["description"]


def test_position_shares_and_the_paired_difference_on_three_cases_are_marked():
    """Protocol 000 on 3 cases by 3 raters: each rater's label-A share rests on 3
    decisive judgements, the pooled share and the position-free preference on 9, the
    arms' mean difference on 3 cases: every one of their intervals is marked, in
    summary.json, the reading line and the arms sentence; so is each direction share
    by confidence on its own sheet's table."""
    from test_position_confidence import _planted

    from sheetflow.analysis import run_plan
    from sheetflow.spec.study import load_study
    from sheetflow.spec.templates import data_dir

    study = load_study(data_dir("templates") / "paired-rubric")
    data = _planted(study, biased=None)
    cases = sorted(data["case"].unique())[:3]
    res = run_plan(study, data[data["case"].isin(cases)])
    summary = res.summary
    assert {r["rater"]: (r["n"], r["note"]) for r in summary["position_bias"]} == {
        **{r.id: (3, FEW_UNITS_NOTE) for r in study.raters}, "all raters": (9, FEW_UNITS_NOTE)}
    (free,) = summary["position_free_preference"]
    assert free["note"] == FEW_UNITS_NOTE
    line = next(r for r in summary["readings"] if r.startswith("Position-free preference"))
    assert line.endswith(f"; {FEW_UNITS_NOTE}).")
    arms = summary["arms"]
    assert arms["ci_note"] == FEW_UNITS_NOTE and f"({FEW_UNITS_NOTE})" in arms["sentence"]
    direction = res.tables["direction_by_confidence"]
    judged = direction[direction["n"] > 0]
    assert len(judged) and (judged["note"] == FEW_UNITS_NOTE).all()

