"""The plain-words notes a plan ends with: what the study as specified can expect, whether
it meets the target, and how many items would (searched by simulation where no design
of the grid meets a width target); why a plan drawn from a pilot's model is, and
Krippendorff's minimum of pairable values.
"""

from __future__ import annotations

import numpy as np

from ..spec.model import Study
from ..words import counted
from .defaults import _NAMES, StudyDefaults, band_width
from .departures import cheapest_departure, rater_departure
from .design import EXACT_METHOD, PlanResult, cell_for_target
from .formulas import BONETT_TOLERANCE, krippendorff_min_values
from .inputs import Measure
from .kappa_size import FIRST_N
from .pilot_model import PilotModel, fit_pilot_model, grid_source
from .sim_error import resting_text, target_error_text, width_text
from .simulate import ModelSource, PilotSource

MAX_SEARCH_ITEMS = 3000  # the note's search for "how many cases" stops here


def _notes(result: PlanResult, study: Study, m: Measure, own: StudyDefaults,
           source: ModelSource | PilotSource) -> list[str]:
    """Plain words on the study's own design and what would meet the target."""
    r, n, name = own.raters, own.items, _NAMES[result.statistic]
    t = result.table
    row = t[(t["raters"] == r) & (t["items"] == n)].iloc[0]
    w = float(row["expected_width"])
    low, high = _clipped(row, w, result.statistic)
    word = "cases" if m.units_per_item > 1 else "items"
    who = (f"one rater's two sittings x {n} repeated items" if own.sittings else
           f"{result.who(r)} x {own.subset.describe(n, word)}" if own.subset else
           f"{result.who(r)} x {n} {word}")
    units = f", {n * m.units_per_item} rated responses" if m.units_per_item > 1 else ""
    # the study's own reason names its measure ("alpha on the total"): another one asked
    # for with --measure is named as it is
    reason = own.reason if own.measure in (None, m.id) else f"{name} on {m.id!r}"
    resting = resting_text(row.to_dict())  # where studies or resamples were left out
    expect = (f"can expect a 95% interval about {w:.2f} wide (roughly {low:.2f} to "
              f"{high:.2f}{'; ' + resting if resting else ''})" if np.isfinite(w) else
              "can expect no 95% interval: half or more of its simulated studies have none"
              f" ({resting})")
    short = _below_floor(study, own, result.raters_word, result.items_word)
    # a study listing 1 rater or item is planned at 2, the least the grid sizes, and one
    # listing other raters than the protocol fixes at the protocol's count: say so (the
    # locked note says what the study lists and that it departs)
    departs = rater_departure(own)
    whose = (f"This study lists only {short}; the plan sizes 2 or more, so the nearest "
             "design" if short else
             f"This study with the protocol's {counted(own.protocol_raters, own.listed_word)}"
             if departs else "This study as specified")
    notes = [f"Planned: {reason}. {whose} ({who}{units}): {name} on {m.id!r} {expect}."]
    band = band_width(study) if result.statistic == "alpha" else None  # bands judge alpha
    if band is not None:
        verdict = ("narrow enough to fit within one band" if w <= band else
                   f"wider than one band, so which band {name} falls in can be decided by "
                   "chance")
        notes[0] += f" The bands are {band:.2f} apart: that is {verdict}."
    notes.extend(_team_note(result, m))
    notes.extend(_icc_form_note(result, study))
    notes.extend(small_k_note(result))
    notes.extend(exact_width_note(result))
    notes.extend(_model_note(result, own, source))
    notes.extend(_kappa_floor_note(result))
    # the note on the protocol's item count, where the own design misses the target,
    # also says where the cheapest design departs from that count: one note, not two
    fixed = [] if bool(row["meets"]) else _fixed_items_note(result, own,
                                                            _listed_items(study, own), w)
    cheapest = cheapest_departure(result, own, why_said=bool(fixed))
    if not bool(row["meets"]):
        notes.append(_what_meets(result, own, m, source, band,
                                 at_least=bool(_icc_form_note(result, study))))
        notes.extend(f"{text} {cheapest}".rstrip() for text in fixed)
    if result.statistic == "alpha":
        pairable = own.subset.of(n) if own.subset else n  # only the subset is pairable
        notes.extend(_krippendorff_note(study, m, source, r + own.team,
                                        pairable * m.units_per_item))
    if own.locked:  # why the grid holds one rater count, where the plan is read
        notes.append(f"Every design has {r} raters: {own.locked_why}; plan the items "
                     f"(--items).{' ' + departs if departs else ''}")
    if cheapest and not fixed:
        notes.append(cheapest)
    return notes


