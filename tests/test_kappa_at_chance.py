"""A kappa exactly at chance is 0, read "slight" and shown 0.000.

Observed and chance agreement are equal rationals (both 25/36 for the faithfulness
answers below, with quadratic weights), but summed in different orders they came out
a bit apart, so the kappa was -3.6e-16: shown to every digit of that noise and read
"poor" (below Landis & Koch's 0). The statistic now takes two
agreements within rounding of each other as one number, and a figure within rounding
of a bound it is read against is that bound.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.analysis.decision import shown_against, threshold_check
from sheetflow.analysis.readings import kappa_reading
from sheetflow.collect.run import collect
from sheetflow.spec.study import load_study
from sheetflow.stats import cohen_kappa, fleiss_kappa, gwet_ac
from sheetflow.words import shown_number

# two raters' faithfulness on 18 items (0 Faithful, 1 Partial, 2 Unfaithful): with
# quadratic weights on the ranks, observed agreement equals chance agreement exactly
FIRST = [0, 2, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 2, 1, 0, 1, 1]
SECOND = [0, 1, 1, 0, 1, 2, 2, 2, 0, 2, 0, 1, 2, 2, 0, 0, 1, 1]
FAITH = ("Faithful", "Partial", "Unfaithful")


def _exact_agreements() -> tuple[Fraction, Fraction]:
    weight = [[Fraction(1) - Fraction(abs(i - j), 2) ** 2 for j in range(3)] for i in range(3)]
    n = len(FIRST)
    rows = [FIRST.count(k) for k in range(3)]
    cols = [SECOND.count(k) for k in range(3)]
    observed = sum(weight[a][b] for a, b in zip(FIRST, SECOND, strict=True)) / n
    chance = sum(weight[i][j] * rows[i] * cols[j] for i in range(3) for j in range(3)) / n**2
    return observed, chance


def _tidy(first: list[int], second: list[int]) -> pd.DataFrame:
    n = len(first)
    return pd.DataFrame({"unit": list(range(n)) * 2, "rater": ["a"] * n + ["b"] * n,
                         "value": first + second})


def test_the_table_is_a_tie_in_exact_arithmetic():
    observed, chance = _exact_agreements()
    assert observed == chance and chance != 1


def test_a_weighted_kappa_at_chance_is_exactly_zero():
    row = cohen_kappa(_tidy(FIRST, SECOND), weights="quadratic", categories=[0, 1, 2]).iloc[0]
    assert row["kappa"] == 0.0
    assert row["ci_low"] == -row["ci_high"]  # the interval sits around 0 itself


def _shares(first: list[int], second: list[int], q: int) -> list[Fraction]:
    """Each category's share of the two raters' ratings (pi_k)."""
    return [Fraction(first.count(k) + second.count(k), 2 * len(first)) for k in range(q)]


def _agreement(first: list[int], second: list[int]) -> Fraction:
    return Fraction(sum(a == b for a, b in zip(first, second, strict=True)), len(first))


def test_fleiss_kappa_at_chance_is_exactly_zero():
    first, second = [0, 0, 1, 0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 1, 0, 0, 1, 1]
    chance = sum(p * p for p in _shares(first, second, 2))  # Fleiss: sum of pi_k^2
    assert _agreement(first, second) == chance  # 5/9 both
    assert fleiss_kappa(_tidy(first, second), categories=[0, 1]).loc[0, "kappa"] == 0.0


def test_gwet_ac1_at_chance_is_exactly_zero():
    first = [1, 2, 0, 1, 0, 2, 2, 2, 2, 0, 1, 0]
    second = [1, 2, 1, 1, 0, 1, 0, 0, 0, 1, 2, 2]
    chance = sum(p * (1 - p) for p in _shares(first, second, 3)) / 2  # Gwet: / (q - 1)
    assert _agreement(first, second) == chance  # 1/3 both
    assert gwet_ac(_tidy(first, second), categories=[0, 1, 2]).loc[0, "ac"] == 0.0


def test_noise_at_a_bound_is_the_bound():
    noise = -9.516197353929929e-16
    assert shown_number(noise, (0.0, 0.21)) == "0.000"
    assert kappa_reading(noise) == "slight"
    assert shown_number(-1e-9, (0.0,)) == "-0.000000001"  # a real difference still shows


def _plant_faithfulness(root: Path) -> None:
    order = {item.id: i for i, item in enumerate(load_study(root).items)}

    def answer(cell):
        if cell["dimension"] != "faithfulness" or cell["scope"] != "response":
            return KEEP
        codes = FIRST if cell["rater"] == "rater1" else SECOND
        return FAITH[codes[order[cell["item_id"]]]]

    plant(root, answer)


def test_analyze_reads_a_kappa_at_chance_as_slight(tmp_path):
    root = study_from("answer-review", tmp_path / "study")
    _plant_faithfulness(root)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    faith = next(f for f in summary["reported"]
                 if f["analysis"] == "cohen_kappa" and f["measure"] == "faithfulness")
    assert faith["value"] == 0.0 and faith["reading"] == "slight"
    line = next(ln for ln in out.output.splitlines()
                if ln.startswith("kappa") and "(faithfulness)" in ln)
    assert " of rater1 with rater2 0.000 [" in line, line
    assert line.endswith("slight (Landis & Koch 1977)"), line
    assert np.isfinite(faith["ci_low"])
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    cell = next(r[1] for r in sheet.iter_rows(max_col=2)
                if str(r[0].value).startswith("Faithfulness to the evidence (faithfulness): "
                                              "Cohen's kappa"))
    assert (cell.value, cell.number_format) == (0, "0.000")


def test_a_check_at_its_target_up_to_rounding_is_met():
    """0.7 computed as 0.7 - 1e-16 is the target, met and shown 0.700, as it is read."""
    check = threshold_check("alpha", 0.7 - 1e-16, 0.7, weak_from=0.6)
    assert (check.passed, check.outcome) == (True, "met")
    assert shown_against(0.7 - 1e-16, 0.7, bounds=(0.6,)) == ("0.700", "0.700")


# four raters on seven units (values 1-3): the coincidence sums tie in exact arithmetic
# at the nominal and at the interval level, so alpha is 0 at both; in floats it came
# out -2.2e-16 (nominal) and 1.1e-16 (interval)
AT_CHANCE = [[2, 2, 3, 3, 1, 3, 2], [3, 2, 3, 2, 1, 2, 3], [1, 2, 2, 3, 1, 1, 3],
             [3, 3, 2, 1, 3, 2, 3]]


def _exact_alpha(data: list[list[int]], level: str) -> Fraction:
    """Krippendorff's alpha in rationals, from the coincidence matrix (complete data)."""
    def delta(c: int, k: int) -> Fraction:
        return Fraction(c != k) if level == "nominal" else Fraction(c - k) ** 2

    units = list(zip(*data, strict=True))
    n = sum(len(u) for u in units)
    observed = sum(Fraction(delta(c, k), len(u) - 1)
                   for u in units for i, c in enumerate(u) for j, k in enumerate(u) if i != j)
    totals = {c: sum(u.count(c) for u in units) for c in {v for u in units for v in u}}
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals)
    return 1 - (n - 1) * observed / expected


