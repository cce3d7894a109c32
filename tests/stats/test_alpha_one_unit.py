"""Krippendorff's alpha on a single pairable unit: the point value is Krippendorff's
(2011, "Computing Krippendorff's Alpha-Reliability": units with two or more values are
pairable, and one such unit whose values vary gives a defined alpha), but the unit
bootstrap (Hayes & Krippendorff 2007 resample the data to get alpha's distribution)
draws that one unit in every resample, so every replicate is the estimate itself. The
interval was [a, a], a width of 0 that said nothing; it is now NaN with its reason."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sheetflow import stats as st
from sheetflow.analysis.agreement import _alpha
from sheetflow.analysis.context import Context
from sheetflow.collect.agreement import _agreement
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.stats.alpha import ONE_UNIT

NAN = np.nan


def test_one_pairable_unit_has_alpha_but_no_interval() -> None:
    # the second unit has one value only: not pairable (Krippendorff 2011)
    res = st.krippendorff_alpha([[1, 3], [2, NAN], [1, NAN]], level="nominal",
                                n_boot=200, seed=1).iloc[0]
    assert res["n_units"] == 1
    assert res["alpha"] == 0.0  # within one unit observed and expected disagreement agree
    assert np.isnan(res["ci_low"]) and np.isnan(res["ci_high"])
    assert res["n_boot_used"] == 0
    assert res["reason"] == ONE_UNIT and "resampling cannot vary" in ONE_UNIT


def test_without_resamples_asked_there_is_no_reason_to_give() -> None:
    res = st.krippendorff_alpha([[1], [2]], level="interval", n_boot=0).iloc[0]
    assert res["alpha"] == 0.0 and res["reason"] == ""


def test_two_pairable_units_keep_their_interval() -> None:
    res = st.krippendorff_alpha([[1, 2], [1, 2], [2, 2]], level="nominal",
                                n_boot=200, seed=1).iloc[0]
    assert res["n_units"] == 2 and res["reason"] == ""
    assert np.isfinite(res["ci_low"]) and np.isfinite(res["ci_high"])


def test_the_alpha_table_notes_why_there_is_no_interval(tmp_path) -> None:
    """On the Alpha table the band stays and the note says why the interval is blank,
    never that the resamples had no variation."""
    root = tmp_path / "review"
    init_study(root, "answer-review")
    study = load_study(root)
    dim = study.rubric.dimension("citation_quality")
    item = study.items[0]
    data = pd.DataFrame({"case": [item.id, item.id], "arm": ["", ""],
                         "rater": ["rater1", "rater2"], "role": ["primary"] * 2,
                         "sitting": [1, 1], "label": ["", ""],
                         "dimension": ["citation_quality"] * 2,
                         "value": [dim.choices[0], dim.choices[1]], "confidence": ["", ""]})
    table = _alpha(Context(study, data, None))
    row = table[table["measure"] == "citation_quality"].iloc[0]
    assert row["n_units"] == 1 and row["alpha"] == 0.0
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert row["reason"] == "" and ONE_UNIT in row["note"]
    assert "no variation" not in row["note"]


def test_the_status_preview_gives_the_reason_beside_a_defined_alpha(tmp_path) -> None:
    """``status --agreement`` showed "[95% CI n/a, n/a]" with no word of why."""
    root = tmp_path / "review"
    init_study(root, "answer-review")
    wide = pd.DataFrame({"HV-01": ["Correct", "Incorrect"]}, index=["rater1", "rater2"])
    found = _agreement(load_study(root), "citation_quality", "nominal", wide)
    assert found.alpha == 0.0 and found.ci_low is None and found.reason == ONE_UNIT
