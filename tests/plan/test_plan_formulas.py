"""Published sample sizes: Bonett (2002) for the ICC, Krippendorff's table for alpha.

Where every expected number comes from (each test repeats its source), and what
could not be found.

Bonett, D. G. (2002). Sample size requirements for estimating intraclass
correlations with desired precision. Statistics in Medicine, 21(9), 1331-1335.
doi:10.1002/sim.1108

* Table 1 of the paper is NOT reproduced here. Neither the paper's table nor a
  quotation of its entries could be consulted, so no entry of it is asserted: a
  number recomputed from the formula would only test the code against itself.
* The paper's worked example (4 raters, anticipated ICC 0.85, 95% interval of full
  width 0.2: "a sample size of 19.2", and 20 subjects give a width "close to 0.2"),
  as quoted in the documentation example of ``prec_icc`` in the R package presize
  (file R/correlation_measures.R).
* Values printed by independent implementations of the same formula: presize's
  ``prec_icc`` (its test file tests/testthat/test-correlation_measures.R and its
  documented output), the R package ICC's ``Nest()`` (output posted in an ASA Connect
  statistical-consulting thread), and P. ten Klooster's online "ICC reliability
  interval estimation" calculator, whose worked example applies Bonett's k = 2
  adjustment (add 5 rho when rho >= 0.7).

Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology
(2nd ed.), Sage: the reliability chapter, pp. 221-250 (the page range Krippendorff
2011 gives for alpha). The table of minimum numbers of pairable values for two
coders (alpha_min .667 / .800 / .900 by p = .100 / .050 / .010 / .005 by the share
p_c of the rarest of up to 10 equally likely values) reappears in the 4th edition
(2019); the ATLAS.ti manual ("Sample Size and Decision Rules", inter-coder agreement
chapter of the ATLAS.ti 22 Windows manual) reproduces it as an image, states that it
is computed with Bloch & Kraemer's (1989, p. 276) equation 3.7, and quotes two of
its entries in words. Those two are tested. A third entry could NOT be found in a
source that could be read (the book's table itself, or a text quotation of another
cell), so the acceptance's "at least three entries" is not met for this table.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sheetflow.plan import (
    bonett_icc_items,
    bonett_icc_width,
    krippendorff_min_values,
    zou_icc_items,
)


def _bonett_unrounded(rho: float, k: int, w: float) -> float:
    """Bonett's n before rounding up: the width at n = 2 is z sqrt(core), so n - 1 = (w_2 / w)^2."""
    return 1.0 + (bonett_icc_width(rho, k, 2) / w) ** 2


def test_bonett_worked_example_k4_rho085_w02():
    # Bonett (2002), worked example, as quoted in presize's prec_icc documentation:
    # 4 raters, rho = .85, full width .2 -> "a sample size of 19.2", hence 20 subjects.
    assert round(_bonett_unrounded(0.85, 4, 0.20), 1) == 19.2
    assert bonett_icc_items(0.85, 4, 0.20) == 20


def test_bonett_worked_example_width_at_20_subjects():
    # Same example: 20 subjects give a width "close to 0.2"; presize's documented
    # output for prec_icc(0.85, 4, 20) is conf.width 0.1954993.
    assert bonett_icc_width(0.85, 4, 20) == pytest.approx(0.1954993, abs=5e-8)


def test_bonett_width_as_printed_by_presize_rho05_k3_n50():
    # presize, tests/testthat/test-correlation_measures.R, test "icc":
    # prec_icc(rho = .5, k = 3, n = 50) has conf.width 0.3233102.
    assert bonett_icc_width(0.50, 3, 50) == pytest.approx(0.3233102, abs=5e-8)


def test_bonett_rho07_k2_w02_as_printed_by_icc_nest():
    # R package ICC: Nest(est.type = "hypothetical", w = 0.20, ICC = 0.70, k = 2)
    # prints 101 (the ceiling of Bonett's formula, without the k = 2 adjustment).
    assert bonett_icc_items(0.70, 2, 0.20) == 101


