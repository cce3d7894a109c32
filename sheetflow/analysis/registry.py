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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - types only
    import pandas as pd

    from ..study import Study
    from .context import Context
    from .decision import Arms, Decision

AnalysisFn = Callable[["Context"], "pd.DataFrame"]
HeadlineFn = Callable[["Context", "pd.DataFrame", dict], None]
MethodsFn = Callable[["Study"], list[tuple[str, str]]]
DecideFn = Callable[["Context", dict, dict], "Decision"]
ArmsFn = Callable[["Context", dict], "Arms | None"]
FeedbackFn = Callable[["Context"], dict[str, dict[str, "pd.DataFrame"]]]
DataMethodsFn = Callable[["Context"], list[tuple[str, str]]]
PROTOCOL_MODULE = re.compile(r"^p(\d{3})_(\w+)$")


@dataclass(frozen=True)
class ProtocolPlan:
    """The analyses one module contributes.

    Attributes
    ----------
    protocol : str
        The protocol number (``"000"``), or ``""`` for the shared analyses.
    template : str
        The bundled template the protocol's study starts from (``"paired-rubric"``).
    analyses : mapping of str to callable
        Plan name (as in ``[analysis] run``) -> function of a context giving a table.
    headlines : mapping of str to callable
        Plan name -> function copying the table's key figures into the summary.
    methods : callable
        Study -> (topic, text) pairs for the Methods sheet.
    method_topics : mapping of str to tuple of str
        Methods topic -> the analyses it explains; the topic is shown only when one of
        them ran. A topic not listed is shown for studies of this plan's protocol.
    decide : callable, optional
        (context, tables, summary so far) -> the protocol's :class:`~.decision.Decision`
        on the raters included (the panel is applied afterwards).
    arms : callable, optional
        (context, tables) -> :class:`~.decision.Arms`, for designs with arms.
    feedback : callable, optional
        context -> rater id -> sheet name -> table: what each rater may be sent about
        their own scores (written as one small workbook per rater).
    data_methods : callable, optional
        Context -> Methods entries that need the data (counts a setting leaves), shown
        for studies of this plan's protocol.
    runs_when : callable, optional
        Study -> bool: when true, every analysis of this plan runs whatever the
        study's ``run`` list says (checks that always apply to such a design, such as
        position bias in paired designs).
    """

    protocol: str
    template: str
    analyses: Mapping[str, AnalysisFn] = field(default_factory=dict)
    headlines: Mapping[str, HeadlineFn] = field(default_factory=dict)
    methods: MethodsFn | None = None
    method_topics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    decide: DecideFn | None = None
    arms: ArmsFn | None = None
    feedback: FeedbackFn | None = None
    data_methods: DataMethodsFn | None = None
    runs_when: Callable[[Study], bool] | None = None


def fixed_methods(topic: str, text: str) -> MethodsFn:
    """The Methods function of a plan whose one entry is the same for every study.

    Parameters
    ----------
    topic, text : str
        The Methods-sheet topic and its text.

    Returns
    -------
    callable
        Study -> ``[(topic, text)]``.
    """
    return lambda study: [(topic, text)]


@cache
def all_plans() -> tuple[ProtocolPlan, ...]:
    """The shared plan first, then every protocol module's ``PLAN`` in number order."""
    from . import agreement, confidence, position

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
    match = re.match(r"\s*(\d{3})\b", str(protocol or ""))
    if not match:
        return None
    return next((p for p in all_plans() if p.protocol == match.group(1)), None)
