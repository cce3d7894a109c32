"""``sheetflow collect`` and ``sheetflow status``."""

from __future__ import annotations

from itertools import groupby
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..words import counted, first_few, interval_said
from .common import EXIT_DATA, Output, command, stop_on_spec_drift, warn_demo_seal

if TYPE_CHECKING:
    from ..collect.coordinator import RosterRow
    from ..collect.pack_status import RaterStatus
    from ..collect.run import Collection


@command("collect")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--mark-read", "mark_read", multiple=True, metavar="FILE",
              help="You have read the text sheetflow does not read in return FILE, or "
                   "checked who sent it when its message came from another rater's "
                   "address, from no rater's or with no single sender (FILE as collect "
                   "lists it; repeatable): "
                   "recorded with its sha256 in text-read.json, its issues are marked "
                   "read and no longer make the exit code 1 (a new version of the file "
                   "is unread again).")
def collect_command(out: Output, directory: Path, files: tuple[Path, ...],
                    mark_read: tuple[str, ...]) -> None:
    """Validate returned workbooks FILES (default DIRECTORY/returns) and write out/.

    Writes out/ratings.csv, out/validation.xlsx (Status, Issues, Mail and Files sheets) and a reply
    draft per rater whose file has errors (out/feedback/). Exits 1 when a file has
    errors, a return used holds text sheetflow does not read (outside the answer cells
    or the scoring area, on a sheet added, in a cell comment or a text box, in a document
    property, a header or footer or a customXml part), or came in a message from another
    rater's address or from no rater's, not marked read with --mark-read, a pack has
    not come back, a reply draft was left out because the pack it would attach changed
    after generate, or a line of mail.jsonl is no record (each
    is named; such lines are also recorded in out/collection.json and shown above the
    Status and Mail sheets' tables). Exits 2, writing nothing, when a --mark-read FILE
    is not in returns/ or has nothing to mark read.

    Example: sheetflow collect my-study --mark-read R1.xlsx
    """
    from ..collect.mail_state import COLLECT_RISK
    from ..collect.outputs import again, retired_line, table_replaced
    from ..collect.run import collect
    from ..packs.journal import damaged_journal

    stop_on_spec_drift(directory)
    progress = out.progress("checking returns")
    result = collect(directory, list(files) or None, progress=progress,
                     mark_read=mark_read)
    progress.close()
    _summary(out, result, directory)
    if result.removed:  # the analysis of the table this collect replaced
        out.warn(retired_line(directory, result.removed, table_replaced(directory)))
    if result.journal_damaged:  # a sender, a received time or a reply went unseen
        out.warn(damaged_journal(result.journal_damaged, risk=COLLECT_RISK,
                                 then=again("collect", directory)))
    unread = result.report.unread_text_files()  # a rater's words nobody has read yet
    senders = result.report.unchecked_sender_files()  # perhaps returned for someone else
    ok = (result.valid and not any(r.state == "missing" for r in result.roster)
          and not result.journal_damaged and not result.feedback.changed and not unread
          and not senders)
    # "warnings" counts the Issues sheet's warnings (kept for compatibility): the lines
    # printed on stderr apart
    out.json({"ok": ok, **result.to_dict(), "unread_text": unread,
              "unchecked_sender": senders, "text_read": result.report.text_read_files(),
              "warning_lines": list(out.warnings)})
    if not ok:
        click.get_current_context().exit(EXIT_DATA)


def unread_text_count(returns: int) -> str:
    """``"2 returns hold text sheetflow does not read"``."""
    return (f"{counted(returns, 'return')} hold{'s' if returns == 1 else ''} text "
            "sheetflow does not read")


def left_out_count(files: int) -> str:
    """``"2 files left out beside their rater's return used (remove them from
    returns/)"``: files that could not be read, whose rater's workbook is in."""
    them = "it" if files == 1 else "them"
    return (f"{counted(files, 'file')} left out beside {'its' if files == 1 else 'their'} "
            f"rater's return used (remove {them} from returns/)")


