"""Agreement analyses every protocol can run: alpha, kappas, AC1/AC2, ICC, agreement.

Each analysis takes a :class:`~.context.Context` and returns a tidy table; each
headline copies its result's key figures into the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from .._groups import groups_in_order
from ..citations import UNIT_BOOTSTRAP
from ..spec.rubric import total_range
from ..spec.study import Study
from ..stats._util import rating_matrix
from ..words import FEW_UNITS_TOPIC, few_units_note, settled, shown_number
from .context import (
    ColumnStack,
    Context,
    add_verdict,
    band_bounds,
    empty_reason,
    matrix_for,
    stack,
    typed_domain,
    values_for,
    weights_for,
)
from .internal_rater import (
    internal_measure,
    validators_only_note,
    with_internal_note,
    with_internal_team,
)
from .na import na_as_category
from .na_answers import na_left_out_note, with_na_answers
from .protocol import ProtocolPlan
from .readings import (
    ZERO_WIDTH_BOOTSTRAP,
    ZERO_WIDTH_VARIANCE,
    agreed_throughout_notes,
    few_units_notes,
    interval_notes,
)
from .second_rater import subset_note


def _alpha(ctx: Context) -> pd.DataFrame:
    """Krippendorff's alpha per dimension and total with bootstrap CI and band; the
    total the internal scores rate takes the internal team as a rater beside the
    validators (:mod:`.internal_rater`), the validators-only alpha beside it."""
    rows = []
    team = internal_measure(ctx)
    for dim_id, level, domain, kind in ctx.dims_and_totals():
        matrix = rating_matrix(with_internal_team(ctx, values_for(ctx, dim_id, kind))) \
            if dim_id == team else matrix_for(ctx, dim_id, kind)
        dom = total_domain(ctx, dim_id, matrix) if kind == "total" else \
            typed_domain(kind, domain, level)
        try:
            res = stats.krippendorff_alpha(matrix,
                                           level=level,  # type: ignore[arg-type]
                                           value_domain=dom,
                                           n_boot=ctx.plan.n_boot, seed=ctx.plan.seed)
        except ValueError as exc:  # e.g. a value outside the rubric's domain
            rows.append({"measure": dim_id, "kind": kind, "level": level, "alpha": np.nan,
                         "band": "", "reason": f"could not be computed: {exc}"})
            continue
        row = {"measure": dim_id, "kind": kind, **res.iloc[0].to_dict()}
        row["band"] = ctx.band(row["alpha"])
        said = str(row["reason"])
        # a defined alpha with a reason has no interval (one unit): the note says why,
        # beside the band, which "band or reason" would show in place of the reason
        no_interval = said if np.isfinite(row["alpha"]) else ""
        if no_interval:
            row["reason"] = said = ""
        if said:  # undefined: with the N/A answers it leaves out, if any
            row["reason"] = with_na_answers(ctx, dim_id, said)
        if kind == "total":  # the reading at the other level, beside (never decided on)
            row["other_level"], row["alpha_other_level"] = _other_level(matrix, level, dom)
        # who the figure rests on (with internal scores), then whether on too few units
        row["note"] = "; ".join(filter(None, (
            _raters_in_alpha(ctx, row, dim_id == team),
            few_units_note(row["n_units"], row["ci_low"], row["ci_high"]),
            no_interval or _resamples_left_out(row),
            # the N/A answers left out, unless the reason already says so
            na_left_out_note(ctx, dim_id) if row["reason"] == said else "")))
        rows.append(row)
    cols = ["measure", "kind", "level", "alpha", "ci_low", "ci_high", "band", "n_units",
            "n_raters", "n_pairable_values", "n_boot", "n_boot_used", "seed", "reason", "note",
            "other_level",
            "alpha_other_level"]
    return agreed_throughout_notes(pd.DataFrame(rows).reindex(columns=cols), "alpha",
                                   ZERO_WIDTH_BOOTSTRAP)


def _resamples_left_out(row: dict[str, Any]) -> str:
    """The bootstrap resamples without variation, which have no alpha and are not in
    the interval, counted: an interval on 650 of 1000 resamples is not what "units
    resampled 1000 times" alone would make of it ("" when none was left out)."""
    n_boot, used = int(row.get("n_boot") or 0), int(row.get("n_boot_used") or 0)
    if not np.isfinite(row["alpha"]) or n_boot == 0 or used == n_boot:
        return ""
    if used == 0:
        return (f"all {n_boot} resamples had no variation (alpha undefined), so there is "
                "no interval")
    left = n_boot - used
    return (f"{left} of {n_boot} resamples had no variation (alpha undefined) and "
            f"{'was' if left == 1 else 'were'} left out of the interval")


