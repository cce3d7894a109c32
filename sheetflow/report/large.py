"""Large tables go beside the workbook as CSV; the workbook keeps a digest of each.

A panel of dozens of raters gives tens of thousands of pairwise rows (100 raters:
4,950 pairs per measure) and an unblinded data table of as many ratings. Written cell
by cell they make the analysis workbook slow to write and slow to open, and nobody
reads them row by row in Excel. So a table longer than :data:`LARGE_ROWS` is written
whole to ``out/tables/<name>.csv`` (text that a spreadsheet would run as a formula is
prefixed with ``'``), and its sheet holds a note naming that file and a digest: per
measure, the number of rows and the mean, median, minimum and maximum of the table's
main figure, and for a table of pairs the fewest and the most units a pair rests on
(for the data, the number of ratings per rater and dimension).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from .._groups import groups_in_order
from ..collect.rows import neutralise
from ..staging import naming

LARGE_ROWS = 5000
CHUNK_ROWS = 1 << 14
"""Rows whose fields :func:`write_csv` holds at a time: a field is a Python string, so
the fields of a whole pairwise table (Cohen's kappa at 500 raters: 873,250 rows x 16
columns) would take some ten times the table's own memory."""
TABLES_DIR = "tables"
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
    # a row of pairs rests on each pair's own units: the digest says their range
    units = ["n_units"] if "n_units" in table.columns else []
    if group is None:
        keys = pd.Series("all", index=table.index, name="rows")
        return _spread(table[[figure, *units]], keys).reset_index().assign(figure=figure)
    # one group at a time: the groupby's working arrays for a pairwise table of 873,000
    # rows are some 30 MB; each group's figures are computed as over the whole table
    parts = [_spread(rows[[figure, *units]], rows[group])
             for _, rows in groups_in_order(table[[group, figure, *units]], group)]
    spread = pd.concat(parts) if parts else _spread(table[[figure, *units]], table[group])
    return spread.reset_index().assign(figure=figure)


def _spread(columns: pd.DataFrame, keys: pd.Series) -> pd.DataFrame:
    """Rows and the spread of the first of ``columns`` per key (in order of appearance),
    and the fewest and most ``n_units`` where ``columns`` holds them."""
    grouped = columns.groupby(keys, sort=False)
    out = grouped[columns.columns[0]].agg(
        n_rows="size", n_defined="count", mean="mean", median="median", min="min",
        max="max")
    if "n_units" in columns.columns[1:]:
        out = out.join(grouped["n_units"].agg(units_fewest="min", units_most="max"))
    return out


