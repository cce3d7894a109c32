"""Protocol 000 (paired-rubric): direction agreement, Spearman vs internal, Wilcoxon.

Paired A/B responses scored on a rubric, with a direction per case. The analyses here
compare arms and the external raters' direction with references: the arm the spec
names as improved (``[analysis.params] improved_arm``, the protocol's "correctly
identify which response is higher quality") and, as a second labelled figure, the
internal team's scores.

Decision (protocol 000 section 4.4): "The external validation succeeds if:" is followed
by no list; the section gives only what follows when a threshold is not met. Each of
those consequences is mapped to an outcome by its own words (:data:`ALPHA_LOW` and the
texts beside it, said on the rule line, in each check's note and on Methods): the
validation passes when alpha on the total, the share of direction judgements naming
the improved arm and Spearman's rho against the internal scores all reach their
targets (0.70, 70%, 0.60).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import stats
from ..spec.protocol_targets import needed_targets, target_problems
from ..spec.study import Study
from ..stats._util import rounded_difference
from ..words import few_units_note, percent, resting_on, settled, shown_number
from .context import (
    TIED,
    Context,
    add_verdict,
    band_bounds,
    empty_reason,
    stack,
)
from .decision import (
    NOT_MET,
    UNDEFINED,
    WEAK,
    Arms,
    Check,
    Decision,
    flag_check,
    status_of,
    threshold_check,
)
from .protocol import ProtocolPlan
from .rater_feedback import feedback_methods, feedback_notes, feedback_tables
from .readings import few_units_notes

IMPROVED, INTERNAL = "improved arm", "internal scores"
# protocol 000 does not say whether a "Tied" judgement counts against the improved arm;
# the decision counts it as not naming it, the other reading (Tied left out) is beside
DECISIVE = ", Tied left out"
# protocol 000 section 4.4: direction agreement of 50-70% is a "weak signal" (chance is 50%)
DIRECTION_WEAK_FROM = 0.50
# section 4.4: alpha of 0.60-0.69 is "marginal", below 0.60 "cannot validate" -- fixed
# numbers, whatever bands the plan labels alphas with
ALPHA_WEAK_FROM = 0.60
# Section 4.4 lists no success criteria, only what follows when a threshold is not met;
# each consequence is mapped to an outcome by its own words, and the one range it leaves
# without a consequence (direction below 50%) gets sheetflow's reading, said as such.
ALPHA_MARGINAL = ("'Marginal reliability; rubric refinement needed for Iteration 3' "
                  "(section 4.4): inconclusive, as the protocol keeps such alpha for "
                  "exploratory analyses only")
ALPHA_LOW = ("'Study cannot validate improvement claims; redesign evaluation methodology' "
             "(section 4.4): fail")
DIRECTION_WEAK = ("'Weak signal; effect size may be smaller than internal estimates' "
                  "(section 4.4): inconclusive")
DIRECTION_BELOW_CHANCE = (
    "the protocol states no consequence below 50%; sheetflow reads it as a fail: fewer "
    "than half the judgements name the improved arm, and so do fewer than half of those "
    "naming an arm (Tied left out), short of the 50% the protocol calls random ('better "
    "than random 50%', section 4.3), so no signal is left to call weak")
# The protocol's "random 50%" is a coin between the two responses: with Tied counted as
# not naming the improved arm, a share below 50% can still hold a signal (26 judgements
# name it, 14 the baseline, 14 Tied: 48%). Only the share of judgements naming an arm
# is read against chance, so such a panel is the protocol's weak signal, not a fail.
DIRECTION_TIED_BELOW = (
    "below 50% only because Tied judgements count as not naming the improved arm: of "
    "the judgements naming an arm, {decisive} name it, not below the 50% the protocol "
    "calls random ('better than random 50%', section 4.3), so sheetflow reads it as the "
    "protocol's 'Weak signal; effect size may be smaller than internal estimates' "
    "(section 4.4): inconclusive")
RHO_LOW = ("'External/internal scoring divergence; investigate systematic interpretation "
           "differences' (section 4.4): a call to investigate, not a failed validation, so "
           "inconclusive")


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
            frames.append(_against_reference(values, ref, dim.id, f"{basis}{DECISIVE}",
                                             ties_left_out=True))
    if not frames:
        return empty_reason(pd.DataFrame(), "no preference dimension", measure="")
    return stack(frames)


def _direction_references(ctx: Context, values: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Reference direction per case: the improved arm (primary) and the internal scores."""
    refs: dict[str, dict[str, str]] = {}
    improved = improved_arm(ctx)
    if improved:
        refs[IMPROVED] = {c: improved for c in values["unit"].unique()}
    if ctx.internal is not None and not ctx.internal.empty:
        refs[INTERNAL] = _internal_direction(ctx.internal)
    return refs


