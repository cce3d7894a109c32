"""Per pack, what the mail says: invited, returned, reminded, replied to, overdue, held.

Read from the study's mail journal (:mod:`sheetflow.packs.journal`) and the returns
collect found. A return's received time is, in this order: the time of the message
``fetch`` saved it from (the IMAP server's arrival time, else the message's ``Date``),
the ``Date`` of the saved message it sits in (``.eml``/``.mbox`` in ``returns/``), or
the time the file was last written in ``returns/``. Times are UTC.

A sitting-2 pack (protocol 001) is *held* until 24 hours after the rater's sitting-1
return was received: its invitation is not sent and no reminder is drafted before. A
pack that has come back is held no more (the hold is over, whenever it came).
A pack is *overdue* when it has not come back by the end of the ``[mail] deadline``
day (UTC).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..hints import command_line
from ..packs.journal import JOURNAL_FILE, Journal, damaged_journal, iso, parse_time
from ..packs.manifest import PackHead
from .links import sole_link
from .returns import escape_controls
from .unsaved import replied_unsaved
from .validate import FileStatus, Issue, issue

SITTING_GAP = dt.timedelta(hours=24)
"""Protocol 001: the second sitting starts at least 24 hours after the first."""


@dataclass(frozen=True)
class PackMail:
    """The mail history of one pack (times as ISO 8601 text in UTC, "" when none).

    Attributes
    ----------
    invited : str
        The last invitation sent (confirmed by the server).
    invitation_unconfirmed : str
        When sending began of the last invitation whose outcome is unknown (the
        connection broke before the server's answer: it may or may not have arrived),
        when no invitation was confirmed ("" otherwise).
    returned : str
        When the first return of this pack was received.
    reminded : tuple of str
        Every reminder sent.
    reply_sent : str
        The last reply (the cells to fix) sent.
    overdue : bool
        Not returned by the end of the deadline day.
    held : str
        Why its invitation may not go yet ("" when it may, or the pack has come back):
        a sitting-2 pack before 24 hours after sitting 1 came back.
    not_saved : str
        The pack has not come back, but its rater replied and ``fetch`` could not save
        the workbook: why ("" otherwise; see :mod:`.unsaved`). Shown on the rater's
        first pack not back.
    """

    invited: str = ""
    invitation_unconfirmed: str = ""
    returned: str = ""
    reminded: tuple[str, ...] = ()
    reply_sent: str = ""
    overdue: bool = False
    held: str = ""
    not_saved: str = ""


def received_times(root: Path, files: list[FileStatus], journal: Journal,
                   in_messages: dict[str, dt.datetime]) -> dict[str, dt.datetime]:
    """sha256 -> when each returned file was received (see the module docstring)."""
    fetched = journal.received_by_sha256()
    out: dict[str, dt.datetime] = {}
    for f in files:
        moment = parse_time(str(fetched.get(f.sha256, {}).get("received", "")))
        moment = moment or in_messages.get(f.sha256) or _written(root, f.path)
        if moment is not None:
            out[f.sha256] = moment
    return out


def names_as_sent(files: list[FileStatus], journal: Journal) -> dict[str, str]:
    """File name -> the name the rater gave it: fetch saves an attachment under a local
    name (the time received before it), which the rater never saw; a file that did not
    come by mail keeps its own name."""
    fetched = journal.received_by_sha256()
    return {f.file: escape_controls(_attachment_name(fetched.get(f.sha256, {})))
            or f.file for f in files}


def _attachment_name(record: dict[str, Any]) -> str:
    """The attachment name a ``received`` record holds ("" when it holds none: a record
    written by hand may say ``null``, which is no name the rater gave)."""
    name = record.get("attachment")
    return name if isinstance(name, str) else ""


def as_sent(names: list[str], sent_as: dict[str, str]) -> list[str]:
    """``names`` as the rater named them (:func:`names_as_sent`), or as they are when
    two would read alike (the same attachment name sent twice)."""
    theirs = [sent_as.get(name, name) for name in names]
    return theirs if len(set(theirs)) == len(theirs) else names


def as_sent_received(names: list[str], files: list[FileStatus], journal: Journal,
                     ) -> list[str]:
    """``names`` as the rater named them, each fetched file with when it came
    (``scores.xlsx (received 2026-09-15 09:30 UTC)``): the rater knows the name they
    sent, not fetch's local name, and two workbooks of one pack often went under one
    name. A file that did not come by mail, or whose record holds no attachment name,
    keeps its own; all keep their own when two would still read alike."""
    fetched = journal.received_by_sha256()
    sha = {f.file: f.sha256 for f in files}
    out = []
    for name in names:
        record = fetched.get(sha.get(name, ""), {})
        theirs = escape_controls(_attachment_name(record))
        when = short_time(str(record.get("received", "")))
        out.append(f"{theirs} (received {when} UTC)" if theirs and when else theirs or name)
    return out if len(set(out)) == len(out) else names


def _written(root: Path, where: str) -> dt.datetime | None:
    if not where or where.startswith("hex:"):
        return None
    path = Path(where) if Path(where).is_absolute() else root / where
    try:
        return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).replace(microsecond=0)
    except OSError:
        return None


def pack_mail(heads: list[PackHead], files: list[FileStatus],
              received: dict[str, dt.datetime], journal: Journal, *,
              deadline: dt.date | None = None, now: dt.datetime | None = None,
              ) -> dict[str, PackMail]:
    """The mail history of every pack, by pack id.

    Parameters
    ----------
    heads : list of PackHead
        The manifest's packs.
    files : list of FileStatus
        collect's report of the returns (a file linked to one pack alone, though
        unusable, counts as that pack's return; see :mod:`.links`).
    received : dict
        From :func:`received_times`.
    journal : Journal
    deadline : date, optional
    now : datetime, optional
        The clock (default: now).
    """
    now = now or dt.datetime.now(dt.UTC)
    # a pack back whose every file came at an unknown time came back by now
    back = {pack: moment or now for pack, moment in came_back(files, received).items()}
    first = {h.rater_id: h.pack_id for h in heads if h.sitting == 1}
    replied = replied_unsaved(journal)
    out = {}
    for head in sorted(heads, key=lambda h: h.sitting):  # a reply is for the first not back
        returned = back.get(head.pack_id)
        invited = _last(journal, "invitation", head)
        out[head.pack_id] = PackMail(
            invited=invited,
            invitation_unconfirmed="" if invited else _unconfirmed(journal, head),
            returned=iso(returned) if returned else "",
            reminded=tuple(iso(d.finished or d.started or now)
                           for d in journal.sent("reminder", head.rater_id, head.sitting)),
            reply_sent=_last(journal, "reply", head),
            overdue=returned is None and deadline is not None and now.date() > deadline,
            # once the pack is back its hold is over: nothing waits on it any more
            held="" if returned else _held(head, back.get(first.get(head.rater_id, "")),
                                           now),
            not_saved=_reply_not_saved(replied, head.rater_id, returned))
    return {head.pack_id: out[head.pack_id] for head in heads}


def came_back(files: list[FileStatus], received: dict[str, dt.datetime],
              ) -> dict[str, dt.datetime | None]:
    """Pack id -> when the first of its files was received, for each pack a file stands
    for (identified as it, or linked to it alone); None when no such file's time is
    known.

    Parameters
    ----------
    files : list of FileStatus
        collect's report of the returns.
    received : dict
        From :func:`received_times`.
    """
    back: dict[str, dt.datetime | None] = {}
    for f in files:
        pack = f.pack_id or sole_link(f)
        if not pack:
            continue
        moment, before = received.get(f.sha256), back.get(pack)
        back[pack] = min(moment, before) if moment and before else moment or before
    return back


def _reply_not_saved(replied: dict[str, tuple[str, dt.datetime | None]], rater: str,
                     returned: dt.datetime | None) -> str:
    """Why the rater's reply whose workbook fetch could not save stands for this pack
    ("" when it does not), taking it from ``replied`` once it is placed.

    The first pack not back takes it. A pack that came back no earlier than that reply
    ends it: its workbook came after all (from the rater's other address, or saved by
    hand), and a later sitting, perhaps not even sent yet, must not be said to have
    replied."""
    why, when = replied.get(rater, ("", None))
    if not why:
        return ""
    if returned is None or reply_ended(when, returned):
        del replied[rater]
    return "" if returned else why


def reply_ended(when: dt.datetime | None, returned: dt.datetime | None) -> bool:
    """Whether a pack that came back at ``returned`` ends its rater's reply whose
    workbook fetch could not save, received at ``when``: it came no earlier than the
    reply, so the workbook arrived after all (from the rater's other address, or saved
    by hand). A reply of unknown time, or one after the pack came back (a corrected
    workbook too large, say), is not ended by it."""
    return when is not None and returned is not None and when <= returned


def _last(journal: Journal, kind: str, head: PackHead) -> str:
    sent = journal.sent(kind, head.rater_id, head.sitting)
    return iso(sent[-1].finished or sent[-1].started) if sent and (
        sent[-1].finished or sent[-1].started) else ""


def _unconfirmed(journal: Journal, head: PackHead) -> str:
    """When the last invitation of ``head`` with no recorded outcome began ("")."""
    begun = [d.started for d in journal.unconfirmed("invitation", head.rater_id,
                                                    head.sitting) if d.started]
    return iso(max(begun)) if begun else ""


def _held(head: PackHead, first_back: dt.datetime | None, now: dt.datetime) -> str:
    """Why a sitting-2 pack may not go out yet ("" when it may)."""
    if head.sitting != 2:
        return ""
    if first_back is None:
        return "held: sitting 1 has not come back yet"
    due = first_back + SITTING_GAP
    if now < due:
        return (f"held until {iso(due)} (24 hours after sitting 1 came back on "
                f"{iso(first_back)})")
    return ""


def short_time(text: str) -> str:
    """An ISO time as ``yyyy-mm-dd hh:mm`` (UTC) for the Status sheet ("" stays "")."""
    moment = parse_time(text)
    return f"{moment.astimezone(dt.UTC):%Y-%m-%d %H:%M}" if moment else ""


# --------------------------------------------------------------------------- a damaged journal

FETCHED_RISK = (
    "a file fetched in the message recorded there may have gone without its sender check "
    "or its time received (which decides which of a rater's two files stands after a "
    "reply)")
"""What a lost ``received`` record does to the returns collect read."""
COLLECT_RISK = (f"{FETCHED_RISK} and be named by its local name in a reply draft; a "
                "message sent may show as never sent on the Mail sheet")
"""What a line of ``mail.jsonl`` that is no record does to a collect and its outputs."""
JOURNAL_CODE = "journal-damaged"
"""The issue code of lines of ``mail.jsonl`` that held no record (:func:`journal_issue`)."""


def journal_caveat(lines: list[int], *, risk: str, then: str) -> str:
    """The journal's damaged lines as the outputs of a collect record them: said of the
    run, not of the file now (:func:`~sheetflow.packs.journal.damaged_journal`)."""
    return damaged_journal(lines, risk=risk, then=then, read_by="collect")


def collect_caveat(lines: list[int], study_dir: str | Path) -> str:
    """What ``out/validation.xlsx`` says of the journal's damaged lines (the red row
    above the Status and Mail tables, and the Issues sheet's row).

    The command to run again names ``study_dir`` as the user gave it to collect, as
    every command the workbook's Status sheet names does: the workbook is read beside
    the shell the study is run from.
    """
    return journal_caveat(lines, risk=COLLECT_RISK,
                          then=f"run '{command_line('collect', study_dir)}' again")


def journal_issue(lines: list[int], study_dir: str | Path) -> Issue:
    """The journal's damaged lines as an issue of the report (``journal-damaged``): a
    row of the Issues sheet, counted with the warnings, so filtering the sheet finds it.

    A warning, since the ratings are used; collect still exits 1 for the damaged lines
    (``Collection.journal_damaged``), as it did before the row existed.
    """
    return issue(JOURNAL_CODE, file=JOURNAL_FILE, caveat=collect_caveat(lines, study_dir))
