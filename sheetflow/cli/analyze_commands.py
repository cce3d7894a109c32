"""``sheetflow analyze`` and ``sheetflow demo``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..interrupted import INTERRUPTED
from ..words import counted, interval_said, resting_on, shown_number
from .common import EXIT_DATA, Output, command, warn_demo_seal

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..demo.run import DemoResult

_STATUS_COLOURS = {"pass": "green", "fail": "red", "incomplete": "yellow"}


@command("analyze")
@click.option("--allow-partial", is_flag=True,
              help="Unseal and analyse when raters are missing (the decision stays "
                   "'incomplete' and the exit code 1); without it an incomplete panel "
                   "unseals nothing.")
@click.option("--key-sha256", "published", default=None, metavar="HEX",
              help="The key hash published before scoring; refuse a key without it.")
def analyze_command(out: Output, directory: Path, allow_partial: bool,
                    published: str | None) -> None:
    """Unseal the key, unblind the collected ratings and run the study's analysis plan.

    Writes out/analysis.xlsx and out/summary.json (and the protocol's other files, e.g.
    out/verdicts.jsonl for a KEEP/KNOWN study) in DIRECTORY. A file in returns/ the
    last collect did not read stops it (exit 2: collect first). When the panel is
    incomplete (a rater missing, their only file left out, or 002's second rater before
    sheetflow lock writes their pack) it names who is missing, unseals nothing and
    exits 1; with --allow-partial it analyses the raters there are, names who is
    missing and still exits 1 (a rater whose return has every answer blank is named as
    returned empty and not counted among the raters). When every rater is in but a
    returned file was left out (a stray or damaged file beside a good one), it
    analyses, names the file and exits 1. When collect read mail.jsonl with a line that
    held no record (out/collection.json records it), it analyses, names the lines in a
    warning and in the Summary's notes and exits 1. When out/pilot-summary.json (protocol 004) lacks
    the imported judges' costs and execution window, it names them and the command that
    supplies them in a warning and in the Summary's notes and exits 1. When the spec
    lacks a target its protocol's decision needs, or sets one the protocol fixes
    otherwise (a study generated before check refused that), the checks on it are not
    decided: it names the target and the value to write in a warning and exits 1. Exit
    0 means the analysis rests on every expected rater and every returned file (and,
    for imported judges, records their costs) and on the targets its protocol needs. A
    run replaces the earlier run's outputs whole; when it refuses, it removes them (they
    would still show the last decision) and says so. A study sealed by sheetflow demo
    (its secret is public, so its packs blinded nothing) is warned of.

    Example: sheetflow analyze my-study
    """
    from ..analysis.panel import journal_note
    from ..collect.run_lock import study_lock
    from ..report import analyze_and_write
    from ..spec.model import SPEC_FILE
    from ..spec.protocol_targets import target_problems

    with study_lock(directory, "analyze"):  # no collect replaces the table meanwhile
        analysis, written, removed = analyze_and_write(directory, published=published,
                                                       allow_partial=allow_partial)
    # after the seal checks (a broken seal is said first): the figures stand, but the
    # packs they came from hid nothing
    warn_demo_seal(out, directory)
    damaged = analysis.panel.journal_damaged if analysis.panel else []
    # the damaged journal and the pilot summary's missing costs are said once on the
    # screen, as the warnings below; the Summary sheet and summary.json keep them
    # among the panel's notes
    warned = [journal_note(damaged, directory)] if damaged else []
    unrecorded = (analysis.summary.get("pilot") or {}).get("unrecorded_warning")
    warned += [unrecorded] if unrecorded else []
    _echo_summary(out, analysis)
    for path in written:
        out.say(f"wrote {path}")
    for path in removed:
        out.say(f"removed {path} (the earlier run wrote it, this one does not)")
    _echo_decision(out, analysis, warned_notes=warned)
    incomplete = analysis.summary["decision"]["status"] == "incomplete"
    lost = [f["file"] for f in analysis.panel.files_lost] if analysis.panel else []
    if incomplete:
        out.say("exit 1: the panel is incomplete (see the panel line)" + (
            "; the outputs were written because of --allow-partial" if allow_partial
            else ""), fg="yellow")
    elif lost:
        them = "it" if len(lost) == 1 else "them"
        out.say(f"exit 1: {counted(len(lost), 'returned file')} left out ({', '.join(lost)}); "
                "the decision above rests on every expected rater. Remove or replace "
                f"{them} in returns/ and collect again", fg="yellow")
    for note in warned:  # records the ratings went without: mail lines, judges' costs
        out.warn(note)
    # a study generated before check refused its targets: the decision leaves the
    # checks on them undecided, and the exit code says the plan is short of its protocol
    targets = target_problems(analysis.study.protocol, analysis.study.plan.targets)
    if targets and not incomplete and not lost:
        out.say("exit 1: the spec's [analysis.targets] lack or contradict what the "
                "protocol's decision needs, so the checks on them are not decided (see "
                "the warnings)", fg="yellow")
    for problem in targets:
        out.warn(f"{Path(analysis.study.root) / SPEC_FILE}: [analysis.targets]: "
                 f"{problem.message}")
    ok = not incomplete and not lost and not warned and not targets
    out.json({"ok": ok, "outputs": [str(p) for p in written],
              "removed": [str(p) for p in removed], "summary": analysis.summary})
    if not ok:
        click.get_current_context().exit(EXIT_DATA)


def _echo_summary(out: Output, analysis: Analysis) -> None:
    from ..analysis.context import band_bounds
    from ..analysis.decision import check_line
    from ..report.headline import (
        deviations_line,
        figure_line,
        planned_figures,
        review_lines,
        study_counts,
    )

    s = analysis.summary
    bounds = band_bounds(analysis.study.plan)
    out.say(f"study      {s['study_id']}: {', '.join(study_counts(s, analysis.study))}")
    out.say(f"key        sha256 {s['key_sha256']} (seal verified)")
    alphas = s.get("alpha", [])
    # each measure as the workbook names it, "Label (id)", the names aligned
    names = [analysis.study.rubric.named(rec["measure"]) for rec in alphas]
    width = max(map(len, names), default=0)
    for name, rec in zip(names, alphas, strict=True):  # the alpha on its band's side
        rests = "; ".join(filter(None, (resting_on(rec), rec.get("note"))))  # too few units?
        out.say(f"alpha      {name:{width}} {shown_number(rec['alpha'], bounds)} "
                f"{interval_said(_num(rec['ci_low']), _num(rec['ci_high']))} {_within(rests)} "
                f"{rec['band'] or rec['reason']}".rstrip())  # no band, no reason: no blank
    for figure in planned_figures(analysis.study, s):  # what the plan sizes, beside alpha
        kind = "icc" if figure["analysis"] == "icc" else "kappa"
        out.say(f"{kind:<10} {figure_line(figure, analysis.study.rubric.named(figure['measure']))}")
    deviations = deviations_line(s)  # 001: what the batch times say of the sittings
    if deviations:
        out.say(f"deviations {deviations}")
    for check in s["decision"]["checks"]:  # in the decision lines' words
        out.say(f"check      {check_line(check)}")
    for line in review_lines(s):  # 003: refusals per system, gold disputes (as the sheet)
        label = "disputes" if line.startswith("gold disputes") else "refusals"
        out.say(f"{label:<10} {line}")


def _echo_decision(out: Output, analysis: Analysis, *,
                   warned_notes: list[str] | None = None) -> None:
    """The headline, last: decision, panel, arms (the same words as the Summary sheet).

    ``warned_notes``: panel notes the command says as warnings, left out here so that
    the screen says each once.
    """
    from ..report import headline_lines

    apart = {f"note: {note}" for note in warned_notes or []}
    lines = [line for line in headline_lines(analysis.summary) if line not in apart]
    colour = _STATUS_COLOURS.get(analysis.summary["decision"]["status"])
    out.headline(lines[0], fg=colour)
    for line in lines[1:]:
        out.say(line)


def _within(text: str) -> str:
    """``text`` in parentheses; "" for none."""
    return f"({text})" if text else ""


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


@command("demo", directory="new", directory_default="sheetflow-demo")
@click.option("--force", is_flag=True,
              help="Redo the demo in a folder that holds an earlier demo and nothing "
                   "else (a file the demo did not write is named and kept).")
def demo_command(out: Output, directory: Path, force: bool) -> None:
    """Run the whole loop on the bundled sample study with four simulated raters.

    DIRECTORY (default ./sheetflow-demo) must be new or empty, or hold an earlier demo
    and nothing else with --force.

    Example: sheetflow demo --force
    """
    from ..demo.run import closing_lines, run_demo

    progress = out.progress("running the demo")
    try:
        result = run_demo(directory, force=force, progress=progress)
        progress.close()
        _tour(out, result)
    except KeyboardInterrupt as exc:
        exc.line = _demo_interrupted(directory, force)  # type: ignore[attr-defined]
        raise
    closing = closing_lines(result)
    out.say()
    for line in closing:
        out.headline(line) if line.startswith("winner") else out.say(line)
    out.json({"ok": True, "folder": str(result.folder), "closing": closing,
              "decision": result.analysis.summary["decision"],
              "arms": result.analysis.summary.get("arms"),
              "validation": result.collection.outputs.get("validation"),
              "analysis": str(result.workbook), "summary": str(result.summary_json)})


def _demo_interrupted(directory: Path, force: bool) -> str:
    """What to run after Ctrl-C stopped the demo: the same command, with --force only
    when the folder now holds a demo (made part-way or whole), which a plain rerun
    refuses; a folder not made yet, or left empty, takes the same command as it was."""
    from ..demo.run import is_demo_folder

    again = INTERRUPTED
    return again + " with --force" if not force and is_demo_folder(directory) else again


def _tour(out: Output, r: DemoResult) -> None:
    from .collect_commands import shown_output

    out.say(f"demo study  {r.folder} (18 real prompt/response pairs from the PandaLM "
            "test set; see README.md there)")
    out.say("1. generate: one locked workbook per rater, a blinded manifest, a sealed key")
    for pack in r.generated.packs:
        out.say(f"   {pack.path.relative_to(r.folder)}  ({pack.cards} cases, {pack.rater_id})")
    out.say("   the coordinator publishes the key's hash before scoring, the spec's once "
            "the returns are in:")
    for line in (r.generated.key_line(), r.generated.spec_line()):
        out.say(f"     {line}")
    for warning in r.generated.warnings:  # e.g. an arm id found in a pack's text
        out.say(f"   warning: {warning}")
    out.say(f"2. simulated raters filled copies into {r.folder / 'returns'} "
            f"({counted(len(r.returns), 'file')})")
    report = r.collection.report
    out.say(f"3. collect: {counted(len(report.files), 'file')}, "
            f"{counted(len(r.collection.ratings), 'rating row')}, "
            f"{counted(len(report.issues), 'issue')} (self-check warnings included)")
    for name, path in sorted(r.collection.outputs.items()):
        out.say(f"   {name}: {shown_output(name, path, r.collection)}")
    out.say("4. analyze: seal verified, labels unblinded, plan run")
    _echo_summary(out, r.analysis)
    _echo_decision(out, r.analysis)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(analyze_command)
    group.add_command(demo_command)
