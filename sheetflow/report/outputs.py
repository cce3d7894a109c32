"""Every output of an analysis, written in one place, whole or not at all."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import Analysis, results_tables, verdicts
from ..outputs import OutputSet, remove_partials
from .cells import created
from .feedback import feedback_name, write_feedback_tables
from .large import TABLES_DIR, csv_path, large_tables, write_csv
from .parallel import Job, run_jobs
from .workbook import write_analysis_workbook

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
    previous set as it was.

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
    writers: list[tuple[Callable[[Analysis, Path], Path], Path]] = [
        (_workbook_alone, out / "analysis.xlsx"), (write_summary_json, out / "summary.json")]
    jobs: list[Job] = []
    for name in large_tables(analysis.tables, analysis.data):
        table = analysis.data if name == "data" else analysis.tables[name]
        jobs.append((write_csv, (table,), out / csv_path(name)))
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        writers.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
        for name, table in results_tables(analysis).items():
            writers.append((_csv_writer(table), out / name))
    jobs += [(write_feedback_tables, (analysis.study.title, rater, tables, created(analysis)),
              out / feedback_name(rater)) for rater, tables in analysis.feedback.items()]
    with OutputSet() as outputs:
        staged = [(write, args, outputs.stage(path)) for write, args, path in jobs]
        local = [(write, outputs.stage(path)) for write, path in writers]
        _write_all(staged, local, analysis, workers)
    split = len(jobs) - len(analysis.feedback)  # large tables first, then feedback
    tables, feedback = jobs[:split], jobs[split:]
    written = [path for _, path in writers[:2]] + [path for *_, path in tables] + \
        [path for _, path in writers[2:]] + [path for *_, path in feedback]
    for stale in (out / TABLES_DIR).glob("*.csv"):  # a table of an earlier, larger run
        if stale not in written:
            stale.unlink()
    return written


MAX_WORKERS = 4
# Cost in CSV cells (about 0.4 us each); a workbook cell costs about 15 of them. Below
# PARALLEL_FROM (about 2 s of writing) the workers' own start-up (about 1.5 s of
# imports each) would cost more than they save.
PARALLEL_FROM = 5_000_000
WORKBOOK_CELL_COST = 15


def _write_all(jobs: list[Job], local: list[tuple[Callable[[Analysis, Path], Path], Path]],
               analysis: Analysis, workers: int | None) -> None:
    """The portable jobs in worker processes when they are many (see
    :mod:`.parallel`), the writers that need the whole analysis here meanwhile."""
    weights = [_cost(args) for _, args, _ in jobs]
    if workers is None:
        big = sum(weights) >= PARALLEL_FROM
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if big else 1

    def write_local() -> None:
        for write, path in local:
            write(analysis, path)

    if workers <= 1 or not jobs:
        for write, args, path in jobs:
            write(*args, path)
        write_local()
    else:
        run_jobs(jobs, workers, weights, write_local)


def _cost(args: tuple[Any, ...]) -> int:
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
