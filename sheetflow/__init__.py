"""sheetflow: blinded human-rating studies through Excel.

Define a study, generate one locked workbook per rater, collect and validate the
returned workbooks, and analyse agreement.

The names below are loaded on first use (PEP 562), so ``import sheetflow`` and the
``sheetflow --help`` command do not pay for the spec loader, pandas or openpyxl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_getattr

__version__ = "0.1.0"

_LAZY = {
    "SealError": "errors", "SheetflowError": "errors", "SpecError": "errors",
    "UsageError": "errors", "MissingStepError": "errors",
    "Bin": "spec.rubric", "Dimension": "spec.rubric", "Rubric": "spec.rubric",
    "Total": "spec.rubric", "Study": "spec.study", "check_study": "spec.study",
    "load_study": "spec.study", "spec_hash": "spec.study",
}

__all__ = [
    "Bin", "Dimension", "MissingStepError", "Rubric", "SealError", "SheetflowError",
    "SpecError", "Study", "Total", "UsageError", "__version__", "check_study",
    "load_study", "spec_hash",
]

if TYPE_CHECKING:
    from .errors import MissingStepError, SealError, SheetflowError, SpecError, UsageError
    from .spec.rubric import Bin, Dimension, Rubric, Total
    from .spec.study import Study, check_study, load_study, spec_hash


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
