"""``sheetflow collect`` and ``sheetflow status``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..collect import Collection, collect, status
from ..returns import escape_controls
from . import EXIT_DATA, reports_errors


@click.command("collect")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@reports_errors
def collect_command(directory: Path, files: tuple[Path, ...], as_json: bool) -> None:
    """Validate returned workbooks FILES (default DIRECTORY/returns) and write out/."""
    result = collect(directory, list(files) or None)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        _summary(result)
    if not result.valid:
        click.get_current_context().exit(EXIT_DATA)


def _summary(result: Collection) -> None:
    report = result.report
    for f in report.files:
        state = "used" if f.used else "NOT USED"
        _line(f"{f.file}: rater {f.rater or '?'}, {f.percent_complete:g}% complete, "
              f"{f.errors} errors, {f.warnings} warnings, {state}")
    for item in report.issues:
        where = ", ".join(x for x in (item.sheet, item.cell) if x)
        _line(f"  {item.severity}: {item.file}{' ' + where if where else ''}: "
              f"[{item.code}] {item.message}")
    click.echo(f"{len(report.files)} files, {len(result.ratings)} rating rows, "
               f"{report.error_count} errors, {report.warning_count} warnings")
    for name, path in sorted(result.outputs.items()):
        click.echo(f"wrote {name}: {path}")


def _line(text: str) -> None:
    """One line about returned files: names and cell text never start another line or
    carry a terminal escape sequence."""
    click.echo(escape_controls(text))


@click.command("status")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@reports_errors
def status_command(directory: Path, as_json: bool) -> None:
    """Per rater: returned or not, percent complete, errors and warnings."""
    rows = status(directory)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2, ensure_ascii=False))
        return
    click.echo(f"{'rater':16} {'sitting':>7} {'returned':>8} {'complete':>8} "
               f"{'errors':>6} {'warnings':>8}  file")
    for r in rows:
        click.echo(f"{r.rater:16} {r.sitting:>7} {'yes' if r.returned else 'no':>8} "
                   f"{r.percent_complete:>7g}% {r.errors:>6} {r.warnings:>8}  {r.file}")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(collect_command)
    group.add_command(status_command)
