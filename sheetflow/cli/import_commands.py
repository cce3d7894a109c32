"""``sheetflow import-judges``: automated judges' JSONL outputs as raters."""

from __future__ import annotations

from pathlib import Path

import click

from .common import EXIT_DATA, Output, command, fail


@command("import-judges")
@click.argument("jsonl", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--returns", "returns_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where to save the filled workbooks (default DIRECTORY/returns).")
@click.option("--force", is_flag=True, help="Replace filled workbooks already there.")
def import_judges_command(out: Output, directory: Path, jsonl: Path,
                          returns_dir: Path | None, force: bool) -> None:
    """Fill each judge's workbook from JSONL judge outputs, ready for collect.

    Example: sheetflow import-judges my-study judges.jsonl
    """
    from ..judges import JudgeImportError, import_judges

    try:
        result = import_judges(directory, jsonl, returns_dir, force=force)
    except JudgeImportError as exc:
        fail(EXIT_DATA, [str(exc)])
        return
    out.say(f"read {result.records} records, filled {result.answers} answer cells")
    for path in result.files:
        out.say(f"  {path}")
    for gap in result.missing:
        out.warn(f"no output from {gap}; that rater's cells stay blank")
    out.headline(f"next: sheetflow collect {directory}")
    out.json({"ok": True, "records": result.records, "answers": result.answers,
              "files": [str(p) for p in result.files], "missing": list(result.missing),
              "next": f"sheetflow collect {directory}"})


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(import_judges_command)