def _raters_in_alpha(ctx: Context, row: dict[str, Any], with_team: bool) -> str:
    """Who a column's alpha rests on, when the study has internal scores: with the
    internal team beside the validators, the validators-only alpha said beside it, or
    the validators only, and why ("" without internal scores)."""
    if not with_team:
        return validators_only_note(ctx, row["measure"])
    alone = _validators_only(ctx, row["measure"], row["level"])
    shown = shown_number(float(alone["alpha"]), band_bounds(ctx.plan))
    why = str(alone.get("reason") or "") if not np.isfinite(alone["alpha"]) else ""
    return with_internal_note(int(alone["n_raters"]), f"{shown} ({why})" if why else shown)


def _validators_only(ctx: Context, measure: str, level: str) -> pd.Series:
    """Alpha of a total over the validators alone (no interval): the figure beside
    the decision's, which counts the internal team too."""
    matrix = matrix_for(ctx, measure, "total")
    return stats.krippendorff_alpha(matrix, level=level, n_boot=0,
                                    value_domain=total_domain(ctx, measure, matrix)).iloc[0]


def total_domain(ctx: Context, total_id: str, matrix: Any) -> list[float] | None:
    """A total's value domain for alpha: the values given and both ends of its range.

    A total takes any value in its range (a mean of six 1-5 scores takes 3.1667), so
    no finite list is its domain; the values observed, with the range's ends, are
    enough. The ends count: a domain of the observed values alone has one value when
    every total is the same, and alpha would call that a domain of fewer than two
    values, where the true reason is no variation (a 0-100 total has a hundred and one
    values to vary over). Unused values change no alpha at any level (they add
    nothing to the coincidence matrix or its marginals, nor to the ordinal ranks).

    Parameters
    ----------
    ctx : Context
    total_id : str
    matrix : RatingMatrix
        The ratings the alpha is taken on (the internal team's totals included when
        they take part).

    Returns
    -------
    list of float or None
        Sorted; None when the ratings are not numbers (the statistic then says why).
    """
    values = np.asarray(matrix.matrix)
    if values.dtype.kind != "f":
        return None
    total = next(t for t in ctx.study.rubric.totals if t.id == total_id)
    ends = total_range(total, ctx.study.rubric)
    observed = values[np.isfinite(values)].tolist()
    return sorted({*map(float, observed), *map(float, ends)})


def _other_level(matrix: Any, level: str, domain: list[float] | None) -> tuple[str, float]:
    """A total's alpha at the level it was not declared at (ordinal <-> interval), no
    interval, on the same ratings and domain: whether the choice of level would change
    the figure, at a glance."""
    other = "interval" if level == "ordinal" else "ordinal"
    res = stats.krippendorff_alpha(matrix, level=other, n_boot=0, value_domain=domain)
    return other, float(res.iloc[0]["alpha"])


