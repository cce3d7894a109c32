"""Closed forms for planning a test or a one-sided bound: ICC and Cohen's kappa.

- :func:`icc_test_items`: items to test ``rho1`` against ``rho0`` (Walter, Eliasziw &
  Donner 1998), the formula ICC.Sample.Size and statpsych implement;
- :func:`zou_icc_lower_items`: items for a one-sided lower limit of the ICC to stay
  above ``lower`` with probability ``assurance`` (Zou 2012, as Agree's ``n_icc``);
- :func:`cohen_kappa_precision_items`: two raters, two categories, items for an
  interval of half-width ``half_width`` around kappa (the Fleiss-Cohen-Everitt
  large-sample variance, as Stata's ``sskdlg``);
- :func:`cohen_kappa_power_items`: two raters, items to tell ``kappa1`` from
  ``kappa0`` (two categories: Cantor 1996, as irr's ``N.cohen.kappa``; more: Flack et
  al. 1988, as irr's ``N2.cohen.kappa``);
- :func:`agreement_g_items`: two raters, two categories, items for an interval of the
  G-index of raw agreement (Bonett's ``size.ci.agree`` in statpsych).

Conventions: every count is the ceiling of the unrounded value (returned too where a
reference prints it); sidedness is named in each function; ``shares`` are the share of
each category, the same for both raters, summing to 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from ..stats import max_kappa_sd

__all__ = ["agreement_g_items", "cohen_kappa_power_items", "cohen_kappa_precision_items",
           "fce_kappa_variance", "icc_test_items", "zou_icc_lower_items"]

_EPS = 1e-9  # a value a hair above an integer from float noise is that integer


def _quantile(p: float) -> float:
    if not 0 < p < 1:
        raise ValueError("probabilities (alpha, power, assurance) must be between 0 and 1.")
    return NormalDist().inv_cdf(p)


def _f_ratio(rho: float, raters: int) -> float:
    if not -1 / (raters - 1) < rho < 1:
        raise ValueError(f"an ICC of {rho} is outside (-1/(k-1), 1) for {raters} raters.")
    return (1 + (raters - 1) * rho) / (1 - rho)


def _walter(rho0: float, rho1: float, raters: int, z_total: float) -> float:
    if raters < 2:
        raise ValueError("an ICC needs at least 2 raters.")
    if rho0 == rho1:
        raise ValueError("rho0 and rho1 must differ.")
    ratio = math.log(_f_ratio(rho1, raters) / _f_ratio(rho0, raters))
    return 1 + 2 * raters * z_total**2 / ((raters - 1) * ratio**2)


def icc_test_items(rho0: float, rho1: float, raters: int, alpha: float = 0.05,
                   power: float = 0.8, sides: int = 2) -> int:
    """Items (subjects) to detect an ICC of ``rho1`` against ``rho0`` with ``raters``.

    Parameters
    ----------
    rho0, rho1 : float
        The ICC under the null and under the alternative.
    raters : int
        Raters per item, k >= 2.
    alpha : float
        The test's level; with ``sides = 2`` split over both tails (z at 1 - alpha/2).
    power : float
    sides : {1, 2}

    Returns
    -------
    int
        ``ceil(1 + 2k (z_a + z_b)^2 / ((k - 1) ln^2(F1 / F0)))`` with
        ``F = (1 + (k - 1) rho) / (1 - rho)``.

    References
    ----------
    Walter, S. D., Eliasziw, M., & Donner, A. (1998). Sample size and optimal designs
    for reliability studies. Statistics in Medicine, 17(1), 101-110.

    Examples
    --------
    >>> icc_test_items(0.6, 0.8, raters=2)
    49
    """
    if sides not in (1, 2):
        raise ValueError("sides must be 1 or 2.")
    z = _quantile(1 - alpha / sides) + _quantile(power)
    return math.ceil(_walter(rho0, rho1, raters, z) - _EPS)


def zou_icc_lower_items(rho: float, lower: float, raters: int, alpha: float = 0.05,
                        assurance: float = 0.8) -> tuple[int, float]:
    """Items for the one-sided ``1 - alpha`` lower limit of the ICC to lie above
    ``lower`` with probability ``assurance``, when the ICC is ``rho``.

    Returns
    -------
    (int, float)
        The ceiling and the unrounded value
        ``1 + 2k (z_{1-alpha} + z_assurance)^2 / ((k - 1) ln^2(F(rho) / F(lower)))``.

    References
    ----------
    Zou, G. Y. (2012). Sample size formulas for estimating intraclass correlation
    coefficients with precision and assurance. Statistics in Medicine, 31(29),
    3972-3981.
    """
    if not lower < rho:
        raise ValueError("the lower limit must be below the anticipated ICC.")
    raw = _walter(lower, rho, raters, _quantile(1 - alpha) + _quantile(assurance))
    return math.ceil(raw - _EPS), raw


def _binary_shares(shares: Sequence[float]) -> float:
    if len(shares) != 2:
        raise ValueError("these closed forms are for two categories: give shares [p, 1 - p] "
                         "(more categories: plan by simulation, sheetflow plan --method "
                         "simulate)")
    p = float(shares[0])
    if not 0 < p < 1 or abs(sum(shares) - 1) > 1e-9:
        raise ValueError("shares must be two numbers between 0 and 1 summing to 1.")
    return p


def fce_kappa_variance(kappa: float, p1: float, p2: float) -> float:
    """n x the large-sample variance of Cohen's kappa, two raters, two categories.

    The cell probabilities follow from the marginals (``p1``, ``p2``: each rater's
    share of the first category) and ``kappa``; the variance is Fleiss, Cohen &
    Everitt's (1969) eq. 13.

    References
    ----------
    Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard errors of
    kappa and weighted kappa. Psychological Bulletin, 72(5), 323-327.
    """
    row, col = (p1, 1 - p1), (p2, 1 - p2)
    pe = row[0] * col[0] + row[1] * col[1]
    po = pe + kappa * (1 - pe)
    p11 = (po - 1 + p1 + p2) / 2
    cells = ((p11, p1 - p11), (p2 - p11, 1 - p1 - p2 + p11))
    if min(min(r) for r in cells) < -1e-12:
        raise ValueError(f"kappa {kappa} is impossible with shares {p1} and {p2}.")
    diagonal = sum(cells[i][i] * ((1 - pe) - (row[i] + col[i]) * (1 - po)) ** 2
                   for i in range(2))
    off = (1 - po) ** 2 * sum(cells[i][j] * (col[i] + row[j]) ** 2
                              for i in range(2) for j in range(2) if i != j)
    return (diagonal + off - (po * pe - 2 * pe + po) ** 2) / (1 - pe) ** 4


def cohen_kappa_precision_items(kappa: float, p1: float, p2: float, half_width: float,
                                confidence: float = 0.95) -> tuple[int, float]:
    """Items for a two-sided ``confidence`` interval of half-width ``half_width``
    around Cohen's kappa (two raters, two categories).

    Returns
    -------
    (int, float)
        The ceiling and the unrounded ``z^2 V / half_width^2`` (V from
        :func:`fce_kappa_variance`). Stata's ``sskdlg`` rounds the unrounded value to
        the nearest integer instead (384 where this gives 385 for 384.146).
    """
    if half_width <= 0:
        raise ValueError("half_width must be positive.")
    raw = _quantile(0.5 + confidence / 2) ** 2 * fce_kappa_variance(kappa, p1, p2) \
        / half_width**2
    return math.ceil(raw - _EPS), raw


def cohen_kappa_power_items(kappa0: float, kappa1: float, shares: Sequence[float],
                            alpha: float = 0.05, power: float = 0.8,
                            sides: int = 1) -> int:
    """Items to tell Cohen's kappa ``kappa1`` from ``kappa0`` (two raters with the same
    category ``shares``).

    ``ceil(((z_a sd0 + z_b sd1) / (kappa1 - kappa0))^2)``, ``z_a`` one-sided at
    ``alpha`` (``sides = 2``: at ``alpha / 2``), with ``sd`` at ``kappa0`` and
    ``kappa1``:

    - two categories: the Fleiss-Cohen-Everitt standard deviation, the table being
      fixed by the shares and kappa (Cantor 1996, as irr's ``N.cohen.kappa``);
    - three or more: the largest standard deviation any table with those marginals
      and that kappa has (Flack et al. 1988, a linear program, as irr's
      ``N2.cohen.kappa``; :func:`sheetflow.stats.max_kappa_sd`). With two categories
      the two coincide.

    References
    ----------
    Cantor, A. B. (1996). Sample-size calculations for Cohen's kappa. Psychological
    Methods, 1(2), 150-153.
    Flack, V. F., Afifi, A. A., Lachenbruch, P. A., & Schouten, H. J. A. (1988).
    Sample size determinations for the two rater kappa statistic. Psychometrika,
    53(3), 321-325.
    """
    if sides not in (1, 2):
        raise ValueError("sides must be 1 or 2.")
    if kappa0 == kappa1:
        raise ValueError("kappa0 and kappa1 must differ.")
    if len(shares) == 2:
        p = _binary_shares(shares)
        sd0, sd1 = (math.sqrt(fce_kappa_variance(k, p, p)) for k in (kappa0, kappa1))
    else:
        sd0, sd1 = max_kappa_sd(shares, kappa0), max_kappa_sd(shares, kappa1)
    spread = _quantile(1 - alpha / sides) * sd0 + _quantile(power) * sd1
    return math.ceil((spread / (kappa1 - kappa0)) ** 2 - _EPS)


def agreement_g_items(g: float, width: float, confidence: float = 0.95) -> int:
    """Items for a two-sided interval of full ``width`` around the G-index of agreement
    (two raters, two categories; G = 2 x raw agreement - 1).

    ``ceil(4 (1 - G^2) (z / width)^2)``, z at ``0.5 + confidence / 2``: Bonett's
    ``size.ci.agree`` in the R package statpsych.

    References
    ----------
    Bonett, D. G. (2022). statpsych: Statistical Methods for Psychologists. R package
    version 2.0.0, CRAN (``size.ci.agree``).
    """
    if not -1 < g < 1:
        raise ValueError("the G-index must lie within (-1, 1).")
    if width <= 0:
        raise ValueError("width must be positive.")
    z = _quantile(0.5 + confidence / 2)
    return math.ceil(4 * (1 - g**2) * (z / width) ** 2 - _EPS)
