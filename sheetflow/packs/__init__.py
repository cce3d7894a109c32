"""Stage 2, the packs: one locked workbook per rater, the manifest, the seal, the drafts.

Entry points: :func:`generate_packs` (``sheetflow generate``) and :func:`verify_seal`
(``sheetflow verify``); ``sheetflow lock`` (protocol 002), which reads the collected
ratings, sits in :mod:`sheetflow.collect`. The writer side of the workbook contract
lives here (:mod:`.writer` and its helpers); the contract itself is
:mod:`sheetflow.workbook.layout`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .generate import GenerateResult, generate_packs
    from .seal import verify_seal

_LAZY = {"GenerateResult": "generate", "generate_packs": "generate", "verify_seal": "seal"}
__all__ = ["GenerateResult", "generate_packs", "verify_seal"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
