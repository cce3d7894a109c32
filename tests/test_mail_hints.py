"""What ``send`` and ``fetch`` tell the coordinator to run next is the whole command,
as they typed it (the study folder, the kind, the server options), never a password:
against a real SMTP server (aiosmtpd) and a real IMAP server (Dovecot) on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from mail_helpers import journal, mail_study, packs, reply, run
from mail_servers import cutting_proxy, dovecot_server, smtp_server
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect import imap_source
from sheetflow.spec.mail import IMAP_PASSWORD_ENV
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

FROM = "Study Desk <desk@example.org>"


def _plain(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]


def _damage(root: Path) -> None:
    """A line of mail.jsonl that is no record (a bad edit)."""
    with (root / "mail.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"event": "sent", "message_id"\n')


def test_a_refused_send_names_the_whole_command_to_run_again(tmp_path):
    """A changed pack or a damaged mail.jsonl stopped send with "then send again":
    which send, of which study, through which server? Now the line ends with the
    command as given (its kind, --smtp, --from, --rater), a value a shell would split
    in quotes, and no password."""
    root = mail_study(tmp_path / "my study")
    pack = root / L.PACKS_DIR / packs(root)[0]["file"]
    original = pack.read_bytes()
    folder = f'"{root}"'
    ahead = f"{dt.datetime.now(dt.UTC) + dt.timedelta(days=2):%Y-%m-%d %H:%M}"
    secret = {"SHEETFLOW_SMTP_PASSWORD": "s3cret-pass"}
    with smtp_server() as (port, server):
        pack.write_bytes(original + b"\0")
        invitations = run("send", str(root), "--yes", "--from", FROM, "--rater", "EV-01",
                          *_plain(port), env=secret)
        assert invitations.exit_code == 3, invitations.output
        (line,) = invitations.stderr.splitlines()
        assert line.endswith(
            f"then run 'sheetflow send {folder} invitations --rater EV-01 --smtp "
            f'127.0.0.1:{port} --smtp-security none --from "{FROM}"\' again')
        reminders = run("send", str(root), "reminders", "--dry-run", "--now", ahead,
                        "--min-days", "0", *_plain(port), env=secret)
        assert reminders.exit_code == 3, reminders.output
        assert reminders.stderr.rstrip().endswith(
            f"then run 'sheetflow send {folder} reminders --dry-run --now \"{ahead}\" "
            f"--min-days 0 --smtp 127.0.0.1:{port} --smtp-security none' again")
        pack.write_bytes(original)
        _damage(root)
        damaged = run("send", str(root), "replies", *_plain(port), env=secret)
        assert damaged.exit_code == 3, damaged.output
        assert damaged.stderr.rstrip().endswith(
            f"then run 'sheetflow send {folder} replies --smtp 127.0.0.1:{port} "
            "--smtp-security none' again")
        assert not server.delivered
        for result in (invitations, reminders, damaged):
            assert "s3cret-pass" not in result.output


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_refused_recipient_and_a_missing_login_name_the_command(tmp_path):
    """"then send again" after a recipient the server refused, and "and send again"
    after a server that requires a login: now the command that sends what did not go
    (without --resend, which would send again what went)."""
    root = mail_study(tmp_path / "s")
    refused = load_study(root).raters[1].email
    with smtp_server() as (port, server):
        server.refuse.add(refused)
        sent = run("send", str(root), "invitations", "--yes", "--resend", *_plain(port))
        assert sent.exit_code == 1, sent.output
        assert (f"then run 'sheetflow send {root} invitations --smtp 127.0.0.1:{port} "
                "--smtp-security none' again") in sent.stderr
    root = mail_study(tmp_path / "t")
    with smtp_server(login=("desk@example.org", "goodpass")) as (port, server):
        stopped = run("send", str(root), "--yes", *_plain(port),
                      env={"SHEETFLOW_SMTP_PASSWORD": None})
        assert stopped.exit_code == 3, stopped.output
        assert stopped.stderr.rstrip().endswith(
            "most providers need an app password) and run 'sheetflow send "
            f"{root} invitations --smtp 127.0.0.1:{port} --smtp-security none' again")


def test_a_broken_connection_names_the_command_that_sends_the_rest(tmp_path):
    """"run the same command again to send the rest": the same command with --resend
    sends again what went before the break. Now the command, without --resend."""
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        first = run("send", str(root), "--dry-run", "--rater", "EV-01", "--json",
                    *_plain(port))
        cut_after = json.loads(first.stdout)["messages"][0]["size"] + 2000
        with cutting_proxy(port, cut_after) as proxy:
            result = run("send", str(root), "--yes", "--resend", *_plain(proxy))
        assert result.exit_code == 3, result.output
        assert len(server.delivered) == 1  # the second message was cut off
        assert result.stderr.rstrip().endswith(
            f"1 message was sent; run 'sheetflow send {root} invitations --smtp "
            f"127.0.0.1:{proxy} --smtp-security none' again to send the rest")


@pytest.fixture
def dovecot(monkeypatch):
    monkeypatch.setattr(imap_source, "LOGIN_TRIES", 8)  # a loaded machine's Dovecot is slow
    with dovecot_server() as server:
        yield server


def test_a_damaged_journal_stops_fetch_naming_the_whole_command(tmp_path, dovecot):
    """fetch stopped with "then fetch again": from which study, which server? Now the
    command as given, the IMAP options with it, never the password."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    filled = tmp_path / pack["file"]
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], filled, plan_answers(pack))
    email = next(r.email for r in load_study(root).raters if r.id == pack["rater_id"])
    dovecot.append(reply(email, [(pack["file"], filled.read_bytes())]))
    imap = ["--imap", f"127.0.0.1:{dovecot.port}", "--imap-security", "none",
            "--username", dovecot.user]
    env = {IMAP_PASSWORD_ENV: dovecot.password}
    assert run("fetch", str(root), *imap, env=env).exit_code == 0
    _damage(root)
    before = journal(root)
    stopped = run("fetch", str(root), *imap, env=env)
    assert stopped.exit_code == 3, stopped.output
    assert stopped.stderr.rstrip().endswith(
        f"then run 'sheetflow fetch {root} --imap 127.0.0.1:{dovecot.port} "
        f"--imap-security none --username {dovecot.user}' again")
    assert dovecot.password not in stopped.output
    message = tmp_path / "reply.eml"
    message.write_bytes(reply(email, [(pack["file"], filled.read_bytes())]))
    saved = run("fetch", str(root), str(message))
    assert saved.exit_code == 3
    assert saved.stderr.rstrip().endswith(f"then run 'sheetflow fetch {root} {message}' "
                                          "again")
    assert journal(root) == before  # nothing fetched
