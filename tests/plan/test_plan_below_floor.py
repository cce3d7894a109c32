"""A study listing fewer raters or items than the plan sizes (it plans at least 2 of
each) is told so: its notes neither call the nearest design "this study as specified"
nor say that more items would depart from a protocol whose count it falls short of."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from sheetflow.plan import plan_study
from sheetflow.spec.templates import data_dir

FAST = dict(simulations=20, n_boot=40, items=[10])


@pytest.fixture
def review(tmp_path) -> Path:
    """The answer-review template (protocol 003: 2 raters, 18 items)."""
    folder = tmp_path / "review"
    shutil.copytree(data_dir("templates") / "answer-review", folder)
    return folder


def test_one_rater_is_not_called_two(review):
    raters = pd.read_csv(review / "raters.csv")
    raters.head(1).to_csv(review / "raters.csv", index=False)
    notes = plan_study(review, expected=0.75, **FAST).notes
    first = notes[0]
    # protocol 003 fixes two raters (tests/plan/test_plan_fixed_raters.py)
    assert "This study with the protocol's 2 raters (2 raters x 18 items)" in first
    assert any("This study lists 1 rater, not the protocol's 2: it departs from the "
               "protocol's design." in n for n in notes)
    toml = review / "study.toml"  # a study naming no protocol is planned at 2 all the same
    toml.write_text(toml.read_text("utf-8").replace('protocol = "003 ', 'protocol = "'),
                    encoding="utf-8")
    first = plan_study(review, expected=0.75, **FAST).notes[0]
    assert "This study as specified" not in first
    assert "This study lists only 1 rater; the plan sizes 2 or more" in first


def test_one_item_is_not_called_two_nor_told_more_would_depart(review):
    items = pd.read_csv(review / "items.csv", dtype=str, keep_default_na=False)
    items.head(1).to_csv(review / "items.csv", index=False)
    notes = plan_study(review, expected=0.75, **FAST).notes
    assert "This study lists only 1 item; the plan sizes 2 or more" in notes[0]
    fixed = next(n for n in notes if n.startswith("The protocol fixes"))
    assert "This study has 1 (its items file), fewer than the protocol's 18" in fixed
    assert "depart" not in fixed


def test_the_protocols_own_count_still_says_more_would_depart(review):
    notes = plan_study(review, expected=0.75, **FAST).notes
    assert notes[0].startswith("Planned: kappa per column. This study as specified (2 raters")
    fixed = next(n for n in notes if n.startswith("The protocol fixes"))
    assert "This study has 18 (its items file); at 18 items" in fixed
    assert fixed.endswith("More items would depart from the protocol.")
