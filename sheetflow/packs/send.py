"""Sending composed messages over one SMTP connection, each journalled before and after.

:func:`send_messages` opens one connection (STARTTLS, SSL or plain, as the settings
say), logs in when a password is given, and sends each :class:`Outgoing` in turn with
the standard library's :mod:`smtplib`. Every message gets a ``sending`` record in the
journal (:mod:`.journal`) before its transaction and its outcome after it: ``sent``
with the server's reply, ``refused`` (the server refused the recipient or the message;
the others still go) or ``failed`` (the connection broke off during it; nothing after
it is tried). A connection that breaks after the whole message, its closing "." line
included, was written and before the server's answer journals no outcome: the message
may or may not have arrived, so it is *unconfirmed* and held back like a sent one
unless ``--resend``. "Written" means more than handed to this machine's network
buffer: where the system tells (Linux ``TCP_INFO``), the server's machine must have
acknowledged every byte of it; a connection the server closed or reset before that
cannot have delivered it (SMTP accepts nothing before the closing "."), so it is
journalled ``failed`` and the next run sends it. A server that cannot be reached or
refuses the login raises :class:`~sheetflow.errors.MailError` before anything is
journalled, and so does one that refuses a message only because no one logged in (530
"Authentication required" at MAIL or RCPT: :func:`needs_login`), or only because the
connection is not encrypted (530 "Must issue a STARTTLS command first", or a 530 from a
server that offers STARTTLS: :func:`needs_tls`, said as such, since a password would not
help); that message is journalled ``failed``, never ``refused``, which would blame the
address.

Ctrl-C raises :class:`SendInterrupted` (a :class:`KeyboardInterrupt`) with the report so
far, the connection closed without QUIT. The message it stopped is journalled as what it
is: ``sent`` (or ``refused``) once the server answered its data; *unconfirmed* (no
outcome) when its closing "." may have gone and the answer had not come; ``failed``
(the next run sends it) when its "." had not gone, as the server then cannot have
taken it.
"""

from __future__ import annotations

import contextlib
import hashlib
import smtplib
import socket
import ssl
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import NoReturn

from ..errors import MailError
from ..spec.mail import SMTP_PASSWORD_ENV, Server
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
    """Written whole, then the connection broke before the server's answer."""
    not_tried: list[Outgoing] = field(default_factory=list)


def send_messages(root: Path, messages: list[Outgoing], server: Server, sender: str, *,
                  login: str = "", password: str = "", context: ssl.SSLContext | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  again: str = "") -> SendReport:
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
    again : str, optional
        The command that sends what did not go, as the user gave it (without
        ``--resend``, which would send again what went), which a missing login or a
        broken connection names (default: "send again", "the same command").

    Returns
    -------
    SendReport

    Raises
    ------
    MailError
        The server cannot be reached, the TLS handshake or the login failed (nothing
        journalled); or the connection broke off (the message it broke on is journalled
        ``failed``, the report is attached as ``exc.report``); or the server will not
        send without a login (:func:`needs_login`: the message it said so for is
        journalled ``failed``, not ``refused``; the report is attached only when
        something went before).
    """
    report = SendReport()
    if not messages:
        return report
    try:
        smtp = _connect(server, login, password, context, again)
    except KeyboardInterrupt:
        report.not_tried = list(messages)
        raise SendInterrupted(report) from None
    try:
        _send_all(root, smtp, messages, server, sender, login, password, report,
                  progress, again)
        _quit(smtp)
    except KeyboardInterrupt:
        # closed without QUIT: its reply could be the one still owed to the message
        # that was stopped, and an error reading it would take the interrupt's place
        _close(smtp)
        report.not_tried = _untried(messages, report)
        raise SendInterrupted(report) from None
    except BaseException:
        _close(smtp)
        raise
    return report


class SendInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`send_messages`; ``report`` says what became of each message.

    Still a :class:`KeyboardInterrupt`, so whatever answers Ctrl-C answers it.
    """

    def __init__(self, report: SendReport) -> None:
        super().__init__()
        self.report = report


