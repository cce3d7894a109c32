"""Stage 1, the study as data: its spec, rubric, templates, checks and hash (no Excel).

Entry points: :func:`init_study` (a folder from a bundled template),
:func:`load_study`, :func:`check_study`, :func:`spec_hash`. The names are loaded on
first use, so ``import sheetflow.spec.limits`` stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .study import Study, check_study, load_study, spec_hash
    from .templates import init_study, list_templates

_LAZY = {
    "Study": "study", "check_study": "study", "load_study": "study", "spec_hash": "study",
    "init_study": "templates", "list_templates": "templates"
}
__all__ = ["Study", "check_study", "init_study", "list_templates", "load_study", "spec_hash"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