def improved_arm(ctx: Context) -> str:
    """The arm the spec names as improved (``[analysis.params] improved_arm``)."""
    return str(ctx.param("improved_arm", ctx.param("expected_winner", "")) or "")


def _internal_direction(internal: pd.DataFrame) -> dict[str, str]:
    out = {}
    for case, grp in internal.groupby("case"):
        totals = grp.set_index("arm")["total"]
        best = totals[totals == totals.max()]
        out[str(case)] = str(best.index[0]) if len(best) == 1 else TIED
    return out


def _against_reference(values: pd.DataFrame, ref: dict[str, str], dim_id: str,
                       basis: str, *, ties_left_out: bool = False) -> pd.DataFrame:
    """Per rater and pooled: judgements naming the reference's side, of those with a
    reference. ``n_ties`` counts the rater's Tied judgements there: counted as not
    naming it, or with ``ties_left_out`` left out of ``n_units`` (the other reading).

    ``ties_left_out`` leaves out every case where either side is Tied: the rater's Tied
    judgements and, for a reference that can tie (the internal totals), the cases it
    calls Tied, where no judgement but Tied could agree; ``reason`` counts the latter.
    """
    # one pass over every judgement, then a count per rater (a boolean selection per
    # rater cost a second per 500 raters); raters in sorted order, as groupby gives them
    has_ref = values["unit"].isin(ref).to_numpy(dtype=bool)
    tied = (values["value"].astype(str) == TIED).to_numpy(dtype=bool)
    ref_tied = np.array([ref.get(u) == TIED for u in values["unit"]], dtype=bool)
    usable = has_ref & ~tied & ~ref_tied if ties_left_out else has_ref
    dropped = has_ref & ~tied & ref_tied if ties_left_out else np.zeros_like(has_ref)
    agrees = [bool(ok) and ref[u] == v for ok, u, v in
              zip(usable, values["unit"], values["value"], strict=True)]
    counts = pd.DataFrame({"rater": values["rater"], "n": usable, "agree": agrees,
                           "ties": has_ref & tied, "dropped": dropped})
    per_rater = counts.groupby("rater", observed=True)[["n", "agree", "ties", "dropped"]].sum()
    rows = []
    for rater, n, agree, ties, off in zip(
            per_rater.index, per_rater["n"].tolist(), per_rater["agree"].tolist(),
            per_rater["ties"].tolist(), per_rater["dropped"].tolist(), strict=True):
        rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": rater,
                     "other": basis, "n_units": n, "n_agree": agree,
                     "agreement": agree / n if n else np.nan, "n_ties": ties,
                     "reason": _reference_ties_note(
                         off, "" if n else _no_units(ties, ties_left_out))})
    pooled_n = sum(r["n_units"] for r in rows)
    pooled = sum(r["n_agree"] for r in rows)
    pooled_ties = sum(r["n_ties"] for r in rows)
    rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": "all raters",
                 "other": basis, "n_units": pooled_n, "n_agree": pooled,
                 "agreement": pooled / pooled_n if pooled_n else np.nan,
                 "n_ties": pooled_ties,
                 "reason": _reference_ties_note(
                     int(per_rater["dropped"].sum()),
                     "" if pooled_n else _no_units(pooled_ties, ties_left_out,
                                                   "no judgement to compare"))})
    return pd.DataFrame(rows)


