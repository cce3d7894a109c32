"""Protocol 002 (anchored-plan): item acceptance and the second-rater subset check.

An item is accepted when the mean of its valid totals reaches the plan threshold, its
material-error count does not exceed the plan maximum and no rater recorded a severe
safety event (at least one rater answered the flag: an item without a total, a count or
a safety answer is rejected, never accepted on a condition nobody checked). How two
raters' material-error counts combine is the frozen plan setting ``[analysis.params]
material_errors_combine``: ``"max"`` (default: the larger count, so an error one rater
found is not averaged away), ``"mean"`` or ``"sum"``. Every rejected item carries its
reasons; safety events are listed on the Summary whatever the quality.

The second-rater check compares the items each second rater scored with the subset
the protocol prescribes: the selection recorded at data lock (``sheetflow lock``,
:mod:`sheetflow.packs.second_rater`), or, for ``select_at = "generate"``, the draw over all
items. An extra or a missing second rating fails.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..packs.second_rater import selects_at_lock
from ..spec.protocol_targets import target_problems
from ..spec.rubric import answer_required
from ..spec.study import Study
from ..words import listed
from .context import Context, add_verdict, answered, empty_reason
from .decision import Check, Decision, flag_check, reasons_of, status_of
from .protocol import ProtocolPlan
from .second_rater import completed_items, second_rater_expected

COMBINE = {"max": np.max, "mean": np.mean, "sum": np.sum}  # spec.params.COMBINE_RULES
ERRORS, SAFETY = "material_errors", "severe_safety"


def combine_rule(ctx: Context) -> str:
    """The plan's rule for combining raters' material-error counts (default ``max``)."""
    rule = str(ctx.param("material_errors_combine", "max"))
    if rule not in COMBINE:
        raise ValueError(f"[analysis.params] material_errors_combine = {rule!r}; allowed: "
                         f"{', '.join(COMBINE)}")
    return rule


def _acceptance(ctx: Context) -> pd.DataFrame:
    """Per item: mean valid total, combined material errors, safety, decision, reasons."""
    threshold = ctx.target("acceptance_threshold")
    max_err = ctx.target("max_material_errors")
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    missing = _missing_targets(ctx)
    if missing:  # an item accepted without one of its conditions was accepted in silence
        return empty_reason(pd.DataFrame(), missing, item="")
    if tid is None or threshold is None or max_err is None:
        return empty_reason(pd.DataFrame(), "needs a total", item="")
    rule = combine_rule(ctx)
    groups = dict(tuple(ctx.first.groupby("case", sort=False)))
    # in the study's item order: in the data's, the second rater's items came first.
    # An item no included return holds (its one rater's file left out) is still an item
    # of the study: left out, a 16-item study read "4 of 4 items accepted" and "each of
    # the 4 items has a valid total"
    arm_column = ctx.study.design.arm_column or ""
    rows = [_item_row(it.id, groups[it.id]["arm"].iloc[0] if it.id in groups else
                      it.fields.get(arm_column, ""), groups.get(it.id, ctx.first.iloc[:0]),
                      tid, threshold, max_err, rule)
            for it in ctx.study.items]
    known = {it.id for it in ctx.study.items}  # a case they lack is shown, not dropped
    rows += [_item_row(case, grp["arm"].iloc[0], grp, tid, threshold, max_err, rule)
             for case, grp in groups.items() if case not in known]
    return pd.DataFrame(rows)


def _item_row(case: str, arm: str, grp: pd.DataFrame, tid: str, threshold: float,
              max_err: float, rule: str) -> dict:
    """One item's acceptance row from its ratings ``grp`` (none: no valid rating)."""
    totals = pd.to_numeric(grp.loc[grp["dimension"] == tid, "value"], errors="coerce")
    is_err = grp["dimension"] == ERRORS
    errors = pd.to_numeric(grp.loc[is_err, "value"], errors="coerce")
    counted = errors.notna()
    each = list(zip(errors[counted], grp.loc[is_err, "rater"][counted], strict=True))
    is_safety = grp["dimension"] == SAFETY
    severe = grp[is_safety & (grp["value"].astype(str).str.lower() == "yes")]["rater"].tolist()
    # no rater answered the flag (a return taken in with --allow-partial): "no severe
    # safety event" is unknown, and the item was accepted with its safety column "No"
    severe_known = bool(answered(grp.loc[is_safety, "value"]).any())
    mean_total = totals.mean() if totals.notna().any() else np.nan
    combined = float(COMBINE[rule](errors.dropna())) if errors.notna().any() else np.nan
    reasons = _reasons(mean_total, threshold, combined, max_err, rule, each, severe)
    if not severe_known:
        reasons.append("no severe-safety answer")
    return {"item": case, "arm": arm,
            "n_ratings": int(totals.notna().sum()), "mean_total": mean_total,
            "material_errors": combined,
            # each count with its rater: "2, 0" left the reader to find whose
            "material_errors_each": ", ".join(f"{e:g} ({who})" for e, who in each),
            "severe_safety": bool(severe), "safety_raters": ", ".join(severe),
            "accepted": not reasons, "reason": "; ".join(reasons),
            "note": _counts_alone(each, grp.loc[is_err & ~counted, "rater"].tolist())}


