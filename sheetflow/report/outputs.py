"""Every output of an analysis, written in one place, whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

from ..analysis import Analysis, verdicts
from ..outputs import OutputSet, remove_partials
from .workbook import write_analysis_workbook

VERDICT_ANALYSES = frozenset({"yield_fisher", "permutation", "trend", "intra_rater_kappa"})

def write_analysis_outputs(analysis: Analysis, out_dir: str | Path) -> list[Path]:
    """Write every output of an analysis into ``out_dir``; the paths written.

    ``analysis.xlsx`` and ``summary.json`` always; ``verdicts.jsonl`` when the plan runs
    a KEEP/KNOWN analysis. This is the one place outputs are written: each to a
    temporary file first, all replacing the old ones only once every one is complete
    (:class:`~sheetflow.outputs.OutputSet`), so a run that stops half-way leaves the
    previous set as it was.
    """
    out = Path(out_dir)
    remove_partials(out)
    writers = [(write_analysis_workbook, out / "analysis.xlsx"),
               (write_summary_json, out / "summary.json")]
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        writers.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
    with OutputSet() as outputs:
        for write, path in writers:
            write(analysis, outputs.stage(path))
    return [path for _, path in writers]

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