def claims_count(files: int) -> str:
    """``"2 files claim a pack no row proves (ask the raters they name whether they sent
    them)"``: ``claim-unproven`` files, each named above with its rater."""
    if files == 1:
        return ("1 file claims a pack no row proves (ask the rater it names whether they "
                "sent it)")
    return (f"{counted(files, 'file')} claim a pack no row proves (ask the raters they "
            "name whether they sent them)")


def unchecked_sender_count(returns: int) -> str:
    """``"2 returns came from another rater's address, from no rater's or with no single
    sender"``."""
    return (f"{counted(returns, 'return')} came from another rater's address, from no "
            "rater's or with no single sender")


def text_read_count(returns: int) -> str:
    """``"2 returns marked read (text-read.json)"``: their unread text acknowledged."""
    return f"{counted(returns, 'return')} marked read (text-read.json)"


def _not_returned_steps(missing: list[RosterRow], no_reminder: list[str], directory: Path) -> str:
    """What brings the packs not returned back: remind's drafts for people, those not
    reminded (``no_reminder``), and import-judges for automated judges (protocol 004),
    whose workbooks are filled from their outputs, never mailed or reminded."""
    from ..hints import command_line, import_judges_line
    from ..spec.study import judge_rater_ids, load_study

    judges = judge_rater_ids(load_study(directory))
    judged = sum(r.rater_id in judges for r in missing)
    steps = list(no_reminder)
    if judged < len(missing):
        steps.insert(0, f"'{command_line('remind', directory)}' drafts reminders for "
                        "those due")
    fill = f"{import_judges_line(directory)} fills them from their outputs"
    if judged:
        steps.append(f"{judged} of them automated judges: no reminder; {fill}"
                     if judged < len(missing) else f"automated judges: {fill}")
    return "; ".join(steps)


