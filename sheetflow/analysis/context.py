"""What every analysis module shares: the result object, the context and small helpers.

:class:`Context` holds the study, the unblinded data in the shapes the analyses need
(``first`` = sitting-1 ratings with a ``unit`` column: ``case|arm`` in a paired design,
the item otherwise) and plan shortcuts. The helpers turn values into JSON, stack result
tables and record verdicts in the summary.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ..spec.hashing import plain_data
from ..spec.model import Plan
from ..spec.protocol_targets import target_problems
from ..spec.rubric import Dimension
from ..spec.study import Study
from ..stats._util import RatingMatrix, rating_matrix
from ..stats._weights import agreement_weights
from ..words import settled
from .na import na_as_category

DATA_COLUMNS = ("rater", "role", "sitting", "case", "label", "arm", "dimension", "value",
                "confidence")
TIED = "Tied"


@dataclass
class Analysis:
    """The result of running a study's plan.

    Attributes
    ----------
    study : Study
    data : pandas.DataFrame
        The unblinded tidy ratings with recomputed totals (see the module docstring).
    tables : dict of str to pandas.DataFrame
        One result table per analysis, in the plan's order (plus ``self_checks``).
    summary : dict
        Headline numbers and verdicts, versions, hashes and seeds (JSON-safe).
    methods : list of (str, str)
        Topic and text of every convention used, for the Methods sheet.
    figures : dict of str to pandas.DataFrame
        Chart data (alpha with error-bar lengths, score distribution per rater,
        external vs internal totals), so the report draws without computing.
    panel : Panel
        Expected, included and missing raters (see :mod:`.panel`).
    batches : pandas.DataFrame or None
        Each rated item's batch and the batch's start and end (designs with batches;
        see :func:`.keep_known_files.batch_times`).
    feedback : dict
        Rater id -> sheet name -> table: each rater's own scores against the
        de-identified group (protocol 000 promises it), one workbook per rater.
    """

    study: Study
    data: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    methods: list[tuple[str, str]] = field(default_factory=list)
    figures: dict[str, pd.DataFrame] = field(default_factory=dict)
    panel: Any = None
    batches: pd.DataFrame | None = None
    feedback: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)


class Context:
    """The study, its data in the shapes the analyses need, and plan shortcuts."""

    def __init__(self, study: Study, data: pd.DataFrame, internal: pd.DataFrame | None,
                 case_names: dict[tuple[str, str], tuple[int, str]] | None = None):
        self.study = study
        # (rater, item id) -> (card number, "3 (K7QF)"): a case as that rater saw it
        self.case_names = case_names or {}
        self.plan = study.plan
        self.data = data
        self.internal = internal
        sitting1 = (data["sitting"] == 1).to_numpy()
        # most designs have one sitting: then a frame over data's own columns (pandas
        # copies on write, so data stays as it is), not a copy of them
        first = data.copy(deep=False) if sitting1.all() else data[sitting1].copy()
        # a response is one unit: (case, arm) in a paired design, the item otherwise
        first["unit"] = _units(first["case"], first["arm"])
        self.first = first
        self._by_measure: dict[str, pd.DataFrame] = {}
        self._rows_of: dict[Any, np.ndarray] | None = None  # dimension -> row positions
        self._matrices: dict[tuple[str, str], RatingMatrix] = {}

    def as_seen(self, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` (columns ``rater`` and ``case``) for its raters to read: each case
        named as that rater saw it (card number and display code, never the item id,
        which may follow the arms) and the rows in card order. Unchanged when no key
        names the cards (:func:`run_plan` called without one)."""
        if not self.case_names or table.empty:
            return table
        # each (rater, case) looked up once: a rater's case has a row per measure
        raters, rater_ids = pd.factorize(table["rater"].astype(str), use_na_sentinel=False)
        cases, case_ids = pd.factorize(table["case"].astype(str), use_na_sentinel=False)
        pairs, at = np.unique(raters * len(case_ids) + cases, return_inverse=True)
        rater_of, case_of = np.divmod(pairs, len(case_ids))
        seen = [self.case_names.get(key, (0, "")) for key in
                zip(rater_ids.take(rater_of).tolist(), case_ids.take(case_of).tolist(),
                    strict=True)]
        at = at.ravel()
        names = np.array([name for _, name in seen], dtype=object)[at].tolist()
        cards = np.array([n for n, _ in seen], dtype=np.int64)[at]
        out = table.assign(case=names, _card=cards)
        return out.sort_values("_card", kind="stable", ignore_index=True).drop(
            columns="_card")

    def response_dims(self) -> list[Dimension]:
        return [d for d in self.study.rubric.by_scope("response")
                if d.kind not in ("text", "flag")]

    def dims_and_totals(self) -> list[tuple[str, str, list[Any] | None, str]]:
        """(id, level, value domain or None, kind) for every analysable response measure."""
        out: list[tuple[str, str, list[Any] | None, str]] = [
            (d.id, *dimension_scale(self.study, d), d.kind) for d in self.response_dims()]
        out += [(t.id, t.level, None, "total") for t in self.study.rubric.totals]
        out += [(d.id, "nominal", self.arm_domain(), "preference")
                for d in self.study.rubric.dimensions if d.kind == "preference"]
        return out

    def arm_domain(self) -> list[str]:
        return [a.id for a in self.study.design.arms] + [TIED]

    def ratings(self, dim_id: str) -> pd.DataFrame:
        """Sitting-1 ratings of one measure: unit, rater, value (missing dropped).

        Each measure's rows are selected once (a panel of hundreds of raters has
        hundreds of thousands of rows; analyses ask for the same measure many times);
        callers get their own copy.
        """
        if dim_id not in self._by_measure:
            self._by_measure[dim_id] = self._select(dim_id)
        return self._by_measure[dim_id].copy()

    def answers(self, dim_id: str) -> pd.DataFrame:
        """Sitting-1 answers of one measure as :meth:`ratings` gives them, with the N/A
        answers ``na_handling = "missing"`` leaves out of the ratings kept: every answer
        given (blank cells dropped), for saying what a figure left out."""
        return self._select(dim_id, keep_na=True)

    def _select(self, dim_id: str, *, keep_na: bool = False) -> pd.DataFrame:
        if self._rows_of is None:  # one grouping instead of a comparison per measure
            self._rows_of = self.first.groupby("dimension", sort=False).indices
        rows = self.first.iloc[self._rows_of.get(dim_id, np.empty(0, dtype=np.intp))]
        if rows.empty:
            return pd.DataFrame(columns=["unit", "rater", "value", "arm", "case"])
        if self._is_case_scope(dim_id):
            rows = rows.assign(unit=rows["case"])
        rows = rows[rows["value"].notna() & (rows["value"].astype(str) != "")]
        dim = self._dimension(dim_id)
        if dim is not None and dim.na_choices and not keep_na and \
                not na_as_category(self.study, dim):
            rows = rows[~rows["value"].isin(dim.na_choices)]  # na_handling "missing"
        return rows[["unit", "rater", "value", "arm", "case"]]

    def _dimension(self, dim_id: str) -> Dimension | None:
        try:
            return self.study.rubric.dimension(dim_id)
        except KeyError:
            return None

    def numeric(self, dim_id: str) -> pd.DataFrame:
        rows = self.ratings(dim_id).copy()
        rows["value"] = pd.to_numeric(rows["value"], errors="coerce")
        return rows.dropna(subset=["value"])

    def _is_case_scope(self, dim_id: str) -> bool:
        try:
            return self.study.rubric.dimension(dim_id).scope == "case"
        except KeyError:
            return False

    def band(self, value: float) -> str:
        """The label of the plan's highest band whose lower end ``value`` reaches, at
        its full value ("" when undefined or below every band). Wherever the value is
        shown beside its band it stands on the same side of :func:`band_bounds` as its
        full value (:data:`~sheetflow.words.ROUNDING_RULE`)."""
        if value is None or not np.isfinite(value):
            return ""
        value = settled(value, [band.minimum for band in self.plan.bands])  # noise is no side
        for band in self.plan.bands:
            if value >= band.minimum:
                return band.label
        return ""

    def target(self, name: str, default: float | None = None) -> float | None:
        return self.plan.targets.get(name, default)

    def decided_target(self, name: str) -> float | None:
        """The plan's target ``name`` when the study's protocol allows it; None when
        the protocol fixes another value (:mod:`~sheetflow.spec.protocol_targets`), as
        its consequence bands would contradict it, or when the plan has none."""
        wrong = {p.name for p in target_problems(self.study.protocol, self.plan.targets)}
        return None if name in wrong else self.target(name)

    def param(self, name: str, default: Any = None) -> Any:
        return self.plan.params.get(name, default)


