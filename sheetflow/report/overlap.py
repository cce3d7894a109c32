"""Analyze and write at once: the bulky outputs go to worker processes as they are ready.

For a panel of hundreds of raters the outputs cost as much as the analysis: protocol
000's 500 feedback workbooks and a pairwise table of 873,000 rows are about 4 s of
writing (2.8 s and 1.1 s) against 4.5 s of analysis, and every output together about
5 s. Both are final before the analysis ends (the feedback tables first, after about
40% of its time, the pairwise table second, after about 80%). (CPU times on 2 CPUs,
``bench/bench_analyze.py``'s paired study: ``--floors`` times the writing; the
analysis was timed alone, and its parts through its ``on_part`` hook.) So
:func:`analyze_and_write` hands them to worker processes (:mod:`.parallel`) the moment
they are ready (the analysis reports each part through its ``on_part`` hook) and the
analysis goes on meanwhile. Small studies never reach :data:`~.jobs.PARALLEL_FROM`
and are written as :func:`~.outputs.write_analysis_outputs` writes them. Everything is
staged in one :class:`~sheetflow.staging.OutputSet`: a worker that fails leaves the
previous outputs as they were, and the earlier run's files this run does not write
again are removed as the new set goes in (no feedback workbook of a rater who has
since dropped out is left beside the new outputs).

An analysis that refuses the study as it now stands (an incomplete panel, a broken
seal, a spec changed since generate, a table that does not match its record) removes
the earlier analysis outputs instead of leaving them: they would still present the
last decision as the current one. They are derived files, written again from the
inputs by the next analyze that succeeds; the inputs and collect's files are never
touched (:func:`~sheetflow.collect.outputs.retire_analysis`). Removed, not moved
aside: a copy elsewhere would still read as the result when opened or sent; to keep
an earlier analysis, copy ``out/`` away before collecting again.
A failure while writing is no refusal: the previous outputs stay as they were, and
:func:`~sheetflow.collect.outputs.check_run` still tells whether they match the
tables collected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from .._gc import release_free_memory
from ..analysis import Analysis, analyze
from ..collect.outputs import OUT_DIR, retire_analysis, retired_line
from ..errors import SheetflowError
from ..packs.seal import check_published
from ..staging import OutputSet, remove_partials
from .early import EarlyWrites
from .jobs import remove_stale_tables
from .outputs import own_files, write_into

REFUSED = "analyze refused the study as it is now, so they no longer stand for it"
REWRITTEN = "derived files: the next analyze that succeeds writes them again"


class Analyzed(NamedTuple):
    """What :func:`analyze_and_write` did."""

    analysis: Analysis
    written: list[Path]
    """The outputs written, in the order :func:`~.outputs.write_analysis_outputs` lists."""
    removed: list[Path]
    """The earlier run's outputs this run did not write again, removed."""


def analyze_and_write(study_dir: str | Path, *, published: str | None = None,
                      workers: int | None = None,
                      allow_partial: bool = False) -> Analyzed:
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
    Analyzed
        The analysis, the paths written and the earlier run's files removed.

    Raises
    ------
    SealError, MissingStepError, OutputError, IncompleteError
        As :func:`~sheetflow.analysis.analyze`: the earlier analysis outputs are then
        removed, and a note on the error names them (see the module docstring).
        ``OutputError`` also when a worker fails otherwise (the message names the
        file):
        nothing is replaced or removed then.
    OSError, WriteError
        An output could not be written, in this process or in a worker (a full
        disk, a folder that may not be written): the error names the file. Nothing
        is replaced or removed then.
    """
    root = Path(study_dir)
    check_published(published)  # a typo in the argument leaves the earlier run standing
    out = root / OUT_DIR
    remove_partials(out)
    with OutputSet(label="analyze", what="outputs") as outputs, \
            EarlyWrites(out, outputs, workers) as early:
        analysis = _analyze_or_retire(root, published=published, on_part=early.part_ready,
                                      allow_partial=allow_partial)
        release_free_memory()  # the analysis's temporaries, before the writing's own
        written = write_into(analysis, out, outputs, workers=workers, early=early)
    remove_stale_tables(out, written, own_files(analysis, out))
    return Analyzed(analysis, written, outputs.removed)


def _analyze_or_retire(root: Path, **options: Any) -> Analysis:
    """:func:`~sheetflow.analysis.analyze`; when it refuses, the earlier analysis
    outputs are removed and the error carries a note naming them."""
    try:
        return analyze(root, **options)
    except SheetflowError as exc:
        try:
            removed = retire_analysis(root)
        except OSError as err:
            exc.add_note(f"the earlier analysis outputs could not all be removed ({err}) "
                         f"and are stale: {REFUSED}")
            raise exc from None
        if removed:
            exc.add_note(retired_line(root, removed, f"{REFUSED} ({REWRITTEN})"))
        raise
