"""For the coordinator who emails the packs: a mailing list and ``.eml`` drafts.

The drafts are built with the standard library's :mod:`email` package. Each has the
rater as ``To`` (formatted by :func:`address`), the study's ``[email]`` subject and
body with ``{name}`` and the other placeholders filled in (``{deadline}`` among them),
signed with the ``[mail]`` sender's name and return address when the study names one
(:func:`signed`), the pack attached as an ``.xlsx``, and an ``X-Unsent: 1`` header so
Outlook and Thunderbird open it as a draft ready to send. No ``Date`` or ``Message-ID``
is added to a draft; :func:`outgoing` adds them (and ``From``) when
``sheetflow send`` sends it. The MIME boundary is the email package's own random one:
derived from anything a value in the message could contain (the pack name, say), a
crafted answer could close the attachment part and open a part of its own in the
coordinator's outgoing mail. So drafts are not byte-stable between runs; what they
say and attach is (the packs, the manifest and the key are byte-stable).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import re
from dataclasses import dataclass, field
from email import message_from_bytes
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, make_msgid
from pathlib import Path

from ..spec.study import Rater, Study

XLSX_TYPE = ("application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_safe(text: str) -> str:
    """Neutralise text a spreadsheet would run as a formula (OWASP CSV injection)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


_PLACEHOLDER = re.compile(
    r"\{(name|rater_id|last_name|study_id|date|title|deadline|n_cases|batch_size)\}")
DEADLINE_PLACEHOLDER = "{deadline}"
"""Stands for the ``[mail] deadline`` in a subject or body; the spec loader refuses a
text that uses it when no deadline is set (there is no true date to put there)."""
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def fill(template: str, study: Study, rater: Rater, cases: int | None = None) -> str:
    """``template`` with ``{name}``, ``{rater_id}``, ``{last_name}``, ``{study_id}``,
    ``{date}``, ``{title}``, ``{deadline}``, ``{n_cases}`` and ``{batch_size}`` filled
    in; any other text, braces included (``{}``, a lone ``{``, an unknown
    ``{placeholder}``), is left as written: the subject and body are the coordinator's
    words, not a format string.
    ``{deadline}`` is the ``[mail] deadline`` as :func:`deadline_text` writes it (left
    as written when none is set, which the spec loader refuses); ``{n_cases}`` is
    ``cases``, the number of cases in the rater's workbook (a study's item count would
    be wrong for a workbook holding a subset, or a second sitting's repeats);
    ``{batch_size}`` is ``[design] batch_size`` (left as written without one, which the
    spec loader refuses)."""
    values = {"name": rater.name or rater.id, "rater_id": rater.id,
              "last_name": rater.last_name or rater.name or rater.id, "study_id": study.id,
              "date": study.date, "title": study.title}
    if cases is not None:
        values["n_cases"] = str(cases)
    if study.design.batch_size is not None:
        values["batch_size"] = str(study.design.batch_size)
    if study.mail.deadline is not None:
        values["deadline"] = deadline_text(study.mail.deadline)
    return _PLACEHOLDER.sub(lambda found: values.get(found[1], found[0]), template)


def deadline_text(day: dt.date) -> str:
    """A date as a rater reads it in a letter: ``Thursday 1 October 2026`` (English
    names whatever the machine's locale, as the rest of the text is English)."""
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def signature(study: Study) -> str:
    """The lines every draft is signed with: the ``[mail]`` sender's name and the
    address the workbook goes back to (``reply_to``, else ``from``); "" when ``[mail]``
    names no sender (the drafts then say "reply", true whoever sends them)."""
    name, sender = study.mail.sender
    back = study.mail.reply_to[1] or sender
    if not back:
        return ""
    return "\n".join(line for line in (name, back) if line)


def signer_of(body: str) -> tuple[str, str]:
    """The (name, address) a draft's text is signed with, as :func:`signed` wrote it:
    its last line when that is an e-mail address, and the line just above it in the
    same paragraph as the name ("" when there is none); ``("", "")`` for a text that
    ends in no address (signed by no one: it says "reply").

    Parameters
    ----------
    body : str
        The draft's plain text.

    Returns
    -------
    (str, str)
    """
    lines = body.replace("\r\n", "\n").rstrip().split("\n")
    last = lines[-1].strip()
    if not _BARE_ADDRESS.fullmatch(last):
        return "", ""
    above = lines[-2].strip() if len(lines) > 1 else ""
    return above, last


