"""Ctrl-C during ``sheetflow send``, against a real SMTP server (aiosmtpd) on 127.0.0.1.

A real SIGINT is sent to this process by the server's handler while the client waits
for its answer (to a recipient, or to a message's data); where the moment cannot be hit
by a signal (after the server's answer was read, or in the middle of writing a message),
KeyboardInterrupt is raised from smtplib's own method, as Python raises it there. Each
run exits 130 with the interrupted line, names what became of every message, and
journals each one as what it is: the rerun sends exactly what did not arrive. A bad
answer to QUIT, once every message has its outcome, is no error either.
"""

from __future__ import annotations

import asyncio
import json
import signal
import smtplib
import threading
from pathlib import Path
from typing import Any

from mail_helpers import journal, mail_study, run
from mail_servers import Recorder, smtp_server

from sheetflow.spec.study import load_study

EXIT_INTERRUPTED = 130


def _plain(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]


def _ctrl_c_at(recorder: Recorder, stage: str, address: str) -> None:
    """Make the server send SIGINT (Ctrl-C) to the client's thread when it gets ``stage``
    (``RCPT`` or ``DATA``) for ``address``, and answer only a moment later (what it
    was given kept), so the
    interrupt finds the client waiting for that answer."""
    handle = getattr(recorder, f"handle_{stage}")

    async def interrupting(server: Any, session: Any, envelope: Any, *args: Any) -> str:
        wanted = args[0] if stage == "RCPT" else (envelope.rcpt_tos or [""])[0]
        answer = str(await handle(server, session, envelope, *args))  # kept, as queued
        if wanted == address:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
            await asyncio.sleep(0.5)
        return answer

    setattr(recorder, f"handle_{stage}", interrupting)


def _events(root: Path, to: str) -> list[str]:
    """The journal's events of the (one) message sent to ``to``."""
    records = journal(root)
    mids = {r["message_id"] for r in records if r["event"] == "sending" and r["to"] == to}
    assert len(mids) == 1, mids
    return [r["event"] for r in records if r["message_id"] in mids]


def _lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


def test_ctrl_c_while_the_server_answers_a_messages_data_is_unconfirmed_exit_130(tmp_path):
    """Ctrl-C while the third invitation's answer is awaited: smtplib's QUIT read that
    pending 250 and its error replaced the interrupt (exit 3, no line about the two
    that went). The interrupt stays (exit 130), the two are named sent and the third
    unconfirmed: its "." had gone, so it may have arrived and is not sent again."""
    root = mail_study(tmp_path / "s")
    first, second, third = (r.email for r in load_study(root).raters)
    with smtp_server() as (port, server):
        _ctrl_c_at(server, "DATA", third)
        result = run("send", str(root), "--yes", *_plain(port))
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        assert result.stderr.strip().splitlines()[-1] == (
            "interrupted (Ctrl-C) after the last message (2 sent, 1 unconfirmed): nothing "
            "else is left to send")
        assert "error" not in result.stderr
        assert [line.split()[1] for line in _lines(result.stdout, "sent ")] == [first, second]
        (held,) = _lines(result.stdout, "unconfirmed ")
        assert held.startswith(f"unconfirmed {third} (EV-03, sitting 1): interrupted (Ctrl-C) "
                               "after the whole message was written and before the mail "
                               "server confirmed it: it may or may not have arrived")
        assert _events(root, third) == ["sending"]  # unconfirmed: no outcome
        assert len(server.delivered) == 3  # it did arrive: never sent twice unasked
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert len(server.delivered) == 3


