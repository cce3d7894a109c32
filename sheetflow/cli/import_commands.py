"""``sheetflow import-judges``: automated judges' JSONL outputs as raters."""

from __future__ import annotations

from pathlib import Path

import click

from ..judges import JudgeImportError, RecordMismatchError, import_judges
from . import EXIT_DATA, reports_errors


@click.command("import-judges")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("jsonl", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--returns", "returns_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where to save the filled workbooks (default DIRECTORY/returns).")
@click.option("--force", is_flag=True, help="Replace filled workbooks already there.")
@click.option("--execution-window", "window", metavar="'START to END'",
              help="The run's UTC window (ISO times) for out/pilot-summary.json.")
@reports_errors
def import_judges_command(directory: Path, jsonl: Path, returns_dir: Path | None,
                          force: bool, window: str | None) -> None:
    """Check JSONL judge outputs, fill each judge's workbook, write pilot-summary.json."""
    try:
        result = import_judges(directory, jsonl, returns_dir, force=force, window=window)
    except RecordMismatchError as exc:
        for line in exc.lines:
            click.echo(f"error: {line}", err=True)
        click.echo(f"error: {len(exc.lines)} mismatch(es); nothing was written. Fix the "
                   "records (or the items file) and import again.", err=True)
        raise click.exceptions.Exit(EXIT_DATA) from exc
    except JudgeImportError as exc:
        click.echo(f"error: {exc}", err=True)
        raise click.exceptions.Exit(EXIT_DATA) from exc
    click.echo(f"read {result.records} records, filled {result.answers} answer cells")
    for path in result.files:
        click.echo(f"  {path}")
    for gap in result.missing:
        click.echo(f"warning: no output from {gap}; that rater's cells stay blank", err=True)
    if result.summary_path is not None:
        click.echo(f"summary    {result.summary_path}")
    click.echo(f"next: sheetflow collect {directory}")
    if result.summary_note:
        click.echo(f"warning: {result.summary_note}", err=True)
        raise click.exceptions.Exit(EXIT_DATA)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(import_judges_command)
