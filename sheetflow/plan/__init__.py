"""Plan a study before it starts: how many raters and items reach a target precision.

:func:`plan_study` reads a study folder (its rubric, design and bands; its collected
ratings as a pilot when it has them), plans alpha by simulation or the ICC by
Bonett's formula over a grid of raters x items, and adds plain-words notes on the
study's own design. :func:`record_plan` writes the chosen design and its rationale to
``sizing.json`` in the study folder, which the spec hash covers.
:func:`write_plan_workbook` (in :mod:`.workbook`) writes ``out/plan.xlsx``.
Nothing here prints; progress goes to an optional callback.
"""

from __future__ import annotations

from .closed_forms import (
    agreement_g_items,
    cohen_kappa_power_items,
    cohen_kappa_precision_items,
    fce_kappa_variance,
    icc_test_items,
    zou_icc_lower_items,
)
from .defaults import band_width
from .design import Costs, PlanResult, Target, items_for_target, plan_alpha, plan_icc
from .formulas import bonett_icc_items, bonett_icc_width, krippendorff_min_values, zou_icc_items
from .kappa_size import kappa_ci_items, kappa_lower_limit, kappa_power_items
from .record import SIZING_FILE, record_plan
from .simulate import ModelSource, PilotSource, simulate_cell, simulate_grid
from .study_plan import plan_study

__all__ = [
    "SIZING_FILE",
    "Costs",
    "ModelSource",
    "PilotSource",
    "PlanResult",
    "Target",
    "agreement_g_items",
    "band_width",
    "bonett_icc_items",
    "bonett_icc_width",
    "cohen_kappa_power_items",
    "cohen_kappa_precision_items",
    "fce_kappa_variance",
    "icc_test_items",
    "items_for_target",
    "kappa_ci_items",
    "kappa_lower_limit",
    "kappa_power_items",
    "krippendorff_min_values",
    "plan_alpha",
    "plan_icc",
    "plan_study",
    "record_plan",
    "simulate_cell",
    "simulate_grid",
    "zou_icc_items",
    "zou_icc_lower_items",
]
