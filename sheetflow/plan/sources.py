"""Where a planned design's data sets come from: an assumed model, or a pilot.

* :class:`ModelSource` - an anticipated alpha and the shares of the values (see
  :mod:`.simulate` for how it draws);
* :class:`PilotSource` - a pilot's ratings, resampled (and, beyond the rater counts its
  units hold, modelled by :mod:`.pilot_model`).

Apart from :mod:`.simulate` so that the pilot's model can build on them without an
import circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..stats import krippendorff_alpha

__all__ = ["ModelSource", "PilotSource", "as_values", "value_domain"]


@dataclass(frozen=True)
class ModelSource:
    """Anticipated agreement: alpha and the value shares over ``domain`` (in order)."""

    alpha: float
    shares: tuple[float, ...]
    domain: tuple[Any, ...]
    level: str

    def __post_init__(self) -> None:
        if not 0 <= self.alpha <= 1:
            raise ValueError("the anticipated alpha must be between 0 and 1.")
        if len(self.shares) != len(self.domain) or len(self.domain) < 2:
            raise ValueError("give one share per value of the domain (two or more values).")
        if min(self.shares) < 0 or not np.isclose(sum(self.shares), 1.0, atol=1e-6):
            raise ValueError("value shares must be non-negative and add up to 1.")

    @property
    def method(self) -> str:
        """What the table's method column says of this source's designs."""
        return "simulation"

    def describe(self) -> str:
        """One line for the report."""
        return f"assumed alpha {self.alpha:g} with value shares " + ", ".join(
            f"{v}: {s:.2f}" for v, s in zip(self.domain, self.shares, strict=True))

    def draw(self, rng: np.random.Generator, units: int, raters: int,
             sets: int | None = None) -> np.ndarray:
        """A raters x units matrix of value codes (``sets`` of them: sets x raters x units)."""
        lead = () if sets is None else (sets,)
        p = np.asarray(self.shares) / np.sum(self.shares)
        truth = rng.choice(len(p), size=(*lead, 1, units), p=p)
        noise = rng.choice(len(p), size=(*lead, raters, units), p=p)
        keep = rng.random((*lead, raters, units)) < np.sqrt(self.alpha)
        return np.where(keep, truth, noise)


@dataclass(frozen=True)
class PilotSource:
    """A pilot's ratings as value codes: one row per unit, -1 where a slot is empty.

    With ``team``, the first slot of every unit holds the internal team's value (-1
    where the team has none): protocol 000's alpha counts the team as one more rater in
    every study, so every resampled unit keeps the team's value and resamples only the
    validators' values (see :meth:`draw`).
    """

    codes: np.ndarray
    domain: tuple[Any, ...]
    level: str
    label: str = "pilot"
    team: bool = False

    @property
    def per_unit(self) -> np.ndarray:
        """Number of values in each pilot unit."""
        return (self.codes >= 0).sum(axis=1)

    @property
    def most_raters(self) -> int:
        """The most raters a resampled study can have: the values a unit holds (with
        ``team``, of the units the team rated, the team being one of them)."""
        held = self.per_unit[self.codes[:, 0] >= 0] if self.team else self.per_unit
        return int(held.max()) if len(held) else 0

    def describe(self) -> str:
        """One line for the report."""
        m = self.per_unit
        low, high = int(m.min()), int(m.max())
        held = f"{low}" if low == high else f"{low}-{high}"
        return f"{self.label}: {len(m)} units, {held} values per unit, alpha {self.alpha():.3f}"

    def alpha(self) -> float:
        """The pilot's own alpha (NaN when undefined)."""
        res = krippendorff_alpha(as_values(self.codes.T, self), level=self.level,
                                 value_domain=value_domain(self), n_boot=0, seed=0)
        return float(res.loc[0, "alpha"])

    def fitted(self) -> ModelSource:
        """The model with the pilot's alpha (floored at 0) and value shares."""
        counts = np.bincount(self.codes[self.codes >= 0], minlength=len(self.domain))
        a = self.alpha()
        return ModelSource(float(np.clip(a if np.isfinite(a) else 0.0, 0.0, 1.0)),
                           tuple(counts / counts.sum()), self.domain, self.level)

    def draw(self, rng: np.random.Generator, units: int, raters: int,
             sets: int | None = None) -> np.ndarray:
        """A raters x units matrix of value codes resampled from the pilot (``sets`` of
        them: sets x raters x units). With ``team`` the first of the ``raters`` is the
        internal team, its value kept in every unit; the others are ``raters - 1`` of
        the unit's validators' values."""
        holds = self.per_unit >= raters
        if self.team:
            holds &= self.codes[:, 0] >= 0
        eligible = self.codes[holds]
        rows = eligible[rng.integers(0, len(eligible), size=(sets or 1) * units)]
        keys = np.where(rows >= 0, rng.random(rows.shape), 2.0)
        if self.team:  # the team's slot sorts first: it is in every resampled unit
            keys[:, 0] = -1.0
        order = np.argsort(keys, axis=1)[:, :raters]
        picked = np.take_along_axis(rows, order, axis=1)  # (sets * units, raters)
        if sets is None:
            return picked.T
        return picked.reshape(sets, units, raters).transpose(0, 2, 1)


def value_domain(source: ModelSource | PilotSource) -> list[Any]:
    """Numeric values for interval/ratio; codes otherwise (order is all that matters)."""
    if source.level in ("interval", "ratio"):
        return [float(v) for v in source.domain]
    return list(range(len(source.domain)))


def as_values(codes: np.ndarray, source: ModelSource | PilotSource) -> np.ndarray:
    """Codes to the numbers :func:`krippendorff_alpha` reads (NaN where missing)."""
    lookup = np.asarray(value_domain(source), dtype=float)
    return np.where(codes >= 0, lookup[np.clip(codes, 0, None)], np.nan)
