"""``sheetflow status``: per pack, returned or not, how complete, and its mail history;
for a return with errors, whether ``send replies`` would send the reply it is due.

Above :mod:`.run`, whose ``collect`` it runs without writing anything.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import SealError, SheetflowError
from ..hints import command_line
from ..packs.journal import Journal, parse_time, read_journal
from ..packs.manifest import PackHead, changed_packs, open_manifest
from ..packs.seal import load_generated_study
from ..packs.second_rater import awaiting_lock
from ..spec.study import Study, judge_rater_ids
from ..workbook import layout as L
from .coordinator import FEEDBACK_DIR, draft_name, reimport_step
from .drafts import reply_key, reply_left_out
from .links import (
    claims_on,
    copied_from,
    disowned,
    linked_to,
    sole_link,
    unread_from,
    unread_note,
    unread_stranger,
)
from .mail_state import PackMail, received_times, reply_ended
from .outputs import (
    COLLECTION_FILE,
    OUT_DIR,
    check_mark,
    collection_secret,
    returns_since_collect,
)
from .reply_drafts import ReplyDrafts, read_reply_drafts
from .returns import check_returns_folder
from .run import collect
from .safety import Limits
from .validate import (
    ERROR,
    FileStatus,
    ValidationReport,
    counted_files,
    left_out_files,
    left_out_messages,
    not_the_raters,
)

RETURNS_DIR = L.RETURNS_DIR


@dataclass(frozen=True)
class RaterStatus:
    """One pack's return status (for ``sheetflow status``)."""

    rater: str
    sitting: int
    file: str
    """The rater's pack (whether it was sent is in ``mail``)."""
    returned: bool
    percent_complete: float | None
    """Required answers given, 0-100, in the file that stands for the rater; None when
    the pack has not come back, or its file's answers could not be read (as the Status
    sheet of ``collect``)."""
    errors: int
    warnings: int
    mail: PackMail = field(default_factory=PackMail)
    name: str = ""
    """The rater's name (given and last) from the raters file."""
    returned_file: str = ""
    """The file actually returned ("" when none); it may be named otherwise than the
    pack (a rater's e-mail program or "Save as" renames it)."""
    other_files: tuple[str, ...] = ()
    """Further files that came back as this pack (a rater who sent two): each is named,
    since only one can be used."""
    unusable: str = ""
    """The files linked to this pack that could not be read or identified, and why
    ("" when none; see :mod:`.links`)."""
    claimed: tuple[str, ...] = ()
    """Files that claim this pack with no row proving it (``claim-unproven``): counted
    for nobody, so the pack is not returned, but its rater may have sent one
    (:func:`.links.claims_on`); no reminder goes while they are there."""
    unread_from: tuple[str, ...] = ()
    """For a pack not returned: the files from its rater's address that could not be
    read and are tied to no pack (:func:`.links.unread_from`). One may be this pack, so
    no reminder says it has not arrived; the rater is asked for the workbook instead."""
    sender_unchecked: tuple[str, ...] = ()
    """For a pack whose every return came in a message from another rater's address,
    from no rater's or with no single sender, none marked read: those files. Someone
    may have returned it for its rater, so it is no pack "come back" to remind nobody
    of; the coordinator checks who sent it (:func:`.next_steps.sender_step`)."""
    reply_due: bool = False
    """Its file has errors and no reply went after that file came (a reply sent since
    waits for the rater's corrected file; see :func:`reply_due`)."""
    reply_held: str = ""
    """Why the reply that is due does not go with ``send replies`` ("" when it goes, or
    none is due; see :func:`reply_held`)."""

    def to_dict(self) -> dict[str, Any]:
        """The status as a plain dict, the mail history's keys beside the others
        (``returned_at`` for the time received; times as ISO 8601 text in UTC)."""
        history = {**self.mail.__dict__, "reminded": list(self.mail.reminded)}
        history["returned_at"] = history.pop("returned")
        return {**{k: v for k, v in self.__dict__.items() if k != "mail"}, **history}


