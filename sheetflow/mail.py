"""For the coordinator who emails the packs: a mailing list and ``.eml`` drafts.

The drafts are built with the standard library's :mod:`email` package. Each has the
rater as ``To``, the study's ``[email]`` subject and body with ``{name}`` and the other
placeholders filled in, the pack attached as an ``.xlsx``, and an ``X-Unsent: 1`` header
so Outlook and Thunderbird open it as a draft ready to send. No ``Date`` or
``Message-ID`` is added and the MIME boundary is derived from the file name, so the
same study gives the same bytes.
"""

from __future__ import annotations

import csv
import hashlib
import io
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formataddr
from pathlib import Path

from .study import Rater, Study

XLSX_TYPE = ("application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_safe(text: str) -> str:
    """Neutralise text a spreadsheet would run as a formula (OWASP CSV injection)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def mailing_list_csv(rows: list[tuple[Rater, int, str]]) -> bytes:
    """The coordinator's list: one line per pack (rater id, name, email, sitting, file).

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
    writer.writerow(["rater_id", "name", "email", "sitting", "file"])
    for rater, sitting, file_name in rows:
        writer.writerow([csv_safe(v) for v in (rater.id, rater.name, rater.email,
                                               str(sitting), file_name)])
    return buf.getvalue().encode("utf-8")


def fill(template: str, study: Study, rater: Rater) -> str:
    """``template`` with ``{name}``, ``{rater_id}``, ``{last_name}``, ``{study_id}``,
    ``{date}``, ``{title}`` filled in; unknown placeholders are left as written."""
    values = {"name": rater.name or rater.id, "rater_id": rater.id,
              "last_name": rater.last_name or rater.name or rater.id, "study_id": study.id,
              "date": study.date, "title": study.title}
    return template.format_map(_Keep(values))


class _Keep(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def build_eml(study: Study, rater: Rater, pack: Path, *, subject: str | None = None,
              body: str | None = None) -> bytes:
    """A ready-to-send draft mailing ``pack`` to ``rater``.

    Parameters
    ----------
    study : Study
    rater : Rater
        Must have an e-mail address.
    pack : Path
        The workbook to attach (left out, and said in the text, when it is missing).
    subject, body : str, optional
        Text used as given; by default the study's e-mail template with its
        placeholders filled in.

    Returns
    -------
    bytes
        The message in RFC 5322 form with CRLF line ends.
    """
    subject = subject or fill(study.email_subject or f"{study.title}: your scoring workbook",
                              study, rater)
    body = body or fill(study.email_body or (
        "Dear {name},\n\nAttached is your scoring workbook. Please read its Instructions "
        "sheet first, fill in the yellow cells, save it and email it back.\n"), study, rater)
    msg = EmailMessage(policy=SMTP)
    msg["To"] = formataddr((rater.name, rater.email)) if rater.name else rater.email
    msg["Subject"] = subject
    msg["X-Unsent"] = "1"
    if not pack.is_file():
        body += f"\n[{pack.name} was not found when this draft was made: attach it.]\n"
    msg.set_content(body)
    if pack.is_file():
        msg.add_attachment(pack.read_bytes(), maintype=XLSX_TYPE[0], subtype=XLSX_TYPE[1],
                           filename=pack.name)
        msg.set_boundary("sheetflow-" + hashlib.sha256(pack.name.encode()).hexdigest()[:24])
    return msg.as_bytes()
