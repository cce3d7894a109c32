"""The demo (``sheetflow demo``) and the simulated raters that fill its packs.

Entry points: :func:`run_demo`; :func:`fill_packs` fills generated packs with
simulated answers (the demo, the tests and the benches use it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .run import run_demo
    from .simulate import fill_packs

_LAZY = {"run_demo": "run", "fill_packs": "simulate"}
__all__ = ["fill_packs", "run_demo"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