def large_tables(tables: dict[str, pd.DataFrame], data: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables (and the data, as ``data``) that go beside the workbook."""
    return {name: table for name, table in {**tables, "data": data}.items() if is_large(table)}


def write_csv(table: pd.DataFrame, path: str | Path, *, header: bool = True) -> Path:
    """The whole table as UTF-8 CSV, formula starts neutralised in text cells.

    ``header=False`` writes the rows only (a later slice of a table written in parts).

    The same bytes as :mod:`csv`'s writer (``QUOTE_MINIMAL``, ``"\\n"`` line ends; so
    the same text as ``DataFrame.to_csv``: floats as ``repr``, missing values empty),
    but built :data:`CHUNK_ROWS` rows at a time from a few texts per row, each of
    several neighbouring columns (:func:`_parts`): each distinct text is quoted
    once by that writer, and floats are formatted by orjson (:func:`_float_rows`).
    On a pairwise table of 873,000 rows that is about a fifth of the time of
    ``writerows``.
    """
    path = Path(path)
    if table.shape[1] < 2:  # csv quotes a lone empty field
        path.parent.mkdir(parents=True, exist_ok=True)
        with naming(path), path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out, lineterminator="\n")
            if header:
                writer.writerow([str(c) for c in table.columns])
            writer.writerows(zip(*(_csv_values(table.iloc[:, j])
                                   for j in range(table.shape[1])), strict=True))
        return path
    names = [str(c) for c in table.columns] if header else None
    write_csv_files(table, [(path, list(range(table.shape[1])), names)])
    return path


CsvFile = tuple[Path, list[int], list[str] | None]
"""A file :func:`write_csv_files` writes: its path, the table's columns it holds (by
position, in its order, at least two) and its header (None: none)."""


def write_csv_files(table: pd.DataFrame, files: list[CsvFile]) -> None:
    """Several CSV files of ``table``'s columns at once, each as :func:`write_csv`
    writes its own columns, under its own header: each column's fields are made once
    per :data:`CHUNK_ROWS` rows for every file that holds it (the analysis data and
    ``ratings-unblinded.csv`` hold the same columns, in other orders)."""
    categories = _category_fields(table)
    used = sorted({j for _, columns, _ in files for j in columns})
    with contextlib.ExitStack() as stack:
        outs = []
        for path, columns, header in files:
            assert len(columns) >= 2, "a lone column is write_csv's (csv quotes its blanks)"
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            outs.append(stack.enter_context(contextlib.closing(_NamedFile(path))))
            if header is not None:
                outs[-1].write(",".join(_quoted(name) for name in header) + "\n")
        for start in range(0, len(table), CHUNK_ROWS):
            rows = table.iloc[start:start + CHUNK_ROWS]
            pieces = {j: _piece(rows.iloc[:, j], categories.get(j)) for j in used}
            for out, (_, columns, _) in zip(outs, files, strict=True):
                parts = _parts([pieces[j] for j in columns], len(rows))
                # one text per chunk: a write per line costs a fifth of the joining
                out.write("\n".join(map(",".join, zip(*parts, strict=True))))
                out.write("\n")


class _NamedFile:
    """A text file opened for writing whose failures (a full disk) name it: several
    are written at once, so the error must say which."""

    def __init__(self, path: str | Path):
        self.path = path
        with naming(path):
            # closed by close(), which names the file when the last flush fails
            self.file = Path(path).open("w", encoding="utf-8", newline="")  # noqa: SIM115

    def write(self, text: str) -> None:
        with naming(self.path):
            self.file.write(text)

    def close(self) -> None:
        with naming(self.path):
            self.file.close()


def _quoted(text: str) -> str:
    """``text`` as the csv module writes it inside a row (quoted when it must be)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["", text])
    return buf.getvalue()[1:-1]


Coded = tuple[np.ndarray, np.ndarray]
"""A column as codes (``intp``, from 0) into its distinct fields (an object array)."""


def _parts(pieces: list[tuple[str, Any]], rows: int) -> list[list[str]]:
    """Per row, the text of each run of neighbouring columns (the fields joined by
    commas), in column order, from the columns' :func:`_piece`: joining a few texts
    per row instead of a field per column is most of what writing costs. Text,
    integer and boolean columns are joined through their codes
    (:func:`_joined_codes`), floats by orjson (:func:`_float_parts`)."""
    parts: list[list[str]] = []
    for kind, group in itertools.groupby(pieces, key=lambda piece: piece[0]):
        columns = [piece[1] for piece in group]
        if kind == "coded":
            parts += [fields[codes].tolist() for codes, fields in
                      _joined_codes(columns, rows)]
        elif kind == "float":
            parts += _float_parts(columns)
        else:
            parts += columns
    return parts


def _category_fields(table: pd.DataFrame) -> dict[int, np.ndarray]:
    """Column position -> the fields of a column of text kept as categories (a
    pairwise table's): each category quoted and neutralised once for the whole table,
    and an empty field last, for a missing value (code -1)."""
    out = {}
    for j in range(table.shape[1]):
        col = table.iloc[:, j]
        if isinstance(col.dtype, pd.CategoricalDtype) and \
                pd.api.types.infer_dtype(col.cat.categories, skipna=True) in ("string", "empty"):
            out[j] = _blank_last(col.cat.categories.tolist())
    return out


