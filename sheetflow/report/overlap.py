"""Analyze and write at once: the bulky outputs go to worker processes as they are ready.

For a panel of hundreds of raters the outputs cost as much as the analysis: protocol
000's 500 feedback workbooks and a pairwise table of 873,000 rows are about 11 s of
writing against 8 s of analysis. Both are final long before the analysis ends (the
feedback tables are computed first, the pairwise table second), so
:func:`analyze_and_write` hands them to worker processes (:mod:`.parallel`) the moment
they are ready (the analysis reports each part through its ``on_part`` hook) and the
analysis goes on meanwhile. Small studies never reach :data:`~.outputs.PARALLEL_FROM`
and are written as :func:`~.outputs.write_analysis_outputs` writes them. Everything is
staged in one :class:`~sheetflow.outputs.OutputSet`: an analysis that fails (a broken
seal, say) or a worker that fails leaves the previous outputs as they were.
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis import Analysis, analyze
from ..outputs import OUT_DIR, PARTIAL, OutputSet, remove_partials
from .large import csv_path, is_large, write_csv
from .outputs import feedback_jobs, job_cost, remove_stale_tables, worker_count, write_into
from .parallel import Job, WorkerPool


def analyze_and_write(study_dir: str | Path, *, published: str | None = None,
                      workers: int | None = None) -> tuple[Analysis, list[Path]]:
    """Run :func:`~sheetflow.analysis.analyze` and write its outputs into ``out/``.

    The same files, byte for byte, as ``write_analysis_outputs(analyze(study_dir),
    study_dir / "out")``, in less time for large panels (see the module docstring).

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``sheetflow collect``.
    published : str, optional
        The key sha256 published before scoring; the key must have it.
    workers : int, optional
        As for :func:`~.outputs.write_analysis_outputs`: ``1`` writes everything in
        this process after the analysis.

    Returns
    -------
    (Analysis, list of pathlib.Path)
        The analysis and the paths written.

    Raises
    ------
    SealError, MissingStepError, OutputError
        As :func:`~sheetflow.analysis.analyze`; ``OutputError`` also when a worker
        fails (the message names the file). Nothing is replaced then.
    """
    root = Path(study_dir)
    out = root / OUT_DIR
    remove_partials(out)
    with OutputSet() as outputs, _EarlyWrites(out, outputs, workers) as early:
        analysis = analyze(root, published=published, on_part=early.part_ready)
        written = write_into(analysis, out, outputs, workers=workers,
                             pool=early.take_pool(), sent=frozenset(early.sent))
        early.join_parts()
    remove_stale_tables(out, written)
    return analysis, written


# A table of more CSV cells than this is written in one slice of rows per worker
# (about 1 s of writing each), so that no single worker carries it alone.
SPLIT_FROM = 2_000_000


class _EarlyWrites:
    """Collects the analysis's bulky parts as jobs; starts the workers once they
    are worth it (or at once when ``workers`` > 1 is asked for) and feeds them.
    A large table goes out in slices of rows, the first into the staged file and each
    other to its own part file, appended by :meth:`join_parts` once the workers are
    done."""

    def __init__(self, out: Path, outputs: OutputSet, workers: int | None) -> None:
        self.out, self.outputs, self.workers = out, outputs, workers
        self.sent: set[Path] = set()
        self._pending: list[Job] = []
        self._pool: WorkerPool | None = None
        self._parts: list[tuple[Path, list[Path]]] = []  # staged file, its parts in order

    def part_ready(self, analysis: Analysis, part: str) -> None:
        """``on_part`` hook of the analysis: stage and queue the part's outputs."""
        if self.workers == 1:
            return
        if part == "feedback":
            self._pending += feedback_jobs(analysis, self.out)
        elif is_large(table := analysis.tables[part]):
            self._pending.append((write_csv, (table,), self.out / csv_path(part)))
        cost = sum(job_cost(args) for _, args, _ in self._pending)
        if self._pool is None and self._pending and worker_count(self.workers, cost) > 1:
            self._pool = WorkerPool(worker_count(self.workers, cost))
        if self._pool is not None:  # staged only once sent: unsent parts are write_into's
            for write, args, path in sorted(self._pending, key=lambda j: -job_cost(j[1])):
                self.sent.add(path)
                if write is write_csv and job_cost(args) >= SPLIT_FROM:
                    self._send_in_slices(args[0], self.outputs.stage(path))
                else:
                    self._pool.submit((write, args, self.outputs.stage(path)), job_cost(args))
            self._pending.clear()

    def _send_in_slices(self, table: pd.DataFrame, staged: Path) -> None:
        assert self._pool is not None
        count = self._pool.size
        bounds = np.linspace(0, len(table), count + 1).round().astype(int).tolist()
        stem = staged.name.removesuffix(PARTIAL)  # .NAME.PID; the first slice is the file
        parts = [staged, *(staged.with_name(f"{stem}.p{k}{PARTIAL}") for k in range(1, count))]
        self._parts.append((staged, parts[1:]))
        for k, part in enumerate(parts):
            rows = table.iloc[bounds[k]:bounds[k + 1]]
            self._pool.submit((partial(write_csv, header=k == 0), (rows,), part),
                              rows.size)

    def join_parts(self) -> None:
        """Append each sliced table's later parts, in order, to its staged file."""
        for staged, parts in self._parts:
            with staged.open("ab") as whole:
                for part in parts:
                    with part.open("rb") as piece:
                        shutil.copyfileobj(piece, whole, 1 << 20)
                    part.unlink()
        self._parts.clear()

    def take_pool(self) -> WorkerPool | None:
        """The running pool (which still has to be finished), if any was started."""
        return self._pool

    def __enter__(self) -> _EarlyWrites:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._pool is not None:
            self._pool.__exit__(kind, error, trace)
        for _, parts in self._parts:  # left only when something failed
            for part in parts:
                part.unlink(missing_ok=True)
