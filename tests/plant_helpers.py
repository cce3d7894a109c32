"""Planted returns for the protocol edge tests: a template study, every pack filled by
the simulated raters, then chosen answers overwritten through the manifest and the
sealed key, so each test knows its answer before the run; or the answer-review study
with every value cell written by the test's own answer function."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
from decision_helpers import fill_returns

from sheetflow.demo.simulate import arms_from_key, fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.model import Study
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

KEEP = object()
"""Returned by an answer function: leave the cell as the simulated rater filled it."""

Answer = Callable[[dict[str, Any]], Any]
"""``answer(cell)`` -> the value to write (None blanks it, :data:`KEEP` leaves it); the
cell is :func:`~sheetflow.workbook.layout.iter_answer_cells`'s, with ``rater``,
``sitting`` and ``arm`` (the arm its label shows, "" for a case or study answer) and
``sides`` (label -> arm on the card) added."""


def study_from(template: str, root: Path, edit: Callable[[Path], None] | None = None
               ) -> Path:
    """``init`` a template into ``root``, let ``edit`` change its files, ``generate``."""
    init_study(root, template)
    if edit is not None:
        edit(root)
    generate_packs(root)
    return root


ReviewAnswer = Callable[[Study, dict[str, Any], dict[str, Any], int], Any]
"""``answer(study, pack, cell, index)`` -> the value to write into a value cell of
``pack`` (None blanks it); ``index`` is the cell's item's place in the study's items."""


def plant_answer_review(root: Path, answer: ReviewAnswer,
                        edit: Callable[[Path], None] | None = None
                        ) -> tuple[Study, dict[str, int]]:
    """``init`` the answer-review template into ``root`` (``edit`` changing its files),
    ``generate``, and save every pack into ``returns/`` with ``answer`` in each value
    cell; the study and each item's place in its items. Nothing is collected: the caller
    collects when its test does."""
    study_from("answer-review", root, edit)
    study = load_study(root)
    order = {it.id: i for i, it in enumerate(study.items)}
    fill_returns(root, lambda pack, cell: answer(study, pack, cell, order[cell["item_id"]]))
    return study, order


def plant(root: Path, answer: Answer, *, seed: int = 7, noise: float = 0.35,
          leave_out: tuple[str, ...] = ()) -> None:
    """Fill every pack (simulated raters), then write ``answer(cell)`` into each answer
    cell of each return; the packs of the raters in ``leave_out`` are not returned."""
    fill_packs(root, seed=seed, noise=noise)
    arms = arms_from_key(root)
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        path = root / L.RETURNS_DIR / pack["file"]
        if pack["rater_id"] in leave_out:
            path.unlink()
            continue
        sitting = int(pack.get("sitting", 1))
        table = arms.get((pack["rater_id"], sitting), {})
        wb = openpyxl.load_workbook(path)
        for cell in L.iter_answer_cells(pack):
            item, label = cell["item_id"], cell["label"] or ""
            sides = {lab: arm for (it, lab), arm in table.items() if it == item}
            value = answer({**cell, "rater": pack["rater_id"], "sitting": sitting,
                            "arm": table.get((item, label), "") if cell["label"] else "",
                            "sides": sides})
            if value is not KEEP:
                wb[cell["sheet"]][cell["cell"]].value = value
        wb.save(path)


# one way to answer the five dimensions of the paired-rubric template for each total
_DEPTH = {0: 0, 2: 2, 4: 4, 5: 6}  # points -> a count giving them
_ALTERNATIVES = {0: 0, 2: 1, 4: 2, 5: 3}
_ACTIONS = {0: 0, 2: 1, 4: 3}
_ANSWERS: dict[int, dict[str, int]] = {}
for _d, _e, _a, _l, _x in itertools.product(_DEPTH, range(4), _ALTERNATIVES, range(4),
                                            _ACTIONS):
    _ANSWERS.setdefault(_d + _e + _a + _l + _x, {
        "depth": _DEPTH[_d], "evidence": _e, "alternatives": _ALTERNATIVES[_a],
        "logic": _l, "actionability": _ACTIONS[_x]})


def rubric_answer(total: int, cell: dict[str, Any]) -> Any:
    """The paired-rubric template's answer in ``cell`` for a response whose total is to
    be ``total`` (a count, or a checklist question's Yes/No); :data:`KEEP` elsewhere."""
    dims = _ANSWERS[total]
    dim, part = cell["dimension"], cell["part"]
    if dim in ("depth", "alternatives", "actionability") and part == "value":
        return dims[dim]
    if dim in ("evidence", "logic") and part.startswith("q"):
        return "Yes" if int(part[1:]) <= dims[dim] else "No"
    return KEEP


def direction(cell: dict[str, Any], winner: str | None) -> str:
    """The direction naming ``winner``'s label first ("B>A"); "Tied" for None."""
    if winner is None:
        return "Tied"
    label_of = {arm: label for label, arm in cell["sides"].items()}
    loser = next(arm for arm in label_of if arm != winner)
    return f"{label_of[winner]}>{label_of[loser]}"
