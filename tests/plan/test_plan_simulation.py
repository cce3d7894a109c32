"""Simulated plans: the model's alpha, reproducibility, and the promise checked on real data."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from sheetflow.plan import (
    Costs,
    ModelSource,
    PilotSource,
    Target,
    items_for_target,
    plan_alpha,
    simulate_cell,
)
from sheetflow.plan.simulate import bootstrap_weights
from sheetflow.stats import (
    alpha_complete_batch,
    cohen_kappa,
    cohen_kappa_batch,
    fleiss_kappa,
    fleiss_kappa_complete_batch,
    krippendorff_alpha,
)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def pandalm() -> np.ndarray:
    """999 items x 3 annotators (PandaLM test set; see fixtures/README.md)."""
    table = pd.read_csv(FIXTURES / "pandalm_annotations.csv")
    return table[["annotator1", "annotator2", "annotator3"]].to_numpy()


@pytest.mark.parametrize("level,alpha", [("nominal", 0.4), ("ordinal", 0.75),
                                         ("interval", 0.9)])
def test_model_draws_data_with_the_anticipated_alpha(level, alpha):
    model = ModelSource(alpha, (0.2, 0.5, 0.3), (1, 2, 3), level)
    cell = simulate_cell(model, 4, 400, simulations=30, n_boot=50, seed=2)
    assert cell["estimate_median"] == pytest.approx(alpha, abs=0.03)


def test_same_seed_same_plan_and_progress_reported():
    model = ModelSource(0.7, (0.5, 0.5), ("yes", "no"), "nominal")
    calls = []
    kwargs = dict(raters=[2, 3], items=[20, 40], target=Target(width=0.3), simulations=20,
                  n_boot=100, seed=9)
    first = plan_alpha(model, progress=lambda d, t: calls.append((d, t)), **kwargs)
    again = plan_alpha(model, **kwargs)
    pd.testing.assert_frame_equal(first.table, again.table)
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    other = plan_alpha(model, **{**kwargs, "seed": 10})
    assert not first.table["expected_width"].equals(other.table["expected_width"])


def test_more_items_or_raters_narrow_the_interval():
    model = ModelSource(0.7, (0.3, 0.4, 0.3), (0, 1, 2), "ordinal")
    res = plan_alpha(model, raters=[2, 5], items=[20, 200], target=Target(width=0.2),
                     simulations=40, n_boot=200, seed=1)
    w = res.table.set_index(["raters", "items"])["expected_width"]
    assert w[(2, 200)] < w[(2, 20)] and w[(5, 20)] < w[(2, 20)]


def test_cheapest_design_follows_the_costs():
    model = ModelSource(0.8, (0.5, 0.5), (0, 1), "nominal")
    grid = dict(raters=[2, 6], items=[30, 300], target=Target(width=0.5), simulations=20,
                n_boot=100, seed=4)
    # Every design meets a 0.5 width; raters expensive -> 2 raters; items expensive and
    # raters cheap -> the fewest items.
    pricey_raters = plan_alpha(model, costs=Costs(per_rater=1000, per_item=1), **grid)
    assert (pricey_raters.chosen()["raters"], pricey_raters.chosen()["items"]) == (2, 30)
    res = plan_alpha(model, costs=Costs(per_rater=0, per_item=5), **grid)
    assert res.chosen()["cost"] == min(res.table["cost"])
    assert res.table["cheapest"].sum() == 1


def test_lower_bound_target_uses_the_share_of_studies_clearing_the_edge():
    model = ModelSource(0.85, (0.5, 0.5), (0, 1), "nominal")
    res = plan_alpha(model, raters=[3], items=[20, 400], target=Target(edge=0.7,
                     probability=0.8), simulations=40, n_boot=200, seed=5)
    p = res.table.set_index("items")["p_lower"]
    assert p[20] < 0.8 <= p[400]
    assert res.chosen()["items"] == 400


def test_no_design_meeting_the_target_is_said():
    model = ModelSource(0.5, (0.5, 0.5), (0, 1), "nominal")
    res = plan_alpha(model, raters=[2], items=[10], target=Target(width=0.01),
                     simulations=10, n_boot=50)
    assert res.chosen() is None and res.to_dict()["raters"] is None


def test_items_for_target_meets_the_width():
    model = ModelSource(0.75, (0.25, 0.5, 0.25), (0, 1, 2), "ordinal")
    items, width = items_for_target(model, 3, 0.2, start_items=20, simulations=60,
                                    n_boot=200, seed=3)
    assert width <= 0.2
    smaller = simulate_cell(model, 3, int(items * 0.7), simulations=60, n_boot=200, seed=3)
    assert smaller["expected_width"] > 0.2


def test_pilot_rater_counts_beyond_the_pilot_use_the_fitted_model(pandalm):
    pilot = PilotSource(pandalm[:100], (0, 1, 2), "nominal")
    assert simulate_cell(pilot, 3, 50, simulations=5, n_boot=50)["method"] == "pilot resampling"
    assert simulate_cell(pilot, 4, 50, simulations=5, n_boot=50)["method"] == \
        "model fitted to pilot"


def test_promised_width_holds_on_fresh_data_from_the_full_set(pandalm):
    """Acceptance: plan from a 150-item pilot; fresh studies of the recommended size drawn
    from all 999 items (real raters) have a median bootstrap width within 15% of the
    promise."""
    rng = np.random.default_rng(20261130)
    pilot = PilotSource(pandalm[rng.choice(len(pandalm), 150, replace=False)], (0, 1, 2),
                        "nominal")
    res = plan_alpha(pilot, raters=[2, 3], items=[40, 80, 120, 160, 240],
                     target=Target(width=0.15), simulations=100, n_boot=500, seed=1)
    best = res.chosen()
    raters, items = int(best["raters"]), int(best["items"])
    widths = []
    for i in range(200):
        cols = rng.choice(3, raters, replace=False)
        rows = rng.choice(len(pandalm), items, replace=False)
        data = pandalm[np.ix_(rows, cols)].T.astype(float)
        out = krippendorff_alpha(data, level="nominal", value_domain=[0, 1, 2], n_boot=1000,
                                 seed=i)
        widths.append(out.loc[0, "ci_high"] - out.loc[0, "ci_low"])
    assert np.median(widths) == pytest.approx(best["expected_width"], rel=0.15)


@pytest.mark.parametrize("statistic,raters", [("fleiss_kappa", 4), ("cohen_kappa", 2)])
def test_kappa_is_simulated_with_its_own_interval(statistic, raters):
    model = ModelSource(0.6, (0.3, 0.7), ("yes", "no"), "nominal")
    cell = simulate_cell(model, raters, 300, simulations=30, n_boot=1, seed=2,
                         statistic=statistic)
    assert cell["estimate_median"] == pytest.approx(0.6, abs=0.05)
    small = simulate_cell(model, raters, 30, simulations=30, n_boot=1, seed=2,
                          statistic=statistic)
    assert small["expected_width"] > cell["expected_width"] > 0


def test_cohen_kappa_needs_two_raters():
    model = ModelSource(0.6, (0.5, 0.5), (0, 1), "nominal")
    with pytest.raises(ValueError, match="two raters"):
        simulate_cell(model, 3, 30, simulations=2, n_boot=1, statistic="cohen_kappa")


@pytest.mark.parametrize("level,values,alpha", [("ordinal", 21, 0.75), ("ordinal", 3, 0.95),
                                                ("nominal", 4, 0.6), ("interval", 5, 0.8)])
def test_batch_resample_alphas_match_the_krippendorff_package(level, values, alpha):
    """Cross-check of the batch the simulation uses (``alpha_complete_batch``, with its
    one-category units left out of the ordinal spread) against the independent
    ``krippendorff`` package (Castro 2017), on each resample written out unit by unit:
    a single weight row makes the interval's ends that resample's alpha."""
    source = ModelSource(alpha, tuple([1 / values] * values), tuple(range(values)), level)
    codes = source.draw(np.random.default_rng(7), 40, 4, sets=5)  # (sets, raters, units)
    counts = (codes[..., None] == np.arange(values)).sum(axis=1)
    weights = bootstrap_weights(3, 40, 6)
    for row in weights:
        _, low, high = alpha_complete_batch(counts, list(range(values)), level, row[None, :])
        repeat = row.astype(int)
        for s in range(len(codes)):
            resample = np.repeat(codes[s], repeat, axis=1).astype(float)
            want = krippendorff.alpha(resample, level_of_measurement=level,
                                      value_domain=list(range(values)))
            assert low[s] == pytest.approx(want, abs=1e-12)
            assert high[s] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("statistic,raters,values", [("fleiss_kappa", 3, 4),
                                                     ("fleiss_kappa", 6, 2),
                                                     ("cohen_kappa", 2, 3)])
def test_batch_kappas_match_the_one_study_functions(statistic, raters, values):
    """The simulated kappa studies are computed at once (``fleiss_kappa_complete_batch``,
    ``cohen_kappa_batch``); each must equal :func:`fleiss_kappa` / :func:`cohen_kappa`
    on that study alone (whose values are tested against irrCAC and irr), including
    a study with one category throughout (NaN)."""
    source = ModelSource(0.7, tuple([1 / values] * values), tuple(range(values)), "nominal")
    codes = source.draw(np.random.default_rng(11), 15, raters, sets=8)
    codes[0] = 0  # chance agreement 1: undefined
    if statistic == "cohen_kappa":
        got = cohen_kappa_batch(codes, values)
        one = cohen_kappa
    else:
        got = fleiss_kappa_complete_batch(
            (codes[..., None] == np.arange(values)).sum(axis=1))
        one = fleiss_kappa
    for s in range(len(codes)):
        res = one(codes[s].astype(float), categories=list(range(values)))
        want = [float(res.loc[0, c]) for c in ("kappa", "ci_low", "ci_high")]
        assert [float(g[s]) for g in got] == pytest.approx(want, abs=1e-12, nan_ok=True)
    assert np.isnan(got[0][0])


def test_simulated_figures_carry_their_monte_carlo_error():
    """The median width's SE from its order-statistic interval, the share's binomial SE,
    both per design."""
    from sheetflow.plan.simulate import median_se, share_se

    # 100 values 0..99: ranks 40 and 61 bound the median's 95% interval (n/2 -/+ 9.8)
    assert median_se(np.arange(100.0)) == pytest.approx((60 - 39) / (2 * 1.959963984540054))
    assert share_se(0.8, 100) == pytest.approx(0.04)
    model = ModelSource(0.7, (0.5, 0.5), ("yes", "no"), "nominal")
    cell = simulate_cell(model, 3, 30, simulations=200, n_boot=100, seed=4, edge=0.3)
    assert 0 < cell["width_se"] < cell["width_q90"] - cell["width_q10"]
    assert cell["p_lower_se"] == pytest.approx(share_se(cell["p_lower"], 200))


def test_a_design_within_simulation_error_of_the_target_is_not_called_better():
    """A target less than 2 SEs from a design's width: the design is marked within
    simulation error, and the note says the simulation does not settle it; a cheaper
    design that misses by less than 2 SEs is not shown to be worse."""
    from sheetflow.plan.sim_error import simulation_error_notes

    model = ModelSource(0.7, (0.5, 0.5), ("yes", "no"), "nominal")
    kwargs = dict(raters=[3], items=[30, 31], simulations=200, n_boot=100, seed=4)
    probe = plan_alpha(model, target=Target(width=1.5), **kwargs).table.iloc[0]
    assert probe["items"] == 30
    near = Target(width=float(probe["expected_width"] + 0.5 * probe["width_se"]))
    result = plan_alpha(model, target=near, **kwargs)
    first = result.table.iloc[0]
    assert first["meets"] and first["cheapest"] and first["within_error"]
    notes = simulation_error_notes(result)
    assert notes[0].startswith("The cheapest design meeting the target, 3 raters x 30 "
                               f"items, expected width {first['expected_width']:.3f} "
                               f"(simulation SE {first['width_se']:.2g}), is within "
                               "simulation error of the target")
    # the target just below the width: the 30-item design misses within error, and the
    # recommended design is not called better for it
    below = Target(width=float(probe["expected_width"] - 0.5 * probe["width_se"]))
    missed = plan_alpha(model, target=below, **kwargs)
    assert missed.chosen()["items"] == 31 and missed.table.iloc[0]["within_error"]
    assert simulation_error_notes(missed) == [
        "1 design misses the target by less than 2 simulation SEs, within simulation "
        "error, so the simulation does not show it worse than the cheapest design meeting "
        f"it: 3 raters x 30 items, expected width {first['expected_width']:.3f} "
        f"(simulation SE {first['width_se']:.2g})."]
    far = plan_alpha(model, target=Target(width=1.5), **kwargs)
    assert not far.table["within_error"].any() and simulation_error_notes(far) == []
