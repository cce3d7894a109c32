"""Studies and messages for the mail tests."""

from __future__ import annotations

import hashlib
import json
import os
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.cli import cli
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.journal import JOURNAL_FILE, records
from sheetflow.packs.mail import XLSX_TYPE
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

SENDER = "Study Desk <desk@example.org>"


def mail_study(root: Path, template: str = "paired-rubric", mail: str = "") -> Path:
    """A generated study with a ``[mail]`` table (``from`` plus ``mail``), its packs
    written a week ago: packs sent by hand get no reminder within ``--min-days`` of
    generate, and these tests remind at once."""
    init_study(root, template)
    with (root / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[mail]\nfrom = "{SENDER}"\n{mail}')
    generate_packs(root)
    week_ago = time.time() - 7 * 86400
    os.utime(root / L.PACKS_DIR / L.MANIFEST_FILE, (week_ago, week_ago))
    return root


def filled(root: Path, pack: dict[str, Any]) -> bytes:
    """The bytes of ``pack`` with every answer filled in (kept under ``root/filled``)."""
    dst = root / "filled" / pack["file"]
    dst.parent.mkdir(exist_ok=True)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, plan_answers(pack))
    return dst.read_bytes()


def packs(root: Path) -> list[dict[str, Any]]:
    return read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def run_json(*args: str, env: dict[str, str] | None = None) -> tuple[Result, dict[str, Any]]:
    result = run(*args, "--json", env=env)
    return result, json.loads(result.stdout)


def journal(root: Path) -> list[dict[str, Any]]:
    return list(records(root)) if (root / JOURNAL_FILE).exists() else []


def parsed(content: bytes) -> EmailMessage:
    msg = message_from_bytes(content, policy=policy.default)
    assert isinstance(msg, EmailMessage)
    return msg


def reply(sender: str, attachments: list[tuple[str, bytes]], subject: str = "my workbook",
          when: Any = None) -> bytes:
    """A rater's reply as a mail program sends it, with ``attachments`` (name, bytes)."""
    import datetime as dt

    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = sender
    msg["To"] = SENDER
    msg["Subject"] = subject
    msg["Date"] = format_datetime(when or dt.datetime(2026, 9, 15, 9, 30, tzinfo=dt.UTC))
    msg["Message-ID"] = make_msgid(domain="example.org")
    msg.set_content("Here it is.\n")
    for name, data in attachments:
        if name.endswith(".xlsx"):
            msg.add_attachment(data, maintype=XLSX_TYPE[0], subtype=XLSX_TYPE[1],
                               filename=name)
        else:
            msg.add_attachment(data, maintype="application", subtype="octet-stream",
                               filename=name)
    return msg.as_bytes()
