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
