"""The optional ``[mail]`` table of ``study.toml``: how ``send`` and ``fetch`` reach the servers.

None of it is part of the spec hash (changing the sender or the server must not break
the seal). Passwords are never in the table: they come from the environment only
(:data:`SMTP_PASSWORD_ENV`, :data:`IMAP_PASSWORD_ENV`), so they are never written to a
file or a log by sheetflow.

Keys
----
``from``, ``reply_to``
    One address each, optionally with a display name (``Dr Ana Lee <ana@example.org>``).
``smtp``, ``imap``
    ``host:port`` of the outgoing and incoming server.
``smtp_security``, ``imap_security``
    ``starttls`` (the default for SMTP), ``ssl`` (the default for IMAP) or ``none``
    (plain text; only sensible for a server on the same machine).
``imap_folder``
    The folder returns arrive in (default ``INBOX``).
``username``
    The login for both servers (default: the ``from`` address).
``deadline``
    A date (``2026-10-01``): a pack not returned by the end of that day is overdue.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from email.headerregistry import Address
from email.utils import parseaddr
from typing import Any

from .spelling import close_match, unknown_key

SMTP_PASSWORD_ENV = "SHEETFLOW_SMTP_PASSWORD"
IMAP_PASSWORD_ENV = "SHEETFLOW_IMAP_PASSWORD"
SECURITY = ("starttls", "ssl", "none")
MAIL_KEYS = ("from", "reply_to", "smtp", "smtp_security", "imap", "imap_security",
             "imap_folder", "username", "deadline")
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")


@dataclass(frozen=True)
class Server:
    """One mail server: where it is and how the connection is protected."""

    host: str
    port: int
    security: str

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class MailSettings:
    """The ``[mail]`` table, checked (see the module docstring for each key).

    ``sender`` and ``reply_to`` are ``(display name, address)`` pairs (``("", "")`` when
    unset); ``deadline`` is None when unset.
    """

    sender: tuple[str, str] = ("", "")
    reply_to: tuple[str, str] = ("", "")
    smtp: Server | None = None
    imap: Server | None = None
    imap_folder: str = "INBOX"
    username: str = ""
    deadline: dt.date | None = None

    @property
    def login(self) -> str:
        """The user name both servers are logged in with (default: the sender address)."""
        return self.username or self.sender[1]

    def overriding(self, **given: str | None) -> MailSettings:
        """These settings with the command line's options (``None``: not given) on top.

        Raises
        ------
        ValueError
            A given value is not valid (the message names the option).
        """
        table = {key: value for key, value in given.items() if value is not None}
        problems: list[str] = []
        parsed = _parse(table, problems, defaults=self)
        if problems:
            raise ValueError(problems[0])
        return parsed


def parse_mail(table: dict, problems: list[str]) -> MailSettings:
    """Check the ``[mail]`` table; each problem found is appended to ``problems``.

    Parameters
    ----------
    table : dict
        The parsed TOML table (empty when the study has none).
    problems : list of str
        Receives one message per problem, naming the key.

    Returns
    -------
    MailSettings
        Unset or invalid keys keep their defaults.
    """
    for key in table:
        if key not in MAIL_KEYS:
            problems.append(unknown_key(key, MAIL_KEYS))
    return _parse({k: v for k, v in table.items() if k in MAIL_KEYS}, problems,
                  defaults=MailSettings())


def _parse(table: dict, problems: list[str], defaults: MailSettings) -> MailSettings:
    """``defaults`` with each key of ``table`` checked and applied."""
    out = defaults
    for key, value in table.items():
        if not isinstance(value, (str, dt.date)) or isinstance(value, dt.datetime):
            problems.append(f"'{key}' must be text, not {type(value).__name__}")
            continue
        try:
            out = _apply(out, key, value)
        except ValueError as exc:
            problems.append(f"'{key}' {exc}")
    return out


def _apply(out: MailSettings, key: str, value: str | dt.date) -> MailSettings:
    if key == "deadline":
        return replace(out, deadline=parse_date(value))
    text = str(value).strip()
    if key in ("from", "reply_to"):
        pair = parse_address(text)
        return replace(out, sender=pair) if key == "from" else replace(out, reply_to=pair)
    if key in ("smtp", "imap"):
        security = (out.smtp if key == "smtp" else out.imap)
        default = security.security if security else ("starttls" if key == "smtp" else "ssl")
        server = parse_server(text, default)
        return replace(out, **{key: server})
    if key in ("smtp_security", "imap_security"):
        if text not in SECURITY:
            meant = close_match(text, SECURITY)
            hint = f" (did you mean {meant!r}?)" if meant else ""
            raise ValueError(f"is {text!r}{hint}; use one of {', '.join(SECURITY)}")
        name = key.split("_")[0]
        current = getattr(out, name)
        if current is None:  # kept until the host is known (the order of keys is free)
            current = Server("", 0, text)
        return replace(out, **{name: replace(current, security=text)})
    if key == "imap_folder":
        if not text or any(ord(c) < 32 for c in text):
            raise ValueError("must be one line naming a folder, such as INBOX")
        return replace(out, imap_folder=text)
    if any(ord(c) < 32 or c.isspace() for c in text):  # username
        raise ValueError("must be one word (a login name or address)")
    return replace(out, username=text)


def parse_address(text: str) -> tuple[str, str]:
    """``(display name, address)`` of one address such as ``Ana Lee <ana@example.org>``.

    Raises
    ------
    ValueError
        Not exactly one valid address.
    """
    name, addr = parseaddr(text, strict=True) if _has_strict() else parseaddr(text)
    if not addr or "@" not in addr or any(ord(c) < 32 for c in text):
        raise ValueError(f"is {text!r}; give one address such as 'Ana Lee <ana@example.org>' "
                         "(a name with a comma in quotes: '\"Lee, Ana\" <ana@example.org>')")
    try:
        Address(display_name=name, addr_spec=addr)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"is {text!r}: not a valid address ({exc})") from None
    return name, addr


def _has_strict() -> bool:
    """``parseaddr(strict=)`` exists from Python 3.11.10/3.12.6 on."""
    import inspect

    return "strict" in inspect.signature(parseaddr).parameters


def parse_server(text: str, security: str) -> Server:
    """A ``host:port`` text as a :class:`Server` with the given security.

    Raises
    ------
    ValueError
        No port, a port outside 1-65535, or a host that is not a host name.
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"is {text!r}; give host:port, such as smtp.example.org:587")
    if not _HOST.fullmatch(host):
        raise ValueError(f"is {text!r}; {host!r} is not a host name")
    return Server(host.strip("[]"), int(port), security)


