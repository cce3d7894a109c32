"""Rubric and design definitions ``check`` once let through, each refused in one line.

Each was frozen by ``generate`` and then misread: a preference whose choices do not
name the design's labels resolved no judgement to an arm (every direction undefined),
labels holding '>' or differing only in case could not be read back, alpha at the
interval level on categorical labels was "could not be computed" at analyze.
"""

from __future__ import annotations

import pytest
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.spec import init_study

LABELS = 'labels = ["A", "B"]'
DESIGN_CASES = [
    # the cards said X and Y, the dropdown A>B: analyze resolved no direction
    ("paired-rubric", LABELS, 'labels = ["X", "Y"]',
     ["[[dimensions]] id=direction", "choices ['A>B', 'B>A', 'Tied'] do not name the "
      "design's labels ['X', 'Y']", 'give choices = ["X>Y", "Y>X", "Tied"]']),
    ("paired-rubric", LABELS, 'labels = ["A", ""]',
     ["[design]", "label '' is blank"]),
    ("paired-rubric", LABELS, 'labels = ["A>", "B"]',
     ["[design]", "label 'A>' holds '>'"]),
    ("paired-rubric", LABELS, 'labels = ["A,1", "B"]',
     ["[design]", "label 'A,1' holds ','"]),
    ("paired-rubric", LABELS, 'labels = ["A", "a"]',
     ["[design]", "labels ['A', 'a'] differ only in case or spaces"]),
    ("answer-review", 'help = "Rate this last. None present is a legitimate answer, not a '
                      'failure."\nlevel = "nominal"',
     'help = "Rate this last."\nlevel = "interval"',
     ["[[dimensions]] id=citation_quality", "level 'interval' needs numbers, and a "
      "categorical answer is a label"]),
    ("keep-known", 'leave it blank."\nlevel = "nominal"', 'leave it blank."\nlevel = "ratio"',
     ["[[dimensions]] id=keep", "level 'ratio' needs numbers, and a binary answer"]),
]


@pytest.mark.parametrize("template,old,new,words", DESIGN_CASES,
                         ids=[c[2][:40] for c in DESIGN_CASES])
def test_a_design_or_level_analyze_misreads_is_one_line_at_check(
        tmp_path, template, old, new, words):
    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    check_gives_one_line(root, ["study.toml", *words])


