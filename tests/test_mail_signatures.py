"""What a message's text is signed with agrees with where it comes from: ``send``
against a real SMTP server (aiosmtpd) on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from mail_helpers import SENDER, journal, mail_study, packs, parsed, run
from mail_servers import smtp_server
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.workbook import layout as L

NEW_SENDER = "New Desk <new@example.org>"


def _plain(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]


def _body(content: bytes) -> str:
    return parsed(content).get_body(("plain",)).get_content().replace("\r\n", "\n")


def _with_reply_draft(tmp_path: Path) -> Path:
    """A mail study whose first rater returned a file with one answer that is no score,
    collected: a reply draft to them waits in out/feedback/, signed with SENDER."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    bad = plan_answers(pack)
    bad[next(iter(bad))] = ("not a score", "text")
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / "bad.xlsx", bad)
    assert run("collect", str(root)).exit_code == 1
    (draft,) = (root / "out" / "feedback").iterdir()
    assert _body(draft.read_bytes()).rstrip().endswith("Study Desk\ndesk@example.org")
    return root


def _sign_as(root: Path, sender: str) -> None:
    spec = root / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace(
        f'from = "{SENDER}"', f'from = "{sender}"'), encoding="utf-8")


def test_reply_drafts_signed_before_mail_from_changed_are_refused(tmp_path):
    """collect signs its reply drafts with [mail] from as it is then; changed after,
    send replies sent the old signature from the new address: the rater read one
    address and their reply went to another."""
    root = _with_reply_draft(tmp_path)
    _sign_as(root, NEW_SENDER)
    draft = f"out/feedback/{packs(root)[0]['rater_id']}.eml"
    with smtp_server() as (port, server):
        for extra in (["--yes"], ["--dry-run"]):
            refused = run("send", str(root), "replies", *extra, *_plain(port))
            assert refused.exit_code == 2, refused.output
            assert refused.stderr.splitlines() == [
                f"error: {draft}: the reply draft, signed as the [mail] table of study.toml "
                "said when collect wrote it, asks for the workbook back at "
                "desk@example.org, but the reply would go to new@example.org; nothing was "
                f"sent; run 'sheetflow collect {root}' again to sign it as it says now"]
        assert not server.delivered and journal(root) == []  # nothing sent or recorded
        assert run("collect", str(root)).exit_code == 1  # signs the draft again
        sent = run("send", str(root), "replies", "--yes", *_plain(port))
        assert sent.exit_code == 0, sent.output
        (delivery,) = server.delivered
        assert delivery.mail_from == "new@example.org"
        assert _body(delivery.content).rstrip().endswith("New Desk\nnew@example.org")


def test_a_reply_draft_signed_with_another_name_is_refused(tmp_path):
    """The same address under another name: the draft is signed by someone else than
    the sender the rater sees."""
    root = _with_reply_draft(tmp_path)
    _sign_as(root, "Other Name <desk@example.org>")
    with smtp_server() as (port, server):
        refused = run("send", str(root), "replies", "--yes", *_plain(port))
        assert refused.exit_code == 2, refused.output
        (line,) = refused.stderr.splitlines()
        assert ("is signed 'Study Desk', but the message would come from 'Other Name'"
                in line)
        assert not server.delivered


def test_invitations_and_reminders_are_signed_as_mail_says_when_they_go(tmp_path):
    """Invitations and reminders are composed when send runs (not taken from the drafts
    generate or remind wrote before [mail] changed): the text names the address the
    message comes from."""
    root = mail_study(tmp_path / "s")
    assert run("remind", str(root)).exit_code == 0  # drafts signed with the old address
    _sign_as(root, NEW_SENDER)
    ahead = f"{dt.datetime.now(dt.UTC) + dt.timedelta(days=2):%Y-%m-%d %H:%M}"
    with smtp_server() as (port, server):
        invited = run("send", str(root), "invitations", "--yes", *_plain(port))
        assert invited.exit_code == 0, invited.output
        reminded = run("send", str(root), "reminders", "--yes", "--now", ahead,
                       "--min-days", "0", *_plain(port))
        assert reminded.exit_code == 0, reminded.output
        assert len(server.delivered) == 6
        for delivery in server.delivered:
            assert delivery.mail_from == "new@example.org"
            text = _body(delivery.content)
            assert text.rstrip().endswith("New Desk\nnew@example.org")
            assert "desk@example.org" not in text
