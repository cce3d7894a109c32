"""Closed forms for kappa with 2 to 6 raters (Donner-Eliasziw, Donner-Rotondi), as kappaSize.

The common-correlation model of Donner & Eliasziw (1992) gives every item's ratings a
distribution fixed by kappa and the category shares; a goodness-of-fit chi-square
between the distribution at the anticipated kappa and at a bound turns into a sample
size. These functions follow the R package kappaSize (Rotondi, version 1.2) exactly:

- :func:`kappa_ci_items` is ``CIBinary``, ``CI3Cats``, ``CI4Cats``, ``CI5Cats``;
- :func:`kappa_lower_limit` is ``FixedNBinary``, ``FixedN3Cats`` ... ``FixedN5Cats``;
- :func:`kappa_power_items` is ``PowerBinary``, ``Power3Cats`` ... ``Power5Cats``.

The models (kappaSize's cell probabilities, written generally):

- two categories, ``m`` raters, share ``p`` of the first: the cells are the number of
  raters choosing it, ``x = 0..m``, with
  ``P(x) = (1 - kappa) Binom(m, p)(x) + kappa [x = 0] (1 - p) + kappa [x = m] p``;
- three to five categories: one cell per "all ``m`` raters chose ``j``", with the
  Dirichlet-multinomial probability
  ``p_j prod_{i=1}^{m-1} (p_j (1 - kappa) + i kappa) / prod_{i=1}^{m-2} (1 + i kappa)``,
  and one cell for "not unanimous".

References
----------
Donner, A., & Eliasziw, M. (1992). A goodness-of-fit approach to inference procedures
for the kappa statistic: confidence interval construction, significance-testing and
sample size estimation. Statistics in Medicine, 11(11), 1511-1519.
Donner, A., & Rotondi, M. A. (2010). Sample size requirements for interval estimation
of the kappa statistic for interobserver agreement studies with a binary outcome and
multiple raters. The International Journal of Biostatistics, 6(1), Article 31.
Rotondi, M. A., & Donner, A. (2012). A confidence interval approach to sample size
estimation for interobserver agreement studies with multiple raters and outcomes.
Journal of Clinical Epidemiology, 65(7), 778-784.
Rotondi, M. A. (2018). kappaSize: Sample Size Estimation Functions for Studies of
Interobserver Agreement. R package version 1.2, CRAN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist

__all__ = ["kappa_cells", "kappa_ci_items", "kappa_lower_limit", "kappa_power_items"]

FIRST_N = 11  # kappaSize's search starts at n = 10 + 1: no smaller n is returned
_TOLERANCE = 0.001  # kappaSize compares abs(chi-square - 0.001) with the critical value
_STEP = 0.001  # FixedN* lower kappaL by this much per step
MAX_ITEMS = 10**7


def _shares(shares: Sequence[float]) -> tuple[float, ...]:
    out = tuple(float(s) for s in shares)
    if not 2 <= len(out) <= 5:
        raise ValueError("kappaSize's models take 2 to 5 categories: give one share per "
                         "category.")
    if min(out) <= 0 or max(out) >= 1 or abs(sum(out) - 1) >= 0.001:
        raise ValueError("shares must lie within (0, 1) and sum to 1.")
    return out


def _raters(raters: int) -> int:
    if not 2 <= raters <= 6:
        raise ValueError("kappaSize's models are for 2 to 6 raters.")
    return raters


def _kappa(value: float, name: str) -> float:
    if not 0 < value < 1:
        raise ValueError(f"{name} must lie within (0, 1).")
    return float(value)


def kappa_cells(kappa: float, shares: Sequence[float], raters: int) -> list[float]:
    """The model's cell probabilities (see the module notes), in kappaSize's order.

    Two categories: ``P(0), ..., P(m)`` positive ratings (``shares[0]`` is the share of
    a positive rating). Three to five: "not unanimous", then "all chose j" per share.
    """
    p, m = _shares(shares), _raters(raters)
    if len(p) == 2:
        cells = [(1 - kappa) * math.comb(m, x) * p[0] ** x * p[1] ** (m - x)
                 for x in range(m + 1)]
        cells[0] += kappa * p[1]
        cells[m] += kappa * p[0]
        return cells
    unanimous = [pj * math.prod(pj * (1 - kappa) + i * kappa for i in range(1, m))
                 / math.prod(1 + i * kappa for i in range(1, m - 1)) for pj in p]
    return [1 - sum(unanimous), *unanimous]


def _chi_per_item(kappa_true: float, kappa_fit: float, shares: Sequence[float],
                  raters: int) -> float:
    """sum (P_true - P_fit)^2 / P_fit: the chi-square of one item (n = 1)."""
    true, fit = kappa_cells(kappa_true, shares, raters), kappa_cells(kappa_fit, shares, raters)
    return sum((a - b) ** 2 / b for a, b in zip(true, fit, strict=True) if b > 0)


def _chi_crit(alpha: float, one_sided: bool) -> float:
    """qchisq(1 - alpha, 1) two-sided, qchisq(1 - 2 alpha, 1) one-sided: z squared."""
    if not 0 < alpha < (0.5 if one_sided else 1):
        raise ValueError("alpha must lie within (0, 1) (one-sided: within (0, 0.5)).")
    return NormalDist().inv_cdf(1 - alpha / (1 if one_sided else 2)) ** 2


def _reaches(chi: float, crit: float) -> bool:
    return abs(chi - _TOLERANCE) >= crit


def _first_n(per_item: float, crit: float) -> int:
    """The smallest n >= 11 with abs(n x per_item - 0.001) >= crit, as kappaSize's loop."""
    if per_item <= 0:
        raise ValueError("the bound gives the same model as kappa0: no sample size reaches it.")
    n = max(FIRST_N, math.floor((crit + _TOLERANCE) / per_item) - 1)
    while not _reaches(n * per_item, crit):
        n += 1
        if n > MAX_ITEMS:
            raise ValueError("no sample size up to ten million reaches this bound.")
    return n


