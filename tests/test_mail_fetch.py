"""``sheetflow fetch`` against a real IMAP server (Dovecot) on 127.0.0.1, and from files."""

from __future__ import annotations

import datetime as dt
import imaplib
import json
from email import policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from mail_helpers import journal, mail_study, packs, reply, run, run_json, sha256
from mail_servers import dovecot_server, free_port
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect import imap_source, inbox
from sheetflow.collect.inbox import safe_name
from sheetflow.collect.run import collect
from sheetflow.errors import MailError
from sheetflow.packs.journal import JOURNAL_FILE
from sheetflow.spec.mail import Server
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

PASSWORD_ENV = "SHEETFLOW_IMAP_PASSWORD"


def _filled(root: Path) -> dict[str, bytes]:
    """Rater id -> their pack filled in (what they mail back)."""
    out = {}
    for pack in packs(root):
        dst = root / "filled" / pack["file"]
        dst.parent.mkdir(exist_ok=True)
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, plan_answers(pack))
        out[pack["rater_id"]] = dst.read_bytes()
    return out


@pytest.fixture
def dovecot(monkeypatch):
    # a loaded machine's Dovecot has answered UNAVAILABLE for over 3 s: fetch's own
    # tries (3, over 3 s) are widened here so that a test waits it out (up to 28 s)
    monkeypatch.setattr(imap_source, "LOGIN_TRIES", 8)
    with dovecot_server() as server:
        yield server


def _imap(server) -> list[str]:
    return ["--imap", f"127.0.0.1:{server.port}", "--imap-security", "none", "--username",
            server.user]


def test_fetch_saves_the_returns_once_and_leaves_the_inbox_unread(tmp_path, dovecot):
    root = mail_study(tmp_path / "s")
    filled = _filled(root)
    raters = {r.id: r for r in load_study(root).raters}
    one, two, three = sorted(filled)
    names = {r: p["file"] for r in filled for p in packs(root) if p["rater_id"] == r}
    dovecot.append(reply("Someone Else <stranger@elsewhere.org>",
                         [(names[one], filled[one])]))
    dovecot.append(reply(raters[two].email, [(names[two], filled[two]),
                                             (names[three], filled[three])]))
    dovecot.append(reply(raters[three].email, [(names[three], filled[three])]))
    env = {PASSWORD_ENV: dovecot.password}

    result, doc = run_json("fetch", str(root), *_imap(dovecot), env=env)
    assert result.exit_code == 0, result.stderr
    assert doc["messages"] == 3
    saved = sorted(s["attachment"] for s in doc["saved"])
    assert saved == sorted([names[one], names[two], names[three]])
    assert [d["attachment"] for d in doc["duplicates"]] == [names[three]]
    returns = sorted((root / L.RETURNS_DIR).iterdir())
    assert len(returns) == 3
    assert {sha256(p.read_bytes()) for p in returns} == {sha256(b) for b in filled.values()}
    stranger_file = next(s["file"] for s in doc["saved"] if s["attachment"] == names[one])
    assert doc["unknown_senders"] == [{"sender": "stranger@elsewhere.org",
                                       "file": stranger_file}]
    received = [r for r in journal(root) if r["event"] == "received"]
    assert len(received) == 4 and all(r["message_id"] and r["sha256"] for r in received)

    again, doc = run_json("fetch", str(root), *_imap(dovecot), env=env)
    assert again.exit_code == 0 and doc["saved"] == [] and doc["fetched_before"] == 4
    assert len(list((root / L.RETURNS_DIR).iterdir())) == 3
    assert dovecot.unseen() == 3  # read with BODY.PEEK on a read-only folder

    result = collect(root)
    unknown = [i for i in result.report.issues if i.code == "sender-unknown"]
    assert [(i.file, i.rater) for i in unknown] == [(stranger_file, one)]
    assert "stranger@elsewhere.org" in unknown[0].message
    other = [i for i in result.report.issues if i.code == "sender-not-rater"]
    three_file = next(s["file"] for s in doc["saved"] + _saved(root) if
                      s["attachment"] == names[three])
    assert [(i.file, i.rater) for i in other] == [(three_file, three)]
    assert all(f.used for f in result.report.files)
    written = "".join(p.read_bytes().decode("latin-1") for p in root.rglob("*") if p.is_file())
    assert dovecot.password not in written + again.output  # never written anywhere