@dataclass(frozen=True)
class UnmatchedFile:
    """A returned file that is no pack's return and is linked to none (a damaged
    attachment named like no pack, which may be anyone's, a stranger's workbook, a
    folder)."""

    file: str
    reason: str
    """Its first error (else its first issue), as ``[code] message``."""
    errors: int
    unread: str = ""
    """For a file that could not be read: that its rater is unknown and what to do
    (:func:`.links.unread_note`); "" for a file read."""
    left_out: str = ""
    """For a file that could not be read or identified beside its rater's return used
    (:data:`~.validate.LEFT_OUT_BESIDE`): whose return is used and what to do; "" else."""
    disowned: str = ""
    """For a file whose rows do not prove the pack it claims: the rater it claims and
    why it counted for nobody (:func:`.links.disowned`); "" else."""
    ask: str = ""
    """For a file that claims a pack no row proves (``claim-unproven``): the rater it
    claims, to ask whether they sent it (it is no stranger's file); "" else."""

    def to_dict(self) -> dict[str, Any]:
        """The file as a plain dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class StatusReport:
    """What ``sheetflow status`` shows: each pack, the files that match no pack, and
    what collect has not read yet."""

    packs: list[RaterStatus]
    """One per pack in the manifest (:func:`status`)."""
    not_collected: list[str] = field(default_factory=list)
    """Files of ``returns/`` the last collect did not read (new, or changed since; all
    of them before any collect): ``out/`` is not current until collect runs again."""
    collected: bool = False
    """Whether collect has written ``out/`` (its record of the files read) before."""
    unmatched: list[UnmatchedFile] = field(default_factory=list)
    """The returned files shown on no pack (:func:`unmatched_files`)."""
    journal_damaged: list[int] = field(default_factory=list)
    """The line numbers of ``mail.jsonl`` that hold no record (damaged or edited by
    hand): a message recorded there is missing from the mail history of the packs."""
    unread_text: list[str] = field(default_factory=list)
    """The returns used that hold text sheetflow does not read
    (:meth:`.validate.ValidationReport.unread_text_files`)."""
    text_read: list[str] = field(default_factory=list)
    """The returns used the coordinator marked read: their such text, or who sent them
    (:meth:`.validate.ValidationReport.text_read_files`)."""
    unchecked_sender: list[str] = field(default_factory=list)
    """The returns used that came from another rater's address, from no rater's or with
    no single sender, not marked read
    (:meth:`.validate.ValidationReport.unchecked_sender_files`)."""
    reply_drafts: list[str] = field(default_factory=list)
    """One line per reply draft in ``out/feedback/`` that is not the one the last
    collect made, or that it made and is gone (:mod:`.reply_drafts`), for the packs
    whose row does not name it already (as ``reply_held``): ``send replies`` refuses
    them."""
    sender_warned: list[str] = field(default_factory=list)
    """The returns of ``unchecked_sender`` and the packs' returns not used (errors, set
    aside) that came so, as collect's summary counts them."""
    awaiting_lock: dict[str, str] = field(default_factory=dict)
    """Rater id -> what is to be done, for each second rater whose pack ``sheetflow
    lock`` has still to write (:func:`.second_rater.awaiting_lock`): in the panel, but
    in no pack row yet."""


def status_report(study_dir: str | Path, paths: list[str | Path] | None = None,
                  limits: Limits | None = None, now: dt.datetime | None = None,
                  ) -> StatusReport:
    """:func:`status`, the returned files that match no pack, and those collect has not
    read yet.

    Parameters
    ----------
    study_dir, paths, limits, now
        As in :func:`status`; with ``paths`` given, nothing is said of ``returns/``.

    Returns
    -------
    StatusReport
    """
    root = Path(study_dir)
    heads, study, report, mail, received, journal = _read_returns(root, paths, limits, now)
    collected = (root / OUT_DIR / COLLECTION_FILE).is_file()
    read = {f.file: f.sha256 for f in report.files if f.sha256}  # hashed by the collect
    fresh = returns_since_collect(root, all_before_first=True, digests=read) \
        if paths is None else []
    warned = report.unchecked_sender_files(used_only=False)
    rows = _pack_rows(heads, study, report, mail, received, warned)
    # the reply drafts in out/ are the last collect's: judged only while it is current
    drafts = root / OUT_DIR / FEEDBACK_DIR if collected and not fresh else None
    keys = recorded_reply_keys(root) if drafts is not None else {}
    found = read_reply_drafts(root, [r.id for r in study.raters]) if drafts is not None \
        else ReplyDrafts()
    broken = {**found.stale, **found.missing}  # what send replies refuses
    rows = [replace(r, reply_held=broken.get(draft_name(r.rater, r.sitting))
                    or reply_held(r, study, heads, root, journal, drafts, recorded=keys))
            if r.reply_due else r for r in rows]
    named = {draft_name(r.rater, r.sitting) for r in rows if r.reply_due}
    return StatusReport(rows, fresh, collected, unmatched_files(report), journal.damaged,
                        report.unread_text_files(), report.text_read_files(),
                        report.unchecked_sender_files(),
                        [line for name, line in broken.items() if name not in named],
                        warned,
                        awaiting_lock(study, (h.rater_id for h in heads)))


