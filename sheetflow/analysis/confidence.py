"""What the raters' Low/Medium/High confidence says about their agreement.

Runs whenever the rubric asks a confidence for at least one dimension. Three tables:

- ``confidence_by_rater``: per rater and dimension, how many ratings came with each
  level (and without one), and the share that is Medium or High.
- ``confidence_agreement``: Krippendorff's alpha (the dimension's level, the rubric's
  domain, the plan's bootstrap) on all ratings, on Medium/High ratings only and on High
  ratings only, each with its interval and the units and raters it rests on. A
  rating below the level is treated as missing (alpha allows missing data), so the
  subsets keep every unit still rated twice. If agreement is much higher on the
  confident subset, the disagreement lives in the uncertain ratings.
- ``direction_by_confidence``: the direction check split by the rater's confidence:
  the preference's own confidence where the rubric asks one, otherwise the lowest
  confidence the rater gave on that case's dimensions (stated in the table).
  Against the spec's improved arm when named, else against the majority of the other
  raters on the case.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..spec.rubric import CONFIDENCE_LEVELS
from ..spec.study import Study
from ..stats.proportions import binomial_share
from ..words import FEW_UNITS_TOPIC, few_units_note, resting_on, shown_number
from .context import Context, json_safe, typed_domain
from .protocol import ProtocolPlan, fixed_methods

SUBSETS = (("all ratings", (*CONFIDENCE_LEVELS, "")), ("Medium/High", ("Medium", "High")),
           ("High", ("High",)))
_RANK = {level: i for i, level in enumerate(CONFIDENCE_LEVELS)}


def applies(study: Study) -> bool:
    """The rubric asks a confidence for at least one dimension."""
    return any(d.confidence for d in study.rubric.dimensions)


def _confident_dims(study: Study) -> list:
    return [d for d in study.rubric.dimensions if d.confidence and d.kind not in ("text",)]


def by_rater(ctx: Context) -> pd.DataFrame:
    """Counts of each confidence level per rater and dimension."""
    rows = []
    for dim in _confident_dims(ctx.study):
        part = ctx.first[ctx.first["dimension"] == dim.id]
        sizes = part.groupby("rater", sort=False).size()  # raters in order of appearance
        # each level counted over all raters at once, not one value_counts per rater
        levels = {level: part[part["confidence"] == level].groupby("rater", sort=False)
                  .size().reindex(sizes.index, fill_value=0).tolist()
                  for level in CONFIDENCE_LEVELS}
        for i, (rater, n) in enumerate(zip(sizes.index, sizes.tolist(), strict=True)):
            given = {level: counts[i] for level, counts in levels.items()}
            rows.append({"rater": rater, "dimension": dim.id, "n": n,
                         **{f"n_{k.lower()}": v for k, v in given.items()},
                         "n_blank": n - sum(given.values()),
                         "share_medium_high": (given["Medium"] + given["High"]) / n})
    return pd.DataFrame(rows)


def agreement_by_level(ctx: Context) -> pd.DataFrame:
    """Alpha on all ratings, on Medium/High only and on High only, per dimension."""
    rows = []
    for dim in _confident_dims(ctx.study):
        numeric = dim.kind in ("count", "checklist", "scale", "number")
        ratings = ctx.numeric(dim.id) if numeric else ctx.ratings(dim.id)
        level_of = ctx.first[ctx.first["dimension"] == dim.id].drop_duplicates(
            ["unit", "rater"]).set_index(["unit", "rater"])["confidence"]
        ratings = ratings.assign(confidence=level_of.reindex(
            pd.MultiIndex.from_frame(ratings[["unit", "rater"]])).fillna("").to_numpy())
        for subset, levels in SUBSETS:
            chosen = ratings[ratings["confidence"].isin(levels)]
            row = {"dimension": dim.id, "subset": subset, "n_ratings": len(chosen)}
            try:
                res = stats.krippendorff_alpha(
                    chosen[["unit", "rater", "value"]], level=dim.level,
                    value_domain=typed_domain(dim.kind, dim.value_domain(), dim.level),
                    n_boot=ctx.plan.n_boot, seed=ctx.plan.seed).iloc[0]
            except ValueError as exc:
                rows.append({**row, "alpha": np.nan, "reason": f"could not be computed: {exc}"})
                continue
            rows.append({**row, "alpha": res["alpha"], "ci_low": res["ci_low"],
                         "ci_high": res["ci_high"], "n_units": res["n_units"],
                         "n_raters": res["n_raters"], "reason": res["reason"],
                         "note": few_units_note(res["n_units"], res["ci_low"],
                                                res["ci_high"])})
    cols = ["dimension", "subset", "alpha", "ci_low", "ci_high", "n_units", "n_raters",
            "n_ratings", "reason", "note"]
    return pd.DataFrame(rows).reindex(columns=cols)


def direction_by_level(ctx: Context) -> pd.DataFrame:
    """The direction check per confidence level of the judging rater (see module)."""
    prefs = [d for d in ctx.study.rubric.dimensions if d.kind == "preference"]
    if not prefs:
        return pd.DataFrame([{"reason": "the rubric has no direction judgement"}])
    improved = str(ctx.param("improved_arm", "") or "")
    rows = []
    for pref in prefs:
        judged = ctx.first[(ctx.first["dimension"] == pref.id)
                           & ctx.first["value"].notna()].copy()
        judged["level"], source = _judgement_levels(ctx, pref, judged)
        judged["agrees"], against = _agreement(judged, improved)
        for level in (*CONFIDENCE_LEVELS, ""):
            grp = judged[(judged["level"] == level) & judged["agrees"].notna()]
            res = binomial_share(int(grp["agrees"].sum()), len(grp)).iloc[0]
            rows.append({"dimension": pref.id, "confidence": level or "(none)",
                         "against": against, "n": len(grp), "n_agree": res["k"],
                         "agreement": res["share"], "ci_low": res["ci_low"],
                         "ci_high": res["ci_high"], "confidence_from": source,
                         "reason": res["reason"],
                         "note": few_units_note(len(grp), res["ci_low"], res["ci_high"])})
    return pd.DataFrame(rows)


def _judgement_levels(ctx: Context, pref: Any, judged: pd.DataFrame) -> tuple[pd.Series, str]:
    if pref.confidence:
        return judged["confidence"], "the judgement's own confidence"
    rated = ctx.first[ctx.first["confidence"].isin(CONFIDENCE_LEVELS)]
    lowest = rated.assign(rank=rated["confidence"].map(_RANK)).groupby(
        ["rater", "case"])["rank"].min().map(dict(enumerate(CONFIDENCE_LEVELS)))
    keys = pd.MultiIndex.from_frame(judged[["rater", "case"]])
    return (pd.Series(lowest.reindex(keys).fillna("").to_numpy(), index=judged.index),
            "lowest confidence the rater gave on the case's dimensions")


def _agreement(judged: pd.DataFrame, improved: str) -> tuple[pd.Series, str]:
    """Whether each judgement names the improved arm, else the others' majority."""
    if improved:
        return (judged["value"] == improved).astype(float), f"improved arm ({improved})"
    cases, case_idx = np.unique(judged["case"].to_numpy(dtype=str), return_inverse=True)
    values, value_idx = np.unique(judged["value"].to_numpy(dtype=str), return_inverse=True)
    counts = np.zeros((len(cases), len(values)))
    np.add.at(counts, (case_idx, value_idx), 1)
    others = counts[case_idx].copy()
    others[np.arange(len(judged)), value_idx] -= 1  # leave the judge's own vote out
    top2 = -np.sort(-others, axis=1)[:, :2] if len(values) > 1 else \
        np.c_[others, np.zeros(len(judged))]
    decided = (top2[:, 0] > 0) & (top2[:, 0] > top2[:, 1])
    agrees = np.where(decided, (others.argmax(axis=1) == value_idx).astype(float), np.nan)
    agrees = pd.Series(agrees, index=judged.index)
    return agrees, "majority of the other raters (ties left out)"


