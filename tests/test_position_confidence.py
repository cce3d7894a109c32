"""Position bias and confidence-aware agreement on planted paired data (issue: what the
raters' confidence and the A/B position say).

Every answer below is known before the run: a rater who always picks label A, raters
whose choices follow the arm, and raters who agree perfectly when confident and at
random when not.
"""

from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest
from scipy import stats as sps

from sheetflow import stats
from sheetflow.analysis import run_plan
from sheetflow.report import write_analysis_workbook
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir
from sheetflow.stats.proportions import binomial_share, position_free_preference

BASE, IMPROVED = "iter1_baseline", "iter2_improved"


@pytest.fixture(scope="module")
def study():
    return load_study(data_dir("templates") / "paired-rubric")


def _planted(study, *, biased: str | None, confident_agree: bool = False, seed: int = 3):
    """Every rater scores every case; sides drawn per rater and case.

    ``biased`` always chooses the response under A; the others choose the improved arm.
    With ``confident_agree``, half the cases are High-confidence cases where everyone
    gives the same depth, and the rest Low-confidence cases with random depths.
    """
    rng = np.random.default_rng(seed)
    cases = [it.id for it in study.items]
    depth = study.rubric.dimension("depth").value_domain()
    sure = {c: i % 2 == 0 for i, c in enumerate(cases)}
    rows = []
    for r in (x.id for x in study.raters):
        for c in cases:
            under_a = IMPROVED if rng.uniform() < 0.5 else BASE
            sides = {"A": under_a, "B": BASE if under_a == IMPROVED else IMPROVED}
            for label, arm in sides.items():
                for d in study.rubric.by_scope("response"):
                    dom = d.value_domain()
                    value = dom[-1] if arm == IMPROVED else dom[0]
                    conf = "High"
                    if confident_agree and d.id == "depth":
                        stable = (2 * cases.index(c) + (arm == IMPROVED)) % len(depth)
                        value = depth[stable] if sure[c] else depth[rng.integers(len(depth))]
                        conf = "High" if sure[c] else "Low"
                    rows.append({"rater": r, "case": c, "label": label, "arm": arm,
                                 "dimension": d.id, "value": float(value), "confidence": conf})
            choice = sides["A"] if r == biased else IMPROVED
            rows.append({"rater": r, "case": c, "label": "", "arm": "", "dimension": "direction",
                         "value": choice, "confidence": ""})
    return pd.DataFrame(rows)


def test_a_rater_who_always_picks_a_is_flagged_and_the_arm_is_recovered(study, tmp_path):
    biased = study.raters[0].id
    res = run_plan(study, _planted(study, biased=biased))
    table = res.tables["position_bias"].set_index("rater")
    row = table.loc[biased]
    assert row["share_a"] == 1.0 and row["n"] == len(study.items)
    assert row["p"] < 0.001 and bool(row["flagged"])
    # the same counts through scipy directly
    assert row["p"] == pytest.approx(sps.binomtest(int(row["n"]), int(row["n"]), 0.5).pvalue)
    for honest in (r.id for r in study.raters[1:]):
        assert not bool(table.loc[honest, "flagged"])
    free = res.tables["position_free_preference"].set_index("rater")
    for honest in (r.id for r in study.raters[1:]):
        assert free.loc[honest, "arm"] == IMPROVED
        assert free.loc[honest, "preference"] > 0.9  # every choice was the improved arm
        assert free.loc[honest, "ci_low"] > 0.5
    # the biased rater has no arm preference once position is removed
    assert free.loc[biased, "preference"] == pytest.approx(0.5, abs=0.1)
    summary = res.summary
    flagged = [p for p in summary["position_bias"] if p["flagged"]]
    assert [p["rater"] for p in flagged] == [biased]
    assert set(flagged[0]) >= {"rater", "share_a", "n", "p", "ci", "flagged"}
    path = write_analysis_workbook(res, tmp_path / "analysis.xlsx")
    cells = [c.value for row_ in openpyxl.load_workbook(path)["Summary"].iter_rows()
             for c in row_ if isinstance(c.value, str)]
    assert any(c.startswith("Position bias flagged:") and biased in c for c in cells)
    bias_head = next(openpyxl.load_workbook(path)["Position bias"].iter_rows(values_only=True))
    assert {"chose A (count)", "share chose A"} <= set(bias_head)
    _free_sheet_says_what_its_columns_hold(path, free, biased)


