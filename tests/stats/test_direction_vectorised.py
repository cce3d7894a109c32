"""direction_agreement against the majority, vectorised, equals the per-unit definition.

The reference is the earlier row-by-row implementation (a Counter of the other
raters' judgements per unit; a tie for the top count leaves the unit out).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st


def _majority(values):
    top = Counter(values).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def _reference(wide: pd.DataFrame, r, others, label):
    mine, theirs, ties = [], [], 0
    for _, row in wide.iterrows():
        if pd.isna(row[r]):
            continue
        votes = [v for v in row[others].tolist() if not pd.isna(v)]
        if not votes:
            continue
        major = _majority(votes)
        if major is None:
            ties += 1
            continue
        mine.append(row[r])
        theirs.append(major)
    agree = sum(a == b for a, b in zip(mine, theirs, strict=True))
    return {"rater": r, "other": label, "n_units": len(mine), "n_agree": agree, "n_ties": ties}


def _random_tidy(rng: np.random.Generator) -> pd.DataFrame:
    units, raters = rng.integers(1, 30), rng.integers(2, 7)
    labels = np.array(["A>B", "B>A", "Tied", "skip"][: rng.integers(2, 5)], dtype=object)
    rows = [(u, f"r{j}", labels[rng.integers(len(labels))])
            for u in range(units) for j in range(raters) if rng.random() > 0.25]
    return pd.DataFrame(rows, columns=["unit", "rater", "value"])


def test_majority_matches_row_by_row_reference() -> None:
    rng = np.random.default_rng(31)
    for _ in range(120):
        data = _random_tidy(rng)
        if data.empty:
            continue
        ours = st.direction_agreement(data, against="majority")
        wide = data.pivot(index="unit", columns="rater", values="value")
        wide = wide.reindex(columns=sorted(wide.columns))
        ref = pd.DataFrame([_reference(wide, r, [o for o in wide.columns if o != r],
                                       "majority of others") for r in wide.columns])
        cols = ["rater", "other", "n_units", "n_agree", "n_ties"]
        pd.testing.assert_frame_equal(ours[cols].reset_index(drop=True), ref[cols],
                                      check_dtype=False)  # fmt: skip
        defined = ours["n_units"] > 0
        assert (ours.loc[defined, "agreement"] == ours.loc[defined, "n_agree"]
                / ours.loc[defined, "n_units"]).all()
        assert ours.loc[~defined, "reason"].astype(bool).all()


@pytest.mark.parametrize("group", [["r0"], ["r0", "r1", "r2"]])
def test_reference_group_matches_row_by_row_reference(group) -> None:
    rng = np.random.default_rng(32)
    for _ in range(60):
        data = _random_tidy(rng)
        wide = data.pivot(index="unit", columns="rater", values="value")
        if not set(group) <= set(wide.columns):
            continue
        wide = wide.reindex(columns=sorted(wide.columns))
        ours = st.direction_agreement(data, against="reference", reference=group)
        label = "reference" if len(group) > 1 else group[0]
        ref = pd.DataFrame([_reference(wide, r, group, label)
                            for r in wide.columns if r not in group],
                           columns=["rater", "other", "n_units", "n_agree", "n_ties"])
        cols = list(ref.columns)
        pd.testing.assert_frame_equal(ours[cols].reset_index(drop=True), ref,
                                      check_dtype=False)  # fmt: skip