def band_bounds(plan: Plan) -> tuple[float, ...]:
    """The lower ends of ``plan``'s bands: what an alpha is read against, so what it is
    shown on the right side of (see :func:`~sheetflow.words.shown_number`)."""
    return tuple(band.minimum for band in plan.bands)


def _units(case: pd.Series, arm: pd.Series) -> pd.Series:
    """``case``, or ``case|arm`` where the arm is not empty, per rating: each distinct
    unit's text made once and shared by its ratings (a text per rating is some 8 MB at
    500 raters)."""
    case_codes, cases = pd.factorize(case)
    arm_codes, arms = pd.factorize(arm)
    if (case_codes < 0).any() or (arm_codes < 0).any():  # a missing case or arm: as text
        return case + np.where(arm != "", "|" + arm, "")
    pair, at = np.unique(case_codes * len(arms) + arm_codes, return_inverse=True)
    texts = [cases[c] + ("|" + arms[a] if arms[a] != "" else "")
             for c, a in zip((pair // len(arms)).tolist(), (pair % len(arms)).tolist(),
                             strict=True)]
    return pd.Series(np.array(texts, dtype=object)[at.ravel()], index=case.index,
                     dtype=case.dtype)


def answered(values: pd.Series) -> np.ndarray:
    """Per value: whether an answer was given (neither missing nor blank text).

    A return taken in with ``--allow-partial`` brings a row for every answer cell, the
    blank ones too: a rater is one "with ratings" only by the answers they gave.
    """
    text = values.astype(str).str.strip()
    return (values.notna() & (text != "")).to_numpy(dtype=bool)


def answered_packs(data: pd.DataFrame) -> pd.DataFrame:
    """``data`` without the rows of packs (rater and sitting) that hold no answer at all:
    a return with every answer blank adds no rater to the analysis."""
    given = answered(data["value"])
    if given.all():
        return data
    packs = data.loc[given, ["rater", "sitting"]].drop_duplicates()
    keep = pd.MultiIndex.from_frame(data[["rater", "sitting"]]).isin(
        pd.MultiIndex.from_frame(packs))
    return data[keep]


def natural_key(text: Any) -> tuple:
    """Sort key that orders numbers inside text by value: ``C2`` before ``C10``."""
    parts = re.split(r"(\d+)", str(text))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != "")