def _saved(root: Path) -> list[dict]:
    return [{"file": r["saved"].split("/", 1)[1], "attachment": r["attachment"]}
            for r in journal(root) if r["event"] == "received" and not r["duplicate"]]


def test_mark_seen_marks_them_read(tmp_path, dovecot):
    root = mail_study(tmp_path / "s")
    dovecot.append(reply("a@example.org", [("notes.txt", b"hello")]))
    later, doc = run_json("fetch", str(root), *_imap(dovecot), "--since", "2999-01-01",
                          env={PASSWORD_ENV: dovecot.password})
    assert later.exit_code == 0 and doc["messages"] == 0  # none arrived since then
    result, doc = run_json("fetch", str(root), *_imap(dovecot), "--mark-seen",
                           env={PASSWORD_ENV: dovecot.password})
    assert result.exit_code == 0 and doc["saved"] == []
    assert len(doc["listed"]) == 1 and "no spreadsheet attachment" in doc["listed"][0]
    assert "notes.txt" in doc["listed"][0]
    assert dovecot.unseen() == 0


def test_wrong_imap_password_and_unknown_host_are_one_line_exit_3(tmp_path, dovecot):
    root = mail_study(tmp_path / "s")
    wrong = run("fetch", str(root), *_imap(dovecot), env={PASSWORD_ENV: "nope"})
    assert wrong.exit_code == 3 and len(wrong.stderr.strip().splitlines()) == 1
    assert "refused the login of 'coord' (" in wrong.stderr
    assert "(b'" not in wrong.stderr  # the server's words, not the bytes' repr
    assert "SHEETFLOW_IMAP_PASSWORD" in wrong.stderr and "Traceback" not in wrong.output
    down = run("fetch", str(root), "--imap", f"127.0.0.1:{free_port()}", "--imap-security",
               "none", env={PASSWORD_ENV: "x"})
    assert down.exit_code == 3 and "cannot connect" in down.stderr
    unknown = run("fetch", str(root), "--imap", "no-such-host.invalid:993",
                  env={PASSWORD_ENV: "x"})
    assert unknown.exit_code == 3 and "unknown host" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    tls = run("fetch", str(root), "--imap", f"127.0.0.1:{dovecot.port}", "--imap-security",
              "ssl", env={PASSWORD_ENV: dovecot.password})
    assert tls.exit_code == 3 and "TLS handshake failed" in tls.stderr
    assert len(tls.stderr.strip().splitlines()) == 1
    assert dovecot.password not in wrong.output + tls.output
    assert not (root / L.RETURNS_DIR).exists() or not list((root / L.RETURNS_DIR).iterdir())


def test_hostile_messages_from_files_get_one_line_each(tmp_path):
    root = mail_study(tmp_path / "s")
    filled = _filled(root)
    first = next(iter(filled.values()))
    sender = load_study(root).raters[0].email
    traversal = tmp_path / "traversal.eml"
    traversal.write_bytes(reply(sender, [("../../x.xlsx", first)]))
    malformed = tmp_path / "malformed.eml"
    malformed.write_bytes(b"\x00\x01 this is not a message \xff\xfe")
    big = tmp_path / "big.eml"
    later = dt.datetime(2026, 9, 16, 9, 30, tzinfo=dt.UTC)  # after their pack came back
    big.write_bytes(reply(sender, [("huge.xlsx", b"\0" * (100 * 2**20))], when=later))
    result, doc = run_json("fetch", str(root), str(traversal), str(malformed), str(big))
    # big.eml is the rater's reply whose workbook could not be saved: exit 1 for it (a
    # reply after the pack came back stands: their pack coming back ends only the
    # replies before it)
    assert result.exit_code == 1 and [r["rater"] for r in doc["not_saved"]] == ["EV-01"]
    (saved,) = doc["saved"]
    assert saved["attachment"] == "../../x.xlsx" and saved["file"].endswith("-x.xlsx")
    assert (root / L.RETURNS_DIR / saved["file"]).read_bytes() == first
    assert not (tmp_path / "x.xlsx").exists() and not (root / "x.xlsx").exists()
    assert [p.name for p in (root / L.RETURNS_DIR).iterdir()] == [saved["file"]]
    listed = "\n".join(doc["listed"])
    assert "malformed.eml: not read (no mail headers" in listed
    assert (f"big.eml from {sender} ('my workbook'): skipped, the message is 136.8 MB (over "
            "the 64 MB limit); attachments: huge.xlsx (100.0 MB)") in listed
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: ") for line in lines)


