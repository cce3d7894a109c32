"""What a study's plan is about: the measure, its values, and a pilot's ratings.

The measure defaults to what the protocol decides on: alpha on the first total when the
rubric has one (protocol 000 reads alpha on the total against its bands), otherwise the
first rated dimension. A paired design rates two responses per case, so each case
gives two units for response-scope measures.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.context import dimension_scale, kappa_weights, weights_for
from ..analysis.internal_rater import INTERNAL_RATER
from ..errors import SpecError, UsageError
from ..spec.model import Study
from ..spec.rubric import Rubric, Total, total_bounds
from ..spec.tables import SEMICOLONS
from ..words import counted
from .simulate import ModelSource, PilotSource

__all__ = ["Measure", "model_source", "pilot_from_study", "pilot_source", "read_pilot_csv",
           "study_measure", "team_rates"]


@dataclass(frozen=True)
class Measure:
    """A dimension or total of the rubric, as alpha sees it (``kind``: the dimension's
    kind, ``"total"`` for a total)."""

    id: str
    level: str
    domain: tuple[Any, ...]
    units_per_item: int
    kind: str = "total"

    def kappa_weights(self) -> np.ndarray:
        """The agreement weights analyze's Cohen's kappa puts on this measure."""
        return kappa_weights(self.level, self.kind, self.domain)

    def weighting(self) -> str:
        """Analyze's Cohen's kappa weighting in words ("quadratic-weighted on the ranks
        of its values"), or "" where it is unweighted (a nominal measure)."""
        name, on = weights_for(self.level, self.kind)
        if name == "identity":
            return ""
        return f"{name}-weighted on the " + ("ranks of its values" if on == "ranks"
                                              else "values")


def study_measure(study: Study, measure: str | None = None) -> Measure:
    """The measure to plan for: ``measure`` (a dimension or total id) or the default.

    Raises
    ------
    UsageError
        ``measure`` is not a rated dimension or total of the study.
    """
    rubric = study.rubric
    rated = [d for d in rubric.dimensions if d.value_domain() and d.scope != "study"]
    if measure is None:
        measure = rubric.totals[0].id if rubric.totals else (rated[0].id if rated else "")
    per_item = 2 if study.design.paired else 1
    for total in rubric.totals:
        if total.id == measure:
            return Measure(measure, total.level, _total_domain(total, rubric), per_item)
    for dim in rated:
        if dim.id == measure:
            # as analyze reads it: N/A kept as a category makes the column nominal
            level, domain = dimension_scale(study, dim)
            return Measure(dim.id, level, tuple(domain),
                           per_item if dim.scope == "response" else 1, dim.kind)
    choices = [t.id for t in rubric.totals] + [d.id for d in rated]
    if any(d.id == measure and d.kind == "number" and d.scope != "study"
           for d in rubric.dimensions):
        # rated, but with no list of values a model of its ratings could draw from
        raise UsageError(f"--measure {measure!r} is a number without a fixed set of values "
                         "(no 'max', or decimals): the plan cannot model its ratings, and "
                         f"analyze reads its values as observed; choose one of: "
                         f"{', '.join(choices)}")
    raise UsageError(f"--measure {measure!r} is not a rated dimension or total of this "
                     f"study; choose one of: {', '.join(choices)}")


def _total_domain(total: Total, rubric: Rubric) -> tuple[float | int, ...]:
    """Every value ``total`` can take: each whole sum of its dimensions' points, and
    for a mean total each such sum over the number of dimensions (a mean of six 1-5
    scores is 1, 7/6, 8/6, ... 5, not one of 1..5 alone).

    Raises
    ------
    UsageError
        The sums are not whole points (a dimension not scored in whole points).
    """
    lo, hi = total_bounds(total, rubric)
    count = len(total.of) if total.method == "mean" else 1
    low, high = lo * count, hi * count  # the range of the sum of the points
    if not (round(low, 9).is_integer() and round(high, 9).is_integer()):
        raise UsageError(f"total {total.id!r} is not on whole points; "
                         "plan one of its dimensions with --measure")
    sums = range(round(low), round(high) + 1)
    return tuple(sums) if count == 1 else tuple(s / count for s in sums)


def model_source(measure: Measure, alpha: float, shares: list[float] | None) -> ModelSource:
    """The anticipated model; shares default to equal shares of the measure's values."""
    size = len(measure.domain)
    if shares is None:
        shares = [1.0 / size] * size
    if len(shares) != size:
        raise UsageError(f"--shares gives {counted(len(shares), 'share')}; {measure.id!r} "
                         f"has {counted(size, 'value')} ({values_text(measure.domain)})")
    total = sum(shares)
    if total <= 0 or min(shares) < 0 or not all(map(math.isfinite, shares)):
        raise UsageError("--shares must be non-negative numbers with a positive sum")
    # one value alone never varies: every simulated study's agreement is undefined, and
    # the plan had nothing but "nan" to show for it
    if sum(s > 0 for s in shares) < 2:
        raise UsageError(f"--shares {','.join(f'{s:g}' for s in shares)}: every rating "
                         f"would be the same value of {measure.id!r}, so agreement is "
                         "undefined in every study; give two or more values a share above 0")
    try:
        return ModelSource(alpha, tuple(s / total for s in shares), measure.domain,
                           measure.level)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def pilot_source(table: pd.DataFrame, measure: Measure, label: str,
                 origin: str = "") -> PilotSource:
    """A pilot table (``unit, rater, value``) as codes over the measure's values.

    ``label`` names the pilot in the plan's source line; ``origin`` (e.g. why this
    file was read) follows it in error messages only. A table with a ``case`` column
    (the study's own unblinded ratings, whose units name a response's arm) names the
    case, not the unit, so no message says which arm a rating went to.

    Raises
    ------
    SpecError
        A value outside the measure's values (named with its unit, or case, and rater).
    UsageError
        No unit with two or more values (the message names ``--expected``).
    """
    lookup = {_key(v): i for i, v in enumerate(measure.domain)}
    codes = []
    blinded = "case" in table
    for row in table.itertuples(index=False):
        code = lookup.get(_key(row.value))
        if code is None:
            where = f"case {row.case}" if blinded else f"unit {row.unit}"
            raise SpecError(f"{label}{origin}: value {row.value!r} ({where}, "
                            f"rater {row.rater}) is not a value of {measure.id!r}; allowed: "
                            f"{values_text(measure.domain)}")
        codes.append(code)
    # protocol 000's internal team keeps the first slot of every unit: it rates in every
    # study the decision's alpha counts, so resampling keeps it (see PilotSource.draw)
    is_team = (table["rater"] == INTERNAL_RATER).to_numpy()
    team = bool(is_team.any())
    frame = pd.DataFrame({"unit": table["unit"].astype(str).to_numpy(), "code": codes,
                          "team": is_team})
    lists = [_unit_codes(g, team) for _, g in frame.groupby("unit", sort=True)
             if len(g) >= 2]
    if not lists:
        raise UsageError(f"{label}{origin}: no unit has two or more ratings of "
                         f"{measure.id!r}, and a pilot needs units rated by at least two "
                         "raters; give --expected (the anticipated value, e.g. 0.75) or a "
                         "pilot that has them")
    used = sorted({int(c) for v in lists for c in v if c >= 0})
    if len(used) < 2:
        raise UsageError(f"{label}{origin}: every rating of {measure.id!r} in it is the "
                         f"same value ({measure.domain[used[0]]}), so its alpha is "
                         "undefined and says nothing of the study's; give --expected (the "
                         "anticipated value, e.g. 0.75) or a pilot whose raters used more "
                         "than one value")
    width = max(len(v) for v in lists)
    matrix = np.full((len(lists), width), -1, dtype=np.int64)
    for i, v in enumerate(lists):
        matrix[i, : len(v)] = v
    return PilotSource(matrix, measure.domain, measure.level, label, team=team)


def _unit_codes(unit: pd.DataFrame, team: bool) -> np.ndarray:
    """One unit's value codes in the pilot's order; with ``team``, the internal team's
    first (-1 where the team did not rate the unit)."""
    if not team:
        return unit["code"].to_numpy()
    own = unit.loc[unit["team"], "code"].to_numpy()
    return np.concatenate([own[:1] if len(own) else [-1],
                           unit.loc[~unit["team"], "code"].to_numpy()])


_PARTS = {2: "halves", 3: "thirds", 4: "quarters", 5: "fifths", 6: "sixths",
          7: "sevenths", 8: "eighths", 9: "ninths", 10: "tenths"}


def values_text(domain: tuple[Any, ...]) -> str:
    """A measure's values in few words: each one when few ("0, 1, 2"), else their range
    and step ("1 to 5 in sixths", "the whole numbers 0 to 100"): the 25 values of a mean
    of six 1-5 scores, printed as raw floats, hid what the pilot should hold."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in domain)
    if not numbers or len(domain) <= 6:
        return ", ".join(f"{v:g}" if numbers else str(v) for v in domain)
    values = np.asarray(domain, dtype=float)
    low, high, step = values[0], values[-1], (values[-1] - values[0]) / (len(values) - 1)
    if not np.allclose(np.diff(values), step):
        shown = ", ".join(f"{v:g}" for v in values[:3])
        return f"{len(values)} values from {low:g} to {high:g} ({shown}, ..., {high:g})"
    if np.isclose(step, 1):
        return f"the whole numbers {low:g} to {high:g}"
    parts = round(1 / step)
    if np.isclose(parts * step, 1):
        return f"{low:g} to {high:g} in {_PARTS.get(parts, f'steps of 1/{parts}')}"
    return f"{low:g} to {high:g} in steps of {step:g}"


def _key(value: Any) -> str:
    """Compare '3', 3 and 3.0 alike, and a mean however its sum was added up (to 9
    decimals); text as it is."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).strip()
    if not math.isfinite(number):
        return str(number)
    number = round(number, 9)
    return str(int(number)) if number.is_integer() else str(number)


def read_pilot_csv(path: str | Path, measure: Measure) -> pd.DataFrame:
    """A pilot's ratings from CSV: ``unit, rater, value`` columns, or sheetflow's ratings.csv.

    sheetflow's ratings table (``rater_id, case_id, dimension, value``) is read for
    the measure's first-sitting rows; paired ratings are refused, because their A/B
    labels mean different responses for different raters until the key unblinds them.

    Raises
    ------
    SpecError
        The file cannot be read as such a table, or (``unit, rater, value``) a rater
        rates a unit twice.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file" if not path.exists() else
                         f"{path}: not a file; give the pilot's CSV file")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise SpecError("is not UTF-8 text; save it as 'CSV UTF-8 (comma delimited)'",
                        file=str(path)) from None
    except pd.errors.EmptyDataError:
        raise SpecError("is empty; a pilot CSV needs the columns unit, rater, value (one "
                        "row per rating)", file=str(path)) from None
    except pd.errors.ParserError as exc:
        raise SpecError(f"cannot be read as CSV ({' '.join(str(exc).split())}); save it as "
                        "'CSV UTF-8 (comma delimited)'", file=str(path)) from None
    if len(df.columns) == 1 and ";" in str(df.columns[0]):
        raise SpecError(SEMICOLONS, file=str(path))
    if {"rater_id", "case_id", "dimension", "value"} <= set(df.columns):
        if "label" in df.columns and (df["label"] != "").any():
            raise SpecError(
                f"{path}: paired ratings are blinded (A/B differ per rater); run plan on "
                "that study's folder after generate (it unblinds with the sealed key), or "
                "give a CSV with unit, rater, value columns")
        df = _first_sitting(df[df["dimension"] == measure.id]).rename(
            columns={"case_id": "unit", "rater_id": "rater"})
        df = df.loc[df["value"].astype(str).str.strip() != "", ["unit", "rater", "value"]]
        _refuse_values(df, path, measure, {"unit": "case_id", "rater": "rater_id",
                                           "dimension": measure.id})
        return df
    missing = [c for c in ("unit", "rater", "value") if c not in df.columns]
    if missing:
        raise SpecError(f"{path}: no column {', '.join(missing)}; a pilot CSV needs the "
                        "columns unit, rater, value (one row per rating)")
    dimension = measure.id if "dimension" in df.columns and "case_id" not in df.columns \
        else None
    if dimension is not None:
        df = df[df["dimension"] == dimension]
    df = df.loc[df["value"].astype(str).str.strip() != "", ["unit", "rater", "value"]]
    _refuse_repeats(df, path, dimension)
    _refuse_values(df, path, measure, {"unit": "unit", "rater": "rater",
                                       "dimension": dimension})
    return df


def _refuse_values(df: pd.DataFrame, path: Path, measure: Measure,
                   columns: dict[str, str | None]) -> None:
    """Refuse the first rating that is not one of the measure's values, by its line.

    ``columns`` names the file's unit and rater columns (``unit``, ``rater``) and the
    dimension its rows are read for (None: every row).

    Raises
    ------
    SpecError
        Naming the file, the line, the value and the values allowed.
    """
    allowed = {_key(v) for v in measure.domain}
    bad = ~df["value"].map(_key).isin(allowed)
    if not bad.any():
        return
    unit, rater, value = df.loc[bad.idxmax(), ["unit", "rater", "value"]]
    match = {columns["unit"]: unit, columns["rater"]: rater, "value": value,
             "dimension": columns["dimension"]}
    lines = _lines_of(path, match)
    raise SpecError(f"value {value!r} (unit {unit}, rater {rater}) is not a value of "
                    f"{measure.id!r}; allowed: {values_text(measure.domain)}; give the "
                    "pilot's ratings on the measure's scale", file=str(path),
                    where=f"line {lines[0]}" if lines else None)


def _first_sitting(df: pd.DataFrame) -> pd.DataFrame:
    """The sitting-1 rows of sheetflow's ratings table (a blank sitting is the first).

    Protocol 001's second sitting re-scores items by the same raters; analyze's alpha
    reads the first sitting only, and a second one read as well would be one more rater.
    """
    if "sitting" not in df.columns:
        return df
    sitting = pd.to_numeric(df["sitting"].str.strip(), errors="coerce").fillna(1)
    return df[sitting.to_numpy() == 1]


def _refuse_repeats(df: pd.DataFrame, path: Path, dimension: str | None) -> None:
    """Refuse a rater rating a unit twice: each row is read as one more rater's value.

    A pilot pasted twice, or one rater's two tries, made a lone rater a pair (alpha
    0.949 from one rater) and moved a real pilot's alpha (0.570 to 0.697).

    Raises
    ------
    SpecError
        Naming the file, both lines and the rater and unit.
    """
    repeated = df.duplicated(["unit", "rater"])
    if not repeated.any():
        return
    unit, rater = df.loc[repeated.idxmax(), ["unit", "rater"]]
    lines = _lines_of(path, {"unit": unit, "rater": rater, "dimension": dimension})
    where, first = ((f"line {lines[1]}", f" (first at line {lines[0]})") if len(lines) > 1
                    else (None, ""))
    raise SpecError(f"rater {rater!r} rates unit {unit!r} again{first}; a pilot CSV has "
                    "one row per rating", file=str(path), where=where)


def _lines_of(path: Path, match: dict[str, str | None]) -> list[int]:
    """The lines (as a text editor numbers them) on which the rows with a value and
    ``match``'s cells begin; a None in ``match`` matches any cell."""
    wanted = {k: v for k, v in match.items() if v is not None}
    lines: list[int] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, [])
            at = {name: header.index(name) for name in [*wanted, "value"] if name in header}
            start = reader.line_num + 1
            for row in reader:
                cells = {name: row[i] if i < len(row) else "" for name, i in at.items()}
                if cells.get("value", "").strip() and all(
                        cells.get(k) == v for k, v in wanted.items()):
                    lines.append(start)
                start = reader.line_num + 1
        except csv.Error:  # a cell csv will not read (over its size limit): no lines
            return []
    return lines