def _reference_ties_note(dropped: int, reason: str) -> str:
    """``reason`` with the count of judgements left out because the reference ties."""
    if not dropped:
        return reason
    note = (f"{dropped} judgement{'s' if dropped != 1 else ''} on cases whose internal "
            "totals tie left out")
    return "; ".join(r for r in (reason, note) if r)


def _no_units(ties: int, ties_left_out: bool,
              otherwise: str = "no case with a reference direction") -> str:
    """Why a reading has no judgement: all of them Tied and left out, or none at all."""
    if ties_left_out and ties:
        return f"every judgement with a reference is Tied ({ties}), and Tied are left out"
    return otherwise


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
    return few_units_notes(pd.DataFrame(rows), units="n")


def _wilcoxon(ctx: Context) -> pd.DataFrame:
    """Wilcoxon signed-rank on per-case mean totals, second arm minus first arm.

    The second arm of the design is the sheet's "arm 1" (``arm_x``) and the first its
    "arm 2" (``arm_y``), so the median difference and W+ are arm 1 minus arm 2 as the
    sheet names them; :func:`methods` says so with the arms' names.
    """
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
    target = ctx.decided_target("direction_agreement")
    if target is not None:
        value = out["direction_agreement"].get(f"vs {IMPROVED}")
        note = (f"share of judgements naming {improved_arm(ctx)} (the improved arm)"
                if value is not None else "the spec names no improved arm")
        add_verdict(out, "direction agreement", value, target,
                    bool(settled(value, (target,)) >= target)
                    if value is not None and np.isfinite(value)
                    else None, note)


