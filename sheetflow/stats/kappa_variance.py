"""The largest large-sample variance of Cohen's kappa a set of equal marginals allows.

Flack, Afifi, Lachenbruch & Schouten (1988) plan Cohen's kappa for K categories when
only the marginals (the same for both raters) and kappa are anticipated: the
Fleiss-Cohen-Everitt variance then depends on how the agreement is spread over the
cells, and they take its maximum over every table with those marginals and that
observed agreement, a linear program (irr's ``N2.cohen.kappa`` solves it with lpSolve;
here scipy's HiGHS solver).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["max_kappa_sd"]


def max_kappa_sd(shares: Sequence[float], kappa: float) -> float:
    """sqrt(n) x the largest standard error of Cohen's kappa, two raters, K categories.

    Parameters
    ----------
    shares : sequence of float
        Each category's share, the same for both raters, summing to 1 (K >= 2).
    kappa : float
        The kappa the table must have; with ``pe = sum(shares^2)`` its observed
        agreement is ``po = kappa + pe (1 - kappa)``.

    Returns
    -------
    float
        ``sqrt(po (1 - pe)^2 + max_p sum_ij m_ij p_ij - (po pe - 2 pe + po)^2) /
        (1 - pe)^2``, the maximum over cell probabilities ``p_ij >= 0`` with row and
        column sums ``shares``, total 1 and trace ``po``, where ``m_ii = -(1 - po) 2 p_i
        (2 (1 - pe) - (1 - po) 2 p_i)`` and ``m_ij = (1 - po)^2 (p_i + p_j)^2``
        (Fleiss, Cohen & Everitt 1969, rearranged as irr's ``MaxTau``).

    Raises
    ------
    ValueError
        Shares that are not a distribution, or a kappa no table with them can have.

    References
    ----------
    Flack, V. F., Afifi, A. A., Lachenbruch, P. A., & Schouten, H. J. A. (1988).
    Sample size determinations for the two rater kappa statistic. Psychometrika, 53(3),
    321-325.
    """
    p = np.asarray(shares, dtype=float)
    if p.ndim != 1 or len(p) < 2 or p.min() < 0 or abs(p.sum() - 1) > 1e-9:
        raise ValueError("shares must be two or more non-negative numbers summing to 1.")
    k = len(p)
    pe = float(p @ p)
    po = kappa + pe * (1 - kappa)
    if not 0 < po <= 1:
        raise ValueError(f"kappa {kappa} is impossible with these shares.")
    weights = (1 - po) ** 2 * (p[:, None] + p[None, :]) ** 2
    np.fill_diagonal(weights, -(1 - po) * 2 * p * (2 * (1 - pe) - (1 - po) * 2 * p))
    rows = [np.kron(np.eye(k)[i], np.ones(k)) for i in range(k)]
    cols = [np.kron(np.ones(k), np.eye(k)[i]) for i in range(k)]
    equalities = np.vstack([*rows, *cols, np.eye(k).ravel()])
    bounds = np.concatenate([p, p, [po]])
    # imported here, not with the module: scipy.optimize costs about 20 MB of memory,
    # and only sample-size planning (not the analysis) needs it
    from scipy.optimize import linprog

    res = linprog(-weights.ravel(), A_eq=equalities, b_eq=bounds, bounds=(0, None),
                  method="highs")
    if res.status != 0:
        raise ValueError(f"kappa {kappa} is impossible with these shares.")
    tau_sq = po * (1 - pe) ** 2 - res.fun - (po * pe - 2 * pe + po) ** 2
    if tau_sq <= 0:
        raise ValueError(f"kappa {kappa} with these shares leaves no sampling variance.")
    return float(np.sqrt(tau_sq) / (1 - pe) ** 2)