def test_an_attachment_over_the_limit_is_named_with_its_size(tmp_path):
    root = mail_study(tmp_path / "s")
    path = tmp_path / "large.eml"
    path.write_bytes(reply("a@example.org", [("large.xlsx", b"\0" * (25 * 2**20))]))
    result, doc = run_json("fetch", str(root), str(path))
    assert result.exit_code == 0 and doc["saved"] == []
    assert doc["listed"] == [f"{path} from a@example.org ('my workbook'): attachment "
                             "large.xlsx skipped, it is 25.0 MB (over the 20 MB limit)"]


def test_messages_without_a_message_id_are_told_apart_and_counted_truly(tmp_path):
    """Two messages without Message-ID carrying one file (from ev01, then from ev02):
    the second read "fetched before" and its sender was never journalled. The same
    file twice in one message read "1 fetched before" for a duplicate."""
    root = mail_study(tmp_path / "s")
    first = next(iter(_filled(root).values()))
    one, two = (load_study(root).raters[i].email for i in (0, 1))
    paths = []
    for n, sender in enumerate((one, two)):
        data = reply(sender, [("pack.xlsx", first)], when=dt.datetime(
            2026, 9, 15, 9 + n, tzinfo=dt.UTC))
        data = b"".join(line for line in data.splitlines(keepends=True)
                        if not line.startswith(b"Message-ID:"))
        paths.append(tmp_path / f"m{n}.eml")
        paths[-1].write_bytes(data)
    def counts(doc: dict) -> tuple[int, int, int]:
        return len(doc["saved"]), len(doc["duplicates"]), doc["fetched_before"]

    _, doc = run_json("fetch", str(root), *map(str, paths))
    assert counts(doc) == (1, 1, 0)
    received = [r for r in journal(root) if r["event"] == "received"]
    assert sorted(r["sender"] for r in received) == sorted([one, two])
    assert len({r["message_id"] for r in received}) == 2
    assert counts(run_json("fetch", str(root), *map(str, paths))[1]) == (0, 0, 2)
    twice = tmp_path / "twice.eml"
    twice.write_bytes(reply(one, [("a.xlsx", b"PK-other"), ("b.xlsx", b"PK-other")]))
    assert "1 file saved, 1 duplicate, 0 fetched before" in run("fetch", str(root),
                                                                str(twice)).output


def test_fetch_from_an_mbox_and_names_never_overwrite(tmp_path):
    root = mail_study(tmp_path / "s")
    filled = _filled(root)
    a, b = list(filled.values())[:2]
    box = tmp_path / "returns.mbox"
    box.write_bytes(b"From x@example.org Tue Sep 15 09:30:00 2026\n"
                    + reply("x@example.org", [("pack.xlsx", a)]).replace(b"\r\n", b"\n")
                    + b"\nFrom y@example.org Tue Sep 15 09:30:00 2026\n"
                    + reply("y@example.org", [("pack.xlsx", b)]).replace(b"\r\n", b"\n"))
    result, doc = run_json("fetch", str(root), "--mbox", str(box))
    assert result.exit_code == 0, result.stderr
    files = sorted(s["file"] for s in doc["saved"])
    assert len(files) == 2 and files[0] != files[1]  # same name, same second: both kept
    assert {sha256((root / L.RETURNS_DIR / f).read_bytes()) for f in files} == {
        sha256(a), sha256(b)}


@pytest.mark.parametrize(("name", "safe"), [
    ("../../x.xlsx", "x.xlsx"), ("..\\..\\evil.XLSX", "evil.xlsx"), (".hidden.xlsx",
                                                                      "hidden.xlsx"),
    ("a b;c$(rm).xlsx", "a_b_c_rm.xlsx"), ("", "attachment"), ("ü.ods", "attachment.ods")])
def test_safe_names(name, safe):
    assert safe_name(name) == safe


