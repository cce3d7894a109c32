"""The answer lines of a card on the Scoring sheet: their labels, and which are missing.

Every answer line of a card carries the same hidden id in column A, so ids count a
card's lines but cannot tell them apart; the label the pack wrote in column B can.
:func:`missing_lines` uses it to say which line of a card was deleted, where the ids
only show that the card has fewer lines than it was sent with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..packs.guides import answer_label, display_label, question_label


def line_labels(answers: list[tuple[str, dict[str, Any]]],
                dims: dict[str, Any]) -> list[tuple[int, str]]:
    """(row, label) of each answer line of ``answers`` (dimension id, answer) as the
    pack wrote it in column B: the dimension's answer label, a checklist's questions
    (the first after the dimension's name), as :mod:`sheetflow.packs.writer` does."""
    out = []
    for dim_id, answer in answers:
        dim = dims.get(dim_id)
        if dim is None:
            continue
        if dim.kind != "checklist":
            out.append((_row(answer["cell"]), answer_label(dim)))
            continue
        for i, q in enumerate(answer["questions"]):
            out.append((_row(q["cell"]), question_label(dim, i, q["question"])))
    return out


def line_names(card: dict[str, Any], dims: dict[str, Any]) -> dict[int, tuple[str, str, str]]:
    """Row -> (label in column B, the line's name in a message, dimension id) of each
    answer line of ``card``'s rows (those carrying its hidden ids): a checklist's
    question is named with its dimension's, whichever line it is on."""
    out: dict[int, tuple[str, str, str]] = {}
    for dim_id, answer in (a for r in card["rows"] for a in r["answers"].items()):
        dim = dims.get(dim_id)
        if dim is None:
            continue
        if dim.kind != "checklist":
            lines = [(answer["cell"], answer_label(dim), answer_label(dim))]
        else:
            lines = [(q["cell"], question_label(dim, i, q["question"]),
                      f"{display_label(dim)}: {q['question']}")
                     for i, q in enumerate(answer["questions"])]
        for cell, label, name in lines:  # a paired card's responses share their lines
            out.setdefault(_row(cell), (label, name, dim_id))
    return out


def missing_lines(expected: list[int], found: list[int], labels: dict[int, str],
                  label_at: Callable[[int], str]) -> list[int] | None:
    """The rows (as sent) of a card's answer lines that are gone, or ``None`` when the
    labels do not tell.

    Parameters
    ----------
    expected : list of int
        The card's answer lines as sent, top to bottom.
    found : list of int
        The rows carrying its hidden ids now, top to bottom (fewer).
    labels : dict
        Row as sent -> the label the pack wrote in column B.
    label_at : callable
        The label column's text on a row now.
    """
    gone, at = [], 0
    for row in expected:  # lines keep their order when one between is deleted
        if at < len(found) and label_at(found[at]) == labels.get(row, "").strip():
            at += 1
        else:
            gone.append(row)
    return gone if at == len(found) and len(gone) == len(expected) - len(found) else None


def _row(ref: str) -> int:
    """The row of an A1 address."""
    return int(ref.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
