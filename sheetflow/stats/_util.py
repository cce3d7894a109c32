"""Private helpers shared by the ``sheetflow.stats`` modules.

Input normalisation (tidy table or raters x units matrix -> integer codes over a value
domain), per-unit category counts, small result-table helpers and the docstring fragments
the public functions share. Nothing here prints, exits or touches other sheetflow modules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd

MISSING = -1
# the reason an agreement coefficient corrected for chance is undefined: the units
# compared only, since ratings left out before (an N/A answer) may be of another category
CHANCE_IS_ONE = "chance agreement is 1 (one category on every unit compared)"

DOC_FRAGMENTS = {
    "data": """data : pandas.DataFrame or array_like
    Tidy table (one row per rating; columns named by ``unit``, ``rater`` and
    ``value``) or a raters x units matrix with NaN for missing.""",
    "columns": """unit, rater, value : str
    Column names of the tidy table.""",
    "fleiss1971": """Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
Psychological Bulletin, 76(5), 378-382.""",
    "gwet2014": """Gwet, K. L. (2014). Handbook of Inter-Rater Reliability (4th ed.).
Advanced Analytics, LLC.""",
    "irr": """Gamer, M., Lemon, J., Fellows, I., & Singh, P. (2019). irr: Various
Coefficients of Interrater Reliability and Agreement. R package
version 0.84.1.""",
    # Gwet's (2014) 4 raters x 12 units example, in irrCAC as ``raw_4raters``
    "raw4raters": """>>> import numpy as np
