"""``sheetflow fetch``: the returns taken straight from the inbox into ``returns/``.

:func:`fetch` reads messages from an IMAP folder (read-only unless ``mark_seen``, see
:mod:`.imap_source`), from an ``.mbox`` folder or from saved ``.eml`` files
(:mod:`.message_files`), and saves every spreadsheet attachment
(:data:`~.mailbox.SPREADSHEET_SUFFIXES`) into ``returns/`` under a safe, unique name:
the time the message was received and the attachment's name reduced to letters,
digits, ``.``, ``-`` and ``_`` (never a folder part, never a hidden name). A file is
never overwritten, and bytes already in ``returns/`` (or fetched before) are not saved
again. Each attachment saved is journalled (``received`` in ``mail.jsonl``, see
:mod:`sheetflow.packs.journal`) with the message's Message-ID, sender (or why it has no
single one), date and subject, so ``collect`` can check the sender against
``raters.csv``. A message without a spreadsheet attachment, one over the size limit, or
one that cannot be read is listed in the report, not saved: raters' first, and those of
no rater without a spreadsheet counted apart; an attachment whose encoded text cannot be
decoded is named apart, not saved, and makes ``fetch`` fail. A rater's message whose
workbook cannot be saved is journalled as their reply (:mod:`.unsaved`); a message the
IMAP server breaks off on is named and skipped, and the rest read on a new connection. A
rerun saves nothing already saved; a line of ``mail.jsonl`` that is no record stops it
before any message is read, since a message recorded there as fetched would be taken as
new.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MailError, SheetflowError, UsageError
from ..hints import command_line
from ..packs.journal import (
    JOURNAL_FILE,
    Journal,
    append,
    damaged_journal,
    iso,
    now_utc,
    read_journal,
    set_aside_torn,
)
from ..spec.study import load_study
from ..staging import write_alone
from ..workbook import layout as L
from .imap_source import ImapSource, imap_messages
from .mailbox import (
    MAX_ATTACHMENT_BYTES,
    Attachment,
    Message,
    parse_message,
    too_large_text,
)
from .message_files import MAX_MESSAGE_BYTES, Raw, eml_messages, mbox_messages
from .pack_status import still_standing
from .returns import file_digest
from .unsaved import (
    ARCHIVE_SUFFIXES,
    archive_why,
    attachment_too_large,
    message_too_large,
    not_saved_record,
    undecodable_why,
    unsaved_line,
    wrapper_why,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Saved:
    """One attachment ``fetch`` saved (or found already saved)."""

    file: str
    attachment: str
    sha256: str
    message_id: str
    sender: str
    subject: str
    where: str
    sender_problem: str = ""
    """Why its message had no single sender ("" when it had one)."""

    @property
    def shown_sender(self) -> str:
        """Its sender as a report names it: the address, else why there is none."""
        return self.sender or f"({self.sender_problem or 'no sender'})"


@dataclass
class FetchReport:
    """What ``fetch`` did with each message it read.

    Attributes
    ----------
    saved : list of Saved
        Attachments written into ``returns/``.
    duplicates : list of Saved
        Attachments whose bytes were already in ``returns/`` (``file`` names that copy).
    known : int
        Attachments fetched by an earlier run (nothing new).
    listed : list of str
        Messages not saved from, each with why (no spreadsheet, too large, unreadable):
        those from raters' addresses first, then ``earlier``, the ``unrelated`` ones last.
    unrelated : int
        Of ``listed``, the messages from no rater's address without a spreadsheet
        attachment (the last lines): a busy inbox's other mail, counted, not shown.
    undecodable : list of str
        One line for each spreadsheet attachment not saved because its encoded text
        could not be decoded: the file that was sent is lost, so ``fetch`` fails.
    unknown_senders : list of (str, str)
        (sender, file) for each saved file whose sender is no rater's address.
    unsure_senders : list of (str, str)
        (why, file) for each saved file whose message had no single sender address.
    messages : int
        Messages read (those not read, and those skipped, apart).
    not_read : int
        Files given as a message, or messages of an mbox, that hold none: empty, or no
        mail message (each in ``listed``, with why).
    skipped : list of str
        The messages the IMAP server broke off on (each also in ``listed``, with what
        to do): the connection was opened again and the messages after them read.
    not_saved : list of dict
        The ``not-saved`` records of ``mail.jsonl`` that stand after the run (this
        run's and earlier ones'): replies from raters' addresses whose workbook could
        not be saved, with no workbook from the same address saved since.
    earlier : list of str
        Those of them not met in this run, one line each (in ``listed`` too, after the
        raters' messages of this run).
    over : list of str
        Of ``listed``, the lines of raters' replies not saved that are over (a workbook
        of theirs came since): nothing is left to do about them.
    torn : str
        The file the journal's last line, cut off by a crash, was moved to before this
        run appended (:func:`~sheetflow.packs.journal.set_aside_torn`); "" when none.
    """

    saved: list[Saved] = field(default_factory=list)
    duplicates: list[Saved] = field(default_factory=list)
    known: int = 0
    listed: list[str] = field(default_factory=list)
    undecodable: list[str] = field(default_factory=list)
    unknown_senders: list[tuple[str, str]] = field(default_factory=list)
    unsure_senders: list[tuple[str, str]] = field(default_factory=list)
    messages: int = 0
    not_read: int = 0
    skipped: list[str] = field(default_factory=list)
    unrelated: int = 0
    not_saved: list[dict[str, Any]] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)
    over: list[str] = field(default_factory=list)
    torn: str = ""


def fetch(study_dir: str | Path, *, imap: ImapSource | None = None,
          mbox: Path | None = None, eml: list[Path] | None = None,
          max_attachment: int = MAX_ATTACHMENT_BYTES,
          given: Sequence[str] = ()) -> FetchReport:
    """Save the spreadsheet attachments of the messages from one source into ``returns/``.

    Parameters
    ----------
    study_dir : str or Path
        A study folder.
    imap : ImapSource, optional
    mbox : Path, optional
        A mail folder in mbox form (read only).
    eml : list of Path, optional
        Saved messages (read only).
    max_attachment : int
        Larger spreadsheet attachments are listed, not saved.
    given : sequence of str, optional
        What followed the study folder on the command line (the source and the options
        that matter for a rerun), for the command a problem says to run again once it
        is mended.

    Returns
    -------
    FetchReport

    Raises
    ------
    MailError
        The IMAP server cannot be reached, refuses the login or has no such folder, or
        broke off other than on one message (the report of what was done before is
        ``exc.report``). A message it broke off on is named in the report and skipped:
        the connection is opened again and the messages after it read.
    UsageError
        No source, more than one, or a file that does not exist.
    SheetflowError
        A line of ``mail.jsonl`` is no record: a message it recorded as fetched would be
        taken as new. Nothing is read or saved.
    """
    root = Path(study_dir)
    sources = [s for s in (imap, mbox, eml) if s]
    if len(sources) != 1:
        raise UsageError("give one source: --imap HOST:PORT (or [mail] imap), --mbox FILE, "
                         "or saved .eml files")
    again = command_line("fetch", root, *given)
    study = load_study(root)
    journal = read_journal(root)
    if journal.damaged:  # before any source is opened or any file saved
        raise SheetflowError(damaged_journal(journal.damaged, risk=_FETCHED_AGAIN,
                                             then=f"run '{again}' again"))
    torn = set_aside_torn(root)  # here, to be said: the first append does it silently
    saver = _Saver(root, {r.email.lower(): r.id for r in study.raters if r.email},
                   max_attachment, journal)
    saver.report.torn = torn
    if imap is not None:
        messages = imap_messages(dataclasses.replace(imap, again=again))
    elif mbox is not None:
        messages = mbox_messages(mbox, MAX_MESSAGE_BYTES)
    else:
        messages = eml_messages(eml or [], MAX_MESSAGE_BYTES)
    try:
        for raw in messages:
            saver.take(raw)
    except MailError as exc:  # what was saved before the server broke off is shown
        exc.report = saver.report  # type: ignore[attr-defined]
        raise
    # the replies not saved, of this run and earlier ones, that no workbook resolved
    saver.report.not_saved = still_standing(root, read_journal(root).unresolved())
    saver.settle({str(r.get("message_id", "")) for r in saver.report.not_saved})
    saver.report.earlier = [f"{unsaved_line(r)} (recorded by an earlier fetch)"
                            for r in saver.report.not_saved
                            if str(r.get("message_id", "")) not in saver.seen_unsaved]
    saver.report.listed, saver.report.unrelated = saver.listed(), len(saver.unrelated)
    return saver.report


_FETCHED_AGAIN = ("a message recorded there as fetched would be taken as new: recorded "
                  "again, and its file saved to returns/ again if it is no longer there")


class _Saver:
    """Saves the attachments of one message after another, journalling each."""

    def __init__(self, root: Path, raters: dict[str, str], max_attachment: int,
                 journal: Journal):
        self.root = root
        self.returns = root / L.RETURNS_DIR
        self.raters = raters
        self.max_attachment = max_attachment
        self.report = FetchReport()
        self.fetched = {(str(r.get("message_id", "")), str(r.get("sha256", "")))
                        for r in journal.received}
        self.this_run: set[tuple[str, str]] = set()  # (message, sha256) saved now
        self.recorded = {str(r.get("saved", "")) for r in journal.received}
        self.senders_saved = {str(r.get("sender", "")) for r in journal.received}
        self.on_disk: dict[str, str] | None = None  # sha256 -> name, read when needed
        self.unsaved = {str(r.get("message_id", "")) for _, r in journal.not_saved}
        # raters' replies not saved, met in this run: where each is listed in ``first``
        self.seen_unsaved: dict[str, tuple[int, str, str]] = {}
        # the report's lines: raters' messages first, a busy inbox's other mail last
        self.first: list[str] = []
        self.rest: list[str] = []
        self.unrelated: list[str] = []

    def listed(self) -> list[str]:
        """Every message not saved from, raters' first (then their replies recorded
        by an earlier fetch, still standing), unrelated ones last."""
        return self.first + self.report.earlier + self.rest + self.unrelated

    def take(self, raw: Raw) -> None:
        if raw.problem:  # counted as skipped, not as read
            self._skip(raw)
            return
        if not raw.data and not raw.size:
            self._not_read(f"{raw.where}: not read (empty: no message in it)")
            return
        if not raw.data:  # too large: its head is read, and named
            self.report.messages += 1
            head = parse_message(raw.head) if raw.head else Message()
            self._list(raw, head, f"{too_large_text(raw.size, MAX_MESSAGE_BYTES, list(raw.parts))}"
                       "; ask the sender for the workbook they received, filled in",
                       message_too_large(raw.size, MAX_MESSAGE_BYTES, list(raw.parts)))
            return
        message = parse_message(raw.data, self.max_attachment)
        if message.problem:
            self._not_read(f"{raw.where}: not read ({message.problem})")
            return
        self.report.messages += 1
        for name, size in message.too_large:
            self._list(raw, message, f"attachment {name} skipped, it is {size / 2**20:.1f} MB "
                       f"(over the {self.max_attachment // 2**20} MB limit)",
                       attachment_too_large(name, size, self.max_attachment))
        if message.wrapped and not message.attachments:
            why = wrapper_why(message.sender in self.raters)
            self._list(raw, message, f"{why}; nothing saved", why)
        for name in message.undecodable:
            why = undecodable_why(name, who="sender", then="; not saved")
            self.report.undecodable.append(f"{raw.where} {_about(message)}: {why}")
            if message.sender in self.raters:  # their reply all the same: not forgotten
                self._list(raw, message, "its workbook was not saved", undecodable_why(name))
        # a rater's workbook zipped: their reply, not "no spreadsheet" (archives are
        # not unpacked: what is inside is no attachment they can be shown to have sent)
        archived = [n for n in message.others if n.lower().endswith(ARCHIVE_SUFFIXES)] \
            if message.sender in self.raters and not message.attachments else []
        if archived and not message.wrapped:
            why = archive_why(archived)
            self._list(raw, message, f"{why}; nothing saved", why)
        if not message.attachments:
            if not (message.too_large or message.wrapped or message.undecodable or archived):
                others = f" (other attachments: {', '.join(message.others)})" \
                    if message.others else " (no attachment)"
                self._list(raw, message, f"no spreadsheet attachment{others}; nothing saved",
                           self._no_workbook_why(message))
            return
        received = raw.received or message.date or now_utc()
        for attachment in message.attachments:
            self._save(raw, message, _message_key(message, raw), attachment, received)

    def _no_workbook_why(self, message: Message) -> str:
        """Why a rater's message without a workbook is their reply with none saved
        ("" when it is not): a rater who wrote "done!" and forgot the file would else
        be reminded as if silent, and fetch would exit 0. Once a workbook from that
        address is saved, a later note ("thanks") asks for nothing."""
        if message.sender not in self.raters or message.sender in self.senders_saved:
            return ""
        only = f" (only {', '.join(message.others)})" if message.others else ""
        return (f"their message had no workbook attached{only}: ask the rater to attach "
                "the filled .xlsx and send it again")

    def _not_read(self, line: str) -> None:
        """List a file or mbox entry that holds no message, counted apart from those
        read (the summary line said "1 message read" under its "not read")."""
        self.report.not_read += 1
        self.rest.append(line)

    def _skip(self, raw: Raw) -> None:
        """Name a message the server could not give, and what to do about it."""
        head = parse_message(raw.head) if raw.head else Message()
        said = (f"the IMAP server broke off while giving it ({raw.problem}); skipped, the "
                "messages after it are read: forward it to this mailbox again from your "
                "mail program, or ask its sender to send it again")
        self._list(raw, head, said, f"the IMAP server could not give the message "
                   f"({raw.problem}): ask the rater to send the workbook again")
        self.report.skipped.append(f"{raw.where} {_about(head)}")

    def _list(self, raw: Raw, message: Message, said: str, unsaved: str = "") -> None:
        """List a message not saved from; a rater's whose workbook could not be saved
        (``unsaved``: why) is journalled as their reply, once."""
        line = f"{raw.where} {_about(message)}: {said}"
        rater = self.raters.get(message.sender)
        if not rater:
            # a message of no rater without a spreadsheet (a busy inbox's mail) is
            # counted, not listed one by one: the raters' problems must not drown
            unrelated = not unsaved and not message.attachments and not message.too_large
            (self.unrelated if unrelated else self.rest).append(line)
            return
        if not unsaved:
            self.first.append(line)
            return
        key = _message_key(message, raw)
        if key not in self.unsaved:
            self.unsaved.add(key)
            append(self.root, not_saved_record(
                rater=rater, sender=message.sender, subject=message.subject,
                message_id=key, date=message.date, received=raw.received or message.date,
                where=raw.where, why=unsaved))
        self.seen_unsaved[key] = (len(self.first), f"{raw.where} {_about(message)}", rater)
        self.first.append(f"{line}; recorded as {rater}'s reply with the workbook not saved "
                          f"({JOURNAL_FILE})")

    def settle(self, standing: set[str]) -> None:
        """Say of each rater's reply met in this run whose record no longer stands
        (``standing``: the message ids of those that do) that it is over, instead of
        what to ask the rater: a workbook of theirs came since."""
        for key, (at, head, rater) in self.seen_unsaved.items():
            if key not in standing:
                self.first[at] = (f"{head}: nothing saved; {rater}'s reply with the workbook "
                                  f"not saved ({JOURNAL_FILE}) is over: a workbook of theirs "
                                  "came since")
                self.report.over.append(self.first[at])

    def _save(self, raw: Raw, message: Message, mid: str, attachment: Attachment,
              received: dt.datetime) -> None:
        sha = attachment.sha256
        if (mid, sha) in self.this_run:  # the same file twice in one message
            self.report.duplicates.append(Saved(
                self._disk()[sha], attachment.name, sha, mid, message.sender,
                message.subject, raw.where, message.sender_problem))
            return
        if (mid, sha) in self.fetched:
            self.report.known += 1
            return
        existing = self._disk().get(sha)
        name = existing or self._free_name(received, attachment.name)
        if existing is None:
            write_alone(self.returns / name, attachment.data, replace=False)
            self._disk()[sha] = name
        # a file no fetch recorded under the name fetch gives this attachment (one
        # stopped between writing it and journalling it) is this message's, saved:
        # "duplicate" would hide the only "saved" it gets; one under another name (copied
        # by hand) was not saved by fetch, and is named as found
        first_record = f"{L.RETURNS_DIR}/{name}" not in self.recorded
        duplicate = existing is not None and not (
            first_record and _fetch_named(name, attachment.name))
        saved = Saved(name, attachment.name, sha, mid, message.sender, message.subject,
                      raw.where, message.sender_problem)
        append(self.root, {"event": "received", "message_id": mid,
                           "sender": message.sender,
                           "sender_problem": message.sender_problem,
                           "subject": message.subject,
                           "date": iso(message.date) if message.date else "",
                           "received": iso(received),
                           # a made-up name is none the rater gave (reply drafts quote it)
                           "attachment": attachment.name if attachment.named else "",
                           "sha256": sha, "saved": f"{L.RETURNS_DIR}/{name}",
                           "duplicate": duplicate, "time": iso(now_utc())})
        self.fetched.add((mid, sha))
        self.this_run.add((mid, sha))
        self.senders_saved.add(message.sender)
        self.recorded.add(f"{L.RETURNS_DIR}/{name}")
        (self.report.duplicates if duplicate else self.report.saved).append(saved)
        # who sent a file is said when it is first recorded (a copy by hand included)
        if (first_record or not duplicate) and message.sender_problem:
            self.report.unsure_senders.append((message.sender_problem, name))
        elif (first_record or not duplicate) and message.sender not in self.raters:
            self.report.unknown_senders.append((message.sender, name))

    def _disk(self) -> dict[str, str]:
        """sha256 -> file name of every regular file in ``returns/``."""
        if self.on_disk is None:
            self.returns.mkdir(exist_ok=True)
            self.on_disk = {}
            for path in sorted(self.returns.iterdir()):
                if path.is_file() and not path.is_symlink():
                    try:
                        self.on_disk.setdefault(file_digest(path), path.name)
                    except OSError:
                        continue
        return self.on_disk

    def _free_name(self, received: dt.datetime, attachment: str) -> str:
        base = f"{received.astimezone(dt.UTC):%Y%m%d-%H%M%S}-{safe_name(attachment)}"
        stem, dot, suffix = base.rpartition(".")
        name, k = base, 2
        while (self.returns / name).exists() or (self.returns / name).is_symlink():
            name, k = f"{stem}-{k}{dot}{suffix}", k + 1
        return name


def safe_name(name: str) -> str:
    """An attachment name reduced to a plain file name: its last path part only, letters,
    digits, ``.``, ``-`` and ``_`` kept, no leading dot, at most 120 characters, its
    extension kept (``../../x.xlsx`` becomes ``x.xlsx``)."""
    last = re.split(r"[\\/]", name)[-1]
    stem, dot, suffix = last.rpartition(".")
    if not dot:
        stem, suffix = last, ""
    stem = _UNSAFE.sub("_", stem).strip("._-")[:100] or "attachment"
    suffix = _UNSAFE.sub("", suffix)[:10].lower()
    return f"{stem}.{suffix}" if suffix else stem


def _fetch_named(name: str, attachment: str) -> bool:
    """Whether ``name`` is one :meth:`_Saver._free_name` gives ``attachment`` (a time
    received, its safe name, perhaps numbered), at any time."""
    base = f"{_NO_TIME}-{safe_name(attachment)}"
    stem, dot, suffix = base.rpartition(".")
    forms = (re.escape(base), re.escape(stem) + r"-\d+" + re.escape(dot + suffix))
    pattern = "|".join(forms).replace(re.escape(_NO_TIME), r"\d{8}-\d{6}")
    return re.fullmatch(pattern, name) is not None


_NO_TIME = "00000000-000000"  # stands for the time received in :func:`_fetch_named`


def _message_key(message: Message, raw: Raw) -> str:
    """How the journal knows a message: its Message-ID, else its bytes (its header
    lines and size for one too large to read). A message without a Message-ID known
    as "" would make every such message carrying the same file one, "fetched before"."""
    if message.message_id:
        return message.message_id
    if raw.data:
        return "sha256:" + hashlib.sha256(raw.data).hexdigest()
    return "sha256:" + hashlib.sha256(raw.head + str(raw.size).encode()).hexdigest()


def _about(message: Message) -> str:
    sender = message.sender or f"({message.sender_problem or 'no sender'})"
    return f"from {sender} ({message.subject!r})" if message.subject else f"from {sender}"
