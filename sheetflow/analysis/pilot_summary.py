"""Protocol 004's ``out/pilot-summary.json``, from the ratings analysed.

Human judges and automated ones are treated alike: whoever scored, ``analyze`` writes
the pilot summary in the protocol's own schema from the ratings it analysed, through
the same function the JSONL import uses (:func:`sheetflow.judges.records.pilot_summary`),
so the two can never disagree on the same scores. What the ratings cannot tell -- the
candidates' cost and the run's execution window -- is taken from the summary the import
wrote for the same pilot when its results match, and is ``null`` otherwise (human
judges: there is no such record). :func:`note_unrecorded` says which are ``null`` and
why, among the panel's notes: for judges the study imports (``[analysis.params.jsonl]
judges``) it is a warning naming the command that supplies them (``analyze`` exits 1);
for judges who scored by hand, a note that they have none. With the trio incomplete no
pilot summary is written and an earlier one is removed (the decision is "incomplete").
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..judges.records import DIMENSIONS, DIRECTION_TOLERANCE, Thresholds, pilot_summary
from ..spec.study import judge_rater_ids

if TYPE_CHECKING:  # pragma: no cover - types only
    from .context import Analysis

PILOT_FILE = "pilot-summary.json"
_FROM_RECORDS = ("total_cost_usd", "execution_window_utc")


def pilot_document(analysis: Analysis, previous: bytes | None) -> dict[str, Any] | None:
    """The pilot summary of ``analysis`` (None when the trio is not complete).

    Parameters
    ----------
    analysis : Analysis
    previous : bytes, optional
        The ``out/pilot-summary.json`` the import wrote, read once by the caller.
    """
    study = analysis.study
    panel = getattr(analysis, "panel", None)
    if "pilot" not in analysis.summary or (panel is not None and not panel.complete):
        return None
    params = study.plan.params
    mapping = params.get("jsonl") or {}
    judges = dict(mapping.get("judges") or {r.id: r.id for r in study.raters})
    cells = dict(mapping.get("arms") or {a.id: a.id for a in study.design.arms})
    records = _records(analysis, judges, cells, str(params.get("task_column", "task_id")))
    if not records:
        return None
    targets = study.plan.targets
    doc = pilot_summary(
        records, list(judges), list(params.get("hypotheses", [])), cells,
        pilot_id=str(params.get("pilot_id", study.id)), window="",
        min_tasks=int(params.get("pilot_pass_min_tasks", 2)),
        thresholds=Thresholds(float(targets.get("strict_pass", 3.5)),
                              float(targets.get("critical_below", 2.0))),
        tolerance=float(params.get("direction_tolerance", DIRECTION_TOLERANCE)))
    for key in _FROM_RECORDS:
        doc[key] = None
    earlier = _earlier(previous)
    if earlier and all(earlier.get(k) == doc[k] for k in
                       ("pilot_id", "results_per_task", "aggregate")):
        doc.update({k: earlier.get(k) for k in _FROM_RECORDS})
    return doc


def note_unrecorded(analysis: Analysis, doc: dict[str, Any]) -> str:
    """Say in the panel's notes what ``doc`` leaves ``null`` and why; the note, or "".

    Sets ``summary["pilot"]["unrecorded"]`` (the fields left ``null``) and
    ``summary["pilot"]["unrecorded_warning"]``: the note when the study imports its
    judges (the fields exist and a re-import supplies them: ``analyze`` warns and exits
    1), else "" (judges who scored by hand have none; the note says so).
    """
    missing = [key for key in _FROM_RECORDS if doc.get(key) is None]
    pilot = analysis.summary["pilot"]
    pilot["unrecorded"], pilot["unrecorded_warning"] = missing, ""
    if not missing:
        return ""
    fields = f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} null"
    if not judge_rater_ids(analysis.study):
        note = (f"out/{PILOT_FILE}: {fields}: the judges scored by hand (the study imports no "
                "judge outputs: no judges in [analysis.params.jsonl]), so there is no "
                "candidate cost or run window to record")
    else:
        root = shlex.quote(str(analysis.study.root))
        note = pilot["unrecorded_warning"] = (
            f"out/{PILOT_FILE}: {fields}: no import of the judges' outputs with an execution "
            "window matches these ratings; to record them run sheetflow import-judges "
            f"{root} OUTPUTS.jsonl --execution-window 'START to END' --force, then "
            f"sheetflow collect {root} and sheetflow analyze {root}")
    analysis.summary.setdefault("panel", {}).setdefault("notes", []).append(note)
    return note


def _records(analysis: Analysis, judges: dict[str, str], cells: dict[str, str],
             task_column: str) -> list[dict[str, Any]]:
    """One record per item scored by every judge, in the JSONL import's shape."""
    data = analysis.data
    scores = data[data["dimension"].isin(DIMENSIONS) & (data["sitting"].astype(int) == 1)]
    values = pd.to_numeric(scores["value"], errors="coerce")
    table = scores.assign(v=values).pivot_table(index=["case", "arm"],
                                                columns=["rater", "dimension"], values="v",
                                                aggfunc="first")
    task_of = {it.id: it.fields.get(task_column, "") for it in analysis.study.items}
    cell_of = {arm: cell for cell, arm in cells.items()}
    out = []
    for (case, arm), row in table.iterrows():
        rec: dict[str, Any] = {"task_id": task_of.get(case, ""), "cell_id": cell_of.get(arm),
                               "candidate_cost_usd": 0.0}
        for key, rater in judges.items():
            dims = {d: row.get((rater, d)) for d in DIMENSIONS}
            if any(v is None or (isinstance(v, float) and math.isnan(v))
                   for v in dims.values()):
                return []  # a judge without every score: the trio is not complete
            rec[key] = {d: int(v) for d, v in dims.items()}
        if rec["cell_id"] is None:
            continue
        out.append(rec)
    return out


def _earlier(previous: bytes | None) -> dict[str, Any] | None:
    if not previous:
        return None
    try:
        doc = json.loads(previous.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_previous(out: Path) -> bytes | None:
    """The pilot summary already in ``out`` (the import's), or None."""
    try:
        return (out / PILOT_FILE).read_bytes()
    except OSError:
        return None
