"""Locked text checked by its digest: each shown field's text as generate wrote it.

Each locked field of a pack (a prompt, a response, a shown column, over one cell or
several) is recorded in the manifest with the sha256 of its text
(:func:`~sheetflow.workbook.layout.text_sha256`). :func:`check_locked` hashes each
field's cells in the return and names the first cell of every field whose text no
longer matches, as ``locked-text-changed``. Where answer lines moved (rows inserted or
deleted), a field is looked for at the few places the rows around it allow.
"""

from __future__ import annotations

from itertools import product
from typing import Any, Protocol

from ..workbook import layout as L
from .outside_answers import FileChecker as _OutsideChecker
from .validate import show_value
from .values import Formula

_SHIFT_SPAN = 64  # inserted rows searched for a card's moved locked text
_SHIFT_TRIES = 64  # most per-chunk shift combinations tried


class FileChecker(_OutsideChecker, Protocol):
    """What these checks need of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    _in_place: bool  # no answer line moved

    def moved(self, ref: str, anchor_row: int) -> tuple[str, Any]: ...


def check_locked(checker: FileChecker) -> None:
    """Name each locked field of the pack whose text is not intact in the return.

    Parameters
    ----------
    checker : FileChecker
        The checker of one return, its rows aligned (``shift``, ``_in_place``).
    """
    cards = checker.plan.pack.get("cards", [])
    fields = [locked_fields(card) for card in cards]
    # no answer line moved (the usual return): every field read where the pack put
    # it, all at once
    intact = iter(locked_in_place(checker, [f for card in fields for f in card])
                  if checker._in_place else ())
    previous = 0  # shift of the line above the card's locked text
    for card, card_fields, (first, last) in zip(cards, fields, checker.plan.anchors,
                                                strict=True):
        below = checker.shift.get(first, 0)
        for locked in card_fields:
            if not next(intact, None) and not _locked_found(checker, locked, below, previous):
                cell, _ = checker.moved(locked["cells"][0], first)
                checker.add("locked-text-changed", sheet=checker.sheet, cell=cell,
                            case=L.case_name(card))
        previous = checker.shift.get(last, 0)


def locked_in_place(checker: FileChecker, fields: list[dict[str, Any]]) -> list[bool]:
    """Whether each locked field's text is intact where the pack put it: the
    digests of a 500-case pack's some 2,000 fields, made in one go."""
    get, position = checker.cells.get, checker.plan.position
    texts = [_joined([get(position(ref)) for ref in locked["cells"]]) for locked in fields]
    return list(map(str.__eq__, map(L.text_sha256, texts),
                    [locked["sha256"] for locked in fields]))


def _locked_found(checker: FileChecker, locked: dict[str, Any], below: int,
                  above: int) -> bool:
    """Whether the field's text is intact, wherever inserted rows moved its cells.

    The text lies between the previous card's last answer line (moved by
    ``above``) and this card's first (moved by ``below``); rows inserted in between
    move each chunk by an amount between the two, never backwards. Only a few
    such placements are tried: sorted rows (shifts of hundreds) are not searched.
    """
    cells = [checker.plan.position(ref) for ref in locked["cells"]]
    for shift in dict.fromkeys((below, above)):
        if digest(checker, cells, [shift] * len(cells)) == locked["sha256"]:
            return True
    low, high = min(above, below), max(above, below)
    if high - low > _SHIFT_SPAN:
        return False
    options = range(low, high + 1)
    if len(options) ** len(cells) > _SHIFT_TRIES:
        tries = ([d] * len(cells) for d in options)
    else:
        tries = (list(c) for c in product(options, repeat=len(cells))
                 if list(c) == sorted(c))
    return any(digest(checker, cells, shifts) == locked["sha256"] for shifts in tries)


def digest(checker: FileChecker, cells: list[tuple[int, int]], shifts: list[int]) -> str:
    """The sha256 of the text of ``cells`` (pack positions), each read ``shifts`` rows
    from where the pack put it."""
    text = "".join(show_full(checker.cells.get((r + d, c)))
                   for (r, c), d in zip(cells, shifts, strict=True))
    return L.text_sha256(text)


def locked_fields(card: dict[str, Any]) -> list[dict[str, Any]]:
    """A card's locked fields in order: the card's own, then each row's."""
    return card["locked"] + [x for r in card["rows"] for x in r["locked"]]


def _joined(values: list[Any]) -> str:
    """The text of a locked field's cells, each as :func:`show_full` shows it."""
    try:
        return "".join(values)  # all text, as the pack wrote them
    except TypeError:  # an empty cell, a number, a formula
        return "".join(map(show_full, values))


def show_full(value: Any) -> str:
    """A locked cell's text exactly (numbers written as text stay text)."""
    if value is None:
        return ""
    if isinstance(value, Formula):
        return "=" + value.text
    return show_value(value) if not isinstance(value, str) else value
