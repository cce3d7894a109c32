"""``sheetflow remind``: reminder drafts for raters who have not returned."""

from __future__ import annotations

from pathlib import Path

import click

from .common import Output, command


@command("remind")
def remind_command(out: Output, directory: Path) -> None:
    """Write a reminder draft for each rater whose pack has not come back.

    The drafts (out/reminders/<rater_id>.eml, unsent, the pack attached again) open
    in a mail program ready to send.

    Example: sheetflow remind my-study
    """
    from ..collect.reminders import remind

    rows, drafts = remind(directory)
    for path in drafts.written:
        out.say(f"draft      {path}")
    for rater in drafts.no_email:
        out.warn(f"{rater} has not returned and has no e-mail address in the raters file; "
                 "remind them yourself")
    if rows:
        out.headline(f"{len(rows)} pack(s) not returned; {len(drafts.written)} reminder "
                     "draft(s) written", fg="yellow")
    else:
        out.headline("every pack has come back; no reminders needed", fg="green")
    out.json({"ok": True, "not_returned": [r.to_dict() for r in rows],
              "drafts": [str(p) for p in drafts.written], "no_email": drafts.no_email})


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(remind_command)