def test_bonett_rho08_k2_w02_with_and_without_adjustment():
    # ten Klooster's calculator, worked example citing Bonett (2002): two raters,
    # ICC .8, width .2 -> 51 subjects; with Bonett's k = 2 adjustment 51 + 5 x .8 -> 55.
    assert bonett_icc_items(0.80, 2, 0.20) == 51
    assert bonett_icc_items(0.80, 2, 0.20, small_k_adjust=True) == 55


def test_bonett_rho07_k3_w02_as_printed_by_statpsych():
    # statpsych 2.0.0 (D. G. Bonett's own R package), size.ci.icc(alpha = .05,
    # r = .70, k = 3, w = .2): "Should return: Sample size 68" (D). With k = 3 no
    # small-k adjustment applies, so Bonett's formula alone gives it.
    assert bonett_icc_items(0.70, 3, 0.20, confidence=0.95) == 68


def test_krippendorff_table_pc025_alpha0800_p005():
    # Krippendorff's table, row of 4 equally likely values (p_c = .25), column
    # alpha_min = .800 at p = .050 -> 139 pairable values (quoted in the ATLAS.ti manual).
    assert krippendorff_min_values(0.800, 0.25, 0.05) == 139


def test_krippendorff_table_pc025_alpha0667_p005():
    # Same row and level, column alpha_min = .667 -> 81 (quoted in the ATLAS.ti manual).
    # Both entries also fix p as one-sided: a two-sided z would give 197 and 115.
    assert krippendorff_min_values(0.667, 0.25, 0.05) == 81


@pytest.mark.parametrize("rho,k,w", [(0.5, 3, 0.3), (0.7, 2, 0.2), (0.9, 5, 0.1)])
def test_bonett_width_is_the_inverse_of_the_item_count(rho, k, w):
    n = bonett_icc_items(rho, k, w)
    assert bonett_icc_width(rho, k, n) <= w < bonett_icc_width(rho, k, n - 1)


@pytest.mark.parametrize("rho,k,w", [(0.5, 3, 0.3), (0.7, 2, 0.2), (0.85, 4, 0.2)])
def test_zou_with_even_assurance_is_bonett(rho, k, w):
    assert zou_icc_items(rho, k, w, assurance=0.5) == bonett_icc_items(rho, k, w)


def test_zou_needs_more_items_for_more_assurance():
    sizes = [zou_icc_items(0.7, 3, 0.2, assurance=a) for a in (0.5, 0.8, 0.9)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


def test_bonett_width_matches_exact_f_interval_on_simulated_data():
    """Cross-check: the one-way ICC's exact F interval has about Bonett's width."""
    from scipy.stats import f as f_dist

    rng = np.random.default_rng(3)
    rho, k, n = 0.6, 3, 200
    widths = []
    for _ in range(200):
        y = rng.normal(0, math.sqrt(rho), (n, 1)) + rng.normal(0, math.sqrt(1 - rho), (n, k))
        msb = k * y.mean(axis=1).var(ddof=1)
        msw = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (k - 1))
        fo = msb / msw
        fl, fu = (fo / f_dist.ppf(q, n - 1, n * (k - 1)) for q in (0.975, 0.025))
        widths.append((fu - 1) / (fu + k - 1) - (fl - 1) / (fl + k - 1))
    assert np.median(widths) == pytest.approx(bonett_icc_width(rho, k, n), rel=0.05)


@pytest.mark.parametrize("call", [
    lambda: bonett_icc_items(1.0, 2, 0.2),
    lambda: bonett_icc_items(0.5, 1, 0.2),
    lambda: bonett_icc_items(0.5, 2, 0.0),
    lambda: krippendorff_min_values(0.8, 0.6),
    lambda: zou_icc_items(0.5, 2, 0.2, assurance=1.0),
])
def test_bad_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()


# ---- tests and one-sided bounds (../shared PLAN-ORACLES: kinds D and R as listed there)

@pytest.mark.parametrize(("rho0", "rho1", "raters", "power", "expected"), [
    (0.60, 0.80, 2, 0.80, 49),  # ICC.Sample.Size calculateIccSampleSize man example (R)
    (0.50, 0.65, 4, 0.90, 104),  # statpsych size.test.icc, "Should return 104" (D)
])
def test_icc_test_items_reproduce_walter_eliasziw_donner(rho0, rho1, raters, power,
                                                         expected):
    from sheetflow.plan import icc_test_items

    assert icc_test_items(rho0, rho1, raters, alpha=0.05, power=power, sides=2) == expected


