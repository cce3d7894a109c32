"""A table's rows by the values of one column, one group at a time (no sorted copy).

Kept apart from :mod:`sheetflow.analysis` so that an output worker process (see
:mod:`sheetflow.report.parallel`) can use it without importing the analysis and scipy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["groups_in_order"]


def groups_in_order(table: pd.DataFrame, by: str) -> Iterator[tuple[Any, pd.DataFrame]]:
    """What iterating ``table.groupby(by, sort=False)`` gives (each key in order of first
    appearance with its rows, their index kept; missing keys left out), one group
    taken at a time: the groupby sorts a copy of the whole table first, 100 MB for a
    pairwise table at 500 raters."""
    column = table[by]
    if isinstance(column.dtype, pd.CategoricalDtype):  # its own codes, one byte a row
        codes = column.cat.codes.to_numpy()
        order = pd.unique(codes)  # in order of appearance
        order = order[order >= 0]
        keys = column.cat.categories.take(order).tolist()
    else:
        codes, uniques = pd.factorize(column, sort=False)
        order, keys = np.arange(len(uniques)), list(uniques)
    for code, key in zip(order.tolist(), keys, strict=True):
        yield key, table.iloc[np.flatnonzero(codes == code)]
