"""A rater's reply whose workbook ``fetch`` could not save: why, in words, and its record.

A message from a rater's address is their reply. When its workbook cannot be saved (the
message or the workbook over the size limits, an Outlook ``winmail.dat`` wrapper, a
message the IMAP server would not give, or none attached while no workbook came from
that address before), saying so once is not enough: ``status`` would
show the pack as not returned and ``remind`` would remind a rater who replied. So
``fetch`` journals it (a ``not-saved`` record, once per message; see
:mod:`sheetflow.packs.journal`), exits 1 while any such reply stands, and ``status`` and
``remind`` show that rater as "replied, workbook not saved". A workbook saved later from
the same address resolves it (:meth:`~sheetflow.packs.journal.Journal.unresolved`), and
so does the rater's pack coming back after it from any address (:mod:`.mail_state`;
:func:`~.pack_status.still_standing` for ``fetch``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..packs.journal import NOT_SAVED, Journal, iso, now_utc, parse_time

REPLIED = "replied, workbook not saved"
"""How ``status``, ``remind`` and ``collect`` show a rater whose reply's workbook
``fetch`` could not save."""
WRAPPER_WHY = ("an Outlook winmail.dat wrapper: ask the {who} to send the workbook as a "
               "plain attachment")
"""A message whose files are wrapped in ``winmail.dat`` (TNEF), which fetch does not open."""
ARCHIVE_SUFFIXES = (".zip", ".7z", ".rar")
"""Attachments taken for an archive: the workbook may be inside, and fetch does not
unpack them (an archive's contents are no file the rater can be shown as sent)."""


def message_too_large(size: int, limit: int, parts: list[tuple[str, int]]) -> str:
    """Why a message over the size limit was not read, naming its attachments."""
    named = ", ".join(f"{name} ({part / 2**20:.1f} MB)" for name, part in parts)
    return (f"the message is {size / 2**20:.1f} MB, over the {limit // 2**20} MB that "
            f"fetch reads{' (attachments: ' + named + ')' if named else ''}: ask the rater to "
            "send the workbook alone")


def attachment_too_large(name: str, size: int, limit: int) -> str:
    """Why a spreadsheet attachment over the size limit was not saved."""
    return (f"attachment {name} is {size / 2**20:.1f} MB, over the {limit // 2**20} MB "
            "limit: ask the rater for the workbook they received, filled in")


def undecodable_why(name: str, *, who: str = "rater", then: str = "") -> str:
    """Why a spreadsheet attachment whose encoded text is broken was not saved, and
    whom (``who``) to ask; ``then`` is said before the ask (fetch's own line adds
    "; not saved")."""
    return (f"attachment {name} could not be decoded (its encoded text is broken){then}: "
            f"ask the {who} to attach the workbook again")


def wrapper_why(from_rater: bool) -> str:
    """Why a message holding ``winmail.dat`` gave no workbook, and whom to ask."""
    return WRAPPER_WHY.format(who="rater" if from_rater else "sender")


def archive_why(names: list[str]) -> str:
    """Why a rater's message whose only files are archives (``names``) gave no workbook."""
    return (f"the workbook came inside an archive ({', '.join(names)}), which fetch does "
            "not open: ask the rater to attach the .xlsx itself")


def not_saved_record(*, rater: str, sender: str, subject: str, message_id: str,
                     date: dt.datetime | None, received: dt.datetime | None,
                     where: str, why: str) -> dict[str, Any]:
    """The ``not-saved`` journal record of a rater's message."""
    return {"event": NOT_SAVED, "message_id": message_id, "rater": rater,
            "sender": sender, "subject": subject, "date": iso(date) if date else "",
            "received": iso(received) if received else "", "where": where, "why": why,
            "time": iso(now_utc())}


def replied_unsaved(journal: Journal) -> dict[str, tuple[str, dt.datetime | None]]:
    """Rater id -> (why their reply's workbook was not saved, when that reply was
    received, None when unknown), for each rater whose reply stands unresolved (the
    latest such reply of each)."""
    out: dict[str, tuple[str, dt.datetime | None]] = {}
    for record in journal.unresolved():
        rater, why = str(record.get("rater", "")), str(record.get("why", ""))
        if rater:
            out[rater] = (why or "fetch could not save it",
                          parse_time(str(record.get("received", ""))))
    return out


def replied_text(why: str) -> str:
    """A pack not back whose rater replied: what the screen and Status sheet say."""
    return f"{REPLIED}: {why}"


def unsaved_line(record: dict[str, Any]) -> str:
    """One line naming a reply whose workbook was not saved, as ``fetch`` lists it."""
    moment = parse_time(str(record.get("received", "")))
    when = f", received {moment:%Y-%m-%d %H:%M} UTC" if moment else ""
    subject = record.get("subject")
    about = f" ({subject!r}{when})" if subject else f" ({when[2:]})" if when else ""
    return (f"{record.get('rater', '')} replied from {record.get('sender', '')}{about} "
            f"but the workbook was not saved: {record.get('why', '')}")
