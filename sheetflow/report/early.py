"""Writing while the analysis runs: :class:`EarlyWrites` hands the bulky parts to workers.

Used by :func:`.overlap.analyze_and_write` (see there for why) and finished by
:func:`.outputs.write_into`.
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis import Analysis
from ..staging import PARTIAL, OutputSet
from .jobs import feedback_jobs, job_cost, table_job, worker_count
from .large import is_large, write_csv
from .parallel import Job, WorkerPool

# A table of at least this many CSV cells (about 1 s of writing at the 0.085 us a
# cell a pairwise table costs: see .jobs) is written in one slice of rows per worker,
# so that no single worker carries it alone. Slices are joined in order into the
# same bytes.
SPLIT_FROM = 12_000_000


class EarlyWrites:
    """The analysis's bulky parts, handed to worker processes as they are ready.

    Collects each part's jobs; starts the workers once they are worth it (or at
    once when ``workers`` > 1 is asked for: see :func:`~.jobs.worker_count`) and
    from then on sends every job as it comes (:meth:`send`). A large table goes out
    in slices of rows, the first into the staged file and each other to its own part
    file, appended in order by :meth:`finish`. Leaving the ``with`` block by an
    exception stops the workers and removes the part files (the staged files are the
    :class:`OutputSet`'s).
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
        if self._pool is None and self._pending:
            children = worker_count(self.workers, sum(w for _, w in self._pending))
            if children:
                self._pool = WorkerPool(children)
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
