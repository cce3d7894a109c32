"""Stage 3, the returns: read every returned workbook, check every cell, report.

Entry points: :func:`collect` (``sheetflow collect``), :func:`status`
(``sheetflow status``) and :func:`remind` (``sheetflow remind``). The reader side of
the workbook contract lives here (:mod:`.reader`, :mod:`.safety`); the issue catalogue
is :mod:`.validate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .pack_status import status
    from .reminders import remind
    from .run import Collection, collect

_LAZY = {"Collection": "run", "collect": "run", "status": "pack_status", "remind": "reminders"}
__all__ = ["Collection", "collect", "remind", "status"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