>>> nan = np.nan
>>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]""",
}
# A placeholder stands alone on its line, or after a citation label (".. [2] {gwet2014}").
_PLACEHOLDER = re.compile(r"^(\s*(?:\.\. \[\d+\] )?)\{(\w+)\}\s*$")
_F = TypeVar("_F", bound=Callable[..., Any])


def shared_doc(func: _F) -> _F:
    """Fill the docstring's ``{name}`` placeholders with ``DOC_FRAGMENTS[name]``.

    A fragment's first line replaces the placeholder and its further lines align under
    it, so the rendered ``__doc__`` (what ``help()`` shows and doctest runs) is complete
    numpydoc while the conventions and citations the functions share are written once.
    """
    if func.__doc__ is None:  # python -OO
        return func
    out = []
    for line in func.__doc__.split("\n"):
        found = _PLACEHOLDER.match(line)
        if found is None:
            out.append(line)
            continue
        lead, name = found.groups()
        first, *rest = DOC_FRAGMENTS[name].split("\n")
        out += [lead + first, *(" " * len(lead) + part for part in rest)]
    func.__doc__ = "\n".join(out)
    return func


class RatingMatrix(NamedTuple):
    """A tidy table already laid out as a raters x units matrix, with its labels.

    Every statistic accepts one in place of the tidy table it came from (same result):
    an analysis that runs several statistics on the same ratings lays them out once
    (:func:`rating_matrix`) instead of once per statistic.

    Attributes
    ----------
    matrix : numpy.ndarray
        Raters x units; float when the values are numeric, else object; NaN for missing.
    raters, units : list
        Row and column labels (sorted when they can be).
    """

    matrix: np.ndarray
    raters: list[Any]
    units: list[Any]


def rating_matrix(data: pd.DataFrame, unit: str = "unit", rater: str = "rater",
                  value: str = "value") -> RatingMatrix:
    """A tidy ratings table as a :class:`RatingMatrix` (see :func:`to_matrix`).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per rating.
    unit, rater, value : str
        Its column names.

    Returns
    -------
    RatingMatrix
    """
    return RatingMatrix(*_tidy_to_matrix(data, unit, rater, value))


def to_matrix(
    data: Any,
    unit: str | None = None,
    rater: str | None = None,
    value: str | None = None,
) -> tuple[np.ndarray, list[Any], list[Any]]:
    """Return ``(matrix, rater_labels, unit_labels)`` with raters as rows.

    A :class:`pandas.DataFrame` is read as a tidy table (one row per rating) with the
    columns named by ``unit``, ``rater`` and ``value`` (defaults ``"unit"``, ``"rater"``,
    ``"value"``). Anything else is read as a raters x units array with missing values
    as NaN/None (the ``reliability_data`` layout of :func:`krippendorff.alpha`). A
    :class:`RatingMatrix` gives a copy of its matrix and its labels (callers may write
    into the matrix).
    """
    if isinstance(data, RatingMatrix):
        return data.matrix.copy(), list(data.raters), list(data.units)
    if isinstance(data, pd.DataFrame):
        return _tidy_to_matrix(data, unit or "unit", rater or "rater", value or "value")
    arr = np.asarray(data, dtype=object if _has_strings(data) else float)
    if arr.size == 0:
        arr = arr.reshape(0, 0) if arr.ndim != 2 else arr
    if arr.ndim != 2:
        raise ValueError("A ratings matrix must be 2-D: raters as rows, units as columns.")
    return arr, list(range(arr.shape[0])), list(range(arr.shape[1]))


def _has_strings(data: Any) -> bool:
    arr = np.asarray(data, dtype=object)
    return any(isinstance(x, str) for x in arr.ravel())


def _tidy_to_matrix(
    df: pd.DataFrame, unit: str, rater: str, value: str
) -> tuple[np.ndarray, list[Any], list[Any]]:
    missing = [c for c in (unit, rater, value) if c not in df.columns]
    if missing:
        raise ValueError(f"Column(s) {missing} not found; the table has {list(df.columns)}.")
    rows = df.loc[df[value].notna(), [unit, rater, value]]
    raters, units = pd.Index(_sorted_labels(df[rater])), pd.Index(_sorted_labels(df[unit]))
    at_rater, at_unit = raters.get_indexer(rows[rater]), units.get_indexer(rows[unit])
    if (at_rater < 0).any() or (at_unit < 0).any():  # a rating without unit or rater
        keep = (at_rater >= 0) & (at_unit >= 0)
        rows, at_rater, at_unit = rows[keep], at_rater[keep], at_unit[keep]
    dup = pd.Series(at_rater * len(units) + at_unit).duplicated().to_numpy()
    if dup.any():
        at = int(np.flatnonzero(dup)[0])
        first = next(rows[[unit, rater]].iloc[at:at + 1].itertuples(index=False, name=None))
        raise ValueError(f"Duplicate rating for (unit, rater) = {first}.")
    numeric = pd.api.types.is_numeric_dtype(df[value])
    arr = np.full((len(raters), len(units)), np.nan, dtype=float if numeric else object)
    arr[at_rater, at_unit] = rows[value].to_numpy(dtype=float if numeric else object)
    return arr, raters.tolist(), units.tolist()


def _sorted_labels(col: pd.Series) -> list[Any]:
    labels = pd.unique(col.dropna())
    try:
        return sorted(labels)
    except TypeError:
        return list(labels)


def is_missing(arr: np.ndarray) -> np.ndarray:
    """Boolean mask of missing cells (NaN or None)."""
    return np.asarray(pd.isna(arr), dtype=bool)


def resolve_domain(arr: np.ndarray, domain: Sequence[Any] | None) -> np.ndarray:
    """The value domain: as given, or the sorted distinct observed values."""
    if domain is not None:
        dom = np.asarray(list(domain), dtype=object if _has_strings(domain) else float)
        if len(set(dom.tolist())) != len(dom):
            raise ValueError("The value domain contains duplicate values.")
        return dom
    observed = arr[~is_missing(arr)]
    if observed.size == 0:
        return np.asarray([], dtype=float)
    values = pd.unique(pd.Series(observed.ravel()))
    try:
        values = sorted(values)
    except TypeError:
        values = sorted(values, key=str)
    return np.asarray(values, dtype=object if _has_strings(values) else float)


def encode(arr: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Integer codes (index into ``domain``) with ``MISSING`` for missing cells.

    Values match the domain by Python equality, as in a dict (``1``, ``1.0`` and
    ``numpy.int64(1)`` are the same value); one hash lookup for all cells.
    """
    present = ~is_missing(arr)
    codes = np.full(arr.shape, MISSING, dtype=np.int64)
    values = np.asarray(arr[present], dtype=object)
    lookup = pd.Index(domain.tolist(), dtype=object)
    # each distinct value looked up once (the same object hash table as a dict)
    at, distinct = pd.factorize(values)
    found = lookup.get_indexer(pd.Index(distinct, dtype=object))[at] if len(values) else \
        np.empty(0, dtype=np.intp)
    if (found < 0).any():
        key = values[int(np.flatnonzero(found < 0)[0])]
        key = float(key) if isinstance(key, (int, float, np.number)) else key
        raise ValueError(f"The ratings contain a value outside the value domain: {key!r}.")
    codes[present] = found
    return codes


