"""Large tables go beside the workbook as CSV; the workbook keeps a digest of each.

A panel of dozens of raters gives tens of thousands of pairwise rows (100 raters:
4,950 pairs per measure) and an unblinded data table of as many ratings. Written cell
by cell they make the analysis workbook slow to write and slow to open, and nobody
reads them row by row in Excel. So a table longer than :data:`LARGE_ROWS` is written
whole to ``out/tables/<name>.csv`` (text that a spreadsheet would run as a formula is
prefixed with ``'``), and its sheet holds a note naming that file and a digest: per
measure, the number of rows and the mean, median, minimum and maximum of the table's
main figure (for the data, the number of ratings per rater and dimension).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from .._groups import groups_in_order
from ..collect.rows import neutralise

LARGE_ROWS = 5000
CHUNK_ROWS = 1 << 14
"""Rows whose fields :func:`write_csv` holds at a time: a field is a Python string, so
the fields of a whole pairwise table (873,000 rows x 15 columns at 500 raters) would
take some ten times the table's own memory."""
TABLES_DIR = "tables"
REPR_FROM, REPR_BELOW = 1e-4, 1e16
"""The magnitudes (zero apart) where ``repr`` writes a float in positional form, as
orjson does: :func:`_float_fields` takes orjson's text there."""
_FIGURES = ("kappa", "agreement", "alpha", "icc", "coefficient", "rho", "value")
_GROUPS = ("measure", "dimension", "comparison")


def is_large(table: pd.DataFrame) -> bool:
    """Whether ``table`` goes to a CSV file rather than into the workbook."""
    return len(table) > LARGE_ROWS


def csv_path(name: str) -> str:
    """Where the full table is written, relative to the workbook's folder."""
    return f"{TABLES_DIR}/{name}.csv"


def note(name: str, table: pd.DataFrame) -> str:
    """The line a digest sheet starts with."""
    return (f"{len(table):,} rows: the full table is {csv_path(name)} beside this workbook; "
            "below, a digest of it.")


def digest(name: str, table: pd.DataFrame) -> pd.DataFrame:
    """Per measure (or dimension): rows and the spread of the table's main figure."""
    if name == "data":
        return (table.groupby(["rater", "dimension"], sort=False).size()
                .rename("n_ratings").reset_index())
    figure = next((c for c in _FIGURES if c in table.columns
                   and pd.api.types.is_numeric_dtype(table[c])), None)
    group = next((c for c in _GROUPS if c in table.columns), None)
    if figure is None:
        return pd.DataFrame({"n_rows": [len(table)]})
    if group is None:
        keys = pd.Series("all", index=table.index, name="rows")
        return _spread(table[figure], keys).reset_index().assign(figure=figure)
    # one group at a time: the groupby's working arrays for a pairwise table of 873,000
    # rows are some 30 MB; each group's figures are computed as over the whole table
    parts = [_spread(rows[figure], rows[group])
             for _, rows in groups_in_order(table[[group, figure]], group)]
    spread = pd.concat(parts) if parts else _spread(table[figure], table[group])
    return spread.reset_index().assign(figure=figure)


def _spread(values: pd.Series, keys: pd.Series) -> pd.DataFrame:
    """Rows and the spread of ``values`` per key (in order of appearance)."""
    return values.groupby(keys, sort=False).agg(
        n_rows="size", n_defined="count", mean="mean", median="median", min="min",
        max="max")


def large_tables(tables: dict[str, pd.DataFrame], data: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables (and the data, as ``data``) that go beside the workbook."""
    return {name: table for name, table in {**tables, "data": data}.items() if is_large(table)}


def write_csv(table: pd.DataFrame, path: str | Path, *, header: bool = True) -> Path:
    """The whole table as UTF-8 CSV, formula starts neutralised in text cells.

    ``header=False`` writes the rows only (a later slice of a table written in parts).

    The same bytes as :mod:`csv`'s writer (``QUOTE_MINIMAL``, ``"\\n"`` line ends; so
    the same text as ``DataFrame.to_csv``: floats as ``repr``, missing values empty),
    but each column is turned into its fields first, :data:`CHUNK_ROWS` rows at a time,
    and the lines are joined from them: each distinct text is quoted once by that
    writer, and floats are formatted a column at a time (:func:`_float_fields`).
    On 300,000 ratings that is a third of the time of ``writerows``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as out:
        if table.shape[1] < 2:  # csv quotes a lone empty field
            writer = csv.writer(out, lineterminator="\n")
            if header:
                writer.writerow([str(c) for c in table.columns])
            writer.writerows(zip(*(_csv_values(table.iloc[:, j])
                                   for j in range(table.shape[1])), strict=True))
            return path
        if header:
            out.write(",".join(_quoted(str(c)) for c in table.columns) + "\n")
        for start in range(0, len(table), CHUNK_ROWS):
            rows = table.iloc[start:start + CHUNK_ROWS]
            columns = [_csv_fields(rows.iloc[:, j]) for j in range(rows.shape[1])]
            out.writelines(map("{}\n".format, map(",".join, zip(*columns, strict=True))))
    return path


