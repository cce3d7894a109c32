"""The chosen design and its rationale, recorded in the study folder (``sizing.json``).

The spec hash covers the record (see :func:`sheetflow.spec.hashing.canonical_spec`),
so publishing the hash freezes the design and why it was chosen. The record holds no
time stamp: planning again with the same inputs writes the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..packs.seal import KEY_FILE, SEALED_DIR
from ..spec.model import SIZING_FILE
from ..staging import OutputSet
from .design import PlanResult
from .sim_error import short_of_all

SIZING_KEYS = ("raters", "items", "expected_width", "expected_width_se", "within_error",
               "method", "simulations", "measure", "level", "source", "target", "n_boot",
               "seed", "cost_unit", "notes")
"""The plan's keys ``sizing.json`` records: the chosen design with its simulated width's
standard error and whether it lies within simulation error of the target (null and
false for a closed form, which has no simulation error), and the plan's rationale. A
plan whose designs have the internal team beside the raters also records
``plus_internal_team``; one whose chosen width rests on fewer than all its simulated
studies or bootstrap resamples records ``studies_used``, ``resamples_used`` and
``resamples_total`` (:func:`~.sim_error.short_of_all`); one whose chosen design departs
from the count the protocol fixes records ``departure``, that design's ``note`` ("more
items than the protocol's 12"), so the record never passes for the protocol's design."""


def sizing_record(result: PlanResult) -> dict[str, Any]:
    """The part of a plan that is frozen: the chosen design, target, source and notes."""
    full = result.to_dict()
    record = {k: full[k] for k in SIZING_KEYS}
    best = result.chosen()
    record["cost"] = None if best is None else float(best["cost"])
    if result.team:  # the recorded raters are the validators; the team rates beside them
        record["plus_internal_team"] = True
    if best is not None and best.get("note"):  # not the protocol's own design: say so
        record["departure"] = best["note"]
    if best is not None and short_of_all(best):  # the recorded width rests on fewer
        record.update({k: full[k] for k in ("studies_used", "resamples_used",
                                            "resamples_total")})
    return record


def check_recordable(root: str | Path) -> None:
    """Refuse to record a design for a study already generated (its spec hash sealed:
    a new record would change it, and ``analyze`` would then refuse the study).
    ``plan --record`` asks first, so a refusal leaves nothing written."""
    sealed = Path(root) / SEALED_DIR / KEY_FILE
    if sealed.exists():
        raise UsageError(f"{sealed}: the study is already generated and its spec hash "
                         "sealed; a design is recorded before generate (plan without "
                         "--record to see the designs)")


def record_plan(root: str | Path, result: PlanResult) -> Path:
    """Write ``sizing.json`` into the study folder, whole or not at all; its path.

    Raises
    ------
    ValueError
        No design of the plan meets its target (there is nothing to record).
    UsageError
        The study is already generated: its spec hash is sealed, and a new record
        would change it (``analyze`` would then refuse the study).
    """
    if result.chosen() is None:
        raise ValueError("no design meets the target; widen the grid before recording")
    check_recordable(root)
    path = Path(root) / SIZING_FILE
    text = json.dumps(sizing_record(result), indent=2, sort_keys=True, ensure_ascii=False)
    with OutputSet(label="plan --record", what="sizing record") as outputs:
        outputs.write(path, (text + "\n").encode("utf-8"))
    return path
