"""Exceptions for failures that stop a run.

Problems found *in data* (a bad cell in a returned workbook, a disagreeing rater) are
not exceptions: they are reported as issues. These classes are for the cases where
sheetflow cannot go on: a broken study spec, a missing file, a broken seal. The
command a message tells the user to run next is spelled by :mod:`sheetflow.hints`.
"""

from __future__ import annotations

import contextlib
import re
import zipfile
from typing import Any


class SheetflowError(Exception):
    """Base class of every error sheetflow raises on purpose.

    The message is one line meant for the user: it names the file (and the key, row
    or cell where there is one) and says what is allowed or what to do.
    """


class SpecError(SheetflowError):
    """The study spec, items file or raters file has a problem.

    Parameters
    ----------
    message : str
        What is wrong and what is allowed.
    file : str, optional
        The file the problem is in.
    where : str, optional
        The key, row or column within that file.
    """

    def __init__(self, message: str, file: str | None = None, where: str | None = None):
        self.file = file
        self.where = where
        self.detail = message
        prefix = ""
        if file and where:
            prefix = f"{file}: {where}: "
        elif file:
            prefix = f"{file}: "
        super().__init__(prefix + message)


class SealError(SheetflowError):
    """The sealed key or plan lock does not match its published hash."""


class UsageError(SheetflowError):
    """The caller asked for something that cannot be done as asked."""


class MissingStepError(UsageError):
    """An earlier step of the study has not run yet (no study, no packs, no ratings).

    Parameters
    ----------
    message : str
        What is missing, naming the file or folder.
    command : str
        The command that makes it, e.g. ``"sheetflow generate my-study"``.
    """

    def __init__(self, message: str, command: str):
        self.command = command
        super().__init__(f"{message}; run '{command}' first")


class IncompleteError(SheetflowError):
    """The panel is not complete, so nothing was unsealed (exit 1 in the CLI)."""


class WriteError(SheetflowError):
    """An output could not be written (a full disk, a folder without permission)."""


def close_workbook(workbook: Any, path: Any) -> None:
    """Close (and so write) an xlsxwriter workbook; its write failures as one line.

    xlsxwriter wraps the operating system's error (no space left, permission denied)
    in exceptions of its own, which would otherwise reach the user as a traceback.

    Raises
    ------
    WriteError
        The workbook could not be written; the message names the file and the cause.
    """
    try:
        workbook.close()
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "xlsxwriter":
            raise
        cause = exc.__cause__ or exc.__context__ or exc
        _close_zip_files(cause)
        raise WriteError(f"{known_name(str(path))}: could not be written ({cause}); free some "
                         "space or fix the folder's permissions, then run again") from None


def _close_zip_files(error: BaseException) -> None:
    """Close the zip files the failed write left open in the frames of ``error``.

    xlsxwriter writes the workbook through a :class:`zipfile.ZipFile` that it does not
    close when a write fails; left to the garbage collector, its ``__del__`` tries to
    flush to the full disk again and prints "Exception ignored ... Traceback" after the
    error line. Closed here, its file is released and nothing more is printed.
    """
    trace = error.__traceback__
    while trace is not None:
        for value in list(trace.tb_frame.f_locals.values()):
            if isinstance(value, zipfile.ZipFile):
                with contextlib.suppress(OSError, ValueError):  # the same full disk
                    value.close()
        trace = trace.tb_next


_STAGED = re.compile(r"(^|/)\.([^/]+)\.\d+(?:-[0-9a-f]+)?(?:\.p\d+)?\.partial$")


def known_name(path: str) -> str:
    """A staged output (``out/.analysis.xlsx.123-9f2c4e1a.partial``, or a slice of one a
    worker writes, ``...9f2c4e1a.p1.partial``) by the name it will have."""
    return _STAGED.sub(r"\1\2", path)


class MailError(SheetflowError):
    """A mail server could not be reached, refused the login or broke off (exit 3 in
    the CLI); the message names the server and what to check."""
