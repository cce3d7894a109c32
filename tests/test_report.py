"""The analysis workbook and summary.json read back with openpyxl."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

from sheetflow.analysis import run_plan
from sheetflow.report import write_analysis_workbook, write_summary_json, write_verdicts_jsonl
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir


@pytest.fixture(scope="module")
def analysis():
    study = load_study(data_dir("templates") / "paired-rubric")
    rng = np.random.default_rng(11)
    rows = []
    for case in (it.id for it in study.items):
        for arm in ("baseline", "improved"):
            q = rng.uniform()
            for r in study.raters:
                for d in study.rubric.by_scope("response"):
                    dom = d.value_domain()
                    idx = int(np.clip(round((q + rng.normal(0, 0.2)) * (len(dom) - 1)), 0,
                                      len(dom) - 1))
                    rows.append({"rater": r.id, "case": case, "arm": arm, "dimension": d.id,
                                 "value": float(dom[idx]), "confidence": "Medium"})
        for r in study.raters:
            rows.append({"rater": r.id, "case": case, "dimension": "direction",
                         "value": "=HYPERLINK(\"x\")" if case == "TC-001" else "improved"})
    return run_plan(study, pd.DataFrame(rows))


def test_workbook_sheets_numbers_and_charts(analysis, tmp_path):
    path = write_analysis_workbook(analysis, tmp_path / "analysis.xlsx")
    wb = openpyxl.load_workbook(path)
    names = wb.sheetnames
    assert names[0] == "Summary"
    for sheet in ("Alpha", "Cohen kappa", "ICC", "Direction", "Wilcoxon", "Data",
                  "Rater self-checks", "Methods", "Chart data"):
        assert sheet in names
    alpha = wb["Alpha"]
    header = [c.value for c in alpha[1]]
    col = header.index("alpha")
    got = {row[0].value: row[col].value for row in alpha.iter_rows(min_row=2)}
    for rec in analysis.summary["alpha"]:  # each measure as the rubric names it
        assert got[analysis.study.rubric.named(rec["measure"])] == pytest.approx(rec["alpha"])
    charts = {c.title: c for c in wb.chartsheets}  # each chart prints on a page of its own
    assert {"Alpha chart", "Distribution chart", "Direction chart"} <= set(charts)
    summary_text = " ".join(str(c.value) for row in wb["Summary"].iter_rows() for c in row)
    assert 'see the sheet "Alpha chart"' in summary_text
    methods = " ".join(str(c.value) for c in wb["Methods"]["B"])
    assert "McGraw-Wong" in methods and analysis.summary["spec_hash"] in methods
    # data text that looks like a formula stays text
    data = wb["Data"]
    formulas = [c.value for row in data.iter_rows() for c in row
                if isinstance(c.value, str) and c.data_type == "f"]
    assert formulas == []


def test_summary_alpha_header_names_what_its_last_column_holds(analysis, tmp_path):
    """The column beside the level holds the band, or why there is none, then the
    few-units mark: its header says so, not "band" alone."""
    path = write_analysis_workbook(analysis, tmp_path / "analysis.xlsx")
    rows = list(openpyxl.load_workbook(path)["Summary"].iter_rows(values_only=True))
    head = next(r for r in rows if r[:2] == ("measure", "alpha"))
    assert head[6:8] == ("level", "band or reason; note")


def test_workbook_is_byte_identical(analysis, tmp_path):
    a = write_analysis_workbook(analysis, tmp_path / "a.xlsx").read_bytes()
    b = write_analysis_workbook(analysis, tmp_path / "b.xlsx").read_bytes()
    assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()


def test_summary_json_sorted_and_null_for_nan(analysis, tmp_path):
    path = write_summary_json(analysis, tmp_path / "summary.json")
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text
    doc = json.loads(text)
    assert list(doc) == sorted(doc)
    assert doc["spec_hash"] == analysis.study.hash
    assert {v["name"] for v in doc["verdicts"]} >= {"alpha (total)"}


def test_verdicts_jsonl_one_line_per_rating(analysis, tmp_path):
    path = write_verdicts_jsonl(analysis, tmp_path / "verdicts.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert {"item_id", "arm", "rater", "sitting"} <= set(first)


def test_a_chart_axis_holds_every_value_and_interval():
    """Alphas below zero and intervals down to -0.75 stay inside the axis (it stopped
    at -0.2), rounded out to tenths; the axis still holds 0 and 1."""
    from sheetflow.report.charts import value_range

    table = pd.DataFrame({"alpha": [-0.357, 0.61, float("nan")],
                          "err_minus": [0.393, 0.1, float("nan")],
                          "err_plus": [0.2, 0.45, float("nan")],
                          "threshold 0.8": [0.8, 0.8, 0.8]})
    assert value_range(table, "alpha", "err_minus", "err_plus", ["threshold 0.8"]) == \
        (-0.8, 1.1)
    assert value_range(table.iloc[1:2].assign(err_plus=0.1), "alpha", "err_minus",
                       "err_plus") == (0.0, 1.0)


def test_every_analysis_has_a_sheet_title_in_words():
    """A sheet is named in words, never by the analysis's internal name."""
    from sheetflow.analysis.registry import all_analyses
    from sheetflow.report import SHEET_TITLES

    missing = sorted(set(all_analyses()) - set(SHEET_TITLES))
    assert not missing, missing
    assert all("_" not in title and len(title) <= 31 for title in SHEET_TITLES.values())


