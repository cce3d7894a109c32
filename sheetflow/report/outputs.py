"""Every output of an analysis, written in one place, whole or not at all."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..analysis import Analysis, results_tables, verdicts
from ..outputs import OutputSet, remove_partials
from .feedback import feedback_name, write_feedback_workbook
from .large import TABLES_DIR, csv_path, large_tables, write_csv
from .workbook import write_analysis_workbook

VERDICT_ANALYSES = frozenset({"yield_fisher", "permutation", "trend", "intra_rater_kappa"})

def write_analysis_outputs(analysis: Analysis, out_dir: str | Path) -> list[Path]:
    """Write every output of an analysis into ``out_dir``; the paths written.

    ``analysis.xlsx`` and ``summary.json`` always; ``tables/<name>.csv`` for each table
    too large for a sheet (see :mod:`.large`); ``verdicts.jsonl``, ``results/T2.csv``
    and ``results/T3.csv`` when the plan runs a KEEP/KNOWN analysis;
    ``feedback-<rater>.xlsx`` per rater when the protocol gives raters feedback (000).
    This is the one place outputs are written: each to a
    temporary file first, all replacing the old ones only once every one is complete
    (:class:`~sheetflow.outputs.OutputSet`), so a run that stops half-way leaves the
    previous set as it was.
    """
    out = Path(out_dir)
    remove_partials(out)
    writers = [(_workbook_alone, out / "analysis.xlsx"),
               (write_summary_json, out / "summary.json")]
    for name in large_tables(analysis.tables, analysis.data):
        writers.append((_large_table(name), out / csv_path(name)))
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        writers.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
        for name, table in results_tables(analysis).items():
            writers.append((_csv_writer(table), out / name))
    writers += [(_feedback(rater), out / feedback_name(rater)) for rater in analysis.feedback]
    with OutputSet() as outputs:
        for write, path in writers:
            write(analysis, outputs.stage(path))
    written = [path for _, path in writers]
    for stale in (out / TABLES_DIR).glob("*.csv"):  # a table of an earlier, larger run
        if stale not in written:
            stale.unlink()
    return written

def _workbook_alone(analysis: Analysis, path: Path) -> Path:
    return write_analysis_workbook(analysis, path, tables_beside=False)


def _large_table(name: str) -> Callable[[Analysis, Path], Path]:
    def write(analysis: Analysis, path: Path) -> Path:
        table = analysis.data if name == "data" else analysis.tables[name]
        return write_csv(table, path)
    return write


def _feedback(rater: str) -> Callable[[Analysis, Path], Path]:
    def write(analysis: Analysis, path: Path) -> Path:
        return write_feedback_workbook(analysis, rater, path)
    return write

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
