"""``sheetflow analyze`` and ``sheetflow demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..analysis import Analysis, analyze
from ..demo import DemoResult, run_demo
from ..outputs import study_lock
from ..report import headline_lines, write_analysis_outputs
from . import EXIT_DATA, reports_errors


@click.command("analyze")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--allow-partial", is_flag=True,
              help="Exit 0 even when raters are missing (the decision stays 'incomplete').")
@reports_errors
def analyze_command(directory: Path, allow_partial: bool) -> None:
    """Unseal the key, unblind the collected ratings and run the study's analysis plan.

    Writes out/analysis.xlsx and out/summary.json (and the protocol's other files, e.g.
    out/verdicts.jsonl for a KEEP/KNOWN study) in DIRECTORY. Exits 1 when the panel is
    incomplete (a rater missing or a file left out), unless --allow-partial.
    """
    with study_lock(directory, "analyze"):  # no collect replaces the table meanwhile
        analysis = analyze(directory)
        written = write_analysis_outputs(analysis, directory / "out")
    _echo_summary(analysis)
    for path in written:
        click.echo(f"wrote {path}")
    _echo_decision(analysis)
    if analysis.summary["decision"]["status"] == "incomplete" and not allow_partial:
        click.get_current_context().exit(EXIT_DATA)


def _echo_summary(analysis: Analysis) -> None:
    s = analysis.summary
    click.echo(f"study      {s['study_id']}: {s['n_raters']} raters, {s['n_cases']} cases")
    click.echo(f"key        sha256 {s['key_sha256']} (seal verified)")
    for rec in s.get("alpha", []):
        click.echo(f"alpha      {rec['measure']:14} {_num(rec['alpha'])} "
                   f"[{_num(rec['ci_low'])}, {_num(rec['ci_high'])}] "
                   f"{rec['band'] or rec['reason']}")
    for check in s["decision"]["checks"]:
        target = f" (target {check['target']:g})" \
            if isinstance(check["target"], (int, float)) else ""
        note = f" - {check['note']}" if check.get("note") else ""
        click.echo(f"check      {check['name']}: {_num(check['value'])}{target} "
                   f"{check['outcome']}{note}")


def _echo_decision(analysis: Analysis) -> None:
    """The headline, last: decision, panel, arms (the same words as the Summary sheet)."""
    for line in headline_lines(analysis.summary):
        click.echo(line)


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


@click.command("demo")
@click.argument("directory", required=False, default="sheetflow-demo",
                type=click.Path(file_okay=False, path_type=Path))
@reports_errors
def demo_command(directory: Path) -> None:
    """Run the whole loop on the bundled sample study with four simulated raters.

    DIRECTORY (default ./sheetflow-demo) must be new or empty.
    """
    result = run_demo(directory)
    _tour(result)


def _tour(r: DemoResult) -> None:
    click.echo(f"demo study  {r.folder} (18 real prompt/response pairs from the PandaLM "
               "test set; see README.md there)")
    click.echo("1. generate: one locked workbook per rater, a blinded manifest, a sealed key")
    for pack in r.generated.packs:
        click.echo(f"   {pack.path.relative_to(r.folder)}  ({pack.cards} cases, {pack.rater_id})")
    click.echo("   the coordinator publishes these hashes before scoring:")
    for line in r.generated.hash_lines():
        click.echo(f"     {line}")
    click.echo(f"2. simulated raters filled copies into {r.folder / 'returns'} "
               f"({len(r.returns)} files)")
    report = r.collection.report
    click.echo(f"3. collect: {len(report.files)} files, {len(r.collection.ratings)} rating rows, "
               f"{len(report.issues)} issues (self-check warnings included)")
    for name, path in sorted(r.collection.outputs.items()):
        click.echo(f"   {name}: {path}")
    click.echo("4. analyze: seal verified, labels unblinded, plan run")
    _echo_summary(r.analysis)
    _echo_decision(r.analysis)
    click.echo(f"   analysis workbook: {r.workbook}")
    click.echo(f"   summary:           {r.summary_json}")
    click.echo(f"next: open {r.workbook}")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(analyze_command)
    group.add_command(demo_command)
