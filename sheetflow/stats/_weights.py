"""Agreement weights (Cohen, Fleiss, Gwet, Conger, Scott) and the coded ratings they weigh."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from sheetflow.stats import _util

Weights = Literal["identity", "linear", "quadratic", "ordinal", "bipolar"]
WeightOn = Literal["values", "ranks"]
WEIGHTS: tuple[str, ...] = ("identity", "linear", "quadratic", "ordinal", "bipolar")
WEIGHT_ALIASES = {"unweighted": "identity", "none": "identity"}


def weight_name(weights: str | None) -> str:
    """Normalise a weight name ('unweighted'/'none'/None mean identity)."""
    name = "identity" if weights is None else WEIGHT_ALIASES.get(weights, weights)
    return _util.check_choice("weights", name, WEIGHTS)


def scale_positions(domain: np.ndarray, weight_on: str) -> np.ndarray:
    """Numbers the weights are computed on: the category values or their ranks 0..q-1."""
    _util.check_choice("weight_on", weight_on, ("values", "ranks"))
    if weight_on == "ranks" or domain.dtype == object:
        return np.arange(len(domain), dtype=float)
    return domain.astype(float)


def agreement_weights(domain: np.ndarray, weights: str, weight_on: str = "values") -> np.ndarray:
    """Agreement weights ``w[k, l]`` in [0, 1] with ones on the diagonal.

    identity: ``[k == l]``; linear: ``1 - |x_k - x_l| / (x_max - x_min)``; quadratic:
    ``1 - (x_k - x_l)^2 / (x_max - x_min)^2``; ordinal (Gwet 2014, section 3.5):
    ``1 - M_kl / max M`` with ``M_kl = C(|r_k - r_l| + 1, 2)`` on the ranks ``r``;
    bipolar (Gwet 2014, section 3.5): ``1 - B_kl / max B`` with
    ``B_kl = (x_k - x_l)^2 / ((x_k + x_l - 2 x_min)(2 x_max - x_k - x_l))`` for
    ``k != l`` and ``B_kk = 0``.
    """
    name = weight_name(weights)
    size = len(domain)
    if name == "identity" or size < 2:
        return np.eye(size)
    if name == "ordinal":
        ranks = np.arange(size, dtype=float)
        gap = np.abs(ranks[:, None] - ranks[None, :])
        m = (gap + 1.0) * gap / 2.0
        return 1.0 - m / m.max()
    x = scale_positions(domain, weight_on)
    if name == "bipolar":
        return _bipolar(x)
    span = x.max() - x.min()
    diff = np.abs(x[:, None] - x[None, :]) / span
    return 1.0 - (diff if name == "linear" else diff**2)


def _bipolar(x: np.ndarray) -> np.ndarray:
    """Gwet's bipolar weights; off the diagonal both denominator factors are positive."""
    lo, hi = x.min(), x.max()
    total = x[:, None] + x[None, :]
    denom = (total - 2.0 * lo) * (2.0 * hi - total)
    off = ~np.eye(len(x), dtype=bool)
    b = np.zeros((len(x), len(x)))
    b[off] = (x[:, None] - x[None, :])[off] ** 2 / denom[off]
    return 1.0 - b / b.max()


def require_order(data_is_text: bool, categories: object, weights: str | None, what: str) -> None:
    """Refuse weights that depend on category order when text labels have no declared order.

    Sorting text labels alphabetically would put "10" before "2" and "high" before
    "low", silently changing every weighted coefficient.
    """
    if weight_name(weights) == "identity" or categories is not None or not data_is_text:
        return
    raise ValueError(
        f"{what} with {weight_name(weights)} weights needs the order of the text labels: "
        "pass categories=[...] in scale order (e.g. categories=['low', 'mid', 'high']), "
        "or give numeric values; text labels are never sorted for weighting."
    )


def coded_ratings(
    data: Any, unit: str, rater: str, value: str, categories: Any, weights: str | None,
    weight_on: str, what: str,
) -> tuple[np.ndarray, list[Any], np.ndarray]:  # fmt: skip
    """Integer codes (raters x units, ``MISSING`` for none), rater labels and weights.

    The category domain is ``categories`` or the values observed; order-dependent
    weights on text labels without a declared order are refused (:func:`require_order`).
    """
    matrix, raters, _ = _util.to_matrix(data, unit, rater, value)
    require_order(matrix.dtype == object, categories, weights, what)
    codes, domain = _util.coded(matrix, categories)
    return codes, raters, agreement_weights(domain, weights, weight_on)