def _free_sheet_says_what_its_columns_hold(path, free, biased):
    """The position-free preference sheet's headers name the stratum and the count under
    them: the biased rater chose the arm every time it was under A and never under B."""
    sheet = openpyxl.load_workbook(path)["Position-free preference"]
    rows = list(sheet.iter_rows(values_only=True))
    header = rows[0]
    assert not any("kappa" in str(h) for h in header)  # counts, not agreement
    shown = next(dict(zip(header, r, strict=True)) for r in rows[1:]
                 if r[header.index("rater")] == biased)
    truth = free.loc[biased]
    assert shown["arm under A (count)"] == truth["n_first"]
    assert shown["arm under A, chosen"] == truth["k_first"] == truth["n_first"]
    assert shown["arm under B, chosen"] == truth["k_second"] == 0
    assert shown["arm under A, share chosen"] == 1.0
    assert shown["arm under B, share chosen"] == 0.0


def test_no_flag_when_choices_follow_the_arm(study):
    res = run_plan(study, _planted(study, biased=None))
    assert not res.tables["position_bias"]["flagged"].any()
    assert not any(line.startswith("Position bias flagged") for line in res.summary["readings"])
    pooled = res.tables["position_free_preference"].set_index("rater").loc["all raters"]
    assert pooled["arm"] == IMPROVED and pooled["preference"] > 0.95


def test_confident_ratings_agree_perfectly_and_low_ones_do_not(study):
    data = _planted(study, biased=None, confident_agree=True)
    res = run_plan(study, data)
    table = res.tables["confidence_agreement"]
    depth = table[table["dimension"] == "depth"].set_index("subset")
    assert depth.loc["Medium/High", "alpha"] == pytest.approx(1.0)
    assert depth.loc["all ratings", "alpha"] < 0.9
    for subset in ("all ratings", "Medium/High"):
        assert np.isfinite(depth.loc[subset, ["ci_low", "ci_high"]].astype(float)).all()
    # the same numbers from sheetflow.stats on the same subsets
    dim = study.rubric.dimension("depth")
    ratings = data[data["dimension"] == "depth"].copy()
    ratings["unit"] = ratings["case"] + "|" + ratings["arm"]
    domain = [float(v) for v in dim.value_domain()]
    for subset, keep in (("all ratings", ratings), ("Medium/High",
                                                    ratings[ratings["confidence"] == "High"])):
        points = keep.assign(value=keep["value"])
        ref = stats.krippendorff_alpha(points[["unit", "rater", "value"]], level=dim.level,
                                       value_domain=domain, n_boot=study.plan.n_boot,
                                       seed=study.plan.seed).iloc[0]
        got = depth.loc[subset]
        assert got["alpha"] == pytest.approx(ref["alpha"], abs=1e-12)
        assert got["ci_low"] == pytest.approx(ref["ci_low"], abs=1e-12)
        assert got["ci_high"] == pytest.approx(ref["ci_high"], abs=1e-12)
    by_rater = res.tables["confidence_by_rater"]
    depth_counts = by_rater[by_rater["dimension"] == "depth"]
    assert (depth_counts["n_high"] + depth_counts["n_low"] == depth_counts["n"]).all()
    levels = res.summary["confidence"]["agreement_by_level"]
    assert {(r["dimension"], r["subset"]) for r in levels} >= {("depth", "all ratings"),
                                                               ("depth", "Medium/High")}
    assert any(line.startswith("Confidence: Depth of Analysis (depth)")
               for line in res.summary["readings"])
    direction = res.tables["direction_by_confidence"].set_index("confidence")
    assert direction.loc["High", "agreement"] == 1.0
    assert "lowest confidence" in direction.loc["High", "confidence_from"]


