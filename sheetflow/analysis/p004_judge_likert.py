"""Protocol 004 (judge-likert): the judge trio per item, hypothesis deltas, pilot verdict.

The trio is locked: the judges are the raters named in ``[analysis.params.jsonl]
judges`` (every rater of the study when there is no mapping). A judge with no score
for an item leaves that item's trio mean undefined (never a mean of two), and a judge
missing from the analysis makes the decision "incomplete". A hypothesis is
directional when its delta exceeds ``[analysis.params] direction_tolerance`` (default
1e-9): an exact tie, or float noise around one, is not directional. A hypothesis stated
"at least" (``relation = ">="``, protocol 004's H4 "Cell D trio mean >= Cell A trio
mean") is directional when its delta is not below 0 beyond the tolerance: a tie is.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..judges.pilot import hypothesis_table, pilot_verdict
from ..judges.records import DIRECTION_TOLERANCE
from ..spec.study import Study
from ..words import setting_text
from .context import Context, add_verdict, empty_reason
from .decision import Check, Decision, flag_check, status_of
from .protocol import ProtocolPlan


def _trio_items(ctx: Context) -> pd.DataFrame:
    """Per item: task, arm, each judge's mean, trio mean and the strict verdicts."""
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    if tid is None:
        return pd.DataFrame()
    vals = ctx.numeric(tid)
    task_col = ctx.param("task_column")
    items = {it.id: it.fields for it in ctx.study.items}
    judges = trio_judges(ctx)
    wide = vals.pivot_table(index=["case", "arm"], columns="rater", values="value",
                            aggfunc="mean").reindex(columns=judges)
    strict, fail, crit = (ctx.target("strict_pass", 3.5), ctx.target("fail_below", 3.0),
                          ctx.target("critical_below", 2.0))
    out = wide.reset_index()
    out.insert(0, "task", [items.get(c, {}).get(task_col, "") if task_col else ""
                           for c in out["case"]])
    scores = wide.to_numpy(dtype=float)
    majority = len(judges) // 2 + 1  # 2 of 3: the trio is locked, absent judges count
    complete = ~np.isnan(scores).any(axis=1)
    with warnings.catch_warnings():  # an item no judge scored has a NaN mean, by design
        warnings.simplefilter("ignore", RuntimeWarning)
        out["trio_mean"] = np.where(complete, np.nanmean(scores, axis=1), np.nan)
    out["reason"] = ["" if ok else "no score from " + ", ".join(
        j for j, v in zip(judges, row, strict=True) if np.isnan(v))
        for ok, row in zip(complete, scores, strict=True)]
    missing = np.isnan(scores).sum(axis=1)
    out["strict_pass"] = _majority(np.sum(scores >= strict, axis=1), missing, majority)
    out["trio_fail"] = _majority(np.sum(scores < fail, axis=1), missing, majority)
    out["critical_fail"] = np.sum(scores < crit, axis=1) >= majority
    # not critical on the scores present, yet the missing judges' could make a majority
    out["critical_open"] = ~out["critical_fail"] & (
        np.sum(scores < crit, axis=1) + np.isnan(scores).sum(axis=1) >= majority)
    out.attrs["judges"] = judges
    out.attrs["headers"] = trio_headers(judges, strict, fail, crit)
    return out


def _majority(hits: np.ndarray, missing: np.ndarray, majority: int) -> list[bool | None]:
    """Per item: True when ``hits`` judges' means reach a majority, False when they
    cannot even with every missing judge's, else None (open: the missing judges' means
    decide it, so the Judge trio sheet leaves it blank rather than say "No")."""
    return [True if h >= majority else None if h + m >= majority else False
            for h, m in zip(hits.tolist(), missing.tolist(), strict=True)]


def trio_headers(judges: list[str], strict: float, fail: float,
                 crit: float) -> dict[str, str]:
    """The Judge trio sheet's headers: each verdict column says its rule with the
    plan's numbers, since it counts the judges' own means, not the trio mean (a trio
    mean of 3.000 can fail where one of 2.889 does not)."""
    rule = f"at least {len(judges) // 2 + 1} of {len(judges)} judges' means"
    return {**{judge: f"{judge} mean" for judge in judges},
            "strict_pass": f"strict pass: {rule} >= {_mark(strict)}",
            "trio_fail": f"fails: {rule} below {_mark(fail)}",
            "critical_fail": f"critical: {rule} below {_mark(crit)}",
            "critical_open": "could be critical: a judge's mean is missing"}


def _mark(value: float) -> str:
    """A threshold as the protocol writes it: 3.0, 3.5, 2.25."""
    return f"{value:.1f}" if float(value * 10).is_integer() else f"{value:g}"


