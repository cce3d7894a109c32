"""The portable writing jobs of an analysis: what each costs, and how many workers.

A job is ``(write, args, path)`` (:data:`.parallel.Job`): a writer that needs only its
arguments, never the whole analysis, so a worker process can run it. Both
:func:`.outputs.write_into` and :class:`.early.EarlyWrites` build their jobs here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import Analysis
from .cells import created
from .feedback import feedback_name, write_feedback_tables
from .large import TABLES_DIR, csv_path, is_large, write_csv
from .parallel import Job


def table_jobs(tables: dict[str, pd.DataFrame], out: Path) -> list[Job]:
    """A job writing each table too large for a sheet to ``out/tables/<name>.csv``
    (the data's own, ``tables/data.csv``, is written with ``ratings-unblinded.csv``:
    :func:`~.outputs.write_unblinded_csv`)."""
    return [table_job(name, table, out) for name, table in tables.items() if is_large(table)]


def table_job(name: str, table: pd.DataFrame, out: Path) -> Job:
    """The job writing ``table`` whole to ``out/tables/<name>.csv``."""
    return (write_csv, (table,), out / csv_path(name))


def feedback_jobs(analysis: Analysis, out: Path) -> list[Job]:
    """A job writing each rater's feedback workbook (plain values: see
    :func:`~.feedback.write_feedback_tables`)."""
    return [(write_feedback_tables, (analysis.study.title, rater, tables, created(analysis)),
             out / feedback_name(rater)) for rater, tables in analysis.feedback.items()]


def remove_stale_tables(out: Path, written: list[Path], also: tuple[Path, ...] = ()) -> None:
    """Remove ``tables/*.csv`` an earlier, larger run left that this one did not write,
    and each of ``also`` this run did not write (a pilot summary an incomplete trio no
    longer supports)."""
    for stale in [*(out / TABLES_DIR).glob("*.csv"), *also]:
        if stale not in written:
            stale.unlink(missing_ok=True)


MAX_WORKERS = 4
MIN_WORKERS = 2
# Cost in CSV cells: write_csv takes 0.07-0.11 us of CPU a cell (about 0.08 for the
# pairwise tables, up to 0.11 for the data's mixed values; 0.085 over the 500-rater
# paired study's large tables), a feedback workbook about 3.5 us a cell of its
# tables, some 40 CSV cells. PARALLEL_FROM is about 2 s of writing: below it, the
# start-up of up to MAX_WORKERS workers (0.5-0.6 s of CPU each, mostly imports;
# 0.5-0.8 s of wall time) could cost as much CPU as the writing they take over.
# Measured with `bench/bench_analyze.py --floors` on its paired study (500 raters:
# 16.3 million CSV cells, 810,000 workbook cells) and its DICES-350-sized one, and
# write_csv timed alone on each of their large tables (the lowest of five runs): CPU
# time on 2 CPUs that other work shared. The two figures decide only whether
# workers start and which jobs they take first, never what is written.
PARALLEL_FROM = 25_000_000
WORKBOOK_CELL_COST = 40


def worker_count(workers: int | None, cost: int) -> int:
    """Worker processes for jobs of total ``cost`` (0: write them in this process).

    ``workers`` counts the processes in all, this one included (it goes on with the
    analysis and the outputs that need it), so ``workers - 1`` when given. By default
    one per CPU beyond this process's own (at most :data:`MAX_WORKERS`) from
    :data:`PARALLEL_FROM`, and none below it or with fewer than :data:`MIN_WORKERS`
    CPUs to spare: a worker sharing a CPU with the analysis slows both. Measured on 2
    CPUs (shared with other work) with 500 raters (``bench/bench_analyze.py --scenario
    paired --workers N``, two runs each): two workers cost 11.2-12.0 s of CPU, one
    11.2-11.4 s, none 9.3-9.5 s, and with workers the wall time was 4-18% longer than
    without (11.8-11.9 s).
    """
    if workers is not None:
        return max(workers - 1, 0)
    spare = min(_cpus() - 1, MAX_WORKERS)
    return spare if cost >= PARALLEL_FROM and spare >= MIN_WORKERS else 0


def _cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def job_cost(args: tuple[Any, ...]) -> int:
    """A job's expected cost: its CSV table's cells, or its workbook's cells weighted."""
    tables = [a for a in args if isinstance(a, pd.DataFrame)]
    sheets = [t for a in args if isinstance(a, dict) for t in a.values()
              if isinstance(t, pd.DataFrame)]
    return sum(t.size for t in tables) + WORKBOOK_CELL_COST * sum(t.size for t in sheets)
