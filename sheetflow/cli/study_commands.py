"""``sheetflow init`` and ``sheetflow check``."""

from __future__ import annotations

from pathlib import Path

import click

from ..spec.blinding import study_warnings
from ..study import Study, load_study
from ..templates import DEFAULT_TEMPLATE, init_study, list_templates
from . import reports_errors


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--template", "-t", default=DEFAULT_TEMPLATE, show_default=True,
              help="Which bundled template to start from (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List the bundled templates.")
@reports_errors
def init_command(directory: Path | None, template: str, list_only: bool) -> None:
    """Create a study folder DIRECTORY from a bundled template."""
    if list_only:
        for name, description in list_templates().items():
            click.echo(f"{name:15} {description}")
        return
    if directory is None:
        raise click.UsageError("give a DIRECTORY for the new study, or --list")
    path = init_study(directory, template)
    click.echo(f"created study {path} from template {template!r}")
    click.echo(f"next: edit {path / 'study.toml'}, then run: sheetflow check {path}")


@click.command("check")
@click.argument("directory", type=click.Path(path_type=Path))
@reports_errors
def check_command(directory: Path) -> None:
    """Load and check the study in DIRECTORY; print a summary and its spec hash."""
    study = load_study(directory)
    rubric = study.rubric
    kinds = ", ".join(f"{d.id} ({d.kind})" for d in rubric.dimensions)
    click.echo(f"study      {study.id}: {study.title}")
    click.echo(f"items      {len(study.items)} from {study.items_file}")
    click.echo(f"raters     {len(study.raters)} from {study.raters_file}")
    click.echo(f"design     {_describe_design(study)}")
    click.echo(f"dimensions {len(rubric.dimensions)}: {kinds}")
    if rubric.totals:
        click.echo("totals     " + ", ".join(
            f"{t.id} = {t.method} of {len(t.of)}" for t in rubric.totals))
    click.echo(f"analyses   {', '.join(study.plan.run) or 'none'}")
    click.echo(f"spec hash  {study.hash}")
    for warning in study_warnings(study):
        click.echo(f"warning: {warning}", err=True)
    click.echo("ok")


def _describe_design(study: Study) -> str:
    d = study.design
    parts = [d.kind, f"{len(d.arms)} arms", f"seed {d.seed}"]
    if d.paired:
        parts.append(f"labels {'/'.join(d.labels)} randomised per rater and case")
    if d.shuffle:
        parts.append("item order shuffled per rater")
    if d.batch_size:
        parts.append(f"batches of {d.batch_size}")
    if d.repeats:
        parts.append(f"second sitting of {d.repeats.count} repeats (seed {d.repeats.seed})")
    if d.second_rater:
        parts.append(f"second-rater subset {d.second_rater.fraction:g} by sha256 rank within "
                     f"{' x '.join(d.second_rater.strata)}")
    return ", ".join(parts)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(init_command)
    group.add_command(check_command)