def test_longest_text_is_the_pandas_reading_of_the_first_500_values():
    """Column widths read the first 500 values that are not missing, as text; the plain
    Python shortcut gives the pandas reading on random columns with and without gaps."""
    import numpy as np
    import pandas as pd

    from sheetflow.report.cells import _longest_text

    rng = np.random.default_rng(0)
    for k in range(200):
        values = [None if rng.random() < 0.1 * (k % 3) else
                  (float(rng.integers(0, 99)) if k % 5 == 0 else "x" * int(rng.integers(0, 60)))
                  for _ in range(int(rng.integers(0, 1200)))]
        column = pd.Series(values, dtype=object)
        lengths = column.dropna().astype(str).head(500).str.len()
        assert _longest_text(column) == (int(lengths.max()) if len(lengths) else 0), k


def test_column_widths_are_the_same_from_a_table_and_from_its_plain_columns():
    """A feedback workbook sizes its columns from the values it has already read
    (``plain_columns``), the analysis workbook from the DataFrame: one function, the
    same widths, with or without gaps and past the first 500 rows."""
    import numpy as np
    import pandas as pd

    from sheetflow.report.cells import column_widths, plain_columns

    rng = np.random.default_rng(1)
    for k in range(60):
        n = int(rng.integers(0, 1200))
        gaps = rng.random(n) < 0.1 * (k % 3)
        text = ["x" * int(rng.integers(0, 60)) for _ in range(n)]
        table = pd.DataFrame({
            "text": text,
            "gappy_text": [None if g else t for g, t in zip(gaps, text, strict=True)],
            "category": pd.Categorical([None if g else t[:5] for g, t in
                                        zip(gaps, text, strict=True)]),
            "string": pd.array([None if g else t for g, t in zip(gaps, text, strict=True)],
                               dtype="string"),
            "mixed": [np.nan if g else (1.5 if i % 2 else t)
                      for i, (g, t) in enumerate(zip(gaps, text, strict=True))],
            "float": np.where(gaps, np.nan, rng.normal(size=n)),
            "count": rng.integers(0, 9, n), "flag": rng.random(n) < 0.5})
        for words in (True, False):
            assert column_widths(plain_columns(table), words=words) == \
                column_widths(table, words=words), k


def test_data_sheet_shows_whole_scores_as_whole_numbers(analysis, tmp_path):
    """A score of 5 read "5.000" on the Data sheet, like a measurement; a column with a
    fraction in it keeps its decimals."""
    from sheetflow.report.cells import whole_number_formats

    wb = openpyxl.load_workbook(write_analysis_workbook(analysis, tmp_path / "a.xlsx"))
    data = wb["Data"]
    header = [c.value for c in data[1]]
    values = [row[header.index("value")] for row in data.iter_rows(min_row=2)]
    numbers = [c for c in values if isinstance(c.value, (int, float))]
    assert numbers and {c.number_format for c in numbers} == {"0"}
    fmt = {"count": "whole"}
    table = pd.DataFrame({"a": [5.0, np.nan, 2.0], "b": [4.5, 1.0, np.nan],
                          "c": ["x", 3.0, None], "d": ["x", 0.25, None]})
    assert whole_number_formats(table, fmt) == {"a": "whole", "c": "whole"}


