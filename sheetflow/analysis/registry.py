"""Where the analyses come from: one :class:`ProtocolPlan` per module.

The shared agreement analyses live in :mod:`.agreement`; each protocol's plan lives in
a module named ``p<NNN>_<template>`` (``p000_paired_rubric`` ... ``p004_judge_likert``)
that defines ``PLAN``. Modules are found by that name pattern, so a new protocol is one
new module (and its template), nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..spec.raters import protocol_number
from . import agreement, confidence, position
from .protocol import AnalysisFn, HeadlineFn, ProtocolPlan

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..spec.study import Study

PROTOCOL_MODULE = re.compile(r"^p(\d{3})_(\w+)$")


@cache
def all_plans() -> tuple[ProtocolPlan, ...]:
    """The shared plan first, then every protocol module's ``PLAN`` in number order."""
    plans = [agreement.PLAN, position.PLAN, confidence.PLAN]
    here = str(Path(__file__).resolve().parent)
    for info in sorted(pkgutil.iter_modules([here]), key=lambda m: m.name):
        if PROTOCOL_MODULE.match(info.name):
            plans.append(importlib.import_module(f"{__package__}.{info.name}").PLAN)
    return tuple(plans)


def planned_analyses(study: Study) -> list[str]:
    """The study's ``run`` list, then the analyses that always run for its design."""
    names = list(study.plan.run)
    for plan in all_plans():
        if plan.runs_when is not None and plan.runs_when(study):
            names += [n for n in plan.analyses if n not in names]
    return names


def all_analyses() -> dict[str, AnalysisFn]:
    """Every analysis by its plan name."""
    return {name: fn for plan in all_plans() for name, fn in plan.analyses.items()}


def all_headlines() -> dict[str, HeadlineFn]:
    """Every headline function by its analysis's plan name."""
    return {name: fn for plan in all_plans() for name, fn in plan.headlines.items()}


def protocol_plan(protocol: Any) -> ProtocolPlan | None:
    """The plan of a study's protocol (``"000 External ..."`` -> the 000 module)."""
    number = protocol_number(protocol)
    if not number:
        return None
    return next((p for p in all_plans() if p.protocol == number), None)
