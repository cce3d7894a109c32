"""The settings of ``[analysis.params]``, checked at load.

The analysis reads each setting where it uses it, long after ``generate`` froze the
spec: a value of the wrong type there (``permutations = "many"``) stopped ``analyze``
with a traceback, and a setting it could not use (a column the items file lacks,
``candidates`` given as one text instead of a list, a misspelt key) changed the
result in silence. Every setting the analysis reads is listed here with its rule, so
``check`` names each problem before anything is frozen, and a key not listed is
refused like an unknown key anywhere else in the spec.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SpecError
from . import hypotheses, verdicts
from .blanks import describe_rows
from .model import Item
from .spelling import unknown_key, unknown_value

COMBINE_RULES = ("max", "mean", "sum")
"""``material_errors_combine``: how raters' material-error counts combine (002)."""
NA_SETTINGS = ("missing", "category")
"""``na_handling``: N/A answers left out of agreement, or a category of their own (003)."""
YES_WORDS = frozenset({"yes", "y", "true", "1"})
"""An items-file flag column's values that mean yes (any case); blank means no."""
NO_WORDS = frozenset({"no", "n", "false", "0", ""})
"""An items-file flag column's values that mean no (any case)."""
MAX_PERMUTATIONS = 1_000_000
"""More permutations add nothing a study can use, and take minutes and memory."""
FLAG_COLUMNS = ("should_refuse_column", "in_corpus_column")
"""Settings naming an items column whose values are yes or no."""
COLUMNS = ("band_column", "question_column", "task_column", *FLAG_COLUMNS)
"""Settings naming an items column."""
ARM_LISTS = ("candidates",)
"""Settings listing arm ids (each is checked against the design by the loader)."""
ARMS = ("improved_arm", "expected_winner", "control", "reference")
"""Settings naming one arm id."""
TEXTS = ("disagreement_procedure", "pilot_id")
"""Settings that are text."""


@dataclass(frozen=True)
class StudyParts:
    """What the settings are checked against: the rest of the loaded study.

    ``items`` is empty when the items file did not load (its own problems are
    reported); the checks that need it are then skipped.
    """

    spec_file: str
    items_file: str
    items: tuple[Item, ...]
    arms: frozenset[str]
    dimensions: frozenset[str]
    raters: frozenset[str]
    alpha_test: float


Rule = Callable[[str, Any, StudyParts], str | list[str]]
"""A setting's rule: (key, value, study) to its problems ("" or [] when none)."""


@dataclass
class ParamProblems:
    """The problems of ``[analysis.params]``, in two kinds.

    ``now``: values the analysis cannot use at all (a text where it computes with a
    number): they stopped ``collect`` or ``analyze`` with a traceback, so no study
    can have been analysed with one, and every command refuses them. ``deferred``:
    values an earlier sheetflow accepted and analysed in silence; ``check`` and
    ``generate`` refuse them, but a study generated with one is still collected and
    analysed (:attr:`~sheetflow.spec.model.Study.generate_problems`).
    """

    now: list[SpecError] = field(default_factory=list)
    deferred: list[SpecError] = field(default_factory=list)


def problems(params: dict[str, Any], parts: StudyParts) -> ParamProblems:
    """Every problem of ``params`` (``[analysis.params]`` as read).

    Parameters
    ----------
    params : dict
        The settings.
    parts : StudyParts
        The study they belong to.

    Returns
    -------
    ParamProblems
        Each problem names the file, the setting (or the items row) and what is allowed.
    """
    out = ParamProblems()
    for key, value in params.items():
        check = _CHECKS.get(key)
        if check is None:  # a misspelt key: the setting meant is never read
            out.deferred.append(SpecError(unknown_key(key, _CHECKS, "setting"),
                                          file=parts.spec_file, where="[analysis.params]"))
            continue
        found = check(key, value, parts)
        kept = out.now if key in _UNUSABLE and not _UNUSABLE[key](value) else out.deferred
        for message in [found] if isinstance(found, str) else found:
            if message:  # a rule's own lines name the setting; a bare rule is prefixed
                kept.append(SpecError(message if message.startswith(key) else
                                      f"{key} = {_show(value)}: {message}",
                                      file=parts.spec_file, where="[analysis.params]"))
    if all(isinstance(params.get(key, ""), str) for key in COLUMNS):
        out.deferred += _column_problems(params, parts)
    return out


