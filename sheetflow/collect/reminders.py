"""``sheetflow remind``: reminder drafts for the packs that were sent and have not come back.

Above :mod:`.pack_status`, which it runs (it runs ``collect``, writing nothing) to learn who
has returned; the drafts themselves are composed in :mod:`.drafts`.

A pack gets a reminder when all of these hold:

* it has not come back, and its rater's reply is not one whose workbook ``fetch``
  could not save (:mod:`.unsaved`: that rater is named instead, since they replied);
* no file linked to it (:mod:`.links`: one that could not be
  read or identified, named like it) came back unusable: that rater gets collect's
  reply draft asking for the file again, never word that it has not arrived;
* no file claims it without a row proving it (``claim-unproven``): its rater may
  have sent that file, so they are to be asked whether they did (the pack is named
  with that file), never told that it has not arrived;
* it did not come back only in messages from another rater's address, from no
  rater's or with no single sender, none marked read (``sender-not-rater``,
  ``sender-unknown``): someone may have returned it for its rater, so the pack is named
  with what to do (check who sent it, then ``collect --mark-read``), not taken as back;
* no file from its rater's address that could not be read, and that nothing else
  ties to a pack, is in ``returns/`` (:func:`.links.unread_from`): it may be this pack,
  so the rater is asked for the workbook as .xlsx instead;
* it was invited: the mail journal records its invitation as sent. An invitation
  whose outcome is unknown (*unconfirmed*: it may or may not have arrived) gets no
  reminder but is named, with how to send it again. A study whose journal records no
  invitation at all had its packs sent by hand; its packs count as sent when
  ``generate`` (or ``lock``) wrote them (the time of ``packs/manifest.json``), and its
  sitting-2 packs once they are due;
* it is due: a sitting-2 pack not before 24 hours after sitting 1 came back
  (protocol 001, see :mod:`.mail_state`);
* neither a reminder nor its invitation was sent to it in the last ``min_days`` days,
  and a pack sent by hand was written at least ``min_days`` days ago (a pack sent or
  made seconds ago is no pack to remind anyone of), counted up to the real time or the
  clock given, whichever is earlier: the journal and the file hold real times, so a
  clock set ahead cannot shorten the spacing. Each pack held back so is named with the
  time its reminder may go.

A reminder attaching a pack whose bytes are not the workbook generate wrote (its sha256
is not the one the manifest records) stops remind before any draft is written or
removed: a coordinator who sent that draft would send a changed workbook.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SealError, SheetflowError
from ..hints import command_line
from ..packs.journal import Journal, damaged_journal, parse_time, read_journal
from ..packs.manifest import PackHead, changed_packs_problem, open_manifest
from ..spec.study import Rater, judge_rater_ids, load_study
from ..workbook import layout as L
from .coordinator import REMINDERS_DIR, RosterRow, mail_history, todo_missing
from .drafts import Drafts, save_drafts, write_reminders
from .links import claimed_todo, unread_from_text
from .next_steps import sender_step
from .pack_status import RaterStatus, status
from .run import OUT_DIR

MIN_DAYS = 3
"""Days between two reminders to one pack, by default."""


@dataclass
class Reminders:
    """What ``remind`` did: the packs reminded, their drafts, and each pack left out."""

    rows: list[RosterRow] = field(default_factory=list)
    drafts: Drafts = field(default_factory=Drafts)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, why) for each pack not returned that gets no reminder."""
    unusable: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, which files and why) for each pack with a file linked to it
    that cannot be used: no reminder."""
    replied: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, why) for each pack not returned whose rater replied and whose
    workbook ``fetch`` could not save (:mod:`.unsaved`): no reminder."""
    claimed: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, what to do) for each pack not returned that a file claims with no
    row proving it (:func:`.links.claims_on`): the rater may have sent it, so no
    reminder saying it has not arrived; they are asked instead."""
    unread: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, what to do) for each pack not returned whose rater's address
    sent a file that could not be read (:func:`.links.unread_from`): it may be this
    pack, so no reminder saying it has not arrived; they are asked for it instead."""
    unchecked: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, what to do) for each pack whose every return came in a message
    from another rater's address, from no rater's or with no single sender, not marked
    read (``sender-not-rater``, ``sender-unknown``): someone may have returned it for its
    rater, so it is not taken as back, nor reminded; the coordinator checks who sent it."""
    judges: frozenset[str] = frozenset()
    """The study's automated judges (protocol 004): ``import-judges`` fills their
    workbooks, so no mail asks them for one."""
    by_hand: bool = False
    """No invitation in the journal: packs taken as sent by hand."""
    written: dt.datetime | None = None
    """When generate wrote the packs (``packs/manifest.json``): the time packs sent by
    hand are taken as sent (None when not by hand, or unknown)."""
    kept: str = ""
    """Why ``out/reminders/`` is left as it was ("" when nothing keeps it so): a reminder
    of a rater the caller does not send to (``raters``) attaches a pack changed after
    generate, and the folder's drafts are replaced as one set. The reminders composed
    are in ``drafts.unwritten``."""


def remind(study_dir: str | Path, *, min_days: float = MIN_DAYS,
           now: dt.datetime | None = None, write: bool = True,
           journal: Journal | None = None, then: str | None = None,
           heads: list[PackHead] | None = None,
           raters: list[str] | None = None) -> Reminders:
    """Write reminder drafts for the packs that are due one (see the module docstring).

    Reads the returns (as ``sheetflow status`` does, writing nothing else) to know who
    has returned; drafts go to ``out/reminders/``, replacing the earlier drafts there
    as one set (all of them or, when the run fails, none).

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``generate``.
    min_days : float
        No reminder to one pack within this many days of its invitation or of its
        last reminder (nor, sent by hand, of generate writing it).
    now : datetime, optional
        The clock for the sitting-2 hold and overdue (default: now); the ``min_days``
        spacing never counts past the real time.
    write : bool
        False composes the drafts without writing or removing any file (``send
        reminders --dry-run``): they are in ``drafts.unwritten``. A changed pack is
        refused either way.
    journal : Journal, optional
        The mail journal as ``send`` read it; default: read here. Read once either way:
        the records checked are the records the drafts are decided by.
    then : str, optional
        What the refusal of a changed pack says to do once it is restored (``send``
        runs remind too); default: run this remind again, the whole command.
    heads : list of PackHead, optional
        The manifest's packs as ``send`` read it (each workbook's sha256); default:
        read here. The attachments are checked against the manifest read once.
    raters : list of str, optional
        The raters whose reminders the caller sends (``send reminders --rater``);
        default: all. A changed pack of another rater stops nothing the caller sends:
        the reminders are composed, but ``out/reminders/`` is left as it was, since
        its drafts are replaced as one set (``Reminders.kept`` says why).

    Returns
    -------
    Reminders

    Raises
    ------
    SheetflowError
        A line of ``mail.jsonl`` is no record: a reminder whose "sent" record it held
        would be drafted again. Nothing is written.
    SealError
        A reminder (of one of ``raters``, when given) would attach a pack whose bytes
        are not the workbook generate wrote (a manifest without the hashes has none to
        compare with). Each such pack is named; nothing is written, the earlier drafts
        stay as they were.
    """
    root = Path(study_dir)
    now = now or dt.datetime.now(dt.UTC)
    then = then or f"run '{command_line('remind', study_dir)}' again"
    study = load_study(root)
    known = {r.id: r for r in study.raters}
    journal = read_journal(root) if journal is None else journal
    if journal.damaged:  # a reminder whose "sent" record it held would be drafted again
        raise SheetflowError(damaged_journal(journal.damaged, then=then))
    # any invitation tried, whatever came of it, means the packs go by e-mail here
    by_hand = not any(d.kind == "invitation" for d in journal.deliveries.values())
    out = Reminders(by_hand=by_hand, written=_packs_written(root) if by_hand else None,
                    judges=judge_rater_ids(study))
    for pack in status(root, now=now, journal=journal):
        if pack.unusable:
            out.unusable.append((pack.rater, pack.sitting, pack.unusable))
            continue
        if pack.sender_unchecked:  # perhaps returned for its rater by someone else
            out.unchecked.append((pack.rater, pack.sitting,
                                  sender_unchecked_text(list(pack.sender_unchecked),
                                                        study_dir)))
            continue
        if pack.returned:
            continue
        if pack.mail.not_saved:  # they replied: a reminder would say they had not
            out.replied.append((pack.rater, pack.sitting, pack.mail.not_saved))
            continue
        if pack.claimed:  # it may have arrived: "it has not arrived" may be untrue
            out.claimed.append((pack.rater, pack.sitting,
                                claimed_todo(pack.rater, list(pack.claimed))))
            continue
        if pack.unread_from:  # it may have come: "it has not arrived" may be untrue
            out.unread.append((pack.rater, pack.sitting,
                               unread_from_text(list(pack.unread_from))))
            continue
        why = _not_due(pack, out, min_days, now, root)
        if why:
            out.skipped.append((pack.rater, pack.sitting, why))
            continue
        rater = known.get(pack.rater, Rater(pack.rater))
        out.rows.append(RosterRow("missing", rater.id, rater.name, rater.email, pack.sitting,
                                  pack.file, "", None, 0, 0, False,
                                  todo_missing(rater, root, sitting=pack.sitting),
                                  **mail_history(pack.mail)))  # as status shows it
    if heads is None:
        manifest = open_manifest(root)
        manifest.close()  # only the pack heads (with each workbook's sha256) are needed
        heads = manifest.heads
    out.drafts = write_reminders(study, root, out.rows, heads)
    # checked before any draft is written or removed
    blocking = [c for c in out.drafts.changed if raters is None or c[0] in raters]
    if blocking:
        raise SealError(changed_packs_problem(
            [pack for _, _, pack in blocking], root,
            not_done="no reminder was drafted or sent", then=then))
    if out.drafts.changed:  # another rater's: the folder cannot be replaced whole
        out.kept = folder_kept(out.drafts.changed, then, root)
    elif write:
        save_drafts(out.drafts, root / OUT_DIR / REMINDERS_DIR, "remind")
    return out


def sender_unchecked_text(files: list[str], study_dir: str | Path) -> str:
    """What ``remind`` and ``send reminders`` say of a pack whose only returns came
    from another rater's address or no rater's (``files``), and what to do."""
    return (f"it came back only in a message from another rater's address, from no "
            f"rater's or with no single sender ({', '.join(files)}): "
            f"{sender_step(study_dir)}")


def folder_kept(changed: list[tuple[str, int, str]], then: str, study_dir: str | Path) -> str:
    """Why ``out/reminders/`` was left as it was: the reminders of ``changed`` (rater,
    sitting, pack) attach packs changed after generate (``study_dir``: the study folder
    as the user gave it)."""
    whose = ", ".join(dict.fromkeys(rater for rater, _, _ in changed))
    return changed_packs_problem(
        [pack for _, _, pack in changed], study_dir,
        not_done=(f"no reminder to {whose} can be drafted and {OUT_DIR}/{REMINDERS_DIR}/ is "
                  "left as it was (its drafts are replaced as one set; the reminders asked "
                  "for are composed and checked all the same)"), then=then)


def _packs_written(root: Path) -> dt.datetime | None:
    """When generate (or lock) last wrote the manifest, in UTC (None when unknown)."""
    try:
        stamp = (root / L.PACKS_DIR / L.MANIFEST_FILE).stat().st_mtime
    except OSError:
        return None
    return dt.datetime.fromtimestamp(stamp, dt.UTC).replace(microsecond=0)


def _not_due(pack: RaterStatus, sent: Reminders, min_days: float, now: dt.datetime,
             root: Path) -> str:
    """Why a pack not returned gets no reminder now ("" when it gets one); ``sent``
    says whether the packs went by hand, and when they were written."""
    by_hand, written = sent.by_hand, sent.written
    if pack.mail.held:
        return pack.mail.held
    if not pack.mail.invited and pack.mail.invitation_unconfirmed:
        return unconfirmed_invitation(pack.rater, pack.mail.invitation_unconfirmed, root)
    if not pack.mail.invited and not by_hand:
        return "never invited (no invitation sent in the mail journal)"
    last = _last_sent(pack, by_hand, written)
    # the messages were sent, and the packs written, at real times: a clock set ahead
    # (--now) must not make them look older than they are
    clock = min(now, dt.datetime.now(dt.UTC))
    if last is None or min_days <= 0 or clock - last[0] >= dt.timedelta(days=min_days):
        return ""
    moment, what = last
    until = moment + dt.timedelta(days=min_days)
    return (f"{what} on {moment:%Y-%m-%d %H:%M} UTC, less than {min_days:g} days ago: "
            f"no reminder before {until:%Y-%m-%d %H:%M} UTC")


def _last_sent(pack: RaterStatus, by_hand: bool,
               written: dt.datetime | None) -> tuple[dt.datetime, str] | None:
    """When the pack last went to its rater, and how, in words: its last reminder, else
    its invitation, else (a sitting-1 pack sent by hand) generate writing it; None when
    unknown. The next reminder is spaced ``min_days`` from it."""
    sent = [(t, "reminded") for t in map(parse_time, pack.mail.reminded) if t]
    invited = parse_time(pack.mail.invited)
    sent += [(invited, "invited")] if invited else []
    if not sent and by_hand and written is not None and pack.sitting == 1:
        sent = [(written, "sent by hand (no invitation in mail.jsonl), so taken as sent "
                          "when generate wrote it")]
    return max(sent, default=None)


def unconfirmed_invitation(rater: str, begun: str, study_dir: str | Path) -> str:
    """What an invitation whose outcome is unknown is, and how to send it again (the
    command with ``study_dir``, the study folder as the user named it)."""
    when = parse_time(begun)
    shown = f" (sending began {when:%Y-%m-%d %H:%M} UTC)" if when else ""
    again = command_line("send", study_dir, "invitations", "--resend", "--rater", rater)
    return (f"invitation unconfirmed{shown}: it may have arrived (ask the rater); "
            f"'{again}' sends it again")
