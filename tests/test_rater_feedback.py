"""The feedback workbooks (protocol 000) never let a validator work out a colleague's
score: group figures come from the other validators only, and are withheld where fewer
than three others rated the response.

With two validators the median of both, beside one's own score, gave the other's in
every row (2 x median - own), and the share choosing the same direction gave the
other's direction; with three, the median gave one of the other two whenever one's
own was not the middle.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from decision_helpers import run_analyze

from sheetflow.analysis import key_sides
from sheetflow.analysis.rater_feedback import MIN_OTHERS, others_medians, share_words
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study

GROUP_SCORE_COLUMNS = ("Median points of the other validators",
                       "Difference in points (you - median of the others)")
SAME = "Other validators with the same direction"


def _study(root: Path, raters: int) -> Path:
    """The paired-rubric template with ``raters`` validators, every pack filled,
    collected and analysed."""
    init_study(root, "paired-rubric")
    path = root / "raters.csv"
    header, *rows = path.read_text(encoding="utf-8").splitlines()
    while len(rows) < raters:  # a copy of the last with its own id and address
        n = len(rows) + 1
        rows.append(f"EV-{n:02d},Validator {n},Extra,ev{n:02d}@example.org,primary")
    path.write_text("\n".join([header, *rows[:raters]]) + "\n", encoding="utf-8")
    generate_packs(root)
    fill_packs(root, seed=5)
    collect(root)
    result, _, _ = run_analyze(root)
    assert result.exit_code in (0, 1), result.output
    return root


def _sheet(path: Path, name: str) -> list[dict[str, object]]:
    """The rows of one feedback sheet as header -> value (the header row found by its
    first cell)."""
    rows = list(openpyxl.load_workbook(path)[name].iter_rows(values_only=True))
    top = next(i for i, r in enumerate(rows) if r[0] in ("Measure", "Case"))
    return [dict(zip(rows[top], r, strict=True)) for r in rows[top + 1:]]


def _scores(root: Path) -> dict[tuple[str, str, str, str], float]:
    """(rater, item, label the rater saw, measure words) -> points, from the
    unblinded export (the label column is the one each rater saw)."""
    words = {"depth": "Depth of Analysis", "evidence": "Evidence Integration",
             "alternatives": "Alternative Consideration", "logic": "Logical Structure",
             "actionability": "Actionability", "total": "Total"}
    with open(root / "out" / "ratings-unblinded.csv", encoding="utf-8") as f:
        return {(r["rater"], r["item"], r["label"], words[r["dimension"]]): float(r["value"])
                for r in csv.DictReader(f) if r["dimension"] in words}


def _items(root: Path, rater: str) -> dict[str, str]:
    """The case as ``rater``'s workbook names it -> item id."""
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    pack = next(p for p in key["packs"] if p["rater_id"] == rater and p["sitting"] == 1)
    return {f"{c['position']} ({c['code']})": c["item_id"] for c in pack["cases"]}


@pytest.mark.parametrize("raters", [2, 3])
def test_too_few_others_show_no_group_figure(tmp_path, raters):
    root = _study(tmp_path / "s", raters)
    for n in range(1, raters + 1):
        book = root / "out" / f"feedback-EV-{n:02d}.xlsx"
        scores = _sheet(book, "Your scores")
        assert len(scores) == 216  # 18 cases x 2 responses x 6 measures, each one shown
        for row in scores:  # own points and the count only: nothing to subtract from
            assert row["Your points"] is not None
            assert row["Other validators who scored it"] == raters - 1
            assert all(row[c] is None for c in GROUP_SCORE_COLUMNS), row
        directions = _sheet(book, "Your directions")
        assert len(directions) == 18 and all(r[SAME] is None for r in directions)
        for row in _sheet(book, "Overview"):
            assert row["Responses with group figures"] == 0
            assert row["Median points of the others (mean over responses with group "
                       "figures)"] is None
        intro = openpyxl.load_workbook(book)["Overview"]["A2"].value
        assert f"at least {MIN_OTHERS} other validators" in intro  # why they are blank
    # the analyst reads it on the Summary (and the screen) and on Methods
    _, summary, rows = run_analyze(root)
    note = next(n for n in summary["panel"]["notes"] if n.startswith("feedback workbooks"))
    assert f"withheld beside {raters * 216} of {raters * 216} scores" in note
    assert f"note: {note}" in rows
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    assert any(r[0] == "Feedback workbooks" and "Here withheld beside" in r[1]
               for r in methods.iter_rows(values_only=True))


def test_enough_others_show_their_median_without_ones_own_score(tmp_path):
    root = _study(tmp_path / "s", 4)
    points = _scores(root)
    book = root / "out" / "feedback-EV-01.xlsx"
    items = _items(root, "EV-01")
    checked = 0
    for row in _sheet(book, "Your scores"):
        item = items[row["Case"]]
        # the others' scores of the same response: its label may differ per rater
        mine = points["EV-01", item, row["Response (label you saw)"], row["Measure"]]
        arm = _arm(root, "EV-01", item, row["Response (label you saw)"])
        others = [v for (r, i, lab, m), v in points.items() if r != "EV-01" and i == item
                  and m == row["Measure"] and _arm(root, r, i, lab) == arm]
        assert len(others) == row["Other validators who scored it"] == 3
        assert row["Your points"] == mine
        assert row["Median points of the other validators"] == pytest.approx(
            statistics.median(others))
        checked += 1
    assert checked == 216
    directions = _sheet(book, "Your directions")
    assert {r[SAME] for r in directions} <= {"fewer than half", "half", "more than half"}
    assert all(r["Other validators who scored it"] == 3 for r in directions)
    _, summary, _ = run_analyze(root)
    assert not any(n.startswith("feedback workbooks") for n in summary["panel"]["notes"])


_SIDES: dict[Path, dict[tuple[str, str, str], str]] = {}


def _arm(root: Path, rater: str, item: str, label: str) -> str:
    """The arm behind the label ``rater`` saw on ``item`` (the sealed key)."""
    if root not in _SIDES:
        key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
        _SIDES[root] = {(r.rater, r.case, r.label): r.arm
                        for r in key_sides(key).itertuples()}
    return _SIDES[root][rater, item, label]


def test_others_medians_leave_out_each_value_itself():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 40, 600)
    values = rng.integers(0, 6, 600).astype(float)
    medians, others = others_medians(groups, values)
    for i in range(len(values)):
        rest = [values[j] for j in range(len(values)) if groups[j] == groups[i] and j != i]
        assert others[i] == len(rest)
        if rest:
            assert medians[i] == statistics.median(rest)
        else:
            assert np.isnan(medians[i])


def test_direction_words_never_say_all_or_none():
    others = np.arange(MIN_OTHERS, 12)
    for n in others:
        said = share_words(np.arange(n + 1), np.full(n + 1, n))
        # none and one read alike, as do all and all but one
        assert said[0] == said[1] == "fewer than half"
        assert said[-1] == said[-2] == "more than half"
    assert share_words(np.array([1]), np.array([MIN_OTHERS - 1]))[0] is None
