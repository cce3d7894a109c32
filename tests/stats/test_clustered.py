"""The clustered max-statistic permutation test (protocol 001 with several owners).

References: exact p by enumerating every relabelling the null allows (all
permutations of the group labels within each stratum, each equally likely), and, for
one rating per cluster, the exact multivariate-hypergeometric p of the unclustered
test (tests/stats/test_published_more.py). Westfall & Young (1993) for the max-T
construction; Phipson & Smyth (2010) for p = (b + 1)/(m + 1).
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

import sheetflow.stats as st


def _exact(units: list[tuple[str, str, list[int]]]) -> float:
    """Exact p: clusters (stratum, group, outcomes); labels permuted within strata."""
    strata = sorted({u[0] for u in units})

    def stat(labels: list[str]) -> float:
        share = {}
        for g in ("b", "c", "a"):
            ys = [y for u, lab in zip(units, labels, strict=True) if lab == g for y in u[2]]
            share[g] = np.mean(ys)
        return max(share["b"], share["c"]) - share["a"]

    observed = stat([u[1] for u in units])
    per_stratum = []
    for s in strata:
        idx = [i for i, u in enumerate(units) if u[0] == s]
        per_stratum.append((idx, list(permutations([units[i][1] for i in idx]))))
    hits = total = 0

    def walk(k: int, labels: list[str]) -> None:
        nonlocal hits, total
        if k == len(per_stratum):
            total += 1
            hits += stat(labels) >= observed - 1e-12
            return
        idx, perms = per_stratum[k]
        for perm in perms:
            new = list(labels)
            for i, lab in zip(idx, perm, strict=True):
                new[i] = lab
            walk(k + 1, new)

    walk(0, [u[1] for u in units])
    return hits / total


UNITS = [("o1", "b", [1, 1]), ("o1", "c", [1, 0]), ("o1", "a", [0, 0]), ("o1", "d", [1, 0]),
         ("o1", "b", [1, 0]), ("o2", "c", [0]), ("o2", "a", [0]), ("o2", "b", [1]),
         ("o2", "d", [0])]


def _flat(units):
    y, cl, gr, sr = [], [], [], []
    for i, (s, g, ys) in enumerate(units):
        y += ys
        cl += [i] * len(ys)
        gr += [g] * len(ys)
        sr += [s] * len(ys)
    return y, cl, gr, sr


def test_matches_the_exact_p_of_relabelling_within_strata():
    exact = _exact(UNITS)
    y, cl, gr, sr = _flat(UNITS)
    m = 20_000
    res = st.clustered_permutation_best_of(y, cl, gr, ["b", "c"], "a", strata=sr,
                                           n_permutations=m, seed=3).iloc[0]
    assert res["winner"] == "b" and res["n_clusters"] == 9 and res["n_strata"] == 2
    assert res["diff"] == pytest.approx(4 / 5)  # b pooled: 4 of its 5 ratings; a: none
    se = (exact * (1 - exact) / m) ** 0.5
    assert abs(res["p"] - exact) < 4 * se + 1 / m, (res["p"], exact)
    assert res["p"] >= res["p_fixed_winner"]


def test_one_rating_per_cluster_is_the_unclustered_test():
    # exact max-statistic p of test_published_more: groups of 10, b3 3, b6 5, b1 1, b4 3
    exact = 0.0819948  # _exact_best_of(10, {"b3": 3, "b6": 5}, 1, 3) there
    n, ones = 10, {"b3": 3, "b6": 5, "b1": 1, "b4": 3}
    y = [v for k in ones for v in [1] * ones[k] + [0] * (n - ones[k])]
    groups = [k for k in ones for _ in range(n)]
    m = 20_000
    clustered = st.clustered_permutation_best_of(y, range(len(y)), groups, ["b3", "b6"],
                                                 "b1", n_permutations=m, seed=11).iloc[0]
    plain = st.permutation_test_best_of(
        {k: [1] * ones[k] + [0] * (n - ones[k]) for k in ("b3", "b6")},
        [1] + [0] * 9, others=[1] * 3 + [0] * 7, n_permutations=m, seed=5).iloc[0]
    se = (exact * (1 - exact) / m) ** 0.5
    assert abs(clustered["p"] - plain["p"]) < 6 * se + 2 / m
    assert abs(clustered["p"] - exact) < 4 * se + 0.001


def test_refuses_a_cluster_with_two_groups_and_non_binary_outcomes():
    with pytest.raises(ValueError, match="more than one group"):
        st.clustered_permutation_best_of([1, 0], [1, 1], ["b", "a"], ["b"], "a")
    with pytest.raises(ValueError, match="0/1"):
        st.clustered_permutation_best_of([2, 0], [1, 2], ["b", "a"], ["b"], "a")


def test_an_empty_group_is_named_not_guessed():
    res = st.clustered_permutation_best_of([1, 0], [1, 2], ["b", "d"], ["b"], "a").iloc[0]
    assert res["reason"] == "a group is empty" and np.isnan(res["p"])
