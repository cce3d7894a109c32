"""``sheetflow fetch``: the messages it cannot simply save, each named and none forgotten."""

from __future__ import annotations

import datetime as dt
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from mail_helpers import SENDER, filled, journal, mail_study, packs, run_json, sha256

from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L


def _message(sender: str, parts: list[tuple[bytes, str, str, str | None]],
             subject: str = "my workbook") -> bytes:
    """A message with ``parts`` (bytes, maintype, subtype, file name or None)."""
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = sender
    msg["To"] = SENDER
    msg["Subject"] = subject
    msg["Date"] = format_datetime(dt.datetime(2026, 9, 15, 9, 30, tzinfo=dt.UTC))
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content("Here it is.\n")
    for data, main, sub, name in parts:
        if name is None:
            msg.add_attachment(data, maintype=main, subtype=sub)
        else:
            msg.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return msg.as_bytes()


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def test_a_workbook_part_without_a_file_name_is_saved_by_its_type(tmp_path):
    """A part typed as a workbook but sent without a file name was "no spreadsheet
    attachment (no attachment)": the rater's return was never saved."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    books = [filled(root, pack) for pack in packs(root)]
    sent = [
        _message(raters[0].email, [(books[0], "application",
                                    "vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                                    None)]),
        _message(raters[1].email, [(books[1], "application", "vnd.ms-excel", None)]),
        _message(raters[2].email, [(books[2], "application", "octet-stream", None)]),
        _message(raters[2].email, [(b"not a workbook", "application", "octet-stream",
                                    None)], subject="something else"),
    ]
    paths = [str(_write(tmp_path, f"m{n}.eml", data)) for n, data in enumerate(sent)]
    result, doc = run_json("fetch", str(root), *paths)
    assert result.exit_code == 0, result.output
    assert len(doc["saved"]) == 3
    saved = {sha256((root / L.RETURNS_DIR / s["file"]).read_bytes()) for s in doc["saved"]}
    assert saved == {sha256(b) for b in books}
    assert all("-no_file_name" in s["file"] and s["file"].endswith(".xlsx")
               for s in doc["saved"])
    received = [r for r in journal(root) if r["event"] == "received"]
    # no name the rater gave: reply drafts fall back to the file's own name
    assert len(received) == 3 and all(r["attachment"] == "" for r in received)
    assert len(doc["listed"]) == 1 and "m3.eml" in doc["listed"][0]
