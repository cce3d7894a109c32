"""The feedback workbooks (protocol 000 section 7.2: "your scores compared to group
median (de-identified)") set each validator's scores beside the median of every
validator who scored the response, their own included, and show it only where at
least three validators did.

With two validators the median beside one's own score would give the other's in
every row (2 x median - own), so nothing is shown; with three (the paired-rubric
template) the median is shown, and a reader cannot tell which colleague scored it.
"""

from __future__ import annotations

import csv
import itertools
import json
import statistics
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from decision_helpers import run_analyze

from sheetflow.analysis import key_sides
from sheetflow.analysis.rater_feedback import MIN_GROUP, RULE, group_medians, share_words
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study

MEDIAN = "Group median points (you included)"
DIFFERENCE = "Difference in points (you - group median)"
GROUP = "Validators who scored it (you included)"
SAME = "Validators with your direction (you included)"
WORDS = {"fewer than half", "half", "more than half"}


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


def _book(root: Path, rater: str) -> Path:
    return root / "out" / f"feedback-{rater}.xlsx"


def _scores(root: Path) -> dict[tuple[str, str, str, str], float]:
    """(rater, item, label the rater saw, measure words) -> points, from the
    unblinded export (the label column is the one each rater saw)."""
    words = _words(root)
    with open(root / "out" / "ratings-unblinded.csv", encoding="utf-8") as f:
        return {(r["rater"], r["item"], r["label"], words[r["dimension"]]): float(r["value"])
                for r in csv.DictReader(f) if r["dimension"] in words}


def _words(root: Path) -> dict[str, str]:
    """Measure id -> the words the workbooks name it by."""
    rubric = load_study(root).rubric
    words = {d.id: d.label for d in rubric.dimensions if d.points_range is not None}
    return {**words, **{t.id: t.label for t in rubric.totals}}


def _possible(root: Path) -> dict[str, set[float]]:
    """Measure words -> every points value a validator could give it (a total: every
    sum of its dimensions' points)."""
    rubric = load_study(root).rubric
    points = {}
    for d in rubric.dimensions:
        if d.kind == "count":
            points[d.id] = {float(b.points) for b in d.bins}
        elif d.kind == "checklist":
            points[d.id] = {float(n) for n in range(len(d.questions) + 1)}
    for t in rubric.totals:
        assert t.method == "sum"
        points[t.id] = {float(sum(c)) for c in itertools.product(*(points[m] for m in t.of))}
    words = _words(root)
    return {words[m]: v for m, v in points.items()}


def _items(root: Path, rater: str) -> dict[str, str]:
    """The case as ``rater``'s workbook names it -> item id."""
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    pack = next(p for p in key["packs"] if p["rater_id"] == rater and p["sitting"] == 1)
    return {f"{c['position']} ({c['code']})": c["item_id"] for c in pack["cases"]}


_SIDES: dict[Path, dict[tuple[str, str, str], str]] = {}


def _arm(root: Path, rater: str, item: str, label: str) -> str:
    """The arm behind the label ``rater`` saw on ``item`` (the sealed key)."""
    if root not in _SIDES:
        key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
        _SIDES[root] = {(r.rater, r.case, r.label): r.arm
                        for r in key_sides(key).itertuples()}
    return _SIDES[root][rater, item, label]


def _group(root: Path, points: dict, rater: str, row: dict) -> tuple[float, list[float]]:
    """``rater``'s points on the response and measure of ``row``, and the colleagues'
    points on the same response (each found by the label they saw)."""
    item = _items(root, rater)[row["Case"]]
    label = row["Response (label you saw)"]
    arm = _arm(root, rater, item, label)
    others = [v for (r, i, lab, m), v in points.items() if r != rater and i == item
              and m == row["Measure"] and _arm(root, r, i, lab) == arm]
    return points[rater, item, label, row["Measure"]], others


def test_two_validators_show_no_group_figure(tmp_path):
    root = _study(tmp_path / "s", 2)
    for rater in ("EV-01", "EV-02"):
        book = _book(root, rater)
        scores = _sheet(book, "Your scores")
        assert len(scores) == 216  # 18 cases x 2 responses x 6 measures, each one shown
        for row in scores:  # own points and the count only: nothing to subtract from
            assert row["Your points"] is not None and row[GROUP] == 2
            assert row[MEDIAN] is None and row[DIFFERENCE] is None, row
        directions = _sheet(book, "Your directions")
        assert len(directions) == 18 and all(r[SAME] is None for r in directions)
        for row in _sheet(book, "Overview"):  # no figure computed from the colleague's
            assert row["Responses with group figures"] == 0
            assert row["Group median points (mean over responses with group figures)"] \
                is None
            assert row["Share within 1 point of the group median"] is None
        intro = openpyxl.load_workbook(book)["Overview"]["A2"].value
        assert f"at least {MIN_GROUP} validators" in intro  # why they are blank
        assert "left blank otherwise (with two, the median would give your colleague's " \
            "score)" in intro
    # the analyst reads it on the Summary (and the screen) and on Methods
    _, summary, rows = run_analyze(root)
    note = next(n for n in summary["panel"]["notes"] if n.startswith("feedback workbooks"))
    assert "withheld beside 432 of 432 scores and 36 of 36 directions" in note
    assert f"note: {note}" in rows
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    assert any(r[0] == "Feedback workbooks" and "Here withheld beside 432 of 432" in r[1]
               for r in methods.iter_rows(values_only=True))


