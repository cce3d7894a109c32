"""Kappa for 2 to 6 raters: kappaSize's closed forms (Donner & Eliasziw 1992; Donner &
Rotondi 2010; Rotondi & Donner 2012).

Every expected value is the output of the released R package kappaSize 1.2 (R 4.2),
printed nowhere: kind R, a regression value against that package's code. The calls are
the package's own (``CIBinary(kappa0, kappaL, kappaU, props, raters, alpha)`` ...).
Conventions that decide the integers: CI* with both bounds are two-sided (critical
value qchisq(1 - a, 1)), with kappaU = NA one-sided (qchisq(1 - 2a, 1)); FixedN* give a
one-sided lower limit stepping kappaL down by 0.001; Power* are two-sided; the search
for n starts at 11.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sheetflow.plan import kappa_ci_items, kappa_lower_limit, kappa_power_items
from sheetflow.plan.kappa_size import kappa_cells


@pytest.mark.parametrize(("args", "expected"), [
    # CIBinary(kappa0 = .4, kappaL = .3, kappaU = .5, props = .30), 2 raters (R)
    ((0.4, 0.3, 0.5, [0.3, 0.7], 2), 397),
    # CIBinary(.6, .4, .8, props = .2, raters = 3) (R)
    ((0.6, 0.4, 0.8, [0.2, 0.8], 3), 71),
    # CIBinary(.6, .4, .8, props = .2, raters = 2) (R)
    ((0.6, 0.4, 0.8, [0.2, 0.8], 2), 118),
    # CI4Cats(.4, .3, .5, props = c(.3, .2, .2, .3)), 2 raters (R)
    ((0.4, 0.3, 0.5, [0.3, 0.2, 0.2, 0.3], 2), 174),
])
def test_ci_items_reproduce_kappasize(args, expected):
    *kappas, shares, raters = args
    assert kappa_ci_items(*kappas, shares, raters=raters, alpha=0.05) == expected


def test_fixed_n_lower_limit_reproduces_kappasize():
    """FixedNBinary(kappa0 = .7, n = 100, props = .5, raters = 4) -> 0.61 (R; kappaSize
    prints the float it accumulated, 0.6099999999999999)."""
    assert kappa_lower_limit(0.7, 100, [0.5, 0.5], raters=4, alpha=0.05) == 0.61


@pytest.mark.parametrize(("shares", "items", "raw"), [
    ([0.3, 0.7], 191, 190.4564),  # PowerBinary(.4, .6, props = .30, power = .80) (R)
    ([0.3, 0.6, 0.1], 135, 134.7823),  # Power3Cats(.4, .6, props = c(.3, .6, .1)) (R)
])
def test_power_items_reproduce_kappasize(shares, items, raw):
    n, unrounded = kappa_power_items(0.4, 0.6, shares, raters=2, alpha=0.05, power=0.80)
    assert n == items and round(unrounded, 4) == raw


def test_one_sided_bound_needs_fewer_items_than_the_two_sided_interval():
    one = kappa_ci_items(0.4, 0.3, None, [0.3, 0.7])
    assert 11 <= one < kappa_ci_items(0.4, 0.3, 0.5, [0.3, 0.7])


def test_the_search_starts_at_eleven():
    # a wide bound any handful of items reaches: kappaSize returns no n below 11
    assert kappa_ci_items(0.8, 0.05, None, [0.5, 0.5], raters=6) == 11


@pytest.mark.parametrize("raters", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("shares", [[0.3, 0.7], [0.2, 0.5, 0.3], [0.1, 0.2, 0.3, 0.4],
                                    [0.1, 0.2, 0.2, 0.2, 0.3]])
def test_cells_are_a_distribution_and_kappa_zero_is_independence(raters, shares):
    for kappa in (0.0, 0.3, 0.9):
        cells = kappa_cells(kappa, shares, raters)
        assert min(cells) >= 0 and sum(cells) == pytest.approx(1.0)
    unanimous = kappa_cells(0.0, shares, raters)[-len(shares):] if len(shares) > 2 else None
    if unanimous is not None:
        assert unanimous == pytest.approx([p**raters for p in shares])


def test_fixed_n_and_ci_items_are_inverse():
    """The limit n items give, asked back as a one-sided bound, needs at most n items
    (and more than n for a limit 0.001 higher)."""
    for raters, n in ((2, 60), (4, 150), (6, 40)):
        limit = kappa_lower_limit(0.6, n, [0.3, 0.7], raters=raters)
        assert kappa_ci_items(0.6, limit, None, [0.3, 0.7], raters=raters) <= n
        assert kappa_ci_items(0.6, limit + 0.002, None, [0.3, 0.7], raters=raters) > n


@pytest.mark.parametrize(("kappa", "width", "shares", "raters", "items"), [
    (0.3, 0.3, [1 / 3] * 3, 4, 39), (0.1, 0.5, [0.25] * 4, 3, 12),
    (0.1, 0.2, [0.2] * 5, 6, 110)])
def test_an_interval_bound_is_the_first_crossing_out_from_kappa0(kappa, width, shares,
                                                                 raters, items):
    """With 3-5 categories and 3+ raters the model's cells turn negative over a stretch
    of kappa and positive again below it; a bisection over [-1, kappa0] landed beyond
    the stretch (-0.515 for 0.3 on 50 items, three equal shares, four raters), and the
    items for a width came out 65, 217 and 54,283. The bound is where the chi-square
    first reaches the critical value: kappaSize's CI3Cats(0.3, 0.179, 0.444, raters=4)
    gives back the 50 items (51 at bounds rounded to 3 places, as kappaSize rounds), and
    the item counts are those of kappaSize's cell formulas walked out from kappa0 in
    0.001 steps (an independent transcription of its R source)."""
    from sheetflow.plan.closed_plan import _items_for_width
    from sheetflow.plan.kappa_size import kappa_interval

    low, high = kappa_interval(0.3, 50, [1 / 3] * 3, raters=4)
    assert (round(low, 4), round(high, 4)) == (0.1788, 0.4445)
    assert kappa_ci_items(0.3, round(low, 3), round(high, 3), [1 / 3] * 3, raters=4) == 51
    assert _items_for_width(kappa, width, shares, raters) == items


def test_binary_model_has_the_anticipated_kappa_on_random_data():
    """Cross-check on random data: items drawn from the binary model's cells (number of
    positive ratings out of 4) have Fleiss' kappa close to the model's kappa."""
    from sheetflow import stats

    rng = np.random.default_rng(8)
    kappa, p, m, n = 0.55, 0.3, 4, 20000
    positives = rng.choice(m + 1, size=n, p=kappa_cells(kappa, [p, 1 - p], m))
    data = (np.arange(m)[:, None] < positives[None, :]).astype(float)
    assert float(stats.fleiss_kappa(data).loc[0, "kappa"]) == pytest.approx(kappa, abs=0.02)


def test_power_matches_a_direct_noncentral_chi_square():
    """Cross-check: scipy's non-central chi-square gives kappaSize's N within its
    bisection tolerance."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2

    crit = chi2.ppf(0.95, 1)
    ncp = brentq(lambda lam: ncx2.cdf(crit, 1, lam) - 0.2, 0.1, 50)
    cells0, cells1 = (np.array(kappa_cells(k, [0.3, 0.7], 3)) for k in (0.4, 0.6))
    direct = ncp / float(((cells1 - cells0) ** 2 / cells0).sum())
    assert kappa_power_items(0.4, 0.6, [0.3, 0.7], raters=3)[1] == pytest.approx(direct,
                                                                                  rel=1e-4)
    assert math.isfinite(direct)


@pytest.mark.parametrize("call", [
    lambda: kappa_ci_items(0.4, 0.5, 0.6, [0.3, 0.7]),  # kappa_low above kappa0
    lambda: kappa_ci_items(0.4, 0.3, 0.5, [0.3, 0.7], raters=7),
    lambda: kappa_ci_items(0.4, 0.3, 0.5, [0.2] * 6 + [-0.2]),
    lambda: kappa_lower_limit(0.7, 10, [0.5, 0.5]),
    lambda: kappa_power_items(0.4, 0.4, [0.5, 0.5]),
])
def test_bad_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()