_ABSOLUTE = {"ICC2": "ICC(A,1)", "ICC2k": "ICC(A,k)"}  # the two-way absolute forms


def _kappa_floor_note(result: PlanResult) -> list[str]:
    """Why a kappa row narrower than the target width says it does not meet it: the
    closed forms (as kappaSize) size no fewer than :data:`.kappa_size.FIRST_N` items."""
    t, width = result.table, result.target.width
    if not result.method.endswith("as kappaSize") or width is None:
        return []
    below = t[(t["items"] < FIRST_N) & (t["expected_width"] <= width) & ~t["meets"]]
    if below.empty:
        return []
    row = below.iloc[0]
    return [f"kappaSize's closed forms size {FIRST_N} items or more (its search starts "
            f"there), so fewer do not meet the target even where their expected width is "
            f"within it ({row['items']} {result.items_word}: {row['expected_width']:.3f})."]


def small_k_note(result: PlanResult) -> list[str]:
    """Where Bonett's items needed carry his correction for 2 raters (+5 rho at an ICC of
    0.7 or more), what it changes and whose convention it is ([] elsewhere)."""
    t = result.table
    if result.statistic != "icc" or not result.method.startswith("Bonett"):
        return []
    rho = float(t["estimate_median"].iloc[0])
    if rho < 0.7 or not (t["raters"] == 2).any():
        return []
    return [f"With 2 raters the items needed add Bonett's (2002) correction for 2 raters "
            f"and an ICC of 0.7 or more, 5 x {rho:g} rated units, as R's presize applies it "
            "(statpsych's size.ci.icc, Bonett's own, agrees): his formula alone falls short "
            "of the width there. The expected widths are the formula's, uncorrected, so a "
            "2-rater design whose width is at the target may still lack the items needed; "
            "it meets the target when its items reach them."]


def exact_width_note(result: PlanResult) -> list[str]:
    """Which ICC designs have the exact expected width, Bonett's approximation not
    holding there (:func:`~.formulas.icc_design_width`), and why ([] where none)."""
    t = result.table
    exact = t[t["method"] == EXACT_METHOD] if "method" in t else t.iloc[:0]
    if result.statistic != "icc" or exact.empty:
        return []
    designs = "; ".join(f"{result.who(int(r))} x {', '.join(str(int(n)) for n in g['items'])}"
                        f" {result.items_word}" for r, g in exact.groupby("raters"))
    return [f"Bonett's (2002) width is a large-sample approximation: where it differs by "
            f"more than {BONETT_TOLERANCE:.0%} from the exact expected width of the ICC's "
            "exact-F interval (consistency form, averaged over the distribution of its F "
            f"ratio), here at {designs}, the width shown is the exact one, and the items "
            "needed are those at which that width meets the target."]


def _icc_form_note(result: PlanResult, study: Study) -> list[str]:
    """Where analyze reports an absolute-agreement ICC: the closed forms' widths and item
    counts are those of the one-way and consistency ICC, which they are derived for, so
    for this ICC they are a lower bound (docs/plan.md, "ICC: Bonett (2002), Zou (2012)")."""
    if result.statistic != "icc" or study.plan.icc_form not in _ABSOLUTE:
        return []
    # the method and the form have brackets of their own: neither is put in brackets
    return [f"The closed form's widths and item counts are derived for the one-way and "
            "consistency ICC; the absolute-agreement ICC this study reports, "
            f"{_ABSOLUTE[study.plan.icc_form]}, is wider where raters differ in level, so "
            f"take the widths and item counts as lower bounds. Method: {result.method}."]