def test_each_confidence_alpha_says_the_units_and_raters_it_rests_on(study):
    """As every other alpha line does: "0.583 (36 units, 4 raters)"."""
    res = run_plan(study, _planted(study, biased=None, confident_agree=True))
    depth = res.tables["confidence_agreement"].set_index(["dimension", "subset"]).loc["depth"]
    raters = len(study.raters)
    assert (depth["n_raters"] == raters).all()
    # only the cases where everyone was sure stay in the Medium/High subset: fewer units
    assert depth.loc["Medium/High", "n_units"] < depth.loc["all ratings", "n_units"]
    rows = {r["subset"]: r for r in res.summary["confidence"]["agreement_by_level"]
            if r["dimension"] == "depth"}
    assert {k: (rows[k]["n_units"], rows[k]["n_raters"]) for k in rows} == {
        k: (depth.loc[k, "n_units"], raters) for k in depth.index}
    every, sure = (f"{depth.loc[k, 'alpha']:.3f} ({depth.loc[k, 'n_units']} units, "
                   f"{raters} raters)" for k in ("all ratings", "Medium/High"))
    assert (f"Confidence: Depth of Analysis (depth) alpha {every} on all ratings, {sure} on "
            "Medium/High only; the disagreement concentrates in Low-confidence ratings."
            ) in res.summary["readings"]


def test_methods_states_the_binomial_test(study):
    res = run_plan(study, _planted(study, biased=None))
    topics = dict(res.methods)
    assert "binomtest" in topics["Position bias"] and "Clopper-Pearson" in topics["Position bias"]
    assert "Medium/High" in topics["Confidence"]


@pytest.mark.parametrize(("k", "n"), [(0, 1), (3, 10), (10, 10), (17, 40), (250, 487)])
def test_binomial_share_equals_scipy_binomtest(k, n):
    got = binomial_share(k, n).iloc[0]
    ref = sps.binomtest(k, n, 0.5)
    ci = ref.proportion_ci(method="exact")
    # scipy.special's binomial tails changed implementation (cephes, then boost) across
    # the scipy versions allowed: equal to a few units in the last place
    assert got["p"] == pytest.approx(ref.pvalue, rel=1e-12)
    # the exact roots (betaincinv, as R's qbeta); scipy finds them with brentq, whose
    # default absolute tolerance is 2e-12
    assert got["ci_low"] == pytest.approx(ci.low, rel=1e-10, abs=2e-12)
    assert got["ci_high"] == pytest.approx(ci.high, rel=1e-10, abs=2e-12)


def test_binomial_share_published_r_value():
    # R: binom.test(682, 925, p = 0.75): p-value = 0.3825, 95% CI 0.7076683 0.7654066
    # (the Mendel peas example of R's ?binom.test, also in scipy's binomtest docs).
    row = binomial_share(682, 925, p0=0.75).iloc[0]
    assert round(row["p"], 4) == 0.3825
    assert row["ci_low"] == pytest.approx(0.7076683, abs=5e-8)
    assert row["ci_high"] == pytest.approx(0.7654066, abs=5e-8)