def _send_all(root: Path, smtp: smtplib.SMTP, messages: list[Outgoing], server: Server,
              sender: str, login: str, password: str, report: SendReport,
              progress: Callable[[int, int], None] | None, again: str) -> None:
    """Send each of ``messages`` in turn over ``smtp`` (see :func:`send_messages`)."""
    for done, item in enumerate(messages, 1):
        try:
            _send_one(root, smtp, item, sender, report, again)
        except _LoginRequired as exc:
            # a problem of the connection, not of this recipient: stop at once
            error = MailError(
                _tls_line(server, exc.reply, report, again)
                if needs_tls(server, smtp, exc.reply)
                else _login_line(server, login, password, exc.reply, report, again))
            if report.sent or report.refused:
                report.not_tried = messages[done:]
                error.report = report  # type: ignore[attr-defined]
            raise error from None
        except MailError as exc:
            report.not_tried = messages[done:]
            exc.report = report  # type: ignore[attr-defined]
            raise
        if progress is not None:
            progress(done, len(messages))


def _untried(messages: list[Outgoing], report: SendReport) -> list[Outgoing]:
    """The messages whose transaction never began (none of the report's outcomes)."""
    begun = {id(item) for outcome in (report.sent, report.refused, report.failed,
                                      report.unconfirmed) for item, _ in outcome}
    return [item for item in messages if id(item) not in begun]


def _send_one(root: Path, smtp: smtplib.SMTP, item: Outgoing, sender: str,
              report: SendReport, again: str) -> None:
    smtp._sheetflow_reset()  # type: ignore[attr-defined]
    try:
        append(root, _sending_record(item))
        outcome, reply = _transaction(root, smtp, item, sender, report, again)
        append(root, {"event": outcome, "message_id": item.message_id,
                      "time": iso(now_utc()), "reply": reply})
        (report.sent if outcome == "sent" else report.refused).append((item, reply))
    except KeyboardInterrupt:
        _interrupted(root, smtp, item, report)
        raise


def _sending_record(item: Outgoing) -> dict[str, object]:
    """The journal's record that ``item``'s transaction begins."""
    name, sha256, _ = item.attachment
    return {"event": "sending", "kind": item.kind, "rater": item.rater,
            "sitting": item.sitting, "to": item.to, "message_id": item.message_id,
            "time": iso(now_utc()), "attachment": name, "attachment_sha256": sha256,
            "about": item.about}


def _transaction(root: Path, smtp: smtplib.SMTP, item: Outgoing, sender: str,
                 report: SendReport, again: str) -> tuple[str, str]:
    """Send ``item``: its outcome (``sent`` or ``refused``) and the server's reply."""
    try:
        refused = smtp.send_message(item.message, from_addr=sender, to_addrs=[item.to])
        reply = _last_reply(smtp)
        outcome = "refused" if refused else "sent"
        if refused:
            reply = "; ".join(f"{code} {_text(text)}" for code, text in refused.values())
    except smtplib.SMTPRecipientsRefused as exc:
        outcome = "refused"
        reply = "; ".join(f"{code} {_text(text)}" for code, text in exc.recipients.values())
        if any(needs_login(code, _text(text)) for code, text in exc.recipients.values()):
            _login_required(root, item, reply)
    except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
        outcome, reply = "refused", f"{exc.smtp_code} {_text(exc.smtp_error)}"
        if needs_login(exc.smtp_code, _text(exc.smtp_error)):
            _login_required(root, item, reply)
    except (smtplib.SMTPException, OSError) as exc:
        _broke_off(root, smtp, item, report, exc, again)
    return outcome, reply


INTERRUPTED_BEFORE = ("interrupted (Ctrl-C) before the mail server had the whole message: "
                      "it was not delivered, and the next run sends it")
"""The reply journalled (``failed``) for a message Ctrl-C stopped before its "." went."""
INTERRUPTED_AFTER = ("interrupted (Ctrl-C) after the whole message was written and before "
                     "the mail server confirmed it: it may or may not have arrived")
"""Why a message Ctrl-C stopped while the server's answer was awaited is unconfirmed."""


def _interrupted(root: Path, smtp: smtplib.SMTP, item: Outgoing,
                 report: SendReport) -> None:
    """Journal and report what Ctrl-C left of ``item``'s transaction, whatever it was
    stopped in: the server's reply to its data, once read, settles it; before that, a
    message whose closing "." may have gone may have arrived (unconfirmed: no outcome
    journalled); one whose "." never went cannot have (``failed``: the next run sends
    it)."""
    if any(item is done for outcome in (report.sent, report.refused)
           for done, _ in outcome):
        return  # journalled and reported before the interrupt
    answered = getattr(smtp, "_sheetflow_answer", None)
    if answered is not None:
        code, text = answered
        reply = f"{code} {_text(text)}"
        outcome = ("sent" if code == 250 else "failed" if needs_login(code, _text(text))
                   else "refused")  # as _transaction would have had it
        # written again if the interrupt came after the record: a repeat changes nothing
        append(root, {"event": outcome, "message_id": item.message_id,
                      "time": iso(now_utc()), "reply": reply})
        {"sent": report.sent, "failed": report.failed,
         "refused": report.refused}[outcome].append((item, reply))
    elif getattr(smtp, "_sheetflow_dot", False):
        report.unconfirmed.append((item, INTERRUPTED_AFTER))
    else:
        append(root, {"event": "failed", "message_id": item.message_id,
                      "time": iso(now_utc()), "reply": INTERRUPTED_BEFORE})
        report.failed.append((item, INTERRUPTED_BEFORE))


