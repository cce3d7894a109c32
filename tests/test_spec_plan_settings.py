"""``[analysis.params]``, ``[analysis.targets]``, bands and ``n_boot`` are checked at
``check``, each problem one line naming the file and the setting.

Each case was accepted by ``check`` and ``generate`` (so frozen into the seal) and then
either stopped ``collect`` or ``analyze`` with a traceback (a text where a number is
computed with), ran out of memory (``n_boot`` or ``permutations`` of 10^12), or
changed the result in silence: ``candidates`` given as one text made 001 compare no
candidate ("INCONCLUSIVE, winner ?"), a column the items file lacks dropped the trend or
counted every item as not in the corpus, a misspelt key was never read, a target of 5
for alpha could never be met.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.spec import init_study, load_study

PARAMS = "[analysis.params]"
# (template, old text of study.toml, new text, words the one line must hold)
SETTINGS = [
    # a traceback at collect (the rater self-checks compare totals with it)
    ("paired-rubric", "extreme_low_max = 5", 'extreme_low_max = "five"',
     [PARAMS, "extreme_low_max = 'five': must be a number"]),
    # tracebacks at analyze
    ("paired-rubric", "[analysis.params]\n", "[analysis.params]\nposition_bias_share = 0.5\n",
     [PARAMS, "position_bias_share = 0.5: must be two numbers [low, high] from 0 to 1"]),
    ("paired-rubric", "[analysis.params]\n", '[analysis.params]\nposition_bias_p = "x"\n',
     [PARAMS, "position_bias_p = 'x': must be a number above 0 and below 1"]),
    ("anchored-plan", 'material_errors_combine = "max"', 'material_errors_combine = "median"',
     [PARAMS, "material_errors_combine = 'median': allowed: max, mean, sum"]),
    ("keep-known", "permutations = 10000", 'permutations = "many"',
     [PARAMS, "permutations = 'many': must be a whole number from 20"]),
    ("judge-likert", "pilot_pass_min_tasks = 2", 'pilot_pass_min_tasks = "two"',
     [PARAMS, "pilot_pass_min_tasks = 'two': must be a whole number of tasks, 1 or more"]),
    ("judge-likert", "direction_tolerance = 1e-9", 'direction_tolerance = "tiny"',
     [PARAMS, "direction_tolerance = 'tiny': must be a number, 0 or more"]),
    # refused only by analyze, after the seal froze it
    ("answer-review", 'na_handling = "missing"', 'na_handling = "drop"',
     [PARAMS, "na_handling = 'drop': allowed: missing, category"]),
    # out of memory at analyze
    ("keep-known", "permutations = 10000", "permutations = 1000000000000",
     [PARAMS, "to 1,000,000"]),
    ("paired-rubric", "n_boot = 1000", "n_boot = 1000000000000",
     ["[analysis]", "'n_boot' = 1,000,000,000,000 is more than the 100,000"]),
    # silently wrong results
    ("keep-known", "permutations = 10000", "permutations = 0",
     [PARAMS, "permutations = 0", "cannot give a p below alpha_test 0.05"]),
    ("keep-known", 'candidates = ["b3_distance_forced", "b6_distance_forced_critic"]',
     'candidates = "b3_distance_forced"',
     [PARAMS, "candidates = 'b3_distance_forced': must be a list of arm ids"]),
    ("keep-known", 'band_order = ["near", "mid", "far"]', 'band_order = "near"',
     [PARAMS, "band_order = 'near': must list the bands in order"]),
    ("keep-known", 'band_order = ["near", "mid", "far"]', 'band_order = ["close", "mid", "far"]',
     [PARAMS, "band_order names 'close', which no item of s/items.csv has in column "
              "'distance_band' (it has: far, mid, near, single)"]),
    ("keep-known", 'band_column = "distance_band"', 'band_column = "band"',
     [PARAMS, "band_column = 'band' is not a column of s/items.csv; it has: item_id"]),
    ("keep-known", 'in_corpus_column = "in_corpus"', 'in_corpus_column = "corpus"',
     [PARAMS, "in_corpus_column = 'corpus' is not a column of s/items.csv"]),
    ("answer-review", 'should_refuse_column = "should_refuse"',
     'should_refuse_column = "must_refuse"',
     [PARAMS, "should_refuse_column = 'must_refuse' is not a column of s/items.csv"]),
    ("judge-likert", 'task_column = "task_id"\nhypotheses', 'task_column = "task"\nhypotheses',
     [PARAMS, "task_column = 'task' is not a column of s/items.csv"]),
    ("judge-likert", "direction_tolerance = 1e-9", "direction_tolerance = -1.0",
     [PARAMS, "direction_tolerance = -1.0: must be a number, 0 or more"]),
    ("judge-likert", '{ id = "H3"', '{ id = "H2"',
     [PARAMS, "hypotheses: ids ['H2'] repeat; each needs its own id"]),
    ("judge-likert", 'judge_opus = "judge-1"', 'judge_opus = "judge-9"',
     [PARAMS, "jsonl judges: judge_opus -> 'judge-9' is not a rater id of the raters file"]),
    ("judge-likert", 'A = "cell_a_opus_solo"', 'A = "cell_a"',
     [PARAMS, "jsonl arms: A -> 'cell_a' is not an arm id of the design"]),
    ("judge-likert", 'pilot_id = "agentic-knowledge-work-pilot-2026-04-26"', "pilot_id = 5",
     [PARAMS, "pilot_id = 5: must be text"]),
    ("paired-rubric", "[analysis.params]\n", '[analysis.params]\nblinding_dimension = "nope"\n',
     [PARAMS, "blinding_dimension = 'nope': must be the id of a dimension"]),
    ("paired-rubric", "typical_total_range = [10, 17]", "typical_total_range = [17, 10]",
     [PARAMS, "typical_total_range = [17, 10]: must be two numbers [low, high], low first"]),
    ("paired-rubric", 'improved_arm = "iter2_improved"', 'improvedarm = "iter2_improved"',
     [PARAMS, "unknown setting 'improvedarm'; did you mean 'improved_arm'? allowed:"]),
    # targets and bands
    ("paired-rubric", "alpha = 0.70\ndirection", "alfa = 0.70\ndirection",
     ["[analysis.targets]", "unknown target 'alfa'; allowed:", "alpha,"]),
    ("paired-rubric", "alpha = 0.70\ndirection", "alpha = 5\ndirection",
     ["[analysis.targets]", "alpha = 5 is outside the range of the coefficient (-1 to 1)"]),
    ("paired-rubric", "direction_agreement = 0.70", "direction_agreement = 70",
     ["[analysis.targets]", "direction_agreement = 70 is outside the range of a share"]),
    ("anchored-plan", "acceptance_threshold = 70", "acceptance_threshold = 170",
     ["[analysis.targets]", "acceptance_threshold = 170 is outside the range of the first "
                            "total (0 to 100)"]),
    ("anchored-plan", "max_material_errors = 1", "max_material_errors = -1",
     ["[analysis.targets]", "max_material_errors = -1 is outside the range of a count "
                            "(0 or more)"]),
    # a count is whole: 1.5 let one error pass and rejected two, as 1 does, in silence
    ("anchored-plan", "max_material_errors = 1", "max_material_errors = 1.5",
     ["[analysis.targets]", "max_material_errors = 1.5 is not a whole number",
      "write max_material_errors = 1 or 2"]),
    ("keep-known", "alpha_test = 0.05", "alpha_test = 5",
     ["[analysis.targets]", "alpha_test = 5 is outside the range of a test level"]),
    # a test level of 1 (or 0) decides nothing: the range says its ends are left out
    ("keep-known", "alpha_test = 0.05", "alpha_test = 1",
     ["[analysis.targets]", "alpha_test = 1 is outside the range of a test level (above 0 "
                            "and below 1)"]),
    ("keep-known", "alpha_test = 0.05", "alpha_test = 0",
     ["[analysis.targets]", "alpha_test = 0 is outside the range of a test level (above 0 "
                            "and below 1)"]),
    ("paired-rubric", "{ min = 0.80, label", "{ min = 1.5, label",
     ["[analysis]", "band 'High reliability (publication-grade)' starts at 1.5, outside "
                    "alpha's range -1 to 1"]),
    ("paired-rubric", "{ min = 0.70, label", "{ min = 0.80, label",
     ["[analysis]", "two bands start at 0.8; each band needs its own 'min'"]),
    ("paired-rubric", '{ min = 0.80, label = "High reliability (publication-grade)" }',
     "{ min = 0.80, label = 5 }", ["[analysis]", "the band from 0.8 needs a label (text)"]),
]


@pytest.mark.parametrize("template,old,new,words", SETTINGS,
                         ids=[f"{s[0]}:{s[2][:40]}" for s in SETTINGS])
def test_a_plan_setting_the_analysis_cannot_use_is_one_line_at_check(
        tmp_path, template, old, new, words):
    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    check_gives_one_line(root, ["study.toml", *words])


def test_a_flag_column_must_say_yes_or_no(tmp_path):
    """'maybe' (or a typo of yes) in should_refuse counted as no in silence: the item
    was not counted among those that should be refused."""
    root = init_study(tmp_path / "s", "answer-review")
    text = (root / "items.csv").read_text(encoding="utf-8")
    lines = text.split("\n")
    lines[1] = lines[1].rsplit(",", 1)[0] + ",maybe"
    (root / "items.csv").write_text("\n".join(lines), encoding="utf-8")
    check_gives_one_line(root, ["items.csv: row 2: column 'should_refuse' "
                                "(should_refuse_column) must say yes or no (blank means no), "
                                "not 'maybe'"])


def test_a_setting_that_only_misled_still_lets_a_generated_study_be_collected(tmp_path):
    """A setting an earlier sheetflow accepted and analysed (a misspelt key) stops check
    and generate, but a study generated with one still loads: its packs are out and its
    spec is frozen. One the analysis could never use stops every command."""
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", "[analysis.params]\n", "[analysis.params]\nnote = 1\n")
    study = load_study(root)
    assert [str(p) for p in study.generate_problems] == [
        f"{root}/study.toml: [analysis.params]: unknown setting 'note'; allowed: {_allowed()}"]
    replace_once(root / "study.toml", "note = 1", 'position_bias_p = "x"')
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"error: {root}/study.toml: [analysis.params]: "
                                    "position_bias_p")


def _allowed() -> str:
    from sheetflow.spec.params import _CHECKS

    return ", ".join(sorted(_CHECKS))


@pytest.mark.parametrize("template", ["paired-rubric", "anchored-plan", "answer-review",
                                      "judge-likert", "keep-known"])
def test_every_template_setting_is_known(tmp_path, template):
    assert load_study(init_study(tmp_path / "s", template)).generate_problems == ()


@pytest.mark.parametrize("value,said", [("0.7", "did you mean 70?"), ("70", None),
                                        ("1", None)])
def test_a_threshold_written_as_a_share_of_the_total_scale_is_a_warning(
        tmp_path, value, said):
    """Protocol 002's totals run 0-100: a threshold of 0.7 (70% meant) was taken in
    silence, and every rated item reached it. Check says so and still passes the spec,
    as a low threshold may be meant."""
    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "study.toml", "acceptance_threshold = 70",
                 f"acceptance_threshold = {value}")
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.output.splitlines() if ln.startswith("warning: ")]
    if said is None:
        assert warnings == []
    else:
        assert warnings == [
            f"warning: {root}/study.toml: [analysis.targets]: acceptance_threshold 0.7 is on "
            f"the 0-100 total scale; {said} If so, write acceptance_threshold = 70"]
