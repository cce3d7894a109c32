"""Feedback workbooks in ``out/`` that no analysis run vouches for.

``analyze`` writes ``out/feedback-<rater>.xlsx`` for each rater (protocol 000) in its
one output set, with ``out/run.json`` moved in last to record every file of the run.
An analyze stopped while that set moves in can leave feedback workbooks that no run
record lists: beside no record at all, or beside the record of an earlier run. The
next analyze does not write a workbook for a rater who has since dropped out, so such
a file would stay, looking like a result.

:func:`stray_feedback` finds them so that ``status`` and ``verify`` name them and the
next ``analyze`` (or a ``collect`` that retires the analysis) removes them. A file is
taken for sheetflow's only when both hold: its name is the one analyze gives
(``feedback-<rater>.xlsx``, directly in ``out/``) and the workbook says it was written
by sheetflow as a feedback workbook (``docProps/app.xml`` names sheetflow as its
application; ``docProps/core.xml`` its author and a "feedback for" title). A user's own
file of that name is never touched. Nothing here prints or imports the layers above.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..workbook.app_props import APPLICATION

FEEDBACK_NAME = re.compile(r"feedback-[A-Za-z0-9._-]+\.xlsx")
"""The names :func:`sheetflow.report.feedback.feedback_name` gives."""
PART_LIMIT = 64 * 1024  # bytes: the document properties are a few hundred
_APPLICATION = re.compile(rb"<Application>\s*" + re.escape(APPLICATION.encode()) +
                          rb"\s*</Application>")
_AUTHOR = re.compile(rb"<dc:creator>\s*" + re.escape(APPLICATION.encode()) +
                     rb"\s*</dc:creator>")
_TITLE = re.compile(rb"<dc:title>[^<]*: feedback for [^<]*</dc:title>")


def stray_feedback(out: Path, listed: Iterable[str] = ()) -> list[Path]:
    """The feedback workbooks sheetflow wrote in ``out`` that ``listed`` (the names a
    run record holds, relative to ``out``) does not name, sorted by name."""
    known = set(listed)
    if not out.is_dir():
        return []
    return sorted(path for path in out.iterdir()
                  if FEEDBACK_NAME.fullmatch(path.name) and path.name not in known
                  and is_feedback_workbook(path))


def is_feedback_workbook(path: Path) -> bool:
    """Whether ``path`` is a regular file holding a feedback workbook sheetflow wrote
    (by its document properties; see the module docstring)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as book:
            app = _part(book, "docProps/app.xml")
            core = _part(book, "docProps/core.xml")
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError):
        return False  # not a workbook, or damaged: no sign sheetflow wrote it
    return bool(_APPLICATION.search(app) and _AUTHOR.search(core) and _TITLE.search(core))


def _part(book: zipfile.ZipFile, name: str) -> bytes:
    """The bytes of the part ``name`` (b"" when missing or larger than a property
    part can be)."""
    try:
        info = book.getinfo(name)
    except KeyError:
        return b""
    if info.file_size > PART_LIMIT:
        return b""
    return book.read(info)[:PART_LIMIT]
