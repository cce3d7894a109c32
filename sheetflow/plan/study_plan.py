"""Plan a study folder: grid defaults, the anticipated agreement, and the band note."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np

from ..collect.outputs import OUT_DIR, RATINGS_NAME
from ..errors import UsageError
from ..spec.model import Study
from ..spec.study import load_study
from .design import Costs, PlanResult, Target, items_for_target, plan_alpha, plan_icc
from .formulas import krippendorff_min_values
from .inputs import (
    Measure,
    model_source,
    pilot_from_study,
    pilot_source,
    read_pilot_csv,
    study_measure,
)
from .simulate import STATISTICS, ModelSource, PilotSource, Progress

DEFAULT_RATERS = (2, 3, 4, 5, 6)
DEFAULT_ITEMS = (10, 25, 50, 100, 200)
MAX_SEARCH_ITEMS = 3000  # the note's search for "how many cases" stops here


def band_width(study: Study) -> float | None:
    """The narrowest band of the plan (0.10 for bands at 0.80 / 0.70 / 0.60), or None."""
    edges = sorted(b.minimum for b in study.plan.bands if b.minimum > -1)
    gaps = [hi - lo for lo, hi in pairwise(edges)]
    return round(min(gaps), 10) if gaps else None


def plan_study(
    root: str | Path, *, statistic: str = "alpha", measure: str | None = None,
    expected: float | None = None, shares: list[float] | None = None,
    pilot: str | Path | None = None, target: Target | None = None,
    raters: Sequence[int] | None = None, items: Sequence[int] | None = None,
    costs: Costs | None = None, simulations: int = 100, n_boot: int = 500,
    seed: int | None = None, assurance: float | None = None,
    progress: Progress | None = None,
) -> PlanResult:
    """Plan the study in ``root``: designs over raters x items, the cheapest, a plain note.

    Parameters
    ----------
    root : str or Path
        The study folder (its rubric and design; items may still be a sample).
    statistic : {"alpha", "fleiss_kappa", "cohen_kappa", "icc"}
        Krippendorff's alpha at the measure's level, Fleiss' kappa, Cohen's kappa (two
        raters only) - all simulated - or the ICC (Bonett's formula).
    measure : str, optional
        A total or dimension id; default the first total, else the first dimension.
    expected : float, optional
        The anticipated alpha (or ICC). Without it alpha is planned from a pilot:
        ``pilot``, else the study's own ``out/ratings.csv`` (unblinded with its key).
    shares : list of float, optional
        Anticipated shares of the measure's values (default equal shares).
    target : Target, optional
        Default: an interval no wider than the narrowest band of the plan.
    raters, items : sequence of int, optional
        The grid; the study's own rater and item counts are always added.
    costs : Costs, optional
    simulations, n_boot, seed : int
        Data sets per design, bootstrap resamples per data set, and the seed
        (default: the plan's seed).
    assurance : float, optional
        ICC only: use Zou's formula with this assurance.
    progress : callable, optional
        Called with (designs done, designs in all).

    Returns
    -------
    PlanResult
        With ``notes`` on the study's own design in plain words.

    Raises
    ------
    UsageError
        A missing or contradictory input, named as the option to give.
    """
    study = load_study(root)
    m = study_measure(study, measure)
    target = target or _default_target(study)
    own_raters = 2 if statistic == "cohen_kappa" else max(2, len(study.raters))
    raters = [2] if statistic == "cohen_kappa" else sorted({*(raters or DEFAULT_RATERS),
                                                            own_raters})
    items = sorted({*(items or DEFAULT_ITEMS), max(2, len(study.items))})
    seed = study.plan.seed if seed is None else seed
    if statistic == "icc":
        if expected is None or pilot is not None or shares is not None:
            raise UsageError("an ICC plan takes --expected (the anticipated ICC), not a "
                             "pilot or value shares")
        try:
            result = plan_icc(expected, raters=raters, items=items, target=target,
                              costs=costs, assurance=assurance, measure=f"icc {m.id}")
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        result.notes = _icc_notes(result, study)
        return result
    if assurance is not None:
        raise UsageError("--assurance is for ICC plans (Zou 2012); simulated plans give "
                         "the share of studies meeting a lower bound with --above")
    if statistic not in STATISTICS:
        raise UsageError(f"--statistic {statistic!r}: choose one of "
                         f"{', '.join((*STATISTICS, 'icc'))}")
    source = _source(Path(root), study, m, expected, shares, pilot)
    result = plan_alpha(source, raters=raters, items=items, target=target, costs=costs,
                        units_per_item=m.units_per_item, simulations=simulations,
                        n_boot=n_boot, seed=seed, measure=f"{statistic} {m.id}",
                        progress=progress, statistic=statistic)
    result.notes = _simulated_notes(result, study, m, source, own_raters)
    return result


def _default_target(study: Study) -> Target:
    width = band_width(study)
    if width is None:
        raise UsageError("the study's plan has no bands; give a target with --width W "
                         "or --above EDGE")
    return Target(width=width)


def _source(root: Path, study: Study, m: Measure, expected: float | None,
            shares: list[float] | None, pilot: str | Path | None) -> ModelSource | PilotSource:
    if expected is not None:
        if pilot is not None:
            raise UsageError("give either --expected or --pilot, not both")
        return model_source(m, expected, shares)
    if pilot is not None:
        return pilot_source(read_pilot_csv(pilot, m), m, f"pilot {Path(pilot).name}")
    if (root / OUT_DIR / RATINGS_NAME).exists():
        return pilot_source(pilot_from_study(root, study, m), m,
                            f"pilot {OUT_DIR}/{RATINGS_NAME}")
    raise UsageError(f"{root}: no anticipated agreement and no collected ratings; give "
                     "--expected ALPHA (e.g. 0.75) or --pilot ratings.csv from an earlier "
                     "study")


_NAMES = {"alpha": "alpha", "fleiss_kappa": "Fleiss' kappa", "cohen_kappa": "Cohen's kappa"}


def _simulated_notes(result: PlanResult, study: Study, m: Measure,
                     source: ModelSource | PilotSource, r: int) -> list[str]:
    """Plain words on the study's own design, the cases it would need, Krippendorff's table."""
    n, name = max(2, len(study.items)), _NAMES[result.statistic]
    t = result.table
    row = t[(t["raters"] == r) & (t["items"] == n)].iloc[0]
    w, centre = float(row["expected_width"]), float(row["estimate_median"])
    unit_words = f", {n * m.units_per_item} rated responses" if m.units_per_item > 1 else ""
    notes = [f"This study as specified ({r} raters x {n} cases{unit_words}): {name} on "
             f"{m.id!r} can expect a 95% interval about {w:.2f} wide (roughly "
             f"{centre - w / 2:.2f} to {centre + w / 2:.2f} around {centre:.2f})."]
    band = band_width(study)
    goal = result.target.width if result.target.width is not None else band
    if band is not None:
        verdict = ("narrow enough to fit within one band" if w <= band else
                   f"wider than one band, so which band {name} falls in can be decided by "
                   "chance")
        notes[0] += f" The bands are {band:.2f} apart: that is {verdict}."
    if goal is not None and w > goal:
        need, reached = items_for_target(
            source, r, goal, units_per_item=m.units_per_item, start_items=n,
            simulations=result.simulations, n_boot=result.n_boot, seed=result.seed,
            max_items=MAX_SEARCH_ITEMS, statistic=result.statistic)
        what = "fit within one band" if goal == band else f"be at most {goal:g} wide"
        if reached <= goal:
            notes.append(f"About {need} cases with {r} raters (expected width "
                         f"{reached:.2f}) would make the interval {what}, so the band "
                         "decision is reliable.")
        else:
            notes.append(f"Even {need} cases with {r} raters (expected width {reached:.2f}) "
                         f"would not make the interval {what}; more raters or a wider "
                         "target are needed.")
    if result.statistic == "alpha":
        notes.extend(_krippendorff_note(study, m, source, r * n * m.units_per_item))
    return notes


def _krippendorff_note(study: Study, m: Measure, source: ModelSource | PilotSource,
                       values: int) -> list[str]:
    """Krippendorff's minimum number of pairable values, for nominal data with a target."""
    floor = study.plan.targets.get("alpha")
    if m.level != "nominal" or floor is None:
        return []
    model = source if isinstance(source, ModelSource) else source.fitted()
    p_c = float(np.clip(min(model.shares), 1e-6, 0.5))
    need = krippendorff_min_values(floor, p_c, 0.05)
    return [f"Krippendorff's table (two coders, p = 0.05, rarest value's share {p_c:.2f}) "
            f"asks for at least {need} pairable values to claim alpha >= {floor:g}; this "
            f"design has {values}."]


def _icc_notes(result: PlanResult, study: Study) -> list[str]:
    r, n = max(2, len(study.raters)), max(2, len(study.items))
    t = result.table
    row = t[(t["raters"] == r) & (t["items"] == n)].iloc[0]
    return [f"This study as specified ({r} raters x {n} items): {result.method} expects a "
            f"95% ICC interval about {row['expected_width']:.2f} wide; "
            f"{int(row['items_needed'])} items reach {result.target.describe()}."]