def reply_held(row: RaterStatus, study: Study, heads: list[PackHead], root: Path,
               journal: Journal, drafts: Path | None, *,
               recorded: dict[str, dict[str, str]] | None = None) -> str:
    """Why the reply due to ``row`` does not go with ``send replies`` ("" when it goes).

    Parameters
    ----------
    row : RaterStatus
        A pack whose reply is due.
    study : Study
        For the rater's e-mail address.
    heads : list of PackHead
        The manifest's packs (the sha256 of the workbook the reply attaches).
    root : Path
        The study folder (the pack is read from ``packs/``).
    journal : Journal
        The mail journal: a reply sent before, with the same text and attachment, is
        not sent again without ``--resend``.
    drafts : Path or None
        ``out/feedback/`` when the last collect is current (its drafts are what
        ``send replies`` sends); None when it is not, or there was none.
    recorded : dict, optional
        What collect recorded of each draft it wrote (:func:`recorded_reply_keys`): a
        draft still as written has its key taken from there, not read from the draft.

    Returns
    -------
    str
        In the words ``collect`` and ``send`` use: an automated judge (imported again,
        not written to), no e-mail address, the pack changed
        after generate (:func:`.drafts.reply_left_out`), or the draft held as sent
        before.
    """
    if row.rater in judge_rater_ids(study):  # a program reads no mail: import again
        return f"no reply draft is written or sent: {reimport_step(row.rater, root)}"
    rater = next((r for r in study.raters if r.id == row.rater), None)
    if rater is None or not rater.email:
        return ("no e-mail address in the raters file, so no reply draft is written or "
                "sent: send them the list on the Issues sheet of "
                f"{OUT_DIR}/validation.xlsx yourself")
    name = draft_name(row.rater, row.sitting)
    if drafts is not None and (drafts / name).is_file():  # what send replies would send
        held = journal.why_held(_draft_key(row, (drafts / name).read_bytes(),
                                           (recorded or {}).get(name)))
        again = command_line("send", root, "replies", "--resend", "--rater", row.rater)
        return (f"'{command_line('send', root, 'replies')}' holds {OUT_DIR}/{FEEDBACK_DIR}/"
                f"{name}, the same reply as an earlier one: {held} ('{again}' for theirs "
                "alone)") if held else ""
    changed = _changed_pack(root, row.file, heads)
    if changed:  # collect leaves its reply out
        return reply_left_out(row.rater, changed, root)
    if drafts is not None:  # removed since collect wrote it
        return (f"no reply draft {OUT_DIR}/{FEEDBACK_DIR}/{name} to send: run "
                f"'{command_line('collect', root)}' again, which writes it")
    return ""  # collect writes it (status says collect is next)


