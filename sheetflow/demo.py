"""``run_demo``: the whole loop on the bundled sample study with simulated raters.

Copies the sample study (18 PandaLM cases, paired rubric) into a new folder, generates
the packs and the sealed key, lets four simulated raters fill the packs, collects the
returns, analyses them and writes the analysis workbook and ``summary.json``. Nothing is
printed: the CLI renders the returned :class:`DemoResult`.
"""

from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path

from .analysis import Analysis, analyze
from .collect import Collection, collect
from .errors import UsageError
from .generate import GenerateResult, generate_packs
from .report import write_analysis_outputs
from .simulate import fill_packs
from .study import read_table
from .templates import data_dir

SAMPLE = "paired-rubric"
DEMO_SEED = 20260917


@dataclass
class DemoResult:
    """What the demo made, and where."""

    folder: Path
    generated: GenerateResult
    returns: list[Path]
    collection: Collection
    analysis: Analysis
    workbook: Path
    summary_json: Path


def sample_quality(study_dir: Path) -> dict[tuple[str, str], float]:
    """Latent quality per (case, arm): the internal totals as z scores."""
    _, rows = read_table(study_dir / "internal_scores.csv")
    totals = {(r["case_id"], r["arm"]): float(r["total"]) for _, r in rows}
    mean = statistics.fmean(totals.values())
    sd = statistics.pstdev(totals.values()) or 1.0
    return {k: (v - mean) / sd for k, v in totals.items()}


def run_demo(folder: str | Path, *, seed: int = DEMO_SEED) -> DemoResult:
    """Run init -> generate -> simulated raters -> collect -> analyze in ``folder``.

    Parameters
    ----------
    folder : str or Path
        A new or empty folder.
    seed : int
        Seed of the simulated raters.

    Returns
    -------
    DemoResult

    Raises
    ------
    UsageError
        The folder exists and is not empty.
    """
    root = Path(folder)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"{root}: folder is not empty; choose a new or empty folder")
    shutil.copytree(data_dir("samples") / SAMPLE, root, dirs_exist_ok=True)
    generated = generate_packs(root)
    returns = fill_packs(root, root / "returns", seed=seed, quality=sample_quality(root))
    collection = collect(root)
    analysis = analyze(root)
    workbook, summary = write_analysis_outputs(analysis, root / "out")[:2]
    return DemoResult(root, generated, returns, collection, analysis, workbook, summary)
