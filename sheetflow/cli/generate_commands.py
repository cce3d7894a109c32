"""``sheetflow generate`` and ``sheetflow verify``."""

from __future__ import annotations

from pathlib import Path

import click

from ..generate import generate_packs
from ..seal import verify_seal
from . import EXIT_DATA, reports_errors


@click.command("generate")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write packs/ and sealed/ here instead of the study folder.")
@click.option("--eml", "emails", is_flag=True,
              help="Also write one ready-to-send .eml draft per pack in packs/eml/.")
@click.option("--force", is_flag=True,
              help="Replace a seal made for a different version of the spec.")
@reports_errors
def generate_command(directory: Path, out: Path | None, emails: bool, force: bool) -> None:
    """Write one locked workbook per rater, the blinded manifest and the sealed key."""
    result = generate_packs(directory, out, emails=emails, force=force)
    for pack in result.packs:
        sitting = " (sitting 2: send at least 24 h after sitting 1 is returned)" \
            if pack.sitting == 2 else ""
        click.echo(f"pack       {pack.path.name}: {pack.cards} cases for {pack.rater_id}"
                   f"{sitting}")
    click.echo(f"manifest   {result.manifest_path.name} (blinded; collect uses it)")
    apart = sum(p.parent.name.startswith("sitting-") for p in result.eml_paths)
    click.echo(f"mailing    {result.mailing_list_path.name}"
               + (f", {len(result.eml_paths)} .eml drafts" if emails else "")
               + (f" ({apart} for sitting 2 apart in eml/sitting-2/)" if apart else ""))
    click.echo("sealed     key.json, key.sha256, plan.lock.json (keep key.json private)")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo("publish these hashes:")
    for line in result.hash_lines():
        click.echo(f"  {line}")


@click.command("verify")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The folder holding sealed/ when it is not the study folder.")
@click.option("--key-sha256", "published", default=None, metavar="HEX",
              help="The key hash published before scoring, to compare with the key.")
@reports_errors
def verify_command(directory: Path, out: Path | None, published: str | None) -> None:
    """Check the sealed key against its published hash and the spec against the lock."""
    check = verify_seal(directory, out, published=published)
    if not check.ok:
        for problem in check.problems:
            click.echo(f"error: {problem}", err=True)
        click.get_current_context().exit(EXIT_DATA)
    click.echo(f"key sha256  {check.key_sha256}")
    click.echo(f"spec hash   {check.spec_hash}")
    click.echo("seal ok")


@click.command("lock")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@reports_errors
def lock_command(directory: Path) -> None:
    """Draw the second-rater subset from completed items and generate its packs (002)."""
    from ..second_rater import lock_second_rater

    result = lock_second_rater(directory)
    if result.already:
        click.echo(f"already locked: {len(result.selected)} items in "
                   f"{result.selection_path.name}; nothing changed")
        return
    click.echo(f"completed  {len(result.completed)} items (every primary rater scored them)")
    click.echo(f"selected   {len(result.selected)}: {', '.join(result.selected)}")
    for pack in result.packs:
        click.echo(f"pack       {pack.name} (second rater)")
    click.echo(f"sealed     {result.selection_path.name} (+ .sha256)")
    click.echo("publish the new key hash beside the one published before the lock:")
    click.echo(f"  {result.key_sha256_before}  key.json before the lock")
    click.echo(f"  {result.key_sha256}  key.json after the lock")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(generate_command)
    group.add_command(lock_command)
    group.add_command(verify_command)
