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
@click.option("--execution-window", "window", metavar="'START to END'",
              help="The run's UTC window (ISO times) for out/pilot-summary.json.")
def import_judges_command(out: Output, directory: Path, jsonl: Path,
                          returns_dir: Path | None, force: bool, window: str | None) -> None:
    """Check JSONL judge outputs, fill each judge's workbook, write pilot-summary.json.

    The records carry no times: without --execution-window the workbooks are filled
    but out/pilot-summary.json is not written (exit 1).

    \b
    Example: sheetflow import-judges my-study judges.jsonl \\
      --execution-window '2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z'
    """
    from ..judges.importer import JudgeImportError, RecordMismatchError, import_judges

    try:
        result = import_judges(directory, jsonl, returns_dir, force=force, window=window)
    except RecordMismatchError as exc:
        fail(EXIT_DATA, [*exc.lines, f"{len(exc.lines)} mismatch(es); nothing was written. "
                         "Fix the records (or the items file) and import again."])
        return
    except JudgeImportError as exc:
        fail(EXIT_DATA, [str(exc)])
        return
    out.say(f"read {result.records} records, filled {result.answers} answer cells")
    for path in result.files:
        out.say(f"  {path}")
    for gap in result.missing_at:  # file and line, so the gap can be found
        out.warn(f"{gap}: no output; that judge's cells for it stay blank")
    for line in result.ignored:  # once per field: the judge's output it may have been
        out.warn(line)
    for line in result.word_counts:
        out.warn(line)
    if result.summary_path is not None:
        out.say(f"summary    {result.summary_path}")
    for path in result.removed:
        out.say(f"removed    {path} (written before this import, for the workbooks it "
                "replaced; this one writes none, see the warning)")
    out.headline(f"next: sheetflow collect {directory}")
    if result.summary_note:
        out.warn(result.summary_note)
    doc = {"records": result.records, "answers": result.answers,
           "files": [str(p) for p in result.files], "missing": list(result.missing),
           "summary": str(result.summary_path) if result.summary_path else None,
           "removed": [str(p) for p in result.removed],
           "next": f"sheetflow collect {directory}"}
    out.json({"ok": not result.summary_note, **doc})
    if result.summary_note:
        click.get_current_context().exit(EXIT_DATA)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(import_judges_command)