def _summary(out: Output, result: Collection, directory: Path) -> None:
    from ..collect.coordinator import reimport_step
    from ..collect.drafts import reply_left_out
    from ..collect.links import (
        NOT_READ_WHAT,
        UNREAD_WHAT,
        claimed_todo,
        claims_on,
        copied_from,
        disowned,
        left_out_what,
        not_read,
        unread_count,
        unread_from,
        unread_from_text,
        unread_note,
        unread_stranger,
    )
    from ..collect.returns import escape_controls
    from ..collect.unsaved import REPLIED
    from ..collect.validate import left_out_files
    from ..hints import command_line

    report = result.report
    read = report.originals()
    unread = [f for f in report.files if unread_stranger(f, report.issues)]
    left_out = left_out_files(report.issues)  # their rater's workbook is in
    for f in report.files:
        state = "used" if f.used else "NOT USED"
        original = read.get(f.sha256) if not f.pack_id else None
        # a copy of a file identified as no pack is no stranger's file either
        copy = copied_from(f, report.files, report.issues) \
            if not f.pack_id and original is None else None
        pct = f.percent_complete
        done = "answers not read" if pct is None else f"{pct:g}% complete"
        who = (f"rater {f.rater}, {done}" if f.pack_id
               else f"{left_out_what(f, report.issues)}, left out" if f.file in left_out
               else f"an exact copy of {original.file} (rater {original.rater}), read once"
               if original is not None
               else f"an exact copy of {copy.file}, read once" if copy is not None
               else disowned(f, report.issues) or f.link
               or (UNREAD_WHAT if f in unread else NOT_READ_WHAT
                   if not_read(f, report.issues) else "rater unknown (not a pack of this study)"))
        out.say(escape_controls(f"{f.file}: {who}, {counted(f.errors, 'error')}, "
                                f"{counted(f.warnings, 'warning')}, {state}"),
                fg="red" if f.errors else ("yellow" if f.warnings else None))
    sheet = result.outputs.get("validation", "out/validation.xlsx")
    # the damaged journal's issue is said once, as the warning the command ends with
    listed = result.file_issues
    for file, issues in groupby(listed, key=attrgetter("file")):
        issues = list(issues)
        shown = _shown_issues(issues)
        for item in shown:
            where = ", ".join(x for x in (item.sheet, item.cell) if x)
            # names and cell text never start another line or carry a terminal escape
            read = f" ({item.read})" if item.read else ""
            out.say(escape_controls(f"  {item.severity}: {item.file}"
                                    f"{' ' + where if where else ''}: [{item.code}] "
                                    f"{item.message}{read}"))
        if len(shown) < len(issues):
            out.say(escape_controls(f"  ... and {_more(issues, shown)} for {file}: every "
                                    f"one is on the Issues sheet of {sheet}"))
    missing = [r for r in result.roster if r.state == "missing"]
    pack_ids = {(h.rater_id, h.sitting): h.pack_id for h in result.heads}
    # a file claims the pack: its rater is asked, not reminded (as the Status sheet says)
    claimed = {(r.rater_id, r.sitting): claims_on(pack_ids.get((r.rater_id, r.sitting), ""),
                                                  report.issues) for r in missing}
    # an unreadable file from the rater's address may be this pack (as remind says)
    sent = {r.rater_id: unread_from(r.rater_id, report.files, report.issues) for r in missing}
    for r in missing:
        contact = ", ".join(x for x in (r.name, r.email) if x)
        replied = f"; {r.todo}" if r.todo.startswith(REPLIED) else ""
        files = claimed[(r.rater_id, r.sitting)]
        if not replied and files:
            replied = f"; {claimed_todo(r.rater_id, files)}"
        elif not replied and sent[r.rater_id]:  # it may be this pack: ask, no reminder
            replied = f"; {unread_from_text(sent[r.rater_id])}"
        out.say(escape_controls(f"not returned: {r.rater_id}"
                                f"{f' ({contact})' if contact else ''}, pack {r.pack}"
                                f"{replied}"), fg="red" if replied else "yellow")
    unusable = [r for r in result.roster if r.state in ("unusable", "unclear")]
    for r in unusable:
        label = "returned unusable" if r.state == "unusable" else "unusable, unclear whose"
        out.say(escape_controls(f"{label}: {r.rater_id or r.file}: {r.todo}"), fg="red")
    for f in unread:  # no reply is drafted to nobody: the coordinator finds the sender
        out.say(escape_controls(f"{f.file}: {unread_note(f)}"), fg="red")
    for name, path in sorted(result.outputs.items()):
        out.say(f"wrote {name}: {shown_output(name, path, result)}")
    for path in result.feedback.written:
        out.say(f"reply draft: {path}")
    for rater in result.feedback.no_email:
        out.warn(f"{rater}'s file has errors and the raters file has no e-mail address "
                 "for them; send them the list on the Issues sheet")
    for rater in result.feedback.judges:  # no reply reaches a program: import again
        out.warn(f"{rater}'s file has errors and no reply is drafted: "
                 f"{reimport_step(rater, directory)}")
    for rater, _, pack in result.feedback.changed:
        out.warn(reply_left_out(rater, pack, directory))
    expected = len(result.roster) - sum(r.state == "unknown" for r in result.roster)
    replied = sum(r.todo.startswith(REPLIED) for r in missing)  # no reminder for them
    asked = sum(bool(claimed[(r.rater_id, r.sitting)]) and not r.todo.startswith(REPLIED)
                for r in missing)
    unread_sent = sum(bool(sent[r.rater_id]) and not claimed[(r.rater_id, r.sitting)]
                      and not r.todo.startswith(REPLIED) for r in missing)
    no_reminder = [f"{n} of them {why}: no reminder" for n, why in (
        (replied, "replied, workbook not saved"), (asked, "claimed by a file no row proves"),
        (unread_sent, "with an unreadable file from their address")) if n]
    tail = (f"; {len(missing)} of {expected} packs not returned "
            f"({_not_returned_steps(missing, no_reminder, directory)})" if missing else "")
    tail += f"; {len(unusable)} with a file that cannot be used" if unusable else ""
    tail += f"; {unread_count(len(unread))}" if unread else ""
    tail += f"; {left_out_count(len(left_out))}" if left_out else ""
    texts = report.unread_text_files()
    mark = command_line("collect", directory, "--mark-read", "FILE")
    tail += f"; {unread_text_count(len(texts))}: read it in the files named above" \
        f" (then '{mark}')" if texts else ""
    # every return of a pack whose sender warning is named above, used or not (exit 1
    # comes from the used ones; the others have errors or were set aside)
    senders = report.unchecked_sender_files(used_only=False)
    tail += f"; {unchecked_sender_count(len(senders))}: check who sent each, named above" \
        f" (then '{mark}')" if senders else ""
    tail += f"; {text_read_count(len(report.text_read_files()))}" \
        if report.text_read_files() else ""
    aside = report.set_aside_error_count
    errors = counted(report.error_count, 'error') + (
        f" ({aside} in files set aside for the rater's newer one)" if aside else "")
    # the files' counts above do not add up to it: say which warning is not a file's
    warnings = counted(report.warning_count, 'warning') + (
        " (one of them about mail.jsonl, below)" if result.journal_issue is not None
        else "")
    out.headline(f"{counted(len(report.files), 'file')}, "
                 f"{counted(len(result.ratings), 'rating row')}, {errors}, "
                 f"{warnings}{tail}",
                 fg="red" if not report.valid else
                 ("yellow" if missing or result.journal_damaged or texts or senders
                  else "green"))


