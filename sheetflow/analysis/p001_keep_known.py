"""Protocol 001 (keep-known): yield per arm, Fisher, permutation, trend, verdicts.

Yield = P(KEEP and not KNOWN and not already in the corpus) per sitting-1 rating.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..study import Study
from .context import Analysis, Context, add_verdict, empty_reason, json_value, number
from .decision import Arms, Decision, flag_check, status_of
from .registry import ProtocolPlan


def _yield_items(ctx: Context) -> pd.DataFrame:
    """One row per sitting-1 rating: arm, band, keep, known, in corpus and yield (0/1)."""
    first = ctx.first
    wide = first.pivot_table(index=["rater", "case", "arm"], columns="dimension",
                             values="value", aggfunc="first").reset_index()
    items = {it.id: it.fields for it in ctx.study.items}
    in_col, band_col = ctx.param("in_corpus_column"), ctx.param("band_column")
    yes = {"yes", "y", "true", "1"}

    def flag(row: Any, col: str) -> bool:
        return str(row.get(col, "")).strip().lower() in yes

    wide["keep"] = [flag(r, "keep") for r in wide.to_dict("records")]
    wide["known"] = [flag(r, "known") for r in wide.to_dict("records")]
    wide["in_corpus"] = [str(items.get(c, {}).get(in_col, "")).strip().lower() in yes
                         if in_col else False for c in wide["case"]]
    wide["band"] = [items.get(c, {}).get(band_col, "") if band_col else ""
                    for c in wide["case"]]
    wide["yield"] = (wide["keep"] & ~wide["known"] & ~wide["in_corpus"]).astype(int)
    return wide[["rater", "case", "arm", "band", "keep", "known", "in_corpus", "yield"]]


def _yield_table(ctx: Context) -> pd.DataFrame:
    items = _yield_items(ctx)
    rows = []
    for arm in (a.id for a in ctx.study.design.arms):
        grp = items[items["arm"] == arm]
        n = len(grp)
        rows.append({"arm": arm, "n": n, "n_yield": int(grp["yield"].sum()),
                     "yield": grp["yield"].mean() if n else np.nan,
                     "n_keep": int(grp["keep"].sum()), "n_known": int(grp["known"].sum()),
                     "known_rate": grp["known"].mean() if n else np.nan,
                     "n_in_corpus": int(grp["in_corpus"].sum())})
    return pd.DataFrame(rows)


def _winner(ctx: Context, table: pd.DataFrame) -> str:
    """The candidate arm with the highest yield (first in the plan on a tie)."""
    cands = [c for c in ctx.param("candidates", []) if c in set(table["arm"])]
    if not cands:
        return ""
    yields = table.set_index("arm")["yield"]
    return max(cands, key=lambda c: (np.nan_to_num(yields[c], nan=-1.0), -cands.index(c)))


def _two_by_two(table: pd.DataFrame, a: str, b: str) -> list[list[int]]:
    t = table.set_index("arm")
    return [[int(t.loc[a, "n_yield"]), int(t.loc[a, "n"] - t.loc[a, "n_yield"])],
            [int(t.loc[b, "n_yield"]), int(t.loc[b, "n"] - t.loc[b, "n_yield"])]]


def _yield_fisher(ctx: Context) -> pd.DataFrame:
    """Yield per arm and one-sided Fisher tests: winner vs control (and vs reference)."""
    table = _yield_table(ctx)
    winner, rows = _winner(ctx, table), []
    for role, other in (("primary", ctx.param("control")),
                        ("secondary", ctx.param("reference"))):
        if not winner or not other or other not in set(table["arm"]):
            continue
        res = stats.fisher_exact_test(_two_by_two(table, winner, other), alternative="greater")
        rows.append({"arm": f"test: {winner} vs {other}", "test": role,
                     **res.iloc[0].to_dict()})
    return pd.concat([table.assign(test="yield"), pd.DataFrame(rows)], ignore_index=True)


def _permutation(ctx: Context) -> pd.DataFrame:
    """Permutation test of the yield gap, winner vs control (labels shuffled)."""
    items = _yield_items(ctx)
    table = _yield_table(ctx)
    winner, control = _winner(ctx, table), ctx.param("control")
    if not winner or not control:
        return empty_reason(pd.DataFrame(), "no candidate or control arm", comparison="")
    # protocol 001: arm labels are shuffled across all scored items, every arm's
    # included; the gap is then read off the winner's and the control's positions
    others = items.loc[~items["arm"].isin([winner, control]), "yield"]
    res = stats.permutation_test_proportions(
        items.loc[items["arm"] == winner, "yield"], items.loc[items["arm"] == control, "yield"],
        others=others, alternative="greater",
        n_permutations=int(ctx.param("permutations", 10_000)), seed=ctx.plan.seed)
    return pd.DataFrame([{"comparison": f"{winner} vs {control}", "winner": winner,
                          "control": control, **res.iloc[0].to_dict()}])


def _trend(ctx: Context) -> pd.DataFrame:
    """Cochran-Armitage trend of yield across ordered distance bands."""
    items = _yield_items(ctx)
    bands = _ordered_bands(items["band"].unique().tolist())
    counts = [(b, int(items.loc[items["band"] == b, "yield"].sum()),
               int((items["band"] == b).sum())) for b in bands]
    res = stats.cochran_armitage([c[1] for c in counts], [c[2] for c in counts])
    per_band = pd.DataFrame([{"band": b, "n_yield": x, "n": n, "yield": x / n if n else np.nan,
                              "none_rate": _none_rate(items, b)} for b, x, n in counts])
    test = res.assign(band="trend test")
    return pd.concat([per_band, test], ignore_index=True)


def _none_rate(items: pd.DataFrame, band: str) -> float:
    grp = items[items["band"] == band]
    return float((~grp["keep"] & ~grp["known"]).mean()) if len(grp) else np.nan


_BAND_ORDER = ("near", "close", "low", "mid", "medium", "middle", "far", "high", "distant")


def _ordered_bands(bands: list[str]) -> list[str]:
    """Bands in their natural order: numeric, then known words (near..far), then text."""
    def key(b: str) -> tuple[int, float, str]:
        num = number(b)
        if not math.isnan(num):
            return (0, num, b)
        low = b.strip().lower()
        return (1, float(_BAND_ORDER.index(low)), b) if low in _BAND_ORDER else (2, 0.0, b)
    return sorted((b for b in bands if b != ""), key=key)


def verdicts(analysis: Analysis) -> list[dict[str, Any]]:
    """One record per rated item and sitting (protocol 001 ``verdicts.jsonl``).

    Each record has ``item_id, arm, rater, sitting`` and one key per dimension.
    """
    data = analysis.data
    dims = [d.id for d in analysis.study.rubric.dimensions]
    records = []
    for (rater, sitting, case, arm), grp in data.groupby(["rater", "sitting", "case", "arm"]):
        marks = dict(zip(grp["dimension"], grp["value"], strict=False))
        rec = {"item_id": case, "arm": arm, "rater": rater, "sitting": int(sitting)}
        rec.update({d: json_value(marks.get(d)) for d in dims if d in marks})
        records.append(rec)
    return records


def _h_yield(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    y = table[table["test"] == "yield"]
    out["yield"] = {r["arm"]: r["yield"] for r in y.to_dict("records")}
    tests = table[table["test"] != "yield"]
    out["fisher"] = [{"comparison": r["arm"], "p": r["p"], "odds_ratio": r["odds_ratio"]}
                     for r in tests.to_dict("records")]


def _h_permutation(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "p" not in table:
        return
    row = table.iloc[0]
    out["permutation"] = {"comparison": row["comparison"], "diff": row["diff"], "p": row["p"],
                          "n_permutations": row["n_permutations"], "seed": row["seed"]}
    alpha = ctx.target("alpha_test", 0.05)
    yields = out.get("yield") or _yield_table(ctx).set_index("arm")["yield"].to_dict()
    ref = ctx.param("reference")
    above_ref = bool(yields.get(row["winner"], np.nan) > yields.get(ref, np.nan)) if ref \
        else True
    signal = bool(row["p"] < alpha) and above_ref
    add_verdict(out, "signal (permutation p below alpha and winner above reference)", row["p"],
             alpha, signal, "signal" if signal else "null: published as one")


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """Protocol 001's signal rule: permutation p below alpha and the winner above the
    reference arm; anything else is a null (status "fail": no signal)."""
    alpha = ctx.target("alpha_test", 0.05)
    perm = out.get("permutation") or {}
    p = perm.get("p")
    winner, ref = _winner(ctx, _yield_table(ctx)), ctx.param("reference")
    checks = [flag_check(f"permutation p ({perm.get('comparison', 'winner vs control')})",
                         None if p is None or not np.isfinite(p) else bool(p < alpha), p,
                         alpha, "one-sided; below the target is a signal")]
    if ref:
        yields = out.get("yield") or {}
        ahead = yields.get(winner), yields.get(ref)
        ok = None if None in ahead or not all(np.isfinite(ahead)) else bool(ahead[0] > ahead[1])
        checks.append(flag_check(f"winner {winner or '?'} above reference {ref}", ok,
                                 ahead[0], ahead[1], "yield of the winner vs the reference"))
    rule = (f"signal when the permutation p of the best candidate vs the control is below "
            f"{alpha:g} and the winner's yield is above the reference arm's; anything else "
            "is a null, published as one")
    return Decision(status_of(checks), rule, checks)


def _arms(ctx: Context, tables: dict[str, pd.DataFrame]) -> Arms | None:
    """The best candidate vs the control: yield gap and permutation p."""
    table = _yield_table(ctx)
    winner, control = _winner(ctx, table), ctx.param("control")
    if not winner or not control or control not in set(table["arm"]):
        return None
    yields = table.set_index("arm")["yield"]
    perm = tables.get("permutation")
    p = float(perm["p"].iloc[0]) if perm is not None and "p" in perm else None
    gap = float(yields[winner] - yields[control])
    return Arms(winner=winner if gap > 0 else "", other=control, effect=gap,
                effect_measure="yield difference", ci=None, p=p,
                test="permutation test of the yield gap (one-sided)",
                means={a: float(v) for a, v in yields.items()},
                note="" if gap > 0 else "the best candidate is not above the control")


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    plan = study.plan
    return [
        ("Permutation test",
         "Arm labels shuffled across all scored items (every arm, as protocol 001 says) "
         f"{int(plan.params.get('permutations', 10000))} times with seed {plan.seed}; the "
         "gap is the winner's yield minus the control's under each relabelling; "
         "p = (b + 1)/(m + 1), counting the observed labelling (Phipson & Smyth 2010)."),
        ("Yield, Fisher and trend (001)",
         "Yield = P(KEEP and not KNOWN and not already in corpus) per sitting-1 rating. "
         "Primary: one-sided Fisher exact test, the candidate with the higher yield vs the "
         "control; secondary vs the reference arm. Cochran-Armitage chi-square for a linear "
         "trend in yield across ordered distance bands (scores 1..G). Intra-rater kappa: "
         "Cohen's kappa between sitting 1 and sitting 2 on the repeated items."),
    ]


PLAN = ProtocolPlan(
    protocol="001",
    template="keep-known",
    analyses={
        "yield_fisher": _yield_fisher,
        "permutation": _permutation,
        "trend": _trend,
    },
    headlines={
        "yield_fisher": _h_yield,
        "permutation": _h_permutation,
    },
    methods=methods,
    decide=_decide,
    arms=_arms,
    method_topics={
        "Permutation test": ("permutation",),
        "Yield, Fisher and trend (001)": ("yield_fisher", "trend", "intra_rater_kappa",),
    },
)