def test_methods_text_is_split_between_references_not_inside_one():
    """A long reference list was cut after "for categorical data." and went on with
    "Biometrics 33, 159-174." in the next row."""
    from sheetflow.report.workbook import METHODS_WIDTHS, _pieces

    refs = [f"Author{i}, A. B., & Other, C. (19{i:02d}). A long title about measurement of "
            f"agreement number {i} for categorical data. Biometrics {i}, 159-174."
            for i in range(40)]
    text = "Intro sentence one. " + "Intro, with commas, many. " * 5 + "\n" + "\n".join(refs)
    pieces = _pieces(text, METHODS_WIDTHS[1])
    assert len(pieces) > 1
    lines = text.split("\n")
    for piece in pieces[1:]:
        assert piece.split("\n")[0] in lines, piece[:60]  # starts where a reference does
    assert " ".join(pieces).replace("\n", " ") == text.replace("\n", " ")
    # a single sentence too long for one piece is split after a comma
    long = "Seeds: " + ", ".join(f"R{i}: {10**9 + i}" for i in range(600)) + "."
    split = _pieces(long, METHODS_WIDTHS[1])
    assert len(split) > 1 and all(p.endswith(",") for p in split[:-1])
    assert " ".join(split) == long


def test_a_column_blank_on_every_row_is_left_off_its_sheet():
    """An empty "reason" column (nothing was undefined) and an empty "band" column (the
    plan sets none) pushed sheets a page to the right when printed."""
    from sheetflow.report.workbook import without_blank_columns

    table = pd.DataFrame({"measure": ["a", "b"], "alpha": [0.5, np.nan],
                          "reason": ["", None], "band": [np.nan, pd.NA],
                          "listed": [[], [1]]})
    assert list(without_blank_columns(table).columns) == ["measure", "alpha", "listed"]
    blank = pd.DataFrame({"reason": ["", ""]})
    assert list(without_blank_columns(blank).columns) == ["reason"]  # kept: nothing else
    assert without_blank_columns(table.iloc[:0]).shape == (0, 5)


def test_a_pooled_mark_is_said_once_above_its_table_only_when_one_text_holds_every_row():
    """Protocol 001's pooled mark, one text on every row, is a line above the sheet's
    table; a pooled column that is blank, or not the same on every row, stays a
    column (nothing it says is lost)."""
    from sheetflow.report.workbook import said_once

    mark = "pooled over 2 owners as if independent: descriptive"
    table = pd.DataFrame({"arm": ["a", "b"], "yield": [0.5, 0.25], "pooled": [mark, mark]})
    line, shown = said_once(table)
    assert line == f"Every row of this table: {mark}"
    assert list(shown.columns) == ["arm", "yield"]
    for values in ([mark, "pooled over 3 owners"], [mark, ""], ["", ""]):
        line, shown = said_once(table.assign(pooled=values))
        assert line == "" and list(shown.columns) == ["arm", "yield", "pooled"]
    assert said_once(table.drop(columns="pooled"))[0] == ""


def test_whole_number_figures_show_without_decimals_but_bounded_estimates_keep_them():
    """W+ read "145.000", a trend's scores "1.000 / 2.000 / 3.000" and its degrees of
    freedom "1.000"; an alpha of exactly 1 still reads "1.000"."""
    from sheetflow.report.cells import column_meaning

    assert column_meaning("w_plus", pd.Series([145.0])) == "count"
    assert column_meaning("score", pd.Series([1.0, 2.0, 3.0])) == "count"
    assert column_meaning("df", pd.Series([1.0])) == "count"
    assert column_meaning("mean_total", pd.Series([100.0, np.nan, 48.0])) == "count"
    assert column_meaning("mean_total", pd.Series([100.0, 48.5])) == "num"
    assert column_meaning("alpha", pd.Series([1.0, 0.0, np.nan])) == "num"
    assert column_meaning("kappa", pd.Series([-1.0, 1.0])) == "num"