def test_the_alpha_data_is_at_chance_in_exact_arithmetic():
    assert _exact_alpha(AT_CHANCE, "nominal") == 0 == _exact_alpha(AT_CHANCE, "interval")
    assert _exact_alpha(AT_CHANCE[:3], "nominal") != 0  # the rule is no constant


def test_krippendorff_alpha_at_chance_is_exactly_zero():
    from sheetflow.stats import alpha_complete_batch, krippendorff_alpha

    for level in ("nominal", "interval"):
        row = krippendorff_alpha(np.array(AT_CHANCE, float), level=level, n_boot=0).iloc[0]
        assert row["alpha"] == 0.0, (level, row["alpha"])
        counts = np.array([[[list(u).count(v) for v in (1, 2, 3)]
                            for u in zip(*AT_CHANCE, strict=True)]], float)
        estimate, _, _ = alpha_complete_batch(counts, [1, 2, 3], level, np.ones((2, 7)))
        assert estimate[0] == 0.0, (level, estimate[0])
    other = krippendorff_alpha(np.array(AT_CHANCE[:3], float), level="nominal", n_boot=0)
    assert other.loc[0, "alpha"] == pytest.approx(float(_exact_alpha(AT_CHANCE[:3], "nominal")),
                                                  abs=1e-15)


def test_the_methods_sheet_states_the_rule_for_alpha(tmp_path):
    from sheetflow.analysis.agreement import methods
    from sheetflow.spec import init_study

    text = dict(methods(load_study(init_study(tmp_path / "s", "paired-rubric"))))
    assert text["Krippendorff's alpha"].endswith(
        "Observed and expected disagreement (D_o and D_e) that differ by no more than "
        "rounding (64 units in the last place, about 1.4e-14 of the larger) are one number, "
        "so an alpha exactly at chance is exactly 0.")


def test_fleiss_kappa_with_one_category_is_undefined_and_methods_say_so(tmp_path):
    """Fleiss (1971): p_o = mean over units of sum_k n_ik (n_ik - 1) / (n (n - 1)),
    p_e = sum_k p_k^2 with p_k the share of all ratings in category k. All 12 ratings
    of 3 raters on 4 units in category 1: p_o = p_e = 1, kappa = 0/0, undefined (no
    value, no interval). Rater A giving 1 throughout beside B = 1 2 1 2 and C = 1 1 2 1
    does not fix it at 0 (Cohen's pairwise kappas with A are): by hand p_o = (1 + 3 *
    (2 * 1) / 6) / 4 = 1/2, p_k = 9/12 and 3/12, p_e = 0.5625 + 0.0625 = 0.625, kappa =
    (0.5 - 0.625) / 0.375 = -1/3. The Methods sheet states the convention."""
    from sheetflow.analysis.agreement import methods
    from sheetflow.spec import init_study
    from sheetflow.stats import fleiss_kappa

    same = fleiss_kappa(np.ones((3, 4)), categories=[1, 2]).loc[0]
    assert np.isnan(same["kappa"]) and np.isnan(same["se"]) and np.isnan(same["ci_low"])
    assert same["p_e"] == 1 and "chance agreement is 1" in same["reason"]
    mixed = fleiss_kappa(np.array([[1, 1, 1, 1], [1, 2, 1, 2], [1, 1, 2, 1]], float)).loc[0]
    assert mixed["kappa"] == pytest.approx(-1 / 3) and mixed["p_e"] == pytest.approx(0.625)
    text = dict(methods(load_study(init_study(tmp_path / "s", "paired-rubric"))))
    assert ("every rating of a dimension is in one category, chance agreement is 1 and "
            "Fleiss' kappa is 0/0: undefined") in text["Fleiss' kappa"]
    assert "not read on a benchmark scale" in text["Fleiss' kappa"]
