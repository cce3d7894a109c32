"""A ratings table laid out once (``RatingMatrix``) gives every statistic's same result.

The analyses lay each measure out once and hand the matrix to alpha, the kappas,
AC1/AC2 and percent agreement; each must return exactly what the tidy table gives,
rater labels included (Cohen's pairs are named by them), and must not be able to
change the shared matrix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st
from sheetflow.stats._util import RatingMatrix, rating_matrix, to_matrix


def _tidy(text: bool) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    rows = [{"unit": f"u{u}", "rater": f"R{r}", "value": int(rng.integers(1, 4))}
            for u in range(30) for r in (3, 1, 2, 10) if rng.random() > 0.15]
    frame = pd.DataFrame(rows)
    if text:
        frame["value"] = frame["value"].map({1: "low", 2: "mid", 3: "high"})
    return frame


CALLS = {
    "alpha": lambda d, cats: st.krippendorff_alpha(d, level="nominal", n_boot=50, seed=3,
                                                   value_domain=cats),
    "cohen": lambda d, cats: st.cohen_kappa(d, categories=cats),
    "cohen_weighted": lambda d, cats: st.cohen_kappa(d, weights="quadratic",
                                                     categories=cats, weight_on="ranks"),
    "fleiss": lambda d, cats: st.fleiss_kappa(d, categories=cats),
    "gwet": lambda d, cats: st.gwet_ac(d, weights="quadratic", categories=cats),
    "percent": lambda d, _cats: st.percent_agreement(d),
}


@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_result_from_the_matrix(name: str, text: bool) -> None:
    tidy = _tidy(text)
    cats = ["low", "mid", "high"] if text else [1, 2, 3]
    laid_out = rating_matrix(tidy)
    before = laid_out.matrix.copy()
    pd.testing.assert_frame_equal(CALLS[name](laid_out, cats), CALLS[name](tidy, cats),
                                  check_exact=True)
    pd.testing.assert_frame_equal(pd.DataFrame(laid_out.matrix), pd.DataFrame(before))


def test_to_matrix_gives_a_copy_and_the_labels() -> None:
    laid_out = rating_matrix(_tidy(False))
    assert isinstance(laid_out, RatingMatrix)
    matrix, raters, units = to_matrix(laid_out)
    assert raters == ["R1", "R10", "R2", "R3"] and units[:2] == ["u0", "u1"]
    matrix[0, 0] = 99.0
    assert laid_out.matrix[0, 0] != 99.0
