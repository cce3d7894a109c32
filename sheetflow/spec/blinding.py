"""Whether the order of item ids (or any labels shown to raters), or the order of the
cards themselves, gives the arms away.

Ids are often numbered by arm: one system's outputs first, or odd numbers for one
system and even for the other. A rater who sees such ids can group answers by arm. The
test here sorts the labels naturally (``C2`` before ``C10``) and asks whether items
at distance 1 to :data:`MAX_LAG` in that order share their arm more often, or less
often, than in a random order (a permutation test per distance, Bonferroni-corrected).
Blocks raise the share at distance 1; alternation lowers it at 1 and raises it at 2.
The same test reads the items file's own order when a study does not shuffle
(:func:`sequence_reveals_arms`): every card then sits where the file puts it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

MAX_LAG = 4
PERMUTATIONS = 1000
ALPHA = 0.01


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key reading digit runs as numbers, so ``C2`` sorts before ``C10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.casefold())
                 for part in re.split(r"(\d+)", text) if part)


def order_reveals_arms(labels: Sequence[str], arms: Sequence[str], *, seed: int = 0) -> bool:
    """Whether sorting ``labels`` puts ``arms`` in a pattern a random order rarely shows.

    Parameters
    ----------
    labels : sequence of str
        What raters see for each item (ids, codes).
    arms : sequence of str
        Each item's arm, in the same order.
    seed : int
        Seed of the permutations (the answer is reproducible).

    Returns
    -------
    bool
        True when, at some distance 1..``MAX_LAG``, the share of same-arm neighbours in
        the sorted order lies outside the central ``1 - ALPHA`` of random orders.
    """
    order = sorted(range(len(labels)), key=lambda i: natural_key(labels[i]))
    return sequence_reveals_arms([arms[i] for i in order], seed=seed)


def sequence_reveals_arms(arms: Sequence[str], *, seed: int = 0) -> bool:
    """Whether ``arms``, in the order given, follow a pattern a random order rarely shows.

    The test of :func:`order_reveals_arms` on an order already made: the cards of an
    unshuffled pack, in the order the items file lists them.

    Parameters
    ----------
    arms : sequence of str
        Each item's arm, in the order the items are shown (or sorted).
    seed : int
        Seed of the permutations (the answer is reproducible).

    Returns
    -------
    bool
        True when, at some distance 1..``MAX_LAG``, the share of same-arm neighbours
        lies outside the central ``1 - ALPHA`` of random orders.
    """
    import numpy as np

    if len(set(arms)) < 2 or len(arms) < 4:
        return False
    names = sorted(set(arms))
    codes = np.array([names.index(arm) for arm in arms], dtype=np.int16)
    rng = np.random.default_rng(seed)
    shuffled = rng.permuted(np.broadcast_to(codes, (PERMUTATIONS, codes.size)), axis=1)
    lags = range(1, min(MAX_LAG, codes.size - 1) + 1)
    for lag in lags:
        observed = int((codes[lag:] == codes[:-lag]).sum())
        null = (shuffled[:, lag:] == shuffled[:, :-lag]).sum(axis=1)
        low = (np.sum(null <= observed) + 1) / (PERMUTATIONS + 1)
        high = (np.sum(null >= observed) + 1) / (PERMUTATIONS + 1)
        if 2 * min(low, high) < ALPHA / len(lags):
            return True
    return False


def arm_in_ids(study: Any) -> list[str]:
    """A warning when item ids carry their arm (empty when they do not).

    In a single design each item belongs to one arm, and ids are often made from it: the
    arm's id inside the item id, one prefix per arm (``B6-01``), or numbers that run by
    arm. No pack shows an item id unless ``[items] show_id = true``, but ids travel
    further than packs (file names, the coordinator's messages), so ``check`` says so.
    """
    design = study.design
    if design.paired or not design.arm_column:
        return []
    ids = [it.id for it in study.items]
    arms = [it.fields.get(design.arm_column, "") for it in study.items]
    where = f"{study.root / study.items_file}: "
    inside = sorted({arm for i, arm in zip(ids, arms, strict=True) if _contains(i, arm)})
    if inside:
        return [where + f"item ids contain their arm's id ({', '.join(inside)}); anyone who "
                "sees an id knows the arm: use ids that say nothing about the arm"]
    if _prefix_per_arm(ids, arms):
        return [where + "each arm's item ids share a prefix of their own (e.g. "
                f"{ids[0]!r}); anyone who sees an id knows the arm: renumber the items"]
    if order_reveals_arms(ids, arms, seed=design.seed):
        shown = ("[items] show_id = true shows them on every card, so raters could group "
                 "answers by arm" if study.show_id else "anyone who sees the ids can group "
                 "the items by arm")
        return [where + f"the order of the ids follows the arms ({shown}); renumber the "
                "items in a random order" + (" or remove show_id" if study.show_id else "")]
    return []


def _contains(item_id: str, arm: str) -> bool:
    """Whether ``arm`` (or, for ``b6_distance_forced``, its first word ``b6``) stands in
    ``item_id`` as a word of its own."""
    words = [w for w in re.split(r"[^0-9a-z]+", item_id.casefold()) if w]
    head = re.split(r"[^0-9a-z]+", arm.casefold())[0]
    return bool(arm) and (arm.casefold() in item_id.casefold() or head in words)


def _prefix_per_arm(ids: Sequence[str], arms: Sequence[str]) -> bool:
    """Whether the ids' leading letters (``B6-`` of ``B6-01``) map one-to-one to arms."""
    prefixes = [re.match(r"[^0-9]*[0-9]*[^0-9]+", i) for i in ids]
    if len(set(arms)) < 2 or any(p is None for p in prefixes):
        return False
    pairs = {(p.group(0).casefold(), a) for p, a in zip(prefixes, arms, strict=True)}
    return len({p for p, _ in pairs}) == len(pairs) == len(set(arms))



MOST = 0.8
"""The share of items sharing a value that, holding a value of one arm only, makes a
shown column a grouping of the arms (:func:`shown_reveals_arm`)."""
LEANING_ITEMS = 5
"""The fewest items a value must be on for :func:`shown_reveals_arm` to weigh how far
they lean to one arm (fewer are too few to tell a lean from chance)."""
LEANING_SHARE = 0.9
"""The share of a value's items one arm must hold for the value to name that arm."""
LEANING_P = 0.001
"""The one-sided binomial p-value below which a value's lean to an arm is no chance,
before it is divided by the number of values tested (those on :data:`LEANING_ITEMS`
items or more): a column of many such values would otherwise trip it by chance."""
_CHUNK = 100  # permutations drawn at a time: memory stays small for 10,000 items


def shown_reveals_arm(values: Sequence[str], arms: Sequence[str], *, seed: int = 0) -> str:
    """Why a shown column's values let a rater predict the arm (empty when they do not).

    Only values held by two or more items are evidence: in a single design each item
    belongs to one arm, so a value found on one item only (a prompt, a per-response
    id) says nothing beyond the item itself. A shared value is *telling* when every
    item holding it is in one arm. The column reveals the arm when

    * each arm's items show one value of their own, and some value is on two or more
      items (the column renames the arms);
    * one telling value is on so many items that arms drawn at random would put them
      all in one arm with a probability below :data:`ALPHA` divided by the number of
      shared values (``'single'`` on every item of one arm of fifteen);
    * a value is on at least :data:`LEANING_ITEMS` items, at least
      :data:`LEANING_SHARE` of them in one arm, and that many or more of them would be
      in that arm with a probability below :data:`LEANING_P` divided by the number of
      values on :data:`LEANING_ITEMS` items or more, if each item were in it with the
      arm's share of all items (a one-sided binomial test): the value names the arm on
      most of its cards though some cards of another arm show it too
      (``'idx-2025-11'`` on 40 items of one arm and 2 of the other, of 120 each); or
    * at least :data:`MOST` of the items holding a shared value hold a telling one,
      and fewer than :data:`ALPHA` of random reassignments of the arms to the items
      give as many (a grouping column aligned with the arms).

    Parameters
    ----------
    values : sequence of str
        The column's text on each item (blank included: a blank is shown too).
    arms, seed
        As in :func:`order_reveals_arms` (each item's arm, in the same order; the
        permutations' seed).

    Returns
    -------
    str
        For example ``"each arm's items all show one value of their own ('run-17' on
        every item of arm 'a')"``, or ``""``.
    """
    groups: dict[str, list[str]] = {}
    for value, arm in zip(values, arms, strict=True):
        groups.setdefault(value, []).append(arm)
    shared = {v: a for v, a in groups.items() if len(a) > 1}
    if len(set(arms)) < 2 or not shared:
        return ""
    telling = {v: a[0] for v, a in shared.items() if len(set(a)) == 1}
    if _renames(groups):
        value, arm = next(iter(telling.items()))
        return (f"each arm's items all show one value of their own ({_shown(value)} on "
                f"every item of arm {arm!r})")
    return (_rare_value(shared, telling, arms) or _leaning_value(shared, arms)
            or _aligned(groups, telling, arms, seed))


def _renames(groups: dict[str, list[str]]) -> bool:
    """Whether each value belongs to one arm and each arm has one value."""
    owners = [set(a) for a in groups.values()]
    arms = [arm for owner in owners for arm in owner]
    return all(len(o) == 1 for o in owners) and len(arms) == len(set(arms))


def _rare_value(shared: dict[str, list[str]], telling: dict[str, str],
                arms: Sequence[str]) -> str:
    """The largest telling value, when chance rarely puts that many items in one arm."""
    if not telling:
        return ""
    value = max(telling, key=lambda v: (len(shared[v]), v))
    held = len(shared[value])
    sizes = [arms.count(a) for a in set(arms)]
    chance = sum(math.comb(n, held) for n in sizes) / math.comb(len(arms), held)
    if chance >= ALPHA / len(shared):
        return ""
    return (f"{_shown(value)} is on {held} items, all of arm {telling[value]!r} (arms "
            "drawn at random would almost never do that)")


def _leaning_value(shared: dict[str, list[str]], arms: Sequence[str]) -> str:
    """The largest value whose items lean to one arm beyond chance (the rule of
    :data:`LEANING_ITEMS`, :data:`LEANING_SHARE` and :data:`LEANING_P`), or ``""``."""
    sizes = Counter(arms)
    tested = sorted((v for v in shared if len(shared[v]) >= LEANING_ITEMS),
                    key=lambda v: (-len(shared[v]), v))
    for value in tested:
        held = len(shared[value])
        arm, count = Counter(shared[value]).most_common(1)[0]
        if count < LEANING_SHARE * held:
            continue
        base = sizes[arm] / len(arms)
        chance = _binomial_upper_tail(count, held, base)
        if chance < LEANING_P / len(tested):
            return (f"{_shown(value)} is on {held} items, {count} of them "
                    f"({count / held:.0%}) in arm {arm!r}, which holds {base:.0%} of all "
                    f"items (one-sided binomial p = {chance:.1e}, below {LEANING_P:g} "
                    f"divided by the {len(tested)} values on {LEANING_ITEMS} or more items)")
    return ""


def _binomial_upper_tail(count: int, n: int, p: float) -> float:
    """``P(X >= count)`` for ``X ~ Binomial(n, p)``, ``0 < p < 1``, summed from the
    log of each term (exact enough for 10,000 items, where the coefficients overflow a
    float)."""
    log_p, log_q = math.log(p), math.log1p(-p)
    return sum(math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                        + k * log_p + (n - k) * log_q) for k in range(count, n + 1))


