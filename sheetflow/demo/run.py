"""``run_demo``: the whole loop on the bundled sample study with simulated raters.

Copies the sample study (18 PandaLM cases, paired rubric) into a new folder, generates
the packs and the sealed key, lets four simulated raters fill the packs, collects the
returns, analyses them and writes the analysis workbook and ``summary.json``. Nothing is
printed: the CLI renders the returned :class:`DemoResult`.
"""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis import Analysis, analyze
from ..analysis.decision import REPORTED, check_line, figure_text
from ..collect.run import Collection, collect
from ..errors import UsageError
from ..packs.generate import GenerateResult, generate_packs
from ..packs.secret import DEMO_SECRET
from ..report import write_analysis_outputs
from ..spec.study import read_table
from ..spec.templates import data_dir
from ..staging import holds_only_leftovers, make_folder_whole
from ..words import p_said
from .folder import foreign_files, foreign_line
from .simulate import fill_packs

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


def run_demo(folder: str | Path, *, seed: int = DEMO_SEED, force: bool = False,
             progress: Callable[[int, int], None] | None = None) -> DemoResult:
    """Run init -> generate -> simulated raters -> collect -> analyze in ``folder``.

    Parameters
    ----------
    folder : str or Path
        A new or empty folder, or (with ``force``) the folder of an earlier demo.
    seed : int
        Seed of the simulated raters.
    force : bool
        Clear an earlier demo in ``folder`` first. A folder holding anything the demo
        did not write (a note, a return copied in, a sample file edited since) is still
        refused, naming those files, so ``force`` never deletes a user's own files.
    progress : callable, optional
        Called as ``progress(done, total)`` after each of the five steps.

    Returns
    -------
    DemoResult

    Raises
    ------
    UsageError
        The folder exists and is not empty (and, with ``force``, is not an earlier demo
        or holds files the demo did not write).
    """
    root = Path(folder)
    if root.exists() and (not root.is_dir() or not holds_only_leftovers(root)):
        if not (force and is_demo_folder(root)):
            hint = ("; it does not hold an earlier demo, so --force leaves it alone" if force
                    else "; choose a new or empty folder, or add --force to redo a demo")
            raise UsageError(f"{root}: folder is not empty{hint}")
        foreign = foreign_files(root, SAMPLE)
        if foreign:
            raise UsageError(foreign_line(root, foreign))
        shutil.rmtree(root)
    step = progress or (lambda done, total: None)
    # the sample is copied whole or not at all (as init copies a template), so a demo
    # stopped while copying leaves no folder that looks like an earlier demo
    make_folder_whole(root, _copy_sample)
    step(1, 5)
    # a fixed study secret: the demo is the same run every time (a real study never
    # passes one, and generate refuses to reuse it; see sheetflow.packs.secret)
    generated = generate_packs(root, secret=DEMO_SECRET)
    step(2, 5)
    returns = fill_packs(root, root / "returns", seed=seed, quality=sample_quality(root))
    step(3, 5)
    collection = collect(root)
    step(4, 5)
    analysis = analyze(root)
    workbook, summary = write_analysis_outputs(analysis, root / "out")[:2]
    step(5, 5)
    return DemoResult(root, generated, returns, collection, analysis, workbook, summary)


def _copy_sample(folder: Path) -> None:
    """The sample study and the note on where it comes from and under which licence
    (the tour's first line points to it)."""
    shutil.copytree(data_dir("samples") / SAMPLE, folder)
    shutil.copyfile(data_dir("samples") / "README.md", folder / "README.md")


def is_demo_folder(root: Path) -> bool:
    """Whether ``root`` holds a study made by :func:`run_demo` (its spec is the sample's)."""
    spec = root / "study.toml"
    sample = data_dir("samples") / SAMPLE / "study.toml"
    try:
        return spec.read_bytes() == sample.read_bytes()
    except OSError:
        return False


def closing_lines(result: DemoResult) -> list[str]:
    """The demo's last lines: which arm won, how sure, where the workbooks are, what next.

    Built from ``summary.json``'s ``decision`` and ``arms`` objects, so the words are
    the analysis's own.
    """
    summary = result.analysis.summary
    arms = summary.get("arms") or {}
    decision = summary["decision"]
    lines = [f"winner: {_winner_line(arms)}",
             f"how sure: {_sureness(arms)}",
             f"decision: {_decision_line(decision, summary.get('panel') or {})}",
             f"coordinator's workbook: {result.collection.outputs.get('validation', '')} "
             "(Status sheet: who returned, what to fix)",
             f"analyst's workbook:     {result.workbook} (Summary sheet first)",
             f"open first: {result.workbook} -> Summary"]
    return lines