# -- one rule per kind of setting ------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _elsewhere(_key: str, _value: Any, _parts: StudyParts) -> str:
    """A setting the loader checks against the study itself (arms, files, rubric)."""
    return ""


def _text(_key: str, value: Any, _parts: StudyParts) -> str:
    return "" if isinstance(value, str) and value.strip() else "must be text"


def _arm_list(_key: str, value: Any, _parts: StudyParts) -> str:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ""
    return 'must be a list of arm ids, e.g. ["arm_b", "arm_c"] (even for one arm)'


def _column(_key: str, value: Any, _parts: StudyParts) -> str:
    return "" if isinstance(value, str) and value.strip() else \
        "must name a column of the items file, as text"


def _finite(_key: str, value: Any, _parts: StudyParts) -> str:
    return "" if _number(value) else "must be a number"


def _not_negative(_key: str, value: Any, _parts: StudyParts) -> str:
    return "" if _number(value) and value >= 0 else "must be a number, 0 or more"


def _probability(_key: str, value: Any, _parts: StudyParts) -> str:
    return "" if _number(value) and 0 < value < 1 else \
        "must be a number above 0 and below 1, e.g. 0.05"


def _range(low: float | None, high: float | None) -> Rule:
    """A rule for ``[low, high]`` pairs of numbers (each end within the given bounds)."""
    def check(_key: str, value: Any, _parts: StudyParts) -> str:
        within = isinstance(value, list) and len(value) == 2 and all(map(_number, value)) \
            and (low is None or value[0] >= low) and (high is None or value[1] <= high)
        if within and value[0] <= value[1]:
            return ""
        bounds = f" from {low:g} to {high:g}" if low is not None and high is not None else ""
        return f"must be two numbers [low, high]{bounds}, low first"
    return check


def _choice(allowed: tuple[str, ...]) -> Rule:
    def check(_key: str, value: Any, _parts: StudyParts) -> str:
        return "" if value in allowed else f"allowed: {', '.join(allowed)}"
    return check


def _min_tasks(_key: str, value: Any, _parts: StudyParts) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return ""
    return "must be a whole number of tasks, 1 or more"


def _permutations(_key: str, value: Any, parts: StudyParts) -> str:
    # p is (count + 1) / (m + 1): with fewer than 1 / alpha_test shufflings it can
    # never fall below the test level, and the result is a null by construction
    least = max(1, math.floor(1 / parts.alpha_test)) if 0 < parts.alpha_test < 1 else 1
    if isinstance(value, int) and not isinstance(value, bool) and \
            least <= value <= MAX_PERMUTATIONS:
        return ""
    return (f"must be a whole number from {least:,} (fewer cannot give a p below "
            f"alpha_test {parts.alpha_test:g}) to {MAX_PERMUTATIONS:,}; 10000 is usual")


def _band_order(_key: str, value: Any, _parts: StudyParts) -> str:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value) \
            and len(set(value)) == len(value):
        return ""
    return 'must list the bands in order, each once, e.g. ["near", "mid", "far"]'


def _dimension(_key: str, value: Any, parts: StudyParts) -> str:
    if isinstance(value, str) and value in parts.dimensions:
        return ""
    return "must be the id of a dimension of the rubric"


def _hypotheses(_key: str, value: Any, parts: StudyParts) -> list[str]:
    found = hypotheses.problems(value, set(parts.arms))
    ids = [h.get("id") for h in value if isinstance(h, dict)] if isinstance(value, list) \
        else []
    twice = sorted({str(i) for i in ids if ids.count(i) > 1})
    if twice:  # the analysis keys hypotheses by id: one would silently take the other's
        found.append(f"{hypotheses.PARAM}: ids {twice} repeat; each needs its own id")
    return found


