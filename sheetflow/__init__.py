"""sheetflow: blinded human-rating studies through Excel.

Define a study, generate one locked workbook per rater, collect and validate the
returned workbooks, and analyse agreement.
"""

from __future__ import annotations

from .errors import SealError, SheetflowError, SpecError, UsageError
from .rubric import Bin, Dimension, Rubric, Total
from .study import Study, check_study, load_study, spec_hash

__version__ = "0.1.0"

__all__ = [
    "Bin",
    "Dimension",
    "Rubric",
    "SealError",
    "SheetflowError",
    "SpecError",
    "Study",
    "Total",
    "UsageError",
    "__version__",
    "check_study",
    "load_study",
    "spec_hash",
]
