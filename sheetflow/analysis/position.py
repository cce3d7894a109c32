"""Position bias in paired designs: does a rater favour whichever response sits under A?

Runs for every paired design with a preference dimension, whatever the plan's ``run``
list says (sides are randomised per rater and case, so the check is always possible and
always relevant). Two tables:

- ``position_bias``: per rater (human or automated judge) and pooled, the share of
  decisive judgements (ties and blanks left out) that chose the response under the
  first label, with an exact two-sided binomial test against one half and a
  Clopper-Pearson interval. A rater is flagged when ``p`` is below the plan's limit
  *and* the share lies outside the plan's band (``[analysis.params]
  position_bias_p``, default 0.05; ``position_bias_share``, default [0.35, 0.65]).
- ``position_free_preference``: the preference for the arm under test (the spec's
  ``improved_arm``, else the design's second arm) counted separately for the cases
  where it sat under A and under B, and the preference with position removed (a
  logistic model with an effect-coded side; see
  :func:`sheetflow.stats.proportions.position_free_preference`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..spec.study import Study
from ..stats.proportions import binomial_share, position_free_preference
from ..words import CI_LEVEL, few_units_note, interval_said, p_said, percent, shown_percent
from .context import Context, json_safe
from .protocol import ProtocolPlan, fixed_methods

POOLED = "all raters"
DEFAULT_P, DEFAULT_BAND = 0.05, (0.35, 0.65)
BIAS_COLUMNS = ["dimension", "rater", "role", "n", "n_chose_a", "share_a", "p", "ci_low",
                "ci_high", "flagged", "reason", "note"]


def applies(study: Study) -> bool:
    """A paired design with two labels and at least one preference dimension."""
    return study.design.kind == "paired" and len(study.design.labels) >= 2 and any(
        d.kind == "preference" for d in study.rubric.dimensions)


def limits(ctx: Context) -> tuple[float, tuple[float, float]]:
    """The plan's p limit and share band for a flag."""
    band = ctx.param("position_bias_share", DEFAULT_BAND)
    return float(ctx.param("position_bias_p", DEFAULT_P)), (float(band[0]), float(band[1]))


def choices(ctx: Context) -> pd.DataFrame:
    """Decisive sitting-1 judgements: dimension, rater, role, case, chosen arm, arm under A.

    The arm under A comes from the unblinded response rows of the same rater and case
    (their ``label`` and ``arm``).
    """
    first_label = ctx.study.design.labels[0]
    arms = {a.id for a in ctx.study.design.arms}
    data = ctx.first
    under_a = (data[(data["label"] == first_label) & (data["arm"] != "")]
               .drop_duplicates(["rater", "case"])[["rater", "case", "arm"]]
               .rename(columns={"arm": "arm_under_a"}))
    prefs = data[data["dimension"].isin(_preference_ids(ctx.study))]
    prefs = prefs[prefs["value"].isin(arms)]
    out = prefs.merge(under_a, on=["rater", "case"], how="inner")
    return out.rename(columns={"value": "chosen"})[
        ["dimension", "rater", "role", "case", "chosen", "arm_under_a"]]


def _preference_ids(study: Study) -> list[str]:
    return [d.id for d in study.rubric.dimensions if d.kind == "preference"]


