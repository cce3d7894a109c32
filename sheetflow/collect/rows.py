"""The ratings table's rows: one file's block, and its CSV lines.

A returned file's rating rows travel from the reader child to the parent as a
:class:`RatingBlock` (pickled once) and, when outputs are written, as ready CSV lines
(all fields quoted, formula starts neutralised, OWASP style).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import pickle
import re
from dataclasses import dataclass, field
from typing import Any

from .values import Formula

RATING_COLUMNS = ("study_id", "rater_id", "sitting", "case_id", "row_id", "label",
                  "dimension", "field", "value", "raw", "confidence", "sheet", "cell",
                  "file", "source_sha256")
ROW_FIELDS = ("case_id", "row_id", "label", "dimension", "field", "value", "raw",
              "confidence", "cell")
"""The columns that vary within one file; the rest are the same for all its rows."""


@dataclass
class RatingBlock:
    """One file's rating rows, sorted.

    Every row shares the columns stored once here; ``rows`` holds the others, in
    the order of :data:`ROW_FIELDS`. ``sheet`` is filled in only on rows with a cell.
    """

    study_id: str
    rater_id: str
    sitting: str
    sheet: str
    file: str
    source_sha256: str
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def packed(self, with_csv: bool) -> PackedBlock:
        """The block as bytes for the parent's spool (pickled once, here)."""
        data = pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        return PackedBlock(len(self.rows), csv_lines(self) if with_csv else b"", data)

    def dicts(self) -> list[dict[str, str]]:
        """The rows as full dicts keyed by :data:`RATING_COLUMNS`."""
        out = []
        for row in self.rows:
            item = dict(zip(ROW_FIELDS, row, strict=True))
            out.append({"study_id": self.study_id, "rater_id": self.rater_id,
                        "sitting": self.sitting, **item,
                        "sheet": self.sheet if item["cell"] else "",
                        "file": self.file, "source_sha256": self.source_sha256})
        return [{c: d[c] for c in RATING_COLUMNS} for d in out]


@dataclass(frozen=True)
class PackedBlock:
    """A :class:`RatingBlock` ready to spool: row count, CSV lines, pickled rows."""

    count: int
    csv: bytes
    data: bytes



def value_text(value: Any) -> str:
    """A parsed value in full (numbers without a trailing '.0')."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def raw_text(raw: Any) -> str:
    """A raw cell in full, as the ratings table shows it."""
    if raw is None:
        return ""
    if isinstance(raw, Formula):
        return "=" + raw.text
    if isinstance(raw, dt.date | dt.time | dt.datetime):
        return raw.isoformat()
    return value_text(raw)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def table_raw(raw: Any) -> str:
    """:func:`raw_text` as the ratings table's ``raw`` column holds it: a control
    character other than tab and line breaks (a pasted NUL or bell) written as the
    xlsx file stores it (``_x0007_``), so the cell stays whole to an auditor and a
    NUL never reaches a program reading the CSV."""
    text = raw_text(raw)
    if type(raw) is not str or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", text)


# --------------------------------------------------------------------------- CSV


FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")


# a field of a column joined with NUL between fields starts with a formula character
_STARTS = re.compile("\x00[" + re.escape("".join(sorted(FORMULA_STARTS))) + "]")


def neutralise(text: str) -> str:
    """Prefix ``'`` to text that a spreadsheet would run as a formula (OWASP)."""
    if text and text[0] in FORMULA_STARTS:
        return "'" + text
    return text


def csv_lines(block: RatingBlock) -> bytes:
    """A block's rows as CSV lines: all fields quoted, formula starts neutralised.

    The same bytes as :func:`csv.writer` with ``QUOTE_ALL`` and ``\\r\\n`` line ends,
    built column by column (several times faster): the constant columns are quoted
    once, each varying column is neutralised in one pass and its quotes doubled only
    when it holds any. Numbers such as -1 in the value and raw columns are prefixed
    too: a spreadsheet then shows them as text, which is safe; the analysis removes
    the prefix.
    """
    if not block.rows:
        return b""
    starts = FORMULA_STARTS
    head = ",".join(_quoted(neutralise(x))
                    for x in (block.study_id, block.rater_id, block.sitting)) + ',"'
    tail = '",' + ",".join(_quoted(neutralise(x))
                           for x in (block.file, block.source_sha256)) + "\r\n"
    columns = [[("'" + x) if x[:1] in starts else x for x in column]
               if _STARTS.search("\x00" + "\x00".join(column)) else list(column)
               for column in zip(*block.rows, strict=True)]
    sheet = neutralise(block.sheet)
    columns.insert(8, [sheet if cell else "" for cell in columns[8]])
    columns = [[x.replace('"', '""') for x in column] if '"' in "".join(column) else column
               for column in columns]
    return (head + (tail + head).join(map('","'.join, zip(*columns, strict=True))) + tail
            ).encode("utf-8")


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def csv_header() -> bytes:
    """The header line of ``ratings.csv``."""
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerow(RATING_COLUMNS)
    return buf.getvalue().encode("utf-8")
