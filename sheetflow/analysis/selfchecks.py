"""Per-rater self-checks (protocol 000 section 3.1), run for every study."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..rubric import Total
from .context import Context

# A per-rater total gap this share of the total's range (e.g. 3 of 0-20) should agree
# with the rater's own direction judgement (protocol 000 section 3.1, "consistency").

CONSISTENCY_GAP_SHARE = 0.15


def self_checks(ctx: Context) -> pd.DataFrame:
    """Per-rater sanity checks (protocol 000 section 3.1), for every study.

    Variance of totals, share of extreme totals, share of Medium/High confidence,
    mix of directions, and direction consistent with the rater's own totals.
    """
    rows = []
    total = ctx.study.rubric.totals[0] if ctx.study.rubric.totals else None
    pref = next((d for d in ctx.study.rubric.dimensions if d.kind == "preference"), None)
    lo_max = ctx.param("extreme_low_max")
    hi_min = ctx.param("extreme_high_min")
    conf_target = ctx.target("confidence_medium_high", 0.70)
    for rater, grp in ctx.first.groupby("rater"):
        row: dict[str, Any] = {"rater": rater}
        if total is not None:
            t = pd.to_numeric(grp.loc[grp["dimension"] == total.id, "value"], errors="coerce")
            row["total_sd"] = t.std(ddof=1)
            row["has_variance"] = bool(t.nunique() > 1)
            if lo_max is not None and hi_min is not None:
                row["extreme_share"] = float(((t <= lo_max) | (t >= hi_min)).mean())
        conf = grp["confidence"][grp["confidence"].astype(str) != ""]
        row["n_confidence"] = len(conf)
        row["medium_high_share"] = float(conf.isin(["Medium", "High"]).mean()) \
            if len(conf) else np.nan
        row["confidence_ok"] = bool(row["medium_high_share"] >= conf_target) \
            if len(conf) else None
        if pref is not None and total is not None:
            row.update(_direction_checks(ctx, grp, pref.id, total))
        rows.append(row)
    return pd.DataFrame(rows)


def _direction_checks(ctx: Context, grp: pd.DataFrame, pref_id: str, total: Total) -> dict:
    prefs = grp[grp["dimension"] == pref_id].set_index("case")["value"]
    totals = grp[grp["dimension"] == total.id]
    wide = totals.pivot_table(index="case", columns="arm", values="value", aggfunc="first")
    lo, hi = total.minimum or 0.0, total.maximum or 1.0
    gap = CONSISTENCY_GAP_SHARE * (hi - lo)
    checked = consistent = 0
    for case, row in wide.iterrows():
        vals = pd.to_numeric(row, errors="coerce").dropna()
        if len(vals) != 2 or abs(vals.iloc[0] - vals.iloc[1]) < gap or case not in prefs:
            continue
        checked += 1
        consistent += int(prefs[case] == vals.idxmax())
    kinds = set(prefs.dropna().astype(str))
    return {"direction_kinds": len(kinds), "mixed_directions": len(kinds) > 1,
            "n_direction_checked": checked,
            "direction_consistent_share": consistent / checked if checked else np.nan}
