"""The ratings table collect builds, kept in a spool file one returned file at a time,
as the reader child formatted it, so memory does not grow with the number of rows."""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from ..staging import naming
from .rows import (
    RATING_COLUMNS,
    ROW_FIELDS,
    PackedBlock,
    RatingBlock,
    csv_header,
    csv_lines,
)


class Spooled(NamedTuple):
    """Where one file's rows are in the spool."""

    csv_at: int
    csv_size: int
    rows_at: int
    rows_size: int
    count: int


class Ratings:
    """The tidy ratings table (columns :data:`RATING_COLUMNS`), kept in a spool file.

    Rows are stored one returned file at a time, already sorted and already formatted
    as CSV lines by the reader child, so neither collecting nor writing
    ``ratings.csv`` holds the table in memory. Iterating yields one dict per row, in
    table order; :meth:`to_frame` builds a DataFrame column by column.
    """

    def __init__(self) -> None:
        self._spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (lives with self)
        self._kept: list[Spooled] = []
        self._blank_left: list[Spooled] = []

    def _store(self, block: PackedBlock) -> Spooled:
        """Write one file's rows to the spool as they came; a handle for :meth:`_keep`."""
        self._spool.seek(0, os.SEEK_END)
        at = self._spool.tell()
        self._spool.write(block.csv)
        self._spool.write(block.data)
        return Spooled(at, len(block.csv), at + len(block.csv), len(block.data), block.count)

    def _keep(self, handles: list[Spooled], blank_left: list[Spooled] | None = None) -> None:
        """The files whose rows make the table, in table order; and the files left out
        only for blank required answers (their rows, for ``analyze --allow-partial``)."""
        self._kept = list(handles)
        self._blank_left = list(blank_left or [])

    @property
    def incomplete_rows(self) -> int:
        """Rows of the files left out only for blank required answers."""
        return sum(h.count for h in self._blank_left)

    def __len__(self) -> int:
        return sum(h.count for h in self._kept)

    def __bool__(self) -> bool:
        return len(self) > 0

    def blocks(self) -> Iterator[RatingBlock]:
        """The rows of each used file in table order, one file at a time."""
        for handle in self._kept:
            self._spool.seek(handle.rows_at)
            yield pickle.loads(self._spool.read(handle.rows_size))

    def __iter__(self) -> Iterator[dict[str, str]]:
        for block in self.blocks():
            yield from block.dicts()

    def to_frame(self) -> Any:
        """The table as a pandas DataFrame of strings, built column by column."""
        import pandas as pd

        columns: dict[str, list[str]] = {c: [] for c in RATING_COLUMNS}
        for block in self.blocks():
            n = len(block.rows)
            for name in ("study_id", "rater_id", "sitting", "file", "source_sha256"):
                columns[name] += [getattr(block, name)] * n
            for i, name in enumerate(ROW_FIELDS):
                columns[name] += [row[i] for row in block.rows]
            columns["sheet"] += [block.sheet if row[-1] else "" for row in block.rows]
        return pd.DataFrame(columns, columns=list(RATING_COLUMNS))

    def write_csv(self, path: Path, *, incomplete: bool = False) -> None:
        """Write ``ratings.csv`` (or, with ``incomplete``, the rows of the files left
        out only for blank required answers): all fields quoted, formula starts
        neutralised."""
        with naming(path), path.open("wb") as out:
            out.write(csv_header())
            for handle in self._blank_left if incomplete else self._kept:
                if handle.count and not handle.csv_size:  # collected with write=False
                    self._spool.seek(handle.rows_at)
                    out.write(csv_lines(pickle.loads(self._spool.read(handle.rows_size))))
                    continue
                self._spool.seek(handle.csv_at)
                _copy(self._spool, out, handle.csv_size)


def _copy(src: IO[bytes], dst: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = src.read(min(size, 2**20))
        if not chunk:
            break
        dst.write(chunk)
        size -= len(chunk)