def _assignments(own: float, median: float, possible: set[float]) -> set[tuple]:
    """Every pair of colleagues' points (first, second) that, with ``own``, has the
    median shown."""
    return {(a, b) for a in possible for b in possible
            if statistics.median([own, a, b]) == median}


def test_three_validators_show_the_group_median_without_saying_whose(tmp_path):
    """The template's three validators: every median is shown, and is the median of
    all three scores. From each row alone the reader cannot tell which colleague
    scored what: two different assignments of points to the colleagues fit it, except
    where the rule line says the median tells both (one's own above a median at the
    measure's lowest points or below one at its highest: both colleagues scored it).
    Read together with the total, a response's rows can tell more, which the rule line
    says too."""
    root = _study(tmp_path / "s", 3)
    points, possible = _scores(root), _possible(root)
    told = 0
    for rater in ("EV-01", "EV-02", "EV-03"):
        rows = _sheet(_book(root, rater), "Your scores")
        assert len(rows) == 216
        for row in rows:
            own, others = _group(root, points, rater, row)
            assert row["Your points"] == own and row[GROUP] == len(others) + 1 == 3
            median = row[MEDIAN]
            assert median == statistics.median([own, *others])
            assert row[DIFFERENCE] == pytest.approx(own - median)
            fits = _assignments(own, median, possible[row["Measure"]])
            assert tuple(others) in fits and tuple(reversed(others)) in fits
            at_end = (own > median == min(possible[row["Measure"]])) or \
                (own < median == max(possible[row["Measure"]]))
            if at_end:  # the one case the rule line names
                assert fits == {(median, median)}
                told += 1
            else:
                assert len(fits) >= 2, row
        directions = _sheet(_book(root, rater), "Your directions")
        assert len(directions) == 18
        assert all(r[SAME] in WORDS - {"half"} and r[GROUP] == 3 for r in directions)
    assert told  # the template's data has such rows: the rule line must say so
    assert "both colleagues scored that" in RULE
    assert "read together with its total's can tell colleagues' scores" in RULE
    _, summary, _ = run_analyze(root)
    assert not any(n.startswith("feedback workbooks") for n in summary["panel"]["notes"])


def test_four_validators_show_the_median_of_all_four(tmp_path):
    root = _study(tmp_path / "s", 4)
    points = _scores(root)
    rows = _sheet(_book(root, "EV-01"), "Your scores")
    for row in rows:
        own, others = _group(root, points, "EV-01", row)
        assert row[GROUP] == len(others) + 1 == 4
        assert row["Your points"] == own
        assert row[MEDIAN] == pytest.approx(statistics.median([own, *others]))
    assert len(rows) == 216
    directions = _sheet(_book(root, "EV-01"), "Your directions")
    assert all(r[SAME] in WORDS and r[GROUP] == 4 for r in directions)
    _, summary, _ = run_analyze(root)
    assert not any(n.startswith("feedback workbooks") for n in summary["panel"]["notes"])


def test_group_medians_take_each_value_with_its_group():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 40, 600)
    values = rng.integers(0, 6, 600).astype(float)
    medians, sizes = group_medians(groups, values)
    for i in range(len(values)):
        group = [values[j] for j in range(len(values)) if groups[j] == groups[i]]
        assert sizes[i] == len(group)
        assert medians[i] == statistics.median(group)


def test_direction_words_never_give_an_exact_share():
    for n in range(MIN_GROUP, 12):
        same = np.arange(1, n + 1)  # the reader is always one of them
        said = share_words(same, np.full(n, n))
        assert said[-1] == said[-2] == "more than half"  # all and all but one alike
        if n > 4:  # none and one of the colleagues alike
            assert said[0] == said[1] == "fewer than half"
    # with three or four, "fewer than half" is no colleague at all: the rule says so
    assert share_words(np.array([1, 2]), np.array([3, 3])).tolist() == \
        ["fewer than half", "more than half"]
    assert "with three or four validators, fewer than half means that no colleague" in RULE
    assert share_words(np.array([1]), np.array([MIN_GROUP - 1]))[0] is None


def test_the_validator_reads_the_rule_in_the_second_person(tmp_path):
    """The text above a validator's tables spoke of "the reader" and walked through how
    colleagues' scores could be worked out: it is for the validator, so it says "you",
    short, and keeps what is true (group figures include them, are shown where at least
    three validators scored, blank otherwise, and with three a median can still show
    what colleagues gave). The Methods sheet keeps the full rule for the analyst. Means
    have three decimals, shares are percentages with one decimal."""
    from sheetflow.analysis.rater_feedback import YOUR_RULE
    root = _study(tmp_path / "s", 3)
    book = openpyxl.load_workbook(_book(root, "EV-01"))
    overview = book[book.sheetnames[0]]
    intro = str(overview["A2"].value)
    assert intro.endswith(YOUR_RULE) and "reader" not in intro
    for said in ("you included", f"at least {MIN_GROUP} validators", "left blank otherwise",
                 "with two, the median would give your colleague's score", "With three validators"):
        assert said in intro, said
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    assert any(RULE in str(c.value) for row in methods.iter_rows() for c in row)
    header = [c.value for c in overview[4]]
    first = [c for c in overview[5]]
    formats = {h: c.number_format for h, c in zip(header, first, strict=True)}
    assert formats["Share within 1 point of the group median"] == "0.0%"
    assert formats["Your mean points (all your responses)"] == "0.000"
    assert formats["Mean difference in points (you - group median)"] == "0.000"