def _h_spearman(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "rho" not in table:
        return
    out["spearman"] = table.to_dict("records")
    target = ctx.decided_target("spearman")
    if target is not None and len(table):
        rho = table["rho"].iloc[0]
        add_verdict(out, "Spearman vs internal", rho, target,
                 bool(settled(rho, (target,)) >= target) if np.isfinite(rho) else None)


def _h_wilcoxon(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "p" in table:
        out["wilcoxon"] = table.to_dict("records")


INTERNAL_TOPIC = "Internal team in alpha (000)"
# section 4.2 counts a skipped case among what alpha copes with; the decision still
# waits for it (a missing rating makes the panel incomplete), and the Methods sheet
# says which reading the tool takes
SKIPPED_CASE = (
    "Section 4.2 says alpha 'accommodates missing data (if a validator skips a case)': "
    "alpha itself would accommodate a skip, but the decision is not reached while a "
    "validator's case is missing (it reads INCOMPLETE, as for a missing rater), and "
    "sheetflow analyze --allow-partial shows the figures on the ratings that were "
    "returned.")
_METHODS = (
    ("Direction agreement",
     "Preferences are unblinded first: 'A>B' becomes 'the arm shown under A preferred' "
     "for that rater and case, so raters who saw different sides are comparable. "
     "Pairwise agreement, each rater vs the majority of the others (tied majorities "
     "left out). The decision's figure: the share of all direction judgements that "
     "name the improved arm (params.improved_arm); a 'Tied' judgement does not name it. "
     "The protocol does not say how a Tied judgement counts, so the other reading, the "
     "share among judgements that are not Tied, is reported beside it ('leaving Tied "
     "judgements out'; in the tables 'Tied left out') and not decided on: counting Tied "
     "as not naming the improved arm is the stricter reading, since a validator who sees "
     "no difference has not confirmed the direction. Two further figures, also reported "
     "and not decided on, compare each judgement with the internal scores' direction on "
     "its case (the arm with the higher internal total; 'Tied' where the totals are "
     "equal). 'vs internal scores': the share of all judgements on cases with internal "
     "scores that equal that direction, a Tied judgement agreeing where the internal "
     "totals tie. 'vs internal scores, Tied left out': every case where either side is "
     "Tied is left out (the validator's Tied judgements and the cases whose internal "
     "totals tie, as section 4.3 asks whether validators identify which response is "
     "higher quality, and a tie has none); the share of the rest naming the arm the "
     "internal totals put higher. n_ties counts the validator's Tied judgements; the "
     "row's reason counts the judgements left out for an internal tie."),
    ("Arms",
     "Per case the mean total over raters for each arm; the arm with the higher mean "
     "over cases is ahead. Effect: mean over cases of (ahead - other) with a Student t "
     "95% interval (paired); p: Wilcoxon signed-rank, two-sided."),
    ("Decision (000)",
     "Section 4.4 of the protocol ('The external validation succeeds if:') lists no "
     "criteria; it gives only what follows when a threshold is not met, and each of "
     "those consequences decides by its own words. Met: alpha on the total >= 0.70, "
     "direction agreement with the improved arm >= 70% and Spearman's rho vs internal "
     ">= 0.60, all three: pass. Alpha from 0.60 to 0.70: "
     f"{ALPHA_MARGINAL}. Alpha below 0.60: {ALPHA_LOW}. Direction agreement from "
     f"50% to 70%: {DIRECTION_WEAK}. Direction agreement below 50%: "
     f"{DIRECTION_BELOW_CHANCE}; but where at least half the judgements naming an arm "
     "(Tied left out) name the improved one, sheetflow reads it as 'Weak signal': "
     f"inconclusive. Spearman's rho below 0.60: {RHO_LOW}. The three targets "
     "are the protocol's own (sections 4.2-4.4), and its consequence bands end at them, "
     "so the plan's [analysis.targets] must hold exactly these (sheetflow check refuses "
     "another or a missing one); a check whose plan target is missing or another is not "
     "decided, its line says why, and sheetflow analyze exits 1. Any fail "
     "makes the decision FAIL; otherwise any inconclusive or undefined value makes it "
     "INCONCLUSIVE; a missing or excluded rater makes the decision incomplete. "
     f"{SKIPPED_CASE} The blinding question "
     "(params.blinding_dimension, default recognised_arm): a Yes names the validator and "
     "leaves the decision inconclusive until the research lead decides whether their "
     "ratings stay; the check is met when validators answered and none said Yes, and is "
     "undefined when none answered (a blank is no report)."),
    (INTERNAL_TOPIC,
     "Section 4.1: 'Your scores will be aggregated with other external validators and "
     "internal research team scores to compute IRR statistics'; section 4.2: 'scores will "
     "be aggregated into a rater×case matrix'. The internal scores file holds one total "
     "per case and arm on the rubric's own scale (checked at load), so alpha on the total "
     "(the rubric's first) counts the internal team as one more rater beside the "
     "validators, on the same units and at the same level: that is the alpha the decision "
     "reads. The validators-only alpha is reported beside it (the check's note, the alpha "
     "row's note, summary.json alpha[].alpha_validators_only). The file has no score for "
     "any dimension, nor for the direction, so every other column's alpha rests on the "
     "validators only, and its row says so; Cohen's kappa, the ICC, Fleiss' kappa, Gwet's "
     "AC and percent agreement rest on the validators only. The internal scores also give "
     "Spearman's rho and the second direction figure."),
    ("Spearman vs internal",
     "Spearman's rho between the mean external total and the internal total per case "
     "and arm; 95% interval by Fisher's z with the Fieller-Hartley-Pearson standard error "
     "sqrt(1.06/(n-3)), undefined at |rho| = 1 (Fisher's z is infinite there: the row "
     "says so). Two-sided p: exact, from the permutation distribution of rho, for 10 or "
     "fewer pairs without ties and at |rho| = 1 without ties; otherwise from the t "
     "approximation, none at |rho| = 1 with ties."),
)


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text); the Wilcoxon entry names the study's arms,
    and the internal team's place in alpha is said only where the plan names internal
    scores (without them, every alpha rests on the validators)."""
    internal = bool(study.plan.params.get("internal_scores_file")) and \
        bool(study.rubric.totals)
    return [*(m for m in _METHODS if internal or m[0] != INTERNAL_TOPIC),
            ("Wilcoxon signed-rank", _wilcoxon_method(study))]


def _wilcoxon_method(study: Study) -> str:
    """How the Wilcoxon sheet's difference runs, in the sheet's own words and arms."""
    arms = [a.id for a in study.design.arms]
    here = f" (here {arms[1]} minus {arms[0]})" if len(arms) == 2 else ""
    return ("Per case the mean total over raters for each arm; signed-rank test of the "
            f"differences arm 1 minus arm 2 as the Wilcoxon sheet names them{here}: the "
            "median difference and W+ (the sum of the ranks of the positive differences) "
            "are of that difference, so a positive median difference means arm 1 scored "
            "higher. Two-sided p, zero differences dropped: exact for up to 50 cases "
            "without tied differences or zeros; with ties or zeros, every sign change "
            "counted for up to 13 cases, else the normal approximation (tie-corrected, "
            "no continuity correction).")


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """Protocol 000's rule: alpha, direction vs the improved arm and rho, combined."""
    checks = [_alpha_check(ctx, out), _direction_check(ctx, out), _spearman_check(ctx, out)]
    blinding = _blinding_check(ctx, out)
    if blinding is not None:
        checks.append(blinding)
    a, d, r = (_protocol_target(n) for n in ("alpha", "direction_agreement", "spearman"))
    weak = ALPHA_WEAK_FROM
    rule = (f"validation succeeds when alpha on the total >= {_num(a)}"
            f" ({_num(weak)}-{_num(a)}: 'marginal', inconclusive; below {_num(weak)}: "
            "'cannot validate', fail)"
            + f", direction agreement with the improved arm >= {_pct(d)} "
            f"({_pct(DIRECTION_WEAK_FROM)}-{_pct(d)}: 'weak signal', inconclusive; below "
            f"{_pct(DIRECTION_WEAK_FROM)}: no consequence in the protocol, sheetflow reads "
            "it as a fail, or as 'weak signal' where at least half the judgements naming "
            "an arm name the improved one) and "
            f"Spearman's rho vs internal >= {_num(r)} (below: 'investigate', inconclusive)")
    if target_problems(ctx.study.protocol, ctx.plan.targets):
        rule += ("; the plan's targets must be these, the protocol's own: a check whose "
                 "target the plan lacks or sets otherwise is not decided (see its line)")
    return Decision(status_of(checks), rule, checks)


def _protocol_target(name: str) -> float:
    """The value protocol 000 fixes for the target ``name``."""
    return next(float(t.value) for t in needed_targets("000")
                if t.name == name and t.value is not None)


def _target_problem(ctx: Context, name: str) -> str:
    """What is wrong with the plan's target ``name`` under protocol 000: missing, or
    not the value the protocol fixes ("" when it is)."""
    return next((p.message for p in target_problems(ctx.study.protocol, ctx.plan.targets)
                 if p.name == name), "")


def _on_protocol_target(ctx: Context, name: str, check: Check) -> Check:
    """``check`` left undecided, its note saying why, when the plan's target ``name`` is
    missing or not the protocol's (a study generated before ``check`` refused such a
    plan): read against another target, the section 4.4 bands contradict it (a
    direction target of 0% called 39% met, below the 50% the rule calls a fail)."""
    problem = _target_problem(ctx, name)
    if problem:
        check.passed, check.outcome = None, UNDEFINED
        check.note = "; ".join(filter(None, (
            f"not decided: [analysis.targets] {problem}", check.note)))
    return check


BLINDING_DIMENSION = "recognised_arm"  # the template's study-scope question
# the name says what the value counts ("no validator recognised ...: 0" read as a double
# negative)
BLINDING_CHECK = "validators who said they recognised which response came from which approach"


# the protocol's consequence of a recognised arm (step 5): the research lead decides
# whether the data stay ("weak" is its word for direction agreement of 50-70%)
BLINDING_SAID = "research lead decides"


def _blinding_check(ctx: Context, out: dict) -> Check | None:
    """Protocol 000: a validator who recognised which response came from which approach
    reports it, and the research lead decides whether their data stay. A Yes is named
    and leaves the decision inconclusive until then; it is never counted in silence."""
    dim_id = str(ctx.param("blinding_dimension", BLINDING_DIMENSION))
    if dim_id not in {d.id for d in ctx.study.rubric.dimensions}:
        return None
    answers = ctx.first[ctx.first["dimension"] == dim_id].drop_duplicates("rater")
    text = answers["value"].astype(str)
    said_yes = sorted(answers.loc[text == "Yes", "rater"].astype(str))
    # a blank is missing (NaN or NA), never the text "nan"
    answered = int((answers["value"].notna() & text.str.strip().ne("")).sum())
    out["blinding_reports"] = {"dimension": dim_id, "recognised": said_yes,
                               "n_answered": answered}
    name = BLINDING_CHECK
    if not said_yes:  # met only on answers: no answer is no report, not a No
        return flag_check(name, True, 0, 0, f"{answered} answered", comparison="<=") \
            if answered else flag_check(name, None, None, 0,
                                        "no validator answered the question", comparison="<=")
    return Check(name, len(said_yes), 0, False, WEAK,
                 f"{', '.join(said_yes)} answered Yes: the protocol asks the research lead to "
                 "decide whether their ratings stay (blinding may be compromised)",
                 comparison="<=", said=BLINDING_SAID)


def _alpha_check(ctx: Context, out: dict) -> Check:
    total = next((r for r in out.get("alpha", []) if r["kind"] == "total"), None)
    target = ctx.target("alpha")
    if total is None:
        return flag_check("Krippendorff's alpha on the total", None, None, target,
                          "alpha on the total was not run", comparison=">=")
    other = total.get("alpha_other_level")
    beside = f"; at the {total.get('other_level')} level {shown_number(other)}" \
        if other is not None and np.isfinite(other) else ""
    named = ctx.study.rubric.named(total["measure"])
    # the note names the band, so the value is shown on its side of every band's bound
    return _with_consequence(_on_protocol_target(ctx, "alpha", threshold_check(
        f"Krippendorff's alpha on {named}, {total['level']} level",
        total["alpha"], target, weak_from=ALPHA_WEAK_FROM, bounds=band_bounds(ctx.plan),
        note="; ".join(filter(None, (
            ctx.band(total["alpha"]) + beside or total.get("reason") or "",
            resting_on(total) if np.isfinite(total["alpha"]) else "",
            total.get("note") or ""))))),
        ALPHA_MARGINAL, ALPHA_LOW, ("marginal", "cannot validate"))


def _direction_check(ctx: Context, out: dict) -> Check:
    """The share of direction judgements naming the improved arm, its note saying in
    plain words what that share counts and what each figure beside it is."""
    arm = improved_arm(ctx)
    agreement = out.get("direction_agreement") or {}
    value = agreement.get(f"vs {IMPROVED}")
    note = f"share of all direction judgements that name {arm}, a Tied judgement " \
        f"counting as not naming it" if arm else \
        "the spec names no improved arm ([analysis.params] improved_arm)"
    decisive = agreement.get(f"vs {IMPROVED}{DECISIVE}")
    if decisive is not None and np.isfinite(decisive):
        note += (f"; leaving Tied judgements out, {percent(decisive)} name {arm} "
                 "(reported, not decided on)")
    elif value is not None and np.isfinite(value):
        note += "; every judgement is Tied, so leaving Tied judgements out leaves none"
    internal = agreement.get(f"vs {INTERNAL}")
    if internal is not None and np.isfinite(internal):
        note += (f"; {percent(internal)} of judgements agree with the direction of the "
                 "internal scores on their case, a Tied judgement agreeing where the "
                 "internal totals tie (reported, not decided on)")
    if arm and (value is None or not np.isfinite(value)):
        note += "; no direction judgement to compare"
    check = _on_protocol_target(ctx, "direction_agreement", threshold_check(
        "direction agreement with the improved arm", value, ctx.target("direction_agreement"),
        weak_from=DIRECTION_WEAK_FROM, note=note, proportion=True))
    if check.outcome == NOT_MET and decisive is not None and np.isfinite(decisive) \
            and settled(decisive, (DIRECTION_WEAK_FROM,)) >= DIRECTION_WEAK_FROM:
        check.outcome = WEAK
        # that share decides here, so the note no longer calls it "not decided on"
        check.note = check.note.replace(
            f"name {arm} (reported, not decided on)",
            f"name {arm} (which keeps the share below 50% from being a fail)", 1)
        return _with_consequence(check, DIRECTION_TIED_BELOW.format(
            decisive=percent(decisive)), "", ("weak signal", ""))
    return _with_consequence(check, DIRECTION_WEAK, DIRECTION_BELOW_CHANCE,
                             ("weak signal", ""))


def _with_consequence(check: Check, weak: str, not_met: str,
                      words: tuple[str, str] = ("", "")) -> Check:
    """``check`` with what its range means under section 4.4 after its note, when it
    is in the weak (inconclusive) or the failing range, and its outcome said in the
    protocol's word for that range (``words``: weak, then failing; "" keeps the
    generic outcome where the protocol names none)."""
    said = weak if check.outcome == WEAK else not_met if check.outcome == NOT_MET else ""
    check.note = "; ".join(filter(None, (check.note, said)))
    check.said = words[0] if check.outcome == WEAK else \
        words[1] if check.outcome == NOT_MET else ""
    return check


def _spearman_check(ctx: Context, out: dict) -> Check:
    rows = out.get("spearman") or []
    rho = rows[0].get("rho") if rows else None
    why = (rows[0].get("reason") or "") if rows else "no internal scores to compare"
    check = _on_protocol_target(ctx, "spearman", threshold_check(
        "Spearman's rho vs internal", rho, ctx.target("spearman"), note=why))
    if check.outcome == NOT_MET:  # the protocol asks to investigate, not to fail
        check.outcome = WEAK
    return _with_consequence(check, RHO_LOW, RHO_LOW, ("investigate", ""))


def _pct(value: float | None) -> str:
    return "its target" if value is None else f"{100 * value:g}%"


def _num(value: float | None) -> str:
    return "its target" if value is None else f"{value:.2f}"


def _arms(ctx: Context, tables: dict[str, pd.DataFrame]) -> Arms | None:
    """The arm ahead on the first total's per-case means, effect with t interval."""
    arms = [a.id for a in ctx.study.design.arms]
    if len(arms) != 2 or not ctx.study.rubric.totals:
        return None
    total = ctx.study.rubric.totals[0].id
    wide = ctx.numeric(total).pivot_table(index="case", columns="arm", values="value",
                                          aggfunc="mean").reindex(columns=arms)
    means = {a: float(wide[a].mean()) for a in arms}
    first, second = arms
    # equal within rounding: two sums of the same totals in another order differ by
    # 1e-16, and that must not name a winner
    even = rounded_difference(means[first], means[second]) == 0
    ahead, other = (second, first) if means[second] > means[first] and not even else \
        (first, second)
    diff = stats.paired_mean_difference(wide[ahead], wide[other]).iloc[0]
    test = stats.wilcoxon_signed_rank(wide[ahead], wide[other]).iloc[0]
    tied = even or not np.isfinite(diff["mean_diff"]) or diff["mean_diff"] == 0
    return Arms(winner="" if tied else ahead, other=other, compared=ahead,
                effect=float(diff["mean_diff"]),
                effect_measure=f"mean {total} difference per case",
                ci=[float(diff["ci_low"]), float(diff["ci_high"])],
                p=float(test["p"]), test="Wilcoxon signed-rank (two-sided)",
                means={ahead: means[ahead], other: means[other]},
                means_label=f"mean {total}",
                ci_note=few_units_note(diff["n"], diff["ci_low"], diff["ci_high"]),
                note="the two arms' mean totals are equal" if even else
                "; ".join(filter(None, (_zeros_dropped(test),
                                        str(test["reason"] or diff["reason"] or "")))))


def _zeros_dropped(test: pd.Series) -> str:
    """The cases the signed-rank test drops for equal totals in both arms, counted:
    its p rests on the others alone ("" when none is dropped, or none is left)."""
    n, zeros = int(test["n"]), int(test["n_zero"])
    if zeros == 0 or zeros >= n:  # all zero: the test's own reason says it
        return ""
    return (f"test on {n - zeros} of {n} cases: {zeros} with equal totals in both arms "
            "(zero differences) dropped")


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
    method_topics={
        "Direction agreement": ("direction_agreement",),
        "Spearman vs internal": ("spearman_internal",),
        "Wilcoxon signed-rank": ("wilcoxon_totals",),
    },
    decide=_decide,
    arms=_arms,
    feedback=feedback_tables,
    feedback_notes=feedback_notes,
    data_methods=feedback_methods,
)