def _quoted(text: str) -> str:
    """``text`` as the csv module writes it inside a row (quoted when it must be)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["", text])
    return buf.getvalue()[1:-1]


def _csv_fields(col: pd.Series) -> list[str]:
    """One column as its CSV fields (see :func:`write_csv`)."""
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iub":
        codes, uniques = pd.factorize(col.to_numpy())  # counts: few distinct values
        return np.array(list(map(str, uniques.tolist())), dtype=object)[codes].tolist()
    if isinstance(col.dtype, np.dtype) and col.dtype.kind == "f":
        return _float_fields(col.to_numpy())
    if isinstance(col.dtype, pd.CategoricalDtype) and \
            pd.api.types.infer_dtype(col.cat.categories, skipna=True) in ("string", "empty"):
        # text kept as categories (a pairwise table's): each category quoted once
        safe = np.array([*(_quoted(neutralise(v)) for v in col.cat.categories.tolist()),
                         ""], dtype=object)
        return safe[col.cat.codes.to_numpy()].tolist()  # code -1 (missing): ""
    if pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty"):
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        safe = np.array([*(_quoted(neutralise(v)) for v in uniques.tolist()), ""],
                        dtype=object)
        return safe[codes].tolist()  # code -1 (missing) takes the last entry, ""
    seen: dict[tuple[type, object], str] = {}  # keyed by type: 1, 1.0 and True apart

    def field(value: object) -> str:
        key = (type(value), value)
        if key not in seen:
            seen[key] = _quoted(neutralise(value) if isinstance(value, str) else str(value))
        return seen[key]
    return ["" if _missing(v) else field(v) for v in col.tolist()]


def _float_fields(values: np.ndarray) -> list[str]:
    """Floats as ``repr`` (never quoted), missing as empty.

    ``repr`` costs about 0.4 us a value, and a pairwise table at 500 raters has 7
    million floats. orjson writes the same shortest round-trip digits about ten times
    faster, and the same text as ``repr`` for zero and for magnitudes from 1e-4 up to
    1e16 (``repr`` changes to exponent form outside them, where orjson's form differs:
    ``1e-05`` against ``0.00001``); values outside that range, and infinities, are
    formatted by ``repr``. ``tests/test_large_csv.py`` holds the two equal on floats of
    every magnitude.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    if not len(values):
        return []
    texts = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1] \
        .decode("ascii").split(",")
    size = np.abs(values)
    missing = np.isnan(values)
    with np.errstate(invalid="ignore"):
        in_range = (size == 0) | ((size >= REPR_FROM) & (size < REPR_BELOW))
    outside = np.flatnonzero(~in_range & ~missing)
    for i, text in zip(outside.tolist(), map(repr, values[outside].tolist()), strict=True):
        texts[i] = text
    for i in np.flatnonzero(missing).tolist():
        texts[i] = ""
    return texts


def _csv_values(col: pd.Series) -> list:
    """One column as Python values: missing as None (an empty field), risky text
    neutralised."""
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "fiub":
        if col.dtype.kind != "f":
            return col.tolist()
        values = col.to_numpy(dtype=object)  # Python floats, as tolist() gives
        values[np.isnan(col.to_numpy())] = None
        return values.tolist()
    if pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty"):
        # text: few distinct values (measures, rater ids), so each is checked once
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        safe = np.array([*(neutralise(v) for v in uniques.tolist()), None], dtype=object)
        return safe[codes].tolist()  # code -1 (missing) takes the last entry, None
    return [None if _missing(v) else neutralise(v) if isinstance(v, str) else v
            for v in col.tolist()]  # mixed: 1, 1.0 and True stay apart


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
