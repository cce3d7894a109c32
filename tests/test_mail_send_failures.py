"""``sheetflow send`` when the line or the server fails, against a real SMTP server
(aiosmtpd) on 127.0.0.1: a connection cut during or after a message, a server that is
down, a login or TLS it needs or refuses. Each stops with one line and exit 3; no
message goes twice and no password is written anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from mail_helpers import journal, mail_study, run, run_json
from mail_servers import (
    Recorder,
    cutting_proxy,
    free_port,
    make_certificate,
    server_context,
    smtp_server,
)

from sheetflow.packs import send as send_module
from sheetflow.packs.send import needs_login
from sheetflow.spec.study import load_study


def _plain(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]


def test_a_message_taken_whole_then_cut_off_is_unconfirmed_and_not_sent_twice(tmp_path):
    """The server keeps a rater's invitation, then the connection drops before its 250
    reaches sheetflow: journalled "failed", a plain rerun sent it a second time. It may
    have arrived, so it is held back as unconfirmed; the rest go on the rerun."""
    root = mail_study(tmp_path / "s")
    cut = load_study(root).raters[1].email
    with smtp_server() as (port, server):
        server.drop_after.add(cut)
        result = run("send", str(root), "--yes", *_plain(port))
        assert result.exit_code == 3, result.output
        # who got theirs before the break, and who was not tried, above the error line
        first, _, last = (r.email for r in load_study(root).raters)
        assert result.stdout.splitlines()[0].startswith(f"sent       {first} (")
        assert result.stdout.splitlines()[1].startswith(f"not tried  {last} (")
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: the connection to the mail server broke after the "
                               f"whole message to {cut} was written and before the server "
                               "confirmed it (")
        assert "it may or may not have arrived" in line and "took" not in line
        assert "held as unconfirmed and not sent again without --resend" in line
        records = journal(root)
        mid = next(r["message_id"] for r in records
                   if r["event"] == "sending" and r["to"] == cut)
        assert [r["event"] for r in records if r["message_id"] == mid] == ["sending"]
        server.drop_after.clear()
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert [d.rcpt_tos for d in server.delivered].count([cut]) == 1
        assert len(server.delivered) == 3  # each rater's invitation once
        dry = run("send", str(root), "--dry-run", *_plain(port))
        assert f"unconfirmed: sending {mid} was begun" in dry.output
        again = run("send", str(root), "--yes", "--resend", *_plain(port))
        assert again.exit_code == 0 and [d.rcpt_tos for d in server.delivered].count([cut]) == 2


def test_a_line_cut_in_the_middle_of_a_message_is_not_sent_and_goes_on_the_rerun(tmp_path):
    """The line drops partway through the second invitation: the server never had its
    closing ".", so it cannot have taken it. It was held back as "unconfirmed" (the
    data had only reached this machine's buffer) and never sent; it is journalled
    failed, said so, and the rerun sends it, each rater's invitation once."""
    root = mail_study(tmp_path / "s")
    first, second, third = (r.email for r in load_study(root).raters)
    with smtp_server() as (port, server):
        _, dry = run_json("send", str(root), "--dry-run", "--rater", "EV-01", *_plain(port))
        cut_after = dry["messages"][0]["size"] + 2000  # into the second message's data
        with cutting_proxy(port, cut_after) as proxy:
            result = run("send", str(root), "--yes", *_plain(proxy))
        assert result.exit_code == 3, result.output
        assert [d.rcpt_tos for d in server.delivered] == [[first]]  # the second never came
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: the mail server broke off before it had the whole "
                               f"message to {second} (")
        assert "it was not delivered, and the next run sends it" in line
        assert "unconfirmed" not in line
        mid = next(r["message_id"] for r in journal(root)
                   if r["event"] == "sending" and r["to"] == second)
        assert [r["event"] for r in journal(root) if r["message_id"] == mid] == [
            "sending", "failed"]
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert sorted(d.rcpt_tos[0] for d in server.delivered) == sorted(
            [first, second, third])  # each once: the first is not sent again


def test_a_server_that_is_down_exits_3_with_one_line_and_journals_nothing(tmp_path):
    root = mail_study(tmp_path / "s")
    result = run("send", str(root), "--yes", *_plain(free_port()))
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the SMTP server 127.0.0.1:")
    assert "cannot connect" in lines[0] and "Traceback" not in result.output
    assert not [r for r in journal(root) if r["event"] == "sent"]