def test_zou_lower_limit_with_assurance_reproduces_agree_n_icc():
    """Agree n_icc rendered example (D): ICC .70, lower .60, one-sided a .05,
    assurance .80, k 4 -> 109.6927, so 110."""
    from sheetflow.plan import zou_icc_lower_items

    items, raw = zou_icc_lower_items(0.70, 0.60, 4, alpha=0.05, assurance=0.80)
    assert raw == pytest.approx(109.6927, abs=5e-5) and items == 110


def test_cohen_kappa_precision_reproduces_stata_sskdlg():
    """Stata Technical Bulletin 58, sskdlg (D): kappa 0, p1 = p2 = .1, half-width .1,
    95% -> 384 (sskdlg rounds to nearest; raw 384.146; sheetflow's ceiling is 385)."""
    from sheetflow.plan import cohen_kappa_precision_items

    items, raw = cohen_kappa_precision_items(0.0, 0.1, 0.1, 0.1, confidence=0.95)
    assert raw == pytest.approx(384.146, abs=5e-4) and round(raw) == 384 and items == 385


def test_cohen_kappa_power_reproduces_irr_n_cohen_kappa():
    """irr N.cohen.kappa man example (D): rate1 = rate2 = .5, k1 = .7, k0 = .85,
    one-sided a .05, power .80 -> 96 (the example passes k1 = .7 below k0 = .85, the
    opposite of its own comment; the variances go with k0 and k1 as passed)."""
    from sheetflow.plan import cohen_kappa_power_items

    assert cohen_kappa_power_items(0.85, 0.70, [0.5, 0.5], alpha=0.05, power=0.80,
                                   sides=1) == 96


def test_the_fce_variance_is_the_sampling_variance_of_kappa():
    """Cross-check on random data: the variance of Cohen's kappa over 4,000 simulated
    studies of 400 items matches fce_kappa_variance / n within Monte Carlo error."""
    import numpy as np

    from sheetflow import stats
    from sheetflow.plan import fce_kappa_variance

    rng = np.random.default_rng(5)
    kappa, p, n, m = 0.6, 0.3, 400, 4000
    pe = p * p + (1 - p) * (1 - p)
    p11 = (pe + kappa * (1 - pe) - 1 + 2 * p) / 2
    cells = np.array([p11, p - p11, p - p11, 1 - 2 * p + p11])
    draws = rng.choice(4, size=(m, n), p=cells)
    first, second = draws // 2, draws % 2
    kappas = [float(stats.cohen_kappa(np.vstack([a, b]).astype(float)).loc[0, "kappa"])
              for a, b in zip(first, second, strict=True)]
    expected = fce_kappa_variance(kappa, p, p) / n
    assert np.var(kappas, ddof=1) == pytest.approx(expected, rel=0.08)


def test_flack_k_category_power_reproduces_irr_n2_cohen_kappa():
    """irr N2.cohen.kappa man example (D; Flack et al. 1988, the variance maximised by
    a linear program): marginals (.2, .25, .55), k1 = .6, k0 = .4, one-sided a .05,
    power .80 -> 101."""
    from sheetflow.plan import cohen_kappa_power_items

    assert cohen_kappa_power_items(0.4, 0.6, [0.2, 0.25, 0.55], alpha=0.05, power=0.80,
                                   sides=1) == 101


@pytest.mark.parametrize(("kappa", "p"), [(0.0, 0.5), (0.4, 0.3), (0.7, 0.2)])
def test_flack_maximum_is_the_fce_variance_when_two_categories_fix_the_table(kappa, p):
    """Cross-check: with two categories the marginals and kappa fix the table, so the
    linear program's maximum is the Fleiss-Cohen-Everitt variance itself."""
    from sheetflow.plan import fce_kappa_variance
    from sheetflow.stats import max_kappa_sd

    assert max_kappa_sd([p, 1 - p], kappa) ** 2 == pytest.approx(
        fce_kappa_variance(kappa, p, p), rel=1e-9)


