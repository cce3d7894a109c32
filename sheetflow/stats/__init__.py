"""Agreement statistics and tests for sheetflow studies.

Every function takes a tidy table (one row per rating, column names as arguments) or a
raters x units array and returns a :class:`pandas.DataFrame` with snake_case columns.
Undefined results are NaN with the reason in a ``reason`` column; invalid arguments
raise :class:`ValueError`. Nothing here prints or exits.
"""

from sheetflow.stats.alpha import krippendorff_alpha

__all__ = ["krippendorff_alpha"]