def _counts_alone(each: list[tuple[float, str]], without: list[str]) -> str:
    """Whose material-error count was used alone, and who gave none, when a rater of
    the item left theirs blank ("" otherwise): the given count decided the item and
    nothing said the other was missing."""
    if not each or not without:
        return ""
    whose = listed([f"{rater}'s" for _, rater in each])
    return (f"material errors: {whose} count{'s' if len(each) > 1 else ''} alone "
            f"({listed(without)} gave none)")


def _missing_targets(ctx: Context) -> str:
    """Why no item can be decided when the plan lacks a target protocol 002 freezes in
    it ("" when it has both): each missing target named, with what to write."""
    missing = [p.message for p in target_problems("002", ctx.plan.targets) if p.missing]
    return f"no target in the plan: [analysis.targets] {'; '.join(missing)}" if missing else ""


def _reasons(mean_total: float, threshold: float, errors: float, max_err: float,
             rule: str, each: list[tuple[float, str]], severe: list[str]) -> list[str]:
    """Why an item is not accepted, one phrase per failed condition (empty: accepted).

    ``each`` holds every rater's material-error count with the rater who gave it.
    """
    out = []
    if not np.isfinite(mean_total):
        out.append("no valid rating")
    elif mean_total < threshold:
        out.append(f"mean total {mean_total:g} below the threshold {threshold:g}")
    if not np.isfinite(errors):
        out.append("no material-error count")
    elif errors > max_err:
        # the rule is named only over two or more counts: one rater's "2 (max of 2)"
        # read as the larger of two counts; each count names its rater, as "max of 2
        # and 1" left the reader to find who found the errors
        counts = listed([f"{e:g} ({rater})" for e, rater in each])
        how = f" ({rule} of {counts})" if len(each) > 1 else ""
        out.append(f"material errors {errors:g}{how} above the maximum {max_err:g}")
    if severe:
        out.append(f"severe safety event (recorded by {', '.join(severe)})")
    return out






def _second_rater(ctx: Context) -> pd.DataFrame:
    """Second ratings against the prescribed subset: extra or missing ones fail."""
    seconds = [r for r in ctx.study.raters if r.role == "second"]
    if not seconds:
        return empty_reason(pd.DataFrame(), "no rater has role 'second'", rater="")
    expected_ids = second_rater_expected(ctx.study, completed_items(ctx))
    if expected_ids is None:
        return empty_reason(pd.DataFrame(), "the second-rater subset has not been drawn: run "
                            "'sheetflow lock' once the primary returns are collected",
                            rater=", ".join(r.id for r in seconds))
    expected = set(expected_ids)
    rows = []
    for rater in seconds:
        touched, rated = _second_ratings(ctx, rater.id)
        extra, missing = sorted(touched - expected), sorted(expected - rated)
        rows.append({"rater": rater.id, "n_expected": len(expected), "n_rated": len(rated),
                     "extra": ", ".join(extra), "missing": ", ".join(missing),
                     "n_extra": len(extra), "n_missing": len(missing),
                     "status": "pass" if not extra and not missing else "fail"})
    return pd.DataFrame(rows)


