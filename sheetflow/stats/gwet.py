"""Gwet's AC1/AC2 and the shared many-rater machinery (also used by Fleiss' kappa)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from sheetflow.stats import _util
from sheetflow.stats._multi import multirater
from sheetflow.stats._weights import WeightOn, Weights, weight_name

__all__ = ["gwet_ac"]

GWET_COLUMNS = (
    "coefficient", "ac", "se", "z", "p", "ci_low", "ci_high", "p_o", "p_e", "n_units",
    "n_pairable_units", "n_raters", "weights", "reason",
)  # fmt: skip


@_util.shared_doc
def gwet_ac(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
            value: str = "value", weights: Weights | str | None = "identity",
            categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
            confidence: float = 0.95, population_size: float | None = None) -> pd.DataFrame:
    """Gwet's AC1 (unweighted) or AC2 (weighted) agreement coefficient.

    Parameters
    ----------
    {data}
    {columns}
    weights : {"identity", "linear", "quadratic", "ordinal", "bipolar"}, default "identity"
        "identity" gives AC1; any other gives AC2 with Gwet's (2014) weights:
        linear ``1 - |x_k - x_l| / (x_max - x_min)``, quadratic
        ``1 - (x_k - x_l)^2 / (x_max - x_min)^2`` on the category values (ranks for
        non-numeric categories or ``weight_on="ranks"``), ordinal
        ``1 - M_kl / max M`` with ``M_kl = C(|rank_k - rank_l| + 1, 2)``, bipolar
        ``1 - B_kl / max B`` with ``B_kl = (x_k - x_l)^2 / ((x_k + x_l - 2 x_min)
        (2 x_max - x_k - x_l))``. Text labels need ``categories`` for any weights
        but identity (their order is never guessed).
    categories : sequence, optional
        The full category domain. It matters: ``q`` (the number of categories)
        enters the chance agreement. Default: the observed values.
    weight_on : {"values", "ranks"}, default "values"
        Whether linear/quadratic weights use the category values or their ranks.
    confidence : float, default 0.95
        Coverage of the interval.
    population_size : float, optional
        Units in the population for the finite-population correction ``1 - n/N``.
        Default None: no correction (``N`` infinite), as in Gwet's software.

    Returns
    -------
    pandas.DataFrame
        One row: ``coefficient`` ("AC1" or "AC2"), ``ac, se, z, p, ci_low, ci_high,
        p_o, p_e, n_units`` (units with a rating), ``n_pairable_units, n_raters,
        weights, reason``.

    Notes
    -----
    Gwet (2008, 2014) [1]_ [2]_ for :math:`r_i` ratings in unit :math:`i`,
    :math:`r_{ik}` of them in category :math:`k`, :math:`r^*_{ik} = \\sum_l w_{kl}
    r_{il}` and :math:`q` categories:

    .. math:: p_o = \\frac{1}{n'} \\sum_{i: r_i \\ge 2} \\sum_k
              \\frac{r_{ik}(r^*_{ik} - 1)}{r_i(r_i - 1)}, \\quad
              \\pi_k = \\frac{1}{n}\\sum_i \\frac{r_{ik}}{r_i}, \\quad
              p_e = \\frac{T_w}{q(q-1)} \\sum_k \\pi_k (1 - \\pi_k),

    with :math:`T_w = \\sum_{kl} w_{kl}`, and :math:`AC = (p_o - p_e)/(1 - p_e)`, exactly 0
    where :math:`p_o` and :math:`p_e` are within rounding (64 units in the last place)
    of each other.
    Variance (Gwet 2008, eq. 30; 2014, ch. 5): with
    :math:`ac_i = (n/n')(p_{o,i} - p_e[r_i \\ge 2])/(1 - p_e)`,
    :math:`p_{e,i} = \\frac{T_w}{q(q-1)} \\sum_k r_{ik}(1 - \\pi_k)/r_i` and
    :math:`ac^*_i = ac_i - 2(1 - AC)(p_{e,i} - p_e)/(1 - p_e)`,
    :math:`var = (1 - f)\\sum_i (ac^*_i - AC)^2 / (n(n-1))`, ``f = n / N`` (0 by
    default). Interval: :math:`AC \\pm t_{n-1}\\, se`, upper end capped at 1, as in
    Gwet's R package irrCAC; ``z = AC / se`` with the two-sided p-value of
    :math:`H_0: AC = 0` on :math:`t_{n-1}`. Units without ratings are ignored; units with one
    rating count in :math:`\\pi_k` but not in :math:`p_o`. NaN, with the reason, for
    empty input, fewer than two categories in the domain, or no unit with two
    ratings.

    References
    ----------
    .. [1] Gwet, K. L. (2008). Computing inter-rater reliability and its variance in
           the presence of high agreement. British Journal of Mathematical and
           Statistical Psychology, 61(1), 29-48.
    .. [2] {gwet2014}

    Examples
    --------
    Gwet's 4 raters x 12 units example (``irrCAC`` ``raw_4raters``, AC1 = 0.77544,
    se = 0.14295):

    {raw4raters}
    >>> res = gwet_ac(data)
    >>> round(float(res.loc[0, "ac"]), 5), round(float(res.loc[0, "se"]), 5)
    (0.77544, 0.14295)
    """
    res = multirater(data, unit, rater, value, categories, weights, weight_on,
                      confidence, population_size, chance="gwet")
    name = "AC1" if weight_name(weights) == "identity" else "AC2"
    res = res.rename(columns={"kappa": "ac"}).assign(coefficient=name)
    return res[list(GWET_COLUMNS)]
