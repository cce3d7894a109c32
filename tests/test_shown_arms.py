"""A shown column that tells raters the arm is refused by ``check`` and ``generate``.

``check`` said "ok" for a judge-likert study showing its arm column ``cell`` on every
card ("Run | cell_a_opus_solo"), and said nothing at all for a column that renames the
arms (``run-17``, ``run-22``, one per arm). Both are refused now in one line naming
study.toml, the ``[items] show`` entry and what to do; so is a column whose shared
values follow the arms. Per-item texts (a prompt, an id), columns shared across arms
(the task) and the templates' own shown columns pass.

A value only counted when every item holding it was in one arm: ``index_version``
reading ``idx-2025-11`` on 40 items of one system and 2 of the other (120 each) passed,
though on those 42 cards it names the system 95% of the time. A value on 5 or more
items, 90% or more of them in one arm, beyond a one-sided binomial test against that
arm's share (p below 0.001 divided by the values tested) is refused now; a balanced
random column does not trip it.
"""

from __future__ import annotations

import csv
import random
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


SYSTEMS = ["assistant_hybrid_rag", "assistant_dense_rag"]


def _answer_review_240(root: Path, version_of) -> None:
    """answer-review's items replaced by 240 (120 questions, each answered by both
    systems, in a random order under neutral ids), with a column ``index_version``
    whose value for the i-th item of a system is ``version_of(system, i)``."""
    rows = []
    for q in range(120):
        rows += [{"item_id": "", "question_id": f"Q{q:03}", "question": f"Question {q}?",
                  "gold_answer": f"Gold {q}", "evidence": f"[1] Document {q}",
                  "answer": f"Answer {q} of {system}", "system": system,
                  "should_refuse": "no"} for system in SYSTEMS]
    for system in SYSTEMS:
        mine = [row for row in rows if row["system"] == system]
        for i, row in enumerate(mine):
            row["index_version"] = version_of(system, i)
    rng = random.Random(1)
    rng.shuffle(rows)
    for row, number in zip(rows, rng.sample(range(10000, 100000), len(rows)), strict=True):
        row["item_id"] = f"X{number}"
    with (root / "items.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_a_value_leaning_to_one_arm_is_refused(tmp_path):
    """idx-2025-11 on 40 items of one system and 2 of the other: not every item holding
    it is in one arm, yet on its 42 cards it names the system 95% of the time."""
    root = init_study(tmp_path / "s", "answer-review")
    _answer_review_240(root, lambda system, i: "idx-2025-11" if i < (
        40 if system == SYSTEMS[0] else 2) else "idx-2025-10")
    _show(root, "answer-review", "index_version", "Index")
    check_gives_one_line(root, [
        "[items] show column='index_version': column 'index_version' of s/items.csv "
        "(shown as 'Index') gives the arm away: 'idx-2025-11' is on 42 items, 40 of them "
        "(95%) in arm 'assistant_hybrid_rag', which holds 50% of all items (one-sided "
        "binomial p = 2.1e-10, below 0.001 divided by the 2 values on 5 or more items); "
        "remove this entry from [items] show"])


def test_a_value_split_across_the_arms_passes(tmp_path):
    """30 and 12 of 42 (71%) is no naming of the arm: below the 90% the rule asks."""
    root = init_study(tmp_path / "s", "answer-review")
    _answer_review_240(root, lambda system, i: "idx-2025-11" if i < (
        30 if system == SYSTEMS[0] else 12) else "idx-2025-10")
    _show(root, "answer-review", "index_version", "Index")
    assert check_study(root) == []


@pytest.mark.parametrize("values", [3, 6, 12, 24, 48])
def test_a_balanced_random_column_of_240_items_passes(values):
    """Values drawn at random (fixed seeds), 120 items an arm: no value leans beyond
    the bound, however many values share the items."""
    arms = [SYSTEMS[i % 2] for i in range(240)]
    for seed in range(20):
        rng = random.Random(seed)
        column = [f"v{rng.randrange(values)}" for _ in arms]
        assert shown_reveals_arm(column, arms, seed=seed) == "", (values, seed)


def test_a_lean_is_weighed_against_the_arms_shares():
    """9 of 10 items in an arm holding 90% of all items is what chance gives; 9 of 10
    in an arm holding 25% is not. Four items, all in one arm, are too few to weigh."""
    many = ["big"] * 90 + ["small"] * 10
    lean = ["x"] * 9 + [f"u{i}" for i in range(81)] + ["x"] + [f"w{i}" for i in range(9)]
    assert shown_reveals_arm(lean, many) == ""
    quarter = ["a"] * 25 + ["b"] * 25 + ["c"] * 25 + ["d"] * 25
    column = ["x"] * 9 + [f"u{i}" for i in range(16)] + ["x"] + [f"w{i}" for i in range(74)]
    assert shown_reveals_arm(column, quarter).startswith(
        "'x' is on 10 items, 9 of them (90%) in arm 'a', which holds 25% of all items")
    few = ["x"] * 4 + [f"u{i}" for i in range(96)]
    assert shown_reveals_arm(few, ["a"] * 50 + ["b"] * 50) == ""