def _piece(col: pd.Series, categories: np.ndarray | None) -> tuple[str, Any]:
    """One column as ``("coded", Coded)``, ``("float", values)`` or ``("text", fields)``;
    ``categories``: its fields when it is text kept as categories."""
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iub":
        codes, uniques = pd.factorize(col.to_numpy())  # counts: few distinct values
        return "coded", (codes, np.array(list(map(str, uniques.tolist())), dtype=object))
    if isinstance(col.dtype, np.dtype) and col.dtype.kind == "f":
        return "float", col.to_numpy()
    if categories is not None:
        return "coded", (_from_zero(col.cat.codes.to_numpy(), categories), categories)
    if pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty"):
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        fields = _blank_last(uniques.tolist())
        return "coded", (_from_zero(codes, fields), fields)
    return "text", _mixed_fields(col)


def _blank_last(texts: list[str]) -> np.ndarray:
    """Texts quoted and neutralised, and an empty field last (for a missing one)."""
    return np.array([*(_quoted(neutralise(v)) for v in texts), ""], dtype=object)


def _from_zero(codes: np.ndarray, fields: np.ndarray) -> np.ndarray:
    """Codes with -1 (missing) as the last of ``fields``, the empty one."""
    return np.where(codes < 0, len(fields) - 1, codes).astype(np.intp, copy=False)


def _mixed_fields(col: pd.Series) -> list[str]:
    """A column of mixed values as fields, each distinct value formatted once."""
    seen: dict[tuple[type, object], str] = {}  # keyed by type: 1, 1.0 and True apart

    def field(value: object) -> str:
        key = (type(value), value)
        if key not in seen:
            seen[key] = _quoted(neutralise(value) if isinstance(value, str) else str(value))
        return seen[key]
    return ["" if _missing(v) else field(v) for v in col.tolist()]


JOIN_PAIRS = 1 << 16
"""Pairs of fields two neighbouring coded columns may form for :func:`_joined_codes`
to join them once per pair (a table of that many codes is made)."""


def _joined_codes(columns: list[Coded], rows: int) -> list[Coded]:
    """Neighbouring coded columns, each run whose pairs of fields are few joined
    into one (measure, rater and the like: a few hundred pairs in thousands of
    rows): its texts are made once per pair present, not once per row."""
    out = [columns[0]]
    for column in columns[1:]:
        joined = _joined_pair(out[-1], column, rows)
        if joined is None:
            out.append(column)
        else:
            out[-1] = joined
    return out


def _joined_pair(left: Coded, right: Coded, rows: int) -> Coded | None:
    """``left`` and ``right`` as one coded column (their fields joined by a comma),
    or None when they form too many pairs for that to save anything."""
    (codes_a, fields_a), (codes_b, fields_b) = left, right
    pairs = len(fields_a) * len(fields_b)
    if pairs > JOIN_PAIRS:
        return None
    key = codes_a * len(fields_b) + codes_b
    present = np.zeros(pairs, dtype=bool)
    present[key] = True
    keys = np.flatnonzero(present)
    if len(keys) > rows // 2:  # nearly a pair per row: as dear as joining per row
        return None
    index = np.zeros(pairs, dtype=np.intp)
    index[keys] = np.arange(len(keys))
    firsts, seconds = np.divmod(keys, len(fields_b))
    fields = [f"{a},{b}" for a, b in zip(fields_a[firsts].tolist(),
                                         fields_b[seconds].tolist(), strict=True)]
    return index[key], np.array(fields, dtype=object)


REPR_FROM, REPR_BELOW = 1e-4, 1e16
"""The magnitudes (zero apart) where ``repr`` writes a float in positional form, as
orjson does: :func:`_float_rows` takes orjson's text there."""
EXPONENT_BELOW = 1e-5
"""The magnitude below which orjson writes a float in exponent form, with ``repr``'s
digits and one exponent digit where ``repr`` writes two (``1e-7``: ``1e-07``)."""
AWKWARD_SHARE = 32
"""A float column of which more than one value in this many is written by ``repr``
(see :func:`_awkward`) is formatted on its own, not with its neighbours."""


def _float_parts(columns: list[np.ndarray]) -> list[list[str]]:
    """Neighbouring float columns as per-row texts: as few as possible, each of a
    run of columns formatted at once (:func:`_float_rows`); a column with many values
    ``repr`` must write alone (those rows are written again by ``repr``)."""
    parts: list[list[str]] = []
    run: list[np.ndarray] = []
    for values in columns:
        values = np.ascontiguousarray(values, dtype=np.float64)
        if np.count_nonzero(_awkward(values)) > len(values) // AWKWARD_SHARE:
            parts += _run_rows(run)
            parts.append(_float_fields(values))
            run = []
        else:
            run.append(values)
    return parts + _run_rows(run)


