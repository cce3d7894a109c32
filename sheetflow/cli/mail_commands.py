"""``sheetflow send`` and ``sheetflow fetch``: the packs out by e-mail, the returns in."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..words import counted
from .common import (
    EXIT_DATA,
    EXIT_FAILED,
    Days,
    Output,
    command,
    fail,
    stop_on_spec_drift,
    typed_params,
)

if TYPE_CHECKING:
    from ..packs.send import SendReport
    from ..spec.mail import MailSettings


def parse_now(text: str | None) -> dt.datetime | None:
    """``--now`` as a time (``2026-09-16 10:00``; without a zone it is UTC)."""
    from ..errors import UsageError

    if text is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--now {text!r}: give a time as yyyy-mm-dd hh:mm (UTC)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _settings(directory: Path, **given: str | None) -> MailSettings:
    """The study's ``[mail]`` table with the command line's options on top."""
    from ..errors import UsageError
    from ..spec.study import load_study

    try:
        return load_study(directory).mail.overriding(**given)
    except ValueError as exc:
        raise UsageError(f"{directory}: option {exc}") from None


@command("send")
@click.argument("which", required=False, default="invitations",
                type=click.Choice(["invitations", "reminders", "replies"]))
@click.option("--dry-run", is_flag=True, help="List each message (to, subject, attachment, "
              "size); send nothing and write nothing (no draft, no mail.jsonl entry).")
@click.option("--yes", is_flag=True, help="Send without asking (needed off a terminal).")
@click.option("--resend", is_flag=True, help="Send again what was sent before.")
@click.option("--rater", "raters", multiple=True, metavar="ID", help="Only this rater "
              "(repeat for more).")
@click.option("--now", "now_text", metavar="TIME", help="Judge the sitting-2 hold (which "
              "sitting-2 invitations and reminders are due) as at TIME (yyyy-mm-dd hh:mm, "
              "UTC); nothing else: the Date header, mail.jsonl and the --min-days spacing "
              "of reminders use the real time.")
@click.option("--min-days", type=Days(), default=3.0, show_default=True,
              help="Reminders: none to a pack within this many days of its invitation "
                   "or its last reminder.")
@click.option("--smtp", metavar="HOST:PORT", help="The SMTP server ([mail] smtp).")
@click.option("--smtp-security", type=click.Choice(["starttls", "ssl", "none"]),
              help="[mail] smtp_security (default starttls).")
@click.option("--from", "sender", metavar="ADDRESS", help="The sender ([mail] from); "
              "refused when the drafts are signed with another address or name.")
@click.option("--reply-to", metavar="ADDRESS", help="[mail] reply_to; refused when it "
              "changes the return address the drafts are signed with.")
@click.option("--username", metavar="LOGIN", help="[mail] username (default: the sender).")
def send_command(out: Output, directory: Path, which: str, dry_run: bool, yes: bool,
                 resend: bool, raters: tuple[str, ...], now_text: str | None,
                 min_days: float, smtp: str | None, smtp_security: str | None,
                 sender: str | None, reply_to: str | None, username: str | None) -> None:
    """Send the invitations (with the packs), the reminders or the replies by e-mail.

    Over one SMTP connection; the password comes from SHEETFLOW_SMTP_PASSWORD only.
    Each message is recorded in mail.jsonl in the study folder; what was sent is not
    sent again (--resend). Reply drafts signed before [mail] from, reply_to or the
    name changed are refused (exit 2): collect signs them again. Sitting-2 packs are
    held until 24 hours after the rater's sitting 1 came back. Reminders are first
    written to out/reminders/, as remind writes them; --dry-run writes nothing. A spec
    (study.toml, its items or raters) or another sealed input changed after generate
    stops any send with exit 3, as check, status and collect stop. An
    invitation, reminder or reply attaching a pack changed after generate (not the
    sha256 the manifest records) stops the send with exit 3, naming it, before
    anything is sent or written. With --rater, another rater's changed pack stops
    nothing sent: out/reminders/ (replaced as one set) is left as it was, named in a
    warning, and the exit code is 1. A reply draft that is not the one the last collect
    made (a collect stopped part-way), or one it made that is gone, stops the send with
    exit 3, naming each. Like collect, send holds the study lock (out/.lock) while it
    runs. Invitations sent after the [mail] deadline has passed are warned of.
    A study sealed by sheetflow demo (its secret is public) sends nothing, exit 3 (a
    dry run too): generate --force draws a new secret.

    Example: sheetflow send my-study invitations --dry-run
    """
    from ..collect.run_lock import study_lock

    # each kind goes to the raters file's addresses with a pack generated from the sealed
    # spec; reminders read the returns against it too, as status does
    stop_on_spec_drift(directory)
    _stop_on_demo_seal(directory)
    with study_lock(directory, "send", tidy=True):  # no collect rewrites the drafts meanwhile
        _send(out, directory, which, dry_run, yes, resend, raters, now_text, min_days,
              settings=_settings(directory, smtp=smtp, smtp_security=smtp_security,
                                 **{"from": sender}, reply_to=reply_to, username=username))


def _stop_on_demo_seal(directory: Path) -> None:
    """Stop any send (exit 3) from a study sealed with the demo's public secret: anyone
    who runs ``sheetflow demo`` can unblind its packs, and every kind of message attaches
    one (a reply attaches the rater's pack again). A dry run stops too, as it does for a
    changed pack: it lists what a send would do, and this send would do nothing."""
    from ..packs.seal_check import demo_seal_line

    line = demo_seal_line(directory)
    if line:
        fail(EXIT_FAILED, [line])


def _send(out: Output, directory: Path, which: str, dry_run: bool, yes: bool,
          resend: bool, raters: tuple[str, ...], now_text: str | None, min_days: float, *,
          settings: MailSettings) -> None:
    """The body of ``send``, under the study lock."""
    from ..collect.outbox import outbox
    from ..errors import MailError, UsageError
    from ..hints import command_line, typed_words
    from ..packs.send import SendInterrupted, send_messages
    from ..spec.mail import SMTP_PASSWORD_ENV

    params = typed_params(click.get_current_context())
    given = typed_words(params)
    # once some messages went, --resend in the rerun would send them twice
    again = command_line("send", directory,
                         *typed_words(p for p in params if p.option != "--resend"))
    box = outbox(directory, which, settings, resend=resend, raters=list(raters),
                 min_days=min_days, now=parse_now(now_text), dry_run=dry_run, given=given)
    for rater, sitting, why in box.left_out:
        out.say(f"not sent {rater} (sitting {sitting}): {why}" if sitting else
                f"not sent {rater}: {why}", fg="yellow")
    if box.drafts_kept:  # another rater's pack changed: the --rater send still goes
        out.warn(box.drafts_kept)
    for warning in box.warnings:
        out.warn(warning)
    listing = [_listed(item) for item in box.messages]
    if dry_run or not box.messages:
        for line in listing:
            out.say(f"would send {line['to']}: {line['subject']!r}, {line['attachment']} "
                    f"(message of {line['size']} bytes)")
        verb = "would be sent (dry run: nothing sent)" if dry_run else "to send"
        out.headline(f"{_messages(len(box.messages), which)} {verb}", fg="green")
        out.json({"ok": not box.drafts_kept, "dry_run": dry_run, "messages": listing,
                  "not_sent": [_left(x) for x in box.left_out], "sent": [],
                  "drafts_kept": box.drafts_kept})
        if box.drafts_kept:
            click.get_current_context().exit(EXIT_DATA)
        return
    if settings.smtp is None or not settings.smtp.host:
        raise UsageError(f"{directory}: no SMTP server: set 'smtp' in the [mail] table of "
                         "study.toml, or give --smtp HOST:PORT")
    _confirm(yes, len(box.messages), which, str(settings.smtp))
    progress = out.progress("sending")
    try:
        report = send_messages(directory, box.messages, settings.smtp, settings.sender[1],
                               login=settings.login,
                               password=os.environ.get(SMTP_PASSWORD_ENV, ""),
                               progress=progress, again=again)
    except SendInterrupted as stop:
        progress.close()
        _interrupted(out, stop, again)
        stop.json_extra = _sent_doc(stop.report, listing, box)  # type: ignore[attr-defined]
        raise
    except MailError as exc:
        progress.close()
        # the connection broke off part way: who got theirs before the error line
        if getattr(exc, "report", None) is not None:
            _outcomes(out, exc.report, again)
            for item in exc.report.not_tried:
                out.say(f"not tried  {item.to} ({item.rater}, sitting {item.sitting})")
            exc.json_extra = _sent_doc(exc.report, listing, box)  # type: ignore[attr-defined]
        raise
    progress.close()
    _outcomes(out, report, again)
    out.headline(f"{len(report.sent)} sent, {len(report.refused)} refused",
                 fg="yellow" if report.refused else "green")
    out.json({"ok": not (report.refused or box.drafts_kept),
              **_sent_doc(report, listing, box)})
    if report.refused or box.drafts_kept:
        click.get_current_context().exit(EXIT_DATA)


def _sent_doc(report: SendReport, listing: list[dict[str, Any]], box: Any) -> dict[str, Any]:
    """What became of each message, for ``--json``: the same keys whether the send ran
    to its end, the connection broke off or Ctrl-C stopped it (``box``: the
    :class:`~sheetflow.collect.outbox.Outbox`, for the messages left out)."""
    return {"dry_run": False, "messages": listing,
            "sent": [{**_listed(i), "reply": r} for i, r in report.sent],
            "refused": [{**_listed(i), "reply": r} for i, r in report.refused],
            "failed": [{**_listed(i), "reply": r} for i, r in report.failed],
            "unconfirmed": [{**_listed(i), "reply": r} for i, r in report.unconfirmed],
            "not_tried": [_listed(i) for i in report.not_tried],
            "not_sent": [_left(x) for x in box.left_out], "drafts_kept": box.drafts_kept}


def _outcomes(out: Output, report: SendReport, again: str) -> None:
    """A line per message sent, a warning per message refused (``again``: the command
    that sends it once its address is fixed)."""
    for item, reply in report.sent:
        out.say(f"sent       {item.to} ({item.rater}, sitting {item.sitting}): {reply}")
    for item, reply in report.refused:
        # the refusal may be of the address (550) or of the message itself (554): the
        # server's reply says which
        out.warn(f"{item.to} ({item.rater}) was refused by the server: {reply}; its reply "
                 f"says why (a wrong address: fix it in the raters file), then run "
                 f"'{again}' again")


def _interrupted(out: Output, stop: Any, again: str) -> None:
    """What became of each message when Ctrl-C stopped the send (``stop``:
    :class:`~sheetflow.packs.send.SendInterrupted`), and the interrupted line naming
    what sends the rest (``again``: the send as typed, without ``--resend``, which would
    send again what went)."""
    report = stop.report
    _outcomes(out, report, again)
    for item, why in report.failed:
        out.say(f"not sent   {item.to} ({item.rater}, sitting {item.sitting}): {why}")
    for item, why in report.unconfirmed:
        out.say(f"unconfirmed {item.to} ({item.rater}, sitting {item.sitting}): {why}; "
                f"held back, not sent again without --resend (ask the rater; --resend "
                f"--rater {item.rater} sends it again)", fg="yellow")
    for item in report.not_tried:
        out.say(f"not tried  {item.to} ({item.rater}, sitting {item.sitting})")
    counts = [(len(report.sent), "sent"), (len(report.refused), "refused"),
              (len(report.unconfirmed), "unconfirmed"), (len(report.failed), "not sent"),
              (len(report.not_tried), "not tried")]
    tally = ", ".join(f"{n} {what}" for n, what in counts if n or what == "sent")
    if report.failed or report.not_tried:
        stop.line = (f"interrupted (Ctrl-C) before the end ({tally}): run '{again}' "
                     "again to send the rest")
    else:
        stop.line = (f"interrupted (Ctrl-C) after the last message ({tally}): nothing "
                     "else is left to send")


def _confirm(yes: bool, count: int, which: str, server: str) -> None:
    from ..errors import UsageError

    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(f"sending {_messages(count, which)} needs --yes when not run on a "
                         "terminal "
                         "(or try --dry-run first)")
    if not click.confirm(f"Send {_messages(count, which)} through {server}?", err=True):
        raise UsageError("nothing sent (not confirmed)")


_ONE = {"invitations": "invitation", "reminders": "reminder", "replies": "reply"}


def _messages(n: int, which: str) -> str:
    """``n`` invitations, reminders or replies, in the number ``n`` takes."""
    return counted(n, _ONE.get(which, which), which)


def _listed(item: Any) -> dict[str, Any]:
    name, sha256, _ = item.attachment
    return {"kind": item.kind, "rater": item.rater, "sitting": item.sitting,
            "to": str(item.message["To"]), "subject": str(item.message["Subject"]),
            "attachment": name, "attachment_sha256": sha256, "size": item.size,
            "message_id": item.message_id}


def _left(entry: tuple[str, int, str]) -> dict[str, Any]:
    return {"rater": entry[0], "sitting": entry[1], "why": entry[2]}


@command("fetch")
@click.argument("eml", nargs=-1, type=click.Path(path_type=Path))
@click.option("--imap", metavar="HOST:PORT", help="Read this IMAP server ([mail] imap).")
@click.option("--imap-security", type=click.Choice(["starttls", "ssl", "none"]),
              help="[mail] imap_security (default ssl).")
@click.option("--folder", metavar="NAME", help="[mail] imap_folder (default INBOX).")
@click.option("--username", metavar="LOGIN", help="[mail] username (default: the sender).")
@click.option("--mbox", type=click.Path(path_type=Path), help="Read this mbox file instead.")
@click.option("--since", metavar="DATE", help="IMAP: only messages since this date.")
@click.option("--mark-seen", is_flag=True, help="IMAP: mark the messages read.")
def fetch_command(out: Output, directory: Path, eml: tuple[Path, ...], imap: str | None,
                  imap_security: str | None, folder: str | None, username: str | None,
                  mbox: Path | None, since: str | None, mark_seen: bool) -> None:
    """Save the spreadsheet attachments of the returns' messages into returns/.

    From an IMAP folder (read-only unless --mark-seen; the password from
    SHEETFLOW_IMAP_PASSWORD), an mbox file (--mbox) or saved .eml files EML. A file is
    never overwritten and identical bytes are saved once; each one saved is recorded
    in mail.jsonl with its message's sender, so collect can check it. A message from a
    rater's address whose workbook cannot be saved (too large, an Outlook winmail.dat
    wrapper, only an archive such as a .zip, which fetch does not unpack, or no
    workbook attached when none came from that address before) is recorded
    there too, as their reply: status and remind show it, and fetch exits 1 until a
    workbook from that address is saved or the rater's pack comes back after it (from
    another address, or saved by hand). A message the IMAP server breaks off on is
    named and skipped (exit 1), and the rest are read. An
    attachment whose encoded text cannot be decoded is named, not saved (exit 1); from
    a rater's address it is recorded as their reply with the workbook not saved.

    Example: sheetflow fetch my-study --imap imap.example.org:993
    """
    from ..collect.imap_source import ImapSource
    from ..collect.inbox import fetch
    from ..errors import MailError, UsageError
    from ..hints import typed_words
    from ..spec.mail import IMAP_PASSWORD_ENV, parse_date

    settings = _settings(directory, imap=imap, imap_security=imap_security,
                         imap_folder=folder, username=username)
    source = None
    try:
        day = parse_date(since) if since else None
    except ValueError as exc:
        raise UsageError(f"--since {exc}") from None
    if (mbox or eml) and (since or mark_seen):  # was ignored: every message was read
        raise UsageError(f"--{'since' if since else 'mark-seen'} applies to an IMAP folder, "
                         "not to --mbox or .eml files")
    if not mbox and not eml:
        if settings.imap is None or not settings.imap.host:
            raise UsageError(f"{directory}: nothing to fetch from: give --imap HOST:PORT "
                             "(or [mail] imap in study.toml), --mbox FILE, or .eml files")
        source = ImapSource(settings.imap, settings.login,
                            os.environ.get(IMAP_PASSWORD_ENV, ""), settings.imap_folder,
                            day, mark_seen)
    try:
        report = fetch(directory, imap=source, mbox=mbox, eml=list(eml) or None,
                       given=typed_words(typed_params(click.get_current_context())))
    except MailError as exc:
        if getattr(exc, "report", None) is not None:  # saved before the server broke off
            _saved_lines(out, exc.report)
            _torn_line(out, exc.report)  # set aside before the server was reached
        raise
    _saved_lines(out, report)
    _torn_line(out, report)
    shown = report.listed[:len(report.listed) - report.unrelated]  # raters' first
    for line in shown:  # a reply not saved that a workbook since made over needs nothing
        if line in report.over:
            out.say(line)
        else:
            out.warn(line)
    if report.unrelated:  # a busy inbox: its other mail counted in one line
        out.say(f"{counted(report.unrelated, 'message')} from no rater's address without a "
                "spreadsheet attachment: nothing saved, not listed (--json lists them)")
    for line in report.undecodable:  # the workbook sent is lost: the rater must resend
        out.error(line)
    for sender, file in report.unknown_senders:
        out.warn(f"returns/{file} came from {sender}, an address of no rater")
    for why, file in report.unsure_senders:
        out.warn(f"returns/{file} came in a message with no single sender address ({why}): "
                 "anyone may have sent it; collect asks you to check who did")
    tail = (f", {counted(len(report.undecodable), 'attachment')} that could not be "
            "decoded" if report.undecodable else "")
    tail += (f"; {counted(len(report.not_saved), 'reply', 'replies')} from raters with the "
            "workbook not saved (ask each rater as said above; fetch exits 1 until a "
            "workbook from that address is saved or their pack comes back)"
            if report.not_saved else "")
    tail += (f"; {counted(len(report.skipped), 'message')} the server broke off on, skipped "
             f"({'; '.join(report.skipped)}: forward each to this mailbox again, or ask its "
             "sender to send it again)" if report.skipped else "")
    problems = bool(report.not_saved or report.skipped or report.undecodable)
    unread = f", {report.not_read} not read" if report.not_read else ""  # listed above
    out.headline(f"{counted(report.messages, 'message')} read{unread}: "
                 f"{counted(len(report.saved), 'file')} saved, "
                 f"{counted(len(report.duplicates), 'duplicate')}, {report.known} fetched "
                 f"before{tail}",
                 fg="red" if report.undecodable else "yellow" if problems else "green")
    out.json({"ok": not problems, "messages": report.messages, "not_read": report.not_read,
              "not_saved": report.not_saved, "skipped": report.skipped,
              "undecodable": report.undecodable,
              "saved": [s.__dict__ for s in report.saved],
              "duplicates": [s.__dict__ for s in report.duplicates],
              "fetched_before": report.known, "listed": report.listed,
              "unrelated": report.unrelated,
              "unknown_senders": [{"sender": s, "file": f}
                                  for s, f in report.unknown_senders],
              "unsure_senders": [{"why": w, "file": f} for w, f in report.unsure_senders]})
    if problems:  # a rater's workbook, or a message, must not go missing
        click.get_current_context().exit(EXIT_DATA)


def _saved_lines(out: Output, report: Any) -> None:
    """A line per file saved, and per attachment already in ``returns/``."""
    for saved in report.saved:
        out.say(f"saved      returns/{saved.file} from {saved.shown_sender}")
    for saved in report.duplicates:
        out.say(f"duplicate  {saved.attachment} from {saved.shown_sender}: already in the "
                f"folder as returns/{saved.file} (the same bytes); not saved")


def _torn_line(out: Output, report: Any) -> None:
    """The warning naming where fetch moved the journal's torn last line, if it did."""
    from ..packs.journal import torn_warning

    if report.torn:
        out.warn(torn_warning(report.torn))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(send_command)
    group.add_command(fetch_command)
