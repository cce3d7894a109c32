"""Protocol 001's mixed-effects model (owner as a random effect) on planted yields.

Every owner rates 15 items per arm, so the design is balanced and the fixed effects
are known without any model: the intercept is the control arm's yield pooled over the
owners, each arm's coefficient its pooled yield minus the control's. statsmodels' own
refit is the referee for the standard errors. A fit is usable only when it is a proper
maximum with finite, possible standard errors and an owner variance above 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sheetflow.analysis.keep_known_files import fit_owner_model

ARMS = ["b1", "b3", "b4", "b6"]


def _planted(kept: dict[str, tuple[int, ...]]) -> pd.DataFrame:
    """Each owner keeps the first k of 15 items of each arm (yield 1), in ARMS order."""
    return pd.DataFrame([{"rater": owner, "arm": arm, "yield": int(i < k)}
                         for owner, ks in kept.items() for arm, k in zip(ARMS, ks, strict=True)
                         for i in range(15)])


def test_owners_that_differ_give_a_usable_fit_with_the_known_effects():
    """Owner 2 keeps four more items per arm than owner 1, owner 3 two more: an owner
    variance well above 0. Pooled yields b1 9/45, b3 25/45, b4 12/45, b6 15/45."""
    smf = pytest.importorskip("statsmodels.formula.api")
    items = _planted({"o1": (1, 6, 2, 3), "o2": (5, 11, 6, 7), "o3": (3, 8, 4, 5)})
    table = fit_owner_model(items, ARMS).set_index("term")
    assert table["usable"].all() and table["converged"].all()
    assert (table["reason"] == "").all()
    assert table.loc["intercept (b1 yield)", "coef"] == pytest.approx(9 / 45, abs=1e-6)
    for arm, k in (("b3", 25), ("b4", 12), ("b6", 15)):
        assert table.loc[f"{arm} - b1", "coef"] == pytest.approx((k - 9) / 45, abs=1e-6)
    assert table.loc["owner variance", "coef"] > 0.01
    frame = items.assign(arm=pd.Categorical(items["arm"], categories=ARMS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ C(arm)", frame.rename(columns={"yield": "y"}),
                          groups=frame["rater"]).fit(reml=True)
    assert table.loc["b3 - b1", "se"] == pytest.approx(fit.bse["C(arm)[T.b3]"], rel=1e-6)
    assert table.loc["intercept (b1 yield)", "ci_high"] == pytest.approx(
        fit.conf_int().loc["Intercept", 1], rel=1e-6)


def test_two_near_identical_owners_give_a_fit_that_is_not_usable():
    """The owners differ by one kept item in two arms: REML puts the owner variance at
    0, the optimiser retries and stops where the Hessian is not positive definite, and
    the intercept comes out near 0 with a standard error in the millions although the
    control's yield is 5/30. statsmodels says converged; the table says it is not."""
    table = fit_owner_model(_planted({"o1": (2, 9, 3, 4), "o2": (3, 8, 3, 4)}), ARMS)
    assert not table["usable"].any() and not table["converged"].any()
    reason = table["reason"].iloc[0]
    assert "Hessian is not positive definite" in reason
    assert "owner variance is estimated at 0" in reason
    assert table[["se", "z", "p", "ci_low", "ci_high"]].isna().all().all()


def test_owners_alike_to_the_boundary_are_not_usable_even_when_converged():
    """Three owners whose arm yields vary no more than chance: the owner variance is
    estimated at 0, where the model pools the ratings as if independent; the fit
    converged, with finite standard errors, and is still not an owner-adjusted one."""
    table = fit_owner_model(_planted({"o1": (5, 5, 4, 6), "o2": (2, 5, 3, 5),
                                      "o3": (3, 4, 5, 4)}), ARMS)
    assert table["converged"].all() and not table["usable"].any()
    assert table["reason"].iloc[0] == ("the owner variance is estimated at 0 (on the "
                                       "boundary): the model then pools the owners' "
                                       "ratings as if independent")
    assert np.isnan(table["se"]).all()
