"""``sheetflow init`` and ``sheetflow check``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import Output, command, stop_on_spec_drift

if TYPE_CHECKING:
    from ..spec.study import Study

DEFAULT_TEMPLATE = "paired-rubric"  # the same as sheetflow.spec.templates.DEFAULT_TEMPLATE


@command("init", directory="new")
@click.option("--template", "-t", default=DEFAULT_TEMPLATE, show_default=True,
              help="Which bundled template to start from (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List the bundled templates.")
def init_command(out: Output, directory: Path, template: str, list_only: bool) -> None:
    """Create a study folder DIRECTORY (default: here) from a bundled template.

    Example: sheetflow init my-study --template keep-known
    """
    from ..spec.templates import init_study, list_templates

    if list_only:
        templates = list_templates()
        for name, description in templates.items():
            out.say(f"{name:15} {description}")
        out.json({"ok": True, "templates": templates})
        return
    path = init_study(directory, template)
    out.headline(f"created study {path} from template {template!r}", fg="green")
    out.say(f"next: edit {path / 'study.toml'}, then run: sheetflow check {path}")
    out.json({"ok": True, "study": str(path), "template": template,
              "next": f"sheetflow check {path}"})


@command("check")
def check_command(out: Output, directory: Path) -> None:
    """Load and check the study in DIRECTORY; print a summary and its spec hash.

    Also says at once when the spec changed after generate, and what to do, and warns
    of a [mail] deadline the [email] body in use does not say, and of a study sealed
    by the demo with its public secret.

    Example: sheetflow check my-study --json
    """
    from ..packs.seal import load_generated_study
    from ..packs.seal_check import demo_seal_line
    from ..spec.study import require_generatable
    from ..spec.study_warnings import study_warnings

    study = load_generated_study(directory)  # a sealed input edited: exit 3, as the spec
    require_generatable(study)
    rubric = study.rubric
    out.say(f"study      {study.id}: {study.title}")
    out.say(f"items      {len(study.items)} from {study.items_file}")
    out.say(f"raters     {len(study.raters)} from {study.raters_file}")
    out.say(f"design     {_describe_design(study)}")
    out.say("dimensions " + f"{len(rubric.dimensions)}: "
            + ", ".join(f"{d.id} ({d.kind})" for d in rubric.dimensions))
    if rubric.totals:
        out.say("totals     " + ", ".join(
            f"{t.id} = {t.method} of {len(t.of)}" for t in rubric.totals))
    out.say(f"analyses   {', '.join(study.plan.run) or 'none'}")
    out.say(f"spec hash  {study.hash}")
    for warning in study_warnings(study):
        out.warn(warning)
    stop_on_spec_drift(directory, study)  # after the summary: what changed is shown
    public = demo_seal_line(directory)
    if public:  # a demo folder about to be sent to real raters
        out.warn(public)
    out.headline("ok", fg="green")
    out.json({"ok": True, **_study_doc(study)})


def _study_doc(study: Study) -> dict[str, Any]:
    return {"study_id": study.id, "title": study.title, "spec_hash": study.hash,
            "items": len(study.items), "raters": len(study.raters),
            "design": _describe_design(study),
            "dimensions": [{"id": d.id, "kind": d.kind} for d in study.rubric.dimensions],
            "analyses": list(study.plan.run)}


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