def test_ctrl_c_while_a_recipient_is_answered_is_not_sent_and_goes_on_the_rerun(tmp_path):
    """Ctrl-C while the server answers the third invitation's RCPT: it was journalled
    "sending" with no outcome, held as unconfirmed, and the rater never mailed without
    --resend. Its data never went, so it cannot have arrived: journalled failed, named
    not sent, and the rerun sends it, once."""
    root = mail_study(tmp_path / "s")
    first, second, third = (r.email for r in load_study(root).raters)
    with smtp_server() as (port, server):
        _ctrl_c_at(server, "RCPT", third)
        result = run("send", str(root), "--yes", *_plain(port))
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        again = f"sheetflow send {root} invitations {' '.join(_plain(port))}"
        assert result.stderr.strip().splitlines()[-1] == (
            f"interrupted (Ctrl-C) before the end (2 sent, 1 not sent): run '{again}' again "
            "to send the rest")
        assert [line.split()[1] for line in _lines(result.stdout, "sent ")] == [first, second]
        (dropped,) = _lines(result.stdout, "not sent ")
        assert dropped.startswith(f"not sent   {third} (EV-03, sitting 1): interrupted "
                                  "(Ctrl-C) before the mail server had the whole message")
        assert [d.rcpt_tos for d in server.delivered] == [[first], [second]]
        assert _events(root, third) == ["sending", "failed"]
        server.handle_RCPT = Recorder.handle_RCPT.__get__(server)  # no more Ctrl-C
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert [d.rcpt_tos for d in server.delivered] == [[first], [second], [third]]
        reminders = run("remind", str(root))
        assert "unconfirmed" not in reminders.output


def test_ctrl_c_while_a_message_is_written_is_not_sent(tmp_path, monkeypatch):
    """Ctrl-C while the second invitation's body is being written, before its closing
    ".": the server cannot have taken it, so it is journalled failed and the rerun
    sends it; the one before is named sent, the one after not tried."""
    root = mail_study(tmp_path / "s")
    first, second, third = (r.email for r in load_study(root).raters)
    original = smtplib.SMTP.send
    bodies: list[bytes] = []

    def send(self: smtplib.SMTP, s: Any) -> None:
        if isinstance(s, bytes) and len(s) > 1000:  # a message's data, not a command
            bodies.append(s)
            if len(bodies) == 2:
                raise KeyboardInterrupt
        original(self, s)

    with smtp_server() as (port, server):
        monkeypatch.setattr(smtplib.SMTP, "send", send)
        result = run("send", str(root), "--yes", *_plain(port))
        monkeypatch.undo()
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        assert _lines(result.stdout, "sent ")[0].split()[1] == first
        assert _lines(result.stdout, "not sent ")[0].split()[2] == second
        assert _lines(result.stdout, "not tried ")[0].split()[2] == third
        assert _events(root, second) == ["sending", "failed"]
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert [d.rcpt_tos for d in server.delivered] == [[first], [second], [third]]


def test_ctrl_c_just_after_the_server_accepted_a_message_journals_it_sent(tmp_path,
                                                                          monkeypatch):
    """Ctrl-C lands right after the first invitation's 250 was read: it was left
    journalled "sending" only (unconfirmed) and no line said it went. It is journalled
    and named sent, the others not tried, and the rerun sends just those."""
    root = mail_study(tmp_path / "s")
    first, second, third = (r.email for r in load_study(root).raters)
    original = smtplib.SMTP.data

    def data(self: smtplib.SMTP, msg: Any) -> Any:
        original(self, msg)
        raise KeyboardInterrupt

    with smtp_server() as (port, server):
        monkeypatch.setattr(smtplib.SMTP, "data", data)
        result = run("send", str(root), "--yes", *_plain(port))
        monkeypatch.undo()
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        (sent,) = _lines(result.stdout, "sent ")
        assert sent.startswith(f"sent       {first} (EV-01, sitting 1): 250 ")
        assert [line.split()[2] for line in _lines(result.stdout, "not tried ")] == [
            second, third]
        assert _events(root, first) == ["sending", "sent"]
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert [d.rcpt_tos for d in server.delivered] == [[first], [second], [third]]