def _second_ratings(ctx: Context, rater: str) -> tuple[set[str], set[str]]:
    """The items ``rater`` gave any answer to, and those rated whole: every required
    answer given (and a total, when the rubric has one).

    An item with blank answer rows (a return taken in with ``--allow-partial``) is not a
    second rating: counted as one, a blank selected item read "missing none", and so did
    one whose total stood but whose material-error count and safety flag were blank.
    """
    rows = ctx.first[ctx.first["rater"] == rater]
    given = rows["value"].notna() & (rows["value"].astype(str).str.strip() != "")
    touched = set(rows.loc[given, "case"])
    required = {d.id for d in ctx.study.rubric.dimensions if answer_required(d, "value")}
    part = set(rows.loc[~given & rows["dimension"].isin(required), "case"])
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    if tid is None:
        return touched, touched - part
    totals = ctx.numeric(tid)
    return touched, set(totals.loc[totals["rater"] == rater, "case"]) - part




def _h_acceptance(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "accepted" not in table:
        return
    rejected = table[~table["accepted"]]
    safety = table[table["severe_safety"]]
    rule = combine_rule(ctx)
    out["acceptance"] = {
        "n_items": len(table), "n_accepted": int(table["accepted"].sum()),
        "accepted": table.loc[table["accepted"], "item"].tolist(),
        "rejected": [{"item": r["item"], "reason": r["reason"]}
                     for r in rejected.to_dict("records")],
        "material_errors_combine": rule}
    out["safety_events"] = [{"item": r["item"], "arm": r["arm"], "raters": r["safety_raters"]}
                            for r in safety.to_dict("records")]
    lines = out.setdefault("summary_lines", [])
    lines.append(f"material errors of two raters combine by the plan's rule: {rule} "
                 f"({_RULE_WORDS[rule]})")
    lines.append("safety events: " + ("; ".join(
        f"{r['item']} ({r['arm']}, recorded by {r['raters']})" for r in out["safety_events"])
        if out["safety_events"] else "none recorded"))
    lines += [f"rejected {r['item']}: {r['reason']}" for r in out["acceptance"]["rejected"]]
    lines += [f"{r['item']}: {r['note']}" for r in table.to_dict("records") if r["note"]]


_RULE_WORDS = {"max": "the larger count", "mean": "the mean count", "sum": "the counts added"}


# The check's value is a count, so its name says what is counted: "second-rater subset
# reproduced exactly 0 (target 0) met" read as "reproduced 0 times".
SUBSET_CHECK = "second-rater subset: extra + missing second ratings"
_SUBSET_NOTE = "the subset is reproduced exactly when this is 0"


def _h_second(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "status" in table:
        ok = bool((table["status"] == "pass").all())
        out["second_rater_selection"] = "pass" if ok else "fail"
        add_verdict(out, SUBSET_CHECK, int(table["n_extra"].sum() + table["n_missing"].sum()),
                    0, ok, _SUBSET_NOTE)


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """The second-rater subset reproduced exactly, and every item rated validly.

    Acceptance is a per-item decision (reported beside it, each rejection with its
    reasons), not a study-level check.
    """
    checks, subset = [], None
    second = tables.get("second_rater_selection")
    if second is not None and "status" in second:
        wrong = int(second["n_extra"].sum() + second["n_missing"].sum())
        detail = "; ".join(f"{r['rater']}: extra {r['extra'] or 'none'}, missing "
                           f"{r['missing'] or 'none'}" for r in second.to_dict("records"))
        subset = flag_check(SUBSET_CHECK, wrong == 0, wrong, 0, f"{_SUBSET_NOTE} ({detail})",
                            comparison="<=")
    elif second is not None and "reason" in second:
        subset = flag_check(SUBSET_CHECK, None, None, 0, str(second["reason"].iloc[0]),
                            comparison="<=")
    if subset is not None:
        checks.append(subset)
    acc = tables.get("acceptance")
    if acc is not None and "accepted" in acc:
        checks.append(_rated_check(acc))
    rule = ("each item is accepted when its mean total reaches the threshold, its material "
            f"errors (combined by the plan's rule: {combine_rule(ctx)}) do not exceed the "
            "maximum and no rater recorded a severe safety event (the flag answered by at "
            "least one rater); the study's own checks "
            "are that the second-rater subset is reproduced exactly (extra or missing second "
            "ratings fail) and no item is without a valid rating")
    # the protocol decides per item: the headline says how many were accepted, and the
    # integrity checks stand on their own line; a study is never "passed" as a whole
    integrity = status_of(checks)
    status = integrity if integrity in ("fail", "inconclusive") else "reported"
    if acc is None or "accepted" not in acc:  # no item decided: nothing to report
        status = "fail" if integrity == "fail" else "inconclusive"
    return Decision(status, rule, checks,
                    reasons=[_accepted_line(acc, subset),
                             *(f"integrity check: {r}" for r in reasons_of(checks))])


RATED_CHECK = "items without a valid rating"


def _rated_check(acc: pd.DataFrame) -> Check:
    """Every item has a valid total from some rater; the note names those without one
    (the acceptance result is the decision's first line, not this check's)."""
    # read off the mean, not the reason text: an unrated item's reasons also say its
    # material-error count is missing, and an exact match on "no valid rating" missed it
    unrated = acc.loc[acc["mean_total"].isna(), "item"].tolist()
    note = ("no valid total from any rater: " + ", ".join(unrated) if unrated else
            f"each of the {len(acc)} items has a valid total from at least one rater")
    return flag_check(RATED_CHECK, not unrated, len(unrated), 0, note, comparison="<=")


def _accepted_line(acc: pd.DataFrame | None, subset: Check | None) -> str:
    """The protocol's question answered: items accepted, safety events, the subset
    check as its own outcome says (passed, not passed, or not run: the line said "not
    passed" of a subset not yet drawn, beside the check's "undefined"). When no item
    could be decided, why (the acceptance table's reason: a target the plan lacks)."""
    if acc is None or "accepted" not in acc:
        why = str(acc["reason"].iloc[0]) if acc is not None and "reason" in acc \
            and len(acc) else "the acceptance analysis did not run"
        return f"no item could be decided: {why}"
    safety = int(acc["severe_safety"].sum())
    said = "not run" if subset is None else "passed" if subset.passed else \
        "not passed" if subset.passed is False else "not run yet (see its line)"
    return (f"{int(acc['accepted'].sum())} of {len(acc)} items accepted; {safety} with a "
            f"severe safety event; second-rater check {said}")


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    rule = str(study.plan.params.get("material_errors_combine", "max"))
    when = ("at data lock from the items every primary rater completed (sheetflow lock; "
            "recorded in sealed/second-rater-selection.json)" if selects_at_lock(study)
            else "at generate from all items")
    return [
        ("Acceptance and second rater (002)",
         "An item is accepted when the mean of its valid totals reaches the plan threshold, "
         f"its material-error count combined over raters by the plan's rule ({rule}: "
         f"{_RULE_WORDS.get(rule, rule)}; material_errors_combine) does not exceed the plan "
         "maximum and no rater recorded a severe safety event (the flag answered by at least "
         "one rater: an item without a total, a material-error count or a safety answer is "
         "rejected); each rejected item lists its reasons, and safety events are reported "
         "whatever the quality. The second-rater "
         f"subset is drawn {when}: ceil(fraction x n) items per stratum ranked by "
         "sha256(frozen spec hash + ':' + item id); any extra or missing second rating "
         f"fails.{_procedure(study)}"),
    ]


def _procedure(study: Study) -> str:
    """The disagreement procedure the plan freezes (protocol 002), as written: the
    plan states it and nothing else did ("" when the plan has none)."""
    text = str(study.plan.params.get("disagreement_procedure", "")).strip().rstrip(".")
    return f" Disagreement procedure frozen in the plan: {text}." if text else ""


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