def pilot_from_study(root: str | Path, study: Study, measure: Measure, *,
                     as_decided: bool = False) -> pd.DataFrame:
    """The study's own collected ratings of ``measure``, unblinded with its sealed key:
    ``unit, rater, value, case`` (a paired study's units name their arm; the case does
    not).

    With ``as_decided`` (a plan of alpha), the raters are those of analyze's alpha on the
    measure: where the study's internal scores rate it (the rubric's first total, protocol
    000 sections 4.1-4.2), the internal team is one more rater,
    :data:`~sheetflow.analysis.internal_rater.INTERNAL_RATER`, with its sealed totals on
    the units the validators rated, so the pilot's alpha is the decision's.
    """
    from ..analysis.context import Context
    from ..analysis.internal_rater import internal_measure, with_internal_team
    from ..analysis.unblind import add_totals, internal_scores, key_sides, unblind, verify_seal
    from ..collect.outputs import verify_ratings

    sealed = verify_seal(Path(root), study)
    key = sealed.key
    data = verify_ratings(root, sealed.secret).data
    raw = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    # the internal scores as sealed, the bytes analyze reads
    internal = internal_scores(study, sealed.input_bytes) if as_decided else None
    ctx = Context(study, add_totals(unblind(study, raw, key_sides(key)), study.rubric),
                  internal)
    rows = ctx.ratings(measure.id)
    if internal is not None and internal_measure(ctx) == measure.id:
        rows = with_internal_team(ctx, ctx.numeric(measure.id))  # as analyze's alpha
    # the units of a paired study name their arm ("case|arm"): messages name the case
    return rows.assign(unit=rows["unit"].astype(str))[["unit", "rater", "value", "case"]]


def team_rates(study: Study, measure: Measure) -> bool:
    """Whether analyze's alpha on ``measure`` counts the internal team as one more rater:
    the study's internal scores rate it (the rubric's first total, protocol 000 sections
    4.1-4.2), so the team rates beside the validators in every design a plan sizes."""
    from ..analysis.internal_rater import rated_by_internal
    from ..analysis.unblind import internal_scores

    return rated_by_internal(study, internal_scores(study)) == measure.id