def summary_part(tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """The ``confidence`` entry of ``summary.json``: by rater and agreement by level."""
    out: dict[str, Any] = {}
    rater = tables.get("confidence_by_rater")
    if rater is not None and "share_medium_high" in rater:
        out["by_rater"] = rater.to_dict("records")
    level = tables.get("confidence_agreement")
    if level is not None and "alpha" in level:
        out["agreement_by_level"] = [
            {"dimension": r.dimension, "subset": r.subset, "alpha": r.alpha,
             "ci": [r.ci_low, r.ci_high], "n_units": r.n_units, "n_raters": r.n_raters,
             "n_ratings": r.n_ratings, "reason": r.reason}
            for r in level.itertuples()]
    return json_safe({"confidence": out}) if out else {}


def readings(summary: dict[str, Any], names: dict[str, str] | None = None) -> list[str]:
    """A sentence per dimension (by its name in ``names``, id -> name, where given)
    where confident ratings agree clearly better, each alpha with the units and raters
    it rests on, as the other alpha lines say them."""
    lines = []
    by_dim: dict[str, dict[str, dict]] = {}
    for row in summary.get("confidence", {}).get("agreement_by_level", []):
        by_dim.setdefault(row["dimension"], {})[row["subset"]] = row
    for dim, subsets in by_dim.items():
        everyone, sure = subsets.get("all ratings"), subsets.get("Medium/High")
        if not everyone or not sure or everyone["alpha"] is None or sure["alpha"] is None:
            continue
        if sure["alpha"] - everyone["alpha"] >= 0.10:
            named = (names or {}).get(dim, dim)
            lines.append(f"Confidence: {named} alpha {_alpha_text(everyone)} on all "
                         f"ratings, {_alpha_text(sure)} on Medium/High only; the "
                         "disagreement concentrates in Low-confidence ratings.")
    return lines


def _alpha_text(row: dict[str, Any]) -> str:
    """An alpha and what it rests on: "0.712 (36 units, 4 raters)"."""
    counts = resting_on(row)
    return shown_number(row["alpha"]) + (f" ({counts})" if counts else "")


_METHODS_TEXT = (
    "Agreement by confidence: Krippendorff's alpha at each dimension's level with the "
    "rubric's value domain and the plan's bootstrap, on all ratings, on Medium/High "
    "only and on High only (lower-confidence ratings treated as missing). Direction "
    "by confidence: share of judgements naming the improved arm (or the majority of "
    "the other raters when no arm is named), per the rater's confidence on the case, "
    "with Clopper-Pearson intervals. An alpha or a share whose interval rests on few "
    f"units is marked (see {FEW_UNITS_TOPIC}).")


PLAN = ProtocolPlan(
    protocol="", template="",
    analyses={"confidence_by_rater": by_rater, "confidence_agreement": agreement_by_level,
              "direction_by_confidence": direction_by_level},
    methods=fixed_methods("Confidence", _METHODS_TEXT),
    runs_when=applies,
    method_topics={"Confidence": ("confidence_agreement", "direction_by_confidence")},
)
