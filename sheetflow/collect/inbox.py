"""``sheetflow fetch``: the returns taken straight from the inbox into ``returns/``.

:func:`fetch` reads messages from an IMAP folder (read-only: ``EXAMINE`` and
``BODY.PEEK[]``, so nothing is marked read or moved unless ``mark_seen``), from an
``.mbox`` folder or from saved ``.eml`` files, and saves every spreadsheet attachment
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

import contextlib
import dataclasses
import datetime as dt
import hashlib
import imaplib
import re
import ssl
from collections.abc import Iterator, Sequence
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
)
from ..packs.send import LOGIN_PAUSE, LOGIN_TRIES, connection_problem, patient_login
from ..spec.mail import Server
from ..spec.study import load_study
from ..staging import write_alone
from ..workbook import layout as L
from .mailbox import (
    HEADER_BYTES,
    MAX_ATTACHMENT_BYTES,
    Attachment,
    Message,
    decoded_name,
    parse_message,
    too_large_text,
)
from .message_files import Raw, eml_messages, mbox_messages
from .returns import display_name, file_digest
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

MAX_MESSAGE_BYTES = 64 * 2**20
"""The largest message read (a rating workbook is about 1 MB; a message holding one,
base64-encoded, a third more)."""
TIMEOUT = 60.0
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
           "Dec")


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


@dataclass(frozen=True)
class ImapSource:
    """Where and how to read an IMAP folder."""

    server: Server
    login: str
    password: str
    folder: str = "INBOX"
    since: dt.date | None = None
    mark_seen: bool = False
    context: ssl.SSLContext | None = None
    again: str = ""
    """The command that reads the folder again as the user gave it, which a broken
    connection or a busy login service names (:func:`fetch` sets it)."""


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
    saver = _Saver(root, {r.email.lower(): r.id for r in study.raters if r.email},
                   max_attachment, journal)
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
    saver.report.not_saved = read_journal(root).unresolved()
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
        self.seen_unsaved: set[str] = set()  # raters' replies not saved, met in this run
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
        self.first.append(f"{line}; recorded as {rater}'s reply with the workbook not saved "
                          f"({JOURNAL_FILE})")
        self.seen_unsaved.add(key)

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
        # a file no fetch recorded (one stopped between writing it and journalling it)
        # is this message's, saved: "duplicate" would hide the only "saved" it gets
        duplicate = f"{L.RETURNS_DIR}/{name}" in self.recorded
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
        if not duplicate and message.sender_problem:
            self.report.unsure_senders.append((message.sender_problem, name))
        elif not duplicate and message.sender not in self.raters:
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


# --------------------------------------------------------------------------- sources


def imap_messages(source: ImapSource) -> Iterator[Raw]:
    """The messages of an IMAP folder, oldest first, read without marking them.

    Raises
    ------
    MailError
        Connection, TLS, login or folder problems (one line each).
    """
    client = _imap_connect(source)
    try:
        typ, data = client.select(_quote(source.folder), readonly=not source.mark_seen)
        if typ != "OK":
            raise MailError(f"the IMAP server {source.server}: no folder {source.folder!r} "
                            f"({_said(data)}); check [mail] imap_folder")
        criteria = ("SINCE", _imap_date(source.since)) if source.since else ("ALL",)
        typ, data = client.uid("SEARCH", *criteria)
        if typ != "OK":
            raise MailError(f"the IMAP server {source.server}: search failed ({_said(data)})")
        for uid in (data[0] or b"").split():
            try:
                raw = _imap_one(client, source, uid.decode())
            except _Unreadable as exc:  # one bad message must not block the rest
                yield exc.raw
                client = _reopen(client, source)
                continue
            yield raw
    except (imaplib.IMAP4.error, OSError) as exc:
        raise MailError(f"the IMAP server {source.server} broke off ({exc}); "
                        f"{_rerun(source)} (what was saved is kept and not saved twice)"
                        ) from None
    finally:
        _logout(client)


class _Unreadable(Exception):
    """The server broke off while giving one message; ``raw`` names it."""

    def __init__(self, raw: Raw) -> None:
        super().__init__(raw.problem)
        self.raw = raw


def _imap_one(client: imaplib.IMAP4, source: ImapSource, uid: str) -> Raw:
    where = f"{source.folder} uid {uid}"
    try:
        typ, data = client.uid("FETCH", uid, f"(RFC822.SIZE INTERNALDATE {_ENVELOPE})")
    except (imaplib.IMAP4.error, OSError) as exc:
        raise _Unreadable(Raw(where, b"", problem=_said(exc) or type(exc).__name__)) from None
    head = b" ".join(part if isinstance(part, bytes) else part[0] for part in data
                     if part) if typ == "OK" else b""
    envelope = next((part[1] for part in data if isinstance(part, tuple)), b"") \
        if typ == "OK" else b""
    size_found = re.search(rb"RFC822\.SIZE (\d+)", head)
    size = int(size_found[1]) if size_found else 0
    received = _internal_date(head)
    try:
        if size > MAX_MESSAGE_BYTES:
            return Raw(where, b"", received, size, _structure_names(client, uid),
                       _header_lines(client, uid))
        typ, data = client.uid("FETCH", uid, "(BODY.PEEK[])")
        body = next((part[1] for part in data if isinstance(part, tuple)), b"") \
            if typ == "OK" else b""
        if source.mark_seen and body:
            client.uid("STORE", uid, "+FLAGS", "(\\Seen)")
    except (imaplib.IMAP4.error, OSError) as exc:  # e.g. a damaged file on the server
        raise _Unreadable(Raw(where, b"", received, head=envelope[:HEADER_BYTES],
                              problem=_said(exc) or type(exc).__name__)) from None
    return Raw(where, body, received)


# who sent it and what about, read before the body so that a message the server cannot
# give whole is still named
_ENVELOPE = "BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE MESSAGE-ID)]"


def _reopen(client: imaplib.IMAP4, source: ImapSource) -> imaplib.IMAP4:
    """A new connection on the same folder, to read on after a message the server broke
    off on (the old one may be closed, or part-way through the message's bytes)."""
    _logout(client)
    client = _imap_connect(source)
    typ, data = client.select(_quote(source.folder), readonly=not source.mark_seen)
    if typ != "OK":
        _logout(client)
        raise MailError(f"the IMAP server {source.server}: no folder {source.folder!r} "
                        f"({_said(data)}); check [mail] imap_folder")
    return client


def _structure_names(client: imaplib.IMAP4, uid: str) -> tuple[tuple[str, int], ...]:
    """(name, decoded size) of each attachment of a message, from its BODYSTRUCTURE (the
    message itself is not downloaded): the size follows the encoding, the file name
    is in the disposition after it or in the type's parameters before it."""
    typ, data = client.uid("FETCH", uid, "(BODYSTRUCTURE)")
    text = b" ".join(p if isinstance(p, bytes) else p[0] for p in data if p) \
        if typ == "OK" else b""
    found = [(m[4], m[2], bool(m[3])) for m in _DISPOSITION.finditer(text)]
    found += [(m[2], m[3], bool(m[1])) for m in _TYPE_NAME.finditer(text)
              if m[2] not in {name for name, *_ in found}]
    # base64 in lines of 76 characters and CRLF: 57 bytes for every 78 sent
    return tuple((display_name(decoded_name(name.decode("utf-8", "replace"), star)),
                  int(size) * 57 // 78) for name, size, star in found)


def _header_lines(client: imaplib.IMAP4, uid: str) -> bytes:
    """The header lines of a message (not its body), for who sent it."""
    typ, data = client.uid("FETCH", uid, "(BODY.PEEK[HEADER])")
    head = next((part[1] for part in data if isinstance(part, tuple)), b"") \
        if typ == "OK" else b""
    return head[:HEADER_BYTES]


_DISPOSITION = re.compile(rb'"([^"]*)" (\d+)(?: \d+)? (?:NIL|"[^"]*") \("(?:attachment|inline)"'
                          rb' \((?:"[^"]*" "[^"]*" )*?"filename(\*?)" "([^"]{1,200})"', re.I)
_TYPE_NAME = re.compile(rb'"name(\*?)" "([^"]{1,200})"[^()]*\) (?:NIL|"[^"]*") (?:NIL|"[^"]*") '
                        rb'"[^"]*" (\d+)', re.I)


def _imap_connect(source: ImapSource) -> imaplib.IMAP4:
    server = source.server
    where = f"the IMAP server {server}"
    context = source.context or ssl.create_default_context()
    client: imaplib.IMAP4 | None = None
    try:
        if server.security == "ssl":
            client = imaplib.IMAP4_SSL(server.host, server.port, ssl_context=context,
                                       timeout=TIMEOUT)
        else:
            client = imaplib.IMAP4(server.host, server.port, timeout=TIMEOUT)
            if server.security == "starttls":
                client.starttls(context)
    except (OSError, imaplib.IMAP4.error) as exc:
        raise MailError(connection_problem(where, exc, source.login, "IMAP")) from None
    try:
        _login(client, source, where)
    except (TimeoutError, OSError) as exc:
        _logout(client)
        raise MailError(connection_problem(where, exc, source.login, "IMAP")) from None
    except MailError:
        _logout(client)
        raise
    return client


# RFC 5530's codes for a refusal that is the server's state, not the credentials
_TEMPORARY = re.compile(r"\[(?:UNAVAILABLE|INUSE)\]", re.IGNORECASE)


def _login(client: imaplib.IMAP4, source: ImapSource, where: str) -> None:
    """Log in, trying again while the server says the failure is temporary (a busy
    authentication service), and say which kind of refusal ended it: a temporary one
    is not a wrong password."""
    try:
        patient_login(lambda: client.login(source.login, source.password),
                      imaplib.IMAP4.error, lambda exc: bool(_TEMPORARY.search(_said(exc))),
                      tries=LOGIN_TRIES, pause=LOGIN_PAUSE)
    except imaplib.IMAP4.error as exc:
        said = _said(exc)
        if _TEMPORARY.search(said):
            raise MailError(f"{where} could not check the login of {source.login!r} for "
                            f"now ({said}, {LOGIN_TRIES} tries): a failure on the server's "
                            f"side, not the password; {_rerun(source)} in a few minutes"
                            ) from None
        raise MailError(f"{where} refused the login of {source.login!r} ({said}); check "
                        "[mail] username and SHEETFLOW_IMAP_PASSWORD (most providers need "
                        "an app password)") from None


def _rerun(source: ImapSource) -> str:
    """What to run once the server answers again: the whole command when known."""
    return f"run '{source.again}' again" if source.again else "run fetch again"


def _logout(client: imaplib.IMAP4) -> None:
    with contextlib.suppress(imaplib.IMAP4.error, OSError):
        client.logout()


def _said(value: object) -> str:
    """What the server said, as text: imaplib's errors carry its bytes, whose str()
    would print b'...'."""
    if isinstance(value, BaseException) and len(value.args) == 1:
        value = value.args[0]
    if isinstance(value, list):
        value = b" ".join(v for v in value if isinstance(v, bytes))
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return " ".join(text.split())[:200]


def _quote(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _imap_date(day: dt.date) -> str:
    return f"{day.day:02d}-{_MONTHS[day.month - 1]}-{day.year}"


def _internal_date(head: bytes) -> dt.datetime | None:
    found = re.search(rb'INTERNALDATE "([^"]+)"', head)
    if not found:
        return None
    try:
        return dt.datetime.strptime(found[1].decode(), "%d-%b-%Y %H:%M:%S %z")
    except ValueError:
        return None