def _big_reply_with_encoded_names() -> bytes:
    """A reply over 1 MB from a sender with a display name, its two attachments named
    as mail programs encode non-ASCII names: RFC 2231 (``filename*=utf-8''...``, what
    Python and Thunderbird write) and RFC 2047 (``=?utf-8?b?...?=``, older Outlook)."""
    import base64

    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = "Ève Durand <Eve@Example.org>"
    msg["Subject"] = "mon classeur évalué"
    msg.set_content("Le voici.\n")
    msg.add_attachment(b"\0" * (3 * 2**20), maintype="application", subtype="vnd.ms-excel",
                       filename="Évaluation – finale.xlsx")
    msg.add_attachment(b"\0" * 2**19, maintype="application", subtype="octet-stream",
                       filename="Résultats.xlsx")
    encoded = base64.b64encode("Résultats.xlsx".encode()).decode()
    # the email package writes RFC 2231 only: the second name as an encoded word instead
    data = msg.as_bytes().replace(b"filename*=utf-8''R%C3%A9sultats.xlsx",
                                  f'filename="=?utf-8?b?{encoded}?="'.encode())
    assert b"=?utf-8?b?" in data and b"filename*=utf-8''%C3%89valuation" in data
    return data


EXPECTED_ABOUT = "from eve@example.org ('mon classeur évalué')"
EXPECTED_PARTS = "attachments: Évaluation – finale.xlsx (3.0 MB), Résultats.xlsx (0.5 MB)"


def test_a_message_over_the_limit_names_its_sender_and_its_files_as_sent(tmp_path,
                                                                        monkeypatch):
    """The report of a message too large to read said "ask the sender" without naming
    them, and showed an encoded file name as its raw header text."""
    monkeypatch.setattr(inbox, "MAX_MESSAGE_BYTES", 2**20)  # 1 MB, to keep the test small
    root = mail_study(tmp_path / "s")
    path = tmp_path / "big.eml"
    path.write_bytes(_big_reply_with_encoded_names())
    box = tmp_path / "box.mbox"
    box.write_bytes(b"From eve@example.org Tue Sep 15 09:30:00 2026\n" +
                    path.read_bytes().replace(b"\r\n", b"\n") + b"\n")
    for report, where in ((inbox.fetch(root, eml=[path]), str(path)),
                          (inbox.fetch(root, mbox=box), f"{box} #1")):
        assert report.saved == [] and len(report.listed) == 1
        assert report.listed[0].startswith(f"{where} {EXPECTED_ABOUT}: skipped, the message ")
        assert EXPECTED_PARTS in report.listed[0]


def test_a_message_over_the_limit_on_the_server_is_named_not_downloaded(tmp_path, dovecot,
                                                                       monkeypatch):
    # 1 MB, to keep the test small: the limit the server's messages are read under, and
    # the one the report names
    monkeypatch.setattr(imap_source, "MAX_MESSAGE_BYTES", 2**20)
    monkeypatch.setattr(inbox, "MAX_MESSAGE_BYTES", 2**20)
    root = mail_study(tmp_path / "s")
    dovecot.append(reply("a@example.org", [("big.xlsx", b"\0" * (3 * 2**20))]))
    report = inbox.fetch(root, imap=imap_source.ImapSource(
        imap_source.Server("127.0.0.1", dovecot.port, "none"), dovecot.user, dovecot.password))
    assert report.saved == [] and len(report.listed) == 1
    assert "INBOX uid 1 from a@example.org ('my workbook'): skipped, the message is 4.1 MB " \
        "(over the 1 MB limit); attachments: big.xlsx (3.0 MB)" in report.listed[0]
    assert dovecot.unseen() == 1
    dovecot.append(_big_reply_with_encoded_names())  # names from the server's BODYSTRUCTURE
    report = inbox.fetch(root, imap=imap_source.ImapSource(
        imap_source.Server("127.0.0.1", dovecot.port, "none"), dovecot.user, dovecot.password))
    listed = [line for line in report.listed if line.startswith("INBOX uid 2 ")]
    assert len(listed) == 1 and listed[0].startswith(f"INBOX uid 2 {EXPECTED_ABOUT}: skipped")
    assert EXPECTED_PARTS in listed[0]
    assert dovecot.unseen() == 2


def test_a_file_holding_no_message_is_counted_as_not_read(tmp_path):
    """An empty or random-bytes .eml was named "not read" above a last line "1 message
    read": the files holding no message are counted apart from those read."""
    root = mail_study(tmp_path / "s")
    empty, noise, good = (tmp_path / n for n in ("empty.eml", "noise.eml", "other.eml"))
    empty.write_bytes(b"")
    noise.write_bytes(bytes(range(256)) * 4)
    good.write_bytes(reply("someone@example.net", []))
    result = run("fetch", str(root), str(empty), str(noise), str(good))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == ("1 message read, 2 not read: 0 files saved, "
                                              "0 duplicates, 0 fetched before")
    _, doc = run_json("fetch", str(root), str(empty))
    assert (doc["messages"], doc["not_read"]) == (0, 1)
    assert run("fetch", str(root), str(empty)).stdout.splitlines()[-1].startswith(
        "0 messages read, 1 not read: ")


