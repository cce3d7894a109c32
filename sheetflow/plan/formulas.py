"""Published sample-size formulas: Bonett and Zou for the ICC, Krippendorff for alpha.

Each function returns the number of rated items (subjects, units) or of pairable
values that a design needs; nothing here simulates. Where Bonett's approximation does
not hold (few items), :func:`icc_design_width` gives the exact expected width instead.
Conventions are those of the papers: ``width`` is the *full* width of a two-sided
interval (upper minus lower).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ..stats import icc_expected_width

__all__ = ["BONETT_TOLERANCE", "bonett_icc_items", "bonett_icc_width", "icc_design_width",
           "icc_items_needed", "krippendorff_min_values", "zou_icc_items"]


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1.")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _check_icc(rho: float, raters: int) -> None:
    if not 0 <= rho < 1:
        raise ValueError("the anticipated ICC must be in [0, 1).")
    if raters < 2:
        raise ValueError("an ICC needs at least 2 raters.")


def _bonett_core(rho: float, raters: int) -> float:
    """8 (1 - rho)^2 (1 + (k - 1) rho)^2 / (k (k - 1)): the n-free part of the variance."""
    return 8.0 * (1 - rho) ** 2 * (1 + (raters - 1) * rho) ** 2 / (raters * (raters - 1))


def bonett_icc_items(
    rho: float, raters: int, width: float, confidence: float = 0.95, *,
    small_k_adjust: bool = False,
) -> int:
    """Items needed for an ICC interval of full ``width`` (Bonett's 2002 formula).

    Parameters
    ----------
    rho : float
        Anticipated ICC (single rater), in [0, 1).
    raters : int
        Raters per item, k >= 2.
    width : float
        Desired full width of the interval.
    confidence : float, default 0.95
    small_k_adjust : bool, default False
        Add ``5 rho`` for k = 2 and rho >= 0.7, the adjustment Bonett suggests where the
        approximation falls short of the exact sample size.

    Returns
    -------
    int
        :math:`n = \\lceil 8 z^2 (1-\\rho)^2 (1+(k-1)\\rho)^2 / (k (k-1) w^2) + 1 \\rceil`.

    References
    ----------
    Bonett, D. G. (2002). Sample size requirements for estimating intraclass
    correlations with desired precision. Statistics in Medicine, 21(9), 1331-1335.
    """
    _check_icc(rho, raters)
    if width <= 0:
        raise ValueError("width must be positive.")
    n = _z(confidence) ** 2 * _bonett_core(rho, raters) / width**2 + 1.0
    if small_k_adjust and raters == 2 and rho >= 0.7:
        n += 5.0 * rho
    return math.ceil(n - 1e-9)


def bonett_icc_width(rho: float, raters: int, items: int, confidence: float = 0.95) -> float:
    """The expected full interval width for ``items`` items: Bonett's formula solved for w."""
    _check_icc(rho, raters)
    if items < 2:
        raise ValueError("an ICC interval needs at least 2 items.")
    return _z(confidence) * math.sqrt(_bonett_core(rho, raters) / (items - 1))


def zou_icc_items(
    rho: float, raters: int, width: float, confidence: float = 0.95, assurance: float = 0.8
) -> int:
    """Items for an ICC interval no wider than ``width`` with probability ``assurance``.

    Zou (2012), eq. 9: Bonett's half-width with an assurance term; with
    ``assurance = 0.5`` it equals :func:`bonett_icc_items` without adjustment.

    References
    ----------
    Zou, G. Y. (2012). Sample size formulas for estimating intraclass correlation
    coefficients with precision and assurance. Statistics in Medicine, 31(29), 3972-3981.
    """
    _check_icc(rho, raters)
    if not 0 < assurance < 1:
        raise ValueError("assurance must be between 0 and 1.")
    z, z_a = _z(confidence), NormalDist().inv_cdf(assurance)
    a = (1 - rho) * (1 + (raters - 1) * rho)
    b = abs(raters - 2 + 2 * rho - 2 * raters * rho)
    inner = z**2 * a**2 + 2 * width * z * z_a * a * b
    num = 2.0 * (z * a + math.sqrt(max(inner, 0.0))) ** 2
    return math.ceil(1.0 + num / (raters * (raters - 1) * width**2) - 1e-9)


def krippendorff_min_values(alpha_min: float, p_c: float, p: float = 0.05,
                            coders: int = 2) -> int:
    """Minimum number of pairable values (Krippendorff's sample-size table, two coders).

    The number of values needed so that an observed alpha can be shown to exceed the
    smallest acceptable ``alpha_min`` at significance level ``p`` (one-sided), when the
    least frequent category has probability ``p_c`` (the formula of Krippendorff's table,
    after Bloch & Kraemer 1989, eq. 3.7, p. 276):

    .. math:: N = 2 z_p^2 \\left(\\frac{(1+\\alpha_{min})(3-\\alpha_{min})}
                 {4 (1-\\alpha_{min}) p_c (1-p_c)} - \\alpha_{min}\\right)

    The table is for two coders. For ``coders`` m > 2 the factor 2 becomes m ("multiply
    Z square by the number of coders", the ATLAS.ti manual's adjustment of the table):
    the values needed grow with the coders, so the units needed stay those of two.

    References
    ----------
    Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology
    (2nd ed.), reliability chapter (pp. 221-250). Thousand Oaks, CA: Sage. The table
    reappears in the 4th edition (2019).
    Bloch, D. A., & Kraemer, H. C. (1989). 2 x 2 kappa coefficients: measures of
    agreement or association. Biometrics, 45(1), 269-287.
    ATLAS.ti manual (Windows, v22), "Sample Size and Decision Rules" of inter-coder
    agreement: the table's entries for p_c = 0.25 and the more-than-two-coders rule.
    """
    if not -1 < alpha_min < 1:
        raise ValueError("alpha_min must be between -1 and 1.")
    if not 0 < p_c <= 0.5:
        raise ValueError("p_c, the share of the least frequent value, must be in (0, 0.5].")
    if not 0 < p < 0.5:
        raise ValueError("p must be between 0 and 0.5.")
    if coders < 2:
        raise ValueError("coders must be 2 or more.")
    z = NormalDist().inv_cdf(1 - p)
    term = (1 + alpha_min) * (3 - alpha_min) / (4 * (1 - alpha_min) * p_c * (1 - p_c))
    return math.ceil(coders * z**2 * (term - alpha_min) - 1e-9)


BONETT_TOLERANCE = 0.10
"""How far (relative) Bonett's width may stray from the exact expected width before a
design's width is the exact one (:func:`icc_design_width`)."""

_EXACT_WALK = 10_000  # the items-needed walk never runs past this many steps


def icc_design_width(rho: float, raters: int, items: int,
                     confidence: float = 0.95) -> tuple[float, bool]:
    """A design's expected ICC width: Bonett's (2002) where his approximation holds,
    else the exact one.

    Bonett's formula is a large-sample approximation. With few items (and more so with
    an ICC near 1 or 2 raters) it strays far from the exact expected width of the
    interval ``analyze`` computes (:func:`sheetflow.stats.icc_expected_width`, the
    exact-F interval of the two-way consistency form): 0.067 where the exact width is
    0.571 at ICC 0.99, 3 raters, 2 items; 1.13 x at ICC 0.9, 2 raters, 20 items.
    The rule: where the two differ by more than :data:`BONETT_TOLERANCE` (10%) of the
    exact width, the exact width is the design's; elsewhere Bonett's, as published.

    Returns
    -------
    (float, bool)
        The width, and whether it is the exact one.
    """
    bonett = bonett_icc_width(rho, raters, items, confidence)
    exact = icc_expected_width(rho, raters, items, confidence)
    if abs(bonett - exact) > BONETT_TOLERANCE * exact:
        return exact, True
    return bonett, False


def icc_items_needed(rho: float, raters: int, width: float, formula_items: int,
                     confidence: float = 0.95, *, fewer: bool = True) -> int:
    """The items a width target needs, the formula's count checked by the exact width
    where Bonett's approximation does not hold (:func:`icc_design_width`).

    From ``formula_items`` (Bonett's or Zou's count) the count rises while the design's
    width is the exact one and above ``width`` (the formula understated it) and, with
    ``fewer`` (Bonett's count, not Zou's assurance), falls while the exact width of one
    item fewer is still within ``width`` (the formula overstated it).
    """
    n = max(2, formula_items)
    for _ in range(_EXACT_WALK):
        w, exact = icc_design_width(rho, raters, n, confidence)
        if not (exact and w > width):
            break
        n += 1
    if not fewer or n > formula_items:
        return n
    while n > 2:
        w, exact = icc_design_width(rho, raters, n - 1, confidence)
        if not (exact and w <= width):
            break
        n -= 1
    return n