def _fixed_items_note(result: PlanResult, own: StudyDefaults, n: int, w: float) -> list[str]:
    """Where the protocol fixes the item count and the study's own count misses the
    target: the study's count and its width, and, where the study keeps the protocol's
    count, that more items would depart from it. Where the cheapest design departs,
    :func:`_notes` says that instead (:func:`~.departures.cheapest_departure`), once."""
    if not own.items_fixed_why:
        return []
    word = result.items_word
    whose = "its [design.repeats] count" if own.sittings else "its items file"
    wide = (f"{w:.3f}" if np.isfinite(w) else  # as the table: 0.301 is not 0.30
            "infinite (half or more of its simulated studies have no interval)")
    fixed = own.items_fixed  # a study short of it: more items bring it towards it
    apart = "" if n == fixed else f", {'fewer' if n < fixed else 'more'} than the " \
        f"protocol's {fixed}"
    text = (f"The protocol fixes the number of {word}: {own.items_fixed_why}. This study "
            f"has {n} ({whose}){apart}; at {max(n, 2)} {word} the expected width is "
            f"{wide}.")
    if apart or cheapest_departure(result, own):
        return [text]
    return [f"{text} More {word} would depart from the protocol."]


def _listed_items(study: Study, own: StudyDefaults) -> int:
    """The items (or repeats) the study lists, before the plan's floor of 2."""
    return own.items if own.sittings else len(study.items)


def _below_floor(study: Study, own: StudyDefaults, raters_word: str, items_word: str) -> str:
    """"1 rater" or "1 item" (or both) where the study lists fewer than the 2 its planned
    design has; "" otherwise (a protocol's locked raters are noted on their own)."""
    parts = []
    if not (own.sittings or own.locked) and len(study.raters) < 2 - own.team:
        parts.append(f"{len(study.raters)} {raters_word[:-1]}")
    if _listed_items(study, own) < 2:
        parts.append(f"{_listed_items(study, own)} {items_word[:-1]}")
    return " and ".join(parts)


def _model_note(result: PlanResult, own: StudyDefaults,
                source: ModelSource | PilotSource) -> list[str]:
    """Why a pilot's plan is drawn from its model, and how to resample the pilot instead."""
    if not isinstance(source, PilotSource) or result.method != "model fitted to pilot":
        return []
    held, most, team = source.most_raters, int(result.table["raters"].max()), result.team
    values = (f"{held} values, the internal team's and {held - 1} validators'"
              if source.team else f"{held} values")
    grid = (f"the {most + 1} raters of the grid's largest design ({most} validators and the "
            "internal team)" if team else f"the grid's {most} raters")
    # the team rates in every design: a pilot of `held` values resamples one rater fewer
    fits = held - team
    lowest = 2 - team  # one validator beside the team is two raters
    note = (f"The pilot's units hold at most {values}, fewer than {grid}: every design is "
            "drawn from a model fitted to the pilot (its alpha, value shares and pattern of "
            "disagreement" + (", the team's total drawn like a validator's" if team else "")
            + (f"), not only those above {counted(fits, result.raters_word[:-1])},"
               if fits >= lowest else "),")
            + " so all designs are compared by one method.")
    if own.raters <= fits:
        note += (f" To resample the pilot itself, plan "
                 f"{counted(fits, result.raters_word[:-1])} or fewer "
                 f"(--raters {lowest}-{fits}).")
    return [note, *_chance_note(fit_pilot_model(source), own, result.units_per_item)]


