"""A model fitted to a pilot: its alpha, its value shares and its pattern of disagreement.

A pilot can be resampled only for designs of at most as many raters as its units hold
values. Beyond that, data sets are drawn from a model of the pilot. The assumed-value
model (:class:`~.simulate.ModelSource`: the true value, or else an independent draw
from all the shares) has the pilot's alpha but not its disagreements: on a 0-20 total
whose raters differ by a point or two, its errors are jumps across the whole scale, a
few large ones in place of many small ones, and its bootstrap interval came out more
than twice as wide as the pilot's own at the same design.

:class:`PilotModel` keeps the errors the pilot's raters made. From the pilot's
coincidence matrix ``o`` (Krippendorff's: every ordered pair of values within a unit,
weighted ``1 / (m_u - 1)``) it takes the value shares ``pi_c = n_c / n`` and, for each
value ``c``, the values paired with it, ``E(k | c) = o_ck / n_c``. A unit's true value
is drawn from ``pi``; each rater reports it with probability ``q``, otherwise a value
drawn from ``E(. | c)`` (so the values of a rater keep the shares ``pi``, ``o`` being
symmetric). ``q`` is set so the model's population alpha is the pilot's. Where even
``q = 0`` agrees more than the pilot, the error draw is mixed with an independent draw
from ``pi`` instead (alpha 0 when it is all chance).

That happens when the pilot's disagreements are not ones that raters erring apart from
a true value make: a 2-rater pilot whose one unit holds 4 and 12 gives ``E(. | 12)``
all at 4, so with ``q`` near 0 every rater of a unit whose true value is 12 reports
4, and the raters agree. The few independent draws that make up the difference land
anywhere on the scale and carry a large part of the model's disagreement
(:attr:`PilotModel.chance`, :attr:`PilotModel.chance_disagreement`). A small study's
width then depends mostly on how many of them it happens to hold, so the median width
shrinks unevenly with more units (it can even grow) until designs hold many of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..stats.alpha import fixed_metric
from .sources import ModelSource, PilotSource

__all__ = ["PilotModel", "fit_pilot_model", "grid_source"]


@dataclass(frozen=True, eq=False)
class PilotModel(ModelSource):
    """Data sets like a pilot's: ``alpha`` and ``shares`` are the pilot's, ``rows[c]`` the
    distribution of a rater's value on a unit whose true value is ``c``."""

    rows: np.ndarray = None  # type: ignore[assignment]  # set by fit_pilot_model
    label: str = "pilot"
    chance: float = 0.0
    """Share of ratings drawn independently from ``shares`` (see the module notes)."""
    chance_disagreement: float = 0.0
    """Share of the model's observed disagreement in pairs holding such a rating."""

    @property
    def method(self) -> str:
        """What the table's method column says of this source's designs."""
        return "model fitted to pilot"

    def describe(self) -> str:
        """One line for the report."""
        return (f"model fitted to {self.label}: its alpha {self.alpha:.3f}, value shares "
                "and pattern of disagreement")

    def draw(self, rng: np.random.Generator, units: int, raters: int,
             sets: int | None = None) -> np.ndarray:
        """A raters x units matrix of value codes (``sets`` of them: sets x raters x units)."""
        lead = () if sets is None else (sets,)
        size = len(self.shares)
        truth = rng.choice(size, size=(*lead, 1, units), p=np.asarray(self.shares))
        truth = np.broadcast_to(truth, (*lead, raters, units))
        # inverse-CDF draws from row truth: row c's cumulative shares, shifted by c, make
        # one increasing sequence, so one search finds every rater's value
        cum = np.cumsum(self.rows, axis=1)
        cum[:, -1] = 1.0
        shifted = (cum + np.arange(size)[:, None]).ravel()
        found = np.searchsorted(shifted, truth + rng.random(truth.shape), side="right")
        return np.minimum(found - truth * size, size - 1)


