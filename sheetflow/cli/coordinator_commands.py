"""``sheetflow remind``: reminder drafts for raters who have not returned."""

from __future__ import annotations

from pathlib import Path

import click

from ..hints import command_line, typed_words
from ..words import counted
from .common import EXIT_DATA, Days, Output, command, stop_on_spec_drift, typed_params


@command("remind")
@click.option("--min-days", type=Days(), default=3.0, show_default=True,
              help="No reminder to a pack within this many days of its invitation or "
                   "its last reminder, nor (packs sent by hand) of generate writing it.")
@click.option("--now", "now_text", metavar="TIME",
              help="The clock for the sitting-2 hold and overdue (yyyy-mm-dd hh:mm, "
                   "UTC; default now); --min-days never counts past the real time.")
def remind_command(out: Output, directory: Path, min_days: float,
                   now_text: str | None) -> None:
    """Write a reminder draft for each pack that was sent and has not come back.

    The drafts (out/reminders/<rater_id>.eml, unsent, the pack attached again) open
    in a mail program ready to send, or go with 'sheetflow send DIR reminders'. A pack
    never invited (mail.jsonl), one whose invitation is unconfirmed (it may or may not
    have arrived), a sitting-2 pack not yet due, one invited or reminded within
    --min-days and, with no invitation in mail.jsonl (packs sent by hand), one that
    generate wrote within --min-days get none (each is named, with when its reminder
    may go). With a [mail] deadline, each reminder states it (or that it has passed).

    Exits 1 when a pack needs the coordinator beyond the drafts: a file linked to it
    came back and cannot be used (collect's reply draft asks for it again), its rater
    replied but fetch could not save the workbook (named, with why; no reminder), a
    file claims it with no row proving it (named, with the rater to ask whether they
    sent it; no reminder), a file from its rater's address could not be read (named,
    with that file; no reminder), it came back only in messages from another rater's
    address or no rater's, not marked read (named, with what to do: check who sent it,
    then collect --mark-read FILE), its rater has no e-mail address to remind, or it
    is an automated judge's (import-judges fills it; no reminder). Stops with
    exit 3, writing nothing and leaving the earlier drafts as they were, when the spec
    (study.toml, its items or raters) or another sealed input changed after generate,
    as check, status and collect do, when a line of mail.jsonl is no record (a reminder
    recorded there could go again) or a reminder would attach a pack changed after
    generate (not the sha256 the manifest records; each is named). A study sealed by
    sheetflow demo (its secret is public) is warned of: send refuses its drafts.

    Example: sheetflow remind my-study
    """
    from ..collect.coordinator import reimport_step
    from ..collect.next_steps import collect_current, unusable_step
    from ..collect.reminders import remind
    from ..collect.unsaved import replied_text
    from ..packs.seal_check import demo_seal_line
    from .mail_commands import parse_now

    # as status, which it reads the returns through: not against a spec no pack was
    # generated from
    stop_on_spec_drift(directory)
    demo = demo_seal_line(directory)
    if demo:  # its drafts attach packs anyone who runs the demo can unblind (send refuses)
        out.warn(demo)
    # a refusal's hint names the whole command as typed, its --min-days and --now too
    again = command_line("remind", directory,
                         *typed_words(typed_params(click.get_current_context())))
    result = remind(directory, min_days=min_days, now=parse_now(now_text),
                    then=f"run '{again}' again")
    rows, drafts = result.rows, result.drafts
    if result.by_hand:
        when = (f" when generate wrote them ({result.written:%Y-%m-%d %H:%M} UTC)"
                if result.written else "")
        out.say(f"no invitation in mail.jsonl: packs taken as sent by hand{when}")
    for rater, sitting, why in result.skipped:
        out.say(f"no reminder {rater} (sitting {sitting}): {why}", fg="yellow")
    step = unusable_step(directory, collect_current(directory)) if result.unusable else ""
    for rater, sitting, why in result.unusable:  # a judge's is imported again, not asked
        then = reimport_step(rater, directory) if rater in result.judges else step
        out.say(f"no reminder {rater} (sitting {sitting}): a file came back but cannot be "
                f"used ({why}); {then}", fg="red")
    judged = sum(rater in result.judges for rater, _, _ in result.unusable)
    if result.unusable and judged == len(result.unusable):
        step = "import them again with import-judges, as said above"
    elif judged:  # the summary names both: the judges' import and the people's replies
        step = unusable_step(directory, collect_current(directory), judges=True)
    for rater, sitting, why in result.replied:
        out.say(f"no reminder {rater} (sitting {sitting}): {replied_text(why)}", fg="red")
    for rater, sitting, why in result.claimed + result.unread + result.unchecked:
        out.say(f"no reminder {rater} (sitting {sitting}): {why}", fg="red")
    for path in drafts.written:
        out.say(f"draft      {path}")
    for rater in drafts.no_email:
        out.warn(f"{rater} has not returned and has no e-mail address in the raters file; "
                 "remind them yourself")
    for rater in drafts.judges:  # no reminder reaches a program: its outputs are imported
        out.warn(f"{rater} has not returned and no reminder is drafted: "
                 f"{reimport_step(rater, directory, fix=False)}")
    replied = (f"; {len(result.replied)} of them replied with the workbook not saved "
               "(no reminder: ask them as said above)" if result.replied else "")
    replied += (f"; {len(result.claimed)} of them claimed by a file no row proves (no "
                "reminder: ask them as said above)" if result.claimed else "")
    replied += (f"; {len(result.unread)} of them sent a file that could not be read (no "
                "reminder: ask them as said above)" if result.unread else "")
    asked = result.replied + result.claimed + result.unread
    unchecked = (f"{counted(len(result.unchecked), 'pack')} back only from another "
                 "rater's address or no rater's (no reminder: check who sent each, as "
                 "said above)" if result.unchecked else "")
    if rows or result.skipped or asked:
        missing = len(rows) + len(result.skipped) + len(asked)
        out.headline(f"{counted(missing, 'pack')} not returned; "
                     f"{counted(len(drafts.written), 'reminder draft')} written{replied}"
                     f"{'; ' + unchecked if unchecked else ''}", fg="yellow")
    elif result.unusable or unchecked:  # not "every pack has come back"
        unusable = (f"{counted(len(result.unusable), 'pack')} with a file that cannot "
                    f"be used ({step})" if result.unusable else "")
        out.headline(f"no reminders needed; {'; '.join(filter(None, (unusable, unchecked)))}",
                     fg="yellow")
    else:
        out.headline("every pack has come back; no reminders needed", fg="green")
    needs_you = bool(result.unusable or drafts.no_email or drafts.judges or asked
                     or result.unchecked)
    out.json({"ok": not needs_you, "not_returned": [r.to_dict() for r in rows],
              "drafts": [str(p) for p in drafts.written], "no_email": drafts.no_email,
              "judges": drafts.judges,
              "skipped": [{"rater": r, "sitting": s, "why": w}
                          for r, s, w in result.skipped],
              "unusable": [{"rater": r, "sitting": s, "why": w}
                           for r, s, w in result.unusable],
              "replied_not_saved": [{"rater": r, "sitting": s, "why": w}
                                    for r, s, w in result.replied],
              "claimed": [{"rater": r, "sitting": s, "why": w}
                          for r, s, w in result.claimed],
              "unread_from": [{"rater": r, "sitting": s, "why": w}
                              for r, s, w in result.unread],
              "sender_unchecked": [{"rater": r, "sitting": s, "why": w}
                                   for r, s, w in result.unchecked],
              "sent_by_hand": result.by_hand})
    if needs_you:  # the drafts alone do not bring these packs back
        click.get_current_context().exit(EXIT_DATA)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(remind_command)