def _decision_line(decision: dict[str, Any], panel: dict[str, Any]) -> str:
    """The status, how many of the plan's checks are met, and each one that is not
    (its value, outcome and target): the line says why, not only what.

    A check without a target is reported, not judged, and is not counted; an
    incomplete panel is named, as it decides the status whatever the checks say.
    """
    status = decision["status"].upper()
    judged = [c for c in decision["checks"] if c["outcome"] != REPORTED]
    if not judged:
        return f"{status}: no check of the plan has a target (figures reported, not judged)"
    met = sum(c["passed"] is True for c in judged)
    checks = "check" if len(judged) == 1 else "checks"
    parts = [f"{status}: {met} of {len(judged)} {checks} of the plan met"]
    parts += [_unmet(c) for c in judged if c["passed"] is not True]
    if decision["status"] == "incomplete":
        missing = ", ".join(map(str, panel.get("missing") or [])) or "see the Summary sheet"
        parts.append(f"the panel is incomplete (missing: {missing}), which decides the "
                     "status whatever the checks say")
    return "; ".join(parts)


def _unmet(check: dict[str, Any]) -> str:
    """A check that is not met, as the decision lines write it, without its note."""
    return check_line(check, with_note=False)


def _winner_line(arms: dict[str, Any]) -> str:
    """The arm ahead, called the winner only when the interval and the test both
    show the difference (see :func:`_shown`)."""
    if not arms or not arms.get("winner"):
        return f"no arm ahead ({arms.get('note') or arms.get('test') or 'no arm comparison'})"
    fig = _figure(arms)
    means = " vs ".join(f"{arm} {fig(v)}" for arm, v in arms.get("means", {}).items())
    figures = f"{means}; {arms['effect_measure']} {fig(arms.get('effect'))}"
    shown, why = _shown(arms)
    if shown:
        return f"{arms['winner']} over {arms['other']} ({figures})"
    return f"none shown: {arms['winner']} ahead of {arms['other']} ({figures}), but {why}"


def _shown(arms: dict[str, Any]) -> tuple[bool, str]:
    """Whether the difference is shown: its interval excludes zero and the test's p is
    below 1 - the interval's level; else why not."""
    ci, p = arms.get("ci"), arms.get("p")
    level = arms.get("ci_level", 0.95)
    excludes = _excludes_zero(ci)
    if excludes is None:
        return False, "this design gives no interval for the difference"
    if not excludes:
        return False, f"the {level:.0%} CI of the difference includes zero"
    if p is not None and not p < 1 - level:
        return False, f"{arms.get('test', 'the test')} {p_said(p, [1 - level])}"
    return True, ""


def _excludes_zero(ci: list[float | None] | None) -> bool | None:
    """Whether an interval lies wholly above or below zero (None: no interval)."""
    if not ci or ci[0] is None or ci[1] is None:
        return None
    return ci[0] > 0 or ci[1] < 0


def _sureness(arms: dict[str, Any]) -> str:
    ci, p = arms.get("ci"), arms.get("p")
    level = f"{arms.get('ci_level', 0.95):.0%}"
    tested = f"{arms.get('test', 'test')} {p_said(p, [1 - arms.get('ci_level', 0.95)])}" \
        if p is not None else "no test"
    excludes = _excludes_zero(ci)
    if excludes is None:
        return f"{tested}; no interval for this design"
    verdict = "excludes" if excludes else "includes"
    word = "confident" if _shown(arms)[0] else "not sure"
    fig = _figure(arms)
    return (f"{word}: the {level} CI of the difference [{fig(ci[0])}, {fig(ci[1])}] "
            f"{verdict} zero; {tested}")


def _figure(arms: dict[str, Any]) -> Callable[[Any], str]:
    """How the arms' figures read: percentages for proportions (yields), else
    :func:`_fmt`."""
    return figure_text(True) if arms.get("proportion") else _fmt


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
