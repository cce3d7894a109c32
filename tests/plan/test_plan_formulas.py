"""Published sample sizes: Bonett (2002) for the ICC, Krippendorff's table for alpha.

Sources of the expected numbers (each cited at its test):

* Bonett, D. G. (2002). Sample size requirements for estimating intraclass
  correlations with desired precision. Statistics in Medicine, 21(9), 1331-1335.
  The values below are Bonett's formula as printed by independent implementations
  that cite the paper: the R package ICC's ``Nest()`` and the presize package's
  "Bonett example", and a calculator quoting Bonett's k = 2 adjustment.
* Krippendorff, K. (2004/2019). Content Analysis, section 11.4.4: minimum number of
  pairable values for two coders, as quoted in the ATLAS.ti manual's
  "Sample Size and Decision Rules" (which reproduces Krippendorff's table).
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


def test_bonett_rho_07_k2_w02():
    # R package ICC, Nest(est.type = "hypothetical", w = 0.20, ICC = 0.70, k = 2) -> 101
    # (Bonett 2002, eq. 6, no k = 2 adjustment).
    assert bonett_icc_items(0.70, 2, 0.20) == 101


def test_bonett_worked_example_rho_085_k4_w02():
    # Bonett's worked example (presize test "icc (Bonett example)"): rho .85, k = 4,
    # w = .2 needs 20 subjects; 25 subjects give a width of about 0.2 (rounded).
    assert bonett_icc_items(0.85, 4, 0.20) == 20
    assert round(bonett_icc_width(0.85, 4, 25), 1) == 0.2


def test_bonett_rho_08_k2_w02_with_and_without_adjustment():
    # Bonett (2002): k = 2, rho = .8, w = .2 -> 51 subjects; for k = 2 and rho >= .7
    # Bonett suggests adding 5 rho: 51 + 4 -> 55.
    assert bonett_icc_items(0.80, 2, 0.20) == 51
    assert bonett_icc_items(0.80, 2, 0.20, small_k_adjust=True) == 55


def test_krippendorff_table_pc_025_alpha_080_p005():
    # Krippendorff's table: 4 equally likely values (p_c = .25), alpha_min = .800,
    # p = .05 -> at least 139 pairable values.
    assert krippendorff_min_values(0.800, 0.25, 0.05) == 139


def test_krippendorff_table_pc_025_alpha_0667_p005():
    # Same table row: alpha_min = .667 -> 81.
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
