"""Per-rater self-checks (protocol 000 section 3.1), run for every study."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..spec.rubric import Total, total_range
from ..words import settled
from .context import Context, empty_reason

# A per-rater total gap this share of the total's range (e.g. 3 of 0-20) should agree
# with the rater's own direction judgement (protocol 000 section 3.1, "consistency").

CONSISTENCY_GAP_SHARE = 0.15
NOTHING_TO_CHECK = ("no self-check applies, as the checks read each rater's totals (their "
                    "spread, the extreme ones, and whether the direction judgement names "
                    "the higher total) and the confidence given with the answers, and "
                    "this rubric has no total and asks for no confidence")


def self_checks(ctx: Context) -> pd.DataFrame:
    """Per-rater sanity checks (protocol 000 section 3.1), for every study.

    Variance of totals, share of extreme totals, share of Medium/High confidence,
    mix of directions, and direction consistent with the rater's own totals. The
    confidence checks are left out when the rubric asks for no confidence and no
    rater gave one (every count would be 0); a study with neither a total nor
    confidences gets a table of one ``reason`` (:data:`NOTHING_TO_CHECK`).
    """
    total = ctx.study.rubric.totals[0] if ctx.study.rubric.totals else None
    pref = next((d for d in ctx.study.rubric.dimensions if d.kind == "preference"), None)
    first = ctx.first
    if first.empty:
        return pd.DataFrame()
    confidence = _confidence_asked(ctx.study.rubric.dimensions) or \
        bool((first["confidence"].astype(str) != "").any())
    if total is None and not confidence:
        return empty_reason(first, NOTHING_TO_CHECK)
    raters = pd.Index(sorted(first["rater"].unique()), name="rater")
    table = pd.DataFrame({"rater": raters})
    if total is not None:
        table = table.join(_total_checks(first, total, ctx.param("extreme_low_max"),
                                         ctx.param("extreme_high_min")).reindex(raters)
                           .reset_index(drop=True))
        table["has_variance"] = table["has_variance"].fillna(False).astype(bool)
    if confidence:
        conf = _confidence_checks(first, raters, ctx.target("confidence_medium_high", 0.70))
        table = table.join(conf.reset_index(drop=True))
    if pref is not None and total is not None and not table.empty:
        checks = _direction_checks(ctx.first, pref.id, total,
                                   total_range(total, ctx.study.rubric))
        table = table.join(checks, on="rater")
    return table


def _confidence_asked(dimensions: Any) -> bool:
    """Whether any dimension asks for a confidence beside its answer."""
    return any(getattr(d, "confidence", False) for d in dimensions)


def _total_checks(first: pd.DataFrame, total: Total, lo_max: Any, hi_min: Any
                  ) -> pd.DataFrame:
    """Per rater with totals: their SD (ddof 1), whether they vary, and the share of
    extreme totals (of all their total rows; a total that is not a number is not
    extreme), all raters at once."""
    rows = first[first["dimension"] == total.id]
    t = pd.to_numeric(rows["value"], errors="coerce")
    by = t.groupby(rows["rater"].to_numpy())
    out = pd.DataFrame({"total_sd": by.std(ddof=1), "has_variance": by.nunique() > 1})
    if lo_max is not None and hi_min is not None:
        out["extreme_share"] = ((t <= lo_max) | (t >= hi_min)).astype(float) \
            .groupby(rows["rater"].to_numpy()).mean()
    return out


def _confidence_checks(first: pd.DataFrame, raters: pd.Index, target: float
                       ) -> pd.DataFrame:
    """Per rater: confidences given, the share Medium or High and whether it reaches
    ``target`` (None for a rater who gave none), all raters at once."""
    given = first["confidence"].astype(str) != ""
    conf = first.loc[given, "confidence"]
    by = conf.isin(["Medium", "High"]).groupby(first.loc[given, "rater"].to_numpy())
    out = pd.DataFrame({"n_confidence": by.size(), "medium_high_share": by.mean()})
    out = out.reindex(raters)
    out["n_confidence"] = out["n_confidence"].fillna(0).astype(int)
    # a share at the target up to rounding is at it, as the Summary reads a figure
    out["confidence_ok"] = [bool(settled(s, (target,)) >= target) if n else None for s, n in
                            zip(out["medium_high_share"], out["n_confidence"], strict=True)]
    return out


def _chosen_labels(first: pd.DataFrame, prefs: pd.DataFrame) -> pd.Series:
    """Each direction as the rater gave it: the label they named (``A``), not the arm it
    was unblinded to. A rater who always names ``A`` names both arms (sides are
    balanced), so a mix counted on arms would hide exactly the pattern it looks for."""
    given = prefs.dropna(subset=["value"])
    shown = first[first["label"] != ""].drop_duplicates(["rater", "case", "arm"]) \
        .set_index(["rater", "case", "arm"])["label"]
    keys = pd.MultiIndex.from_arrays([given["rater"], given["case"],
                                      given["value"].astype(str)])
    labels = pd.Series(shown.reindex(keys).to_numpy(), index=given.index)
    return labels.fillna(given["value"].astype(str))  # Tied, or a design without labels


def _direction_checks(first: pd.DataFrame, pref_id: str, total: Total,
                      bounds: tuple[float, float]) -> pd.DataFrame:
    """Per rater: kinds of direction given, and the share of cases whose total gap is at
    least :data:`CONSISTENCY_GAP_SHARE` of the total's range (``bounds``, as collect's
    self-check reads it) where the direction names the response with the higher total
    (all raters at once)."""
    prefs = first[first["dimension"] == pref_id].drop_duplicates(["rater", "case"])
    totals = first[first["dimension"] == total.id]
    wide = totals.assign(value=pd.to_numeric(totals["value"], errors="coerce")).pivot_table(
        index=["rater", "case"], columns="arm", values="value", aggfunc="first")
    lo, hi = bounds
    if wide.shape[1] == 2:
        both = wide.dropna()
        bar = CONSISTENCY_GAP_SHARE * (hi - lo)
        # a gap at the bar up to rounding (two mean totals) is at it
        gaps = (both.iloc[:, 0] - both.iloc[:, 1]).abs().map(lambda g: settled(g, (bar,)))
        decided = both[gaps >= bar]
    else:  # no case with both arms' totals (a dimension of the total left blank by all)
        decided = wide.iloc[0:0]
    higher = decided.idxmax(axis=1).rename("higher").reset_index() if len(decided) else \
        pd.DataFrame(columns=["rater", "case", "higher"])
    judged = higher.merge(prefs[["rater", "case", "value"]], on=["rater", "case"])
    judged["consistent"] = judged["value"] == judged["higher"]
    per_rater = judged.groupby("rater").agg(n_direction_checked=("consistent", "size"),
                                            consistent=("consistent", "sum"))
    kinds = _chosen_labels(first, prefs).groupby(prefs["rater"]).nunique() \
        .rename("direction_kinds")
    out = pd.DataFrame(index=pd.Index(first["rater"].unique(), name="rater"))
    out = out.join(kinds).join(per_rater)
    out["direction_kinds"] = out["direction_kinds"].fillna(0).astype(int)
    out["mixed_directions"] = out["direction_kinds"] > 1
    out["n_direction_checked"] = out["n_direction_checked"].fillna(0).astype(int)
    out["direction_consistent_share"] = np.where(
        out["n_direction_checked"] > 0,
        out["consistent"] / out["n_direction_checked"].where(out["n_direction_checked"] > 0),
        np.nan)
    return out[["direction_kinds", "mixed_directions", "n_direction_checked",
                "direction_consistent_share"]]
