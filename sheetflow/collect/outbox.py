"""``sheetflow send``: which composed messages go out now, and sending them.

Three kinds, each composed where it always was (:mod:`sheetflow.packs.mail`,
:mod:`.drafts`) and finished for sending by :func:`sheetflow.packs.mail.outgoing`:

* ``invitations``: each pack of the manifest with its invitation text (after ``lock``
  the second raters' packs are in the manifest, so they go too). A sitting-2 pack is
  held until 24 hours after the rater's sitting 1 came back (:mod:`.mail_state`).
* ``reminders``: the drafts ``remind`` writes (:mod:`.reminders`: invited, not
  returned, due, not reminded within ``min_days``).
* ``replies``: the reply drafts the last ``collect`` wrote (``out/feedback/``).

A message (invitation, reminder or reply) attaching a pack whose bytes (as attached)
are not the ones whose sha256 ``generate`` recorded in the manifest stops the send, with
nothing sent: the rater would get a workbook changed after generate (for reminders
``remind`` stops it, before any draft is written or removed; a reply draft waits in
``out/feedback/`` between collect and send, and is checked again). A send limited to
some raters (``raters``) is stopped only by their packs: another rater's changed pack
leaves ``out/reminders/``, replaced as one set, as it was (``Outbox.drafts_kept``). A
manifest written before sheetflow recorded those hashes has none to compare with; its
packs go as they are.

A message already sent (same kind, rater, sitting and attachment; for a reply the same
text too; for a reminder the same day) is not sent again unless ``resend``; a message
whose ``sending`` record has no outcome (a crash in the middle) is *unconfirmed* and
is not sent again without ``resend`` either. Lives above :mod:`.reminders`, which it runs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..errors import MissingStepError, SealError, SheetflowError, UsageError
from ..hints import command_line
from ..packs.instructions import CASES_PLACEHOLDER
from ..packs.journal import (
    Journal,
    damaged_journal,
    iso,
    read_journal,
    set_aside_torn,
    torn_warning,
)
from ..packs.mail import build_eml, outgoing, signer_of
from ..packs.manifest import (
    Manifest,
    PackHead,
    changed_packs,
    changed_packs_problem,
    open_manifest,
)
from ..packs.send import Outgoing
from ..spec.mail import MailSettings, deadline_passed
from ..spec.study import Study, load_study
from ..words import counted, first_few
from ..workbook import layout as L
from .coordinator import FEEDBACK_DIR, REMINDERS_DIR, draft_name
from .drafts import reply_about
from .outputs import COLLECTION_FILE, OutputError, returns_since_collect
from .pack_status import status
from .reminders import MIN_DAYS, folder_kept, remind
from .reply_drafts import read_reply_drafts
from .run import OUT_DIR
from .unsaved import replied_text

KIND_NAMES = {"invitations": "invitation", "reminders": "reminder", "replies": "reply"}


@dataclass
class Outbox:
    """The messages to send now, and every one left out with why."""

    messages: list[Outgoing] = field(default_factory=list)
    left_out: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, why)."""
    raters: list[str] = field(default_factory=list)
    """The raters asked for (``--rater``); every rater when empty."""
    drafts_kept: str = ""
    """Why ``out/reminders/`` was left as it was ("" when it was written, or not to be):
    another rater's reminder attaches a changed pack (:attr:`.reminders.Reminders.kept`)."""
    warnings: list[str] = field(default_factory=list)
    """What the sender should know before the messages go (invitations sent after the
    ``[mail]`` deadline has passed)."""