def _team_note(result: PlanResult, m: Measure) -> list[str]:
    """Where the decision's alpha counts the internal team: what a design's count means."""
    if not result.team:
        return []
    return [f"Alpha on {m.id!r} counts the internal team's totals as one more rater beside "
            "the validators (protocol 000 sections 4.1-4.2, as analyze computes it), so "
            "every design has the internal team in it: a design of k validators is "
            "simulated with k + 1 raters, and k, the validators to recruit, is what the "
            "designs, the costs and the ratings per dimension count."]


def _chance_note(model: PilotModel, own: StudyDefaults, units_per_item: int) -> list[str]:
    """Why the widths of a model with ratings drawn by chance shrink unevenly."""
    if model.chance <= 0:
        return []
    rated = own.subset.of(own.items) if own.subset else own.items  # only these pair
    held = model.chance * (own.raters + own.team) * rated * units_per_item
    return [f"To reach the pilot's alpha ({model.alpha:.3f}) the model draws "
            f"{model.chance:.1%} of ratings at random from the value shares (the pilot's "
            "disagreements, copied as raters' errors, agree more than the pilot did); these "
            f"rare ratings carry {model.chance_disagreement:.0%} of its disagreement, and "
            f"the study as specified holds {held:.1f} of them on average. A design's width "
            "depends mostly on how many it happens to hold, so widths shrink unevenly with "
            "more items (one can even be wider than a smaller design's) until designs hold "
            "many of them, and each is a median that more --simulations make steadier."]


def _clipped(row: dict, w: float, statistic: str) -> tuple[float, float]:
    """The interval, never beyond the statistic's range ([-1, 1]; the ICC's top is 1)."""
    if "ci_low" in row and np.isfinite(row.get("ci_low", np.nan)):
        low, high = float(row["ci_low"]), float(row["ci_high"])
    else:
        centre = float(row["estimate_median"])
        low, high = centre - w / 2, centre + w / 2
    return max(low, -1.0), min(high, 1.0)


def _what_meets(result: PlanResult, own: StudyDefaults, m: Measure,
                source: ModelSource | PilotSource, band: float | None, *,
                at_least: bool = False) -> str:
    """The item count meeting the target, in words (the band decision only for alpha);
    ``at_least``: the closed form's count is a lower bound for the study's statistic."""
    target, r = result.target, own.raters
    word = "cases" if m.units_per_item > 1 else "items"
    by_band = band is not None and target.width == band
    what = (f"clear {target.edge:g} with probability {target.probability:g}"
            if target.edge is not None else
            "narrow enough to fit within one band" if by_band else
            f"no wider than {target.width:g}")
    # a median width of one band fits in a band only when the estimate lands near its
    # middle: that alone does not decide the band (--above gives the chance it clears one)
    decision = (" when centred in it (the chance that the interval clears a band's edge "
                "is planned with --above EDGE)") if by_band else ""
    t = result.table
    if "items_needed" in t:
        need = int(t.loc[t["raters"] == r, "items_needed"].iloc[0])
        said = (f"{need} {'repeated ' if own.sittings else ''}{word}{_rated(own, need)} "
                f"with {r} {'sittings' if own.sittings else 'raters'}")
        # the method's name has brackets of its own ("Bonett (2002)"): a sentence of
        # its own, not brackets within brackets
        method = f" Method: {result.method}."
        if at_least:  # the formula's count is only a floor for the study's statistic
            return (f"At least {said} are needed to make the interval {what}{decision}: "
                    f"the closed form's count is a lower bound for this ICC.{method}")
        return f"{said} would make the interval {what}{decision}.{method}"
    hits = t[(t["raters"] == r) & t["meets"]]
    if target.width is None:
        if hits.empty:
            return (f"No {word[:-1]} count of the grid makes the interval {what} with "
                    f"{result.who(r)}; try more items (--items)"
                    + ("." if result.raters_fixed else " or raters (--raters)."))
        least = int(hits["items"].min())
        return (f"{least} {word}{_rated(own, least)} with {result.who(r)} make the interval "
                f"{what}.")
    if not hits.empty:
        first = hits.sort_values("items").iloc[0].to_dict()
        need = int(first["items"])
    else:
        need, first = _searched_items(result, own, m, source)
    # the width with its simulation SE, judged against the target as every design is
    said, error = width_text(first), target_error_text(target, first)
    if target.met(first):
        return (f"About {need} {word}{_rated(own, need)} with {result.who(r)} ({said}) would "
                f"make the interval {what}{decision}.{error}")
    return (f"Even {need} {word}{_rated(own, need)} with {result.who(r)} ({said}) would not "
            f"make the interval {what}; {_more_needed(result)}.{error}")


