"""Messages as returns: the spreadsheet attachments of a saved ``.eml`` or ``.mbox``.

A coordinator may drop a message saved from a mail program (``.eml``) or a whole mail
folder (``.mbox``) into ``returns/``; ``fetch`` reads the same messages from an IMAP
server. Here a message's bytes become a :class:`Message`: who sent it, when, its
subject, and its spreadsheet attachments (:data:`SPREADSHEET_SUFFIXES`) held in
memory. Nothing is written, and a saved file is only ever read (an ``.mbox`` is split
here on its ``From`` lines rather than opened with :mod:`mailbox`, which opens the
file for writing).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from email import errors, message_from_bytes, policy
from email.header import decode_header, make_header
from email.message import EmailMessage
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import unquote

from .returns import display_name, escape_controls
from .safety import Limits, Problem, read_whole

SPREADSHEET_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods", ".csv")
"""Attachments saved as returns: workbooks, and the formats collect names and refuses."""
MAIL_SUFFIXES = (".eml", ".mbox")
MAX_ATTACHMENT_BYTES = 20 * 2**20
"""The largest attachment kept (a 500-case pack is about 1 MB; collect's own file limit)."""
_MBOX_FROM = re.compile(rb"^From ", re.M)


@dataclass(frozen=True)
class Attachment:
    """One spreadsheet attachment of a message, in memory."""

    name: str
    data: bytes
    named: bool = True
    """False for a workbook part sent without a file name (``name`` is then made up:
    :data:`UNNAMED_STEM`), which is no name the rater gave it."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class Message:
    """What a return message says about itself, and its spreadsheet attachments.

    Attributes
    ----------
    message_id, sender, subject : str
        ``sender`` is the ``From`` address alone, lower-cased ("" when there is no
        single one).
    sender_problem : str
        Why there is no single sender ("" when there is one): :data:`NO_SENDER`,
        ``several senders: a, b`` or :data:`UNREADABLE_FROM`.
    date : datetime or None
        The ``Date`` header (None when missing or unreadable).
    attachments : list of Attachment
        Spreadsheet attachments within the size limit.
    others : list of str
        Names of the other attachments (not saved).
    too_large : list of (str, int)
        Spreadsheet attachments over the size limit: name and size in bytes.
    wrapped : list of str
        Names of Outlook ``winmail.dat`` wrappers (not read: the files in them are not
        taken out).
    undecodable : list of str
        Names of the spreadsheet attachments whose encoded text cannot be decoded: the
        bytes decoded are not the file that was sent.
    problem : str
        Why the message could not be read ("" when it could).
    """

    message_id: str = ""
    sender: str = ""
    sender_problem: str = ""
    subject: str = ""
    date: dt.datetime | None = None
    attachments: list[Attachment] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    too_large: list[tuple[str, int]] = field(default_factory=list)
    wrapped: list[str] = field(default_factory=list)
    """Outlook's ``winmail.dat`` wrappers (TNEF), which hide the files sent in them."""
    undecodable: list[str] = field(default_factory=list)
    problem: str = ""


def is_mail_file(name: str) -> bool:
    """Whether a return's file name says it is a saved message or mail folder."""
    return name.lower().endswith(MAIL_SUFFIXES)


def parse_message(raw: bytes, max_attachment: int = MAX_ATTACHMENT_BYTES) -> Message:
    """Read one message (RFC 5322 bytes); never raises on a malformed one.

    Parameters
    ----------
    raw : bytes
    max_attachment : int
        Spreadsheet attachments larger than this (decoded) are listed in ``too_large``.

    Returns
    -------
    Message
        ``problem`` says what is wrong when the bytes are not a message.
    """
    try:
        msg = message_from_bytes(raw, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        sender, sender_problem = _sender(msg)
        found = Message(message_id=_header(msg, "Message-ID"), sender=sender,
                        sender_problem=sender_problem, subject=_header(msg, "Subject"),
                        date=_date(msg))
        if not msg.keys():
            return Message(problem="no mail headers (not a saved message)")
        for part in msg.walk():
            _take(part, found, max_attachment)
    except Exception as exc:  # the email package raises many types on hostile input
        return Message(problem=f"malformed message: {type(exc).__name__}")
    return found


def _header(msg: EmailMessage, name: str) -> str:
    try:
        return escape_controls(" ".join(str(msg.get(name, "") or "").split()))
    except Exception:  # a header the registry cannot parse
        return ""


NO_SENDER = "no sender"
UNREADABLE_FROM = "unreadable From header"
SEVERAL_SENDERS = "several senders: "
"""The start of the :attr:`Message.sender_problem` of a ``From`` naming more than one."""


def _sender(msg: EmailMessage) -> tuple[str, str]:
    """The one ``From`` address, lower-cased, and ""; or "" and why there is no single
    one. Every ``From`` header counts: a second one may name someone else, and taking
    either alone would vouch for a sender the message does not name alone."""
    try:
        addresses = [a.addr_spec.lower() for header in msg.get_all("From", [])
                     for a in header.addresses]
    except Exception:  # a header the registry cannot parse
        return "", UNREADABLE_FROM
    if not addresses:
        return "", NO_SENDER
    if len(set(addresses)) > 1:
        return "", SEVERAL_SENDERS + ", ".join(escape_controls(a) for a in addresses)
    return (addresses[0], "") if addresses[0] else ("", UNREADABLE_FROM)


def _date(msg: EmailMessage) -> dt.datetime | None:
    try:
        moment = parsedate_to_datetime(str(msg["Date"]))
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _take(part: EmailMessage, found: Message, max_attachment: int) -> None:
    """Keep ``part`` when it is a spreadsheet attachment (named, or a workbook by its
    type: :func:`unnamed_workbook`); list it when another file."""
    if part.is_multipart():
        return
    name = part.get_filename()
    if part.get_content_type() in _TNEF_TYPES or (name or "").lower() == "winmail.dat":
        found.wrapped.append(display_name(name or "winmail.dat"))
        return
    data: object = None
    named = bool(name)
    if not name:
        data = part.get_payload(decode=True)
        name = unnamed_workbook(part.get_content_type(), data)
        if not name:
            return
    name = display_name(name)
    if not name.lower().endswith(SPREADSHEET_SUFFIXES):
        found.others.append(name)
        return
    if data is None:
        data = part.get_payload(decode=True)  # the message itself is size-limited
    if not isinstance(data, bytes):
        data = b""
    if _not_decoded(part, data):
        found.undecodable.append(name)
    elif len(data) > max_attachment:
        found.too_large.append((name, len(data)))
    else:
        found.attachments.append(Attachment(name, data, named))


_TNEF_TYPES = ("application/ms-tnef", "application/vnd.ms-tnef")
_ZIP_START = b"PK\x03\x04"
_OLE_START = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the container of .xls workbooks
_XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_XLS_TYPE = "application/vnd.ms-excel"
UNNAMED_STEM = "(no file name)"
"""How a workbook part that came without a file name is named in reports."""


def unnamed_workbook(content_type: str, data: object) -> str | None:
    """The name to give a part without a file name that is a workbook all the same,
    or None: some mail programs attach a file with its type alone, and a rater's
    workbook sent so is still their return.

    A part typed as a workbook (xlsx, or Excel's older type, which programs also give
    xlsx files) is one; a generic ``application/octet-stream`` part is one only when
    its bytes are an xlsx (a zip holding ``xl/``). The suffix follows the bytes.
    """
    if not isinstance(data, bytes) or not data:
        return None
    xlsx = data.startswith(_ZIP_START) and b"xl/" in data
    if content_type == "application/octet-stream":
        return f"{UNNAMED_STEM}.xlsx" if xlsx else None
    if content_type not in (_XLSX_TYPE, _XLS_TYPE):
        return None
    if content_type == _XLS_TYPE and data.startswith(_OLE_START):
        return f"{UNNAMED_STEM}.xls"
    return f"{UNNAMED_STEM}.xlsx"


def _not_decoded(part: EmailMessage, data: bytes) -> bool:
    """Whether ``data``, the decoded body of ``part``, is not the file that was sent: a
    base64 text of impossible length is handed back undecoded, and one of characters
    base64 does not use decodes to nothing (a file sent empty has an empty body)."""
    if any(isinstance(d, errors.InvalidBase64LengthDefect) for d in part.defects):
        return True
    body = part.get_payload(decode=False)
    return not data and isinstance(body, str) and bool(body.strip())


def plain_name(name: str) -> str:
    """An attachment's file name without the folders its name may carry
    (``../../x.xlsx`` is ``x.xlsx``), as collect shows it after the message's name:
    ``reply.eml/../../x.xlsx`` reads as a place the file never was. (The message
    keeps the name as sent, which fetch records.)"""
    return re.split(r"[\\/]", name)[-1] or name


def split_mbox(data: bytes) -> list[bytes]:
    """The messages of an mbox folder, each without its ``From`` line; ``>From``
    quoting undone (mboxrd). A file that does not start with ``From `` is one message."""
    if not data.startswith(b"From "):
        return [data]
    starts = [m.start() for m in _MBOX_FROM.finditer(data)
              if m.start() == 0 or data[m.start() - 2:m.start()] in (b"\n\n", b"\r\n")
              or data[m.start() - 1:m.start()] == b"\n"]
    out = []
    for begin, end in zip(starts, [*starts[1:], len(data)], strict=True):
        chunk = data[begin:end]
        body = chunk.split(b"\n", 1)[1] if b"\n" in chunk else b""
        out.append(unquote_from(body))
    return out


def unquote_from(body: bytes) -> bytes:
    """An mbox message's body with the ``>From`` quoting of body lines undone (mboxrd)."""
    return re.sub(rb"^>(>*From )", rb"\1", body, flags=re.M)


def messages_in(data: bytes, name: str, max_attachment: int = MAX_ATTACHMENT_BYTES,
                ) -> list[Message]:
    """The messages of a saved ``.eml`` (one) or ``.mbox`` (each in turn)."""
    chunks = split_mbox(data) if name.lower().endswith(".mbox") else [data]
    return [parse_message(chunk, max_attachment) for chunk in chunks]


@dataclass(frozen=True)
class Member:
    """One spreadsheet attachment of a saved message file, as collect reads it."""

    name: str
    """Shown name: ``reply.eml/pack.xlsx`` (``box.mbox/2/pack.xlsx`` in a folder)."""
    index: int
    """Its place among the file's spreadsheet attachments (for :func:`read_member`);
    -1 for one over the size limit (not read)."""
    sha256: str
    sender: str
    received: dt.datetime | None
    size: int = 0
    sender_problem: str = ""
    """Why its message has no single sender (:attr:`Message.sender_problem`)."""
    undecodable: bool = False
    """Its encoded text could not be decoded (then ``index`` is -1: not read)."""


def members(path: str | Path, limits: Limits | None = None) -> list[Member] | Problem:
    """The spreadsheet attachments of a saved message file, or why it cannot be read.

    Attachments over the size limit, and those that cannot be decoded, are returned
    with an empty ``sha256`` (collect reports them); a message or folder without any
    gives an empty list.
    """
    limits = limits or Limits()
    path = Path(path)
    data = read_whole(path, limits)
    if isinstance(data, Problem):
        return data
    found = messages_in(data, path.name, limits.max_file_bytes)
    if all(m.problem for m in found):
        return Problem("mail-unreadable", found[0].problem if found else "empty")
    out: list[Member] = []
    seen: set[str] = set()
    index = 0
    for number, message in enumerate(found, 1):
        prefix = display_name(path.name) + (f"/{number}/" if len(found) > 1 else "/")
        for attachment in message.attachments:
            out.append(Member(_unique(prefix + plain_name(attachment.name), seen), index,
                              attachment.sha256, message.sender, message.date,
                              len(attachment.data), message.sender_problem))
            index += 1
        for name, size in message.too_large:
            out.append(Member(_unique(prefix + plain_name(name), seen), -1, "", message.sender,
                              message.date, size))
        for name in message.undecodable:
            out.append(Member(_unique(prefix + plain_name(name), seen), -1, "", message.sender,
                              message.date, undecodable=True))
    return out


def members_job(job: tuple[str, Limits]) -> list[Member] | Problem:
    """:func:`members` as a sandbox target (one picklable argument)."""
    return members(*job)


def _unique(name: str, seen: set[str]) -> str:
    candidate, k = name, 2
    while candidate in seen:
        candidate, k = f"{name} ({k})", k + 1
    seen.add(candidate)
    return candidate


def read_member(path: str | Path, index: int, limits: Limits) -> bytes | Problem:
    """The bytes of the ``index``-th spreadsheet attachment of a saved message file."""
    data = read_whole(path, limits)
    if isinstance(data, Problem):
        return data
    attachments = [a for m in messages_in(data, Path(path).name, limits.max_file_bytes)
                   for a in m.attachments]
    if not 0 <= index < len(attachments):
        return Problem("file-changed-while-collecting", "the message changed since it was listed")
    return attachments[index].data


def member_digests(path: str | Path, limits: Limits | None = None) -> set[str]:
    """The sha256 of every spreadsheet attachment of a saved message file (for checking
    that a return collected from it is still there, unchanged)."""
    found = members(path, limits)
    return set() if isinstance(found, Problem) else {m.sha256 for m in found if m.sha256}


HEADER_BYTES = 64 * 2**10
"""Header bytes kept of a message, or of one of its parts, too large to parse."""


class PartSizes:
    """The attachments of a message too large to parse, measured line by line.

    Feed it every line of the message; :attr:`parts` then holds (name, size) for each
    part with a file name, the size decoded as base64 (how mail programs attach
    files), and :attr:`head` the message's own header lines (who sent it). Only
    headers (at most :data:`HEADER_BYTES` each) and counts are kept, so a message of
    any size costs little memory.
    """

    def __init__(self) -> None:
        self.parts: list[tuple[str, int]] = []
        self.head = bytearray()
        self._in_head = True  # the message's own headers come first
        self._part_head: bytearray | None = None  # a part's headers, while they last
        self._name: str | None = None
        self._chars = 0

    def feed(self, line: bytes) -> None:
        """Take the next line of the message."""
        if self._in_head:
            self._in_head = bool(line.strip())
            if len(self.head) + len(line) <= HEADER_BYTES:
                self.head += line
            if not self._in_head:  # a message that is one attachment names it here
                self._name = part_file_name(bytes(self.head))
        elif line.startswith(b"--"):  # a MIME boundary: the part before it has ended
            self._close()
            self._part_head = bytearray()
        elif self._part_head is not None:
            if line.strip():
                if len(self._part_head) + len(line) <= HEADER_BYTES:
                    self._part_head += line
            else:  # the part's headers end: its file name, however it was encoded
                self._name = part_file_name(bytes(self._part_head))
                self._part_head = None
        elif self._name is not None:
            self._chars += len(line.strip())

    def done(self) -> list[tuple[str, int]]:
        """The parts found (call after the last line)."""
        self._close()
        return self.parts

    def _close(self) -> None:
        if self._name is not None:
            self.parts.append((self._name, self._chars * 3 // 4))
        self._name, self._chars, self._part_head = None, 0, None


def part_file_name(headers: bytes) -> str | None:
    """The file name in a part's header lines, decoded as a mail program shows it
    (RFC 2231 ``filename*=utf-8''...`` and RFC 2047 ``=?utf-8?...?=`` alike); None
    when the part names no file."""
    try:
        name = message_from_bytes(headers + b"\r\n", policy=policy.default).get_filename()
    except Exception:  # the email package raises many types on hostile input
        return None
    return display_name(" ".join(name.split())) if name else None


def decoded_name(value: str, extended: bool = False) -> str:
    """A file name taken from a mail header's parameter, decoded: an ``extended`` one
    (``filename*``, RFC 2231: ``charset'language'percent-coded``) or one holding RFC
    2047 encoded words. Text that does not decode is kept as it came."""
    try:
        if extended and value.count("'") >= 2:
            charset, _language, text = value.split("'", 2)
            return unquote(text, encoding=charset or "utf-8", errors="replace")
        if "=?" in value:
            return str(make_header(decode_header(value)))
    except Exception:  # a malformed encoding: the name as sent is still a name
        return value
    return value


def too_large_text(size: int, limit: int, parts: list[tuple[str, int]]) -> str:
    """What the report says of a message over the size limit, naming its attachments."""
    named = ", ".join(f"{name} ({part / 2**20:.1f} MB)" for name, part in parts)
    return (f"skipped, the message is {size / 2**20:.1f} MB (over the {limit // 2**20} MB "
            f"limit){'; attachments: ' + named if named else ''}")
