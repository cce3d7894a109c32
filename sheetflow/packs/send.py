"""Sending composed messages over one SMTP connection, each journalled before and after.

:func:`send_messages` opens one connection (STARTTLS, SSL or plain, as the settings
say), logs in when a password is given, and sends each :class:`Outgoing` in turn with
the standard library's :mod:`smtplib`. Every message gets a ``sending`` record in the
journal (:mod:`.journal`) before its transaction and its outcome after it: ``sent``
with the server's reply, ``refused`` (the server refused the recipient or the message;
the others still go) or ``failed`` (the connection broke off during it; nothing after
it is tried). A connection that breaks after the whole message was handed over and
before the server's answer journals no outcome: the message may have arrived, so it
is *unconfirmed* and held back like a sent one unless ``--resend``. A server that
cannot be reached or refuses the login raises :class:`~sheetflow.errors.MailError`
before anything is journalled.
"""

from __future__ import annotations

import contextlib
import hashlib
import smtplib
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from ..errors import MailError
from ..spec.mail import Server
from ..words import counted
from .journal import append, iso, now_utc
from .mail import attachment_of

TIMEOUT = 60.0  # seconds a server may take to answer one command


@dataclass(frozen=True)
class Outgoing:
    """One message ready to send.

    Attributes
    ----------
    kind : str
        ``invitation``, ``reminder`` or ``reply`` (:data:`.journal.KINDS`).
    rater : str
    sitting : int
    to : str
        The recipient's address (the envelope recipient; the only one).
    message : EmailMessage
        With From, Date and Message-ID (:func:`.mail.outgoing`).
    about : str
        What else tells two messages apart: for a reply, the sha256 of the returned
        file it answers ("" otherwise).
    """

    kind: str
    rater: str
    sitting: int
    to: str
    message: EmailMessage
    about: str = ""

    @property
    def attachment(self) -> tuple[str, str, int]:
        """(file name, sha256, size in bytes) of the attachment (``("", "", 0)``: none)."""
        found = attachment_of(self.message)
        if found is None:
            return "", "", 0
        return found[0], hashlib.sha256(found[1]).hexdigest(), len(found[1])

    @property
    def message_id(self) -> str:
        return str(self.message["Message-ID"])

    @property
    def size(self) -> int:
        """The message's size as sent, in bytes."""
        return len(self.message.as_bytes())


@dataclass
class SendReport:
    """What happened to each message: Message-ID -> server reply, by outcome."""

    sent: list[tuple[Outgoing, str]] = field(default_factory=list)
    refused: list[tuple[Outgoing, str]] = field(default_factory=list)
    failed: list[tuple[Outgoing, str]] = field(default_factory=list)
    unconfirmed: list[tuple[Outgoing, str]] = field(default_factory=list)
    """Handed over whole, then the connection broke before the server's answer."""
    not_tried: list[Outgoing] = field(default_factory=list)


def send_messages(root: Path, messages: list[Outgoing], server: Server, sender: str, *,
                  login: str = "", password: str = "", context: ssl.SSLContext | None = None,
                  progress: Callable[[int, int], None] | None = None) -> SendReport:
    """Send ``messages`` over one connection to ``server``, journalling each one.

    Parameters
    ----------
    root : Path
        The study folder (its ``mail.jsonl`` receives the records).
    messages : list of Outgoing
    server : Server
    sender : str
        The envelope sender (the ``From`` address).
    login, password : str
        Log in when ``password`` is given (from the environment; never stored).
    context : ssl.SSLContext, optional
        For STARTTLS and SSL (default: the system's trusted certificates, host name
        checked; ``SSL_CERT_FILE`` is honoured).
    progress : callable, optional
        ``progress(done, total)`` after each message.

    Returns
    -------
    SendReport

    Raises
    ------
    MailError
        The server cannot be reached, the TLS handshake or the login failed (nothing
        journalled); or the connection broke off (the message it broke on is journalled
        ``failed``, the report is attached as ``exc.report``).
    """
    report = SendReport()
    if not messages:
        return report
    with _connect(server, login, password, context) as smtp:
        for done, item in enumerate(messages, 1):
            try:
                _send_one(root, smtp, item, sender, report)
            except MailError as exc:
                report.not_tried = messages[done:]
                exc.report = report  # type: ignore[attr-defined]
                raise
            if progress is not None:
                progress(done, len(messages))
    return report