def test_an_empty_message_file_and_a_folder_are_named_for_what_they_are(tmp_path):
    """A 0-byte .eml was "skipped, the message is 0.0 MB (over the 64 MB limit)"; a
    folder given as a message file was "no such file"."""
    root = mail_study(tmp_path / "s")
    empty = tmp_path / "empty.eml"
    empty.write_bytes(b"")
    result, doc = run_json("fetch", str(root), str(empty))
    assert result.exit_code == 0 and doc["listed"] == [f"{empty}: not read (empty: no "
                                                       "message in it)"]
    box = tmp_path / "empty.mbox"
    for content in (b"", b"From eve@example.org Tue Sep 15 09:30:00 2026\n"):
        box.write_bytes(content)  # an mbox of no message: fetch printed only zeros
        result, doc = run_json("fetch", str(root), "--mbox", str(box))
        assert result.exit_code == 0 and doc["listed"] == [f"{box}: not read (empty: no "
                                                           "message in it)"]
        assert (doc["messages"], doc["not_read"]) == (0, 1)
    for args in ([str(tmp_path)], ["--mbox", str(tmp_path)]):
        folder = run("fetch", str(root), *args)
        assert folder.exit_code == 2
        assert folder.stderr.strip() == f"error: {tmp_path}: a folder; give the saved " \
            "message files (.eml) or the mbox file itself"


def _cut_received(root: Path) -> int:
    """Cut inside the first ``received`` record of mail.jsonl (as a bad edit would);
    its line number."""
    path = root / JOURNAL_FILE
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"event": "received"' in line)
    lines[at] = lines[at][:20] + b"\n"
    path.write_bytes(b"".join(lines))
    return at + 1


def test_a_damaged_journal_line_stops_fetch_before_anything_is_saved(tmp_path):
    """A line of mail.jsonl that is no record was passed over by fetch: a message whose
    "received" record it held was taken as new, recorded again and its file saved to
    returns/ again (the coordinator had moved it out)."""
    root = mail_study(tmp_path / "s")
    rater, filled = next(iter(_filled(root).items()))
    email = next(r.email for r in load_study(root).raters if r.id == rater)
    message = tmp_path / "m.eml"
    message.write_bytes(reply(email, [("scores.xlsx", filled)]))
    first, doc = run_json("fetch", str(root), str(message))
    assert first.exit_code == 0 and len(doc["saved"]) == 1
    (root / L.RETURNS_DIR / doc["saved"][0]["file"]).rename(tmp_path / "kept.xlsx")
    line = _cut_received(root)
    before = (root / "mail.jsonl").read_bytes()
    again = run("fetch", str(root), str(message))
    assert again.exit_code == 3, again.output
    assert (f"error: mail.jsonl: line {line} holds no record sheetflow wrote (damaged or "
            "edited by hand): a message recorded there as fetched would be taken as new"
            ) in again.stderr
    assert again.stderr.rstrip().endswith(f"then run 'sheetflow fetch {root} {message}' "
                                          "again")
    assert "Traceback" not in again.output
    assert list((root / L.RETURNS_DIR).iterdir()) == []  # nothing saved again
    assert (root / "mail.jsonl").read_bytes() == before  # nor recorded
    result, doc = run_json("fetch", str(root), str(message))
    assert result.exit_code == 3 and doc["exit_code"] == 3
    assert f"line {line} holds no record" in doc["errors"][0]


def test_a_damaged_journal_line_stops_fetch_before_the_server_is_read(tmp_path, dovecot):
    root = mail_study(tmp_path / "s")
    rater, filled = next(iter(_filled(root).items()))
    email = next(r.email for r in load_study(root).raters if r.id == rater)
    dovecot.append(reply(email, [("scores.xlsx", filled)]))
    env = {PASSWORD_ENV: dovecot.password}
    assert run("fetch", str(root), *_imap(dovecot), env=env).exit_code == 0
    for path in (root / L.RETURNS_DIR).iterdir():
        path.unlink()  # moved out by the coordinator
    line = _cut_received(root)
    before = (root / "mail.jsonl").read_bytes()
    again = run("fetch", str(root), *_imap(dovecot), env=env)
    assert again.exit_code == 3, again.output
    assert f"mail.jsonl: line {line} holds no record sheetflow wrote" in again.stderr
    assert list((root / L.RETURNS_DIR).iterdir()) == []
    assert (root / "mail.jsonl").read_bytes() == before
    # stopped before the server was asked: a wrong password is not what it says
    wrong = run("fetch", str(root), *_imap(dovecot), env={PASSWORD_ENV: "nope"})
    assert wrong.exit_code == 3 and f"line {line} holds no record" in wrong.stderr