def position_bias(ctx: Context) -> pd.DataFrame:
    """Share of decisive judgements choosing label A, per rater and pooled (see module)."""
    picks = choices(ctx)
    p_limit, (low, high) = limits(ctx)
    parts = []
    tested: dict[tuple[int, int], tuple] = {}  # raters share few (k, n): test each once
    fields = ["share", "p", "ci_low", "ci_high", "reason"]
    for dim_id in _preference_ids(ctx.study):
        mine = picks[picks["dimension"] == dim_id]
        chose_a = mine["chosen"] == mine["arm_under_a"]
        counts = mine.assign(chose_a=chose_a).groupby("rater", sort=False).agg(
            n=("chose_a", "size"), n_chose_a=("chose_a", "sum"), role=("role", "first"))
        counts.loc[POOLED] = [len(mine), int(chose_a.sum()), ""]
        n, n_chose_a = (counts[c].astype(int).to_numpy() for c in ("n", "n_chose_a"))
        keys = list(zip(n_chose_a.tolist(), n.tolist(), strict=True))
        for key in set(keys) - tested.keys():
            tested[key] = tuple(binomial_share(*key).iloc[0][fields])
        res = pd.DataFrame([tested[key] for key in keys], columns=fields)
        flagged = (n > 0) & (res["p"].to_numpy() < p_limit) & ~(
            (res["share"].to_numpy() >= low) & (res["share"].to_numpy() <= high))
        parts.append(pd.DataFrame({
            "dimension": dim_id, "rater": counts.index.to_numpy(),
            "role": counts["role"].to_numpy(), "n": n, "n_chose_a": n_chose_a,
            "share_a": res["share"].to_numpy(float), "p": res["p"].to_numpy(float),
            "ci_low": res["ci_low"].to_numpy(float), "ci_high": res["ci_high"].to_numpy(float),
            "flagged": flagged, "reason": res["reason"].to_numpy(),
            "note": _few_units_marks(n, res["ci_low"], res["ci_high"])}))
    return pd.concat(parts, ignore_index=True)[list(BIAS_COLUMNS)] if parts else \
        pd.DataFrame(columns=BIAS_COLUMNS)


def _few_units_marks(n: Any, low: pd.Series, high: pd.Series) -> list[str]:
    """Each interval's few-units mark, its units the decisive judgements ``n``."""
    return [few_units_note(k, a, b) for k, a, b in
            zip(list(n), low.tolist(), high.tolist(), strict=True)]


def arm_under_test(ctx: Context) -> str:
    """The spec's improved arm, else the design's second arm."""
    named = str(ctx.param("improved_arm", "") or "")
    arms = [a.id for a in ctx.study.design.arms]
    return named if named in arms else (arms[1] if len(arms) > 1 else "")