def parse_date(value: str | dt.date) -> dt.date:
    """A ``yyyy-mm-dd`` date (TOML's own date or text).

    Raises
    ------
    ValueError
        Not such a date.
    """
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"is {value!r}; give a date as yyyy-mm-dd") from None


def deadline_unsaid(study: Any) -> list[str]:
    """A warning when ``[mail]`` sets a deadline that the invitations will not state.

    The default invitation says the deadline; an ``[email] body`` of the coordinator's
    own says it only where it writes ``{deadline}``, so a deadline added to ``[mail]``
    reaches the reminders but not the invitations (as in the paired-rubric and
    keep-known templates, whose bodies have none). A subject saying it is enough.
    """
    deadline = study.mail.deadline
    if deadline is None or not study.email_body:
        return []
    if any("{deadline}" in text for text in (study.email_body, study.email_subject)):
        return []
    return [f"{study.root / 'study.toml'}: [mail] deadline = {deadline.isoformat()} is "
            "set, but the [email] body does not say {deadline}, so the invitations will "
            "not state it (the reminders do): add it to the body, e.g. \"Please send it "
            "back by {deadline}.\""]


def deadline_passed(study: Any, today: dt.date) -> list[str]:
    """A warning when the ``[mail]`` deadline is over by ``today`` (UTC), before the
    invitations go: a default invitation asks for the workbook back by a day gone, and
    ``status`` marks every pack not back as overdue."""
    deadline = study.mail.deadline
    if deadline is None or today <= deadline:
        return []
    return [f"{study.root / 'study.toml'}: the [mail] deadline {deadline.isoformat()} has "
            f"passed (today is {today.isoformat()}, UTC), so status marks every pack not "
            "back as overdue: set a new deadline = yyyy-mm-dd in [mail]"]