def _send_one(root: Path, smtp: smtplib.SMTP, item: Outgoing, sender: str,
              report: SendReport) -> None:
    name, sha256, _ = item.attachment
    mid = item.message_id
    smtp._sheetflow_handed = False  # type: ignore[attr-defined]
    append(root, {"event": "sending", "kind": item.kind, "rater": item.rater,
                  "sitting": item.sitting, "to": item.to, "message_id": mid,
                  "time": iso(now_utc()), "attachment": name, "attachment_sha256": sha256,
                  "about": item.about})
    try:
        refused = smtp.send_message(item.message, from_addr=sender, to_addrs=[item.to])
        reply = _last_reply(smtp)
        outcome = "refused" if refused else "sent"
        if refused:
            reply = "; ".join(f"{code} {_text(text)}" for code, text in refused.values())
    except smtplib.SMTPRecipientsRefused as exc:
        outcome = "refused"
        reply = "; ".join(f"{code} {_text(text)}" for code, text in exc.recipients.values())
    except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
        outcome, reply = "refused", f"{exc.smtp_code} {_text(exc.smtp_error)}"
    except (smtplib.SMTPException, OSError) as exc:
        if getattr(smtp, "_sheetflow_handed", False):
            # the server had the whole message and broke off before confirming it: it
            # may have been delivered, so no outcome is journalled (unconfirmed: held
            # back from the next send unless --resend)
            report.unconfirmed.append((item, str(exc)))
            raise MailError(
                f"the mail server broke off after taking the whole message to {item.to} "
                f"and before confirming it ({exc}): it may have arrived, so it is held as "
                f"unconfirmed and not sent again without --resend; {_sent(len(report.sent))}"
                "; run the same command again to send the rest") from None
        append(root, {"event": "failed", "message_id": mid, "time": iso(now_utc()),
                      "reply": _text(str(exc))})
        report.failed.append((item, str(exc)))
        raise MailError(f"the mail server broke off while sending to {item.to} ({exc}); "
                        f"{_sent(len(report.sent))}; run the same command again "
                        "to send the rest") from None
    append(root, {"event": outcome, "message_id": mid, "time": iso(now_utc()),
                  "reply": reply})
    (report.sent if outcome == "sent" else report.refused).append((item, reply))


def _last_reply(smtp: smtplib.SMTP) -> str:
    """The server's answer to the end of the message (``250 ...``), as text."""
    code, text = getattr(smtp, "_sheetflow_last", (250, b"OK"))
    return f"{code} {_text(text)}"


def _text(value: bytes | str) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return " ".join(text.split())


class _Tracked:
    """smtplib's client, keeping the server's reply to each message's data and whether
    the whole message was handed over (its closing "." line sent): a connection lost
    after that may still have delivered it."""

    _sheetflow_last: tuple[int, bytes] = (250, b"OK")
    _sheetflow_handed = False

    def data(self, msg: bytes | str) -> tuple[int, bytes]:
        code, text = super().data(msg)  # type: ignore[misc]
        self._sheetflow_last = (code, text)
        return code, text

    def send(self, s: bytes | str) -> None:
        super().send(s)  # type: ignore[misc]
        if isinstance(s, bytes) and s.endswith(b"\r\n.\r\n"):  # the body, ended
            self._sheetflow_handed = True


class _SMTP(_Tracked, smtplib.SMTP):
    pass


class _SMTPSSL(_Tracked, smtplib.SMTP_SSL):
    pass


def _connect(server: Server, login: str, password: str,
             context: ssl.SSLContext | None) -> smtplib.SMTP:
    """An open, logged-in connection, or :class:`MailError` with one line saying why."""
    where = f"the SMTP server {server}"
    context = context or ssl.create_default_context()
    smtp: smtplib.SMTP | None = None
    try:
        if server.security == "ssl":
            smtp = _SMTPSSL(server.host, server.port, timeout=TIMEOUT, context=context)
        else:
            smtp = _SMTP(server.host, server.port, timeout=TIMEOUT)
            if server.security == "starttls":
                smtp.starttls(context=context)
        if password:
            smtp.login(login, password)
        return smtp
    except BaseException as exc:
        if smtp is not None:
            _close(smtp)
        if isinstance(exc, Exception):
            raise MailError(connection_problem(where, exc, login, "SMTP")) from None
        raise


def _close(smtp: smtplib.SMTP) -> None:
    with contextlib.suppress(OSError):
        smtp.close()


def connection_problem(where: str, exc: BaseException, login: str, protocol: str) -> str:
    """One line naming the server, what went wrong and what to check (SMTP or IMAP)."""
    env = f"SHEETFLOW_{protocol}_PASSWORD"
    setting = protocol.lower()
    if isinstance(exc, socket.gaierror):
        return (f"{where}: unknown host (the name does not resolve); check [mail] "
                f"{setting} or --{setting}")
    if isinstance(exc, ssl.SSLError):
        return (f"{where}: the TLS handshake failed ({exc.reason or exc}); check "
                f"{setting}_security (starttls on port 587 or 143, ssl on 465 or 993, "
                "none only for a server on this machine)")
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return (f"{where} refused the login of {login!r} ({exc.smtp_code} "
                f"{_text(exc.smtp_error)}); check [mail] username and {env} (most "
                "providers need an app password)")
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return f"{where}: {exc}; set {setting}_security to ssl or none"
    if isinstance(exc, (ConnectionRefusedError, TimeoutError)):
        return (f"{where}: cannot connect ({exc.strerror or exc}); is the server running "
                f"and the port right? (check [mail] {setting})")
    if isinstance(exc, smtplib.SMTPException | OSError):
        return f"{where}: {_text(str(exc)) or type(exc).__name__}"
    return f"{where}: {type(exc).__name__}: {_text(str(exc))}"


def _sent(n: int) -> str:
    """How many messages went out before a failure, in words."""
    return f"{counted(n, 'message')} {'was' if n == 1 else 'were'} sent"