_STATUS_JOURNAL_RISK = (
    "status read the returns and the mail without what it recorded, so the table may show "
    "a message recorded there (an invitation, a reminder, a reply) as never sent and a "
    "reply as still to send; and, as in collect, {fetched}, so a file may be counted "
    "without its sender warning, and a rater's two files may show as rivals, neither "
    "used, where the newer one sent after a reply would stand")


@command("status")
@click.option("--agreement", is_flag=True,
              help="Also Krippendorff's alpha per dimension on the ratings collected so far, "
                   "and each rater's leave-one-out change, from the blinded ratings alone "
                   "(the key stays sealed; no arm is shown).")
def status_command(out: Output, directory: Path, agreement: bool) -> None:
    """Per rater: returned or not, percent complete, errors and warnings.

    Reads the returns without writing anything. Exits 0 only when every pack has come
    back without errors and out/ is current; else 1 (a pack not returned, a file with
    errors or one that could not be read or identified, a return used holding text
    sheetflow does not read or carried by a message from another rater's address or from
    no rater's, not marked read, a file in returns/ the last
    collect did not read (new or changed since, or no collect yet): collect is next,
    out/ needing a rerun; a line of mail.jsonl that is no record, named in a warning with
    what the table may show wrongly for it; a second rater whose pack lock has still to
    write). Exits 3, showing no table, when the spec
    (study.toml, its items or raters) changed after generate, as check and collect do.
    A study sealed by sheetflow demo (its secret is public) is warned of.

    Example: sheetflow status my-study --agreement --json
    """
    from ..collect.links import unread_count, unread_from_text
    from ..collect.mail_state import FETCHED_RISK, short_time
    from ..collect.next_steps import replies_step, sender_step, unusable_step
    from ..collect.outputs import again, check_run
    from ..collect.pack_status import status_report
    from ..collect.reminders import unconfirmed_invitation
    from ..collect.returns import escape_controls
    from ..collect.unsaved import replied_text
    from ..hints import command_line
    from ..packs.journal import damaged_journal
    from ..spec.study import judge_rater_ids, load_study

    # as check and collect: the returns would be read against a spec no pack was
    # generated from, so the table could show errors the raters never made
    stop_on_spec_drift(directory)
    warn_demo_seal(out, directory)
    if agreement:  # before the table: without ratings there is nothing to add to it
        from ..collect.agreement import check_collected

        check_collected(directory)
    report = status_report(directory)
    rows = report.packs
    width = max([len(r.name) for r in rows] + [4])
    out.say(f"{'rater':16} {'name':{width}} {'sitting':>7} {'returned':>8} {'complete':>8} "
            f"{'errors':>6} {'warnings':>8}  file returned (or the pack)", bold=True)
    for r in rows:
        colour = ("red" if r.errors or r.unusable or r.mail.overdue or r.unread_from
                  else "green" if r.returned else "yellow")
        shown = r.returned_file if r.returned else f"(not returned; {_pack_sent(r)})"
        if r.unread_from:  # it may be among them: not "not returned" alone
            shown = f"(not returned; {unread_from_text(list(r.unread_from))}; {_pack_sent(r)})"
        if r.mail.not_saved:  # they replied: no "not returned" as if they had not
            shown = f"({replied_text(r.mail.not_saved)}; {_pack_sent(r)})"
        if r.other_files:  # two files as one pack: only one can be used
            shown += f" and {', '.join(r.other_files)} (DIFFERENT FILES for one pack)"
        shown += f" (UNUSABLE: {r.unusable})" if r.unusable else ""
        # a pack not back, or a file whose answers were not read: no "0% complete"
        complete = "-" if r.percent_complete is None else f"{r.percent_complete:g}%"
        out.say(f"{r.rater:16} {r.name:{width}} {r.sitting:>7} "
                f"{'yes' if r.returned else 'no':>8} {complete:>8} "
                f"{r.errors:>6} {r.warnings:>8}  {shown}", fg=colour)
        history = r.mail
        mail = [f"{label} {short_time(t)}" for label, t in (
            ("invited", history.invited), ("received", history.returned),
            ("reply sent", history.reply_sent)) if t]
        if history.invitation_unconfirmed:
            mail.append(unconfirmed_invitation(r.rater, history.invitation_unconfirmed,
                                               directory))
        mail += [f"reminded {short_time(t)}" for t in history.reminded]
        mail += ["OVERDUE"] * history.overdue + [history.held] * bool(history.held)
        if mail:
            out.say(f"{'':16} {'':{width}} {'':>7} {'; '.join(mail)}")
    returned = sum(r.returned for r in rows)
    unusable = [r for r in rows if r.unusable]
    mixed = check_run(directory)
    current = not report.not_collected and report.collected
    # an automated judge's file is imported again: no reply is drafted to a program
    judges = judge_rater_ids(load_study(directory)) if unusable else frozenset()
    judged = sum(r.rater in judges for r in unusable)
    step = unusable_step(directory, current, people=judged < len(unusable),
                         judges=bool(judged))
    tail = f"; {len(unusable)} with a file that cannot be used ({step})" if unusable else ""
    for u in report.unmatched:  # a file no pack row shows: collect reports it too
        if u.left_out:  # its rater's workbook is in: nothing to ask them
            out.say(escape_controls(f"{u.file}: {u.left_out}"), fg="red")
            out.say(escape_controls(f"  error: {u.file}: {u.reason}"))
            continue
        if u.unread:  # it may be a pack of this study: what to do, then its error
            out.say(escape_controls(f"{u.file}: {u.unread}"), fg="red")
            out.say(escape_controls(f"  error: {u.file}: {u.reason}"))
            continue
        what = u.disowned or "matches no pack of this study"
        out.say(escape_controls(f"{u.file}: {what}: {u.reason}"),
                fg="red" if u.errors else "yellow")
    unread = [u for u in report.unmatched if u.unread]
    # a claim no row proves is no stranger's: its rater is asked whether they sent it
    claims = [u for u in report.unmatched if u.ask and not u.unread and not u.left_out]
    strangers = [u for u in report.unmatched
                 if u.errors and not u.unread and not u.left_out and u not in claims]
    tail += f"; {unread_count(len(unread))} (find out who sent it)" if unread else ""
    aside = [u for u in report.unmatched if u.left_out]
    tail += f"; {left_out_count(len(aside))}" if aside else ""
    # a readable file of another study: collecting again changes nothing about it
    them = "it" if len(strangers) == 1 else "them"
    tail += (f"; {counted(len(strangers), 'file')} matching no pack (remove {them} from "
             f"returns/, or find out who sent {them})" if strangers else "")
    tail += f"; {claims_count(len(claims))}" if claims else ""
    stale, damaged, texts = report.not_collected, report.journal_damaged, report.unread_text
    senders = report.unchecked_sender
    tail += f"; {unread_text_count(len(texts))}" if texts else ""
    warned = report.sender_warned  # as collect counts them: used or not
    tail += f"; {unchecked_sender_count(len(warned))}" if warned else ""
    tail += f"; {text_read_count(len(report.text_read))}" if report.text_read else ""
    # 002's second raters before the lock: in the panel, in no pack row yet, so
    # "1 of 1 packs returned" alone would read as the whole panel back
    waiting = report.awaiting_lock
    tail += (f"; {counted(len(waiting), 'rater')} without a pack yet "
             f"({', '.join(waiting)}: written at lock)" if waiting else "")
    out.headline(f"{returned} of {len(rows)} packs returned{tail}",
                 fg="red" if unusable or strangers or claims or unread or aside
                 else "green"
                 if returned == len(rows) and not (mixed or stale or damaged or texts
                                                   or senders or report.reply_drafts
                                                   or waiting)
                 else "yellow")
    for rater, step in waiting.items():
        out.say(f"{rater}: {step}", fg="yellow")
    if texts:  # a rater's words nobody has read yet: which files hold them
        out.say(f"text sheetflow does not read is in {', '.join(texts)}: read it in those "
                "files (the Issues sheet of out/validation.xlsx, which collect writes, "
                "names each place), then "
                f"'{command_line('collect', directory, '--mark-read', 'FILE')}'",
                fg="yellow")
    if warned:  # the one sign that someone returned a workbook for someone else
        out.say(f"{', '.join(warned)} came in a message from another rater's address, from "
                f"no rater's or with no single sender: {sender_step(directory)}",
                fg="yellow")
    if stale:  # out/ is not what the returns now say
        out.say(_not_collected_line(stale, report.collected, directory), fg="yellow")
    for problem in mixed:
        out.warn(problem)
    for problem in report.reply_drafts:  # send replies refuses them
        out.warn(problem)
    if damaged:  # the mail history and the returns as collect reads them may be wrong
        out.warn(damaged_journal(damaged, risk=_STATUS_JOURNAL_RISK.format(
            fetched=FETCHED_RISK), then=again("status", directory)))
    with_errors = [r for r in rows if r.errors and r.returned and not r.unusable]
    held = [r for r in with_errors if r.reply_due and r.reply_held]
    due = sum(r.reply_due for r in with_errors) - len(held)
    for r in held:  # send replies would not send it: the rater would never hear
        out.say(f"no reply to {r.rater} (sitting {r.sitting}): {r.reply_held}", fg="red")
    if due:
        out.say(f"{counted(due, 'returned pack')} with errors: "
                f"{replies_step(directory, current)}", fg="red")
    if len(with_errors) > due + len(held):  # the journal shows the reply went after it
        out.say(f"{counted(len(with_errors) - due - len(held), 'returned pack')} with errors: the "
                "reply asking for fixes was sent (mail.jsonl); waiting for the corrected "
                "file", fg="yellow")
    done = (returned == len(rows) and not with_errors and not unusable and not mixed
            and not stale and not strangers and not claims and not unread and not aside
            and not damaged
            and not texts
            and not senders and not report.reply_drafts
            and not waiting)  # the panel is not back while a pack is still to write
    doc: dict[str, Any] = {"ok": done, "raters": [r.to_dict() for r in rows],
                           "unmatched": [u.to_dict() for u in report.unmatched],
                           "unread_text": texts, "unchecked_sender": senders,
                           "text_read": report.text_read,
                           "out_mixed": mixed, "not_collected": stale,
                           "journal_damaged": damaged,
                           "reply_drafts": report.reply_drafts,
                           "awaiting_lock": waiting}
    if agreement:
        doc["agreement_note"], doc["agreement"] = _agreement_lines(out, directory)
    out.json(doc)
    if not done:  # the table is still worth reading; the exit code says work remains
        click.get_current_context().exit(EXIT_DATA)


