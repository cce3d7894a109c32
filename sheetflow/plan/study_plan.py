"""Plan a study folder: the statistic its protocol decides on, its target, the notes.

What a study's plan is about comes from its spec (:func:`.defaults.study_defaults`): the
intra-rater kappa of a second sitting (``[design.repeats]``, protocol 001), alpha on
the first total where the plan has bands (000), the ICC where the analysis runs one on
a total (002, 004), Cohen's or Fleiss' kappa per column otherwise (003), alpha last.
Where second raters rate only a subset (002), every design is sized on its subset
(:mod:`.subset`).
Closed forms serve where one exists (kappa: kappaSize, 2-6 raters, 2-5 categories; the
ICC: Bonett, Zou, Walter-Eliasziw-Donner); alpha and designs no formula covers are
simulated. The plain-words notes the plan ends with are written by :mod:`.notes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.internal_rater import INTERNAL_RATER
from ..collect.outputs import OUT_DIR, RATINGS_NAME
from ..errors import UsageError
from ..spec.limits import MAX_ITEMS, MAX_RATERS
from ..spec.model import Study
from ..spec.study import load_study
from .closed_plan import kappa_covered, plan_icc_edge, plan_kappa
from .defaults import _NAMES, StudyDefaults, band_width, study_defaults
from .departures import mark_departures
from .design import (
    Costs,
    PlanResult,
    Target,
    finish_table,
    plan_alpha,
    plan_icc,
)
from .inputs import (
    Measure,
    model_source,
    pilot_from_study,
    pilot_source,
    read_pilot_csv,
    study_measure,
    team_rates,
)
from .notes import MAX_SEARCH_ITEMS, _notes, _searched_items
from .sim_error import left_out_notes, simulation_error_notes
from .simulate import STATISTICS, ModelSource, PilotSource, Progress
from .subset import Subset, per_total, study_subset, subset_counts

DEFAULT_RATERS = (2, 3, 4, 5, 6)
DEFAULT_ITEMS = (10, 25, 50, 100, 200)
DEFAULT_EXPECTED = 0.75  # the anticipated value when neither --expected nor a pilot is given
DEFAULT_WIDTH = 0.2  # the target width of a study without bands
STATISTICS_ALL = (*STATISTICS, "icc")


def plan_study(
    root: str | Path, *, statistic: str | None = None, measure: str | None = None,
    expected: float | None = None, shares: list[float] | None = None,
    pilot: str | Path | None = None, target: Target | None = None,
    raters: Sequence[int] | None = None, items: Sequence[int] | None = None,
    costs: Costs | None = None, simulations: int = 100, n_boot: int = 500,
    seed: int | None = None, assurance: float | None = None, method: str | None = None,
    progress: Progress | None = None,
) -> PlanResult:
    """Plan the study in ``root``: designs over raters x items, the cheapest, a plain note.

    Parameters
    ----------
    root : str or Path
        The study folder (its rubric and design; items may still be a sample).
    statistic : {"alpha", "fleiss_kappa", "cohen_kappa", "icc"}, optional
        Default: what the protocol decides on (:func:`study_defaults`).
    measure : str, optional
        A total or dimension id; default the statistic's own (the first total, or the
        first rated dimension).
    expected : float, optional
        The anticipated value of the statistic. Without it: ``pilot``, else the
        study's own ``out/ratings.csv`` (unblinded with its key) once a unit in it has
        two ratings of the measure, else :data:`DEFAULT_EXPECTED`, said so (and why)
        in the source line.
    shares : list of float, optional
        Anticipated shares of the measure's values (default equal shares).
    target : Target, optional
        Default: an interval no wider than the narrowest band of the plan, or
        :data:`DEFAULT_WIDTH` wide for a study without bands.
    raters, items : sequence of int, optional
        The grid; the study's own rater and item counts are always added. Without
        ``items``, a grid on which no design meets the target gains the item count
        that meets it.
    costs : Costs, optional
    simulations, n_boot, seed : int
        Simulated studies per design, bootstrap resamples per study, and the seed
        (default: the plan's seed).
    assurance : float, optional
        ICC width targets only: Zou's formula with this assurance.
    method : {"closed", "simulate"}, optional
        Default: a closed form where one covers the design, the simulation otherwise
        (always for alpha).
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
    root, study = Path(root), load_study(root)
    own = study_defaults(study)
    statistic = statistic or own.statistic
    if statistic not in STATISTICS_ALL:
        raise UsageError(f"--statistic {statistic!r}: choose one of {', '.join(STATISTICS_ALL)}")
    if statistic == "cohen_kappa" and own.locked and own.raters != 2:  # 004's trio
        raise UsageError(f"Cohen's kappa compares two raters, and the protocol locks "
                         f"{own.raters} ({own.locked_why}): plan Fleiss' kappa "
                         "(--statistic fleiss_kappa), alpha or the ICC")
    if statistic != own.statistic:
        own = StudyDefaults(statistic, None, _NAMES[statistic],
                            2 if statistic == "cohen_kappa" else own.raters,
                            max(2, len(study.items)), locked=own.locked,
                            locked_why=own.locked_why, protocol_raters=own.protocol_raters,
                            listed=own.listed, listed_word=own.listed_word,
                            # a protocol's repeats are not the items another statistic reads
                            items_fixed_why="" if own.sittings else own.items_fixed_why,
                            items_fixed=0 if own.sittings else own.items_fixed)
    if not own.sittings:
        own = replace(own, subset=study_subset(study))
    m = study_measure(study, measure or own.measure)
    # the decision's alpha counts protocol 000's internal team as one more rater: it
    # rates in every design, beside the raters the plan sizes
    own = replace(own, team=statistic == "alpha" and team_rates(study, m))
    target = target or _default_target(study, statistic)
    if own.team:  # one validator beside the team is two raters: alpha has its pairs
        own = replace(own, raters=max(1, len(study.raters)))
    least = own.subset.items_for(2) if own.subset else 2
    _check_counts(raters, items, least, own.subset, team=own.team)
    grid_raters = _grid_raters(own, statistic, raters)
    # a default item count too small for an interval gives way to the least that has one
    grid_items = sorted({*(max(n, least) for n in items or DEFAULT_ITEMS), own.items})
    seed = study.plan.seed if seed is None else seed
    _check_assurance(assurance, statistic, target)
    if expected is not None and pilot is not None:
        raise UsageError("give either --expected or --pilot, not both")
    source = _source(root, study, m, expected, shares, pilot, statistic)
    closed = _use_closed(method, statistic, grid_raters, m)
    _check_anticipated(source, statistic, closed, target, expected)
    try:
        result = _plan(statistic, closed, source, m, own, target, grid_raters, grid_items,
                       costs, assurance, simulations, n_boot, seed, progress)
        if items is None:
            result = _extend(result, statistic, closed, source, m, own, target, grid_raters,
                             grid_items, costs, assurance, simulations, n_boot, seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    result.raters_word = "sittings" if own.sittings else "validators" if own.team else \
        "raters"
    # --raters is refused (or has no effect) here: advice may name only --items
    result.raters_fixed = own.sittings or own.locked or statistic == "cohen_kappa"
    mark_departures(result, own)  # fills each design's note column, which notes read
    result.notes = (_notes(result, study, m, own, source)
                    + simulation_error_notes(result) + left_out_notes(result))
    if expected is not None and (root / OUT_DIR / RATINGS_NAME).exists():
        result.notes.append(f"The study's own ratings ({OUT_DIR}/{RATINGS_NAME}) were not "
                            f"used: --expected {expected:g} was given instead.")
    return result


def _check_counts(raters: Sequence[int] | None, items: Sequence[int] | None,
                  least_items: int = 2, subset: Subset | None = None, *,
                  team: bool = False) -> None:
    """The counts asked for must make a design with an interval (two raters, two rated
    items; with a second-rater subset, two items in it) and a study sheetflow can run: a
    design of 10^8 items ran the simulation out of memory (a study holds at most
    MAX_ITEMS). Where the internal team rates beside the raters in every design
    (``team``, protocol 000's alpha), one validator and the team are two raters."""
    fewest = {"--raters": ("one validator and the internal team's totals are the 2 raters "
                           "agreement needs" if team else "agreement needs at least 2 raters"),
              "--items": (f"at the second-rater fraction {subset.fraction:g}, {least_items} "
                          "items put 2 in the subset every rater rates, the fewest an "
                          "interval needs" if subset else "an interval needs at least 2 items")}
    for option, counts, least, most in (("--raters", raters, 2 - team, MAX_RATERS),
                                        ("--items", items, least_items, MAX_ITEMS)):
        bad = [n for n in counts or () if not least <= n <= most]
        if bad:
            raise UsageError(f"{option} {bad[0]}: give counts from {least} to {most:,} "
                             f"({fewest[option]}; a study holds at most {most:,})")


def _grid_raters(own: StudyDefaults, statistic: str, raters: Sequence[int] | None) -> list[int]:
    if own.sittings:
        if raters is not None:
            raise UsageError("the intra-rater kappa compares one rater's two sittings: "
                             "--raters does not apply (give --items for the repeated items)")
        return [2]
    if own.locked:  # before Cohen's: Fleiss' kappa would not plan more raters either
        if raters is not None and set(raters) != {own.raters}:
            raise UsageError(f"the protocol locks {own.raters} raters ({own.locked_why}): "
                             f"--raters {','.join(map(str, raters))} does not apply; plan "
                             "the items (--items)")
        return [own.raters]
    if statistic == "cohen_kappa":
        # ignoring --raters 3 planned two raters in silence
        if raters is not None and set(raters) != {2}:
            raise UsageError(f"Cohen's kappa compares two raters: --raters "
                             f"{','.join(map(str, raters))} does not apply; plan the items "
                             "(--items), or Fleiss' kappa for more raters "
                             "(--statistic fleiss_kappa)")
        return [2]
    return sorted({*(raters or DEFAULT_RATERS), own.raters})


def _use_closed(method: str | None, statistic: str, raters: Sequence[int], m: Measure) -> bool:
    if method not in (None, "closed", "simulate"):
        raise UsageError(f"--method {method!r}: choose closed or simulate")
    if statistic == "alpha":
        if method == "closed":
            raise UsageError("alpha has no closed form for an interval's width; plan it "
                             "with --method simulate (the default for alpha)")
        return False
    if statistic == "icc":
        if method == "simulate":
            raise UsageError("the ICC is planned with closed forms only (Bonett, Zou, "
                             "Walter-Eliasziw-Donner); drop --method simulate")
        return True
    weighted = statistic == "cohen_kappa" and m.weighting()
    if weighted:  # kappaSize's models are of unweighted kappa: simulate the weighted one
        if method == "closed":
            raise UsageError(f"analyze reports Cohen's kappa on {m.id!r} {weighted}, and "
                             "kappaSize's closed forms are for unweighted kappa: plan it "
                             "with --method simulate (the default for it)")
        return False
    covered = kappa_covered(raters, len(m.domain))
    if method == "closed" and not covered:
        raise UsageError(f"kappaSize's closed forms cover 2-6 raters and 2-5 categories; "
                         f"{m.id!r} has {len(m.domain)} values: use --method simulate")
    return covered if method is None else method == "closed"


def _check_assurance(assurance: float | None, statistic: str, target: Target) -> None:
    """``--assurance`` is Zou's probability that an ICC interval is no wider than the
    width target: refused where it would be ignored (another statistic, an ``--above``
    target) or where Zou's formula has no meaning (below 0.5 its assurance term turns
    negative and asks fewer items than the width itself; 0 read as "not given")."""
    if assurance is None:
        return
    if statistic != "icc":
        raise UsageError("--assurance is for ICC plans (Zou 2012); simulated plans give "
                         "the share of studies meeting a lower bound with --above")
    if target.edge is not None:
        raise UsageError("--assurance goes with a --width target (Zou 2012); with --above "
                         "the share of studies that must clear the edge is --probability")
    if not 0.5 <= assurance < 1:
        raise UsageError(f"--assurance {assurance:g}: give the probability that the "
                         "interval is no wider than --width, from 0.5 up to (not "
                         "including) 1, e.g. 0.8")


def _plan(statistic: str, closed: bool, source: ModelSource | PilotSource, m: Measure,
          own: StudyDefaults, target: Target, raters: Sequence[int], items: Sequence[int],
          costs: Costs | None, assurance: float | None, simulations: int, n_boot: int,
          seed: int, progress: Progress | None) -> PlanResult:
    if own.subset is not None:  # planned on the subset, read back per item count
        counts = subset_counts(own.subset, list(items))
        inner = replace(own, items=max(2, own.subset.own), subset=None)
        result = _plan(statistic, closed, source, m, inner, target, raters,
                       sorted(set(counts.values())), costs, assurance, simulations, n_boot,
                       seed, progress)
        return per_total(result, own.subset, counts)
    name = f"{statistic} {m.id}"
    per = 1 if own.sittings else m.units_per_item
    if per > 1 and (closed or statistic == "icc"):  # the formulas count rated units
        own_units = StudyDefaults(own.statistic, own.measure, own.reason, own.raters,
                                  own.items, own.sittings)
        result = _plan(statistic, closed, source, _unpaired(m), own_units, target, raters,
                       [n * per for n in items], costs, assurance, simulations, n_boot,
                       seed, progress)
        return _per_case(result, per)
    if statistic == "icc":
        value, words = _anticipated(source, "ICC")
        if target.edge is not None:
            return plan_icc_edge(value, raters=raters, items=items, target=target,
                                 costs=costs, measure=name, source=words)
        return plan_icc(value, raters=raters, items=items, target=target, costs=costs,
                        assurance=assurance, measure=name, source=words)
    if closed:
        model = source if isinstance(source, ModelSource) else source.fitted()
        value, words = _anticipated(source, "kappa")
        return plan_kappa(value, model.shares, raters=raters, items=items, target=target,
                          costs=costs, measure=name, level=m.level, statistic=statistic,
                          source=words)
    cohen = statistic == "cohen_kappa"  # analyze weighs an ordered measure's kappa
    result = plan_alpha(source, raters=raters, items=items, target=target, costs=costs,
                        units_per_item=1 if own.sittings else m.units_per_item,
                        simulations=simulations, n_boot=n_boot, seed=seed, measure=name,
                        progress=progress, statistic=statistic, team=own.team,
                        weights=m.kappa_weights() if cohen else None,
                        weighting=m.weighting() if cohen else "")
    result.source = _describe(source, _NAMES[statistic])
    return result


def _unpaired(m: Measure) -> Measure:
    return replace(m, units_per_item=1)


def _per_case(result: PlanResult, per: int) -> PlanResult:
    """A plan over rated units read back per case (``per`` units each)."""
    t = result.table.copy()
    t["units"] = t["items"]
    t["items"] = t["items"] // per
    t["items_needed"] = -(-t["items_needed"] // per)
    meets = (t["items"] >= t["items_needed"]).tolist()
    result.table = finish_table(t.drop(columns=["meets", "cost", "cheapest"]), result.target,
                                result.costs, meets)
    result.units_per_item = per
    return result


def _extend(result: PlanResult, statistic: str, closed: bool,
            source: ModelSource | PilotSource, m: Measure, own: StudyDefaults,
            target: Target, raters: Sequence[int], items: Sequence[int],
            costs: Costs | None, assurance: float | None, simulations: int, n_boot: int,
            seed: int) -> PlanResult:
    """Add the item counts that meet the target: each rater count's for closed forms,
    the study's own rater count's (the note's search) for a simulation none of whose
    designs meets it. Only the new designs are computed."""
    t = result.table
    if "items_needed" in t:
        extra = {int(n) for n in t["items_needed"] if n <= MAX_SEARCH_ITEMS}
    elif result.chosen() is None and target.width is not None:
        extra = {_searched_items(result, own, m, source)[0]}
    else:
        return result
    extra -= set(items)
    if not extra:
        return result
    more = _plan(statistic, closed, source, m, own, target, raters, sorted(extra), costs,
                 assurance, simulations, n_boot, seed, None)
    table = pd.concat([t.drop(columns=["cost", "cheapest"]),
                       more.table.drop(columns=["cost", "cheapest"])])
    table = table.sort_values(["raters", "items"], kind="stable").reset_index(drop=True)
    # a subset design keeps the verdict its plan gave on its subset
    meets = table["meets"].tolist() if "subset" in t else \
        (table["items"] >= table["items_needed"]).tolist() if "items_needed" in t else None
    result.table = finish_table(table.drop(columns=["meets"]), target, result.costs, meets)
    return result


def _default_target(study: Study, statistic: str) -> Target:
    """The narrowest band's width for alpha (the bands judge alpha), else
    :data:`DEFAULT_WIDTH`: no spec setting names a target width for the plan."""
    width = band_width(study) if statistic == "alpha" else None
    return Target(width=width if width is not None else DEFAULT_WIDTH)


def _check_anticipated(source: ModelSource | PilotSource, statistic: str, closed: bool,
                       target: Target, expected: float | None) -> None:
    """Refuse, in words naming the option, an anticipated value the plan cannot use."""
    if isinstance(source, PilotSource):
        _check_pilot(source, statistic, closed)
        return
    name, value = _NAMES[statistic].removeprefix("the "), source.alpha
    given = f"--expected {value:g}" if expected is not None else \
        f"the default anticipated {name} {value:g}"
    if (closed or statistic == "icc") and value <= 0:
        form = "the ICC's formulas" if statistic == "icc" else "kappaSize's closed forms"
        raise UsageError(f"{given}: {form} need an anticipated {name} above 0 (e.g. "
                         f"--expected 0.75)" + ("" if statistic == "icc" else
                                                 ", or plan by --method simulate"))
    # a simulated study clears an edge above its anticipated value less than half the time
    if target.edge is not None and value <= target.edge and (
            closed or statistic == "icc" or target.probability >= 0.5):
        raise UsageError(f"{given}: a lower limit at or above --above {target.edge:g} "
                         f"needs an anticipated {name} above {target.edge:g}; give "
                         f"--expected above it, or a lower --above")


def _check_pilot(source: PilotSource, statistic: str, closed: bool) -> None:
    """Refuse a pilot whose agreement is at or below chance where kappaSize's closed forms
    need an anticipated value above 0 (kappaSize stopped with "kappa0 must lie within (0, 1).",
    which named neither the pilot nor a way on)."""
    if not closed or statistic == "icc":  # the ICC's formulas take 0 (the floored alpha)
        return
    alpha = source.alpha()
    if alpha > 0:
        return
    name = _NAMES[statistic].removeprefix("the ")
    raise UsageError(f"{source.label}: its alpha is {alpha:.3f}, at or below chance, and "
                     f"kappaSize's closed forms need an anticipated {name} above 0; give "
                     "--expected (e.g. 0.75), or plan by --method simulate")


def _source(root: Path, study: Study, m: Measure, expected: float | None,
            shares: list[float] | None, pilot: str | Path | None,
            statistic: str) -> ModelSource | PilotSource:
    own_ratings = root / OUT_DIR / RATINGS_NAME
    if expected is not None:
        return _model(m, expected, shares, statistic, "")
    if pilot is not None and Path(pilot).resolve() != own_ratings.resolve():
        return pilot_source(read_pilot_csv(pilot, m), m, f"pilot {Path(pilot).name}")
    if own_ratings.exists():  # neither --expected nor another pilot: the study's own
        # alpha's pilot holds the raters analyze's alpha counts (with protocol 000's
        # internal team), so the pilot's alpha is the one the decision reads
        rows = pilot_from_study(root, study, m, as_decided=statistic == "alpha")
        label, so_far = f"pilot {OUT_DIR}/{RATINGS_NAME}", _so_far(rows, study)
        if pilot is None and not _rated_twice(rows):  # nothing to read agreement from yet
            return _model(m, DEFAULT_EXPECTED, shares, statistic, _not_yet(m, so_far))
        read = pilot_source(rows, m, label, f" (the study's own ratings{so_far and ', '}"
                            f"{so_far}, read as the pilot when --expected is not given)")
        said = "; ".join(filter(None, (so_far, _pilot_raters(rows, study, m, statistic))))
        return replace(read, label=f"{label} ({said})") if said else read
    if pilot is not None:
        raise UsageError(f"{pilot}: no such file; collect the study first, or give "
                         "--expected")
    return _model(m, DEFAULT_EXPECTED, shares, statistic,
                  " (the default: give --expected or --pilot)")


def _rated_twice(rows: pd.DataFrame) -> bool:
    """Whether any unit of the study's own ratings has two or more: a pilot needs one."""
    return bool(len(rows)) and int(rows.groupby("unit").size().max()) >= 2


def _not_yet(m: Measure, so_far: str) -> str:
    """Why a study with collected ratings is planned from the default value: none of
    its units has two ratings of the measure yet (the source line's words)."""
    return (f" (the default: {OUT_DIR}/{RATINGS_NAME} has no unit with two or more "
            f"ratings of {m.id!r} yet{', ' if so_far else ''}{so_far}; give --expected or "
            "--pilot)")


def _so_far(rows: pd.DataFrame, study: Study) -> str:
    """Mid-study, how much of the panel the ratings hold ("2 of 3 raters so far"), else
    "": a pilot of part of the panel says so (the internal team is none of it)."""
    returned = rows.loc[rows["rater"] != INTERNAL_RATER, "rater"].nunique()
    panel = len(study.raters)
    return f"{returned} of {panel} raters so far" if returned < panel else ""


def _pilot_raters(rows: pd.DataFrame, study: Study, m: Measure, statistic: str) -> str:
    """Whose ratings the pilot's alpha rests on, where the study has internal scores
    (else ""): the validators and the internal team as one more rater, as analyze's
    alpha on the measure counts them, or the validators only."""
    if not study.plan.params.get("internal_scores_file"):
        return ""
    validators = rows.loc[rows["rater"] != INTERNAL_RATER, "rater"].nunique()
    who = "the validator" if validators == 1 else f"the {validators} validators"
    if (rows["rater"] == INTERNAL_RATER).any():
        return (f"{who} and the internal team's totals as one more rater, as analyze's "
                f"alpha on {m.id!r} counts them")
    why = "the internal scores hold totals only" if statistic == "alpha" else \
        "the internal team counts in alpha only"
    return f"{who} only: {why}"


def _model(m: Measure, expected: float, shares: list[float] | None, statistic: str,
           why: str) -> ModelSource:
    if not 0 <= expected < 1:
        name = _NAMES[statistic].removeprefix("the ")
        raise UsageError(f"--expected {expected:g}: the anticipated {name} must lie in "
                         "[0, 1) (e.g. 0.75)")
    if statistic == "icc":
        if shares is not None:
            raise UsageError("an ICC plan takes --expected (the anticipated ICC), not "
                             "value shares")
        return _Assumed(expected, tuple([1 / len(m.domain)] * len(m.domain)), m.domain,
                        m.level, why)
    model = model_source(m, expected, shares)
    return _Assumed(model.alpha, model.shares, model.domain, model.level, why)


@dataclass(frozen=True)
class _Assumed(ModelSource):
    """A model whose description says where the value came from."""

    why: str = ""


def _describe(source: ModelSource | PilotSource, name: str) -> str:
    """One short line: the value and a summary of the shares (never every share)."""
    if isinstance(source, PilotSource):
        return source.describe()
    why = getattr(source, "why", "")
    shares = np.asarray(source.shares)
    if name == "ICC":
        return f"assumed ICC {source.alpha:g}{why}"
    if np.allclose(shares, shares[0]):
        spread = f"equal shares of {len(shares)} values"
    elif len(shares) <= 5:
        spread = "value shares " + ", ".join(
            f"{v}: {s:.2f}" for v, s in zip(source.domain, shares, strict=True))
    else:
        spread = (f"shares of {len(shares)} values from {shares.min():.2f} to "
                  f"{shares.max():.2f}")
    return f"assumed {name} {source.alpha:g}{why}, {spread}"


def _anticipated(source: ModelSource | PilotSource, name: str) -> tuple[float, str]:
    """The anticipated value for a closed form and its description."""
    if isinstance(source, PilotSource):
        fitted = source.fitted()
        return fitted.alpha, (f"{source.describe()}, taken as the anticipated {name} "
                              f"({fitted.alpha:.3f})")
    return source.alpha, _describe(source, name)
