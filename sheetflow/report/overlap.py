"""Analyze and write at once: the bulky outputs go to worker processes as they are ready.

For a panel of hundreds of raters the outputs cost as much as the analysis: protocol
000's 500 feedback workbooks and a pairwise table of 873,000 rows are about 11 s of
writing against 8 s of analysis. Both are final long before the analysis ends (the
feedback tables are computed first, the pairwise table second), so
:func:`analyze_and_write` hands them to worker processes (:mod:`.parallel`) the moment
they are ready (the analysis reports each part through its ``on_part`` hook) and the
analysis goes on meanwhile. Small studies never reach :data:`~.jobs.PARALLEL_FROM`
and are written as :func:`~.outputs.write_analysis_outputs` writes them. Everything is
staged in one :class:`~sheetflow.staging.OutputSet`: an analysis that fails (a broken
seal, say) or a worker that fails leaves the previous outputs as they were.
"""

from __future__ import annotations

from pathlib import Path

from .._gc import release_free_memory
from ..analysis import Analysis, analyze
from ..collect.outputs import OUT_DIR
from ..staging import OutputSet, remove_partials
from .early import EarlyWrites
from .jobs import remove_stale_tables
from .outputs import own_files, write_into


def analyze_and_write(study_dir: str | Path, *, published: str | None = None,
                      workers: int | None = None,
                      allow_partial: bool = False) -> tuple[Analysis, list[Path]]:
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
    allow_partial : bool
        As for :func:`~sheetflow.analysis.analyze`: without it an incomplete panel
        unseals nothing.

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
        analysis = analyze(root, published=published, on_part=early.part_ready,
                           allow_partial=allow_partial)
        release_free_memory()  # the analysis's temporaries, before the writing's own
        written = write_into(analysis, out, outputs, workers=workers, early=early)
    remove_stale_tables(out, written, own_files(analysis, out))
    return analysis, written