class _BusyServer:
    """An IMAP client whose server answers the first ``busy`` logins as Dovecot does
    while its authentication service is overloaded (RFC 5530's UNAVAILABLE): no real
    server can be made to do that on cue."""

    error = imaplib.IMAP4.error  # what the code under test catches, as on the class
    said = b"[UNAVAILABLE] Temporary authentication failure. [host:2026-12-06 01:00:00]"

    def __init__(self, busy: int):
        self.busy, self.logins, self.closed = busy, 0, False

    def __call__(self, host, port, timeout=None):
        return self

    def login(self, user, password):
        self.logins += 1
        if self.logins <= self.busy:
            raise self.error(self.said)
        return "OK", [b"Logged in"]

    def logout(self):
        self.closed = True


@pytest.mark.parametrize("busy, logins", [(1, 2), (2, 3)])
def test_a_login_the_server_cannot_check_for_now_is_tried_again(monkeypatch, busy, logins):
    busy_server = _BusyServer(busy)
    monkeypatch.setattr(imap_source.imaplib, "IMAP4", busy_server)
    monkeypatch.setattr(imap_source, "LOGIN_PAUSE", 0.0)
    source = imap_source.ImapSource(Server("127.0.0.1", 143, "none"), "coord", "secret")
    assert imap_source._imap_connect(source) is busy_server
    assert busy_server.logins == logins and not busy_server.closed


def test_a_login_still_unavailable_is_not_called_a_wrong_password(monkeypatch):
    busy_server = _BusyServer(busy=99)
    monkeypatch.setattr(imap_source.imaplib, "IMAP4", busy_server)
    monkeypatch.setattr(imap_source, "LOGIN_PAUSE", 0.0)
    source = imap_source.ImapSource(Server("127.0.0.1", 143, "none"), "coord", "secret")
    with pytest.raises(MailError) as refused:
        imap_source._imap_connect(source)
    text = str(refused.value)
    assert busy_server.logins == imap_source.LOGIN_TRIES and busy_server.closed
    assert "[UNAVAILABLE] Temporary authentication failure" in text
    assert "not the password" in text and "SHEETFLOW_IMAP_PASSWORD" not in text
    assert "secret" not in text


def test_a_fetched_return_with_no_single_sender_is_checked_like_an_unknown_sender(
        tmp_path, dovecot):
    """A message without a From, and one naming a rater's address and another, were
    saved "from (no sender)", warned of as "an address of no rater", and passed collect's
    sender check: status said every pack was back, exit 0."""
    root = mail_study(tmp_path / "s")
    filled = _filled(root)
    names = {p["rater_id"]: p["file"] for p in packs(root)}
    one, two, three = sorted(filled)
    no_from = EmailMessage(policy=policy.SMTP)
    no_from["Subject"] = "scores"
    no_from.set_content("attached")
    no_from.add_attachment(filled[three], maintype="application", subtype="octet-stream",
                           filename=names[three])
    dovecot.append(reply("ev01@example.org", [(names[one], filled[one])]))
    dovecot.append(no_from.as_bytes())
    dovecot.append(reply("ev01@example.org, someone@attacker.org", [(names[two], filled[two])]))
    shown = run("fetch", str(root), *_imap(dovecot), env={PASSWORD_ENV: dovecot.password})
    assert shown.exit_code == 0, shown.output  # as for any sender: collect asks
    files = {s["attachment"]: s["file"] for s in _saved(root)}
    several = "several senders: ev01@example.org, someone@attacker.org"
    assert "an address of no rater" not in shown.output
    for file, why in ((files[names[three]], "no sender"), (files[names[two]], several)):
        assert f"saved      returns/{file} from ({why})" in shown.stdout
        assert (f"warning: returns/{file} came in a message with no single sender address "
                f"({why}): anyone may have sent it") in shown.stderr
    received = {r["sha256"]: r for r in journal(root) if r["event"] == "received"}
    assert received[sha256(filled[two])]["sender_problem"] == several

    collected = collect(root)
    unknown = {i.file: i.message for i in collected.report.issues
               if i.code == "sender-unknown"}
    assert sorted(unknown) == sorted([files[names[two]], files[names[three]]])
    assert f"came with no single sender address ({several})" in unknown[files[names[two]]]
    assert collected.report.unchecked_sender_files() != []
    status = run("status", str(root))
    assert status.exit_code == 1, status.output
    assert "2 returns came from" in status.stdout