def test_flack_maximum_bounds_the_variance_of_random_tables():
    """Cross-check on random data: the FCE variance of random 3 x 3 tables with the
    same marginals and kappa never exceeds the linear program's maximum."""
    from sheetflow.stats import max_kappa_sd

    rng = np.random.default_rng(11)
    shares, kappa = np.array([0.2, 0.25, 0.55]), 0.5
    pe = float(shares @ shares)
    po = kappa + pe * (1 - kappa)
    limit = max_kappa_sd(shares, kappa) ** 2
    seen = 0
    for _ in range(400):  # symmetric tables: random off-diagonal mass, then the diagonal
        off = rng.dirichlet(np.ones(3)) * (1 - po)
        table = np.zeros((3, 3))
        for (i, j), mass in zip([(0, 1), (0, 2), (1, 2)], off, strict=True):
            table[i, j] = table[j, i] = mass / 2
        np.fill_diagonal(table, shares - table.sum(axis=1))
        if table.min() < 0:
            continue
        seen += 1
        assert _fce_variance_of_table(table) <= limit + 1e-12
    assert seen > 20


def _fce_variance_of_table(table: np.ndarray) -> float:
    """Fleiss, Cohen & Everitt (1969) eq. 13 for any K x K table of probabilities."""
    row, col = table.sum(axis=1), table.sum(axis=0)
    po, pe = float(np.trace(table)), float(row @ col)
    k = len(table)
    diagonal = sum(table[i, i] * ((1 - pe) - (row[i] + col[i]) * (1 - po)) ** 2
                   for i in range(k))
    off = (1 - po) ** 2 * sum(table[i, j] * (col[i] + row[j]) ** 2
                              for i in range(k) for j in range(k) if i != j)
    return (diagonal + off - (po * pe - 2 * pe + po) ** 2) / (1 - pe) ** 4


def test_raw_agreement_reproduces_statpsych_size_ci_agree():
    """statpsych size.ci.agree (D): a .05, G .8, w .2 -> "Should return 139"."""
    from sheetflow.plan import agreement_g_items

    assert agreement_g_items(0.8, 0.2, confidence=0.95) == 139


def test_krippendorff_table_scaled_to_more_coders():
    """The table is for two coders; the ATLAS.ti manual ("Sample Size and Decision
    Rules", quoting Krippendorff 2019) adjusts it to more: "multiply Z square by the
    number of coders". By hand at p_c = .25, alpha_min = .8, p = .05: z = 1.644854,
    z^2 = 2.705543, term = 1.8 * 2.2 / (4 * .2 * .1875) - .8 = 25.6, so 2 coders need
    2 * 2.705543 * 25.6 = 138.5 -> 139 (the table's entry) and 4 coders 277.0 -> 278."""
    assert krippendorff_min_values(0.800, 0.25, 0.05, coders=2) == 139
    assert krippendorff_min_values(0.800, 0.25, 0.05, coders=3) == 208
    assert krippendorff_min_values(0.800, 0.25, 0.05, coders=4) == 278


def test_krippendorff_note_holds_more_coders_to_the_scaled_table():
    """4 coders on 40 units give 160 values, above the two-coder table's 139 but below
    the 278 the table scaled to 4 coders asks for: the note says both, and how the 160
    arise, so it never reads as met by counting more coders' values."""
    from types import SimpleNamespace

    from sheetflow.plan.notes import _krippendorff_note

    study = SimpleNamespace(plan=SimpleNamespace(targets={"alpha": 0.8}))
    source = SimpleNamespace(fitted=lambda: SimpleNamespace(shares=[0.25] * 4))
    (note,) = _krippendorff_note(study, SimpleNamespace(level="nominal"), source, 4, 40)
    assert "at least 139 pairable values" in note and "for 4 coders" in note
    assert "at least 278" in note and note.endswith("this design has 160 (4 coders on 40 units).")
    (two,) = _krippendorff_note(study, SimpleNamespace(level="nominal"), source, 2, 40)
    assert "for 2 coders" not in two and two.endswith("has 80 (2 coders on 40 units).")