class _LoginRequired(Exception):
    """The server refused a message only because no one logged in."""

    def __init__(self, reply: str) -> None:
        super().__init__(reply)
        self.reply = reply


def needs_login(code: int, text: str) -> bool:
    """Whether a refusal at MAIL, RCPT or DATA says the server needs a login first.

    530 (RFC 4954: authentication required), or any 5xx whose text says so, as some
    servers answer relaying without a login ("550 5.7.1 ... Authentication required").
    """
    return code == 530 or (code // 100 == 5 and "authentication required" in text.lower())


def needs_tls(server: Server, smtp: smtplib.SMTP, reply: str) -> bool:
    """Whether a refusal :func:`needs_login` took for a missing login is the server
    asking for TLS first: on a connection without it, the reply names STARTTLS (RFC
    3207: "530 Must issue a STARTTLS command first") or the server offers STARTTLS (a
    server that takes logins only over TLS does not offer AUTH before it)."""
    if server.security != "none":  # already encrypted: the refusal is about the login
        return False
    return "starttls" in reply.lower() or smtp.has_extn("starttls")


def _tls_line(server: Server, reply: str, report: SendReport, again: str) -> str:
    """One line saying the server takes messages only over TLS, and what to run."""
    gone = f"; {_sent(len(report.sent))}" if report.sent else ""
    return (f"the SMTP server {server} requires TLS ({reply}): use --smtp-security "
            f"starttls (or [mail] smtp_security = \"starttls\") and {_rerun_tls(again)}"
            f"{gone}")


def _rerun_tls(again: str) -> str:
    """The command as the user gave it, with STARTTLS in place of no TLS."""
    if not again:
        return "send again"
    plain = "--smtp-security none"
    # no option typed: the setting came from [mail], which the option overrides
    tls = again.replace(plain, _STARTTLS) if plain in again else f"{again} {_STARTTLS}"
    return f"run '{tls}'"


_STARTTLS = "--smtp-security starttls"


def _login_required(root: Path, item: Outgoing, reply: str) -> NoReturn:
    """Journal ``item`` as not sent (``failed``: the next run sends it) and raise."""
    # not "refused": that would tell the coordinator to fix a correct address
    append(root, {"event": "failed", "message_id": item.message_id, "time": iso(now_utc()),
                  "reply": reply})
    raise _LoginRequired(reply)


def _login_line(server: Server, login: str, password: str, reply: str,
                report: SendReport, again: str) -> str:
    """One line saying the server requires a login, and what to set."""
    gone = f"; {_sent(len(report.sent))}" if report.sent else ""
    if not password:
        return (f"the SMTP server {server} requires a login ({reply}) and no "
                f"{SMTP_PASSWORD_ENV} was given: set it to the password of {login!r} "
                f"([mail] username; most providers need an app password) and "
                f"{_rerun(again)}"
                f"{gone}")
    return (f"the SMTP server {server} will not send without a login ({reply}) although "
            f"sheetflow logged in as {login!r}: check [mail] username and "
            f"{SMTP_PASSWORD_ENV}{gone}")


def _rerun(again: str) -> str:
    """What to run once the login is set: the whole command when known."""
    return f"run '{again}' again" if again else "send again"


def _rest(again: str) -> str:
    """What sends the messages not sent yet: the whole command when known."""
    return (f"run '{again}' again to send the rest" if again
            else "run the same command again to send the rest")


def _broke_off(root: Path, smtp: smtplib.SMTP, item: Outgoing, report: SendReport,
               exc: BaseException, again: str) -> NoReturn:
    """Journal and raise a connection lost during ``item``'s transaction (``again``:
    the command that sends the rest, "" when not known).

    Raises
    ------
    MailError
        Always: unconfirmed (no outcome journalled) when the whole message was written,
        else ``failed`` (the next run sends it).
    """
    if _may_have_arrived(smtp):
        # the server's machine had every byte, the closing "." included: it may have
        # accepted the message, so no outcome is journalled (unconfirmed: held back from
        # the next send unless --resend, so it never goes twice unasked)
        report.unconfirmed.append((item, str(exc)))
        raise MailError(
            f"the connection to the mail server broke after the whole message to {item.to} "
            f"was written and before the server confirmed it ({exc}): it may or may not "
            "have arrived, so it is held as unconfirmed and not sent again without "
            f"--resend (ask the rater); {_sent(len(report.sent))}; {_rest(again)}"
            ) from None
    append(root, {"event": "failed", "message_id": item.message_id, "time": iso(now_utc()),
                  "reply": _text(str(exc))})
    report.failed.append((item, str(exc)))
    raise MailError(f"the mail server broke off before it had the whole message to {item.to} "
                    f"({exc}): it was not delivered, and the next run sends it; "
                    f"{_sent(len(report.sent))}; {_rest(again)}") from None


def _last_reply(smtp: smtplib.SMTP) -> str:
    """The server's answer to the end of the message (``250 ...``), as text."""
    code, text = getattr(smtp, "_sheetflow_answer", None) or (250, b"OK")
    return f"{code} {_text(text)}"


def _text(value: bytes | str) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return " ".join(text.split())


_TCP_ESTABLISHED = 1  # tcpi_state of a connection neither side has closed
_TCP_INFO_ACKED = 120  # offset of tcpi_bytes_acked (u64) in Linux's struct tcp_info


def _tcp_acked(sock: socket.socket) -> tuple[int, int] | None:
    """(TCP state, bytes the peer acknowledged so far) from Linux's ``TCP_INFO``; None
    where the system does not tell."""
    option = getattr(socket, "TCP_INFO", None)
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, option, 256) if option else b""
    except OSError:
        return None
    if len(info) < _TCP_INFO_ACKED + 8:
        return None
    return info[0], struct.unpack_from("=Q", info, _TCP_INFO_ACKED)[0]


