"""Agreement on every unit gives alpha, Fleiss' kappa and Gwet's AC1/AC2 a value of 1
with an interval [1, 1]; the Cohen's kappa sheet says why such an interval is no
certainty, the other three said nothing. Each now notes it, with its own cause: the
variance formulas (Fleiss' kappa, Gwet 2008/2014) give a standard error of 0, and the
unit bootstrap of alpha (Hayes & Krippendorff 2007) draws only agreeing units. The
values are kept."""

from __future__ import annotations

import pandas as pd
import pytest

from sheetflow.analysis.agreement import _alpha, _fleiss, _gwet
from sheetflow.analysis.context import Context
from sheetflow.analysis.readings import ZERO_WIDTH_BOOTSTRAP, ZERO_WIDTH_VARIANCE
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study


def _context(tmp_path, agree: bool) -> Context:
    """Two raters' citation_quality on four items: the same answers, or one apart."""
    root = tmp_path / "review"
    init_study(root, "answer-review")
    study = load_study(root)
    choices = study.rubric.dimension("citation_quality").choices
    items = [it.id for it in study.items[:4]]
    first = [choices[i % len(choices)] for i in range(4)]
    second = first if agree else [first[1], *first[1:]]
    rows = [{"case": item, "arm": "", "rater": rater, "role": "primary", "sitting": 1,
             "label": "", "dimension": "citation_quality", "value": value,
             "confidence": ""}
            for rater, values in (("rater1", first), ("rater2", second))
            for item, value in zip(items, values, strict=True)]
    return Context(study, pd.DataFrame(rows), None)


def _row(table: pd.DataFrame) -> dict:
    return table[table["measure"] == "citation_quality"].iloc[0].to_dict()


@pytest.mark.parametrize("analysis,figure,note", [
    (_alpha, "alpha", ZERO_WIDTH_BOOTSTRAP), (_fleiss, "kappa", ZERO_WIDTH_VARIANCE),
    (_gwet, "ac", ZERO_WIDTH_VARIANCE)])
def test_agreement_on_every_unit_notes_why_the_interval_has_no_width(
        tmp_path, analysis, figure, note):
    row = _row(analysis(_context(tmp_path, agree=True)))
    assert (row[figure], row["ci_low"], row["ci_high"]) == pytest.approx((1.0, 1.0, 1.0))
    assert str(row["note"]).startswith(note)  # first, then too few units
    assert "a zero-width interval" in note and "is no certainty" in note


@pytest.mark.parametrize("analysis", [_alpha, _fleiss, _gwet])
def test_an_interval_with_width_gets_no_such_note(tmp_path, analysis):
    row = _row(analysis(_context(tmp_path, agree=False)))
    assert "zero-width" not in str(row["note"])