_BARE_ADDRESS = re.compile(r"[^\s@<>]+@[^\s@<>]+")


def signed(body: str, study: Study) -> str:
    """``body`` with :func:`signature` after it, unless it already ends with the
    sender's name or address (a coordinator who signed the text themselves)."""
    sign = signature(study)
    if not sign or body.rstrip().endswith(tuple(sign.split("\n"))):
        return body
    return f"{body.rstrip()}\n\n{sign}\n"


SITTING2_NOTE = (
    "This is your SECOND-SITTING workbook. Open it no earlier than 24 hours after you "
    "finished the first sitting, and do not look at your first answers. Type the date "
    "and time (yyyy-mm-dd hh:mm) when you start and finish each batch.")
"""What a sitting-2 draft and workbook say first (protocol 001: at least 24 h later)."""
SEND_WHEN = {1: "now", 2: "at least 24 h after the rater's sitting 1 is returned"}
"""The mailing list's ``send`` column per sitting."""


def mailing_list_csv(rows: list[tuple[Rater, int, str]]) -> bytes:
    """The coordinator's list: one line per pack (rater id, name, email, sitting, file,
    and when to send it: sitting 2 goes out apart, after sitting 1 is back).

    Parameters
    ----------
    rows : list of (Rater, sitting, file name)

    Returns
    -------
    bytes
        UTF-8 CSV, every field quoted, LF line ends.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["rater_id", "name", "email", "sitting", "file", "send"])
    for rater, sitting, file_name in rows:
        writer.writerow([csv_safe(v) for v in (rater.id, rater.name, rater.email,
                                               str(sitting), file_name,
                                               SEND_WHEN.get(sitting, ""))])
    return buf.getvalue().encode("utf-8")


@dataclass(frozen=True)
class Draft:
    """A composed draft and the attachment it carries, as :func:`compose_eml` made it.

    Attributes
    ----------
    message : bytes
        The message in RFC 5322 form with CRLF line ends.
    attached : list of (str, str)
        (file name, sha256) of the bytes attached: empty when the pack was missing.
        These are the bytes put into ``message``, read once: a check of them is a
        check of what the draft carries, with no second reading of the file and no
        parse of the message.
    """

    message: bytes
    attached: list[tuple[str, str]] = field(default_factory=list)


def build_eml(study: Study, rater: Rater, pack: Path, sitting: int = 1, *,
              subject: str | None = None, body: str | None = None,
              cases: int | None = None, staged: Path | None = None) -> bytes:
    """A ready-to-send draft mailing ``pack`` to ``rater`` (:func:`compose_eml`'s
    message alone)."""
    return compose_eml(study, rater, pack, sitting, subject=subject, body=body,
                       cases=cases, staged=staged).message


def compose_eml(study: Study, rater: Rater, pack: Path, sitting: int = 1, *,
                subject: str | None = None, body: str | None = None,
                cases: int | None = None, staged: Path | None = None) -> Draft:
    """A ready-to-send draft mailing ``pack`` to ``rater``, with what it attached.

    Parameters
    ----------
    study : Study
    rater : Rater
        Must have an e-mail address.
    pack : Path
        The workbook to attach (left out, and said in the text, when it is missing).
    sitting : int
        2 for a second-sitting workbook: the subject says so and the body gives
        :data:`SITTING2_NOTE` after its greeting (it is sent apart, after sitting 1 is
        back).
    subject, body : str, optional
        Text used as given (replies and reminders); by default the study's e-mail
        template with its placeholders filled in, and the sitting-2 note. Either way
        the body is :func:`signed`.
    cases : int, optional
        The number of cases in ``pack``: what the study's template says for
        ``{n_cases}`` (see :func:`fill`).
    staged : Path, optional
        Where ``pack``'s bytes are until they are moved into place (``generate`` drafts
        its packs in the same set as them): attached under ``pack``'s name.

    Returns
    -------
    Draft
        The message and the (file name, sha256) of the bytes it attached.
    """
    if subject is None or body is None:
        subject, body = _invitation(study, rater, sitting, cases)
    msg = EmailMessage(policy=SMTP)
    msg["To"] = address(rater.name, rater.email)
    msg["Subject"] = subject
    msg["X-Unsent"] = "1"
    data = _read_pack(staged or pack)
    if data is None:
        body += f"\n[{pack.name} was not found when this draft was made: attach it.]\n"
    msg.set_content(signed(body, study))
    if data is None:
        return Draft(msg.as_bytes())
    msg.add_attachment(data, maintype=XLSX_TYPE[0], subtype=XLSX_TYPE[1],
                       filename=pack.name)
    return Draft(msg.as_bytes(), [(pack.name, hashlib.sha256(data).hexdigest())])


def _read_pack(pack: Path) -> bytes | None:
    """The pack's bytes, or None when there is no such file."""
    return pack.read_bytes() if pack.is_file() else None


