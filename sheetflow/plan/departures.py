"""Designs that depart from a count the protocol fixes: a note on each, and on the cheapest.

Some protocols fix the number of items (:data:`.defaults.FIXED_ITEMS`: 000's 18 test
cases, 001's 30 repeated items, 003's 18 items, 004's 12 records). The grid offers
other counts too (the defaults, ``--items``, the counts a target needs), and the
cheapest design meeting a target may have fewer items than the protocol's (a wide
``--width``) or more (a narrow one). Each such design's ``note`` says so, and where the
cheapest one departs, a plan note names the cheapest design that keeps the protocol's
count, so the design offered is never taken for the protocol's own (where the study's
own design misses the target, this is said in the note on the protocol's count, which
says why once). Rater counts a protocol fixes (002's and 003's two raters, 004's
trio) need no mark: their grid holds that count alone. A study listing another count
departs from the protocol's design itself, and is told so (:func:`rater_departure`).
"""

from __future__ import annotations

from ..words import counted
from .defaults import StudyDefaults
from .design import PlanResult

__all__ = ["cheapest_departure", "departure", "mark_departures", "rater_departure"]


def departure(own: StudyDefaults, items: int, word: str) -> str:
    """How a design of ``items`` departs from the item count the protocol fixes, in
    words ("fewer items than the protocol's 12"); "" where it keeps it or the protocol
    fixes none."""
    fixed = own.items_fixed
    if not fixed or items == fixed:
        return ""
    return f"{'fewer' if items < fixed else 'more'} {word} than the protocol's {fixed}"


def mark_departures(result: PlanResult, own: StudyDefaults) -> None:
    """Fill the table's ``note`` column: how each design departs from the protocol's
    item count ("" where it keeps it)."""
    word = result.items_word
    result.table["note"] = [departure(own, int(n), word) for n in result.table["items"]]


def cheapest_departure(result: PlanResult, own: StudyDefaults, *, why_said: bool = False) -> str:
    """Where the cheapest design meeting the target departs from the protocol's item
    count (its ``note``, :func:`mark_departures`), a sentence saying so and naming the
    cheapest design that keeps the count, or that none of the grid does; "" otherwise.
    ``why_said``: a note before it has just said where the protocol fixes the count,
    so it is not said again."""
    best = result.chosen()
    if best is None or not best["note"]:
        return ""
    word, fixed, t = result.items_word, own.items_fixed, result.table
    keeping = t[(t["items"] == fixed) & t["meets"]].sort_values(["cost", "raters"],
                                                                kind="stable")
    design = f"{result.who(int(best['raters']))} x {int(best['items'])} {word}"
    why = "" if why_said else f": {own.items_fixed_why}"
    text = (f"The cheapest design meeting the target ({design}) has {best['note']}, so "
            f"it is not the protocol's design{why}. ")
    if keeping.empty:
        return text + f"No design of the grid with {fixed} {word} meets the target."
    row = keeping.iloc[0]
    return (text + f"The cheapest one with the protocol's {fixed} {word} is "
            f"{result.who(int(row['raters']))} x {fixed} {word} (expected width "
            f"{row['expected_width']:.3f}).")


def rater_departure(own: StudyDefaults) -> str:
    """Where the study lists another number of the raters (004: judges) its protocol
    fixes, a sentence naming the study's count as the study's and saying it departs
    ("This study lists 1 judge, not the protocol's 3: ..."); "" otherwise. Its plan
    has the protocol's count all the same: the grid holds that count alone."""
    if not own.locked or own.listed == own.protocol_raters:
        return ""
    return (f"This study lists {counted(own.listed, own.listed_word)}, not the protocol's "
            f"{own.protocol_raters}: it departs from the protocol's design.")