def test_starttls_and_auth_and_the_password_is_written_nowhere(tmp_path):
    cert, key = make_certificate(tmp_path)
    root = mail_study(tmp_path / "s", mail='username = "desk"\n')
    password = "pw-Zq8-never-stored"
    env = {"SHEETFLOW_SMTP_PASSWORD": password, "SSL_CERT_FILE": str(cert)}
    with smtp_server(tls=server_context(cert, key), login=("desk", password)) as (port,
                                                                                server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "starttls"]
        result = run("send", str(root), "--yes", *smtp, env=env)
        assert result.exit_code == 0, result.output
        assert len(server.delivered) == 3
        wrong = run("send", str(root), "--yes", "--resend", *smtp,
                    env={**env, "SHEETFLOW_SMTP_PASSWORD": "wrong"})
        assert wrong.exit_code == 3
        assert len(wrong.stderr.strip().splitlines()) == 1
        assert "refused the login of 'desk' (535" in wrong.stderr
        assert "SHEETFLOW_SMTP_PASSWORD" in wrong.stderr
        untrusted = run("send", str(root), "--yes", "--resend", *smtp,
                        env={"SHEETFLOW_SMTP_PASSWORD": password})
        assert untrusted.exit_code == 3 and "TLS handshake failed" in untrusted.stderr
    everything = result.output + wrong.output + untrusted.output
    for path in root.rglob("*"):
        if path.is_file():
            everything += path.read_bytes().decode("latin-1")
    assert password not in everything and len(journal(root)) == 6


def _send_to_a_busy_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy: int,
                          ) -> tuple[Path, Result, int, Recorder]:
    """Send with the right password to a server whose first ``busy`` authentication
    attempts answer 454 (no pause between tries); the study, the result, the port and
    the server's record."""
    monkeypatch.setattr(send_module, "LOGIN_PAUSE", 0.0)
    root = mail_study(tmp_path / "s", mail='username = "desk"\n')
    with smtp_server(login=("desk", "goodpass"), busy=busy) as (port, server):
        result = run("send", str(root), "--yes", *_plain(port),
                     env={"SHEETFLOW_SMTP_PASSWORD": "goodpass"})
    return root, result, port, server


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_login_the_server_cannot_check_for_now_is_tried_again(tmp_path, monkeypatch):
    # smtplib tries PLAIN then LOGIN in one login: two busy answers fail the first login
    _, result, _, server = _send_to_a_busy_login(tmp_path, monkeypatch, busy=2)
    assert result.exit_code == 0, result.output
    assert len(server.delivered) == 3


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_login_still_unavailable_is_not_called_a_wrong_password(tmp_path, monkeypatch):
    root, result, port, server = _send_to_a_busy_login(tmp_path, monkeypatch, busy=99)
    assert result.exit_code == 3 and not server.delivered
    (line,) = result.stderr.strip().splitlines()
    assert line == (f"error: the SMTP server 127.0.0.1:{port} could not check the login of "
                    "'desk' for now (454 4.7.0 Temporary authentication failure, 3 tries): "
                    "a failure on the server's side, not the password; nothing was sent, "
                    "try again in a few minutes")
    assert not [r for r in journal(root) if r["event"] == "sent"]


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_a_server_that_requires_a_login_without_a_password_stops_once_with_exit_3(
        tmp_path):
    """No SHEETFLOW_SMTP_PASSWORD for a server that requires AUTH: each rater was
    reported refused with "530 Authentication required" and advice to fix the address
    (exit 1, a refused record each). It is one login problem: one line, exit 3."""
    root = mail_study(tmp_path / "s")
    with smtp_server(login=("desk@example.org", "goodpass")) as (port, server):
        result, doc = run_json("send", str(root), "--yes", *_plain(port),
                               env={"SHEETFLOW_SMTP_PASSWORD": None})
        assert result.exit_code == 3, result.output
        (line,) = result.stderr.strip().splitlines()
        assert line == (f"error: the SMTP server 127.0.0.1:{port} requires a login (530 "
                        "5.7.0 Authentication required) and no SHEETFLOW_SMTP_PASSWORD was "
                        "given: set it to the password of 'desk@example.org' ([mail] "
                        "username; most providers need an app password) and run 'sheetflow "
                        f"send {root} invitations --smtp 127.0.0.1:{port} --smtp-security "
                        "none' again")
        assert "refused" not in result.output and not server.delivered
        assert doc["ok"] is False
        assert not [r for r in journal(root) if r["event"] == "refused"]
        assert len([r for r in journal(root) if r["event"] == "sending"]) == 1  # stopped
        rerun = run("send", str(root), "--yes", *_plain(port),
                    env={"SHEETFLOW_SMTP_PASSWORD": "goodpass"})
        assert rerun.exit_code == 0, rerun.output
        assert len(server.delivered) == 3  # the one that stopped it was not held back