def trio_judges(ctx: Context) -> list[str]:
    """The locked trio's rater ids: ``[analysis.params.jsonl] judges`` or every rater."""
    mapping = (ctx.param("jsonl") or {}).get("judges") or {}
    return list(mapping.values()) or [r.id for r in ctx.study.raters]


def direction_tolerance(ctx: Context) -> float:
    """How much a delta must exceed to be directional (``direction_tolerance``)."""
    return float(ctx.param("direction_tolerance", DIRECTION_TOLERANCE))


def _above(tolerance: float) -> str:
    """How the rule says "more than the tolerance": the default (1e-09) is rounding,
    and a headline reading "delta > 1e-09" said it in scientific notation."""
    return "above 0, beyond rounding" if tolerance <= ROUNDING else f"> {setting_text(tolerance)}"


ROUNDING = 1e-6
"""A direction tolerance this small or smaller only absorbs rounding."""


def _judge_trio(ctx: Context) -> pd.DataFrame:
    """Mean per judge, trio mean, strict PASS / FAIL / critical per item (protocol 004)."""
    out = _trio_items(ctx)
    if out.empty:
        return empty_reason(out, "the rubric defines no total", case="")
    # words, blank where not open: the sheet leaves out a column blank on every row, so
    # a study with every score has no column of "no"
    out["critical_open"] = np.where(out["critical_open"], "Yes", "")
    return out


def _hypotheses(ctx: Context) -> pd.DataFrame:
    """Per task and hypothesis: delta of trio means, threshold and directional pass
    (:func:`~sheetflow.judges.pilot.hypothesis_table`, which the pilot summary file
    shares)."""
    items = _trio_items(ctx)
    hyps = ctx.param("hypotheses", [])
    if items.empty or not hyps:
        return empty_reason(pd.DataFrame(), "needs a total and params.hypotheses", task="")
    return hypothesis_table(items, hyps, direction_tolerance(ctx))


