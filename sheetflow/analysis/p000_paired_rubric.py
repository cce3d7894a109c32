"""Protocol 000 (paired-rubric): direction agreement, Spearman vs internal, Wilcoxon.

Paired A/B responses scored on a rubric, with a direction per case. The analyses here
compare arms and the external raters' direction with references (the expected winner,
the internal team's scores).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import stats
from ..study import Study
from .context import TIED, Context, add_verdict, empty_reason
from .registry import ProtocolPlan


def _direction(ctx: Context) -> pd.DataFrame:
    """Direction agreement on unblinded preferences: pairwise, vs majority, vs expected."""
    frames = []
    for dim in (d for d in ctx.study.rubric.dimensions if d.kind == "preference"):
        values = ctx.ratings(dim.id)
        for against in ("pairs", "majority"):
            res = stats.direction_agreement(values, against=against)
            res.insert(0, "measure", dim.id)
            res.insert(1, "comparison", against)
            frames.append(res)
        for basis, ref in _direction_references(ctx, values).items():
            frames.append(_against_reference(values, ref, dim.id, basis))
    if not frames:
        return empty_reason(pd.DataFrame(), "no preference dimension", measure="")
    return pd.concat(frames, ignore_index=True)


def _direction_references(ctx: Context, values: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Reference direction per case: the expected winner and/or the internal scores."""
    refs: dict[str, dict[str, str]] = {}
    expected = ctx.param("expected_winner")
    if expected:
        refs["expected winner"] = {c: str(expected) for c in values["unit"].unique()}
    if ctx.internal is not None and not ctx.internal.empty:
        refs["internal scores"] = _internal_direction(ctx.internal)
    return refs


def _internal_direction(internal: pd.DataFrame) -> dict[str, str]:
    out = {}
    for case, grp in internal.groupby("case"):
        totals = grp.set_index("arm")["total"]
        best = totals[totals == totals.max()]
        out[str(case)] = str(best.index[0]) if len(best) == 1 else TIED
    return out


def _against_reference(values: pd.DataFrame, ref: dict[str, str], dim_id: str,
                       basis: str) -> pd.DataFrame:
    rows = []
    for rater, grp in values.groupby("rater"):
        usable = grp[grp["unit"].isin(ref)]
        agree = int(sum(ref[u] == v for u, v in zip(usable["unit"], usable["value"],
                                                     strict=True)))
        n = len(usable)
        rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": rater,
                     "other": basis, "n_units": n, "n_agree": agree,
                     "agreement": agree / n if n else np.nan, "n_ties": 0,
                     "reason": "" if n else "no case with a reference direction"})
    pooled_n = sum(r["n_units"] for r in rows)
    pooled = sum(r["n_agree"] for r in rows)
    rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": "all raters",
                 "other": basis, "n_units": pooled_n, "n_agree": pooled,
                 "agreement": pooled / pooled_n if pooled_n else np.nan, "n_ties": 0,
                 "reason": "" if pooled_n else "no judgement to compare"})
    return pd.DataFrame(rows)