def kappa_ci_items(kappa0: float, kappa_low: float, kappa_high: float | None,
                   shares: Sequence[float], raters: int = 2, alpha: float = 0.05) -> int:
    """Items for kappa's interval to stay within ``kappa_low`` (and ``kappa_high``).

    Parameters
    ----------
    kappa0 : float
        The anticipated kappa, in (0, 1).
    kappa_low, kappa_high : float, float or None
        The bounds, ``kappa_low < kappa0 < kappa_high``. With ``kappa_high`` a number:
        a two-sided ``100 (1 - alpha)%`` interval within both (critical value
        ``qchisq(1 - alpha, 1)``); with None: a one-sided lower bound at least
        ``kappa_low`` (``qchisq(1 - 2 alpha, 1)``).
    shares : sequence of float
        Each category's expected share (2 to 5 categories), the same for every rater.
    raters : int, 2 to 6
    alpha : float

    Returns
    -------
    int
        The smallest ``n >= 11`` whose chi-square ``n sum (P(kappa0) - P(bound))^2 /
        P(bound)`` minus 0.001 reaches the critical value, for each bound (kappaSize's
        ``CIBinary`` / ``CI3Cats`` - ``CI5Cats``; their search starts at 11).

    Examples
    --------
    >>> kappa_ci_items(0.4, 0.3, 0.5, [0.3, 0.7])
    397
    """
    k0, low = _kappa(kappa0, "kappa0"), _kappa(kappa_low, "kappa_low")
    if not low < k0 or (kappa_high is not None and not k0 < _kappa(kappa_high, "kappa_high")):
        raise ValueError("the bounds must satisfy kappa_low < kappa0 < kappa_high.")
    crit = _chi_crit(alpha, one_sided=kappa_high is None)
    n = _first_n(_chi_per_item(k0, low, shares, raters), crit)
    if kappa_high is not None:
        n = max(n, _first_n(_chi_per_item(k0, kappa_high, shares, raters), crit))
    return n


def kappa_lower_limit(kappa0: float, items: int, shares: Sequence[float], raters: int = 2,
                      alpha: float = 0.05) -> float:
    """The expected one-sided ``100 (1 - alpha)%`` lower limit of kappa for ``items`` items.

    kappaSize's ``FixedN*``: from ``kappa0`` down in steps of 0.001 until the chi-square
    ``items sum (P(kappa0) - P(limit))^2 / P(limit)`` minus 0.001 reaches
    ``qchisq(1 - 2 alpha, 1)``; the limit is returned rounded to the step (3 decimals;
    kappaSize prints the unrounded float, e.g. 0.6099999999999999 for 0.61).

    Raises
    ------
    ValueError
        ``items`` of 10 or fewer (kappaSize's floor), or a limit so low that the
        model's cell probabilities would turn negative.
    """
    k0 = _kappa(kappa0, "kappa0")
    if items <= 10:
        raise ValueError("kappaSize's fixed-n limit needs more than 10 items.")
    crit = _chi_crit(alpha, one_sided=True)
    limit = k0
    while True:
        limit -= _STEP  # accumulated as kappaSize does, so boundary cases agree with it
        if min(kappa_cells(limit, shares, raters)) <= 0:
            raise ValueError(f"{items} items give no lower limit the model can hold "
                             "(its cell probabilities turn negative).")
        if _reaches(items * _chi_per_item(k0, limit, shares, raters), crit):
            return round(limit, 3)


def kappa_interval(kappa0: float, items: int, shares: Sequence[float], raters: int = 2,
                   alpha: float = 0.05) -> tuple[float, float]:
    """The expected two-sided ``100 (1 - alpha)%`` interval of kappa for ``items`` items.

    The bounds where the chi-square of :func:`kappa_ci_items` (``qchisq(1 - alpha, 1)``,
    with its 0.001) is first reached walking out from kappa0, found on the continuous
    kappa (steps of 0.005, then bisection; not kappaSize's 0.001 steps):
    ``kappa_ci_items(kappa0, low, high)`` is then about ``items``. A bound the model
    cannot reach (its cell probabilities would turn non-positive before the chi-square
    reaches the critical value) is the model's edge:
    the interval is clipped to the range the model holds, never beyond [-1, 1].
    """
    k0 = _kappa(kappa0, "kappa0")
    if items < 2:
        raise ValueError("an interval needs at least 2 items.")
    crit = _chi_crit(alpha, one_sided=False)

    def short(bound: float) -> bool:  # the chi-square at this bound is below the critical
        return not _reaches(items * _chi_per_item(k0, bound, shares, raters), crit)

    return _edge(k0, -1.0, short, shares, raters), _edge(k0, 1.0, short, shares, raters)


