"""``check`` refuses what would otherwise reach the analysis broken or disguised."""

from __future__ import annotations

import csv

import pandas as pd
import pytest
from spec_helpers import check_gives_one_line

from sheetflow.errors import SpecError
from sheetflow.spec import init_study, load_study


def _rewrite(path, rows) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def _rows(path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


@pytest.fixture
def paired(tmp_path):
    return init_study(tmp_path / "s", "paired-rubric")


@pytest.mark.parametrize("hidden", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00a0"])
def test_an_item_id_with_an_invisible_character_is_refused(paired, hidden):
    rows = _rows(paired / "items.csv")
    first = rows[1][0]
    rows.append([first[:2] + hidden + first[2:], *rows[1][1:]])  # looks like the first item
    _rewrite(paired / "items.csv", rows)
    check_gives_one_line(paired, ["items.csv", f"row {len(rows)}", "invisible character",
                                  f"U+{ord(hidden):04X}"])


def test_ids_equal_after_normalisation_are_duplicates(paired):
    rows = _rows(paired / "items.csv")
    rows.append([rows[1][0].replace("T", "\uff34"), *rows[1][1:]])  # a fullwidth T
    _rewrite(paired / "items.csv", rows)
    check_gives_one_line(paired, ["items.csv", f"row {len(rows)}", "duplicate id",
                                  "first at row 2", "the same id in other characters"])


@pytest.mark.parametrize(("edit", "words"), [
    (lambda rows: [["case", "arm", "score"], *rows[1:]],
     ["internal_scores.csv", "header", "case_id", "total", "missing"]),
    (lambda rows: [rows[0], ["TC-999", rows[1][1], "5"], *rows[2:]],
     ["internal_scores.csv", "row 2", "case_id 'TC-999' is not an item id of the study"]),
    (lambda rows: [rows[0], [rows[1][0], "iter3_typo", "5"], *rows[2:]],
     ["internal_scores.csv", "row 2", "arm 'iter3_typo' is not an arm of the design"]),
    (lambda rows: [rows[0], [rows[1][0], rows[1][1], "ten"], *rows[2:]],
     ["internal_scores.csv", "row 2", "total 'ten' is not a number"]),
    (lambda rows: [rows[0], rows[1], rows[1], *rows[3:]],
     ["internal_scores.csv", "row 3", "scored twice"]),
    # the template's rubric total runs 0-20 points: 85 is a percentage, -1 no total
    (lambda rows: [rows[0], [rows[1][0], rows[1][1], "85"], *rows[2:]],
     ["internal_scores.csv", "row 2", "total '85' is outside 0-20", "rubric"]),
    (lambda rows: [rows[0], rows[1], [rows[2][0], rows[2][1], "-1"], *rows[3:]],
     ["internal_scores.csv", "row 3", "total '-1' is outside 0-20"]),
])
def test_internal_scores_are_checked(paired, edit, words):
    path = paired / "internal_scores.csv"
    _rewrite(path, edit(_rows(path)))
    check_gives_one_line(paired, words)


def test_sound_internal_scores_load(paired):
    assert load_study(paired).plan.params["internal_scores_file"] == "internal_scores.csv"


def test_wrong_internal_columns_never_reach_analyze(paired):
    path = paired / "internal_scores.csv"
    _rewrite(path, [["case", "arm", "score"], *_rows(path)[1:]])
    with pytest.raises(SpecError, match="case_id"):
        load_study(paired)


def test_every_csv_sheetflow_writes_neutralises_formulas(tmp_path):
    """protocol 001's results/T3.csv names each band as items.csv spells it."""
    from sheetflow.report.outputs import _csv_writer

    table = pd.DataFrame({"band": ["=HYPERLINK(\"http://x\",\"y\")", "near", "+1"],
                          "p": [0.5, 0.25, -0.125]})
    path = _csv_writer(table)(None, tmp_path / "T3.csv")
    rows = _rows(path)
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(\"http://x\",\"y\")", "near", "'+1"]
    assert [r[1] for r in rows[1:]] == ["0.5", "0.25", "-0.125"]  # numbers stay numbers


def _keep_known_ids(root, make_id) -> None:
    """Give every item of a keep-known study the id ``make_id(arm, n)``."""
    rows = _rows(root / "items.csv")
    arm = rows[0].index("arm")
    counts: dict[str, int] = {}
    for row in rows[1:]:
        counts[row[arm]] = counts.get(row[arm], 0) + 1
        row[0] = make_id(row[arm], counts[row[arm]])
    _rewrite(root / "items.csv", rows)


def _check_warnings(root) -> list[str]:
    from click.testing import CliRunner

    from sheetflow.cli import cli

    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 0, result.output
    return [ln for ln in result.output.splitlines() if "warning" in ln]


@pytest.mark.parametrize(("make_id", "words"), [
    (lambda arm, n: f"{arm}-{n:02d}", ["contain their arm's id", "b6_distance_forced_critic"]),
    (lambda arm, n: f"{arm.split('_')[0].upper()}-{n:02d}", ["contain their arm's id"]),
    (lambda arm, n: "WXYZ"[int(arm[1]) % 4] + f"-{n:02d}", ["share a prefix of their own"]),
    (lambda arm, n: f"D{int(arm[1]) * 100 + n:03d}", ["order of the ids follows the arms"]),
])
def test_check_warns_when_item_ids_carry_the_arm(tmp_path, make_id, words):
    root = init_study(tmp_path / "s", "keep-known")
    assert _check_warnings(root) == []
    _keep_known_ids(root, make_id)
    warnings = _check_warnings(root)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"warning: {root}/items.csv: "), warnings[0]
    for word in words:
        assert word in warnings[0], warnings[0]


@pytest.mark.parametrize("template", ["keep-known", "anchored-plan", "answer-review",
                                      "judge-likert"])
def test_no_template_warns(tmp_path, template):
    assert _check_warnings(init_study(tmp_path / "s", template)) == []


def test_the_template_s_example_internal_scores_get_a_warning(paired):
    """The paired-rubric template's internal_scores.csv holds example totals unrelated to
    any ratings: a study that kept them had a low decision alpha (the internal team is
    one more rater in it) and check said nothing. It warns (exit 0) until the file is
    the team's own; the template's only warning."""
    warnings = _check_warnings(paired)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"warning: {paired}/internal_scores.csv: holds the "
                                  "paired-rubric template's example internal scores byte "
                                  "for byte, not your team's"), warnings[0]
    assert "replace them with the internal team's own totals" in warnings[0]
    rows = _rows(paired / "internal_scores.csv")
    rows[1][2] = str(int(rows[1][2]) + 1)  # a team's own totals: one differs
    _rewrite(paired / "internal_scores.csv", rows)
    assert _check_warnings(paired) == []