def coded(arr: np.ndarray, domain: Sequence[Any] | None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, domain)`` of ``arr``: :func:`encode` over :func:`resolve_domain`.

    An empty domain codes every cell ``MISSING``.
    """
    values = resolve_domain(arr, domain)
    if not len(values):
        return np.full(arr.shape, MISSING, dtype=np.int64), values
    return encode(arr, values), values


def encode_fast(arr: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Vectorised :func:`encode` for numeric arrays and numeric domains."""
    if arr.dtype == object or domain.dtype == object:
        return encode(arr, domain)
    order = np.argsort(domain)
    sorted_dom = domain[order]
    mask = np.isnan(arr)
    filled = np.where(mask, sorted_dom[0] if sorted_dom.size else 0.0, arr)
    pos = np.clip(np.searchsorted(sorted_dom, filled), 0, max(sorted_dom.size - 1, 0))
    if sorted_dom.size == 0:
        if (~mask).any():
            raise ValueError("The ratings contain values but the value domain is empty.")
        return np.full(arr.shape, MISSING, dtype=np.int64)
    bad = ~mask & (sorted_dom[pos] != filled)
    if bad.any():
        raise ValueError(
            f"The ratings contain a value outside the value domain: {arr[bad][0]!r}."
        )
    return np.where(mask, MISSING, order[pos]).astype(np.int64)


def unit_counts(codes: np.ndarray, n_values: int) -> np.ndarray:
    """Counts ``n[u, c]`` of ratings in category ``c`` for each unit (codes are raters x units)."""
    n_units = codes.shape[1]
    units = np.broadcast_to(np.arange(n_units), codes.shape)
    ok = codes != MISSING
    flat = units[ok] * n_values + codes[ok]
    return np.bincount(flat, minlength=n_units * n_values).reshape(n_units, n_values)


def make_seed(seed: int | None) -> int:
    """Return ``seed`` or, when None, a fresh non-negative integer seed to record."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError("seed must be a non-negative integer or None.")
    return int(seed)


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"Unknown {name} {value!r}; expected one of {list(choices)}.")
    return value


def check_confidence(confidence: float) -> float:
    """Raise ValueError unless 0 < confidence < 1."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must lie strictly between 0 and 1.")
    return float(confidence)


def frame(rows: list[dict[str, Any]] | dict[str, Any], columns: Sequence[str]) -> pd.DataFrame:
    """A result table with exactly ``columns`` in that order."""
    rows = [rows] if isinstance(rows, dict) else rows
    return pd.DataFrame(rows, columns=list(columns))


def complete_ratings(data: Any, unit: str, rater: str, value: str, numeric: str = "",
                     ) -> tuple[np.ndarray, list[str], int]:
    """The complete units of ``data`` as a raters x units matrix (see :func:`listwise`).

    ``numeric``, when given, names the statistic that refuses text labels.
    """
    matrix, raters, _ = to_matrix(data, unit, rater, value)
    if numeric and matrix.dtype == object:
        raise ValueError(f"{numeric} needs numeric ratings.")
    return listwise(matrix, raters)