def _jsonl(key: str, value: Any, parts: StudyParts) -> str:
    """The judge mapping of ``import-judges`` (004): JSON keys to raters, cells to arms."""
    if not isinstance(value, dict):
        return f"{key} must be a table ([analysis.params.{key}]) with judges and arms"
    allowed = {"judges", "arms", "task_field", "cell_field", "task_column"}
    unknown = sorted(set(value) - allowed)
    if unknown:
        return f"{key}: {unknown_key(unknown[0], allowed)}"
    for name, targets, what in (("judges", parts.raters, "a rater id of the raters file"),
                                ("arms", parts.arms, "an arm id of the design")):
        table = value.get(name, {})
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            return f"{key} {name} must be a table of texts, each {what}"
        wrong = [f"{k} -> {v!r}" for k, v in table.items() if targets and v not in targets]
        if wrong:
            return f"{key} {name}: {wrong[0]} is not {what}"
    for name in ("task_field", "cell_field", "task_column"):
        if name in value and not isinstance(value[name], str):
            return f"{key} {name} must be text"
    return ""


_CHECKS: dict[str, Rule] = {
    **dict.fromkeys((*ARMS, "internal_scores_file", verdicts.PARAM), _elsewhere),
    **dict.fromkeys(ARM_LISTS, _arm_list),
    **dict.fromkeys(TEXTS, _text),
    **dict.fromkeys(COLUMNS, _column),
    "extreme_low_max": _finite,
    "extreme_high_min": _finite,
    "typical_total_range": _range(None, None),
    "position_bias_p": _probability,
    "position_bias_share": _range(0, 1),
    "blinding_dimension": _dimension,
    "material_errors_combine": _choice(COMBINE_RULES),
    "na_handling": _choice(NA_SETTINGS),
    "band_order": _band_order,
    "permutations": _permutations,
    "pilot_pass_min_tasks": _min_tasks,
    "direction_tolerance": _not_negative,
    hypotheses.PARAM: _hypotheses,
    "jsonl": _jsonl,
}


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(map(_number, value))


# what the analysis can compute with at all, per setting it converts or indexes (int(),
# float(), [0] and [1], a lookup): anything else stopped collect or analyze
_UNUSABLE: dict[str, Callable[[Any], bool]] = {
    **dict.fromkeys(("extreme_low_max", "extreme_high_min", "position_bias_p",
                     "direction_tolerance"), _number),
    **dict.fromkeys(("permutations", "pilot_pass_min_tasks"), _whole),
    "position_bias_share": _pair,
    "material_errors_combine": lambda value: value in COMBINE_RULES,
    "na_handling": lambda value: value in NA_SETTINGS,
}


# -- settings that name items columns --------------------------------------------------


def _column_problems(params: dict[str, Any], parts: StudyParts) -> list[SpecError]:
    """Each column setting must name a column of the items file, and a flag column
    must hold yes or no on every item: anything else counted as no in silence."""
    if not parts.items:
        return []
    header = list(parts.items[0].fields)
    out = []
    for key in COLUMNS:
        column = params.get(key)
        if not column:
            continue
        if column not in header:
            out.append(SpecError(f"{key} = {column!r} is not a column of "
                                 f"{parts.items_file}; it has: {', '.join(header)}",
                                 file=parts.spec_file, where="[analysis.params]"))
        elif key in FLAG_COLUMNS:
            out += _flag_values(key, column, parts)
        elif key == "band_column" and isinstance(params.get("band_order"), list):
            out += _unknown_bands(params["band_order"], column, parts)
    return out


def _unknown_bands(order: list[Any], column: str, parts: StudyParts) -> list[SpecError]:
    """A band of ``band_order`` no item has is a misspelling: the trend would leave out
    the items of the band meant, in silence."""
    present = sorted({it.fields.get(column, "") for it in parts.items})
    missing = [band for band in order if band not in present]
    if not missing:
        return []
    return [SpecError(f"band_order names {missing[0]!r}, which no item of "
                      f"{parts.items_file} has in column {column!r} (it has: "
                      f"{', '.join(present)})", file=parts.spec_file,
                      where="[analysis.params]")]


def _flag_values(key: str, column: str, parts: StudyParts) -> list[SpecError]:
    bad = [it for it in parts.items
           if it.fields.get(column, "").strip().lower() not in YES_WORDS | NO_WORDS]
    if not bad:
        return []
    return [SpecError(f"column {column!r} ({key}) must say yes or no (blank means no), "
                      f"not {bad[0].fields.get(column, '')!r}", file=parts.items_file,
                      where=describe_rows([it.row for it in bad]))]