def test_labels_of_its_own_with_matching_choices_pass(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", LABELS, 'labels = ["X", "Y"]')
    replace_once(root / "study.toml", 'choices = ["A>B", "B>A", "Tied"]',
                 'choices = ["X>Y", "Y>X", "Same"]')
    from sheetflow.spec import load_study

    assert load_study(root).generate_problems == ()


# Accepted in silence, then misread: two choices collect cannot tell apart took neither
# answer; '=...' reached the return as a formula; a blank label showed no question; na
# = [true] became the label "True"; a question or dimension named twice counted its
# points twice; a second total of one id hid the first; a table as the study date went
# into every pack's name; instructions of the wrong type, or given twice, were dropped.
REFUSED = [
    ("answer-review", '"Partially correct"', '"correct"',
     ["id=overall_rating", "choice labels 'Correct' and 'correct' differ only in case or "
      "spacing"]),
    ("answer-review", '"Partially correct"', '"Correct "',
     ["id=overall_rating", "choice labels 'Correct' and 'Correct ' differ only"]),
    ("answer-review", '"Partially correct"', '"=1+1"',
     ["id=overall_rating", "choice label '=1+1' starts with '='"]),
    ("answer-review", 'label = "Overall rating"', 'label = ""',
     ["id=overall_rating", "'label' is blank, so the card shows no question"]),
    ("judge-likert", "min = 1\nmax = 5\n", "min = 1\nmax = 5\nna = [true]\n",
     ["id=completeness", "'na' holds True; give a label or a list of labels"]),
    ("judge-likert", "min = 1\nmax = 5\n", "min = 1\nmax = 5\nna = { x = 1 }\n",
     ["id=completeness", "'na' holds {'x': 1}"]),
    ("paired-rubric", '"Source credibility assessed?"', '"evidence cited?"',
     ["id=evidence", "questions 'Evidence cited?' and 'evidence cited?' differ only"]),
    ("paired-rubric", '"Source credibility assessed?"', '"Evidence cited?"',
     ["id=evidence", "questions repeat 'Evidence cited?'; give each once"]),
    ("paired-rubric", 'of = ["depth", "evidence"', 'of = ["depth", "depth", "evidence"',
     ["[[totals]] id=total", "total 'total' names 'depth' twice in 'of'"]),
    ("judge-likert", '[analysis]\n', '[[totals]]\nid = "overall"\nof = ["accuracy"]\n'
     'method = "sum"\n\n[analysis]\n',
     ["[[totals]] id=overall", "duplicate total id 'overall'"]),
    ("paired-rubric", 'date = "2026-09-15"', "date = { y = 2026 }",
     ["[study]", "'date' must be text, not {'y': 2026}"]),
    ("paired-rubric", 'protocol = "000 External Validation Package: Evaluation '
                      'Instructions, version 1.0"', 'protocol = ["000"]',
     ["[study]", "'protocol' must be text, not ['000']"]),
    # a control character in a text raters see reached the packs, as one in the title
    # would not: named with its dimension and field
    ("answer-review", 'label = "Overall rating"', 'label = "Overall\\u0007 rating"',
     ["id=overall_rating", "'label' holds U+0007, a control character"]),
    ("answer-review", 'help = "Substance only', 'help = "Substance\\u0007 only',
     ["id=factual_correctness", "'help' holds U+0007, a control character"]),
    ("answer-review", '"Partially correct"', '"Partially\\u0007 correct"',
     ["id=overall_rating", "'choices' holds U+0007, a control character"]),
    ("judge-likert", '1 = "Inadequate:', '1 = "Inadequate\\u0007:',
     ["id=completeness", "'labels' holds U+0007, a control character"]),
    ("paired-rubric", '"Source credibility assessed?"', '"Source\\u0007 assessed?"',
     ["id=evidence", "'questions' holds U+0007, a control character"]),
    ("paired-rubric", 'instructions_file = "instructions.md"',
     'instructions = "Read\\nthe\\u0007 items"',
     ["[study]", "'instructions' holds U+0007 on its line 2, a control character"]),
    ("paired-rubric", 'instructions_file = "instructions.md"', "instructions = 5",
     ["[study]", "'instructions' must be text, not 5"]),
    ("paired-rubric", 'instructions_file = "instructions.md"',
     'instructions_file = "instructions.md"\ninstructions = "also"',
     ["[study]", "give either 'instructions' or 'instructions_file', not both"]),
]


@pytest.mark.parametrize("template,old,new,words", REFUSED, ids=[c[2][:40] for c in REFUSED])
def test_a_definition_accepted_in_silence_is_one_line_at_check(
        tmp_path, template, old, new, words):
    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    if "depth\", \"depth" in new:  # the declared range follows the doubled dimension
        replace_once(root / "study.toml", "min = 0\nmax = 20", "min = 0\nmax = 25")
    check_gives_one_line(root, ["study.toml", *words])


def test_a_control_character_in_the_instructions_file_is_one_line_naming_the_line(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    with (root / "instructions.md").open("a", encoding="utf-8") as f:
        f.write("Read\x07 carefully.\n")
    lines = (root / "instructions.md").read_text(encoding="utf-8").count("\n")
    check_gives_one_line(root, [f"s/instructions.md: line {lines} holds U+0007, a control "
                                "character: take it out"])


@pytest.mark.parametrize("date", ['"2026-09-15"', "2026-09-15"])
def test_a_date_as_text_or_as_a_toml_date_passes(tmp_path, date):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", 'date = "2026-09-15"', f"date = {date}")
    from sheetflow.spec import load_study

    assert load_study(root).generate_problems == ()


# alpha's ratio metric on values of both signs called -3 and 3 agreeing (alpha 1 on
# opposite-sign ratings): a number that may be negative is analysed at interval
NUMBER = 'min = 0\nhelp = "Count each material error'


def test_a_number_that_may_be_negative_is_analysed_at_interval(tmp_path):
    from sheetflow.spec import load_study

    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "study.toml", NUMBER, NUMBER.replace("min = 0", "min = -5"))
    toml = (root / "study.toml").read_text(encoding="utf-8")
    start = toml.index('id = "material_errors"')
    end = toml.index('level = "ratio"', start)
    (root / "study.toml").write_text(toml[:end] + toml[end + len('level = "ratio"'):],
                                     encoding="utf-8")
    study = load_study(root)
    assert study.rubric.dimension("material_errors").level == "interval"
    assert study.generate_problems == ()


def test_ratio_on_a_number_that_may_be_negative_is_one_line_at_check(tmp_path):
    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "study.toml", NUMBER, NUMBER.replace("min = 0", "min = -5"))
    check_gives_one_line(root, ["study.toml", "[[dimensions]] id=material_errors",
                                "level 'ratio' needs values of 0 or more", "'min' is -5",
                                'use level = "interval"'])


def test_ratio_on_a_total_that_may_be_negative_is_one_line_at_check(tmp_path):
    root = init_study(tmp_path / "s", "judge-likert")
    replace_once(root / "study.toml", 'kind = "scale"\nmin = 1\nmax = 5\nhelp = "Did the',
                 'kind = "scale"\nmin = -10\nmax = 5\nhelp = "Did the')
    replace_once(root / "study.toml", 'min = 1\nmax = 5\nlevel = "interval"',
                 'level = "ratio"')
    check_gives_one_line(root, ["study.toml", "[[totals]] id=overall",
                                "level 'ratio' needs values of 0 or more",
                                "the total can be as low as -0.833333",
                                'use level = "interval"'])


def test_a_number_without_a_cap_in_a_total_is_named_as_such(tmp_path):
    """A number scores its value (002's material-error count did, capped at 50); with
    its cap gone a total of it was refused as one that 'gives no points'. The line says
    what is missing: a total is read against the range of its parts."""
    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "study.toml", '"owners_deadlines", "limitations"]',
                 '"owners_deadlines", "limitations", "material_errors"]')
    line = check_gives_one_line(root, ["study.toml", "[[totals]] id=total",
                                       "'material_errors', a number without a 'max'",
                                       "give it a 'max'"])
    assert "gives no points" not in line