def _invitation(study: Study, rater: Rater, sitting: int,
                cases: int | None) -> tuple[str, str]:
    """The subject and body of the draft that sends a pack of ``cases`` cases out."""
    subject = study.email_subject or f"{study.title}: your scoring workbook"
    body = fill(study.email_body or default_body(study), study, rater, cases)
    if sitting == 2:
        subject += " - second sitting"
        body = with_sitting2_note(body)
    return fill(subject, study, rater, cases), body


def default_body(study: Study) -> str:
    """The invitation of a study without an ``[email] body``: what to do, how to send
    the workbook back and, when ``[mail]`` sets one, by when."""
    by = f" by {DEADLINE_PLACEHOLDER}" if study.mail.deadline is not None else ""
    return ("Dear {name},\n\nAttached is your scoring workbook. Please read its "
            "Instructions sheet first and fill in the yellow cells. Then save it and send "
            f"it back{by} as an attachment to a reply to this e-mail.\n\nThank you!\n")


def with_sitting2_note(body: str) -> str:
    """``body`` with :data:`SITTING2_NOTE` after its greeting (a first paragraph of one
    short line ending in a comma, "Hello Ana,"), or first when it opens with none."""
    first, gap, rest = body.partition("\n\n")
    if gap and "\n" not in first and len(first) <= 80 and first.rstrip().endswith(","):
        return f"{first}\n\n{SITTING2_NOTE}\n\n{rest}"
    return f"{SITTING2_NOTE}\n\n{body}"


def address(name: str, addr: str) -> Address:
    """One recipient as a header object: a display name with a comma, quotes or
    non-ASCII letters (``O'Brien, Séan``) stays one address, quoted or encoded as
    RFC 5322 and 2047 require (:mod:`email.headerregistry`)."""
    return Address(display_name=name or "", addr_spec=addr)


def outgoing(draft: bytes, sender: tuple[str, str], *, reply_to: tuple[str, str] = ("", ""),
             now: dt.datetime | None = None) -> EmailMessage:
    """A draft made ready to send: ``From``, ``Date`` and a fresh ``Message-ID`` added,
    ``X-Unsent`` removed; everything else (recipient, text, attachment) as drafted.

    Parameters
    ----------
    draft : bytes
        A message from :func:`build_eml`.
    sender, reply_to : (display name, address)
        From the study's ``[mail]`` table or the command line.
    now : datetime, optional
        The ``Date`` (default: now, in UTC).
    """
    msg = message_from_bytes(draft, policy=SMTP)
    assert isinstance(msg, EmailMessage)
    del msg["X-Unsent"], msg["From"], msg["Date"], msg["Message-ID"], msg["Reply-To"]
    msg["From"] = address(*sender)
    if reply_to[1]:
        msg["Reply-To"] = address(*reply_to)
    msg["Date"] = format_datetime(now or dt.datetime.now(dt.UTC))
    msg["Message-ID"] = make_msgid(domain=sender[1].rpartition("@")[2] or None)
    return msg


def attachment_of(msg: EmailMessage) -> tuple[str, bytes] | None:
    """The (file name, bytes) of a composed message's attachment, or None."""
    for part in msg.iter_attachments():
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            return part.get_filename() or "", payload
    return None



def invitation_text(study: Study, rater: Rater, sitting: int = 1,
                    cases: int | None = None) -> tuple[str, str]:
    """The subject and body of the invitation that sends ``rater`` their pack of
    ``cases`` cases, as the ``.eml`` draft and ``send invitations`` word it (generate
    searches them for arm ids before it writes anything)."""
    return _invitation(study, rater, sitting, cases)
