"""A max-statistic permutation test when several ratings share one unit.

With two or more owners (protocol 001's multi-owner extension) every item is rated by
each owner, and an item's arm is a property of the item, not of the rating. Shuffling
arm labels across ratings as if they were independent (pseudo-replication) gives a p
that is too small when owners agree. :func:`clustered_permutation_best_of` shuffles
the labels across items instead, each item keeping all its ratings, within strata of
items rated by the same set of owners.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sheetflow.stats import _util

_COLUMNS = ("winner", "diff", "p", "p_fixed_winner", "n_candidates", "n_clusters",
            "n_strata", "n_ratings", "n_permutations", "seed", "reason")


def clustered_permutation_best_of(
    outcomes: Any,
    clusters: Any,
    groups: Any,
    candidates: Sequence[str],
    control: str,
    *,
    strata: Any | None = None,
    n_permutations: int = 10_000,
    seed: int | None = None,
) -> pd.DataFrame:
    r"""One-sided max-statistic permutation test of the best candidate vs a control,
    shuffling group labels across clusters (items), not across single ratings.

    Parameters
    ----------
    outcomes : array_like of {0, 1} or bool
        One outcome per rating (e.g. yield).
    clusters : array_like
        The unit each rating belongs to (the item); a cluster's ratings move together.
    groups : array_like of str
        Each rating's group (arm); it must be the same for every rating of a cluster.
    candidates : sequence of str
        The groups the best is chosen from.
    control : str
    strata : array_like, optional
        A label per rating, the same within a cluster; labels are shuffled only among
        clusters of one stratum (e.g. the set of owners who rated the item). One
        stratum when None.
    n_permutations : int, default 10000
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`; drawn and returned when None.

    Returns
    -------
    pandas.DataFrame
        One row: ``winner``, ``diff`` (its pooled share minus the control's), ``p``
        (the max-statistic p), ``p_fixed_winner`` (winner held fixed; for comparison
        only), ``n_candidates``, ``n_clusters``, ``n_strata``, ``n_ratings``,
        ``n_permutations``, ``seed``, ``reason``.

    Raises
    ------
    ValueError
        When a cluster's ratings carry more than one group or stratum, or the inputs
        differ in length.

    Notes
    -----
    The statistic is :math:`T = \max_c (\hat p_c - \hat p_0)`, each share pooled over
    the ratings of the group's clusters. Under the null the group labels are
    exchangeable among the clusters of a stratum; each shuffle relabels the clusters
    and takes the maximum afresh (Westfall & Young 1993). ``p = (b + 1)/(m + 1)``
    (Phipson & Smyth 2010). With one rating per cluster and one stratum this is the
    test of :func:`~sheetflow.stats.permutation_test_best_of`. Groups other than the
    candidates and the control take part in the shuffle.
    """
    if n_permutations < 1:
        raise ValueError("n_permutations must be a positive integer.")
    units = _units(outcomes, clusters, groups, strata)
    seed = _util.make_seed(seed)
    names = [*candidates, control]
    row: dict[str, Any] = {"n_candidates": len(candidates), "n_clusters": len(units),
                           "n_strata": int(units["stratum"].nunique()),
                           "n_ratings": int(units["n"].sum()),
                           "n_permutations": int(n_permutations), "seed": seed}
    present = set(units["group"])
    if not candidates or any(n not in present for n in names):
        return _util.frame({**row, "winner": "", "diff": np.nan, "p": np.nan,
                            "p_fixed_winner": np.nan, "reason": "a group is empty"}, _COLUMNS)
    codes = np.array([names.index(g) if g in names else len(names) for g in units["group"]])
    y, n = units["y"].to_numpy(float), units["n"].to_numpy(float)
    gaps = _gaps(codes[None, :], y, n, len(names))[0]
    best = int(np.argmax(gaps))  # the first listed on a tie
    null = _null_gaps(codes, units["stratum"].to_numpy(), y, n, len(names),
                      n_permutations, seed)
    tol = 1e-12
    hits_max = int((null.max(axis=1) >= gaps[best] - tol).sum())
    hits_fixed = int((null[:, best] >= gaps[best] - tol).sum())
    return _util.frame({**row, "winner": names[best], "diff": float(gaps[best]),
                        "p": (hits_max + 1) / (n_permutations + 1),
                        "p_fixed_winner": (hits_fixed + 1) / (n_permutations + 1),
                        "reason": ""}, _COLUMNS)


def _units(outcomes: Any, clusters: Any, groups: Any, strata: Any | None) -> pd.DataFrame:
    """One row per cluster: its outcome sum ``y``, rating count ``n``, group, stratum."""
    frame = pd.DataFrame({"y": np.asarray(outcomes, dtype=float),
                          "cluster": np.asarray(clusters, dtype=object),
                          "group": np.asarray(groups, dtype=object).astype(str),
                          "stratum": (np.zeros(len(np.asarray(clusters)), dtype=int)
                                      if strata is None else np.asarray(strata, dtype=object))})
    frame = frame[~frame["y"].isna()]
    if not np.isin(frame["y"], (0.0, 1.0)).all():
        raise ValueError("outcomes must be 0/1 or boolean.")
    per = frame.groupby("cluster", sort=True)
    for column in ("group", "stratum"):
        if (per[column].nunique() > 1).any():
            raise ValueError(f"a cluster's ratings carry more than one {column}.")
    return per.agg(y=("y", "sum"), n=("y", "size"), group=("group", "first"),
                   stratum=("stratum", "first")).reset_index()


def _gaps(codes: np.ndarray, y: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Per labelling (rows of ``codes``), each candidate's pooled share minus the
    control's (code ``k - 1``). Shape ``(rows, k - 1)``."""
    shares = np.empty((codes.shape[0], k))
    for g in range(k):
        mask = codes == g
        shares[:, g] = (mask @ y) / np.maximum(mask @ n, 1)
    return shares[:, :-1] - shares[:, -1:]


def _null_gaps(codes: np.ndarray, strata: np.ndarray, y: np.ndarray, n: np.ndarray,
               k: int, m: int, seed: int) -> np.ndarray:
    """The gaps under ``m`` relabellings within strata, in chunks to bound memory."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(strata == s) for s in pd.unique(strata)]
    out = np.empty((m, k - 1))
    chunk = max(1, 2_000_000 // max(codes.size, 1))
    for start in range(0, m, chunk):
        size = min(chunk, m - start)
        labels = np.tile(codes, (size, 1))
        for idx in members:
            labels[:, idx] = rng.permuted(labels[:, idx], axis=1)
        out[start : start + size] = _gaps(labels, y, n, k)
    return out
