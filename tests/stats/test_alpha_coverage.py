"""Coverage of Krippendorff's alpha's percentile unit-bootstrap interval, by simulation.

Data sets are drawn from models whose alpha is known: interval data are a unit's true
score (variance ``alpha``) plus independent rater error (variance ``1 - alpha``), so
alpha is the share of true-score variance; nominal data give the unit's true category
with probability ``sqrt(alpha)`` and otherwise a category drawn from the same
distribution, so two values of a unit agree beyond chance with probability ``alpha``.
The numbers asserted are the ones the docstring of
:func:`sheetflow.stats.krippendorff_alpha` states (300 seeded data sets, 1000 resamples
each), within about three simulation standard errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from sheetflow import stats as st

REPLICATES, RESAMPLES, RATERS = 300, 1000, 3
NOMINAL_P = (0.5, 0.3, 0.2)


def _interval(rng: np.random.Generator, units: int, alpha: float) -> np.ndarray:
    true = rng.normal(0.0, np.sqrt(alpha), units)
    return true[None, :] + rng.normal(0.0, np.sqrt(1.0 - alpha), (RATERS, units))


def _nominal(rng: np.random.Generator, units: int, alpha: float) -> np.ndarray:
    true = rng.choice(len(NOMINAL_P), units, p=NOMINAL_P)
    guess = rng.choice(len(NOMINAL_P), (RATERS, units), p=NOMINAL_P)
    right = rng.random((RATERS, units)) < np.sqrt(alpha)
    return np.where(right, true[None, :], guess).astype(float)


def _simulate(level: str, units: int, alpha: float) -> tuple[float, int, int, float]:
    """Coverage, misses wholly below and wholly above the true alpha, and the mean of
    (alpha - ci_low) - (ci_high - alpha) over the data sets."""
    rng = np.random.default_rng([units, RATERS, 7])
    draw = _interval if level == "interval" else _nominal
    below = above = 0
    skew = []
    for rep in range(REPLICATES):
        row = st.krippendorff_alpha(draw(rng, units, alpha), level=level,
                                    n_boot=RESAMPLES, seed=rep).loc[0]
        below += int(row["ci_high"] < alpha)
        above += int(row["ci_low"] > alpha)
        skew.append((row["alpha"] - row["ci_low"]) - (row["ci_high"] - row["alpha"]))
    return 1.0 - (below + above) / REPLICATES, below, above, float(np.mean(skew))


@pytest.mark.slow
@pytest.mark.parametrize(("level", "units", "alpha", "coverage"), [
    ("interval", 10, 0.7, 0.85),
    ("interval", 30, 0.7, 0.90),
    ("nominal", 10, 0.64, 0.90),
    ("nominal", 30, 0.64, 0.97),
    ("nominal", 100, 0.64, 0.93),
])
def test_percentile_interval_coverage(level: str, units: int, alpha: float,
                                      coverage: float) -> None:
    got, below, above, skew = _simulate(level, units, alpha)
    assert got == pytest.approx(coverage, abs=0.04)
    # the misses lie mostly wholly below the true alpha, and the lower arm is the
    # longer: alpha's sampling distribution is skewed below its ceiling of 1
    assert below >= above
    assert skew > 0