def test_position_free_preference_equals_logistic_regression():
    statsmodels = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(5)
    for _ in range(20):
        n_a, n_b = rng.integers(5, 60, size=2)
        k_a, k_b = rng.integers(1, n_a), rng.integers(1, n_b)
        y = np.r_[np.ones(k_a), np.zeros(n_a - k_a), np.ones(k_b), np.zeros(n_b - k_b)]
        x = np.r_[np.ones(n_a), -np.ones(n_b)]
        fit = statsmodels.Logit(y, statsmodels.add_constant(x)).fit(disp=0)
        row = position_free_preference(int(k_a), int(n_a), int(k_b), int(n_b)).iloc[0]
        low, high = fit.conf_int()[0]
        assert row["preference"] == pytest.approx(1 / (1 + np.exp(-fit.params[0])), abs=1e-8)
        assert row["position_log_odds"] == pytest.approx(fit.params[1], abs=1e-8)
        assert row["ci_low"] == pytest.approx(1 / (1 + np.exp(-low)), abs=1e-8)
        assert row["ci_high"] == pytest.approx(1 / (1 + np.exp(-high)), abs=1e-8)


def test_position_free_preference_edge_cases():
    row = position_free_preference(10, 10, 0, 10).iloc[0]  # always A: all or nothing
    assert row["preference"] == pytest.approx(0.5) and "Haldane" in row["reason"]
    empty = position_free_preference(0, 0, 3, 5).iloc[0]
    assert np.isnan(empty["preference"]) and "never shown" in empty["reason"]
    with pytest.raises(ValueError):
        binomial_share(5, 3)


def test_position_free_preference_on_arrays_gives_a_row_per_stratum_pair():
    """One call on arrays (one element per rater) equals one call per element."""
    strata = [(10, 10, 0, 10), (0, 0, 3, 5), (7, 12, 4, 9), (1, 3, 0, 0), (5, 9, 5, 9)]
    together = position_free_preference(*map(list, zip(*strata, strict=True)))
    one_by_one = pd.concat([position_free_preference(*s) for s in strata], ignore_index=True)
    pd.testing.assert_frame_equal(together, one_by_one)


def test_the_demo_summary_shows_the_position_line(tmp_path):
    from sheetflow.demo.run import run_demo

    run_demo(tmp_path / "demo")
    out = tmp_path / "demo" / "out"
    import json
    readings = json.loads((out / "summary.json").read_text(encoding="utf-8"))["readings"]
    assert any(line.startswith("Position: label A chosen in") for line in readings)
    cells = [c.value for row in openpyxl.load_workbook(out / "analysis.xlsx")["Summary"]
             .iter_rows() for c in row if isinstance(c.value, str)]
    assert any(c.startswith("Position: label A chosen in") for c in cells)
    book = openpyxl.load_workbook(out / "analysis.xlsx")
    assert "Confidence chart" in [c.title for c in book.chartsheets], \
        "the chart prints on a page of its own"


def test_large_tables_go_beside_the_workbook(study, tmp_path, monkeypatch):
    """A pairwise table longer than the limit is written whole as CSV; its sheet holds a
    note naming the file and a per-measure digest; a later small run removes the CSV."""
    import sheetflow.report.large as large
    from sheetflow.report import write_analysis_outputs

    res = run_plan(study, _planted(study, biased=None))
    monkeypatch.setattr(large, "LARGE_ROWS", 20)
    paths = write_analysis_outputs(res, tmp_path / "out")
    kappa_csv = tmp_path / "out" / "tables" / "cohen_kappa.csv"
    data_csv = tmp_path / "out" / "tables" / "data.csv"
    assert kappa_csv in paths and data_csv in paths
    full = pd.read_csv(kappa_csv)
    assert len(full) == len(res.tables["cohen_kappa"])
    ws = openpyxl.load_workbook(tmp_path / "out" / "analysis.xlsx")["Cohen kappa"]
    assert "tables/cohen_kappa.csv" in ws["A1"].value
    header = [c.value for c in ws[3]]
    assert header[:4] == ["measure", "rows (count)", "defined (count)", "mean"]  # in words
    first = res.tables["cohen_kappa"].groupby("measure", sort=False)["kappa"]
    named = {study.rubric.named(m): m for m in first.mean().index}  # the sheet's names
    measure = named[ws["A4"].value]
    assert ws["D4"].value == pytest.approx(first.mean()[measure])
    # a digest row stands for many pairs: the units are their range, never one N
    units = res.tables["cohen_kappa"].groupby("measure", sort=False)["n_units"]
    at = {name: i for i, name in enumerate(header)}
    row = [c.value for c in ws[4]]
    assert (row[at["units fewest"]], row[at["units most"]]) == (
        units.min()[measure], units.max()[measure])
    monkeypatch.setattr(large, "LARGE_ROWS", 10**9)
    write_analysis_outputs(res, tmp_path / "out")
    assert not kappa_csv.exists() and not data_csv.exists()