def _spearman(ctx: Context) -> pd.DataFrame:
    """Spearman's rho of mean external totals vs internal totals per (case, arm)."""
    if ctx.internal is None or ctx.internal.empty:
        return empty_reason(pd.DataFrame(), "no internal scores file", measure="")
    rows = []
    for total in ctx.study.rubric.totals:
        ext = ctx.numeric(total.id).groupby(["case", "arm"])["value"].mean().rename("external")
        merged = ctx.internal.set_index(["case", "arm"])["total"].rename("internal")
        joined = pd.concat([ext, merged], axis=1, join="inner").dropna()
        res = stats.spearman(joined["external"], joined["internal"])
        rows.append({"measure": total.id, **res.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def _wilcoxon(ctx: Context) -> pd.DataFrame:
    """Wilcoxon signed-rank on per-case mean totals, second arm minus first arm."""
    arms = [a.id for a in ctx.study.design.arms]
    if len(arms) != 2:
        return empty_reason(pd.DataFrame(), "needs exactly two arms", measure="")
    rows = []
    for total in ctx.study.rubric.totals:
        wide = ctx.numeric(total.id).pivot_table(index="case", columns="arm", values="value",
                                                 aggfunc="mean").reindex(columns=arms)
        res = stats.wilcoxon_signed_rank(wide[arms[1]], wide[arms[0]])
        diff = (wide[arms[1]] - wide[arms[0]]).dropna()
        rows.append({"measure": total.id, "arm_x": arms[1], "arm_y": arms[0],
                     "mean_x": wide[arms[1]].mean(), "mean_y": wide[arms[0]].mean(),
                     "median_diff": diff.median() if len(diff) else math.nan,
                     **res.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def _arm_comparison(ctx: Context) -> pd.DataFrame:
    """Mean, SD and count of each total per arm (descriptive)."""
    rows = []
    for total in ctx.study.rubric.totals:
        values = ctx.numeric(total.id)
        for arm in (a.id for a in ctx.study.design.arms):
            v = values.loc[values["arm"] == arm, "value"]
            rows.append({"measure": total.id, "arm": arm, "n": len(v), "mean": v.mean(),
                         "sd": v.std(ddof=1), "median": v.median()})
    return pd.DataFrame(rows)


def _h_direction(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "comparison" not in table:
        return
    pairs = table[table["comparison"] == "pairs"]
    pooled = table[table["rater"] == "all raters"]
    out["direction_agreement"] = {
        "pairwise_mean": float(pairs["agreement"].mean()) if len(pairs) else None,
        **{r["comparison"]: r["agreement"] for r in pooled.to_dict("records")}}
    target = ctx.target("direction_agreement")
    if target is not None:
        basis = pooled.iloc[0] if len(pooled) else None
        value = basis["agreement"] if basis is not None else out["direction_agreement"][
            "pairwise_mean"]
        note = basis["comparison"] if basis is not None else "mean pairwise agreement"
        add_verdict(out, "direction agreement", value, target,
                 bool(value >= target) if value is not None and np.isfinite(value) else None,
                 note)


def _h_spearman(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "rho" not in table:
        return
    out["spearman"] = table.to_dict("records")
    target = ctx.target("spearman")
    if target is not None and len(table):
        rho = table["rho"].iloc[0]
        add_verdict(out, "Spearman vs internal", rho, target,
                 bool(rho >= target) if np.isfinite(rho) else None)


def _h_wilcoxon(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "p" in table:
        out["wilcoxon"] = table.to_dict("records")


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    return [
        ("Direction agreement",
         "Preferences are unblinded first: 'A>B' becomes 'the arm shown under A preferred' "
         "for that rater and case, so raters who saw different sides are comparable. "
         "Pairwise agreement, each rater vs the majority of the others (tied majorities "
         "left out), and the share agreeing with the expected winner (params.expected_winner) "
         "or with the internal scores' direction when available."),
        ("Spearman vs internal",
         "Spearman's rho between the mean external total and the internal total per case "
         "and arm; 95% interval by Fisher's z with the Fieller-Hartley-Pearson standard error "
         "sqrt(1.06/(n-3))."),
        ("Wilcoxon signed-rank",
         "Per case the mean total over raters for each arm; signed-rank test of the second "
         "arm minus the first (scipy, zero differences dropped)."),
    ]


PLAN = ProtocolPlan(
    protocol="000",
    template="paired-rubric",
    analyses={
        "direction_agreement": _direction,
        "spearman_internal": _spearman,
        "arm_comparison": _arm_comparison,
        "wilcoxon_totals": _wilcoxon,
    },
    headlines={
        "direction_agreement": _h_direction,
        "spearman_internal": _h_spearman,
        "wilcoxon_totals": _h_wilcoxon,
    },
    methods=methods,
)