def _cohen(ctx: Context) -> pd.DataFrame:
    """Cohen's kappa for every pair of raters, per dimension and total; a measure with
    no pair of raters has one row saying why (kappa needs two)."""
    measures = ctx.dims_and_totals()
    # 873,000 rows at 500 raters (a row per pair of each measure's raters): built column
    # by column, its numbers in place and its text as categoricals
    rows = sum(max(1, len(raters) * (len(raters) - 1) // 2) for raters in
               (matrix_for(ctx, dim_id, kind).raters for dim_id, _, _, kind in measures))
    frames = ColumnStack(categorical=True, rows=rows)
    for dim_id, level, domain, kind in measures:
        weights, on = weights_for(level, kind)
        dom = typed_domain(kind, domain, level)
        if kind == "total" or (level in ("interval", "ratio") and dom is None):
            dom = sorted(values_for(ctx, dim_id, kind)["value"].unique().tolist()) or None
        matrix = matrix_for(ctx, dim_id, kind)
        res = stats.cohen_kappa(matrix, weights=weights, categories=dom, weight_on=on)
        if res.empty:  # fewer than two raters: no pair, but the measure keeps its row
            res = _no_pair(ctx, dim_id, matrix.raters, res, weights)
        else:
            _say_na_answers(ctx, dim_id, res, "kappa")
        res.insert(0, "measure", dim_id)
        res.insert(1, "weight_on", on)
        frames.add(res)
    return _na_notes(ctx, interval_notes(frames.stacked()))


def _no_pair(ctx: Context, dim_id: str, raters: list[Any], empty: pd.DataFrame,
             weights: str) -> pd.DataFrame:
    """The one row of a measure no two raters rated: kappa undefined, and why (one
    rater, named; or no rating at all, with the N/A answers it left out)."""
    if len(raters) == 1:
        reason = (f"only one rater ({raters[0]}) has ratings of this column; kappa needs "
                  "two")
    else:
        reason = with_na_answers(ctx, dim_id, "no rater has ratings of this column; kappa "
                                 "needs two")
    row = {"rater1": str(raters[0]) if raters else "", "rater2": "", "n_units": 0,
           "weights": weights, "reason": reason}
    return pd.DataFrame([row]).reindex(columns=empty.columns)


def _say_na_answers(ctx: Context, dim_id: str, table: pd.DataFrame, figure: str) -> None:
    """``table``'s reasons where ``figure`` is undefined, with the N/A answers the
    measure left out (:func:`.na_answers.with_na_answers`); in place, each distinct reason
    worded once (a pairwise table has a row per pair of hundreds of raters)."""
    if "reason" not in table or figure not in table or table.empty:
        return
    undefined = ~np.isfinite(pd.to_numeric(table[figure], errors="coerce").to_numpy(float))
    said = table["reason"].fillna("").astype(str)
    worded = {r: with_na_answers(ctx, dim_id, r) for r in set(said[undefined]) if r}
    if any(old != new for old, new in worded.items()):
        table["reason"] = [worded.get(r, r) if u else r
                           for r, u in zip(said, undefined, strict=True)]


def _na_notes(ctx: Context, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each measure's N/A answers left out said in its rows' ``note``
    (:func:`.na_answers.na_left_out_note`), beside a unit count that is otherwise
    smaller without a word; not where the reason already says it (an undefined figure,
    :func:`_say_na_answers`). In place; the note may be categorical (a pairwise table
    of hundreds of raters)."""
    if table.empty or "measure" not in table:
        return table
    said = {m: na_left_out_note(ctx, str(m)) for m in pd.unique(table["measure"])}
    said = {m: text for m, text in said.items() if text}
    if not said:
        return table
    reasons = table["reason"].fillna("").astype(str) if "reason" in table else \
        pd.Series("", index=table.index)
    rows = table["measure"].isin(list(said)) & ~reasons.str.contains("N/A", regex=False)
    notes = table["note"].astype(object).where(table["note"].notna(), "") \
        if "note" in table else pd.Series("", index=table.index, dtype=object)
    table["note"] = [("; ".join(filter(None, (str(n), said[m]))) if r else n)
                     for n, m, r in zip(notes, table["measure"], rows, strict=True)]
    return table


def _per_dimension(ctx: Context, coefficient: Callable[..., pd.DataFrame]) -> pd.DataFrame:
    """``coefficient(values, level, domain, kind)`` for every dimension (totals left out),
    stacked with a ``measure`` column."""
    frames = []
    for dim_id, level, domain, kind in ctx.dims_and_totals():
        if kind == "total":
            continue
        res = coefficient(matrix_for(ctx, dim_id, kind), level, domain, kind)
        _say_na_answers(ctx, dim_id, res, "ac" if "ac" in res else "kappa")
        res.insert(0, "measure", dim_id)
        figure = "ac" if "ac" in res else "kappa"
        frames.append(few_units_notes(agreed_throughout_notes(res, figure,
                                                              ZERO_WIDTH_VARIANCE)))
    return _na_notes(ctx, stack(frames))


def _fleiss(ctx: Context) -> pd.DataFrame:
    """Fleiss' kappa (nominal categories) per dimension."""
    return _per_dimension(ctx, lambda values, _level, domain, kind: stats.fleiss_kappa(
        values, categories=typed_domain(kind, domain, "nominal")))


def _gwet(ctx: Context) -> pd.DataFrame:
    """Gwet's AC1 (nominal) or AC2 with quadratic weights (ordered) per dimension."""
    def ac(values: pd.DataFrame, level: str, domain: Any, kind: str) -> pd.DataFrame:
        weights, on = weights_for(level, kind)
        return stats.gwet_ac(values, weights=weights, weight_on=on,
                             categories=typed_domain(kind, domain, level))
    return _per_dimension(ctx, ac)


def _percent(ctx: Context) -> pd.DataFrame:
    """Observed agreement per dimension (share of agreeing rater pairs per unit), with
    the N/A answers a dimension left out in ``note``."""
    rows = []
    for dim_id, _level, _domain, kind in ctx.dims_and_totals():
        res = stats.percent_agreement(matrix_for(ctx, dim_id, kind))
        _say_na_answers(ctx, dim_id, res, "pairwise_agreement")
        rows.append({"measure": dim_id, **res.iloc[0].to_dict()})
    # its unit count is smaller for the N/A answers left out: said as the kappas say it
    return _na_notes(ctx, pd.DataFrame(rows))


def _icc(ctx: Context) -> pd.DataFrame:
    """All six ICC forms on each total; the plan's form is marked ``primary``."""
    frames = []
    for total in ctx.study.rubric.totals:
        ratings = ctx.numeric(total.id)
        res = stats.icc(ratings)
        # a subset rated twice by design is not "missing" the rest's second ratings
        note = subset_note(ctx, ratings)
        if note is not None:
            said, say, missing = note
            res["reason"] = [r.replace(said, say) if isinstance(r, str) else r
                             for r in res["reason"]]
            res["n_dropped"] = missing  # the items outside the subset are not dropped
        res.insert(0, "measure", total.id)
        res["primary"] = res["type"] == ctx.plan.icc_form
        frames.append(few_units_notes(res))
    if not frames:
        return empty_reason(pd.DataFrame(), "the rubric defines no total", measure="")
    return pd.concat(frames, ignore_index=True)


def _intra(ctx: Context) -> pd.DataFrame:
    """Cohen's kappa between sitting 1 and sitting 2 on the repeated items, per rater."""
    frames = []
    for dim in ctx.response_dims():
        rows = ctx.data[ctx.data["dimension"] == dim.id]
        if rows["sitting"].nunique() < 2:
            frames.append(pd.DataFrame([{"measure": dim.id, "kappa": np.nan,
                                         "reason": "no second sitting in the ratings"}]))
            continue
        weights, on = weights_for(dim.level, dim.kind)
        res = stats.intra_rater_kappa(rows, unit="case", sitting="sitting", value="value",
                                      rater="rater", weights=weights,
                                      categories=typed_domain(dim.kind, dim.value_domain(),
                                                               dim.level), weight_on=on)
        res.insert(0, "measure", dim.id)
        who = _one_category_sittings(rows)
        res["one_category"] = [who.get(r, "") for r in res["rater"]]
        frames.append(res)
    # the column serves the notes only: the note says it in words
    return interval_notes(stack(frames)).drop(columns="one_category", errors="ignore")


def _one_category_sittings(rows: pd.DataFrame) -> dict[Any, str]:
    """Rater -> the sitting that gave one category throughout on the repeated units
    ("sitting 2", "each sitting"), for the raters with one: their kappa is 0 by
    construction (chance agreement equals the observed), and its interval has no width."""
    rated = rows.dropna(subset=["value"])
    both = rated.groupby(["rater", "case"])["sitting"].transform("nunique") == 2
    kinds = rated[both].groupby(["rater", "sitting"])["value"].nunique().unstack()
    out = {}
    for rater, counts in kinds.iterrows():
        single = [f"sitting {s}" for s, n in counts.items() if n == 1]
        if single:
            out[rater] = single[0] if len(single) == 1 else "each sitting"
    return out


def _h_alpha(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    keys = ("measure", "kind", "level", "alpha", "ci_low", "ci_high", "band", "n_units",
            "n_raters", "reason", "note")
    team = internal_measure(ctx)  # its alpha has the validators-only one beside it
    out["alpha"] = [{k: r[k] for k in keys} | (
        {"other_level": r["other_level"], "alpha_other_level": r["alpha_other_level"]}
        if r["kind"] == "total" and isinstance(r.get("other_level"), str) else {}) | (
        {"alpha_validators_only": _plain_alpha(
            _validators_only(ctx, r["measure"], r["level"])["alpha"])}
        if r["measure"] == team and r["kind"] == "total" else {})
        for r in table.to_dict("records")]
    target = ctx.decided_target("alpha")  # never "met" against a target its protocol refuses
    tot = table[table["kind"] == "total"]
    if target is not None and not tot.empty:
        a = tot["alpha"].iloc[0]
        add_verdict(out, f"alpha ({tot['measure'].iloc[0]})", a, target,
                 bool(settled(a, (target,)) >= target) if np.isfinite(a) else None,
                 ctx.band(a))


def _plain_alpha(value: Any) -> float | None:
    return float(value) if isinstance(value, float) and np.isfinite(value) else None


def _h_cohen(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "kappa" in table:
        out["cohen_kappa_mean"] = {m: float(g["kappa"].mean()) for m, g in
                                   groups_in_order(table[["measure", "kappa"]], "measure")}


def _h_icc(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "primary" in table:
        out["icc"] = [{k: r[k] for k in ("measure", "type", "shrout_fleiss", "mcgraw_wong", "icc",
                                        "ci_low", "ci_high", "reason", "note")}
                      for r in table[table["primary"]].to_dict("records")]


def _h_intra(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "kappa" in table:
        out["intra_rater_kappa"] = {m: g["kappa"].tolist() for m, g in
                                    table.groupby("measure", sort=False)}


def alpha_levels(study: Study) -> str:
    """The level each rating column's alpha is taken at, as the spec sets it (a
    dimension whose N/A is a category of its own is nominal; a preference is nominal on
    the arms), in one sentence for the Methods sheet."""
    named = study.rubric.named
    levels = [(d.id, "nominal" if na_as_category(study, d) else d.level)
              for d in study.rubric.by_scope("response") if d.kind not in ("text", "flag")]
    levels += [(t.id, t.level) for t in study.rubric.totals]
    levels += [(d.id, "nominal") for d in study.rubric.dimensions if d.kind == "preference"]
    if not levels:
        return ""
    return ("Level per column, as the spec sets it: "
            + "; ".join(f"{named(m)} {level}" for m, level in levels) + ".")


AT_CHANCE_TEXT = (
    "Observed and chance agreement that differ by no more than rounding (64 units in the "
    "last place, about 1.4e-14 of the larger) are one number, so a coefficient exactly "
    "at chance is exactly 0.")
"""How a kappa or AC exactly at chance is computed (the Methods sheet states it)."""
ALPHA_AT_CHANCE_TEXT = (
    "Observed and expected disagreement (D_o and D_e) that differ by no more "
    "than rounding (64 units in the last place, about 1.4e-14 of the larger) are one "
    "number, so an alpha exactly at chance is exactly 0.")
"""The same rule for alpha (the Methods sheet states it)."""


# Fleiss' chance agreement pools every rater's ratings (Fleiss 1971), so one rater's one
# category does not fix it at 0 as it fixes Cohen's pairwise kappa; only all ratings in
# one category leave it undefined (0/0)
FLEISS_ONE_CATEGORY_TEXT = (
    "Where every rating of a dimension is in one category, chance agreement is 1 and "
    "Fleiss' kappa is 0/0: undefined, shown with no value, standard error or interval, "
    "its reason beside it, never as 0 or 1. Its chance agreement pools all raters' "
    "ratings, so a rater who gave one category throughout does not fix it at 0 as it "
    "fixes that rater's pairwise Cohen's kappas. Fleiss' kappa is not read on a "
    "benchmark scale.")


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    plan = study.plan
    return [
        ("Krippendorff's alpha",
         "alpha = 1 - D_o / D_e from the coincidence matrix of pairable values "
         "(Krippendorff 2011). Metric per level: nominal delta = [c != k]; ordinal "
         "Krippendorff's rank-based delta (sum of marginals between c and k minus half of "
         "theirs, squared); interval (c - k)^2; ratio ((c - k)/(c + k))^2, for values of "
         "0 or more only (a true zero: on values of both signs it would call -3 and 3 "
         "agreeing, so a number that can be negative is analysed at interval, and "
         "'ratio' on one is refused). The rubric's full "
         "value domain is passed (count dimensions analyse their points, checklists the "
         "number of Yes, totals the values observed with both ends of the total's range, "
         "so a total given one value throughout is undefined for no variation; unused "
         "values change no alpha). A column whose N/A answers are left out says so where "
         "its figures are undefined, and where they are defined, how many answers were N/A "
         "and how many units keep two or more ratings. " + alpha_levels(study) + " Unit = "
         "one response (case x arm in a paired design). Bootstrap: units resampled "
         f"{plan.n_boot} times with seed {plan.seed}, {UNIT_BOOTSTRAP}, percentile 95% "
         "interval. The interval is "
         "asymmetric, its lower arm usually the longer, as alpha's spread is skewed below "
         "its ceiling of 1; on a few dozen units or fewer it covers the true alpha less "
         "often than 95% (Hughes 2022), and it is "
         f"marked when it rests on few units (see {FEW_UNITS_TOPIC}); a resample "
         "without variation has no alpha and is left out of the interval, and the "
         "note says how many were (the Alpha sheet's resamples in interval, shown "
         "then). "
         + ALPHA_AT_CHANCE_TEXT),
        ("Bands", "; ".join(f">= {b.minimum:g}: {b.label}" for b in plan.bands) or
         "none in the plan"),
        ("Cohen's kappa",
         "Every pair of raters on units both rated (pairwise deletion); a column with "
         "fewer than two raters' ratings has one row saying why (one rater, named, or no "
         "rating). Unweighted for "
         "nominal dimensions; quadratic weights for ordinal, interval and ratio ones, on the "
         "scale values for numeric dimensions and on category ranks for ordered labels. "
         "Standard error: Fleiss, Cohen & Everitt (1969) non-null; interval kappa +/- z se, "
         "not cut at the bounds: the note column says where it runs past 1, and where it "
         "has no width (standard error 0, however few the units: no certainty) and why: "
         "the two ratings agree on every unit, or on none; or agreement is exactly at "
         "chance. Where one of them (a sitting, for intra-rater kappa) used one category "
         "throughout and the other did not, chance agreement equals the observed for any "
         "weights and kappa is 0 by construction: reported as 0, as the formula of Cohen (1960) "
         "and R irr::kappa2 give it, with no standard error, z, p or interval (a figure "
         "the margins fix has no sampling spread; [0, 0] would claim certainty). The "
         "Summary and summary.json carry the same note beside a figure whose interval they "
         "show (one pair's kappa, an intra-rater kappa). " + AT_CHANCE_TEXT),
        ("Fleiss' kappa",
         "Fleiss' kappa (Fleiss 1971) with unequal raters per unit and the non-null "
         "standard error (Gwet 2014). " + FLEISS_ONE_CATEGORY_TEXT + " " + AT_CHANCE_TEXT),
        ("Gwet's AC1/AC2",
         "Gwet's AC1 (identity weights) for nominal dimensions, AC2 with quadratic weights "
         "for ordered ones, with unequal raters per unit and the non-null standard error "
         "(Gwet 2014). " + AT_CHANCE_TEXT),
        ("ICC",
         "All six forms on each total: Shrout-Fleiss ICC(1,1)/McGraw-Wong ICC(1) one-way "
         "random single; ICC(2,1)/ICC(A,1) two-way absolute agreement single; ICC(3,1)/"
         "ICC(C,1) two-way consistency single; ICC(1,k)/ICC(k), ICC(2,k)/ICC(A,k), "
         "ICC(3,k)/ICC(C,k) for the mean of k raters. F tests and McGraw-Wong intervals; "
         "no form has an interval where the ratings fit the model exactly (error mean "
         "square 0, F infinite), and each says so. ICC(A,1) and ICC(A,k) have none "
         "where Satterthwaite's df is so small (a negative ICC(A,1)) that an F quantile is "
         "infinite or below 1, which would put a limit on the wrong side of the estimate; "
         "their rows give the df. ICC(A,k)'s limits are the Spearman-"
         "Brown step k r / (1 + (k-1) r) of ICC(A,1)'s; an ICC(A,1) lower limit at or "
         "below -1/(k-1), where the step goes to -inf, gives ICC(A,k) the lower limit "
         "-inf, and its row says so. An estimate within 1e-12 of 0 is reported as 0 "
         "(equal mean squares subtracted in floating point leave about 1e-16). "
         f"Plan form: {plan.icc_form}. Missing data: units with any missing rating are "
         "dropped (listwise); n_dropped says how many. With a second-rater subset only "
         "a selected item lacking a rating counts as dropped; the items outside the "
         "subset, rated once by design, are counted in the reason."),
        ("Percent agreement",
         "Per unit with two or more ratings, the share of rater pairs giving the same value, "
         "averaged over units (Fleiss 1971 p_o); all_agree_share = units where all agree."),
    ]


PLAN = ProtocolPlan(
    protocol="",
    template="",
    analyses={
        "alpha": _alpha,
        "cohen_kappa": _cohen,
        "fleiss_kappa": _fleiss,
        "gwet": _gwet,
        "icc": _icc,
        "percent_agreement": _percent,
        "intra_rater_kappa": _intra,
    },
    headlines={
        "alpha": _h_alpha,
        "cohen_kappa": _h_cohen,
        "icc": _h_icc,
        "intra_rater_kappa": _h_intra,
    },
    methods=methods,
    method_topics={
        "Krippendorff's alpha": ("alpha",),
        "Bands": ("alpha",),
        "Cohen's kappa": ("cohen_kappa",),
        "Fleiss' kappa": ("fleiss_kappa",),
        "Gwet's AC1/AC2": ("gwet",),
        "ICC": ("icc",),
        "Percent agreement": ("percent_agreement",),
    },
)