def recorded_reply_keys(root: Path) -> dict[str, dict[str, str]]:
    """What the last collect recorded in ``out/collection.json`` of each reply draft
    it wrote (:func:`.drafts.reply_keys`); empty for a record written before sheetflow
    recorded them, or one that cannot be read (each draft is then read instead)."""
    try:
        record = json.loads((root / OUT_DIR / COLLECTION_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    replies = record.get("replies") if isinstance(record, dict) else None
    return replies if isinstance(replies, dict) else {}


def _draft_key(row: RaterStatus, draft: bytes,
               recorded: dict[str, str] | None) -> tuple[str, str, int, str, str]:
    """The journal's key of ``row``'s reply ``draft``: as collect recorded it while the
    draft is the one it wrote (the same sha256), else read from the draft (the parse
    of the message and its attachment that the record spares)."""
    if isinstance(recorded, dict) and \
            recorded.get("sha256") == hashlib.sha256(draft).hexdigest() and \
            isinstance(recorded.get("attached"), str) and isinstance(recorded.get("text"), str):
        return ("reply", row.rater, row.sitting, recorded["attached"], recorded["text"])
    return reply_key(row.rater, row.sitting, draft)


def _changed_pack(root: Path, file: str, heads: list[PackHead]) -> str:
    """``packs/<file>`` when that pack is not the workbook generate wrote ("" when it
    is, or is missing: collect's draft then says to attach it)."""
    pack = root / L.PACKS_DIR / file
    if not pack.is_file():
        return ""
    changed = changed_packs([(file, hashlib.sha256(pack.read_bytes()).hexdigest())], heads)
    return changed[0] if changed else ""


def status(study_dir: str | Path, paths: list[str | Path] | None = None,
           limits: Limits | None = None, now: dt.datetime | None = None,
           journal: Journal | None = None) -> list[RaterStatus]:
    """Per pack: returned or not, how complete, how many errors and warnings, and its
    mail history (invited, received, reminded, replied to, overdue, held; see
    :mod:`.mail_state`).

    Parameters
    ----------
    study_dir : str or Path
        The study folder.
    paths : list, optional
        Where the returns are (default ``study_dir/returns``, which generate made: a
        missing one is refused, never read as nothing returned).
    limits : Limits, optional
    now : datetime, optional
        The clock for overdue and held (default: now).
    journal : Journal, optional
        The mail journal as the caller read (and checked) it; default: read here.

    Returns
    -------
    list of RaterStatus
        One per pack in the manifest, in manifest order; writes nothing. A file linked
        to the pack alone (:mod:`.links`) makes it returned, with that file's errors.
        The lines of ``mail.jsonl`` that hold no record are left to the caller
        (:func:`status_report` names them; ``remind`` and ``send`` stop on them).
    """
    heads, study, report, mail, received, _ = _read_returns(Path(study_dir), paths,
                                                            limits, now, journal)
    return _pack_rows(heads, study, report, mail, received,
                      report.unchecked_sender_files(used_only=False))


def replies_ended(study_dir: str | Path, records: list[dict[str, Any]]) -> set[str]:
    """The message ids of the ``not-saved`` ``records`` that a pack of their rater
    ended by coming back no earlier than the reply, from whatever address
    (:func:`.mail_state.reply_ended`, the rule ``status`` ends them by).

    Parameters
    ----------
    study_dir : str or Path
        The study folder after ``generate``.
    records : list of dict
        ``not-saved`` records of the mail journal.

    Returns
    -------
    set of str
    """
    back = _back_by_rater(Path(study_dir))
    return {str(r.get("message_id", "")) for r in records
            if any(reply_ended(parse_time(str(r.get("received", ""))), moment)
                   for moment in back.get(str(r.get("rater", "")), []))}


def _back_by_rater(root: Path) -> dict[str, list[dt.datetime]]:
    """Rater id -> when each of their packs that came back was received: as the last
    collect recorded it while it is current (:func:`_recorded_came_back`), else from
    the returns read again (each file validated, nothing written)."""
    recorded = _recorded_came_back(root)
    if recorded is None:
        heads, _, _, mail, _, _ = _read_returns(root, None, None, None)
        times = {h.pack_id: parse_time(mail.get(h.pack_id, PackMail()).returned)
                 for h in heads}
    else:
        heads, now, came = recorded  # a pack whose files' times are unknown: back by now
        times = {pack: parse_time(when) or now for pack, when in came.items()}
    back: dict[str, list[dt.datetime]] = {}
    for head in heads:
        moment = times.get(head.pack_id)
        if moment is not None:
            back.setdefault(head.rater_id, []).append(moment)
    return back


def _recorded_came_back(root: Path) -> tuple[list[PackHead], dt.datetime, dict[str, str]] | None:
    """The manifest's packs, now, and what the last collect recorded of when each pack
    came back (``returned`` in ``out/collection.json``), when that collect is current:
    ``returns/`` holds no file it did not read (:func:`.outputs.returns_since_collect`)
    and has lost none it read, by the same manifest and with the journal whole. None
    when it is not (or recorded none: a record from before it did), and the returns
    must be read again.

    Raises
    ------
    SheetflowError
        As a read of the returns refuses: no manifest, a sealed input edited, no
        ``returns/`` folder.
    """
    manifest = open_manifest(root, private=True)  # read once: indexed and hashed
    manifest.close()
    load_generated_study(root)  # a broken seal is refused, as the read would refuse it
    check_returns_folder(root)
    try:
        record = json.loads((root / OUT_DIR / COLLECTION_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not _marked(root, record):
        return None  # edited since collect wrote it: not trusted, the returns decide
    came = record.get("returned")
    files = record.get("files") if isinstance(came, dict) else None
    if not isinstance(came, dict) or not isinstance(files, list) or \
            record.get("journal_damaged") or record.get("manifest_sha256") != manifest.sha256:
        return None
    # a file removed since would leave its pack not returned: no longer the record's
    paths = [str(f.get("path") or "") if isinstance(f, dict) else "" for f in files]
    if any(not (root / p).exists() for p in paths if p and not p.startswith("hex:")):
        return None
    if returns_since_collect(root):
        return None
    return manifest.heads, dt.datetime.now(dt.UTC), {str(k): str(v) for k, v in came.items()}


def _marked(root: Path, record: dict[str, Any]) -> bool:
    """Whether ``record`` carries collect's mark under the study secret (a study
    without a secret has no mark to check)."""
    secret = collection_secret(root)
    if secret is None:
        return True
    try:
        check_mark(record, secret, study_dir=root)
    except SealError:
        return False
    return True


def still_standing(root: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` (``not-saved`` records no workbook from the same address resolved:
    :meth:`~sheetflow.packs.journal.Journal.unresolved`) less those whose rater's pack
    came back after them all the same (from another address, or saved by hand), as
    ``status``, ``collect`` and ``remind`` end them: ``fetch`` exits 1 for what they
    show as "replied, workbook not saved", and no more."""
    if not records:
        return records
    try:
        ended = replies_ended(root, records)  # reads the returns: only when needed
    except SheetflowError:  # the returns cannot be read against the packs (no manifest,
        return records      # a broken seal): by the address alone, as before
    return [r for r in records if str(r.get("message_id", "")) not in ended]


_Returns = tuple[list[PackHead], Study, ValidationReport, dict[str, PackMail],
                 dict[str, dt.datetime], Journal]


def _read_returns(root: Path, paths: list[str | Path] | None, limits: Limits | None,
                  now: dt.datetime | None, journal: Journal | None = None) -> _Returns:
    """The packs, the study, collect's report of the returns (written nowhere), each
    pack's mail history, when each file came (sha256 -> time) and the mail journal
    (read here when not given; its lines that hold no record in ``damaged``)."""
    manifest = open_manifest(root)
    manifest.close()  # only the pack heads are needed here
    study = load_generated_study(root)  # a sealed input edited: refused as such
    # read once: the lines named as damaged are those of the journal collect used
    journal = read_journal(root) if journal is None else journal
    if paths is None:  # generate made it: a missing one is no "nothing returned"
        check_returns_folder(root)
    result = collect(root, paths, write=False, limits=limits, now=now, journal=journal)
    received = received_times(root, result.report.files, journal, result.received)
    return manifest.heads, study, result.report, result.mail, received, journal


def reply_due(errors: int, standing: list[FileStatus], received: dict[str, dt.datetime],
              reply_sent: str) -> bool:
    """Whether a pack's return still wants the reply asking for fixes.

    Parameters
    ----------
    errors : int
        The errors of the files that stand for the rater.
    standing : list of FileStatus
        Those files.
    received : dict
        sha256 -> when each file came (:func:`.mail_state.received_times`).
    reply_sent : str
        When the last reply went (ISO 8601; "" when none).

    Returns
    -------
    bool
        True with errors and no reply sent after every one of those files came (a file
        of unknown arrival may be newer than the reply).
    """
    sent = parse_time(reply_sent)
    if not errors or sent is None:
        return bool(errors)
    return any(received.get(f.sha256) is None or received[f.sha256] > sent
               for f in standing)


def _pack_rows(heads: list[PackHead], study: Study, report: ValidationReport,
               mail: dict[str, PackMail], received: dict[str, dt.datetime],
               warned: list[str]) -> list[RaterStatus]:
    """One :class:`RaterStatus` per pack, in manifest order (``warned``: the returns
    that came from another rater's address, from no rater's or with no single sender,
    not marked read, used or not: :meth:`.ValidationReport.unchecked_sender_files`)."""
    files = report.files
    rivals = {i.file for i in report.issues if i.code == "duplicate-rater"}
    aside = not_the_raters(report.issues)
    left_out = left_out_files(report.issues)  # named apart (unmatched_files)
    names = {r.id: " ".join(filter(None, (r.name, r.last_name))) for r in study.raters}
    unchecked = set(warned)
    out = []
    for head in heads:
        linked = linked_to(files, head.pack_id)
        mine = [f for f in files if f.pack_id == head.pack_id]
        mine += [f for f in linked if sole_link(f)]
        standing = counted_files(mine, aside)
        # the file that stands for the rater, as collect takes it: the one used, else
        # one not set aside for their other file (a filled file with errors, never the
        # untouched pack sent back beside it, whatever the names' order)
        best = next((f for f in mine if f.used), standing[0]) if mine else None
        errors = sum(f.errors for f in standing)
        history = mail.get(head.pack_id, PackMail())
        out.append(RaterStatus(
            rater=head.rater_id, sitting=head.sitting, file=head.file,
            returned=best is not None,
            # as on collect's Status sheet: no completeness for a pack not returned,
            # nor for a file linked to it (read as no pack: none of its answers counted)
            percent_complete=best.percent_complete if best and best.pack_id else None,
            errors=errors, warnings=sum(f.warnings for f in standing),
            mail=history, name=names.get(head.rater_id, ""),
            returned_file=best.file if best else "",
            other_files=tuple(f.file for f in mine if f is not best and f.file in rivals),
            unusable="; ".join(f"{f.file}: {f.link}" for f in linked
                               if f.file not in left_out),
            claimed=tuple(claims_on(head.pack_id, report.issues)),
            unread_from=() if best else tuple(unread_from(head.rater_id, files,
                                                          report.issues)),
            # a return from the rater's own address (or marked read) vouches for it
            sender_unchecked=tuple(f.file for f in mine) if mine and all(
                f.file in unchecked for f in mine) else (),
            reply_due=reply_due(errors, standing, received, history.reply_sent)))
    return out


def unmatched_files(report: ValidationReport) -> list[UnmatchedFile]:
    """The returned files no pack row shows: identified as no pack, linked to none (a
    linked file is named on its packs) and no exact copy of another file (read once:
    the original is shown, on its pack or here); and the files left out beside their
    rater's return used (:data:`~.validate.LEFT_OUT_BESIDE`), linked or not, whose
    pack's row shows the file used.

    Parameters
    ----------
    report : ValidationReport
        collect's report of the returns.

    Returns
    -------
    list of UnmatchedFile
        In the report's order (by file name).
    """
    originals = report.originals()
    left_out = left_out_messages(report.issues)
    out = []
    for f in report.files:
        if f.file not in left_out and (f.pack_id or f.linked or f.sha256 in originals
                                        or copied_from(f, report.files, report.issues)):
            continue  # shown on a pack, or a copy of a file shown (read once)
        issues = [i for i in report.issues if i.file == f.file]
        first = next((i for i in issues if i.severity == ERROR), issues[0] if issues else None)
        reason = f"[{first.code}] {first.message}" if first else "not a pack of this study"
        if f.file in left_out:
            out.append(UnmatchedFile(f.file, reason, f.errors, left_out=left_out[f.file]))
            continue
        unread = unread_note(f) if unread_stranger(f, issues) else ""
        ask = next((i.rater for i in issues if i.code == "claim-unproven"), "")
        out.append(UnmatchedFile(f.file, reason, f.errors, unread,
                                 disowned=disowned(f, issues), ask=ask))
    return out