def _run_rows(run: list[np.ndarray]) -> list[list[str]]:
    if len(run) > 1:
        return [_float_rows(np.column_stack(run))]
    return [_float_fields(values) for values in run]


def _float_fields(values: np.ndarray) -> list[str]:
    """Floats as ``repr`` (never quoted), missing as empty (see :func:`_float_rows`).
    ``tests/test_large_csv.py`` holds the two equal on floats of every magnitude."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    return _float_rows(values.reshape(-1, 1)) if len(values) else []


def _float_rows(matrix: np.ndarray) -> list[str]:
    """Each row of ``matrix`` as its floats' ``repr`` joined by commas, missing values
    empty.

    ``repr`` costs about 0.4 us a value, and a pairwise table at 500 raters has 7
    million floats. orjson writes the same shortest round-trip digits about ten times
    faster, a whole block of rows and columns at once, and the same text as ``repr``
    for zero and for magnitudes from 1e-4 up to 1e16; below :data:`EXPONENT_BELOW` its
    exponent takes ``repr``'s leading zero (:func:`_two_digit_exponents`). The rows
    holding any other value (1e-5 to 1e-4, where orjson writes ``0.00001`` for
    ``1e-05``; 1e16 and beyond; infinities) are written by ``repr`` itself.
    """
    single = matrix.shape[1] == 1
    raw = orjson.dumps(matrix[:, 0] if single else matrix, option=orjson.OPT_SERIALIZE_NUMPY)
    if b"e" in raw:
        raw = _two_digit_exponents(raw)
    if np.isnan(matrix).any():  # orjson's null (infinities are written again below)
        raw = raw.replace(b"null", b"")
    rows = raw[1:-1].decode("ascii").split(",") if single else \
        raw[2:-2].decode("ascii").split("],[")
    awkward = np.flatnonzero(_awkward(matrix).any(axis=1))
    if single:  # a value's repr (never missing: NaN is not awkward)
        for r, text in zip(awkward.tolist(), map(repr, matrix[awkward, 0].tolist()),
                           strict=True):
            rows[r] = text
    else:
        for r in awkward.tolist():
            rows[r] = ",".join("" if v != v else repr(v) for v in matrix[r].tolist())
    return rows


def _awkward(values: np.ndarray) -> np.ndarray:
    """Where orjson's text is not ``repr``'s even with two exponent digits."""
    size = np.abs(values)
    with np.errstate(invalid="ignore"):  # NaN: not awkward, written empty
        return (size >= REPR_BELOW) | ((size >= EXPONENT_BELOW) & (size < REPR_FROM))


def _two_digit_exponents(raw: bytes) -> bytes:
    """orjson's JSON of floats with a ``0`` put in two bytes after each ``e`` that a
    separator (``,`` or ``]``) follows three bytes on, at once over the bytes (an
    ``e`` is always an exponent there).

    That gives a negative one-digit exponent ``repr``'s leading zero (``1e-7``:
    ``1e-07``) and leaves longer negative ones as they are (``1e-10``). Positive
    exponents, which orjson writes only from 1e16 on, are not mended here: orjson
    3.13's ``1e+16`` (already ``repr``'s) and any three-digit one (orjson 3.9.15's
    ``1e100``) are left as they are, and orjson 3.9.15's ``1e16`` is taken for a sign
    and one digit and becomes ``1e106``. :func:`_float_rows` writes each row holding a
    value from 1e16 on again by ``repr`` (:func:`_awkward`), so none of these texts
    reaches the file.
    """
    buf = np.frombuffer(raw, dtype=np.uint8)
    at = np.flatnonzero(buf == ord("e"))
    after = buf[at + 3]  # within the bytes: a closing bracket ends them
    one = at[(after == ord(",")) | (after == ord("]"))]
    return np.insert(buf, one + 2, ord("0")).tobytes() if len(one) else raw


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
