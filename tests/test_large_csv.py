"""The large-table CSV writer gives the csv module's bytes, whichever path it takes.

Columns are turned into fields (each distinct text quoted once, each distinct float
formatted by orjson where its text is repr's) and joined; one-column tables go through
``csv.writer``. The reference
here is ``csv.writer`` fed cell by cell (missing as empty, formula starts neutralised).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sheetflow.collect.rows import neutralise
from sheetflow.report.large import write_csv

TRICKY = ["plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "", " lead", "=1+1",
          "-3", "@x", "é ü", None]


def _reference(table: pd.DataFrame) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([str(c) for c in table.columns])
    for row in table.itertuples(index=False, name=None):
        writer.writerow([None if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                         else neutralise(v) if isinstance(v, str) else v for v in row])
    return buf.getvalue().encode("utf-8")


def _tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(7)
    n = 300
    text = [TRICKY[i] for i in rng.integers(0, len(TRICKY), n)]
    mixed = [[1, 1.0, True, "1", "x,y", np.nan, None, 2.5, "=A1"][i]
             for i in rng.integers(0, 9, n)]
    return {
        "text_and_ints": pd.DataFrame({"rater": text, "sitting": rng.integers(1, 3, n),
                                       "ok": rng.random(n) > 0.5, "value": mixed,
                                       "a,b": ["", *text[1:]]}),
        "with_floats": pd.DataFrame({"rater": text, "kappa": rng.normal(size=n).round(3),
                                     "p": np.where(rng.random(n) > 0.8, np.nan, 1e-7)}),
        "repeated_floats": pd.DataFrame({
            "rater": text, "share": rng.integers(0, 5, n) / 4,
            "signed_zero": np.where(rng.random(n) > 0.5, -0.0, 0.0),
            "inf": np.where(rng.random(n) > 0.9, np.inf, np.where(rng.random(n) > 0.7,
                                                                   np.nan, 0.1))}),
        # a block of float columns written at once, a few of its rows again by repr
        "float_block": pd.DataFrame({
            "rater": text, "a": rng.normal(size=n),
            "b": np.where(rng.random(n) > 0.99, 3e-5, rng.normal(size=n) * 1e-9),
            "c": np.select([rng.random(n) > 0.99, rng.random(n) > 0.99, rng.random(n) > 0.9],
                           [np.inf, 1e20, np.nan], rng.normal(size=n))}),
        "one_column": pd.DataFrame({"reason": ["" if t is None else t for t in text]}),
        "empty_text": pd.DataFrame({"a": [None] * 3, "b": [1, 2, 3]}),
    }


@pytest.mark.parametrize("name", sorted(_tables()))
def test_same_bytes_as_the_csv_module(tmp_path, name: str) -> None:
    table = _tables()[name]
    written = write_csv(table, tmp_path / f"{name}.csv").read_bytes()
    assert written == _reference(table)


EDGES = [0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, -1e16,
         5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, 1e-5,
         1.2082197530703534e-05, 123456789012345.67, float("inf"), float("-inf"),
         float("nan")]


def _repr_fields(values: np.ndarray) -> list[str]:
    return ["" if v != v else repr(v) for v in values.tolist()]


def test_floats_of_every_magnitude_are_written_as_repr() -> None:
    """The fast path (orjson's digits where its form is repr's) against ``repr``
    itself: random bit patterns cover every exponent, plus the range's edges."""
    from sheetflow.report.large import _float_fields

    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64, endpoint=True)
    values = np.concatenate([bits.view(np.float64), rng.random(100_000),
                             rng.integers(0, 37, 10_000) / 36, np.array(EDGES)])
    assert _float_fields(values) == _repr_fields(values)
    assert _float_fields(np.array([], dtype=np.float64)) == []
    assert _float_fields(np.array([0.1, np.nan], dtype=np.float32)) == \
        [repr(float(np.float32(0.1))), ""]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=40))
def test_any_floats_are_written_as_repr(floats: list[float]) -> None:
    from sheetflow.report.large import _float_fields

    values = np.array(floats, dtype=np.float64)
    assert _float_fields(values) == _repr_fields(values)
