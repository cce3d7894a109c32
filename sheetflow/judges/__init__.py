"""Automated judges (protocol 004): their JSONL records, imported as returns.

Entry point: :func:`import_judges` (``sheetflow import-judges``); the record format
and its checks are in :mod:`.records`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from .importer import import_judges

_LAZY = {"import_judges": "importer"}
__all__ = ["import_judges"]
__getattr__ = lazy_getattr(__name__, _LAZY, globals())
__dir__ = lazy_dir(_LAZY, globals())
