"""Protocol 004's pilot figures from per-item trio means: one computation for every output.

The analysis (its Hypotheses sheet, checks and pilot verdict), ``analyze``'s
``out/pilot-summary.json`` and the JSONL import's ``pilot-summary.json`` all take their
cell means, deltas and pilot verdict from here, so that a study with more than one
item per cell, or a pilot the missing scores leave open, reads the same in each.

The input is one row per item: ``case``, ``task``, ``arm``, ``trio_mean`` (NaN when the
locked trio did not all score it), ``critical_fail``, ``critical_open`` (not critical
on the scores present, but the missing judges' scores could make it so) and
``reason`` (why it has no trio mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..spec.hypotheses import directional as hypothesis_directional
from ..stats._util import rounded_difference

NO_DELTA = "a cell without a complete trio"
"""Why a task has no delta although its cells have items: the locked trio did not
all score one of them."""


def cell_means(items: pd.DataFrame) -> pd.Series:
    """Per task and arm, the mean of its items' trio means; undefined when any item has
    none (protocol 004's cell trio mean is of every judge's score: pandas' mean skipped
    the NaN, so a delta rested on the items that happened to be complete)."""
    by = items.groupby(["task", "arm"])["trio_mean"]
    return by.mean().where(by.count() == by.size())


def hypothesis_table(items: pd.DataFrame, hypotheses: list[dict[str, Any]],
                     tolerance: float) -> pd.DataFrame:
    """Per task and hypothesis: the cells' means, their delta and whether it passes.

    Parameters
    ----------
    items : pandas.DataFrame
        One row per item (see the module's docstring).
    hypotheses : list of dict
        ``id``, ``better``/``worse`` (arm ids), optional ``label``, ``relation``
        (``">"`` or ``">="``) and ``min_delta``.
    tolerance : float
        A delta must exceed this to be directional (``direction_tolerance``).

    Returns
    -------
    pandas.DataFrame
        One row per task and hypothesis; ``delta`` NaN where a cell has no mean, with
        ``reason`` saying why.
    """
    means = cell_means(items)
    rows = []
    for task in sorted(items["task"].unique()):
        for h in hypotheses:
            better = means.get((task, h["better"]), np.nan)
            worse = means.get((task, h["worse"]), np.nan)
            # equal means summed in another order differ in the last bit: the sheet
            # showed -8.88E-16 for a tie
            delta = rounded_difference(better, worse)
            min_delta = float(h.get("min_delta", 0.0))
            # direction: better by more than the tolerance; a tie only where the
            # hypothesis says "at least" (">=")
            relation = h.get("relation", ">")
            rows.append({"task": task, "hypothesis": h["id"], "label": h.get("label", ""),
                         "better": h["better"], "worse": h["worse"], "relation": relation,
                         "better_mean": better, "worse_mean": worse, "delta": delta,
                         "min_delta": min_delta, "tolerance": tolerance,
                         "threshold_pass": bool(delta >= min_delta - 1e-12),
                         "directional_pass": hypothesis_directional(delta, tolerance,
                                                                    relation),
                         "reason": "" if np.isfinite(delta) else no_delta(
                             items, task, (h["better"], h["worse"]))})
    return pd.DataFrame(rows)


def no_delta(items: pd.DataFrame, task: str, arms: tuple[str, str]) -> str:
    """Why a task's delta is undefined: a cell without items, or one without a trio."""
    here = items[items["task"] == task]
    empty = [a for a in arms if not (here["arm"] == a).any()]
    if empty:
        return "no items in " + ", ".join(empty)
    lacking = [a for a in arms if here.loc[here["arm"] == a, "trio_mean"].isna().any()]
    return f"{NO_DELTA}: {', '.join(lacking)}"


def pilot_verdict(hypotheses: pd.DataFrame, trio: pd.DataFrame, min_tasks: int) -> dict:
    """PASS when every hypothesis is directionally right in ``min_tasks`` tasks and no
    item is a critical failure (protocol 004 pilot binary verdict); FAIL when a
    hypothesis falls short even counting its tasks without a delta as directional, or
    an item is a critical failure; otherwise INCOMPLETE: a task without a delta for a
    hypothesis short of ``min_tasks`` without it, or an item without a complete trio,
    leaves the verdict open (protocol 004's "PILOT FAIL = otherwise" is a sign or a
    critical cell found wanting, not one never scored). An item not critical on the
    scores present but which the missing judges' scores could make one is counted apart
    (``items_possibly_critical``, named in ``possibly_critical``): it lacks a complete
    trio, so it leaves the verdict INCOMPLETE, never PASS."""
    if "directional_pass" in hypotheses:
        by = hypotheses.groupby("hypothesis")
        counts = by["directional_pass"].sum().astype(int)
        open_ = by["delta"].apply(lambda d: int(d.isna().sum()))
    else:
        counts = open_ = pd.Series(dtype=int)
    critical = int(trio["critical_fail"].sum()) if "critical_fail" in trio else 0
    without_trio = int(trio["trio_mean"].isna().sum()) if "trio_mean" in trio else 0
    possibly = possibly_critical(trio)
    short = bool(((counts + open_) < min_tasks).any())
    # a task without a delta keeps open only a hypothesis not yet at min_tasks: one
    # already there is met whatever that task would show (a cell with no items in one
    # task left every check met under an INCOMPLETE verdict)
    undecided = bool(((counts < min_tasks) & (open_ > 0)).any())
    if not len(counts) or short or critical:
        verdict = "FAIL"
    elif undecided or without_trio or possibly:
        verdict = "INCOMPLETE"
    else:  # every hypothesis reaches min_tasks on its defined tasks alone
        verdict = "PASS"
    return {"pass_counts": {k: int(v) for k, v in counts.items()},
            "undefined_counts": {k: int(v) for k, v in open_.items()},
            "directional_passes": int(counts.sum()), "critical_failures": critical,
            "items_without_trio": without_trio,
            "items_possibly_critical": len(possibly), "possibly_critical": possibly,
            "min_tasks": min_tasks, "pilot_verdict": verdict}


def possibly_critical(trio: pd.DataFrame) -> list[str]:
    """The items that could be critical failures for lack of a judge's score, each as
    "R04 (task-1, cell_c_qwen_solo; no score from judge-3)"."""
    if "critical_open" not in trio:
        return []
    rows = trio[trio["critical_open"].astype(bool)]
    return [f"{case} ({f'{task}, ' if task else ''}{arm}; {why})" for case, task, arm, why
            in zip(rows["case"], rows["task"], rows["arm"], rows["reason"], strict=True)]


def summary_results(items: pd.DataFrame, deltas: pd.DataFrame, verdict: Mapping[str, Any],
                    hypotheses: list[dict[str, Any]],
                    cells: Mapping[str, str]) -> dict[str, Any]:
    """``results_per_task`` and ``aggregate`` of ``pilot-summary.json``, from the items,
    the :func:`hypothesis_table` and the :func:`pilot_verdict` the analysis reports.

    A cell mean or delta the trio leaves undefined is ``None`` (the verdict is then
    INCOMPLETE or FAIL), never left out or taken over part of the cell's items.

    Parameters
    ----------
    items, deltas : pandas.DataFrame
    verdict : mapping
    hypotheses : list of dict
        ``id`` (H2) and optional ``name`` for the delta key (``h2_delta_opus``).
    cells : mapping
        Cell id (``A``) -> arm id, as in ``[analysis.params.jsonl] arms``.

    Returns
    -------
    dict
    """
    means = cell_means(items)
    by = {(row["task"], row["hypothesis"]): row for row in deltas.to_dict("records")} \
        if "delta" in deltas else {}
    per_task: dict[str, dict[str, Any]] = {}
    for task in sorted(items["task"].unique()):
        row: dict[str, Any] = {f"cell_{c}_trio_mean": _rounded(means.get((task, cells[c])))
                               for c in sorted(cells)}
        for h in hypotheses:
            found = by.get((task, h["id"]), {})
            base = h["id"].lower()
            row[f"{base}_delta_{h.get('name', 'delta')}"] = _rounded(found.get("delta"))
            row[f"{base}_directional_pass"] = bool(found.get("directional_pass", False))
        per_task[task] = row
    counts = verdict.get("pass_counts", {})
    return {"results_per_task": per_task,
            "aggregate": {**{f"{h['id'].lower()}_pass_count": int(counts.get(h["id"], 0))
                             for h in hypotheses},
                          "critical_failures": int(verdict["critical_failures"]),
                          "pilot_verdict": verdict["pilot_verdict"]}}


def _rounded(value: Any) -> float | None:
    """A mean or delta as the summary file gives it: 4 decimals, None when undefined."""
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), 4)