def test_ctrl_c_while_connecting_names_every_message_not_tried(tmp_path, monkeypatch):
    """Ctrl-C before the connection is open: nothing went and nothing is journalled;
    each message is named not tried, with the command that sends them."""
    root = mail_study(tmp_path / "s")
    emails = [r.email for r in load_study(root).raters]

    def connect(self: smtplib.SMTP, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with smtp_server() as (port, server):
        monkeypatch.setattr(smtplib.SMTP, "connect", connect)
        result = run("send", str(root), "--yes", *_plain(port))
        monkeypatch.undo()
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        assert [line.split()[2] for line in _lines(result.stdout, "not tried ")] == emails
        assert result.stderr.strip().splitlines()[-1].startswith(
            "interrupted (Ctrl-C) before the end (0 sent, 3 not tried): run 'sheetflow send ")
        assert journal(root) == [] and server.delivered == []


def test_ctrl_c_as_the_closing_dot_is_written_is_unconfirmed(tmp_path, monkeypatch):
    """Ctrl-C raised as the write that ends the first invitation (its "." line) returns,
    as Python raises it once a write is done: the server may have the whole message, so
    it is unconfirmed (no outcome journalled) and the rerun does not send it again."""
    root = mail_study(tmp_path / "s")
    first = load_study(root).raters[0].email
    original = smtplib.SMTP.send

    def send(self: smtplib.SMTP, s: Any) -> None:
        original(self, s)
        if isinstance(s, bytes) and s.endswith(b".\r\n") and (len(s) > 1000 or s == b".\r\n"):
            raise KeyboardInterrupt  # the "." is out: written with the body or apart

    with smtp_server() as (port, server):
        monkeypatch.setattr(smtplib.SMTP, "send", send)
        result = run("send", str(root), "--yes", *_plain(port))
        monkeypatch.undo()
        assert result.exit_code == EXIT_INTERRUPTED, result.output
        (held,) = _lines(result.stdout, "unconfirmed ")
        assert held.startswith(f"unconfirmed {first} (EV-01, sitting 1): ")
        assert _events(root, first) == ["sending"]
        rerun = run("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0, rerun.output
        assert [d.rcpt_tos for d in server.delivered].count([first]) <= 1


def test_a_bad_answer_to_quit_after_every_message_went_is_no_error(tmp_path):
    """Every invitation was accepted, then the server answered QUIT with an error:
    that error stopped the send with exit 3 and no line about the three that went.
    What was sent stands: each is named sent, exit 0."""
    root = mail_study(tmp_path / "s")
    emails = [r.email for r in load_study(root).raters]
    with smtp_server() as (port, server):
        async def handle_QUIT(server: Any, session: Any, envelope: Any) -> str:
            return "500 5.5.1 not now"

        server.handle_QUIT = handle_QUIT  # type: ignore[attr-defined]
        result = run("send", str(root), "--yes", *_plain(port))
        assert result.exit_code == 0, result.output
        assert [line.split()[1] for line in _lines(result.stdout, "sent ")] == emails
        assert [d.rcpt_tos for d in server.delivered] == [[e] for e in emails]


def test_ctrl_c_under_json_names_who_got_theirs(tmp_path):
    """Ctrl-C while the second of three invitations is answered, under --json: the
    document held only the interrupted line; it names each message as the screen does
    (sent, unconfirmed, not tried)."""
    root = mail_study(tmp_path / "s")
    second = load_study(root).raters[1].email  # its DATA is answered after Ctrl-C
    with smtp_server() as (port, server):
        _ctrl_c_at(server, "DATA", second)
        result = run("send", str(root), "--yes", *_plain(port), "--json")
    assert result.exit_code == EXIT_INTERRUPTED, result.output
    doc = json.loads(result.stdout)
    assert doc["exit_code"] == EXIT_INTERRUPTED and not doc["ok"]
    assert doc["errors"][0].startswith("interrupted (Ctrl-C) before the end (1 sent, 1 "
                                       "unconfirmed, 1 not tried)")
    assert [m["rater"] for m in doc["sent"]] == ["EV-01"]
    assert [m["rater"] for m in doc["unconfirmed"]] == ["EV-02"]
    assert [m["rater"] for m in doc["not_tried"]] == ["EV-03"]
    assert doc["failed"] == doc["refused"] == []


def test_ctrl_c_under_json_keeps_the_warnings_printed_before_it(tmp_path):
    """The warnings printed before Ctrl-C (the deadline passed) were on stderr but not
    in the interrupted --json document, which every other document repeats them in."""
    root = mail_study(tmp_path / "s", mail='deadline = "2020-01-01"\n')
    second = load_study(root).raters[1].email
    with smtp_server() as (port, server):
        _ctrl_c_at(server, "DATA", second)
        result = run("send", str(root), "--yes", *_plain(port), "--json")
    assert result.exit_code == EXIT_INTERRUPTED, result.output
    doc = json.loads(result.stdout)
    assert doc["errors"][0].startswith("interrupted (Ctrl-C)")
    printed = [line.removeprefix("warning: ") for line in _lines(result.stderr, "warning: ")]
    assert printed and doc["warnings"] == printed
    assert any("2020-01-01" in w for w in doc["warnings"])
