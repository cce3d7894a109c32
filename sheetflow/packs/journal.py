"""The study's mail journal: ``mail.jsonl``, one JSON object a line, only ever appended.

``sheetflow send`` writes a ``sending`` record before each SMTP transaction and a
``sent``, ``refused`` or ``failed`` record (same ``message_id``) after it, so a crash
between the two leaves a ``sending`` record with no outcome: that message is
*unconfirmed* (it may or may not have left), never lost from the record and never sent
again without ``--resend``. ``sheetflow fetch`` writes one ``received`` record per
spreadsheet attachment it saved, and one ``not-saved`` record per message from a
rater's address whose workbook it could not save (too large, an Outlook wrapper, a
message the server would not give), with why: that rater replied, and stays so
recorded until a workbook from the same address is saved after it. ``status``,
``remind`` and ``collect`` read the journal to know who was invited, reminded and
replied to, and who sent which file.

Each line is written with one ``write`` on a file opened for appending and flushed to
disk (``fsync``) before the SMTP transaction starts. A last line cut off by a crash
(no line end) is ignored on reading; before the next append it is moved out into a
file of its own, ``mail.jsonl.torn-N`` (:func:`set_aside_torn`), so it never becomes a
damaged line in the middle that stops ``send`` and ``fetch``. No password or other
secret is ever part of a record.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOURNAL_FILE = "mail.jsonl"
KINDS = ("invitation", "reminder", "reply")
OUTCOMES = ("sent", "refused", "failed")
NOT_SAVED = "not-saved"
"""The event of a rater's message whose workbook ``fetch`` could not save."""


def now_utc() -> dt.datetime:
    """The current time in UTC, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(moment: dt.datetime) -> str:
    """A time as ISO 8601 text in UTC (``2026-09-15T08:30:00+00:00``)."""
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat()


def parse_time(text: str) -> dt.datetime | None:
    """An ISO time from the journal (None when absent or unreadable)."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def append(root: Path, record: dict[str, Any]) -> None:
    """Append one record to ``root/mail.jsonl`` and flush it to disk.

    Raises
    ------
    OSError
        The journal cannot be written (the caller must not go on sending).
    """
    path = Path(root) / JOURNAL_FILE
    line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
    # the commands that append set a torn line aside first and say so; this is for a
    # line torn within the run (a full disk), which must not become a damaged line
    set_aside_torn(root)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


TORN_NAME = JOURNAL_FILE + ".torn-{}"
"""Where a last line cut off by a crash is set aside (the first free number)."""


def set_aside_torn(root: Path) -> str:
    """Move the journal's last line out when it has no line end (an append cut off by
    a crash), into the first free ``mail.jsonl.torn-N`` beside it.

    Written and flushed there before the journal is cut back to its last whole line,
    so a crash in between leaves the line in both places, never in neither.

    Parameters
    ----------
    root : Path
        The study folder.

    Returns
    -------
    str
        The name of the file the line went to ("" when the journal ends whole).

    Raises
    ------
    OSError
        The line cannot be set aside (the journal is left as it was).
    """
    path = Path(root) / JOURNAL_FILE
    try:
        with path.open("rb") as fh:  # the last byte first: every append asks
            size = fh.seek(0, os.SEEK_END)
            if size:
                fh.seek(-1, os.SEEK_END)
            if not size or fh.read(1) == b"\n":
                return ""
            fh.seek(0)
            data = fh.read()
    except (FileNotFoundError, IsADirectoryError):
        return ""  # a folder there is refused by whoever reads it
    whole = data.rfind(b"\n") + 1
    number = 1
    while (Path(root) / TORN_NAME.format(number)).exists():
        number += 1
    aside = Path(root) / TORN_NAME.format(number)
    with aside.open("xb") as fh:
        fh.write(data[whole:])
        fh.flush()
        os.fsync(fh.fileno())
    with path.open("r+b") as fh:
        fh.truncate(whole)
        os.fsync(fh.fileno())
    return aside.name


def torn_warning(name: str) -> str:
    """The warning for a last line set aside into ``name`` (:func:`set_aside_torn`)."""
    return (f"{JOURNAL_FILE}: its last line was cut off (a write stopped part-way, by a "
            f"crash or a full disk) and held no whole record: moved to {name}, and "
            "the journal goes on from the line before. Read that file to see what the "
            "line began to record")