def _show(value: Any) -> str:
    """A setting's value as the spec would write it, cut short when long."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- [analysis.targets] ----------------------------------------------------------------

AGREEMENT_TARGETS = ("alpha", "cohen_kappa", "icc", "intra_rater_kappa", "spearman")
"""Targets on a coefficient that lies between -1 and 1."""
SHARE_TARGETS = ("direction_agreement", "confidence_medium_high")
"""Targets on a share, between 0 and 1."""
TOTAL_TARGETS = ("acceptance_threshold", "strict_pass", "fail_below", "critical_below")
"""Targets on the scale of the rubric's first total."""
OTHER_TARGETS = ("alpha_test", "max_material_errors", "hypothesis_delta")
"""The test level, a count of errors, and 004's stated delta (the hypotheses carry
their own ``min_delta``; this one is part of the frozen protocol text)."""


def target_problems(targets: dict[str, float], total_range: tuple[float, float] | None,
                    ) -> list[str]:
    """What is wrong with ``[analysis.targets]`` (numbers already checked).

    A misspelt name is never read, and a target out of its statistic's range is never
    met (``alpha = 5``) or always met: either decides the study in silence.

    Parameters
    ----------
    targets : dict
        Name -> number.
    total_range : (float, float) or None
        The lowest and highest value of the rubric's first total, when it has one.

    Returns
    -------
    list of str
        One line per problem.
    """
    known = (*AGREEMENT_TARGETS, *SHARE_TARGETS, *TOTAL_TARGETS, *OTHER_TARGETS)
    out = []
    for name, value in targets.items():
        if name not in known:
            out.append(unknown_value(name, sorted(known), "target"))
            continue
        within, what, said = _target_range(name, total_range)
        if not within(value):
            out.append(f"{name} = {value:g} is outside {what} ({said})")
        elif name == "max_material_errors" and not float(value).is_integer():
            # a count is whole: 1.5 let one error pass and rejected two, as 1 does
            out.append(f"{name} = {value:g} is not a whole number: it is the largest "
                       f"material-error count an item may have; write {name} = "
                       f"{math.floor(value)} or {math.ceil(value)}")
    return out


def target_warnings(targets: dict[str, float], total_range: tuple[float, float] | None,
                    ) -> list[str]:
    """Targets on the total's scale that look written as a share of it (in range).

    A threshold of 0.7 on a 0-100 total is a valid total, but every rated item reaches
    it: most likely 70 was meant. Said, not refused, as a low threshold may be meant.

    Parameters
    ----------
    targets : dict
        Name -> number, already checked by :func:`target_problems`.
    total_range : (float, float) or None
        The lowest and highest value of the rubric's first total, when it has one.

    Returns
    -------
    list of str
        One line per such target, naming it, its value, the scale and the value meant.
    """
    if total_range is None:
        return []
    low, high = total_range
    if high - low < 10:  # on a narrow scale a value below 1 may well be meant
        return []
    out = []
    for name in TOTAL_TARGETS:
        value = targets.get(name)
        if value is not None and 0 < value < 1 and low <= value <= high:
            meant = low + value * (high - low)
            out.append(f"{name} {value:g} is on the {low:g}-{high:g} total scale; did you "
                       f"mean {meant:g}? If so, write {name} = {meant:g}")
    return out


def _target_range(name: str, total: tuple[float, float] | None,
                  ) -> tuple[Callable[[float], bool], str, str]:
    """Whether a value is one ``name`` can take, what those values are, and their
    range in words that say which ends it includes ("above 0 and below 1")."""
    if name in AGREEMENT_TARGETS:
        return (lambda v: -1.0 <= v <= 1.0), "the range of the coefficient", "-1 to 1"
    if name in SHARE_TARGETS:
        return (lambda v: 0.0 <= v <= 1.0), "the range of a share", "0 to 1"
    if name in TOTAL_TARGETS and total is not None:
        low, high = total
        return (lambda v: low <= v <= high), "the range of the first total", \
            f"{low:g} to {high:g}"
    if name == "alpha_test":  # a test at level 0 or 1 decides nothing
        return (lambda v: 0.0 < v < 1.0), "the range of a test level", "above 0 and below 1"
    if name == "max_material_errors":
        return (lambda v: v >= 0.0), "the range of a count", "0 or more"
    return (lambda v: not math.isnan(v)), "the numbers", "any number"
