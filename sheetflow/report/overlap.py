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
from .large import is_large, write_csv
from .outputs import (
    feedback_jobs,
    job_cost,
    remove_stale_tables,
    table_job,
    worker_count,
    write_into,
)
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
    with OutputSet() as outputs, EarlyWrites(out, outputs, workers) as early:
        analysis = analyze(root, published=published, on_part=early.part_ready)
        written = write_into(analysis, out, outputs, workers=workers, early=early)
    remove_stale_tables(out, written)
    return analysis, written


# A table of more CSV cells than this is written in one slice of rows per worker
# (about 1 s of writing each), so that no single worker carries it alone.
SPLIT_FROM = 2_000_000


class EarlyWrites:
    """The analysis's bulky parts, handed to worker processes as they are ready.

    Collects each part's jobs; starts the workers once they are worth it (or at
    once when ``workers`` > 1 is asked for) and from then on sends every job as it
    comes (:meth:`send`). A large table goes out in slices of rows, the first into
    the staged file and each other to its own part file, appended in order by
    :meth:`finish`. Leaving the ``with`` block by an exception stops the workers and
    removes the part files (the staged files are the :class:`OutputSet`'s).
    """

    def __init__(self, out: Path, outputs: OutputSet, workers: int | None) -> None:
        self.out, self.outputs, self.workers = out, outputs, workers
        self.sent: set[Path] = set()  # final paths of the jobs sent
        self._pending: list[tuple[Job, int]] = []  # (job, cost) until the workers start
        self._pool: WorkerPool | None = None
        self._parts: list[tuple[Path, list[Path]]] = []  # staged file, its later slices

    @property
    def started(self) -> bool:
        """Whether the workers run (then every job left is :meth:`send`'s)."""
        return self._pool is not None

    def part_ready(self, analysis: Analysis, part: str) -> None:
        """``on_part`` hook of the analysis: queue the part's outputs, send when worth it."""
        if self.workers == 1:
            return
        if part == "feedback":
            jobs = feedback_jobs(analysis, self.out)
        else:
            table = analysis.tables[part]
            jobs = [table_job(part, table, self.out)] if is_large(table) else []
        self._pending += [(job, job_cost(job[1])) for job in jobs]
        cost = sum(weight for _, weight in self._pending)
        if self._pool is None and self._pending and worker_count(self.workers, cost) > 1:
            self._pool = WorkerPool(worker_count(self.workers, cost))
        if self._pool is not None:
            for job, weight in sorted(self._pending, key=lambda p: -p[1]):
                self.send(job, weight)
            self._pending.clear()

    def send(self, job: Job, weight: int | None = None) -> None:
        """Stage ``job``'s output and hand it to the workers (a large table in slices)."""
        assert self._pool is not None, "send() only once the workers are started"
        write, args, path = job
        weight = job_cost(args) if weight is None else weight
        self.sent.add(path)
        staged = self.outputs.stage(path)
        if write is write_csv and weight >= SPLIT_FROM:
            self._send_in_slices(args[0], staged)
        else:
            self._pool.submit((write, args, staged), weight)

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

    def finish(self) -> None:
        """Wait for the workers, then append each sliced table's later parts in order."""
        assert self._pool is not None
        self._pool.finish()
        for staged, parts in self._parts:
            with staged.open("ab") as whole:
                for part in parts:
                    with part.open("rb") as piece:
                        shutil.copyfileobj(piece, whole, 1 << 20)
                    part.unlink()
        self._parts.clear()

    def __enter__(self) -> EarlyWrites:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._pool is not None:
            self._pool.__exit__(kind, error, trace)
        for _, parts in self._parts:  # left only when something failed
            for part in parts:
                part.unlink(missing_ok=True)