def test_a_server_that_requires_tls_is_said_to_require_it_not_a_password(tmp_path):
    """--smtp-security none to a server that takes mail only after STARTTLS ("530 Must
    issue a STARTTLS command first") was told to set SHEETFLOW_SMTP_PASSWORD, which
    would not help; with the password set, that AUTH was not supported and to set
    smtp_security to ssl or none (it was none). Each now says the server requires TLS
    and gives the command with STARTTLS, which then sends."""
    cert, key = make_certificate(tmp_path)
    root = mail_study(tmp_path / "s", mail='username = "desk"\n')
    with smtp_server(tls=server_context(cert, key)) as (port, server):
        result = run("send", str(root), "--yes", *_plain(port),
                     env={"SHEETFLOW_SMTP_PASSWORD": None})
        assert result.exit_code == 3, result.output
        (line,) = result.stderr.strip().splitlines()
        tls = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "starttls"]
        assert line == (f"error: the SMTP server 127.0.0.1:{port} requires TLS (530 Must "
                        "issue a STARTTLS command first): use --smtp-security starttls (or "
                        "[mail] smtp_security = \"starttls\") and run 'sheetflow send "
                        f"{root} invitations {' '.join(tls)}'")
        assert not [r for r in journal(root) if r["event"] == "refused"]
        assert not server.delivered
        rerun = run("send", str(root), "--yes", *tls, env={"SSL_CERT_FILE": str(cert)})
        assert rerun.exit_code == 0, rerun.output
        assert len(server.delivered) == 3
    with smtp_server(tls=server_context(cert, key), login=("desk", "pw")) as (port, _):
        result = run("send", str(root), "--yes", "--resend", *_plain(port),
                     env={"SHEETFLOW_SMTP_PASSWORD": "pw"})
        assert result.exit_code == 3, result.output
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: the SMTP server 127.0.0.1:{port} requires TLS (it "
                               "offers no login before STARTTLS): use --smtp-security "
                               "starttls"), line
        assert line.endswith("--smtp-security starttls'"), line


def test_a_refusal_saying_authentication_is_required_is_a_login_problem():
    assert needs_login(530, "5.7.0 Authentication required")
    assert needs_login(550, "5.7.1 Relaying denied. Authentication required")
    assert needs_login(554, "5.7.1 <x@example.org>: Authentication Required")
    assert not needs_login(550, "5.1.1 no such user here")
    assert not needs_login(451, "4.7.1 authentication required, try later")


def test_ssl_against_a_plain_server_and_an_unknown_host_are_one_line(tmp_path):
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        tls = run("send", str(root), "--yes", "--smtp", f"127.0.0.1:{port}",
                  "--smtp-security", "ssl")
        assert tls.exit_code == 3 and "TLS handshake failed" in tls.stderr
        assert len(tls.stderr.strip().splitlines()) == 1 and not server.delivered
    unknown = run("send", str(root), "--yes", "--smtp", "no-such-host.invalid:25")
    assert unknown.exit_code == 3 and "unknown host" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    assert not journal(root)


def test_a_line_cut_under_json_names_who_got_theirs(tmp_path):
    """The line drops in the middle of the second of three invitations under --json:
    the document held only the error line, so a script could not tell that the first
    rater got theirs and the third was never tried (the screen names both)."""
    root = mail_study(tmp_path / "s")
    second = load_study(root).raters[1].email
    with smtp_server() as (port, _):
        _, dry = run_json("send", str(root), "--dry-run", "--rater", "EV-01", *_plain(port))
        with cutting_proxy(port, dry["messages"][0]["size"] + 2000) as proxy:
            result, doc = run_json("send", str(root), "--yes", *_plain(proxy))
    assert result.exit_code == 3 and doc["exit_code"] == 3 and not doc["ok"], result.output
    assert doc["errors"][0].startswith("the mail server broke off before it had the whole "
                                       f"message to {second} (")
    assert [m["rater"] for m in doc["sent"]] == ["EV-01"]
    assert [m["rater"] for m in doc["failed"]] == ["EV-02"]
    assert [m["rater"] for m in doc["not_tried"]] == ["EV-03"]
    assert doc["unconfirmed"] == doc["refused"] == doc["not_sent"] == []
    assert [m["rater"] for m in doc["messages"]] == ["EV-01", "EV-02", "EV-03"]