def _aligned(groups: dict[str, list[str]], telling: dict[str, str], arms: Sequence[str],
             seed: int) -> str:
    """Why most shared values are telling beyond chance (empty when they are not)."""
    shared = [a for a in groups.values() if len(a) > 1]
    held = sum(map(len, shared))
    covered = sum(len(groups[v]) for v in telling)
    if covered < MOST * held or _chance_covers(groups, arms, covered, seed):
        return ""
    value, arm = next(iter(telling.items()))
    return (f"{covered} of the {held} items that share a value with another item share "
            f"it only with items of the same arm (e.g. {_shown(value)}: every item "
            f"showing it is in arm {arm!r})")


def _chance_covers(groups: dict[str, list[str]], arms: Sequence[str], covered: int,
                   seed: int) -> bool:
    """Whether random reassignments of ``arms`` to the items leave ``covered`` or more
    items in telling shared values in at least :data:`ALPHA` of :data:`PERMUTATIONS`."""
    import numpy as np

    names = sorted(set(arms))
    shared = [a for a in groups.values() if len(a) > 1]
    # the shared values' items first, value by value, then the others
    order = shared + [a for a in groups.values() if len(a) == 1]
    codes = np.array([names.index(arm) for group in order for arm in group], dtype=np.int16)
    sizes = np.array([len(a) for a in shared])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    rng = np.random.default_rng(seed)
    as_many = 0
    for done in range(0, PERMUTATIONS, _CHUNK):
        count = min(_CHUNK, PERMUTATIONS - done)
        drawn = rng.permuted(np.broadcast_to(codes, (count, codes.size)), axis=1)
        head = drawn[:, :int(sizes.sum())]
        pure = np.minimum.reduceat(head, starts, axis=1) == \
            np.maximum.reduceat(head, starts, axis=1)
        as_many += int(np.sum(pure @ sizes >= covered))
    return (as_many + 1) / (PERMUTATIONS + 1) >= ALPHA


def _shown(value: str) -> str:
    return repr(value) if value else "a blank"