def test_methods_states_the_wilcoxon_difference_the_way_the_sheet_computes_it(tmp_path):
    """Planted: every case's improved response scores higher than its baseline one, so
    improved minus baseline is positive on every case (W+ is every rank, n(n+1)/2).
    The sheet's arm 1 is the one the median difference starts from; the Methods entry
    names the difference as arm 1 minus arm 2 and the two arms in that order."""
    study = load_study(data_dir("templates") / "paired-rubric")
    first, second = (a.id for a in study.design.arms)  # baseline, improved
    rows = []
    for i, case in enumerate(it.id for it in study.items):
        for arm, lift in ((first, 0), (second, 1 + i % 3)):
            for r in study.raters:
                for d in study.rubric.by_scope("response"):
                    dom = d.value_domain()
                    rows.append({"rater": r.id, "case": case, "arm": arm, "dimension": d.id,
                                 "value": float(dom[min(lift, len(dom) - 1)]),
                                 "confidence": "Medium"})
    path = write_analysis_workbook(run_plan(study, pd.DataFrame(rows)),
                                   tmp_path / "analysis.xlsx")
    wb = openpyxl.load_workbook(path)
    sheet = wb["Wilcoxon"]
    head = [c.value for c in sheet[1]]
    row = dict(zip(head, [c.value for c in sheet[2]], strict=True))
    n = len(study.items)
    assert (row["arm 1"], row["arm 2"]) == (second, first)
    assert row["median diff"] > 0 and row["W+ (signed-rank sum)"] == n * (n + 1) / 2
    methods = wb["Methods"]
    text = " ".join(str(b.value) for a, b in zip(methods["A"], methods["B"], strict=True)
                    if a.value == "Wilcoxon signed-rank")
    assert "arm 1 minus arm 2 as the Wilcoxon sheet names them (here " \
           f"{second} minus {first})" in text
    assert "a positive median difference means arm 1 scored higher" in text


def test_cohen_kappa_sheet_notes_intervals_past_1_and_of_no_width(tmp_path):
    """Planted: the first two raters give the same scores on every response (kappa 1,
    standard error 0, an interval of no width from 36 units); the third departs from
    them on one response, so its kappa is high and its normal interval passes 1. The
    sheet carries the note beside each such row, and only beside them."""
    from sheetflow.analysis.readings import PAST_ONE, ZERO_WIDTH

    study = load_study(data_dir("templates") / "paired-rubric")
    raters = [r.id for r in study.raters]
    rows = []
    for i, case in enumerate(it.id for it in study.items):
        for j, arm in enumerate(a.id for a in study.design.arms):
            for r in raters:
                for d in study.rubric.by_scope("response"):
                    dom = d.value_domain()
                    k = (i + j) % len(dom)
                    if r == raters[-1] and i == 0 and j == 0:
                        k = (k + 1) % len(dom)  # the one departure
                    rows.append({"rater": r, "case": case, "arm": arm, "dimension": d.id,
                                 "value": float(dom[k]), "confidence": "Medium"})
    path = write_analysis_workbook(run_plan(study, pd.DataFrame(rows)),
                                   tmp_path / "analysis.xlsx")
    sheet = openpyxl.load_workbook(path)["Cohen kappa"]
    head = [c.value for c in sheet[1]]
    table = [dict(zip(head, [c.value for c in r], strict=True))
             for r in sheet.iter_rows(min_row=2)]
    seen = set()
    for row in table:
        low, high = row["95% CI low"], row["95% CI high"]
        want = PAST_ONE if high is not None and high > 1 else \
            ZERO_WIDTH if low is not None and low == high else ""
        assert (row["note"] or "") == want, row
        seen.add(want)
    assert {PAST_ONE, ZERO_WIDTH} <= seen
    first_pair = next(r for r in table if {r["rater 1"], r["rater 2"]} == set(raters[:2]))
    assert first_pair["kappa"] == 1 and first_pair["note"] == ZERO_WIDTH