def _unacknowledged(sock: socket.socket) -> int | None:
    """Bytes written to ``sock`` its peer has not acknowledged yet (``SIOCOUTQ``)."""
    try:
        import fcntl
        import termios
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4)
    except (ImportError, AttributeError, OSError):
        return None
    return int(struct.unpack("i", raw)[0])


def _end_of_data(sock: socket.socket) -> int | None:
    """The acknowledged-byte count at which the peer has had everything written so far
    (None where the system does not tell)."""
    # the acknowledged count first, the queue second: an acknowledgement between the
    # two readings makes the target too low, never too high, so a doubt always comes
    # out as "may have arrived" (held back), never as a second copy sent
    acked = _tcp_acked(sock)
    queued = _unacknowledged(sock)
    if acked is None or queued is None:
        return None
    return acked[1] + queued


class _Tracked:
    """smtplib's client, keeping the server's reply to each message's data, whether its
    closing "." line may have gone and whether it was written, and how far the server's
    machine had acknowledged it when the connection was closed."""

    _sheetflow_answer: tuple[int, bytes] | None = None
    _sheetflow_dot = False
    _sheetflow_written = False
    _sheetflow_end: int | None = None
    _sheetflow_closed: tuple[int, int] | None = None

    def _sheetflow_reset(self) -> None:
        """Forget the previous message's transaction."""
        self._sheetflow_answer, self._sheetflow_dot = None, False
        self._sheetflow_written, self._sheetflow_end = False, None
        self._sheetflow_closed = None

    def getreply(self) -> tuple[int, bytes]:
        code, text = super().getreply()  # type: ignore[misc]
        if self._sheetflow_dot and self._sheetflow_answer is None:
            # the answer to the message's "." kept at once: a Ctrl-C between here
            # and the end of smtplib's data() finds the message accepted, not unknown
            self._sheetflow_answer = (code, text)
        return code, text

    def send(self, s: bytes | str) -> None:
        if not (isinstance(s, bytes) and s.endswith(b"\r\n.\r\n")):
            super().send(s)  # type: ignore[misc]
            return
        # the body, then its closing ".\r\n" apart: a body stopped part-way (Ctrl-C)
        # lacks the ".", without which SMTP accepts nothing; from the moment the "."
        # is being written, the message may arrive
        super().send(s[:-3])  # type: ignore[misc]
        self._sheetflow_dot = True
        super().send(s[-3:])  # type: ignore[misc]
        self._sheetflow_written = True
        self._sheetflow_end = _end_of_data(self.sock)  # type: ignore[attr-defined]

    def close(self) -> None:
        # smtplib closes the socket before raising a lost connection: read how far the
        # peer acknowledged the data while the socket is still there
        sock = getattr(self, "sock", None)
        if sock is not None:
            self._sheetflow_closed = _tcp_acked(sock)
        super().close()  # type: ignore[misc]