def listwise(matrix: np.ndarray, raters: list[Any]) -> tuple[np.ndarray, list[str], int]:
    """Raters x units matrix without empty raters and incomplete units, with notes."""
    notes: list[str] = []
    missing = is_missing(matrix)
    empty = missing.all(axis=1) if matrix.size else np.zeros(matrix.shape[0], bool)
    if empty.any():
        names = ", ".join(str(raters[i]) for i in np.flatnonzero(empty))
        n = int(empty.sum())  # stats stays free of sheetflow's other packages
        notes.append(f"dropped {n} rater{'' if n == 1 else 's'} with no rating: {names}")
        matrix, missing = matrix[~empty], missing[~empty]
    rated = ~missing.all(axis=0) if matrix.size else np.zeros(matrix.shape[1], bool)
    complete = ~missing.any(axis=0) if matrix.size else np.zeros(matrix.shape[1], bool)
    n_dropped = int((rated & ~complete).sum())
    if n_dropped:
        notes.append(listwise_note(n_dropped, int(rated.sum())))
    return matrix[:, complete], notes, n_dropped


def listwise_note(n_dropped: int, n_rated: int) -> str:
    """The ``reason`` note :func:`listwise` gives for ``n_dropped`` incomplete units.

    A caller that knows why units lack a rating (a planned subset rated twice) finds
    this exact text to say it instead.
    """
    return f"listwise deletion: {n_dropped} of {n_rated} rated units dropped for a missing rating"


def dropped_pairs_note(n_dropped: int, n_total: int, what: str = "pairs") -> str:
    """The ``reason`` note for pairs left out because a side is missing ('' if none)."""
    if not n_dropped:
        return ""
    return f"{n_dropped} of {n_total} {what} dropped for a missing value"


def join_notes(*notes: str) -> str:
    """Join non-empty ``reason`` parts with '; '."""
    return "; ".join(n for n in notes if n)


def rounded_difference(a: Any, b: Any) -> Any:
    """``a - b``, exactly 0 where it is within rounding of the terms (1e-12 of them).

    Two quantities equal in exact arithmetic, computed in another order, differ in the
    last bit: a variance that is 0 (every unit on the same pair of categories) came out
    as +-1e-16 and its square root as a spurious standard error of about 1e-8; two arms'
    equal mean totals named a winner; a tie between judge cells read -8.88E-16.
    Scalars give a float, arrays an array.
    """
    diff = np.subtract(a, b)
    zero = np.abs(diff) <= 1e-12 * np.maximum(np.abs(a), np.abs(b))
    return float(0.0 if zero else diff) if np.ndim(diff) == 0 else np.where(zero, 0.0, diff)


TIE_ULPS = 64
"""Units in the last place within which observed and chance agreement are one number."""


def tied_difference(observed: Any, chance: Any) -> Any:
    """``observed - chance``, exactly 0 where the two agree to :data:`TIE_ULPS` units in
    the last place of the larger (about 1.4e-14 of it).

    Observed and chance agreement are rationals (counts over n and n^2, times the
    weights); when they are equal, summing their terms in different orders still leaves
    a bit or two between them, and a kappa of exactly 0 came out as -9.5e-16, read
    "poor" (below Landis & Koch's 0) where the exact value is "slight". Two agreements
    that truly differ differ by at least one over n^2 times the weights' denominator,
    far more than this for any study of fewer than about a million units. Scalars give
    a float, arrays an array.
    """
    diff = np.subtract(observed, chance)
    larger = np.maximum(np.abs(observed), np.abs(chance))
    tie = np.abs(diff) <= TIE_ULPS * np.spacing(larger)
    return float(0.0 if tie else diff) if np.ndim(diff) == 0 else np.where(tie, 0.0, diff)
