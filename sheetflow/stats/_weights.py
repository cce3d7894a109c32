"""Agreement weight matrices shared by Cohen's kappa, Fleiss' kappa and Gwet's AC."""

from __future__ import annotations

from typing import Literal

import numpy as np

from sheetflow.stats import _util

Weights = Literal["identity", "linear", "quadratic", "ordinal"]
WeightOn = Literal["values", "ranks"]
WEIGHTS: tuple[str, ...] = ("identity", "linear", "quadratic", "ordinal")
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
    ``1 - M_kl / max M`` with ``M_kl = C(|r_k - r_l| + 1, 2)`` on the ranks ``r``.
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
    span = x.max() - x.min()
    diff = np.abs(x[:, None] - x[None, :]) / span
    return 1.0 - (diff if name == "linear" else diff**2)
