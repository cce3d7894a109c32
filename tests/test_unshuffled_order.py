"""With ``shuffle = false`` the cards sit in the items file's order: that order must not
follow the arms.

``check`` said "ok" for an answer-review study whose items.csv listed one system's
answers first (neutral ids, ``shuffle = false``), and ``generate`` wrote packs whose
cards 1-9 were all one arm and 10-18 the other, the same for every rater. The test
item ids got (blocks or alternation among neighbours) now reads the card order too, and
``check`` and ``generate`` refuse in one line naming study.toml, items.csv and what to
do. A paired design's order tells nothing (each card holds both arms, on sides drawn per
card) and passes.

``scatter_column`` (protocol 003's "deliberately scattered" answers) reorders a shuffled
pack only, and was ignored without a word under ``shuffle = false``: that is refused
too, naming 003's promise to its raters where the study follows it.
"""

from __future__ import annotations

import contextlib
import csv
import random
from pathlib import Path

from click.testing import CliRunner
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.packs.assign import assign
from sheetflow.spec import init_study
from sheetflow.spec.study import check_study, load_study

ORDER_WORDS = ["s/study.toml: [design] shuffle: shuffle = false shows every rater the "
               "cards in the order of s/items.csv", "follow a pattern in that order",
               "set shuffle = true, or put the rows of items.csv in a random order that "
               "interleaves the arms"]


def _unshuffled(tmp: Path, template: str, arm: str, order) -> Path:
    """A ``template`` study with neutral random ids, rows put in ``order`` (a function of
    the rows, keyed by ``arm``) and ``shuffle = false``."""
    root = init_study(tmp / "s", template)
    path = root / "items.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        id_column, rows = reader.fieldnames[0], list(reader)
    ids = random.Random(7).sample(range(1000, 10000), len(rows))
    for row, number in zip(rows, ids, strict=True):
        row[id_column] = f"X{number}"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(order(rows, arm))
    replace_once(root / "study.toml", "shuffle = true", "shuffle = false")
    with contextlib.suppress(AssertionError):  # scattering unshuffled: a rule of its own
        replace_once(root / "study.toml", 'scatter_column = "question_id"', "")
    return root


def _by_arm(rows: list[dict], arm: str) -> list[dict]:
    return sorted(rows, key=lambda row: row[arm])


def _alternating(rows: list[dict], arm: str) -> list[dict]:
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row[arm], []).append(row)
    return [row for turn in zip(*groups.values(), strict=True) for row in turn]


def _random(rows: list[dict], arm: str) -> list[dict]:
    random.Random(3).shuffle(rows)
    return rows


def test_rows_sorted_by_arm_without_shuffle_are_refused(tmp_path):
    root = _unshuffled(tmp_path, "answer-review", "system", _by_arm)
    check_gives_one_line(root, ORDER_WORDS)


def test_alternating_arms_without_shuffle_are_refused(tmp_path):
    root = _unshuffled(tmp_path, "keep-known", "arm", _alternating)
    check_gives_one_line(root, ORDER_WORDS)


def test_generate_refuses_an_order_that_follows_the_arms_and_writes_no_pack(tmp_path):
    root = _unshuffled(tmp_path, "answer-review", "system", _by_arm)
    with contextlib.chdir(root.parent):
        result = CliRunner().invoke(cli, ["generate", "s"])
    assert result.exit_code == 1, result.output
    assert all(word in result.output for word in ORDER_WORDS), result.output
    assert not (root / "packs").exists()


def test_a_random_order_without_shuffle_passes(tmp_path):
    root = _unshuffled(tmp_path, "answer-review", "system", _random)
    assert check_study(root) == []


def test_a_paired_order_without_shuffle_passes_and_its_sides_are_drawn(tmp_path):
    """Each card holds both arms; which side holds which is drawn per rater and card
    whatever the order, so the order gives nothing away."""
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", "shuffle = true", "shuffle = false")
    assert check_study(root) == []
    study = load_study(root)
    rater = study.raters[0]
    sides = [s.sides[0][1] for s in assign(study, rater, secret=bytes(32)).slots]
    other = [s.sides[0][1] for s in assign(study, rater, secret=bytes(range(32))).slots]
    assert [s.item.id for s in assign(study, rater, secret=bytes(32)).slots] == \
        [it.id for it in study.items]
    assert sides != other and len(set(sides)) == 2


SCATTER_WORDS = ["s/study.toml: [design] scatter_column: scatter_column 'question_id' "
                 "reorders only a shuffled pack, and shuffle = false keeps the items "
                 "file's order, so nothing would be scattered"]


def test_scattering_without_shuffle_in_protocol_003_is_refused(tmp_path):
    root = init_study(tmp_path / "s", "answer-review")
    replace_once(root / "study.toml", "shuffle = true", "shuffle = false")
    check_gives_one_line(root, [*SCATTER_WORDS, "but protocol 003 tells raters that the "
                                "two assistants' answers to a question \"are deliberately "
                                "scattered\"; set shuffle = true"])


def test_scattering_without_shuffle_in_another_study_is_refused(tmp_path):
    root = init_study(tmp_path / "s", "answer-review")
    replace_once(root / "study.toml", "shuffle = true", "shuffle = false")
    replace_once(root / "study.toml", 'protocol = "003 ', 'protocol = "')
    line = check_gives_one_line(root, [*SCATTER_WORDS, "; set shuffle = true, or remove "
                                       "scatter_column"])
    assert "protocol 003" not in line
