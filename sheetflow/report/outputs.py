"""Every output of an analysis, written in one place, whole or not at all."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analysis import Analysis, results_tables, verdicts
from ..outputs import OutputSet, remove_partials
from .cells import created
from .feedback import feedback_name, write_feedback_tables
from .large import TABLES_DIR, csv_path, large_tables, write_csv
from .parallel import Job, run_jobs
from .workbook import write_analysis_workbook

if TYPE_CHECKING:
    from .overlap import EarlyWrites

VERDICT_ANALYSES = frozenset({"yield_fisher", "permutation", "trend", "intra_rater_kappa"})

def write_analysis_outputs(analysis: Analysis, out_dir: str | Path, *,
                           workers: int | None = None) -> list[Path]:
    """Write every output of an analysis into ``out_dir``; the paths written.

    ``analysis.xlsx`` and ``summary.json`` always; ``tables/<name>.csv`` for each table
    too large for a sheet (see :mod:`.large`); ``verdicts.jsonl``, ``results/T2.csv``
    and ``results/T3.csv`` when the plan runs a KEEP/KNOWN analysis;
    ``feedback-<rater>.xlsx`` per rater when the protocol gives raters feedback (000).
    This is the one place outputs are written: each to a
    temporary file first, all replacing the old ones only once every one is complete
    (:class:`~sheetflow.outputs.OutputSet`), so a run that stops half-way leaves the
    previous set as it was. :func:`~.overlap.analyze_and_write` does the same while
    the analysis runs.

    Parameters
    ----------
    analysis : Analysis
    out_dir : str or pathlib.Path
    workers : int, optional
        Processes that write the large CSV tables and the feedback workbooks (the
        bulk of a big panel's outputs: 500 raters give 500 workbooks and a pairwise
        table of 124,750 pairs per measure). Default: one per CPU (at most
        :data:`MAX_WORKERS`) when that work exceeds :data:`PARALLEL_FROM` (in CSV cells),
        otherwise everything is written in this process. ``1`` never starts one.
    """
    out = Path(out_dir)
    remove_partials(out)
    with OutputSet() as outputs:
        written = write_into(analysis, out, outputs, workers=workers)
    remove_stale_tables(out, written)
    return written


def write_into(analysis: Analysis, out: Path, outputs: OutputSet, *,
               workers: int | None = None, early: EarlyWrites | None = None) -> list[Path]:
    """Stage and write every output of ``analysis``; the final paths, in the order
    listed by :func:`write_analysis_outputs`. When ``early`` has started its workers
    during the analysis, the portable jobs it has not yet been sent go to it too and
    it is finished here; otherwise they are written as ``workers`` says."""
    local: list[tuple[Callable[[Analysis, Path], Path], Path]] = [
        (_workbook_alone, out / "analysis.xlsx"), (write_summary_json, out / "summary.json")]
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        local.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
        local += [(_csv_writer(table), out / name)
                  for name, table in results_tables(analysis).items()]
    tables = table_jobs(analysis.tables, analysis.data, out)
    feedback = feedback_jobs(analysis, out)
    if early is not None and early.started:
        for job in tables + feedback:
            if job[2] not in early.sent:
                early.send(job)
        _write_local([(write, outputs.stage(path)) for write, path in local], analysis)
        early.finish()
    else:
        jobs = [(write, args, outputs.stage(path)) for write, args, path in tables + feedback]
        _write_all(jobs, [(write, outputs.stage(path)) for write, path in local], analysis,
                   workers)
    return [path for _, path in local[:2]] + [path for *_, path in tables] + \
        [path for _, path in local[2:]] + [path for *_, path in feedback]


def table_jobs(tables: dict[str, pd.DataFrame], data: pd.DataFrame, out: Path) -> list[Job]:
    """A job writing each table too large for a sheet to ``out/tables/<name>.csv``."""
    return [table_job(name, table, out) for name, table in large_tables(tables, data).items()]


def table_job(name: str, table: pd.DataFrame, out: Path) -> Job:
    """The job writing ``table`` whole to ``out/tables/<name>.csv``."""
    return (write_csv, (table,), out / csv_path(name))


def feedback_jobs(analysis: Analysis, out: Path) -> list[Job]:
    """A job writing each rater's feedback workbook (plain values: see
    :func:`~.feedback.write_feedback_tables`)."""
    return [(write_feedback_tables, (analysis.study.title, rater, tables, created(analysis)),
             out / feedback_name(rater)) for rater, tables in analysis.feedback.items()]


def remove_stale_tables(out: Path, written: list[Path]) -> None:
    """Remove ``tables/*.csv`` an earlier, larger run left that this one did not write."""
    for stale in (out / TABLES_DIR).glob("*.csv"):
        if stale not in written:
            stale.unlink()


MAX_WORKERS = 4
# Cost in CSV cells (about 0.4 us each); a workbook cell costs about 15 of them. Below
# PARALLEL_FROM (about 2 s of writing) the workers' own start-up (about 0.5 s of
# imports each) would cost more than they save.
PARALLEL_FROM = 5_000_000
WORKBOOK_CELL_COST = 15


def worker_count(workers: int | None, cost: int) -> int:
    """Processes for jobs of total ``cost``: ``workers`` if given, else one per CPU
    (at most :data:`MAX_WORKERS`) from :data:`PARALLEL_FROM`, else 1 (none)."""
    if workers is not None:
        return workers
    return min(os.cpu_count() or 1, MAX_WORKERS) if cost >= PARALLEL_FROM else 1


def _write_all(jobs: list[Job], local: list[tuple[Callable[[Analysis, Path], Path], Path]],
               analysis: Analysis, workers: int | None) -> None:
    """The portable jobs in worker processes when they are many (see
    :mod:`.parallel`), the writers that need the whole analysis here meanwhile."""
    weights = [job_cost(args) for _, args, _ in jobs]
    workers = worker_count(workers, sum(weights))
    if workers <= 1 or not jobs:
        for write, args, path in jobs:
            write(*args, path)
        _write_local(local, analysis)
    else:
        run_jobs(jobs, workers, weights, lambda: _write_local(local, analysis))


def _write_local(local: list[tuple[Callable[[Analysis, Path], Path], Path]],
                 analysis: Analysis) -> None:
    for write, path in local:
        write(analysis, path)


def job_cost(args: tuple[Any, ...]) -> int:
    """A job's expected cost: its CSV table's cells, or its workbook's cells weighted."""
    tables = [a for a in args if isinstance(a, pd.DataFrame)]
    sheets = [t for a in args if isinstance(a, dict) for t in a.values()
              if isinstance(t, pd.DataFrame)]
    return sum(t.size for t in tables) + WORKBOOK_CELL_COST * sum(t.size for t in sheets)


def _workbook_alone(analysis: Analysis, path: Path) -> Path:
    return write_analysis_workbook(analysis, path, tables_beside=False)


def _csv_writer(table: pd.DataFrame) -> Callable[[Analysis, Path], Path]:
    """A writer of ``table`` as UTF-8 CSV (protocol 001's results/T2.csv, T3.csv)."""
    def write(_analysis: Analysis, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(path, index=False, lineterminator="\n", float_format="%.6g")
        return path
    return write


def write_summary_json(analysis: Analysis, path: str | Path) -> Path:
    """Write ``analysis.summary`` as JSON (sorted keys, NaN as null) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(analysis.summary, sort_keys=True, indent=2, allow_nan=False,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path

def write_verdicts_jsonl(analysis: Analysis, path: str | Path) -> Path:
    """Write one JSON line per rated item and sitting (protocol 001 ``verdicts.jsonl``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(rec, sort_keys=True, ensure_ascii=False) for rec in verdicts(analysis)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