def _more_needed(result: PlanResult) -> str:
    """What else could meet a width target the searched items miss: more raters only
    where the rater count is the plan's to choose (--raters is refused otherwise)."""
    if result.raters_fixed:
        return "more items than that (--items) or a wider target (--width) are needed"
    return "more raters (--raters) or a wider target (--width) are needed"


def _rated(own: StudyDefaults, items: int) -> str:
    """Where second raters rate a subset: how many of ``items`` every rater rates."""
    if own.subset is None:
        return ""
    return f" ({own.subset.of(items)} of them in the second-rater subset)"


def _searched_items(result: PlanResult, own: StudyDefaults, m: Measure,
                    source: ModelSource | PilotSource) -> tuple[int, dict]:
    """The simulation's item count for the target width with the study's own raters,
    searched from the grid's largest design of that rater count (the square-root law
    extrapolates best from there), and its simulated figures (the expected width and
    its simulation SE)."""
    t = result.table
    mine = t[t["raters"] == own.raters].sort_values("items")
    # a subset design is searched on its subset (what the simulation draws)
    start = int(mine["subset" if own.subset else "items"].iloc[-1])
    assert result.target.width is not None
    # the source the grid was drawn from: its model when the grid outruns the pilot
    source = grid_source(source, [int(r) + own.team for r in t["raters"].unique()])
    need, cell = cell_for_target(source, own.raters + own.team, result.target.width,
                                 units_per_item=1 if own.sittings else m.units_per_item,
                                 start_items=start, simulations=result.simulations,
                                 n_boot=result.n_boot, seed=result.seed,
                                 max_items=MAX_SEARCH_ITEMS, statistic=result.statistic,
                                 weights=_weights(result, m))
    cell = {**cell, "raters": own.raters}  # the raters sized, without the team
    return (own.subset.items_for(need) if own.subset else need), cell


def _weights(result: PlanResult, m: Measure) -> np.ndarray | None:
    """The agreement weights the plan's simulation gave Cohen's kappa (None: another
    statistic, which analyze computes unweighted)."""
    return m.kappa_weights() if result.statistic == "cohen_kappa" else None


def _krippendorff_note(study: Study, m: Measure, source: ModelSource | PilotSource,
                       coders: int, units: int) -> list[str]:
    """Krippendorff's minimum number of pairable values, for nominal data with a target.

    His table is for two coders; a design of more is held to the table scaled to its
    coders (:func:`~sheetflow.plan.formulas.krippendorff_min_values`), since its values
    on the same units come from fewer units than two coders' would."""
    floor = study.plan.targets.get("alpha")
    if m.level != "nominal" or floor is None:
        return []
    model = source if isinstance(source, ModelSource) else source.fitted()
    p_c = float(np.clip(min(model.shares), 1e-6, 0.5))
    need = krippendorff_min_values(floor, p_c, 0.05)
    said = (f"Krippendorff's table (two coders, p = 0.05, rarest value's share {p_c:.2f}) "
            f"asks for at least {need} pairable values to claim alpha >= {floor:g}")
    if coders > 2:  # the table's N is two coders' values: scaled, in units it is the same
        said += (f"; for {coders} coders, z squared times the number of coders (the "
                 f"ATLAS.ti manual's adjustment of the table), at least "
                 f"{krippendorff_min_values(floor, p_c, 0.05, coders)}")
    return [f"{said}; this design has {coders * units} ({coders} coders on {units} "
            f"units)."]