def _h_trio(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "trio_mean" in table:
        out["judge_trio"] = {"n_items": len(table),
                             "strict_pass": int(table["strict_pass"].eq(True).sum()),
                             "trio_fail": int(table["trio_fail"].eq(True).sum()),
                             "critical_fail": int(table["critical_fail"].sum())}


def _h_hyp(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "delta" not in table:
        return
    out["hypotheses"] = table[["task", "hypothesis", "delta", "threshold_pass",
                               "directional_pass"]].to_dict("records")
    verdict = pilot_verdict(table, _trio_items(ctx), int(ctx.param("pilot_pass_min_tasks", 2)))
    out["pilot"] = verdict
    said = verdict["pilot_verdict"]
    add_verdict(out, "pilot verdict", verdict["directional_passes"], None,
                None if said == "INCOMPLETE" else said == "PASS", said)


TRIO_CHECK = "judges of the locked trio who scored"
CRITICAL_CHECK = "critical failures"


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """Pilot PASS: each hypothesis directional in the minimum number of tasks, and no
    critical failure."""
    pilot = out.get("pilot")
    if not pilot:
        check = flag_check("pilot verdict", None, None, None, "hypothesis deltas not run")
        return Decision(status_of([check]), "pilot verdict from the hypothesis deltas",
                        [check])
    need = pilot["min_tasks"]
    judges = trio_judges(ctx)
    present = sorted(set(judges) & set(ctx.first["rater"]))
    absent = [j for j in judges if j not in present]
    # the name says what the value counts: "locked trio: 3 of 3 judges scored" stood
    # beside a value of 2 when a judge was missing
    checks = [flag_check(TRIO_CHECK, not absent, len(present), len(judges),
                         "missing: " + ", ".join(absent) if absent else "", comparison=">=")]
    above = _above(direction_tolerance(ctx))
    relations = {h["id"]: h.get("relation", ">") for h in ctx.param("hypotheses", [])}
    deltas = tables.get("hypothesis_deltas")
    tasks = _task_count(deltas)
    tolerance = direction_tolerance(ctx)
    checks += [_direction_check(h, n, need, tasks, _without_delta(deltas, h),
                                _direction_words(relations.get(h, ">"), above),
                                _tied_tasks(deltas, h, tolerance))
               for h, n in pilot["pass_counts"].items()]
    checks.append(_critical_check(pilot, _critical_words(ctx.target("critical_below", 2.0),
                                                         len(judges))))
    rule = (f"PILOT PASS when every hypothesis is directionally right (delta {above}, "
            "or at least 0 for a hypothesis stated with >=) "
            f"in at least {need} tasks and no item is a "
            f"critical failure, with the locked trio ({', '.join(judges)}) complete "
            "(protocol 004); PILOT FAIL when a hypothesis falls short even counting its "
            "tasks without a delta as right, or an item is a critical failure on the "
            "judges' scores there are (no missing score can undo either); otherwise no "
            "verdict while a task without a delta (a cell without items or without a "
            "complete trio) or an item a missing judge's score could make critical may "
            "still change it. Without the whole trio the decision is INCOMPLETE, the "
            "pilot verdict given beside it")
    decision = Decision(status_of(checks), rule, checks)
    if absent:  # a pilot without its whole trio is not judged at all
        decision.provisional_status = status_of(checks[1:])  # the judges there are
        decision.status = "incomplete"
        decision.reasons = [f"the locked trio is incomplete: no scores from "
                            f"{', '.join(absent)}"]
    return decision


def _critical_check(pilot: dict, words: str) -> Check:
    """No critical failure: not met when an item is critical on the scores present;
    undefined when none is but a judge's missing score could make one so (0 was "met"
    although such an item could halt the pilot); met otherwise."""
    critical, possibly = pilot["critical_failures"], pilot.get("possibly_critical", [])
    ok = False if critical else (None if possibly else True)
    if possibly:
        words += (f"; {len(possibly)} {'item' if len(possibly) == 1 else 'items'} could "
                  f"{'also ' if critical else ''}be critical for lack of a judge's score: "
                  + "; ".join(possibly))
    return flag_check(CRITICAL_CHECK, ok, critical, 0, words, comparison="<=")


def _direction_check(hyp: str, n: int, need: int, tasks: int,
                     undefined: tuple[int, list[str]], words: str,
                     tied: list[str] | None = None) -> Check:
    """A hypothesis's check: met at ``need`` directional tasks; with tasks whose delta is
    undefined (``undefined``: how many, and the tasks said by cause), undefined while
    they could still reach ``need``, else not met. The tasks whose delta is a tie
    (``tied``) are named: a count of 0 directional says nothing of why."""
    count, causes = undefined
    if tied:
        words += (f"; {len(tied)} of {tasks} tasks {'ties' if len(tied) == 1 else 'tie'}"
                  f" (delta 0 within direction_tolerance): {', '.join(tied)}")
    name = f"tasks where {hyp} is directional (of {tasks})"
    if not count or n >= need:
        ok: bool | None = n >= need
    else:  # short only if the undefined tasks could not make it up
        ok = None if n + count >= need else False
    if count:
        words += (f"; {count} of {tasks} tasks {'has' if count == 1 else 'have'} no "
                  f"delta: {'; '.join(causes)}")
        if ok is False:
            words += ", short of the target even if they were directional"
    return flag_check(name, ok, n, need, words, comparison=">=")


def _tied_tasks(hypotheses: pd.DataFrame | None, hyp: str, tolerance: float) -> list[str]:
    """The tasks where ``hyp``'s delta is 0 to within ``tolerance`` (a tie), in order."""
    if hypotheses is None or "delta" not in hypotheses:
        return []
    rows = hypotheses[hypotheses["hypothesis"] == hyp]
    delta = pd.to_numeric(rows["delta"], errors="coerce")
    return [str(t) for t in rows.loc[delta.abs() <= tolerance, "task"]]


def _without_delta(hypotheses: pd.DataFrame | None, hyp: str) -> tuple[int, list[str]]:
    """The tasks where ``hyp``'s delta is undefined, those with the same cause said once:
    ["task-1, task-2 (a cell without a complete trio: B)"]."""
    if hypotheses is None or "delta" not in hypotheses:
        return 0, []
    rows = hypotheses[(hypotheses["hypothesis"] == hyp) & hypotheses["delta"].isna()]
    causes: dict[str, list[str]] = {}
    for task, why in zip(rows["task"], rows["reason"], strict=True):
        causes.setdefault(str(why), []).append(str(task))
    return len(rows), [f"{', '.join(tasks)} ({why})" for why, tasks in causes.items()]


def _task_count(hypotheses: pd.DataFrame | None) -> int:
    """How many tasks the hypothesis deltas were computed over."""
    return 0 if hypotheses is None or "task" not in hypotheses else \
        int(hypotheses["task"].nunique())


def _critical_words(mark: float, judges: int) -> str:
    """The no-critical-failure check's note: the mark, where it comes from, and what it
    is not (the judges' own FAIL_CRITICAL verdict, a mean below 2.5)."""
    return (f"items with a judge's mean below {mark:g} from at least {judges // 2 + 1} of "
            f"{judges} judges (critical_below in the plan's targets; protocol 004's halt "
            "threshold: a cell < 2.0 on a majority of judges); not the judges' "
            "FAIL_CRITICAL verdict (mean < 2.5)")


def _direction_words(relation: str, above: str) -> str:
    """The check's note: what counts as the hypothesis's direction."""
    if relation == ">=":
        return "delta at least 0 (the hypothesis says >=): a tie counts"
    return f"delta {above}; a tie is not directional"


TRIO_TARGETS = (("strict_pass", 3.5), ("fail_below", 3.0), ("critical_below", 2.0))
"""The targets the trio's verdicts use, and the defaults when the plan sets none."""


def _targets_used(study: Study) -> str:
    """Each trio target with its value and where the value comes from."""
    targets = study.plan.targets
    return "; ".join(
        f"{name} {_mark(float(targets.get(name, default)))} "
        + ("(the plan's)" if name in targets else "(the default: not set in "
           "[analysis.targets])")
        for name, default in TRIO_TARGETS)


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    tolerance = float(study.plan.params.get("direction_tolerance", DIRECTION_TOLERANCE))
    return [
        ("Judge trio (004)",
         "Per judge the mean of the six dimensions; trio mean (the mean of the judges' "
         "means). The verdicts count the judges' own means, not the trio mean: strict "
         "PASS when a majority (2 of 3) of judges' means are >= strict_pass; fails when a "
         "majority are below fail_below; critical when a majority are below "
         f"critical_below. Targets used: {_targets_used(study)}. An item lacking a judge's "
         "mean has strict PASS and fails blank where that mean could decide them. So an "
         "item whose trio "
         "mean is below fail_below need not fail (only one judge below), and one whose "
         "trio mean is at or above it can fail (two judges just below, the third well "
         "above). The trio is locked (the judges of [analysis.params.jsonl]): an item "
         "lacking a judge's score has no trio mean, and a judge missing from the "
         "analysis makes the decision incomplete. An item not critical on the scores "
         "present that the missing judges' scores could make critical leaves the "
         "critical-failure check undefined (the check names it). A cell's trio mean is "
         "the mean of its items' trio means, undefined when any of its items has none "
         "(never a mean of the items that have one). Hypothesis delta = trio mean of the "
         "better cell minus the worse cell per task; directional pass = delta > "
         f"{setting_text(tolerance)} "
         "(direction_tolerance; an exact tie is not directional), or for a hypothesis "
         "stated with >= (relation, as H4: Cell D >= Cell A) delta >= 0 to within that "
         "tolerance (a tie is directional); threshold pass = delta "
         ">= the hypothesis's min_delta. Pilot PASS when each hypothesis passes "
         "directionally in the plan's minimum number of tasks (the check says of how "
         "many tasks, and names the tasks whose delta is a tie, 0 to within the "
         "tolerance) and no item is a critical failure. "
         f"{_reading(*_pass_rule(study))} A task whose "
         "delta is undefined (a cell without a complete trio) counts neither way: the "
         "hypothesis's check is undefined while such tasks could still bring it to the "
         "minimum, and not met when it falls short even if all were directional; the pilot "
         "verdict is then INCOMPLETE, not FAIL, unless a check is not met or an item is a "
         "critical failure. The critical mark is the plan's "
         f"critical_below ({float(study.plan.targets.get('critical_below', 2.0)):g}; "
         "protocol 004's halt threshold is a cell below 2.0 on a majority of judges); it is "
         "not the judges' FAIL_CRITICAL verdict band (a mean below 2.5), which is each "
         "judge's label, checked against the mean, and takes no part in the pilot "
         "verdict."),
    ]


def _reading(need: int, hypotheses: int) -> str:
    """Which reading of protocol 004's pass rule is used, and the two it is not."""
    return ("Protocol 004's \"directional sign correct on H2/H3/H4 in >= 2 of 3 tasks "
            "(6/9 cells minimum)\" is read as: each hypothesis directional in at least "
            f"{need} tasks (pilot_pass_min_tasks), so at least {hypotheses * need} "
            "hypothesis-task results directional, the \"6/9 cells minimum\" this reading "
            "implies; "
            "not as any 6 of the 9 results (H4 could then fail in every task), nor as 2 "
            "tasks in which all three hold.")


def _pass_rule(study: Study) -> tuple[int, int]:
    """The plan's minimum number of tasks and its number of hypotheses."""
    params = study.plan.params
    return int(params.get("pilot_pass_min_tasks", 2)), len(params.get("hypotheses", []))


PLAN = ProtocolPlan(
    protocol="004",
    template="judge-likert",
    analyses={
        "judge_trio": _judge_trio,
        "hypothesis_deltas": _hypotheses,
    },
    headlines={
        "judge_trio": _h_trio,
        "hypothesis_deltas": _h_hyp,
    },
    methods=methods,
    method_topics={
        "Judge trio (004)": ("judge_trio", "hypothesis_deltas",),
    },
    decide=_decide,
)