_WALK = 0.005  # kappa step of the walk out from kappa0 (then bisection within a step)


def _edge(k0: float, far: float, short: Callable[[float], bool], shares: Sequence[float],
          raters: int) -> float:
    """The bound between kappa0 and ``far`` (-1 or 1) where ``short`` first turns False.

    Found by walking out from kappa0 in steps of :data:`_WALK` and bisecting within the
    first step that crosses: with three or more categories and raters the model's cells
    can turn negative over a stretch of kappa and positive again beyond it, where the
    chi-square is large once more, so a bisection over the whole range could land
    beyond the stretch (0.3 on 50 items, three equal shares, four raters: -0.515
    instead of 0.179). A model edge met first (its cells would turn non-positive)
    bounds the interval when the chi-square has not reached the critical value by it.
    """
    step, end = math.copysign(_WALK, far), far - math.copysign(1e-9, far)
    inner = k0
    while True:
        outer = end if (inner + step - end) * step >= 0 else inner + step
        if not _holds(outer, shares, raters):  # the model's edge lies in (inner, outer]
            held, lost = inner, outer
            for _ in range(60):
                mid = (held + lost) / 2
                held, lost = (mid, lost) if _holds(mid, shares, raters) else (held, mid)
            outer = held
            if short(outer):
                return outer
            break
        if not short(outer):
            break
        if outer == end:
            return end
        inner = outer
    for _ in range(60):  # short(inner), not short(outer)
        mid = (inner + outer) / 2
        inner, outer = (mid, outer) if short(mid) else (inner, mid)
    return (inner + outer) / 2


def _holds(kappa: float, shares: Sequence[float], raters: int) -> bool:
    """Whether the model at ``kappa`` gives every cell a positive probability."""
    try:
        return min(kappa_cells(kappa, shares, raters)) > 0
    except ZeroDivisionError:  # 1 + i kappa = 0: no model at this kappa
        return False


def _noncentral_chi1_cdf(x: float, ncp: float) -> float:
    """P(X <= x) for a non-central chi-square with 1 degree of freedom: (Z + sqrt(ncp))^2."""
    nd, root, shift = NormalDist(), math.sqrt(x), math.sqrt(ncp)
    return nd.cdf(root - shift) - nd.cdf(-root - shift)


def _kappasize_ncp(alpha: float, power: float) -> float:
    """kappaSize's ``.powchi(1, alpha, power)``: the non-centrality at which the 1-df test
    at ``qchisq(1 - alpha, 1)`` has ``power``, found by its own bisection (stopping when
    the cdf is within 1e-5), so the unrounded sample sizes agree with its printed ones."""
    crit = _chi_crit(alpha, one_sided=False)
    target = 1 - power
    lo, mid, hi = crit, 2 * crit, 3 * crit
    while _noncentral_chi1_cdf(crit, lo) < target:
        lo, mid, hi = lo / 4, lo, hi
    while _noncentral_chi1_cdf(crit, hi) > target:
        lo, mid, hi = lo, hi, hi + crit
    while True:
        if _noncentral_chi1_cdf(crit, mid) < target:
            lo, mid, hi = lo, (lo + mid) / 2, mid
        else:
            lo, mid, hi = mid, (mid + hi) / 2, hi
        if abs(_noncentral_chi1_cdf(crit, mid) - target) <= 1e-5:
            return mid


def kappa_power_items(kappa0: float, kappa1: float, shares: Sequence[float],
                      raters: int = 2, alpha: float = 0.05,
                      power: float = 0.8) -> tuple[int, float]:
    """Items for a two-sided test of kappa = ``kappa0`` to detect ``kappa1`` with ``power``.

    kappaSize's ``PowerBinary`` / ``Power3Cats`` - ``Power5Cats``: ``N = lambda /
    sum (P(kappa1) - P(kappa0))^2 / P(kappa0)``, ``lambda`` the non-centrality of a
    1-df chi-square test at ``qchisq(1 - alpha, 1)`` (two-sided) with that power.

    Returns
    -------
    (int, float)
        The ceiling and the unrounded N.

    Examples
    --------
    >>> kappa_power_items(0.4, 0.6, [0.3, 0.7])[0]
    191
    """
    k0, k1 = _kappa(kappa0, "kappa0"), _kappa(kappa1, "kappa1")
    if k0 == k1:
        raise ValueError("kappa0 and kappa1 must differ.")
    if not 0 < power < 1:
        raise ValueError("power must lie within (0, 1).")
    raw = _kappasize_ncp(alpha, power) / _chi_per_item(k1, k0, shares, raters)
    return math.ceil(raw - 1e-9), raw