def records(root: Path, damaged: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """Every complete record of the journal, oldest first (none when there is none).

    A last line without its line end was cut off by a crash while it was written and
    is passed over; any other line that is not a record (edited or damaged) is passed
    over too, its number added to ``damaged`` when given.
    """
    path = Path(root) / JOURNAL_FILE
    if not path.exists():
        return
    # anything else there (a folder) is opened, so the refusal names it: passed over, it
    # read as a journal with no message, which remind took for packs sent by hand
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n"):
                return  # cut off by a crash while it was written
            try:
                record = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                record = None
            if isinstance(record, dict):
                yield record
            elif damaged is not None and raw.strip():
                damaged.append(number)


_SENT_AGAIN = "a message recorded there as sent could go again"


def damaged_journal(lines: list[int], *, risk: str = _SENT_AGAIN,
                    then: str = "send again", read_by: str = "") -> str:
    """The line naming the journal's lines that are no record, and what to do.

    ``send``, ``remind`` and ``fetch`` stop with it; ``status`` and ``collect`` show
    it as a warning.

    Parameters
    ----------
    lines : list of int
        The line numbers that hold no record (:attr:`Journal.damaged`).
    risk : str
        What a record lost there does to the command that read it.
    then : str
        What to do once the file is mended.
    read_by : str, optional
        The command whose outputs record the lines: said of that run ("collect read
        mail.jsonl while its line 3 held no record"), not of the file now, which may
        have been mended since.

    Returns
    -------
    str
    """
    shown = ", ".join(map(str, lines[:5])) + (" ..." if len(lines) > 5 else "")
    many = len(lines) > 1
    which, them, it = ("lines", "those lines", "they") if many else ("line", "that line", "it")
    if read_by:
        head, restore = f"{read_by} read {JOURNAL_FILE} while its {which} {shown} held", \
            JOURNAL_FILE
    else:
        head, restore = f"{JOURNAL_FILE}: {which} {shown} {'hold' if many else 'holds'}", \
            "the file"
    return (f"{head} no record sheetflow wrote (damaged or edited by hand): {risk}. "
            f"Restore {restore} from a backup, or remove {them} once you know what {it} "
            f"recorded, then {then}")


@dataclass
class Delivery:
    """One message ``send`` tried: its ``sending`` record and its outcome, if any."""

    kind: str
    rater: str
    sitting: int
    message_id: str
    started: dt.datetime | None
    attachment_sha256: str = ""
    about: str = ""
    outcome: str = ""
    reply: str = ""
    finished: dt.datetime | None = None

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        """What makes two messages the same message (kind, rater, sitting, attachment)."""
        return (self.kind, self.rater, self.sitting, self.attachment_sha256, self.about)


@dataclass
class Journal:
    """The journal read back: every delivery by Message-ID and every received file."""

    deliveries: dict[str, Delivery] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[int] = field(default_factory=list)  # line numbers that hold no record
    not_saved: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Each ``not-saved`` record, with how many ``received`` records came before it."""

    def sent(self, kind: str, rater: str, sitting: int) -> list[Delivery]:
        """The confirmed deliveries of one kind to one rater and sitting, oldest first."""
        return [d for d in self.deliveries.values() if d.outcome == "sent"
                and (d.kind, d.rater, d.sitting) == (kind, rater, sitting)]

    def unconfirmed(self, kind: str, rater: str, sitting: int) -> list[Delivery]:
        """The deliveries of one kind to one rater and sitting whose outcome was never
        recorded (they may or may not have arrived), oldest first."""
        return [d for d in self.deliveries.values() if d.outcome == ""
                and (d.kind, d.rater, d.sitting) == (kind, rater, sitting)]

    def holding(self, key: tuple[str, str, int, str, str]) -> Delivery | None:
        """The delivery that stops this message going again: sent, or unconfirmed."""
        for d in self.deliveries.values():
            if d.key == key and d.outcome in ("sent", ""):
                return d
        return None

    def why_held(self, key: tuple[str, str, int, str, str]) -> str:
        """Why the message of ``key`` (:attr:`Delivery.key`) is not sent again without
        ``--resend`` ("" when nothing holds it): it was sent, or is unconfirmed."""
        earlier = self.holding(key)
        if earlier is None:
            return ""
        if earlier.outcome == "sent":
            when = iso(earlier.finished or earlier.started) if (
                earlier.finished or earlier.started) else "earlier"
            return (f"already sent on {when} ({earlier.message_id}); --resend sends it "
                    "again")
        return (f"unconfirmed: sending {earlier.message_id} was begun but its outcome was "
                "never recorded (it may have arrived: ask the rater); --resend sends it "
                "again")

    def unresolved(self) -> list[dict[str, Any]]:
        """The ``not-saved`` records (a rater's message whose workbook fetch could not
        save) with no workbook from the same address saved after them."""
        return [record for before, record in self.not_saved
                if not any(later.get("sender") == record.get("sender")
                           for later in self.received[before:])]

    def received_by_sha256(self) -> dict[str, dict[str, Any]]:
        """The first ``received`` record of each attachment's sha256."""
        out: dict[str, dict[str, Any]] = {}
        for record in self.received:
            out.setdefault(str(record.get("sha256", "")), record)
        return out


def read_journal(root: Path) -> Journal:
    """The study's journal, folded into deliveries and received files."""
    journal = Journal()
    for record in records(root, journal.damaged):
        event, mid = record.get("event"), str(record.get("message_id", ""))
        if event == "sending" and mid:
            journal.deliveries[mid] = Delivery(
                str(record.get("kind", "")), str(record.get("rater", "")),
                int(record.get("sitting", 1) or 1), mid, parse_time(record.get("time", "")),
                str(record.get("attachment_sha256", "")), str(record.get("about", "")))
        elif event in OUTCOMES and mid in journal.deliveries:
            delivery = journal.deliveries[mid]
            delivery.outcome, delivery.reply = str(event), str(record.get("reply", ""))
            delivery.finished = parse_time(record.get("time", ""))
        elif event == "received":
            journal.received.append(record)
        elif event == NOT_SAVED:
            journal.not_saved.append((len(journal.received), record))
    return journal
