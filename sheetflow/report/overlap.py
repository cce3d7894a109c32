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

from pathlib import Path
from typing import Any

from ..analysis import Analysis, analyze
from ..outputs import OUT_DIR, OutputSet, remove_partials
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
    remove_stale_tables(out, written)
    return analysis, written


class _EarlyWrites:
    """Collects the analysis's bulky parts as jobs; starts the workers once they
    are worth it (or at once when ``workers`` > 1 is asked for) and feeds them."""

    def __init__(self, out: Path, outputs: OutputSet, workers: int | None) -> None:
        self.out, self.outputs, self.workers = out, outputs, workers
        self.sent: set[Path] = set()
        self._pending: list[tuple[Job, int]] = []
        self._pool: WorkerPool | None = None

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
                self._pool.submit((write, args, self.outputs.stage(path)), job_cost(args))
                self.sent.add(path)
            self._pending.clear()

    def take_pool(self) -> WorkerPool | None:
        """The running pool (which still has to be finished), if any was started."""
        return self._pool

    def __enter__(self) -> _EarlyWrites:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if self._pool is not None:
            self._pool.__exit__(kind, error, trace)