def position_free(ctx: Context) -> pd.DataFrame:
    """The arm under test's preference by side shown, and with position removed."""
    picks = choices(ctx)
    arm = arm_under_test(ctx)
    parts = []
    for dim_id in _preference_ids(ctx.study):
        mine = picks[picks["dimension"] == dim_id]
        shown_a = mine["arm_under_a"] == arm
        chosen = mine["chosen"] == arm
        strata = pd.DataFrame({"k_first": chosen & shown_a, "n_first": shown_a,
                               "k_second": chosen & ~shown_a, "n_second": ~shown_a})
        counts = strata.groupby(mine["rater"], sort=False).sum()
        counts.loc[POOLED] = strata.sum()  # every rater's judgements together, last
        res = position_free_preference(*(counts[c].to_numpy() for c in strata.columns),
                                       confidence=CI_LEVEL)  # the level its line says
        judged = (counts["n_first"] + counts["n_second"]).to_numpy()
        parts.append(pd.DataFrame({"dimension": dim_id, "rater": counts.index.to_numpy(),
                                   "arm": arm}).join(res).assign(
            note=_few_units_marks(judged, res["ci_low"], res["ci_high"])))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def summary_part(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """``position_bias`` and ``position_free_preference`` entries of ``summary.json``."""
    bias = tables.get("position_bias")
    free = tables.get("position_free_preference")
    out: dict[str, Any] = {}
    if bias is not None and "share_a" in bias:
        out["position_bias"] = [
            {"dimension": r.dimension, "rater": r.rater, "share_a": r.share_a, "n": r.n,
             "p": r.p, "ci": [r.ci_low, r.ci_high], "flagged": bool(r.flagged),
             "note": r.note}
            for r in bias.itertuples()]
    if free is not None and "preference" in free:
        pooled = free[free["rater"] == POOLED]
        out["position_free_preference"] = [
            {"dimension": r.dimension, "arm": r.arm, "preference": r.preference,
             "ci": [r.ci_low, r.ci_high], "share_when_under_a": r.share_first,
             "share_when_under_b": r.share_second, "reason": r.reason, "note": r.note}
            for r in pooled.itertuples()]
    return json_safe(out)


def readings(summary: dict[str, Any], ctx: Context) -> list[str]:
    """Sentences for the Summary when position changes how a verdict should be read."""
    p_limit, (low, high) = limits(ctx)
    lines = []
    for row in summary.get("position_bias", []):
        if row["rater"] == POOLED:
            share = row["share_a"]
            lines.append(
                f"Position: label A chosen in {shown_percent(share, (low,), (high,))} of "
                f"{row['n']} decisive judgements ({p_said(row['p'], [p_limit])}); flag "
                f"when p < {p_limit:g} and outside {percent(low)}-{percent(high)}.")
    flagged = [r for r in summary.get("position_bias", []) if r["flagged"]]

    def said(row: dict[str, Any]) -> str:  # share and p on the side of the band and limit
        return (f"{shown_percent(row['share_a'], (low,), (high,))} A, "
                f"{p_said(row['p'], [p_limit])}")

    # the pooled row is no rater: listed among them, "all raters" read as every rater
    # flagged, where one biased rater is enough to flag the pool
    raters = [r for r in flagged if r["rater"] != POOLED]
    if raters:
        names = ", ".join(f"{r['rater']} ({said(r)})" for r in raters)
        lines.append(f"Position bias flagged: {names}. Their direction judgements may "
                     "reflect display order rather than quality; read the direction "
                     "verdict with the position-free preference.")
    for row in (r for r in flagged if r["rater"] == POOLED):
        lines.append(f"Position bias flagged in the judgements of all raters pooled "
                     f"({said(row)}): the direction judgements may reflect display order "
                     "rather than quality; read the direction verdict with the "
                     "position-free preference.")
    for row in summary.get("position_free_preference", []):
        lines.append(f"Position-free preference for {row['arm']}: "
                     f"{shown_percent(row['preference'])} "
                     f"{interval_said(shown_percent(row['ci'][0]), shown_percent(row['ci'][1]))}"
                     f" (under A "
                     f"{shown_percent(row['share_when_under_a'])}, under B "
                     f"{shown_percent(row['share_when_under_b'])}"
                     # a corrected figure says so: 100% and 50% give 82%, not the 75% mean
                     + (f"; {row['reason']}" if row.get("reason") else "")
                     + (f"; {row['note']}" if row.get("note") else "") + ").")
    return lines


_METHODS_TEXT = (
    "Per rater and pooled: decisive judgements (ties and blanks left out) that chose the "
    "response shown under label A, out of all decisive judgements; exact two-sided "
    "binomial test against 1/2 (outcomes no more probable than the observed one, as "
    "R binom.test and scipy.stats.binomtest) and Clopper-Pearson interval. Flagged "
    "when p < position_bias_p (default 0.05) and the share lies outside "
    "position_bias_share (default 0.35-0.65). Position-free "
    "preference: logit P(arm chosen) = b0 + b1 x, x = +1 when the arm sat under A and "
    "-1 under B (closed-form maximum likelihood; Wald interval for b0; Haldane-"
    "Anscombe: 0.5 added to each of the four cells, both strata, when a stratum is all "
    "or nothing, and only then, as meta-analysis corrects a 2 x 2 table with a zero "
    "cell); expit(b0) is the preference "
    "with position removed, b1 the position effect in log odds.")


PLAN = ProtocolPlan(
    protocol="", template="",
    analyses={"position_bias": position_bias, "position_free_preference": position_free},
    methods=fixed_methods("Position bias", _METHODS_TEXT),
    runs_when=applies,
    method_topics={"Position bias": ("position_bias", "position_free_preference")},
)
