"""The per-rater self-checks, computed for all raters at once, equal the per-rater
definition (protocol 000 section 3.1) rater by rater (the SD within rounding: pandas'
grouped SD sums in another order than a Series' SD), on random panels with the edge
cases planted: a rater with no totals, one whose totals are all missing, one with a
single total, one who gave no confidence, NaN and blank confidences."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sheetflow.analysis.selfchecks import self_checks


def by_rater(first: pd.DataFrame, total_id: str, lo_max: float, hi_min: float,
             target: float) -> pd.DataFrame:
    """The definition, one rater at a time: SD (ddof 1) and variance of the rater's
    totals, share of extreme totals among their total rows, and the share of their
    given confidences that are Medium or High."""
    rows = []
    for rater, grp in first.groupby("rater"):
        row: dict[str, Any] = {"rater": rater}
        t = pd.to_numeric(grp.loc[grp["dimension"] == total_id, "value"], errors="coerce")
        row["total_sd"] = t.std(ddof=1)
        row["has_variance"] = bool(t.nunique() > 1)
        row["extreme_share"] = float(((t <= lo_max) | (t >= hi_min)).mean())
        conf = grp["confidence"][grp["confidence"].astype(str) != ""]
        row["n_confidence"] = len(conf)
        row["medium_high_share"] = float(conf.isin(["Medium", "High"]).mean()) \
            if len(conf) else np.nan
        row["confidence_ok"] = bool(row["medium_high_share"] >= target) if len(conf) else None
        rows.append(row)
    return pd.DataFrame(rows)


def panel(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(int(rng.integers(3, 12))):
        rater = f"R{r:02d}"
        for _case in range(int(rng.integers(1, 9))):
            for dim in ("depth", "total"):
                if rater == "R01" and dim == "total":
                    continue  # no totals at all
                value = np.nan if rater == "R02" and dim == "total" else \
                    float(rng.integers(0, 21))
                confidence = "" if rater == "R00" else \
                    rng.choice(["", "Low", "Medium", "High", np.nan])
                rows.append({"rater": rater, "dimension": dim, "value": value,
                             "confidence": confidence})
    first = pd.DataFrame(rows)
    first["confidence"] = first["confidence"].astype("str")
    return first


def study(extremes: bool) -> SimpleNamespace:
    total = SimpleNamespace(id="total", minimum=0, maximum=20)
    params = {"extreme_low_max": 5, "extreme_high_min": 18} if extremes else {}
    return SimpleNamespace(rubric=SimpleNamespace(totals=[total], dimensions=[]),
                           params=params)


@pytest.mark.parametrize("seed", range(30))
def test_all_raters_at_once_equal_the_definition_rater_by_rater(seed):
    first = panel(seed)
    spec = study(extremes=True)
    ctx = SimpleNamespace(first=first, study=spec, param=spec.params.get,
                          target=lambda name, default=None: default)
    got = self_checks(ctx)
    want = by_rater(first, "total", 5, 18, 0.70)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=0)


def test_without_extreme_bounds_no_extreme_share():
    first = panel(3)
    spec = study(extremes=False)
    ctx = SimpleNamespace(first=first, study=spec, param=spec.params.get,
                          target=lambda name, default=None: default)
    got = self_checks(ctx)
    want = by_rater(first, "total", 5, 18, 0.70).drop(columns="extreme_share")
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, atol=0)


def test_direction_consistency_reads_a_total_without_declared_bounds_on_its_real_range(
        tmp_path):
    """A total that declares no min/max is read on the range its dimensions give (0-20
    for the paired rubric's sum), as collect's self-check reads it: a gap of 2 points is
    under 15% of it and is not checked, a gap of 4 is. (Read as 0-1, every gap counted.)"""
    from sheetflow.spec.study import load_study
    from sheetflow.spec.templates import init_study

    root = init_study(tmp_path / "s", "paired-rubric")
    spec_file = root / "study.toml"
    spec_file.write_text(spec_file.read_text().replace("min = 0\nmax = 20\n", "", 1))
    spec = load_study(root)
    assert spec.rubric.totals[0].minimum is None and spec.rubric.totals[0].maximum is None
    pref = next(d.id for d in spec.rubric.dimensions if d.kind == "preference")
    rows = []
    for case, (a, b, said) in enumerate([(12, 10, "base"), (14, 10, "new"),
                                         (9, 13, "new")]):
        for arm, total in (("new", a), ("base", b)):
            rows.append({"rater": "R1", "case": f"c{case}", "arm": arm, "label": "",
                         "dimension": "total", "value": float(total), "confidence": ""})
        rows.append({"rater": "R1", "case": f"c{case}", "arm": "", "label": "",
                     "dimension": pref, "value": said, "confidence": ""})
    first = pd.DataFrame(rows)
    ctx = SimpleNamespace(first=first, study=spec, param=spec.plan.params.get,
                          target=lambda name, default=None: default)
    got = self_checks(ctx).set_index("rater")
    assert got.loc["R1", "n_direction_checked"] == 2  # c1 (4 points) and c2 (4), not c0
    # c1 names the higher total, c2 does not
    assert got.loc["R1", "direction_consistent_share"] == 0.5


def test_a_gap_and_a_share_at_their_bars_up_to_rounding_are_at_them(tmp_path):
    """Read as the Summary reads a figure (:func:`sheetflow.words.settled`): two mean
    totals 3 apart (16/3 and 7/3) differ by 2.9999999999999996 in floats, which was
    under the 15% of 0-20 (3 points) and left the case unchecked; a share of 2/3 was
    under a target of 0.666666666666667, 4e-16 above it."""
    from sheetflow.spec.study import load_study
    from sheetflow.spec.templates import init_study

    spec = load_study(init_study(tmp_path / "s", "paired-rubric"))
    pref = next(d.id for d in spec.rubric.dimensions if d.kind == "preference")
    rows = []
    for case, (a, b, said) in enumerate([(16 / 3, 7 / 3, "base"), (12.0, 10.0, "new")]):
        for arm, total in (("new", a), ("base", b)):
            rows.append({"rater": "R1", "case": f"c{case}", "arm": arm, "label": "",
                         "dimension": "total", "value": total, "confidence": ""})
        rows.append({"rater": "R1", "case": f"c{case}", "arm": "", "label": "",
                     "dimension": pref, "value": said,
                     "confidence": "Low" if case else "Medium"})
    rows[0]["confidence"] = "High"
    first = pd.DataFrame(rows)
    assert 16 / 3 - 7 / 3 < 3.0  # the noise the check must see through
    ctx = SimpleNamespace(first=first, study=spec, param=spec.plan.params.get,
                          target=lambda name, default=None: 0.666666666666667)
    got = self_checks(ctx).set_index("rater")
    assert got.loc["R1", "n_direction_checked"] == 1  # c0 (3 points), not c1 (2)
    assert got.loc["R1", "direction_consistent_share"] == 0.0  # "base" had the lower
    assert got.loc["R1", "medium_high_share"] == 2 / 3
    assert bool(got.loc["R1", "confidence_ok"])  # at the target up to rounding