def natural_order(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``data`` sorted by ``columns`` in natural order (stable; other order kept)."""
    if data.empty:
        return data
    return data.sort_values(columns, key=_natural_ranks, kind="stable", ignore_index=True)


def split_rows(data: pd.DataFrame, by: str, columns: list[str]) -> dict[Any, pd.DataFrame]:
    """``data[columns]`` split by the values of ``by`` (in order of first appearance),
    each part with its rows in their order and a fresh index: what
    ``{k: g[columns].reset_index(drop=True) for k, g in data.groupby(by, sort=False)}``
    gives, from one sort and a slice per group (hundreds of raters)."""
    codes, keys = pd.factorize(data[by], sort=False)
    order = np.argsort(codes, kind="stable")
    order = order[np.searchsorted(codes[order], 0):]  # rows without a key: none (as groupby)
    ends = np.cumsum(np.bincount(codes[order], minlength=len(keys)))
    whole = data[columns].take(order)
    parts = {}
    for key, start, end in zip(keys.tolist(), [0, *ends[:-1].tolist()], ends.tolist(),
                               strict=True):
        part = whole.iloc[start:end]
        part.index = pd.RangeIndex(end - start)
        parts[key] = part
    return parts


def _natural_ranks(col: pd.Series) -> pd.Series:
    """Each value's rank in natural order (keys computed once per distinct value)."""
    if pd.api.types.is_numeric_dtype(col):
        return col
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    order = sorted(range(len(uniques)), key=lambda i: natural_key(uniques[i]))
    ranks = np.empty(len(uniques), dtype=np.int64)
    ranks[order] = np.arange(len(uniques))
    return pd.Series(ranks[codes], index=col.index)


def typed_domain(kind: str, domain: list[Any] | None, level: str) -> list[Any] | None:
    """Numeric domains as floats so they match the numeric ratings; an empty numeric
    domain (a number without a cap, or with decimals: values as observed) is None."""
    if domain is None or kind in ("categorical", "binary", "preference", "flag"):
        return domain
    return [float(v) for v in domain] or None


def values_for(ctx: Context, dim_id: str, kind: str) -> pd.DataFrame:
    return ctx.numeric(dim_id) if kind in ("count", "checklist", "scale", "number", "total") \
        else ctx.ratings(dim_id)


def matrix_for(ctx: Context, dim_id: str, kind: str) -> RatingMatrix:
    """:func:`values_for` as a raters x units matrix, laid out once per measure.

    Alpha, the kappas, AC1/AC2 and percent agreement all read the same ratings; on a
    panel of hundreds of thousands of ratings the layout costs more than most of them.
    """
    key = (dim_id, kind)
    if key not in ctx._matrices:
        ctx._matrices[key] = rating_matrix(values_for(ctx, dim_id, kind))
    return ctx._matrices[key]


def empty_reason(frame: pd.DataFrame, reason: str, **cols: Any) -> pd.DataFrame:
    return pd.DataFrame([{**cols, "reason": reason}])


def dimension_scale(study: Study, dim: Dimension) -> tuple[str, list[Any]]:
    """A dimension's level of measurement and values as analyze reads them.

    One rule for analyze and the plan, so the plan sizes the statistic analyze reports:
    where N/A answers are a category of their own (``na_handling = "category"``), N/A
    has no place on the ordered scale, so the column is nominal with N/A among its
    values; otherwise the rubric's level and values (N/A left out).

    Returns
    -------
    tuple of (str, list)
        The level and the values, in order.
    """
    if na_as_category(study, dim):
        return "nominal", list(dim.choices)
    return dim.level, dim.value_domain()


def weights_for(level: str, kind: str) -> tuple[str, str]:
    """Kappa weights: unweighted for nominal, quadratic for ordered; on values or ranks."""
    if level == "nominal":
        return "identity", "values"
    labelled = kind in ("categorical", "binary", "preference", "flag")
    return "quadratic", "ranks" if labelled else "values"


def kappa_weights(level: str, kind: str, domain: Sequence[Any]) -> np.ndarray:
    """The agreement weights Cohen's kappa puts on a measure (:func:`weights_for`).

    One function for analyze's rule and the plan's simulation, so the plan sizes the
    kappa analyze reports (quadratic-weighted on an ordered measure).

    Parameters
    ----------
    level, kind : str
        The measure's level of measurement and kind (``"total"`` for a total).
    domain : sequence
        The measure's values, in order.

    Returns
    -------
    numpy.ndarray
        ``w[k, l]`` over ``domain``: the identity for a nominal measure.
    """
    name, on = weights_for(level, kind)
    values = typed_domain(kind, list(domain), level)
    return agreement_weights(np.asarray(values), name, on)


def stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-measure result tables (an all-NaN column is a valid result)."""
    if not frames:
        return pd.DataFrame()
    with warnings.catch_warnings():  # pandas warns about all-NA columns in concat
        warnings.simplefilter("ignore", FutureWarning)
        return pd.concat(frames, ignore_index=True)


class ColumnStack:
    """Per-measure result tables, kept column by column and stacked at the end.

    What :func:`stack` gives, for the large tables (a pairwise table of 873,000 rows at
    500 raters): each table added is split into its columns at once, so its block of
    floats is freed, and the stacked table is built one column at a time with no
    block consolidated, so no more than one column is ever held twice (the whole
    table twice, with :func:`stack`).

    Parameters
    ----------
    categorical : bool, default False
        Keep each text column (pandas' ``str`` dtype) as a :class:`pandas.Categorical`
        of the same values, its categories sorted: a pairwise table's text (measure,
        rater ids, weights, reasons) takes a few distinct values in a million rows, so
        one or two bytes a row instead of an eight-byte reference (40 of the pairwise
        table's 105 MB at 500 raters), and pickles as codes for the output workers.
    rows : int, optional
        The stacked table's length when it is known beforehand: its numeric columns
        are then filled in place as the tables come (see :meth:`_start_buffers`). Only
        a hint: tables that do not fit are kept as above.
    """

    def __init__(self, *, categorical: bool = False, rows: int | None = None) -> None:
        self._parts: list[dict[Any, pd.Series]] = []
        self._categorical = categorical
        self._rows = rows
        self._names: list[Any] = []  # the first table's columns, in order
        self._buffers: dict[Any, np.ndarray] | None = None  # numeric columns, in place
        self._sizes: list[int] = []

    def add(self, frame: pd.DataFrame) -> None:
        """Keep ``frame``'s columns (copies: ``frame`` itself may be dropped)."""
        if self._rows is not None and not self._sizes:
            self._start_buffers(frame)
        if self._buffers is not None and not self._fits(frame):
            self._unbuffer()
        buffers, at = self._buffers or {}, sum(self._sizes)
        for name, buffer in buffers.items():
            buffer[at:at + len(frame)] = frame[name].to_numpy()
        self._parts.append({name: self._kept(frame[name]) for name in frame.columns
                            if name not in buffers})
        self._sizes.append(len(frame))

    def _start_buffers(self, frame: pd.DataFrame) -> None:
        """The stacked table's numeric columns, allocated whole before any is filled:
        kept as one piece per table and joined at the end, each column's pieces would
        be freed only once the joined column is made, leaving holes in the heap that the
        allocator keeps (some 50 MB for the pairwise table at 500 raters)."""
        self._names = list(frame.columns)
        if len(frame) and self._rows:
            self._buffers = {name: np.empty(self._rows, dtype=frame[name].dtype)
                             for name in self._names if isinstance(frame[name].dtype, np.dtype)
                             and frame[name].dtype.kind in "biuf"}

    def _fits(self, frame: pd.DataFrame) -> bool:
        """Whether ``frame`` goes into the buffers: same columns, same numeric dtypes,
        room left."""
        assert self._buffers is not None
        return (list(frame.columns) == self._names and len(frame) > 0
                and sum(self._sizes) + len(frame) <= (self._rows or 0)
                and all(frame[name].dtype == buffer.dtype
                        for name, buffer in self._buffers.items()))

    def _unbuffer(self) -> None:
        """Back to one piece per table (a table that does not fit the buffers)."""
        buffers, self._buffers, self._rows = self._buffers or {}, None, None
        at = 0
        for k, size in enumerate(self._sizes):
            own = self._parts[k]
            cut = {name: pd.Series(buffer[at:at + size].copy(), name=name)
                   for name, buffer in buffers.items()}
            self._parts[k] = {name: own[name] if name in own else cut[name]
                              for name in self._names}
            at += size

    def _kept(self, column: pd.Series) -> pd.Series:
        if self._categorical and isinstance(column.dtype, pd.StringDtype):
            return _as_category(column)  # categories sorted, as union keeps them
        return column.copy()

    def stacked(self) -> pd.DataFrame:
        """The tables added, stacked as :func:`stack` stacks them (text columns as
        categoricals when asked, see the class docstring)."""
        if self._buffers is not None and sum(self._sizes) != self._rows:
            self._unbuffer()  # fewer rows than announced
        parts, buffers, sizes = self._parts, self._buffers, self._sizes
        self._parts, self._buffers, self._sizes = [], None, []
        if not _same_columns(parts, sizes):  # empty parts, differing dtypes: pandas'
            table = stack([pd.DataFrame({name: _as_text(column) for name, column
                                         in part.items()}) for part in parts])
            return _text_as_categories(table) if self._categorical else table
        columns = {}
        for name in self._names if buffers is not None else list(parts[0]):
            if buffers is not None and name in buffers:
                columns[name] = pd.Series(buffers.pop(name), name=name, copy=False)
                continue
            pieces = [part.pop(name) for part in parts]
            if isinstance(pieces[0].dtype, pd.CategoricalDtype):
                columns[name] = pd.Series(union_categoricals(pieces, sort_categories=True),
                                          name=name, copy=False)
            else:
                columns[name] = pd.concat(pieces, ignore_index=True)
            del pieces
        return pd.DataFrame(columns, copy=False)


def _as_category(column: pd.Series) -> pd.Series:
    """``column.astype("category")``; at once for a column holding one text throughout
    (a measure's id, its weighting: the same on each of a measure's 124,750 pairs at
    500 raters), which pandas would hash row by row."""
    values = column.to_numpy()
    first = values[0] if len(values) else None
    # compared as objects: NaN equals no text (pd.NA, which cannot be compared, is left
    # to pandas)
    if isinstance(first, str) and column.dtype.na_value is not pd.NA and \
            values[-1] == first and bool((values == first).all()):
        codes = np.zeros(len(values), dtype=np.int8)
        categories = pd.Index([first], dtype=column.dtype)
        return pd.Series(pd.Categorical.from_codes(codes, categories=categories),
                         index=column.index, name=column.name)
    return column.astype("category")


def _as_text(column: pd.Series) -> pd.Series:
    """A categorical column kept by :class:`ColumnStack` back as its text."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(column.cat.categories.dtype)
    return column


def _text_as_categories(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each ``str`` column as a categorical (see :class:`ColumnStack`)."""
    text = [c for c in table.columns if isinstance(table[c].dtype, pd.StringDtype)]
    return table.astype(dict.fromkeys(text, "category")) if text else table


def _same_columns(parts: list[dict[Any, pd.Series]], sizes: list[int]) -> bool:
    """Whether every part has rows, and the same columns with the same dtypes (any
    categories: categoricals are united)."""
    if not parts or not all(sizes):
        return False

    def kinds(part: dict[Any, pd.Series]) -> list[tuple[Any, Any]]:
        return [(name, "category" if isinstance(column.dtype, pd.CategoricalDtype)
                 else column.dtype) for name, column in part.items()]
    first = kinds(parts[0])
    return all(kinds(part) == first for part in parts)


def number(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return np.nan


def add_verdict(out: dict, name: str, value: Any, target: float | None, passed: Any,
             note: str = "") -> None:
    out["verdicts"].append({"name": name, "value": value, "target": target,
                            "met": passed, "note": note})


def json_value(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def json_safe(obj: Any) -> Any:
    """Plain JSON data: numpy scalars to Python, NaN and infinity to None."""
    return plain_data(obj, json_value)