def test_a_record_of_a_fetched_file_naming_no_sender_is_checked_like_an_unknown_one(
        tmp_path):
    """A ``received`` record whose sender is "" (or none at all) was taken for a file
    that never came by mail: no sender check."""
    root = mail_study(tmp_path / "s")
    filled = _filled(root)
    name = packs(root)[0]["file"]
    eml = tmp_path / "reply.eml"
    eml.write_bytes(reply("ev01@example.org", [(name, filled[packs(root)[0]["rater_id"]])]))
    assert run("fetch", str(root), str(eml)).exit_code == 0
    path = root / JOURNAL_FILE
    lines = [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]
    for record in lines:  # as a fetch before sender_problem was recorded
        if record["event"] == "received":
            record["sender"] = ""
            record.pop("sender_problem", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    unknown = [i for i in collect(root).report.issues if i.code == "sender-unknown"]
    assert len(unknown) == 1 and "(no sender)" in unknown[0].message


def _broken_body(raw: bytes, body: bytes) -> bytes:
    """``raw`` (a reply with one attachment) with the attachment's encoded text replaced
    by ``body``."""
    head, mark, rest = raw.partition(b"Content-Disposition: attachment")
    part_head, blank, tail = rest.partition(b"\r\n\r\n")
    _, end, after = tail.partition(b"\r\n--")
    return head + mark + part_head + blank + body + end + after


@pytest.mark.parametrize("body", [b"!!!!****!!!!", b"UEsDBAoAAAAAA"],
                         ids=["no-base64-characters", "impossible-length"])
def test_an_attachment_that_cannot_be_decoded_is_named_not_saved(tmp_path, body):
    """Base64 text that decodes to nothing was saved as an empty file "from
    ev02@example.org" (exit 0), and collect called it empty, its rater unknown; text of
    an impossible length was saved as the text itself."""
    root = mail_study(tmp_path / "s")
    name = packs(root)[1]["file"]
    raw = _broken_body(reply("ev02@example.org", [(name, b"PK\x03\x04 a workbook")]), body)
    eml = tmp_path / "reply.eml"
    eml.write_bytes(raw)
    result = run("fetch", str(root), str(eml))
    assert result.exit_code == 1, result.output
    assert "saved      returns/" not in result.stdout
    assert not list((root / L.RETURNS_DIR).iterdir())
    assert (f"error: {eml} from ev02@example.org ('my workbook'): attachment {name} could "
            "not be decoded (its encoded text is broken); not saved: ask the sender to "
            "attach the workbook again") in result.stderr
    assert result.stdout.splitlines()[-1].startswith(
        "1 message read: 0 files saved, 0 duplicates, 0 fetched before, 1 attachment that "
        "could not be decoded; 1 reply from raters with the workbook not saved")
    # a rater's reply all the same: kept until a workbook from that address is saved, and
    # no reminder drafted as if EV-02 had not replied (before, the next fetch forgot it)
    other = tmp_path / "other.eml"
    other.write_bytes(reply("someone@example.net", []))
    again = run("fetch", str(root), str(other))
    assert again.exit_code == 1 and "could not be decoded" in again.stderr + again.stdout
    assert "(replied, workbook not saved: attachment " in run("status", str(root)).stdout
    remind, doc = run_json("remind", str(root))
    assert "EV-02" not in [Path(d).stem for d in doc["drafts"]], remind.output
    (root / L.RETURNS_DIR / "reply.eml").write_bytes(raw)  # saved by hand instead
    shown = run("collect", str(root))
    assert shown.exit_code == 1
    assert (f"reply.eml/{name}: could not be read; named like EV-02's pack" in shown.stdout
            and "[attachment-undecodable]" in shown.stdout), shown.stdout
    assert "[empty-file]" not in shown.stdout
