"""A digest of the cells a pack sends that no rater should change.

``generate`` records in each pack's manifest entry, for each visible sheet, the
sha256 of its fixed cells (``sheet_digests``): every cell with content but the
answer cells and the locked text (which has digests of its own). ``collect`` makes
the same digest of a return's sheet; only when the two differ is the pack read to
name the cells (:mod:`sheetflow.collect.sent_cells`).

Both sides describe a cell the same way, by :func:`canonical`: what a program saving
the workbook again keeps. Text is its exact text; a number its value (LibreOffice writes
every number as a float); a formula is only "a formula", as its text may be written
again differently and its cached value is recalculated; a cell holding "" or nothing
is left out (openpyxl drops the first, Excel keeps it). Number formats, styles and
shared-string order do not count. The digest is of text the rater's own workbook shows,
so it says nothing the workbook does not.
"""

from __future__ import annotations

import hashlib
import re
import sys
from array import array
from collections.abc import Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

FORMULA = ("formula",)
"""What any formula is: its text may be written again differently, its cached value
recalculated."""


def canonical(value: Any) -> Any:
    """A cell's value as the digest takes it, from the plain Python value of either
    side: text as it is, a number as a float, True or False, anything else (a date, an
    error) as ``("other", text)``; None for nothing or "". (A formula is
    :data:`FORMULA`, which each side tells by its own means.)"""
    kind = type(value)
    if kind is str or kind is float or kind is bool:
        return value if value != "" else None
    if kind is int:
        return float(value)
    if value is None:
        return None
    return ("other", str(value))


def digest(cells: Iterable[tuple[tuple[int, int], Any]]) -> str:
    """The sha256 (hex) of ((row, column), value) pairs in row-then-column order.

    Parameters
    ----------
    cells : iterable of ((int, int), value)
        Each fixed cell with content, 1-based, and its :func:`canonical` value (or
        :data:`FORMULA`).

    Returns
    -------
    str
    """
    # made by C-level calls, not a string per cell: a 500-case Scoring sheet has tens
    # of thousands; the places as 32-bit little-endian numbers (the same bytes on any
    # machine), the values joined, any value but text marked by a leading \x01 (a
    # character no sheet's text holds)
    ordered = sorted(cells)
    return ordered_digest(list(map(itemgetter(0), ordered)), list(map(itemgetter(1), ordered)))


def ordered_digest(places: list[tuple[int, int]], values: list[Any]) -> str:
    """:func:`digest` of the cells at ``places`` (in row-then-column order, no place
    twice) holding ``values`` (each a :func:`canonical` value or :data:`FORMULA`,
    none None)."""
    packed = array("I", chain.from_iterable(places))
    if sys.byteorder == "big":
        packed.byteswap()
    # a formula's mark made once: a Scoring sheet holds thousands of formulas
    text = "\x00".join([v if type(v) is str else _FORMULA_MARK if v is FORMULA
                        else "\x01" + repr(v) for v in values])
    found = hashlib.sha256(packed.tobytes())
    found.update(text.encode("utf-8", "surrogatepass"))
    return found.hexdigest()


_FORMULA_MARK = "\x01" + repr(FORMULA)


def entry_places(entry: dict[str, Any]) -> set[tuple[int, int]]:
    """(row, column), 1-based, of every cell of the Scoring sheet a manifest entry
    names (answers, confidences, batch times, locked text): those the digest leaves
    out."""
    refs: set[str] = set()
    for batch in entry.get("batches", []):
        refs.update(batch[end]["cell"] for end in ("start", "end") if end in batch)

    def answer(found: dict[str, Any]) -> None:
        for ask in found.get("questions", [found]):
            refs.add(ask["cell"])
        if "confidence" in found:
            refs.add(found["confidence"]["cell"])

    for found in entry.get("study_answers", {}).values():
        answer(found)
    for card in entry.get("cards", []):
        for found in card["case_answers"].values():
            answer(found)
        for locked in card["locked"]:
            refs.update(locked["cells"])
        for row in card["rows"]:
            for found in row["answers"].values():
                answer(found)
            for locked in row["locked"]:
                refs.update(locked["cells"])
    return {_place(ref) for ref in refs}


def _place(ref: str) -> tuple[int, int]:
    """(row, column) of an A1 address."""
    found = _A1.fullmatch(ref)
    if found is None:
        raise ValueError(f"not a cell address: {ref!r}")
    col = 0
    for letter in found[1].upper():
        col = col * 26 + ord(letter) - 64
    return int(found[2]), col


_A1 = re.compile(r"([A-Za-z]{1,3})([0-9]+)")