def outbox(study_dir: str | Path, which: str, settings: MailSettings, *,
           resend: bool = False, raters: list[str] | None = None,
           min_days: float = MIN_DAYS, now: dt.datetime | None = None,
           dry_run: bool = False, given: Sequence[str] | None = None) -> Outbox:
    """The messages of one kind that go out now.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``generate``.
    which : {"invitations", "reminders", "replies"}
    settings : MailSettings
        ``sender`` (required) and ``reply_to``.
    resend : bool
        Send again what was sent (or is unconfirmed) before.
    raters : list of str, optional
        Only these raters.
    min_days : float
        For reminders: none twice within this many days.
    now : datetime, optional
        The clock for the sitting-2 hold alone (default: now). The ``Date`` header, the
        day a reminder is counted on and the ``min_days`` spacing of reminders always
        use the real time: a clock set ahead must not send a reminder again at once.
    dry_run : bool
        Write nothing: the reminders are composed in memory, not written to
        ``out/reminders/`` (nor are earlier drafts there removed). Invitations and
        replies write nothing either way.
    given : sequence of str, optional
        What followed the study folder on the command line (the kind, then the options
        that matter for a rerun), for the command a refusal says to run again once its
        cause is mended; default: the kind and ``--rater`` of each of ``raters``.

    Raises
    ------
    UsageError
        An unknown kind or rater, or no sender address.
    """
    root = Path(study_dir)
    # read once, after generate only (the error names the step): the invitations, the
    # reminders and the check of every attachment go by these pack heads (each
    # workbook's sha256)
    manifest = open_manifest(root)
    manifest.close()
    if which not in KIND_NAMES:
        raise UsageError(f"nothing called {which!r} to send; choose one of "
                         f"{', '.join(KIND_NAMES)}")
    if not settings.sender[1]:
        raise UsageError("no sender address: set 'from' in the [mail] table of study.toml, "
                         "or give --from ADDRESS")
    now = now or dt.datetime.now(dt.UTC)
    words = list(given) if given is not None else [which, *_rater_words(raters or [])]
    rerun = f"run '{command_line('send', root, *words)}' again"
    study = load_study(root)
    _refuse_another_signer(study, settings, which, root)
    known = {r.id: r for r in study.raters}
    for rater in raters or []:
        if rater not in known:
            raise UsageError(f"--rater {rater}: no such rater in {study.raters_file}")
    box = Outbox(raters=list(raters or []))
    kind = KIND_NAMES[which]
    journal = read_journal(root)
    # before any draft is composed: a real send of reminders writes its drafts first
    if journal.damaged:  # a "sent" record lost there would send its message again
        raise SheetflowError(damaged_journal(journal.damaged, then=rerun))
    # the invitations say how many cases each workbook holds, read from its entry
    drafts = {"invitations": partial(_invitations, manifest=manifest),
              "reminders": partial(_reminders, then=rerun, then_all=_rerun_all(root, words)),
              "replies": _replies}[which](root, study, box, min_days, now, not dry_run,
                                          journal, manifest.heads)
    for rater_id, sitting, draft, about in drafts:
        if raters and rater_id not in raters:
            continue
        rater = known.get(rater_id)
        if rater is None or not rater.email:
            box.left_out.append((rater_id, sitting, "no e-mail address in the raters file"))
            continue
        # Date is when it really goes, whatever clock the hold was judged by
        message = outgoing(draft, settings.sender, reply_to=settings.reply_to)
        today = iso(dt.datetime.now(dt.UTC))[:10]
        item = Outgoing(kind, rater_id, sitting, rater.email, message,
                        about or (today if kind == "reminder" else ""))
        held = _sent_before(journal, item)
        if held and not resend:
            box.left_out.append((rater_id, sitting, held))
            continue
        box.messages.append(item)
    # a rater not asked for is no message left out of this send
    box.left_out = [x for x in box.left_out if not raters or x[0] in raters]
    _refuse_replies_signed_otherwise(box.messages, settings, root)
    _refuse_changed_packs(box.messages, manifest.heads, root, rerun)
    if which == "invitations" and box.messages:  # the real date: --now is for the hold
        box.warnings += deadline_passed(study, dt.datetime.now(dt.UTC).date())
    torn = set_aside_torn(root) if box.messages and not dry_run else ""  # before sending
    if torn:
        box.warnings.append(torn_warning(torn))
    return box


def _rater_words(raters: list[str]) -> list[str]:
    """``--rater ID`` for each of ``raters``, as typed."""
    return [word for rater in raters for word in ("--rater", rater)]


def _rerun_all(root: Path, words: list[str]) -> str:
    """Run the send of ``words`` again for every rater (its ``--rater`` options left
    out): what drafts the reminders of a rater not asked for."""
    kept = [w for i, w in enumerate(words)
            if w != "--rater" and (i == 0 or words[i - 1] != "--rater")]
    return f"run '{command_line('send', root, *kept)}' again"


def _refuse_changed_packs(messages: list[Outgoing], heads: list[PackHead],
                          root: Path, then: str) -> None:
    """Refuse the send when a message attaches a pack whose bytes are not the ones the
    manifest records the sha256 of (:func:`changed_packs`).

    The bytes compared are the attachment's as it will be sent, decoded from the
    message itself, not the file read again. Replies count too: ``collect`` checked
    the pack when it wrote the draft, but the draft sits in ``out/feedback/`` until it
    is sent, and a draft edited or a pack swapped meanwhile would reach the rater.
    ``then`` is what to do once the packs are restored (run the send again).

    Raises
    ------
    SealError
        Naming each changed pack and what to do; nothing is sent.
    """
    changed = changed_packs([item.attachment[:2] for item in messages], heads)
    if changed:
        raise SealError(changed_packs_problem(changed, root, not_done="nothing was sent",
                                              then=then))


