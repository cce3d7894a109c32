"""A shown column that tells raters the arm is refused by ``check`` and ``generate``.

``check`` said "ok" for a judge-likert study showing its arm column ``cell`` on every
card ("Run | cell_a_opus_solo"), and said nothing at all for a column that renames the
arms (``run-17``, ``run-22``, one per arm). Both are refused now in one line naming
study.toml, the ``[items] show`` entry and what to do; so is a column whose shared
values follow the arms. Per-item texts (a prompt, an id), columns shared across arms
(the task) and the templates' own shown columns pass.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.spec import init_study
from sheetflow.spec.blinding import shown_reveals_arm
from sheetflow.spec.study import check_study

TEMPLATES = ["paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert"]
SHOW = {"judge-likert": '  { column = "materials", label = "Materials" },\n',
        "keep-known": "show = []\n", "answer-review": '  { column = "question", label = '
                                                      '"Question" },\n'}


def _show(root: Path, template: str, column: str, label: str = "Run") -> None:
    """Add ``column`` to the study's ``[items] show`` list."""
    old = SHOW[template]
    entry = f'{{ column = "{column}", label = "{label}" }}'
    new = f"show = [{entry}]\n" if old.startswith("show") else f"{old}  {entry},\n"
    replace_once(root / "study.toml", old, new)


def _add_column(root: Path, name: str, value_of) -> None:
    """A column ``name`` in items.csv, each row's value ``value_of(row, index)``."""
    path = root / "items.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for i, row in enumerate(rows):
        row[name] = value_of(row, i)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_showing_the_arm_column_is_refused(tmp_path):
    root = init_study(tmp_path / "s", "judge-likert")
    _show(root, "judge-likert", "cell")
    check_gives_one_line(root, ["study.toml: [items] show column='cell': 'cell' is the "
                                "design's arm_column: every card would show its arm as "
                                "'Run'; remove this entry from [items] show"])


def test_a_column_with_one_value_per_arm_is_refused(tmp_path):
    root = init_study(tmp_path / "s", "judge-likert")
    runs: dict[str, str] = {}
    _add_column(root, "run", lambda row, i: runs.setdefault(row["cell"],
                                                             f"run-{17 + 5 * len(runs)}"))
    _show(root, "judge-likert", "run")
    check_gives_one_line(root, [
        "study.toml: [items] show column='run': column 'run' of s/items.csv (shown as 'Run') "
        "gives the arm away: each arm's items all show one value of their own (",
        "on every item of arm", "remove this entry from [items] show, or show a column "
        "whose values do not follow the arms"])


def test_a_value_on_every_item_of_one_arm_is_refused(tmp_path):
    """keep-known's distance_band reads 'single' on exactly the 15 items of b4."""
    root = init_study(tmp_path / "s", "keep-known")
    _show(root, "keep-known", "distance_band", "Distance")
    check_gives_one_line(root, ["[items] show column='distance_band'", "'single' is on 15 "
                                "items, all of arm 'b4_single_note'"])


def test_a_grouping_aligned_with_the_arms_is_refused(tmp_path):
    """Batches of two items, always of one arm (15 an arm: one item is left alone): no value is
    rare, and every shared one tells the arm."""
    root = init_study(tmp_path / "s", "keep-known")
    seen: dict[str, int] = {}

    def batch(row: dict, i: int) -> str:
        n = seen[row["arm"]] = seen.get(row["arm"], -1) + 1
        return f"{row['arm'][:2]}{n // 2}x"
    _add_column(root, "batch", batch)
    _show(root, "keep-known", "batch", "Batch")
    check_gives_one_line(root, ["[items] show column='batch'", "56 of the 56 items that "
                                "share a value with another item share it only with items "
                                "of the same arm"])


@pytest.mark.parametrize("template,column", [
    ("judge-likert", "task_id"),          # every task answered by every arm
    ("keep-known", "in_corpus"),          # a flag found in every arm
    ("keep-known", "item_id"),            # one value per item says nothing more
    ("answer-review", "question_id"),     # both systems answer each question
])
def test_columns_that_do_not_follow_the_arms_pass(tmp_path, template, column):
    root = init_study(tmp_path / "s", template)
    _show(root, template, column, column.title())
    assert check_study(root) == []


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_template_shows_a_column_that_gives_the_arm_away(tmp_path, template):
    assert check_study(init_study(tmp_path / template, template)) == []


def test_a_few_aligned_pairs_are_within_chance_and_many_are_not():
    """Six pairs of two all in one arm happen by chance in about 2% of random arms;
    ten such pairs in well under 1%."""
    six = [f"p{i // 2}" for i in range(12)]
    assert shown_reveals_arm(six, ["a"] * 6 + ["b"] * 6) == ""
    ten = [f"p{i // 2}" for i in range(20)]
    assert shown_reveals_arm(ten, ["a"] * 10 + ["b"] * 10).startswith("20 of the 20 items")
    assert shown_reveals_arm(ten, ["a", "b"] * 10) == ""  # each pair spans both arms