def _not_collected_line(names: list[str], collected: bool, directory: Path) -> str:
    """One line: the files of returns/ collect has not read, and that it runs next."""
    from ..hints import command_line

    shown = first_few(names)
    when = "new or changed since the last collect" if collected else "not collected yet"
    return (f"{counted(len(names), 'file')} in returns/ {when} ({shown}): out/ is not "
            f"current; '{command_line('collect', directory)}' is the next step")


def _pack_sent(row: RaterStatus) -> str:
    """The pack of a row not returned, and whether ``send`` sent it."""
    from ..collect.mail_state import short_time

    if row.mail.invited:
        return f"pack {row.file} sent {short_time(row.mail.invited)}"
    if row.mail.invitation_unconfirmed:
        return f"pack {row.file}, its invitation unconfirmed"
    # the journal knows only what sheetflow sent: a pack mailed by hand is not in it
    return f"pack {row.file}, not sent by sheetflow"


def _agreement_lines(out: Output, directory: Path) -> tuple[str, list[dict[str, Any]]]:
    """Print the agreement preview (its note first); the note and each measure's dict."""
    from ..collect.agreement import PREVIEW_NOTE, blinded_agreement
    from ..spec.study import load_study

    found = blinded_agreement(directory)
    plan = load_study(directory).plan
    note = PREVIEW_NOTE.format(n_boot=plan.n_boot, seed=plan.seed)
    out.say(f"agreement  {note}")
    for dim in found:
        if dim.alpha is None:
            out.say(f"agreement  {dim.dimension:22} {dim.reason}")
            continue
        line = (f"agreement  {dim.dimension:22} alpha {dim.alpha:.3f} "
                f"{interval_said(_num(dim.ci_low), _num(dim.ci_high))} ({dim.level}; {dim.n_units} "
                f"units, {dim.n_raters} raters)")
        line += f"; {dim.reason}" if dim.reason else ""  # why the interval is n/a
        if dim.raises_most:
            line += (f"; without {dim.raises_most} it rises most "
                     f"({dim.leave_one_out[dim.raises_most]:+.3f})")
        out.say(line)
    return note, [d.to_dict() for d in found]


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(collect_command)
    group.add_command(status_command)