def _refuse_another_signer(study: Study, settings: MailSettings, which: str,
                           root: Path) -> None:
    """Refuse a send whose sender or return address is not the one the drafts are
    signed with (:func:`~sheetflow.packs.mail.signature`: the ``[mail]`` table of
    ``study.toml``).

    ``--from`` and ``--reply-to`` change the message's headers, not its text: the rater
    would be asked to send the workbook back to one address by a message from another,
    and their reply would go to the one the text does not name. Drafts signed by no one
    (no ``[mail]`` sender) say "reply", true whoever sends them.

    Raises
    ------
    UsageError
        Naming both addresses (or names) and where to set the one to use; nothing is
        sent or written.
    """
    signed_name, signed_from = study.mail.sender
    signed_back = study.mail.reply_to[1] or signed_from
    if not signed_back:
        return
    name, sender = settings.sender
    back = settings.reply_to[1] or sender
    if back.lower() == signed_back.lower() and name in ("", signed_name):
        return
    what = (f"asks for the workbook back at {signed_back}, but the reply would go to {back}"
            if back.lower() != signed_back.lower()
            else f"is signed {signed_name!r}, but the message would come from {name!r}")
    redo = (f"; then '{command_line('collect', root)}' signs the reply drafts with it"
            if which == "replies" else "")
    raise UsageError(f"--from/--reply-to: the drafts, signed as the [mail] table of "
                     f"study.toml says, {what}; set 'from' (and 'reply_to') there instead "
                     f"(the seal does not cover it){redo}")


def _refuse_replies_signed_otherwise(messages: list[Outgoing], settings: MailSettings,
                                     root: Path) -> None:
    """Refuse a send of reply drafts whose text is signed with another return address
    (or name) than the one they would go from.

    ``collect`` signs its reply drafts with the ``[mail]`` table of ``study.toml`` as
    it is then (:func:`~sheetflow.packs.mail.signed`); ``from`` or ``reply_to``
    changed since, the rater would be asked to send the workbook back to one address
    by a message from another. Invitations and reminders are composed when ``send``
    runs, so they are signed as ``[mail]`` says now; only the reply drafts wait in
    ``out/feedback/``. Only the replies that would go count: one held back as sent
    before is not sent.

    Raises
    ------
    UsageError
        Naming the drafts, both addresses (or names) and the command that signs them
        again; nothing is sent or written.
    """
    name, sender = settings.sender
    back = settings.reply_to[1] or sender
    stale: dict[str, tuple[str, str]] = {}
    for item in messages:
        if item.kind != "reply":
            continue
        body = item.message.get_body(("plain",))
        signer = signer_of(body.get_content() if body is not None else "")
        if signer[1] and (signer[1].lower() != back.lower()
                          or (signer[0] and name and signer[0] != name)):
            stale[draft_name(item.rater, item.sitting)] = signer
    if not stale:
        return
    one = len(stale) == 1
    signer_name, signer_back = next(iter(stale.values()))
    what = (f"{'asks' if one else 'ask'} for the workbook back at {signer_back}, but the "
            f"reply would go to {back}"
            if signer_back.lower() != back.lower()
            else f"{'is' if one else 'are'} signed {signer_name!r}, but the message would "
                 f"come from {name!r}")
    shown = ", ".join(f"{OUT_DIR}/{FEEDBACK_DIR}/{n}" for n in list(stale)[:3]) + (
        ", ..." if len(stale) > 3 else "")
    drafts, them = ("draft", "it") if one else ("drafts", "them")
    raise UsageError(f"{shown}: the reply {drafts}, signed as the "
                     f"[mail] table of study.toml said when collect wrote {them}, {what}; "
                     f"nothing was sent; run '{command_line('collect', root)}' again to sign "
                     f"{them} as it says now")


def _sent_before(journal: Journal, item: Outgoing) -> str:
    """Why ``item`` is not sent again ("" when it was not sent before)."""
    return journal.why_held((item.kind, item.rater, item.sitting, item.attachment[1],
                             item.about))


Draft = tuple[str, int, bytes, str]  # rater, sitting, the draft, what else identifies it


