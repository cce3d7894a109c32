"""Seeded assignment: which items each rater gets, in which order, under which labels.

Every random choice comes from the study secret and a seed recorded in the spec,
through :func:`derive_rng`: a ``random.Random`` seeded with the first 8 bytes of
HMAC-SHA256 under the secret of the seed and a purpose string (e.g.
``"20260915:order:EV-01"``). Python's ``hash()`` is never used, so the result is the
same on every Python version and machine; without the secret (which never leaves
``sealed/``) no seed, however small, reproduces a draw.

* **Order**: spec order, or (``design.shuffle``) a per-rater shuffle.
* **Sides** (paired): per rater, a list with ``n // 2`` cases where the first arm sits
  under the first label and ``n // 2`` where it sits under the second; when ``n`` is odd
  one extra case goes to a side drawn at random. The list is shuffled and dealt to the
  cases in spec order, so the count of cases with a given arm under A differs from the
  count under B by at most 1.
* **Second-rater subset**: items are grouped by the values of ``design.second_rater.strata``;
  within each stratum they are ranked by ``sha256(spec_hash + ":" + item_id)`` and the
  first ``ceil(fraction * n)`` are taken. Raters with role ``second`` get those; raters
  with role ``primary`` get every item.
* **Display codes**: each card shows "Case k of n" and a short code (four letters
  and digits) drawn per rater and sitting, never the item's own id unless the spec
  sets ``[items] show_id = true``; ids often follow the arms (one system's outputs
  numbered first), so showing them would let a rater group answers by arm.
* **Repeats** (second sitting): ``repeats.count`` of the rater's items drawn with
  ``repeats.seed`` and shown in a new shuffled order, sides drawn afresh.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, replace

from ..spec.study import Item, Rater, Study
from .second_rater import ceil_share
from .secret import keyed_rng


@dataclass(frozen=True)
class Slot:
    """One card of a pack: an item and, in a paired design, label -> arm id."""

    item: Item
    sides: tuple[tuple[str, str], ...] = ()
    code: str = ""


@dataclass(frozen=True)
class Assignment:
    """The cards of one rater's workbook for one sitting.

    ``seeds`` names, for each random choice (order, draw, sides, codes), the text its
    generator was derived from (:func:`derivation`), for the sealed key.
    """

    rater: Rater
    sitting: int
    slots: tuple[Slot, ...]
    seeds: dict[str, str]


def derive_rng(secret: bytes, seed: int, *purpose: str) -> random.Random:
    """A random generator derived from the study secret, ``seed`` and a purpose.

    Stable on every Python version and machine (HMAC-SHA256, never ``hash()``), and
    unpredictable without the secret however small the seed (see
    :mod:`sheetflow.packs.secret`).

    Parameters
    ----------
    secret : bytes
        The study secret (``sealed/secret``).
    seed : int
        A seed recorded in the spec.
    *purpose : str
        Words naming the use (``"order"``, a rater id, ...).

    Returns
    -------
    random.Random
    """
    return keyed_rng(secret, derivation(seed, *purpose))


def derivation(seed: int, *purpose: str) -> str:
    """The text a generator is derived from (recorded in the sealed key)."""
    return ":".join([str(seed), *purpose])


def second_rater_items(study: Study) -> tuple[Item, ...]:
    """The items chosen for second raters, in spec order (all items if no subset).

    Parameters
    ----------
    study : Study

    Returns
    -------
    tuple of Item
    """
    plan = study.design.second_rater
    if plan is None:
        return study.items
    spec = study.hash
    strata: dict[tuple[str, ...], list[Item]] = {}
    for item in study.items:
        strata.setdefault(tuple(item.fields.get(c, "") for c in plan.strata), []).append(item)
    chosen: set[str] = set()
    for members in strata.values():
        ranked = sorted(members, key=lambda it: hashlib.sha256(
            f"{spec}:{it.id}".encode()).hexdigest())
        chosen.update(it.id for it in ranked[: ceil_share(plan.fraction, len(members))])
    return tuple(it for it in study.items if it.id in chosen)


def rater_items(study: Study, rater: Rater,
                locked: Collection[str] = ()) -> tuple[Item, ...]:
    """The items ``rater`` scores in the first sitting, in spec order.

    ``locked``: the item ids a data lock selected (protocol 002, ``select_at =
    "lock"``), as the caller read them with the sha256 it seals; none before the lock.
    """
    if rater.role == "second" and study.design.second_rater is not None:
        if study.design.second_rater.select_at == "lock":  # drawn at data lock (002)
            chosen = set(locked)
            return tuple(it for it in study.items if it.id in chosen)
        return second_rater_items(study)
    return study.items


def balanced_sides(n: int, rng: random.Random) -> list[bool]:
    """``n`` flags, True meaning the first arm sits under the first label, balanced.

    Half are True and half False; for odd ``n`` the extra one is drawn from ``rng``.
    """
    flags = [True] * (n // 2) + [False] * (n // 2)
    if n % 2:
        flags.append(rng.random() < 0.5)
    rng.shuffle(flags)
    return flags


def assign(study: Study, rater: Rater, sitting: int = 1, *,
           secret: bytes, locked: Collection[str] = ()) -> Assignment:
    """The cards of ``rater``'s workbook for ``sitting`` (1, or 2 for repeats).

    Parameters
    ----------
    study : Study
    rater : Rater
    sitting : int
        1 for the main workbook, 2 for the repeats workbook.
    secret : bytes
        The study secret every draw is keyed with.
    locked : collection of str
        The item ids a data lock selected for second raters (:func:`rater_items`).

    Returns
    -------
    Assignment
    """
    design = study.design
    items = list(rater_items(study, rater, locked))
    if sitting == 1:
        seed, tag = design.seed, "s1"
        if design.shuffle:
            derive_rng(secret, seed, "order", rater.id).shuffle(items)
            if design.scatter_column:
                items = scattered(items, design.scatter_column)
    else:
        if design.repeats is None:
            raise ValueError("a second sitting needs design.repeats")
        seed, tag = design.repeats.seed, "s2"
        pick = derive_rng(secret, seed, "repeats", rater.id)
        items = pick.sample(items, min(design.repeats.count, len(items)))
        derive_rng(secret, seed, "repeats-order", rater.id).shuffle(items)
    seeds = {"order": derivation(seed, "order" if sitting == 1 else "repeats-order", rater.id)}
    if sitting == 2:
        seeds["draw"] = derivation(seed, "repeats", rater.id)
    slots = [Slot(it) for it in items]
    if design.paired:
        seeds["sides"] = derivation(seed, "sides", tag, rater.id)
        slots = _with_sides(study, items, derive_rng(secret, seed, "sides", tag, rater.id))
    if study.show_id:
        codes = [it.id for it in items]
    else:
        seeds["codes"] = derivation(seed, "codes", tag, rater.id)
        codes = display_codes(len(items), derive_rng(secret, seed, "codes", tag, rater.id))
    slots = [replace(s, code=c) for s, c in zip(slots, codes, strict=True)]
    return Assignment(rater, sitting, tuple(slots), seeds)


def scattered(items: list[Item], column: str) -> list[Item]:
    """``items`` reordered so that no two with the same ``column`` value are adjacent,
    where the counts allow it (no group more than half the cards, rounded up).

    The shuffled order is kept as far as it can be: each next card is the first one
    left, in shuffled order, unlike the card before whose taking still leaves an order
    without neighbours alike; when no card can avoid it, the first one left is taken.
    """
    def key(item: Item) -> str:
        return item.fields.get(column, "")

    left = list(items)
    counts = Counter(key(it) for it in left)
    out: list[Item] = []
    last: str | None = None
    while left:
        pick = next((it for it in left if key(it) != last
                     and _arrangeable(counts - Counter([key(it)]), key(it))), left[0])
        left.remove(pick)
        counts[key(pick)] -= 1
        out.append(pick)
        last = key(pick)
    return out


def _arrangeable(counts: Counter[str], last: str) -> bool:
    """Whether cards with these group counts can follow a card of group ``last`` with no
    two neighbours alike."""
    n = sum(counts.values())
    if n == 0:
        return True
    most = counts.most_common(1)[0][1]
    if most > (n + 1) // 2:
        return False
    # an odd count whose largest group fills every other place must start with it
    tied = [g for g, c in counts.items() if c == most]
    return not (n % 2 and most == (n + 1) // 2 and tied == [last])


CODE_ALPHABET = "ACDEFHJKLMNPRTUVWXY34679"
"""Letters and digits that cannot be misread for one another (no O/0, I/1, S/5, B/8)."""
CODE_LENGTH = 4


def display_codes(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct neutral codes such as ``"K7QF"``, drawn with ``rng``.

    A code says nothing about the item: it is drawn afresh for each rater, so its
    order carries no trace of the arms, and a rater can still name a case when asking.
    """
    size = len(CODE_ALPHABET)
    out = []
    for number in rng.sample(range(size ** CODE_LENGTH), n):
        chars = []
        for _ in range(CODE_LENGTH):
            number, digit = divmod(number, size)
            chars.append(CODE_ALPHABET[digit])
        out.append("".join(chars))
    return out


def _with_sides(study: Study, items: list[Item], rng: random.Random) -> list[Slot]:
    """Deal balanced sides to items in spec order, then keep the display order."""
    first, second = (a.id for a in study.design.arms)
    l1, l2 = study.design.labels
    spec_pos = {it.id: i for i, it in enumerate(study.items)}
    by_spec = sorted(items, key=lambda it: spec_pos[it.id])
    flags = dict(zip((it.id for it in by_spec), balanced_sides(len(by_spec), rng),
                     strict=True))
    return [Slot(it, ((l1, first), (l2, second)) if flags[it.id] else ((l1, second),
                                                                        (l2, first)))
            for it in items]


def response_text(study: Study, slot: Slot, label: str | None) -> str:
    """The response shown under ``label`` (paired) or the row's response (single)."""
    if label is None:
        return slot.item.fields.get(study.design.response_column or "", "")
    arm_id = dict(slot.sides)[label]
    column = next(a.column for a in study.design.arms if a.id == arm_id)
    return slot.item.fields.get(column or "", "")