def fit_pilot_model(pilot: PilotSource) -> PilotModel:
    """The model of ``pilot`` (see the module notes); its alpha floored at 0."""
    size = len(pilot.domain)
    o = coincidences(pilot.codes, size)
    n_c = o.sum(axis=1)
    shares = n_c / n_c.sum()
    paired = np.divide(o, n_c[:, None], out=np.tile(shares, (size, 1)),
                       where=n_c[:, None] > 0)
    a = pilot.alpha()
    target = float(np.clip(a if np.isfinite(a) else 0.0, 0.0, 1.0))
    delta = population_metric(pilot.domain, pilot.level, shares)
    t = _calibrate(shares, paired, delta, target)
    rows = _rows_at(t, shares, paired)
    chance = max(t - 1.0, 0.0)
    return PilotModel(target, tuple(shares), pilot.domain, pilot.level, rows, pilot.label,
                      chance=chance,
                      chance_disagreement=_chance_disagreement(shares, rows, delta, chance))


def grid_source(source: ModelSource | PilotSource,
                raters: Sequence[int]) -> ModelSource | PilotSource:
    """One source for a whole grid: a pilot, unless some rater count of the grid exceeds
    the values its units hold; then its model, for every design.

    Resampling and the model are two methods: mixing them in one grid made a rater
    count's width jump where the method changed (more so before the model kept the
    pilot's disagreements), and the cheapest design was chosen across that jump.
    """
    if isinstance(source, PilotSource) and max(raters) > source.most_raters:
        return fit_pilot_model(source)
    return source


def coincidences(codes: np.ndarray, size: int) -> np.ndarray:
    """Krippendorff's coincidence matrix of value codes (units x slots, -1 empty)."""
    counts = (codes[..., None] == np.arange(size)).sum(axis=1).astype(float)  # units x V
    m = counts.sum(axis=1)
    keep = m >= 2  # a unit of one value pairs with nothing
    counts, m = counts[keep], m[keep]
    pairs = np.einsum("uc,uk->ck", counts / (m - 1)[:, None], counts)
    return pairs - np.diag((counts / (m - 1)[:, None]).sum(axis=0))


def population_metric(domain: tuple, level: str, shares: np.ndarray) -> np.ndarray:
    """The squared distances alpha uses, the ordinal one from the shares' mid-ranks."""
    if level == "ordinal":
        mid = np.cumsum(shares) - shares / 2
        return (mid[:, None] - mid[None, :]) ** 2
    values = np.asarray(domain, dtype=float) if level != "nominal" else np.arange(len(domain))
    return fixed_metric(values, level)


def model_alpha(shares: np.ndarray, rows: np.ndarray, delta: np.ndarray) -> float:
    """Population alpha when raters are independent given the truth (drawn from
    ``shares``) and report from ``rows[truth]``: 1 - D_o / D_e."""
    observed = np.einsum("t,tc,ck,tk->", shares, rows, delta, rows)
    return float(1.0 - observed / (shares @ delta @ shares))


def _chance_disagreement(shares: np.ndarray, rows: np.ndarray, delta: np.ndarray,
                         chance: float) -> float:
    """Share of the observed disagreement in pairs of which one rating or both were drawn
    independently from ``shares`` (each rating is, with probability ``chance``)."""
    total = np.einsum("t,tc,ck,tk->", shares, rows, delta, rows)
    if chance <= 0 or total <= 0:
        return 0.0
    kept = rows - chance * shares[None, :]  # the ratings not drawn by chance
    return float(1.0 - np.einsum("t,tc,ck,tk->", shares, kept, delta, kept) / total)


def _rows_at(t: float, shares: np.ndarray, paired: np.ndarray) -> np.ndarray:
    """Rows of the model at ``t`` in [0, 2]: the truth (0), the pilot's paired values
    (1), an independent draw from the shares (2), linearly between."""
    if t <= 1:
        return (1 - t) * np.eye(len(shares)) + t * paired
    return (2 - t) * paired + (t - 1) * shares[None, :]


def _calibrate(shares: np.ndarray, paired: np.ndarray, delta: np.ndarray,
               target: float) -> float:
    """The first ``t`` (from 0, alpha 1) whose model alpha reaches ``target``."""
    grid = np.linspace(0.0, 2.0, 401)
    alphas = np.array([model_alpha(shares, _rows_at(t, shares, paired), delta)
                       for t in grid])
    first = int(np.argmax(alphas <= target + 1e-12))
    low, high = grid[max(first - 1, 0)], grid[first]
    for _ in range(40):  # bisection: t to 1e-14, far below any simulation's noise
        mid = (low + high) / 2
        if model_alpha(shares, _rows_at(mid, shares, paired), delta) > target:
            low = mid
        else:
            high = mid
    return high
