"""The Methods sheet names the level each column's alpha is taken at, as the spec sets
it: protocol 000's template takes its total at the ordinal level, so "totals are
interval" would say of the decision's figure what it is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from sheetflow.analysis.summary import methods
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study


def _alpha_method(template: str, root: Path) -> str:
    study = load_study(init_study(root, template))
    return dict(methods(study))["Krippendorff's alpha"]


def test_the_paired_rubric_total_is_named_ordinal(tmp_path):
    said = _alpha_method("paired-rubric", tmp_path / "p0")
    assert "interval on their observed values" not in said
    assert ("Level per column, as the spec sets it: Depth of Analysis (depth) ordinal; "
            "Evidence Integration (evidence) ordinal;") in said
    assert "; Total (total) ordinal; Improvement direction (direction) nominal." in said


@pytest.mark.parametrize(("template", "named"), [
    ("anchored-plan", " interval"), ("answer-review", "(faithfulness) ordinal"),
])
def test_each_template_names_the_levels_its_spec_sets(tmp_path, template, named):
    study_text = (Path(__file__).parents[1] / "templates" / template / "study.toml")
    assert study_text.exists()
    said = _alpha_method(template, tmp_path / template)
    assert "Level per column, as the spec sets it: " in said and named in said
