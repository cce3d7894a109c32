"""The IMAP folder ``sheetflow fetch`` reads: each message read once into a
:class:`~.message_files.Raw`, oldest first, read-only (``EXAMINE`` and ``BODY.PEEK[]``,
so nothing is marked read unless ``mark_seen``). A message over the size limit is named
from its header lines and ``BODYSTRUCTURE``, not downloaded; a message the server breaks
off on is handed on with why, and the rest read on a new connection.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import imaplib
import re
import ssl
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import MailError
from ..packs.send import LOGIN_PAUSE, LOGIN_TRIES, connection_problem, patient_login
from ..spec.mail import Server
from .mailbox import HEADER_BYTES, decoded_name
from .message_files import MAX_MESSAGE_BYTES, Raw
from .returns import display_name

TIMEOUT = 60.0
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
           "Dec")


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
    connection or a busy login service names (:func:`~.inbox.fetch` sets it)."""


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