def _invitations(root: Path, study: Study, box: Outbox, min_days: float,
                 now: dt.datetime, write: bool, journal: Journal,
                 heads: list[PackHead], *, manifest: Manifest) -> list[Draft]:
    """An invitation to each pack of ``heads`` (the manifest ``outbox`` read) that may
    go now; ``manifest`` gives the number of cases in each (``{n_cases}``) when the
    study's e-mail says it."""
    counted_cases = CASES_PLACEHOLDER in f"{study.email_subject}{study.email_body}"
    raters = {r.id: r for r in study.raters}
    held = {}
    if any(h.sitting == 2 for h in heads):
        held = {(s.rater, s.sitting): s.mail.held
                for s in status(root, now=now, journal=journal)}
    out = []
    for head in heads:
        why = held.get((head.rater_id, head.sitting), "")
        if why:
            box.left_out.append((head.rater_id, head.sitting, why))
            continue
        rater = raters.get(head.rater_id)
        if rater is None or not rater.email:
            box.left_out.append((head.rater_id, head.sitting,
                                 "no e-mail address in the raters file"))
            continue
        pack = root / L.PACKS_DIR / head.file
        if not pack.is_file():
            raise UsageError(f"{L.PACKS_DIR}/{head.file}: the pack is missing; run "
                             f"'{command_line('generate', root)}' again (or restore it) "
                             "before sending")
        cases = len(manifest.pack(head)["cards"]) if counted_cases else None
        out.append((head.rater_id, head.sitting,
                    build_eml(study, rater, pack, head.sitting, cases=cases), ""))
    return out


def _reminders(root: Path, study: Study, box: Outbox, min_days: float,
               now: dt.datetime, write: bool, journal: Journal,
               heads: list[PackHead], *, then: str, then_all: str) -> list[Draft]:
    """The reminders ``remind`` composes: written to ``out/reminders/`` (``write``), or
    only in memory for a dry run, which must leave the study as it found it. ``remind``
    decides by the journal and checks the packs against the manifest read here, not by
    a second reading of either file, and refuses a changed pack before it writes or
    removes any draft (``then``: what its refusal says to do next, run the send
    again). Another rater's changed pack keeps ``out/reminders/`` as it was: what
    writes it once the pack is restored is the send to every rater (``then_all``)."""
    result = remind(root, min_days=min_days, now=now, write=write, journal=journal,
                    then=then, heads=heads, raters=box.raters or None)
    box.drafts_kept = folder_kept(result.drafts.changed, then_all, root) if result.kept \
        else ""
    box.left_out += result.skipped
    # they replied; fetch could not save the workbook: a reminder would say they had not
    box.left_out += [(r, s, replied_text(why)) for r, s, why in result.replied]
    # a file claims the pack: its rater may have sent it, so they are asked instead
    box.left_out += result.claimed
    # a file from their address could not be read: they are asked for it instead
    box.left_out += result.unread
    # back only from another's address: whoever sent it is checked, no reminder asked
    box.left_out += result.unchecked
    box.left_out += [(r, 0, "no e-mail address in the raters file")
                     for r in result.drafts.no_email]
    box.left_out += [(r, 0, "an automated judge: its outputs are imported "
                      "(import-judges), not reminded") for r in result.drafts.judges]
    by_path = {str(p): p for p in result.drafts.written}
    out = []
    for row in result.rows:
        name = draft_name(row.rater_id, row.sitting)
        path = root / OUT_DIR / REMINDERS_DIR / name
        if str(path) in by_path:
            out.append((row.rater_id, row.sitting, path.read_bytes(), ""))
        elif name in result.drafts.unwritten:
            out.append((row.rater_id, row.sitting, result.drafts.unwritten[name], ""))
    return out


def _replies(root: Path, study: Study, box: Outbox, min_days: float,
             now: dt.datetime, write: bool, journal: Journal,
             heads: list[PackHead]) -> list[Draft]:
    """The reply drafts of the last collect, refused when a return came in (or
    changed) since: they may ask a rater to fix what their new file already fixed;
    and refused when a draft is not the one that collect recorded, or one it recorded
    is gone (:mod:`.reply_drafts`: a collect stopped while its outputs moved in), which
    would send a stale reply and none that is due."""
    changed = returns_since_collect(root)
    if changed:
        shown = first_few(changed)
        raise UsageError(f"{L.RETURNS_DIR}/ holds {counted(len(changed), 'file')} the last "
                         f"collect did not read ({shown}): the reply drafts may ask for what "
                         f"is fixed already; run '{command_line('collect', root)}' first")
    if not (root / OUT_DIR / COLLECTION_FILE).is_file():  # no drafts: not "0 to send"
        raise MissingStepError(f"{root / OUT_DIR / FEEDBACK_DIR}: no reply drafts, collect "
                               "has not run (it writes one per file with errors)",
                               command_line("collect", root))
    wanted = box.raters or [rater.id for rater in study.raters]
    found = read_reply_drafts(root, wanted)
    if found.problems:
        raise OutputError("; ".join(found.problems) + "; nothing was sent",
                          [*found.problems, f"nothing was sent: {OUT_DIR}/{FEEDBACK_DIR}/ "
                           "is not the set of reply drafts the last collect made"])
    return [(rater, sitting, draft, reply_about(draft))
            for rater, sitting, draft in found.drafts]