SHOWN_PER_FILE = 20
"""Issue lines a file gets on the screen; a blank pack sent back has hundreds, and the
Issues sheet (and ``--json``) has every one."""


def _shown_issues(issues: list[Any]) -> list[Any]:
    """A file's issues as the screen lists them: all in reading order when they fit in
    :data:`SHOWN_PER_FILE` lines, else the first that many with the errors first."""
    if len(issues) <= SHOWN_PER_FILE:
        return issues
    errors_first = sorted(issues, key=lambda i: i.severity != "error")  # stable
    return errors_first[:SHOWN_PER_FILE]


def _more(issues: list[Any], shown: list[Any]) -> str:
    """``"326 more errors"``, ``"3 more (1 error, 2 warnings)"``: the issues not shown."""
    errors = sum(i.severity == "error" for i in issues) - \
        sum(i.severity == "error" for i in shown)
    warnings = len(issues) - len(shown) - errors
    if not warnings or not errors:
        return counted(errors or warnings, "more error" if errors else "more warning")
    return (f"{errors + warnings:,} more ({counted(errors, 'error')}, "
            f"{counted(warnings, 'warning')})")


def shown_output(name: str, path: str, result: Collection) -> str:
    """An output's path as collect lists it, with what it holds where that can be none
    (an empty folder is not a draft, a header is not a table)."""
    if name == "feedback":
        return f"{path} ({counted(len(result.feedback.written), 'reply draft')})"
    if name == "ratings":
        return f"{path} ({len(result.ratings):,} rows)"
    if name == "incomplete":
        return (f"{path} ({result.ratings.incomplete_rows:,} rows of files left out only "
                "for blank required answers)")
    return path
