"""Whether the order of item ids (or any labels shown to raters) gives the arms away.

Ids are often numbered by arm: one system's outputs first, or odd numbers for one
system and even for the other. A rater who sees such ids can group answers by arm. The
test here sorts the labels naturally (``C2`` before ``C10``) and asks whether items
at distance 1 to :data:`MAX_LAG` in that order share their arm more often, or less
often, than in a random order (a permutation test per distance, Bonferroni-corrected).
Blocks raise the share at distance 1; alternation lowers it at 1 and raises it at 2.
"""

from __future__ import annotations

import re
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
    import numpy as np

    if len(set(arms)) < 2 or len(arms) < 4:
        return False
    order = sorted(range(len(labels)), key=lambda i: natural_key(labels[i]))
    names = sorted(set(arms))
    codes = np.array([names.index(arms[i]) for i in order], dtype=np.int16)
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


def study_warnings(study: Any) -> list[str]:
    """Warnings for ``check``: a spec that shows ids whose order follows the arms."""
    design = study.design
    if not study.show_id or design.paired or not design.arm_column:
        return []
    ids = [it.id for it in study.items]
    arms = [it.fields.get(design.arm_column, "") for it in study.items]
    if not order_reveals_arms(ids, arms, seed=design.seed):
        return []
    return [f"{study.items_file}: the order of the ids follows the arms ([items] show_id = "
            "true shows them on every card, so raters could group answers by arm); renumber "
            "the items in a random order or remove show_id"]
