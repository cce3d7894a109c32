"""Every output of an analysis, written in one place, whole or not at all."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .. import __version__
from ..analysis import Analysis, results_tables, verdicts
from ..analysis.owner_record import metadata
from ..analysis.pilot_summary import (
    PILOT_FILE,
    note_unrecorded,
    pilot_document,
    read_previous,
)
from ..collect.outputs import audited_tables, earlier_outputs
from ..collect.returns import file_digest as file_sha256
from ..collect.rows import neutralise
from ..staging import OutputSet, naming, remove_partials
from .jobs import feedback_jobs, job_cost, remove_stale_tables, table_jobs, worker_count
from .large import csv_path, is_large, write_csv, write_csv_files
from .parallel import Job, run_jobs
from .workbook import write_analysis_workbook

if TYPE_CHECKING:
    from .early import EarlyWrites

VERDICT_ANALYSES = frozenset({"yield_fisher", "permutation", "trend", "intra_rater_kappa"})

def write_analysis_outputs(analysis: Analysis, out_dir: str | Path, *,
                           workers: int | None = None) -> list[Path]:
    """Write every output of an analysis into ``out_dir``; the paths written.

    ``analysis.xlsx``, ``summary.json`` and ``ratings-unblinded.csv`` always;
    ``tables/<name>.csv`` for each table too large for a sheet (see :mod:`.large`);
    ``verdicts.jsonl``, ``results/T2.csv`` and ``results/T3.csv`` when the plan runs a
    KEEP/KNOWN analysis;
    ``feedback-<rater>.xlsx`` per rater when the protocol gives raters feedback (000).
    This is the one place outputs are written: each to a
    temporary file first, all replacing the old ones only once every one is complete
    (:class:`~sheetflow.staging.OutputSet`), so a run that stops half-way leaves the
    previous set as it was. :func:`~.overlap.analyze_and_write` does the same while
    the analysis runs.

    Parameters
    ----------
    analysis : Analysis
    out_dir : str or pathlib.Path
    workers : int, optional
        Processes writing in all, this one included: the large CSV tables and the
        feedback workbooks (the bulk of a big panel's outputs: 500 raters give 500
        workbooks and a pairwise table of 124,750 pairs per measure) go to
        ``workers - 1`` worker processes while this one writes the rest. Default: one
        worker per CPU beyond this one (at most :data:`.jobs.MAX_WORKERS`) when that
        work exceeds :data:`.jobs.PARALLEL_FROM` (in CSV cells) and at least
        :data:`.jobs.MIN_WORKERS` CPUs are spare, otherwise everything is written
        here (:func:`~.jobs.worker_count`). ``1`` never starts one.
    """
    out = Path(out_dir)
    remove_partials(out)
    with OutputSet(label="analyze", what="outputs") as outputs:
        written = write_into(analysis, out, outputs, workers=workers)
    remove_stale_tables(out, written, own_files(analysis, out))
    return written


def write_into(analysis: Analysis, out: Path, outputs: OutputSet, *,
               workers: int | None = None, early: EarlyWrites | None = None) -> list[Path]:
    """Stage and write every output of ``analysis``; the final paths, in the order
    listed by :func:`write_analysis_outputs`. When ``early`` has started its workers
    during the analysis, the portable jobs it has not yet been sent go to it too and
    it is finished here; otherwise they are written as ``workers`` says."""
    analysis.summary["run_id"] = run_id(analysis)
    data_csv = out / csv_path("data") if is_large(analysis.data) else None
    local: list[tuple[Callable[[Analysis, Path], Path], Path]] = [
        (_workbook_alone, out / "analysis.xlsx"), (write_summary_json, out / "summary.json"),
        (_unblinded_writer(outputs.stage(data_csv) if data_csv else None),
         out / UNBLINDED_FILE)]
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        local.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
        local += [(_csv_writer(table), out / name)
                  for name, table in results_tables(analysis).items()]
    if "owners" in analysis.summary:
        local.append((write_metadata_json, out / METADATA_FILE))
    pilot = pilot_document(analysis, read_previous(out)) if "pilot" in analysis.summary \
        else None
    if pilot is not None:
        note_unrecorded(analysis, pilot)  # before the Summary sheet and summary.json
        local.append((_json_writer(pilot), out / PILOT_FILE))
    tables = table_jobs(analysis.tables, out)
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
    stage_run_record(outputs, out, analysis.summary["run_id"], made_from(analysis))
    outputs.supersede(earlier_outputs(out))  # the earlier run's files this one drops
    return [path for _, path in local[:3]] + [path for *_, path in tables] + \
        ([data_csv] if data_csv else []) + [path for _, path in local[3:]] + \
        [path for *_, path in feedback]


RUN_FILE = "run.json"


def run_id(analysis: Analysis) -> str:
    """The id every output of one analysis shares: from what it was computed from (the
    spec, the key, the ratings table and the sheetflow version), so the same inputs
    give the same id and the same bytes."""
    s = analysis.summary
    parts = [str(s.get("spec_hash", "")), str(s.get("key_sha256", "")),
             str(s.get("audit", {}).get("ratings_sha256", "")), __version__]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def stage_run_record(outputs: OutputSet, out: Path, run: str,
                     tables: dict[str, str] | None = None) -> None:
    """Stage ``out/run.json``, last (it vouches for the others): the run id, the sha256
    of every output staged and of the tables analysed (``made_from``), so
    :func:`sheetflow.collect.outputs.check_run` can tell when ``out/`` mixes runs or
    holds an analysis of tables collect has since replaced, and the next collect or
    analyze knows which files are this run's (:func:`~sheetflow.collect.outputs.
    retire_stale_analysis`, :meth:`~sheetflow.staging.OutputSet.supersede`)."""
    files = {final.relative_to(out).as_posix(): file_sha256(staged)
             for staged, final in outputs.staged()}
    record: dict = {"run_format": 1, "run_id": run, "files": files}
    if tables is not None:
        record["made_from"] = tables
    outputs.write(out / RUN_FILE,
                  (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def made_from(analysis: Analysis) -> dict[str, str] | None:
    """The tables under ``out/`` the analysis read -> their sha256, from its audit
    (None for an analysis not read from a study's ``out/``)."""
    return audited_tables(analysis.summary.get("audit"))


def _write_all(jobs: list[Job], local: list[tuple[Callable[[Analysis, Path], Path], Path]],
               analysis: Analysis, workers: int | None) -> None:
    """The portable jobs in worker processes when they are many (see
    :mod:`.parallel`), the writers that need the whole analysis here meanwhile."""
    weights = [job_cost(args) for _, args, _ in jobs]
    children = worker_count(workers, sum(weights))
    if not children or not jobs:
        for write, args, path in jobs:
            with naming(path):
                write(*args, path)
        _write_local(local, analysis)
    else:
        run_jobs(jobs, children, weights, lambda: _write_local(local, analysis))


def _write_local(local: list[tuple[Callable[[Analysis, Path], Path], Path]],
                 analysis: Analysis) -> None:
    for write, path in local:
        with naming(path):  # a writer of two files names the one that failed itself
            write(analysis, path)


def _workbook_alone(analysis: Analysis, path: Path) -> Path:
    return write_analysis_workbook(analysis, path, tables_beside=False)


def _csv_writer(table: pd.DataFrame) -> Callable[[Analysis, Path], Path]:
    """A writer of ``table`` as UTF-8 CSV (protocol 001's results/T2.csv, T3.csv).

    Text that a spreadsheet would run as a formula (a band name from items.csv, say)
    is neutralised as in every CSV sheetflow writes."""
    def write(_analysis: Analysis, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        safe = table.apply(lambda col: col.map(
            lambda v: neutralise(v) if isinstance(v, str) else v)
            if col.dtype == object or pd.api.types.is_string_dtype(col.dtype) else col)
        safe.to_csv(path, index=False, lineterminator="\n", float_format="%.6g")
        return path
    return write


UNBLINDED_FILE = "ratings-unblinded.csv"
UNBLINDED_COLUMNS = {
    "item": "case", "arm": "arm", "rater": "rater", "role": "role", "sitting": "sitting",
    "label": "label", "dimension": "dimension", "value": "value",
    "confidence": "confidence"}
"""``out/ratings-unblinded.csv``: column -> the analysis data's column."""


def write_unblinded_csv(analysis: Analysis, path: str | Path,
                        data_path: str | Path | None = None) -> Path:
    """One row per rating, unblinded, for R or pandas: ``item, arm, rater, role,
    sitting, label, dimension, value, confidence``.

    ``label`` is the neutral label the rater saw the response under (paired designs),
    ``arm`` what it was; totals are the ones sheetflow recomputed from the dimensions
    (``dimension`` the total's id). Text a spreadsheet would run as a formula is
    neutralised with a leading ``'``, as in every CSV sheetflow writes.

    With ``data_path``, the analysis data as analysed (its own columns and names, as
    ``tables/data.csv`` holds it when too large for the Data sheet) is written there
    at the same time, as :func:`~.large.write_csv` writes it: the two files hold the
    same columns, each column's fields made once for both.
    """
    data = analysis.data
    missing = {column: "" for column in UNBLINDED_COLUMNS.values()
               if column not in data.columns}
    table = data.assign(**missing) if missing else data
    at = {column: j for j, column in enumerate(table.columns)}
    files = [(Path(path), [at[c] for c in UNBLINDED_COLUMNS.values()],
              list(UNBLINDED_COLUMNS))]
    if data_path is not None and data.shape[1] < 2:  # csv quotes a lone blank: its own way
        write_csv(data, data_path)
    elif data_path is not None:
        files.append((Path(data_path), list(range(data.shape[1])), list(map(str, data.columns))))
    write_csv_files(table, files)
    return Path(path)


def _unblinded_writer(data_path: Path | None) -> Callable[[Analysis, Path], Path]:
    """:func:`write_unblinded_csv`, writing the data to ``data_path`` too (if any)."""
    def write(analysis: Analysis, path: Path) -> Path:
        return write_unblinded_csv(analysis, path, data_path)
    return write


def write_summary_json(analysis: Analysis, path: str | Path) -> Path:
    """Write ``analysis.summary`` as JSON (sorted keys, NaN as null) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(analysis.summary, sort_keys=True, indent=2, allow_nan=False,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path

def own_files(analysis: Analysis, out: Path) -> tuple[Path, ...]:
    """Files in ``out`` that only an analysis writes, removed when this one did not:
    protocol 004's pilot summary when the trio is incomplete."""
    return (out / PILOT_FILE,) if "pilot" in analysis.summary else ()


def _json_writer(doc: dict) -> Callable[[Analysis, Path], Path]:
    def write(_analysis: Analysis, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path

    return write


METADATA_FILE = "results/metadata.json"


def write_metadata_json(analysis: Analysis, path: str | Path) -> Path:
    """Write protocol 001's per-owner record (the protocol's ``metadata.yaml``, as JSON;
    see :mod:`sheetflow.analysis.owner_record`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metadata(analysis), sort_keys=True, indent=2, allow_nan=False,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_verdicts_jsonl(analysis: Analysis, path: str | Path) -> Path:
    """Write one JSON line per rated item and sitting (protocol 001 ``verdicts.jsonl``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(rec, sort_keys=True, ensure_ascii=False) for rec in verdicts(analysis)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
