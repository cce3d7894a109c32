"""Protocol 004's ``out/pilot-summary.json``, from the ratings analysed.

Human judges and automated ones are treated alike: whoever scored, ``analyze`` writes
the pilot summary in the protocol's own schema from the analysis itself: its items'
trio means, its hypothesis deltas and its pilot verdict, rendered by
:func:`sheetflow.judges.pilot.summary_results`, which the JSONL import's summary
(:func:`sheetflow.judges.records.pilot_summary`) renders through too, so the file, the
Summary sheet and the import can never disagree on the same scores. A cell with no
items in a task has a ``null`` mean and delta there, and the verdict is INCOMPLETE
while that task could still change it, as in the Summary. What the ratings cannot tell -- the
candidates' cost and the run's execution window -- is taken from the summary the import
wrote for the same pilot when its results match, and is ``null`` otherwise (human
judges: there is no such record). :func:`note_unrecorded` says which are ``null`` and
why, among the panel's notes: for judges the study imports (``[analysis.params.jsonl]
judges``) it is a warning naming the command that supplies them (``analyze`` exits 1);
for judges who scored by hand, a note that they have none. With the panel incomplete (a
judge's pack missing, or taken in with blank scores by ``--allow-partial``) no pilot
summary is written and an earlier one is removed (the decision is "incomplete").
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..judges.pilot import summary_results
from ..spec.study import judge_rater_ids

if TYPE_CHECKING:  # pragma: no cover - types only
    from .context import Analysis

PILOT_FILE = "pilot-summary.json"
_FROM_RECORDS = ("total_cost_usd", "execution_window_utc")


def pilot_document(analysis: Analysis, previous: bytes | None) -> dict[str, Any] | None:
    """The pilot summary of ``analysis`` (None when the panel is not complete).

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
    judges = list(dict(mapping.get("judges") or {r.id: r.id for r in study.raters}).values())
    cells = dict(mapping.get("arms") or {a.id: a.id for a in study.design.arms})
    items = analysis.tables.get("judge_trio", pd.DataFrame())
    if "trio_mean" not in items or items.empty:
        return None
    # the analysis's own items, deltas and verdict: the file and the Summary are one
    # computation (a trio keyed by task and cell kept one item per cell)
    doc = {"pilot_id": str(params.get("pilot_id", study.id)), "execution_window_utc": None,
           "total_cost_usd": None,
           "total_judge_calls": int(items.reindex(columns=judges).notna().sum().sum()),
           "total_candidate_calls": len(items),
           **summary_results(items, analysis.tables.get("hypothesis_deltas", pd.DataFrame()),
                             analysis.summary["pilot"], list(params.get("hypotheses", [])),
                             cells)}
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