def test_large_table_csv_neutralises_formula_starts(tmp_path):
    from sheetflow.report.large import write_csv

    table = pd.DataFrame({"rater1": ["=HYPERLINK(1)", "R2", "-3", None],
                          "kappa": [0.5, -0.25, np.nan, 1.0], "reason": ["@x", "", "ok", "+1"]})
    text = write_csv(table, tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()
    assert text[1].startswith("'=HYPERLINK") and text[1].endswith(",'@x")
    assert text[2] == "R2,-0.25," and text[3] == "'-3,,ok" and text[4] == ",1.0,'+1"


def test_position_free_preference_corrected_by_hand():
    """A stratum all or nothing: the arm chosen in 10 of 10 cases under A, 5 of 10
    under B. The Haldane (1956) - Anscombe (1956) correction as meta-analysis applies
    it (0.5 added to every cell of a 2 x 2 table with a zero cell, and only then:
    Cochrane Handbook 10.4.4.2; R metafor escalc, add = 1/2, to = "only0") gives cells
    10.5, 0.5, 5.5, 5.5. By hand: logit_A = ln 21, logit_B = 0, b0 = b1 = ln(21) / 2,
    preference = expit(b0) = sqrt(21) / (1 + sqrt(21)) = 0.8208712; se(b0) = 0.5 *
    sqrt(1/10.5 + 1/0.5 + 2/5.5) = 0.7840399."""
    row = position_free_preference(10, 10, 5, 10).iloc[0]
    root = np.sqrt(21.0)
    assert row["preference"] == pytest.approx(root / (1 + root), abs=1e-12)
    assert row["position_log_odds"] == pytest.approx(np.log(21.0) / 2, abs=1e-12)
    se = 0.5 * np.sqrt(1 / 10.5 + 1 / 0.5 + 2 / 5.5)
    assert se == pytest.approx(0.7840399, abs=1e-7)
    z = 1.959963984540054
    assert row["ci_low"] == pytest.approx(1 / (1 + np.exp(-(np.log(21) / 2 - z * se))),
                                          abs=1e-12)
    assert "Haldane-Anscombe" in row["reason"]
    # no zero cell: no correction (the plain maximum-likelihood logits)
    plain = position_free_preference(8, 10, 5, 10).iloc[0]
    assert plain["preference"] == pytest.approx(2 / (2 + 1), abs=1e-12)  # expit(ln 4 / 2)
    assert plain["reason"] == ""


def test_a_corrected_position_free_preference_says_so_on_the_summary():
    """100% under A and 50% under B give 82.1% once corrected (the hand-computed case
    above), not the 75% the shares suggest: the Summary line names the correction."""
    from types import SimpleNamespace

    from sheetflow.analysis import position

    row = position_free_preference(10, 10, 5, 10).iloc[0]
    summary = {"position_free_preference": [{
        "arm": "new", "preference": row["preference"], "ci": [row["ci_low"], row["ci_high"]],
        "share_when_under_a": 1.0, "share_when_under_b": 0.5, "reason": row["reason"],
        "note": ""}]}
    ctx = SimpleNamespace(param=lambda _name, default=None: default)
    (line,) = position.readings(summary, ctx)
    assert line.startswith("Position-free preference for new: 82.1% ")
    assert line.endswith("(under A 100.0%, under B 50.0%; a stratum share is 0 or 1: "
                         "Haldane-Anscombe correction (+0.5 per cell)).")