def _may_have_arrived(smtp: smtplib.SMTP) -> bool:
    """Whether the server may have the whole message of a transaction that broke off."""
    if not getattr(smtp, "_sheetflow_written", False):
        return False  # its closing "." was never written: SMTP accepts nothing without
    end = getattr(smtp, "_sheetflow_end", None)
    closed = getattr(smtp, "_sheetflow_closed", None)
    if end is None or closed is None:
        return True  # the system does not tell how far the server got
    state, acked = closed
    if state == _TCP_ESTABLISHED:
        return True  # given up waiting: the acknowledgements may be what was lost
    return acked >= end  # the server closed or reset it: did it have every byte?


class _SMTP(_Tracked, smtplib.SMTP):
    pass


class _SMTPSSL(_Tracked, smtplib.SMTP_SSL):
    pass


def _connect(server: Server, login: str, password: str,
             context: ssl.SSLContext | None, again: str = "") -> smtplib.SMTP:
    """An open, logged-in connection, or :class:`MailError` with one line saying why
    (``again``: the command as the user gave it, for a server that wants TLS)."""
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
            _login(smtp, login, password)
        return smtp
    except BaseException as exc:
        if smtp is not None:
            _close(smtp)
        if isinstance(exc, smtplib.SMTPNotSupportedError) and smtp is not None \
                and needs_tls(server, smtp, ""):  # no AUTH offered before STARTTLS
            raise MailError(_tls_line(server, "it offers no login before STARTTLS",
                                      SendReport(), again)) from None
        if isinstance(exc, Exception):
            raise MailError(connection_problem(where, exc, login, "SMTP")) from None
        raise


LOGIN_TRIES = 3
"""Logins tried while the server answers that it cannot check one for now."""
LOGIN_PAUSE = 1.0
"""Seconds before the second login; twice that before the third."""


def patient_login(login: Callable[[], object], error: type[Exception],
                  temporary: Callable[[Exception], bool], *, tries: int = LOGIN_TRIES,
                  pause: float = LOGIN_PAUSE) -> None:
    """Call ``login``; while it raises an ``error`` the server calls ``temporary`` (a
    busy sign-in service: SMTP 4xx, IMAP ``[UNAVAILABLE]``), wait and try again, up to
    ``tries`` times in all, ``pause`` seconds before the second, twice that before the
    third, and so on. The last error, or any other, is raised as it came."""
    for attempt in range(1, tries + 1):
        try:
            login()
            return
        except error as exc:
            if not temporary(exc) or attempt == tries:
                raise
            time.sleep(pause * attempt)


def _login(smtp: smtplib.SMTP, login: str, password: str) -> None:
    """Log in (RFC 4954 section 6: a 4xx refusal, such as 454 "Temporary authentication
    failure", is the server's state, and is tried again)."""
    patient_login(lambda: smtp.login(login, password), smtplib.SMTPAuthenticationError,
                  _temporary, tries=LOGIN_TRIES, pause=LOGIN_PAUSE)


def _temporary(exc: Exception) -> bool:
    """Whether a refused login is the server's state (4xx), not the credentials."""
    code = getattr(exc, "smtp_code", None)
    return isinstance(code, int) and 400 <= code < 500


def _close(smtp: smtplib.SMTP) -> None:
    """Close the connection at once, without QUIT."""
    with contextlib.suppress(OSError):
        smtp.close()


def _quit(smtp: smtplib.SMTP) -> None:
    """Say QUIT and close: every message has its outcome, so a server that answers it
    badly or drops the line changes nothing that was sent."""
    try:
        with contextlib.suppress(smtplib.SMTPException, OSError):
            smtp.quit()
    finally:
        _close(smtp)


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
    if isinstance(exc, smtplib.SMTPAuthenticationError) and _temporary(exc):
        return (f"{where} could not check the login of {login!r} for now ({exc.smtp_code} "
                f"{_text(exc.smtp_error)}, {LOGIN_TRIES} tries): a failure on the server's "
                "side, not the password; nothing was sent, try again in a few minutes")
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
