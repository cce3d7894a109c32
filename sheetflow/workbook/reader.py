"""Read a returned workbook into plain data: identity stores and a bounded cell window.

:func:`read_workbooks` is the only entry point the collector uses. For each file it
runs :func:`inspect_file` (bytes and zip checks, no parser) and then, in a
:class:`~sheetflow.workbook.safety.Sandbox` child process, :func:`read_raw`:
openpyxl in read-only mode, formulas kept (``data_only=False``), every sheet read
only inside its window. openpyxl is used rather than python-calamine because it is
the one reader that shows formulas (a typed ``="High"`` must not pass as ``High``),
custom document properties and defined names, which hold the identity.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..values import Formula
from .safety import Inspection, Limits, Outcome, Problem, Sandbox, inspect_file

_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


@dataclass(frozen=True)
class ReadJob:
    """One file to read, and the window (last row, last column) per sheet name.

    Sheets not in ``windows`` are listed but not read; ``default_window`` applies to
    a sheet that is not named (a renamed scoring sheet can then still be found).
    """

    path: str
    windows: dict[str, tuple[int, int]]
    default_window: tuple[int, int] = (0, 0)


@dataclass
class RawBook:
    """What a workbook holds, as plain picklable data.

    Attributes
    ----------
    sheets : list of (name, state)
        Sheet names in order with ``visible``/``hidden``/``veryHidden``.
    properties : dict
        Custom document properties, values as text.
    names : dict
        Workbook-level defined names -> their value (string constants unquoted).
    cells : dict
        Sheet name -> {(row, column): value}; only non-empty cells inside the
        window; a formula is a :class:`~sheetflow.values.Formula`.
    extents : dict
        Sheet name -> (last row, last column) with content, from the inspection.
    """

    sheets: list[tuple[str, str]] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    cells: dict[str, dict[tuple[int, int], Any]] = field(default_factory=dict)
    extents: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadResult:
    """A file's book, or the problem that kept it from being read."""

    path: str
    book: RawBook | None = None
    problem: Problem | None = None


def read_workbooks(jobs: list[ReadJob], limits: Limits | None = None,
                   workers: int | None = None) -> list[ReadResult]:
    """Inspect and read many returned files safely; one result per job, same order.

    Parameters
    ----------
    jobs : list of ReadJob
    limits : Limits, optional
        Size, ratio, memory and time limits.
    workers : int, optional
        Child processes (default: CPU count, at most 4).

    Returns
    -------
    list of ReadResult
        A refused or unreadable file has ``problem`` set (code ``read-aborted`` when
        the child died or hit a limit, ``unreadable-workbook`` when the parser
        raised); it never stops the other files.
    """
    limits = limits or Limits()
    inspections = [inspect_file(job.path, limits) for job in jobs]
    safe = [i for i, ins in enumerate(inspections) if ins.safe]
    outcomes: dict[int, Outcome] = {}
    if safe:
        count = workers or min(4, os.cpu_count() or 1)
        sandbox = Sandbox(read_raw, limits, workers=min(count, len(safe)))
        outcomes = dict(zip(safe, sandbox.run([jobs[i] for i in safe]), strict=True))
    return [_result(job, inspections[i], outcomes.get(i)) for i, job in enumerate(jobs)]


def _result(job: ReadJob, inspection: Inspection, outcome: Outcome | None) -> ReadResult:
    if inspection.problem is not None:
        return ReadResult(job.path, problem=inspection.problem)
    assert outcome is not None
    if outcome.ok:
        book = outcome.value
        book.extents = inspection.extents
        return ReadResult(job.path, book=book)
    code = "read-aborted" if outcome.kind == "aborted" else "unreadable-workbook"
    return ReadResult(job.path, problem=Problem(code, outcome.reason))


def read_raw(job: ReadJob) -> RawBook:
    """Read one already inspected file (runs inside a sandbox child).

    Parameters
    ----------
    job : ReadJob

    Returns
    -------
    RawBook
    """
    import warnings

    import openpyxl

    warnings.filterwarnings("ignore", module="openpyxl")  # print-area notes etc.
    wb = openpyxl.load_workbook(job.path, read_only=True, data_only=False,
                                keep_links=False)
    try:
        book = RawBook(
            sheets=[(ws.title, ws.sheet_state) for ws in wb.worksheets],
            properties=_custom_properties(wb),
            names=_defined_names(wb),
        )
        for ws in wb.worksheets:
            rows, cols = job.windows.get(ws.title, job.default_window)
            if rows and cols:
                book.cells[ws.title] = _window(ws, rows, cols)
        return book
    finally:
        wb.close()


def _window(ws: Any, rows: int, cols: int) -> dict[tuple[int, int], Any]:
    """Non-empty cells of rows 1..rows, columns 1..cols (never an unbounded read)."""
    out: dict[tuple[int, int], Any] = {}
    for r, row in enumerate(ws.iter_rows(min_row=1, max_row=rows, max_col=cols), 1):
        for c, cell in enumerate(row, 1):
            value = getattr(cell, "value", None)
            if value is None:
                continue
            if getattr(cell, "data_type", None) == "f":
                value = Formula(str(value).removeprefix("="))
            elif isinstance(value, str):
                value = decode_escapes(value)
            out[(r, c)] = value
    return out


def decode_escapes(text: str) -> str:
    """Decode OOXML ``_xHHHH_`` escapes, which openpyxl leaves in cell text."""
    if "_x" not in text:
        return text
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _custom_properties(wb: Any) -> dict[str, str]:
    out = {}
    for prop in getattr(wb, "custom_doc_props", None) or []:
        value = prop.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # LibreOffice turns integer properties into floats
        out[str(prop.name)] = "" if value is None else str(value)
    return out


def _defined_names(wb: Any) -> dict[str, str]:
    out = {}
    for name, defined in wb.defined_names.items():
        out[name] = unquote_constant(defined.attr_text or "")
    return out


def unquote_constant(text: str) -> str:
    """A defined name's string constant: ``="EV-01"`` or ``"EV-01"`` -> ``EV-01``."""
    text = text.strip().removeprefix("=")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"')
    return text


def file_sha256(path: str | Path) -> str:
    """The sha256 (hex) of a file's bytes, read in blocks."""
    import hashlib

    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()