@pytest.mark.parametrize(("template", "old", "new", "words"), [
    ("paired-rubric", 'improved_arm = "iter2_improved"', 'improved_arm = "iter2_improve"',
     ["improved_arm", "'iter2_improve' is not one of the design's arms"]),
    ("keep-known", 'control = "b1_random_pairing"', 'control = "b1_random_paring"',
     ["control", "'b1_random_paring'"]),
    ("keep-known", 'reference = "b4_single_note"', 'reference = "b4_singlenote"',
     ["reference", "'b4_singlenote'"]),
    ("keep-known", '"b6_distance_forced_critic"]', '"b6_distance_forced_critc"]',
     ["candidates", "'b6_distance_forced_critc'"]),
    # 004: a misspelt cell left its hypothesis undefined in every task (pilot FAIL)
    ("judge-likert", 'better = "cell_b_opus_memory_harness"', 'better = "cell_b_opus"',
     ["hypotheses H2: better = 'cell_b_opus' is not one of the design's arms"]),
    ("judge-likert", 'min_delta = 0.30 },', 'min_delta = "0.30" },',
     ["hypotheses H2: min_delta = '0.30' must be a number"]),
    ("judge-likert", 'relation = ">="', 'relation = "=>"',
     ["hypotheses H4: relation = '=>' must be \">\" (a tie is not in the direction) or "
      "\">=\" (a tie is)"]),
])
def test_a_misspelt_arm_in_the_plan_is_refused(tmp_path, template, old, new, words):
    """A misspelt improved arm made direction agreement 0.000 (FAIL) where the truth
    was 0.833 (PASS); a misspelt keep-known arm made the decision inconclusive or
    dropped a candidate. ``check`` now refuses each."""
    from spec_helpers import replace_once

    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    check_gives_one_line(root, ["study.toml", "[analysis.params]", *words])


def test_internal_scores_must_cover_every_case_and_arm(paired):
    path = paired / "internal_scores.csv"
    rows = _rows(path)
    _rewrite(path, [rows[0], *rows[1:5], *rows[9:]])  # cases 3 and 4 lost
    check_gives_one_line(paired, ["internal_scores.csv", "no total for 4 of the 36",
                                  "'TC-003' x"])


def test_a_second_rater_without_a_planned_subset_is_refused_at_generate(paired):
    """Role 'second' with no second-rater subset gave the rater a full pack and counted
    them as a primary rater, in silence. ``check`` and ``generate`` refuse it; a study
    already generated so still loads for collect and analyze (its packs went out)."""
    rows = _rows(paired / "raters.csv")
    rows[2][rows[0].index("role")] = "second"
    _rewrite(paired / "raters.csv", rows)
    check_gives_one_line(paired, ["raters.csv", "column role", f"'{rows[2][0]}'",
                                  "role 'second'", "plans no second-rater subset",
                                  "set the role to primary"])
    study = load_study(paired)
    assert [str(p) for p in study.generate_problems] == [
        str(p) for p in study.generate_problems if "role 'second'" in str(p)] != []


def test_a_second_rater_with_a_planned_subset_is_no_problem(tmp_path):
    study = load_study(init_study(tmp_path / "s", "anchored-plan"))
    assert any(r.role == "second" for r in study.raters)
    assert study.generate_problems == ()
