"""An ICC plan for a study reporting an absolute-agreement ICC says its counts are floors.

Bonett's (2002) width, and Zou's and Walter, Eliasziw & Donner's counts, are derived
for the single-rater ICC of the one-way and consistency models; for an absolute-
agreement ICC with rater effects they understate the width (docs/plan.md, "ICC:
Bonett (2002), Zou (2012)"). Protocol 002 freezes ICC(A,1) and protocol 004's trio
reports it too, yet the plan gave its count ("N items ... would make the interval no
wider than 0.2") with no word of it. The plan now says the counts are lower bounds there.
"""

from __future__ import annotations

import shutil

import pytest

from sheetflow.plan import plan_study
from sheetflow.spec.templates import data_dir


@pytest.mark.parametrize("template", ["anchored-plan", "judge-likert"])
def test_an_absolute_agreement_icc_plan_calls_its_counts_lower_bounds(template, tmp_path):
    folder = tmp_path / template
    shutil.copytree(data_dir("templates") / template, folder)
    notes = plan_study(folder).notes
    assert any("the absolute-agreement ICC this study reports, ICC(A,1), is wider" in n
               and "lower bounds" in n for n in notes)
    needed = next(n for n in notes if "needed to make the interval" in n)
    assert needed.startswith("At least ") and "a lower bound for this ICC" in needed
    assert not any("would make the interval" in n for n in notes)


def test_a_consistency_icc_plan_keeps_its_plain_count(tmp_path):
    folder = tmp_path / "judge-likert"
    shutil.copytree(data_dir("templates") / "judge-likert", folder)
    toml = folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'icc_form = "ICC2"', 'icc_form = "ICC3"'), encoding="utf-8")
    notes = plan_study(folder).notes
    assert not any("lower bound" in n for n in notes)
    assert any("items with 3 raters would make the interval no wider than 0.2" in n
               for n in notes)
