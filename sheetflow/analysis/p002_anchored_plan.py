"""Protocol 002 (anchored-plan): item acceptance and the second-rater subset check."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd

from ..study import Study
from .context import Context, add_verdict, empty_reason
from .decision import Decision, flag_check, status_of
from .registry import ProtocolPlan


def _acceptance(ctx: Context) -> pd.DataFrame:
    """Per item: mean valid total, mean material errors, any severe safety event."""
    threshold = ctx.target("acceptance_threshold")
    max_err = ctx.target("max_material_errors")
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    if tid is None or threshold is None:
        return empty_reason(pd.DataFrame(), "needs a total and an acceptance_threshold target",
                             item="")
    first = ctx.first
    rows = []
    for case, grp in first.groupby("case", sort=False):
        vals = grp.set_index(["rater", "dimension"])["value"]
        totals = pd.to_numeric(grp.loc[grp["dimension"] == tid, "value"], errors="coerce")
        errors = pd.to_numeric(grp.loc[grp["dimension"] == "material_errors", "value"],
                               errors="coerce")
        severe = grp.loc[grp["dimension"] == "severe_safety", "value"].astype(str)
        mean_total = totals.mean() if totals.notna().any() else np.nan
        mean_err = errors.mean() if errors.notna().any() else np.nan
        any_severe = bool((severe.str.lower() == "yes").any())
        ok = (bool(mean_total >= threshold) if np.isfinite(mean_total) else False) and \
            (max_err is None or (np.isfinite(mean_err) and mean_err <= max_err)) and \
            not any_severe
        rows.append({"item": case, "arm": grp["arm"].iloc[0], "n_ratings": int(totals.notna()
                     .sum()), "mean_total": mean_total, "mean_material_errors": mean_err,
                     "severe_safety": any_severe, "accepted": ok,
                     "reason": "" if np.isfinite(mean_total) else "no valid rating"})
        del vals
    return pd.DataFrame(rows)


def second_rater_expected(study: Study) -> list[str]:
    """Item ids a second rater must score: ceil(fraction x n) per stratum by sha256 rank.

    Within each stratum (the values of ``design.second_rater.strata``) items are
    ranked by ``sha256(spec_hash + ":" + item_id)`` (hex) and the first
    ``ceil(fraction * n)`` are taken, exactly as at generation (protocol 002).
    """
    plan = study.design.second_rater
    if plan is None:
        return [it.id for it in study.items]
    spec = study.hash
    strata: dict[tuple[str, ...], list[str]] = {}
    for item in study.items:
        strata.setdefault(tuple(item.fields.get(c, "") for c in plan.strata), []).append(item.id)
    chosen: set[str] = set()
    for members in strata.values():
        ranked = sorted(members, key=lambda i: hashlib.sha256(f"{spec}:{i}".encode())
                        .hexdigest())
        chosen.update(ranked[: math.ceil(plan.fraction * len(members))])
    return [it.id for it in study.items if it.id in chosen]


def _second_rater(ctx: Context) -> pd.DataFrame:
    """Second ratings against the reproduced selection: extra or missing ones fail."""
    expected = set(second_rater_expected(ctx.study))
    rows = []
    for rater in (r for r in ctx.study.raters if r.role == "second"):
        rated = set(ctx.first.loc[ctx.first["rater"] == rater.id, "case"])
        extra, missing = sorted(rated - expected), sorted(expected - rated)
        rows.append({"rater": rater.id, "n_expected": len(expected), "n_rated": len(rated),
                     "extra": ", ".join(extra), "missing": ", ".join(missing),
                     "n_extra": len(extra), "n_missing": len(missing),
                     "status": "pass" if not extra and not missing else "fail"})
    if not rows:
        return empty_reason(pd.DataFrame(), "no rater has role 'second'", rater="")
    return pd.DataFrame(rows)


def _h_acceptance(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "accepted" in table:
        out["acceptance"] = {"n_items": len(table), "n_accepted": int(table["accepted"].sum()),
                             "accepted": table.loc[table["accepted"], "item"].tolist()}


def _h_second(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "status" in table:
        ok = bool((table["status"] == "pass").all())
        out["second_rater_selection"] = "pass" if ok else "fail"
        add_verdict(out, "second-rater subset reproduced exactly", int(table["n_extra"].sum()
                 + table["n_missing"].sum()), 0, ok, "extra + missing second ratings")


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """The second-rater subset reproduced exactly, and every item rated validly.

    Acceptance is a per-item decision (reported beside it), not a study-level check.
    """
    checks = []
    second = tables.get("second_rater_selection")
    if second is not None and "status" in second:
        wrong = int(second["n_extra"].sum() + second["n_missing"].sum())
        checks.append(flag_check("second-rater subset reproduced exactly", wrong == 0, wrong, 0,
                                 "extra + missing second ratings"))
    acc = tables.get("acceptance")
    if acc is not None and "accepted" in acc:
        unrated = int((acc["reason"] != "").sum())
        checks.append(flag_check("every item has a valid rating", unrated == 0, unrated, 0,
                                 f"{int(acc['accepted'].sum())} of {len(acc)} items accepted"))
    rule = ("the second-rater subset is reproduced exactly (extra or missing second ratings "
            "fail) and every item has a valid rating; each item is accepted or not by the "
            "plan's threshold, material-error maximum and safety")
    return Decision(status_of(checks), rule, checks)


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    return [
        ("Acceptance and second rater (002)",
         "An item is accepted when the mean of its valid totals reaches the plan threshold, "
         "the mean material-error count does not exceed the plan maximum and no rater "
         "recorded a severe safety event. The second-rater subset is recomputed: "
         "ceil(fraction x n) items per stratum ranked by sha256(spec hash + ':' + item id); "
         "any extra or missing second rating fails."),
    ]


PLAN = ProtocolPlan(
    protocol="002",
    template="anchored-plan",
    analyses={
        "acceptance": _acceptance,
        "second_rater_selection": _second_rater,
    },
    headlines={
        "acceptance": _h_acceptance,
        "second_rater_selection": _h_second,
    },
    methods=methods,
    decide=_decide,
    method_topics={
        "Acceptance and second rater (002)": ("acceptance", "second_rater_selection",),
    },
)
