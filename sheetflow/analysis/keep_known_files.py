"""Protocol 001's item-level data and what it writes beside the workbook.

- :func:`yield_items` -- one row per sitting-1 rating with its yield (0/1);
- :func:`batch_times` -- each rated item's batch and the batch's start and end, from
  the collected ratings and the key's order (protocol 001: "Record start and end time
  per batch");
- :func:`verdicts` -- ``out/verdicts.jsonl``: one record per item and sitting with the
  unsealed arm, both marks, the sitting, the batch and its times;
- :func:`results_tables` -- ``out/results/T2.csv`` (per arm) and ``T3.csv`` (per band);
- :func:`mixed_effects` -- the multi-owner extension's model with owner as a random
  effect (statsmodels, imported only when two or more owners are there to fit), and
  :func:`fit_problems` -- why a fit is not usable (no convergence, a Hessian not
  positive definite, impossible standard errors, the owner variance at 0).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..spec.params import YES_WORDS
from ..words import counted, interval_said, p_said
from .context import Context, empty_reason, json_value

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..spec.study import Study
    from .context import Analysis

MIXED_METHOD = (
    "With two or more owners (the multi-owner extension): a linear mixed-effects model of "
    "the 0/1 yield on arm (treatment coding against the control arm) with a random "
    "intercept per owner, fitted by REML (statsmodels MixedLM); each arm's coefficient is "
    "its yield difference from the control adjusted for owner, with a Wald z test and 95% "
    "interval. The fit is marked not usable, with the reason, when the optimiser did not "
    "converge, the Hessian is not positive definite at the estimate, a standard error is "
    "not finite or above 1 (impossible for a 0/1 yield), or the owner variance is "
    "estimated at 0 (the boundary, where the model pools the owners' ratings as if "
    "independent); its coefficients stay on the sheet for diagnosis, without standard "
    "errors or intervals, and the Summary quotes none. With one owner the model is not "
    "fitted and the table says so: it needs two or more owners, and five before any "
    "generalisation claim (protocol 001).")
YES = YES_WORDS  # a mark or an items-file flag, as check reads it


def yield_items(ctx: Context) -> pd.DataFrame:
    """One row per sitting-1 rating: arm, band, keep, known, in corpus and yield (0/1)."""
    first = ctx.first
    marks = {d.id for d in ctx.study.rubric.by_scope("response")}
    first = first[first["dimension"].isin(marks)]  # not the owner's study-scope answers
    wide = first.pivot_table(index=["rater", "case", "arm"], columns="dimension",
                             values="value", aggfunc="first").reset_index()
    items = {it.id: it.fields for it in ctx.study.items}
    in_col, band_col = ctx.param("in_corpus_column"), ctx.param("band_column")

    def flag(row: Any, col: str) -> bool:
        return str(row.get(col, "")).strip().lower() in YES

    records = wide.to_dict("records")
    wide["keep"] = [flag(r, "keep") for r in records]
    wide["known"] = [flag(r, "known") for r in records]
    wide["in_corpus"] = [str(items.get(c, {}).get(in_col, "")).strip().lower() in YES
                         if in_col else False for c in wide["case"]]
    wide["band"] = [items.get(c, {}).get(band_col, "") if band_col else ""
                    for c in wide["case"]]
    wide["yield"] = (wide["keep"] & ~wide["known"] & ~wide["in_corpus"]).astype(int)
    return wide[["rater", "case", "arm", "band", "keep", "known", "in_corpus", "yield"]]


# --------------------------------------------------------------------------- batches


def batch_times(study: Study, raw: pd.DataFrame, entries: list[dict[str, Any]]) -> pd.DataFrame:
    """Each rated item's batch and the batch's start and end, per rater and sitting.

    Parameters
    ----------
    study : Study
    raw : pandas.DataFrame
        The collector's ``out/ratings.csv`` as text (batch rows have dimension
        ``batch`` and field ``<k>:start`` / ``<k>:end``).
    entries : list of dict
        The key's packs (rater, sitting, order).

    Returns
    -------
    pandas.DataFrame
        ``rater, sitting, case, batch, batch_start, batch_end`` (times as collected,
        ISO text; "" when the cell was blank). Empty when the design has no batches.
    """
    size = study.design.batch_size
    columns = ["rater", "sitting", "case", "batch", "batch_start", "batch_end"]
    if not size or raw.empty:
        return pd.DataFrame(columns=columns)
    rater_col = "rater_id" if "rater_id" in raw else "rater"
    part_col = "field" if "field" in raw else "part"
    rows = raw[raw["dimension"] == "batch"]
    times = {(str(r[rater_col]), int(r["sitting"] or 1), str(r[part_col])): str(r["value"])
             for r in rows.to_dict("records")}
    out = []
    for entry in entries:
        rater, sitting = str(entry.get("rater_id", "")), int(entry.get("sitting", 1))
        for pos, case in enumerate(entry.get("order", [])):
            batch = pos // size + 1
            out.append((rater, sitting, case, batch, times.get((rater, sitting, f"{batch}:start"),
                                                               ""),
                        times.get((rater, sitting, f"{batch}:end"), "")))
    return pd.DataFrame(out, columns=columns)


def verdicts(analysis: Analysis) -> list[dict[str, Any]]:
    """One record per rated item and sitting (protocol 001 ``verdicts.jsonl``).

    Each record has ``item_id, arm, rater, sitting``, one key per dimension (both
    marks) and, when the design has batches, ``batch, batch_start, batch_end``.
    """
    dims = [d.id for d in analysis.study.rubric.by_scope("response")]
    data = analysis.data[analysis.data["dimension"].isin(dims)]  # the owner record apart
    batches = getattr(analysis, "batches", None)
    when = {} if batches is None or batches.empty else {
        (r["rater"], int(r["sitting"]), r["case"]): r for r in batches.to_dict("records")}
    records = []
    for (rater, sitting, case, arm), grp in data.groupby(["rater", "sitting", "case", "arm"]):
        marks = dict(zip(grp["dimension"], grp["value"], strict=False))
        rec = {"item_id": case, "arm": arm, "rater": rater, "sitting": int(sitting)}
        rec.update({d: json_value(marks.get(d)) for d in dims if d in marks})
        batch = when.get((rater, int(sitting), case))
        if batch is not None:
            rec.update({"batch": int(batch["batch"]), "batch_start": batch["batch_start"],
                        "batch_end": batch["batch_end"]})
        records.append(rec)
    return records


def results_tables(analysis: Analysis) -> dict[str, pd.DataFrame]:
    """``results/T2.csv`` (per arm) and ``results/T3.csv`` (per band), when computed.

    With two or more owners each ends with the tables' ``pooled`` column (its intervals
    pool their ratings as if independent); with one owner there is none.
    """
    out = {}
    y = analysis.tables.get("yield_fisher")
    if y is not None and "test" in y:
        cols = ["arm", "n", "n_yield", "yield", "ci_low", "ci_high", "note", "n_keep",
                "n_known", "known_rate", "n_in_corpus", *_pooled(y)]
        out["results/T2.csv"] = y.loc[y["test"] == "yield", cols].reset_index(drop=True)
    t = analysis.tables.get("trend")
    if t is not None and "score" in t:
        cols = ["band", "score", "n", "n_yield", "yield", "ci_low", "ci_high", "note",
                "none_rate", *_pooled(t)]
        out["results/T3.csv"] = t.loc[t["band"] != "trend test", cols].reset_index(drop=True)
    return out


def _pooled(table: pd.DataFrame) -> list[str]:
    """``["pooled"]`` when ``table`` marks its figures as pooled over owners, else []."""
    return ["pooled"] if "pooled" in table.columns else []


# --------------------------------------------------------------------------- mixed model


def mixed_effects(ctx: Context) -> pd.DataFrame:
    """Yield on arm with owner as a random effect (protocol 001's multi-owner model)."""
    items = yield_items(ctx)
    owners = sorted(items["rater"].unique())
    control = ctx.param("control")
    if len(owners) < 2:
        return empty_reason(items, f"the mixed-effects model needs two or more owners "
                            "(owner as a random effect); the ratings analysed here come "
                            f"from {counted(len(owners), 'owner')}",
                            term="", n_owners=len(owners))
    arms = [a.id for a in ctx.study.design.arms if a.id in set(items["arm"])]
    if control in arms:  # the control arm is the reference level
        arms = [control] + [a for a in arms if a != control]
    return fit_owner_model(items, arms)


def fit_owner_model(items: pd.DataFrame, arms: list[str]) -> pd.DataFrame:
    """Fit the yield-on-arm model with a random intercept per owner and judge the fit.

    Parameters
    ----------
    items : pandas.DataFrame
        One row per rating with ``rater`` (the owner), ``arm`` and ``yield`` (0/1).
    arms : list of str
        The arms in model order; the first is the reference level (the control).

    Returns
    -------
    pandas.DataFrame
        One row per fixed effect and one for the owner variance, with ``converged``,
        ``usable`` and the ``reason`` a fit is not usable (blank when it is); a fit
        that is not usable keeps its coefficients for diagnosis but no standard error,
        z, p or interval (they are not valid there). A single row with a ``reason``
        when the model could not be fitted at all.
    """
    import statsmodels.formula.api as smf  # heavy: only when a model is fitted

    owners = items["rater"].nunique()
    frame = items.assign(arm=pd.Categorical(items["arm"], categories=arms),
                         owner=items["rater"], y=items["yield"].astype(float))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = smf.mixedlm("y ~ C(arm)", frame, groups=frame["owner"]).fit(reml=True)
        except Exception as exc:  # patsy and numpy raise their own types
            return empty_reason(items, f"the mixed-effects model could not be fitted: "
                                f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
                                term="", n_owners=owners)
    said = sorted({str(w.message).splitlines()[0] for w in caught})
    converged, problems = fit_problems(fit, said)
    ci = fit.conf_int()
    rows = [{"term": _term(name, arms[0]), "coef": fit.params[name], "se": fit.bse[name],
             "z": fit.tvalues[name], "p": fit.pvalues[name], "ci_low": ci.loc[name, 0],
             "ci_high": ci.loc[name, 1]} for name in fit.fe_params.index]
    rows.append({"term": "owner variance", "coef": float(np.asarray(fit.cov_re)[0, 0])})
    table = pd.DataFrame(rows)
    if problems:  # no valid standard error: blank rather than a figure to be read
        table[["se", "z", "p", "ci_low", "ci_high"]] = np.nan
    return table.assign(n_owners=owners, n_items=len(frame), converged=converged,
                        usable=not problems, reason="; ".join(problems),
                        note="; ".join(said))


# A standard error of a yield (a 0/1 mean) or of a difference of two is below 1 at
# any owner variance a 0/1 outcome allows (at most 0.25), so one above is a broken fit.
_MAX_SE = 1.0
# An owner variance this small is the boundary: the model is then the pooled one.
_BOUNDARY_VARIANCE = 1e-8
_NOT_PD = "Hessian matrix at the estimated parameter values is not positive definite"


def fit_problems(fit: Any, warned: list[str]) -> tuple[bool, list[str]]:
    """Whether a MixedLM fit converged to a proper maximum, and why it is not usable.

    Parameters
    ----------
    fit : statsmodels MixedLMResults
    warned : list of str
        The first lines of the warnings the fit raised.

    Returns
    -------
    (bool, list of str)
        ``converged``: the optimiser said so and the Hessian is positive definite at
        the estimate (statsmodels reports ``converged`` after a retry even when the
        point it stopped at is not a maximum); the reasons the fit is not usable, in
        words, empty when it is.
    """
    problems = []
    not_pd = any(_NOT_PD in w for w in warned)
    if not fit.converged:
        problems.append("the optimiser did not converge")
    if not_pd:
        problems.append("the Hessian is not positive definite at the estimate (not a "
                        "proper maximum), so no standard error is valid")
    se = np.asarray(fit.bse[fit.fe_params.index], dtype=float)
    if not np.isfinite(se).all():
        problems.append("a standard error is not finite")
    elif (se > _MAX_SE).any():
        problems.append(f"a standard error of {se.max():.3g} on a 0/1 yield (none can "
                        f"exceed {_MAX_SE:g})")
    variance = float(np.asarray(fit.cov_re)[0, 0])
    if not variance > _BOUNDARY_VARIANCE:
        problems.append("the owner variance is estimated at 0 (on the boundary): the "
                        "model then pools the owners' ratings as if independent")
    return bool(fit.converged) and not not_pd, problems


def _term(name: str, reference: str) -> str:
    if name == "Intercept":
        return f"intercept ({reference} yield)"
    return name.replace("C(arm)[T.", "").rstrip("]") + f" - {reference}"


def h_mixed(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    """The model's arm effects; or why it was not fitted, or why its fit is not usable."""
    lines = out.setdefault("summary_lines", [])
    if "coef" not in table:
        reason = str(table["reason"].iloc[0])
        out["mixed_effects"] = {"fitted": False, "reason": reason}
        lines.append(f"mixed-effects model: not fitted: {reason}")
        return
    first = table.iloc[0]
    owners = int(first["n_owners"])
    model = {"fitted": True, "n_owners": owners, "converged": bool(first["converged"]),
             "usable": bool(first["usable"]), "reason": str(first["reason"])}
    out["mixed_effects"] = model
    if not model["usable"]:  # its figures are no result: say why, quote none
        model["effects"] = []
        lines.append(f"mixed-effects model ({owners} owners): fit not usable, no "
                     f"owner-adjusted effect is reported: {model['reason']}")
        return
    effects = table[~table["term"].str.startswith(("intercept", "owner"))]
    model["effects"] = effects[["term", "coef", "ci_low", "ci_high", "p"]].to_dict("records")
    lines.extend(f"mixed-effects ({owners} owners) {r['term']}: {r['coef']:.3f} "
                 f"{interval_said(format(r['ci_low'], '.3f'), format(r['ci_high'], '.3f'))}, "
                 f"{p_said(r['p'])}"
                 for r in model["effects"])


def yield_figure(table: pd.DataFrame) -> pd.DataFrame:
    """Chart data: yield per arm with the Wilson interval as error-bar lengths."""
    y = table.loc[table["test"] == "yield", ["arm", "yield", "ci_low", "ci_high"]].copy()
    y["err_plus"] = (y["ci_high"] - y["yield"]).clip(lower=0)
    y["err_minus"] = (y["yield"] - y["ci_low"]).clip(lower=0)
    return y.reset_index(drop=True)
