"""Stage 3, the returns: read every returned workbook, check every cell, report.

Entry points: :func:`collect` (``sheetflow collect``), :func:`status`
(``sheetflow status``), :func:`remind` (``sheetflow remind``) and
:func:`lock_second_rater` (``sheetflow lock``, protocol 002's data lock, drawn from the
collected ratings). The reader side of
the workbook contract lives here (:mod:`.reader`, :mod:`.safety`); the issue catalogue
is :mod:`.validate`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .data_lock import lock_second_rater
    from .pack_status import status
    from .reminders import remind
    from .run import Collection, collect

_LAZY = {"Collection": "run", "collect": "run", "status": "pack_status", "remind": "reminders",
         "lock_second_rater": "data_lock"}
__all__ = ["Collection", "collect", "lock_second_rater", "remind", "status"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
