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


def test_the_bootstrap_is_named_with_its_source_and_its_coverage(tmp_path):
    # The Methods text said only "units resampled, percentile 95% interval": not which
    # bootstrap (Krippendorff's own KALPHA resamples pairs of values), from where, nor
    # that the interval is lopsided and covers less than 95% on few units.
    root = init_study(tmp_path / "p0", "paired-rubric")
    entries = methods(load_study(root))
    said = dict(entries)["Krippendorff's alpha"]
    assert "each drawn unit bringing all its values" in said
    assert "(the unit bootstrap of Zapf et al. 2016, not the KALPHA macro's" in said
    assert "its lower arm usually the longer" in said
    assert "less often than 95% (Hughes 2022)" in said
    references = dict(entries)["References"]
    assert "Zapf, A., Castell, S., Morawietz, L., & Karch, A. (2016). Measuring" in references
    assert "Hayes, A. F., & Krippendorff, K. (2007). Answering" in references
    assert "Hughes, J. (2022). Toward improved inference" in references
