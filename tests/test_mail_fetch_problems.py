"""``sheetflow fetch``: the messages it cannot simply save, each named and none forgotten."""

from __future__ import annotations

import datetime as dt
import json
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest
from mail_helpers import (
    SENDER,
    filled,
    journal,
    mail_study,
    packs,
    reply,
    run,
    run_json,
    sha256,
)
from mail_servers import dovecot_server

from sheetflow.collect import imap_source, inbox
from sheetflow.collect.run import collect
from sheetflow.errors import MailError
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


def _replies_not_saved(root: Path, tmp_path: Path) -> tuple[list[str], list[bytes]]:
    """Three raters' replies fetch cannot save, as .eml files, and the workbooks (a
    message too large with its video, a workbook too large, an Outlook wrapper)."""
    raters = load_study(root).raters
    books = [filled(root, pack) for pack in packs(root)]
    xlsx = ("application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    sent = [
        _message(raters[0].email, [(books[0], *xlsx, "pack.xlsx"),
                                   (b"\0" * (31 * 2**20), "video", "mp4", "clip.mp4")]),
        _message(raters[1].email, [(books[1] + b"\0" * (21 * 2**20), *xlsx, "pack.xlsx")]),
        _message(raters[2].email, [(b"\x78\x9f\x3e\x22" + b"\0" * 4000, "application",
                                    "ms-tnef", "winmail.dat")]),
    ]
    return [str(_write(tmp_path, f"r{n}.eml", data)) for n, data in enumerate(sent)], books


def test_a_raters_reply_whose_workbook_was_not_saved_is_kept_until_resolved(tmp_path,
                                                                           monkeypatch):
    """Each of these was one warning, exit 0 and nothing journalled: status said "not
    returned" and remind drafted reminders to raters who had replied."""
    import sheetflow.collect.inbox as inbox

    # 30 MB, to keep the test small: the reply with the video is over it, the one
    # with a 21 MB workbook (over the 20 MB attachment limit) is not
    monkeypatch.setattr(inbox, "MAX_MESSAGE_BYTES", 30 * 2**20)
    root = mail_study(tmp_path / "s")
    ids = [r.id for r in load_study(root).raters]
    paths, books = _replies_not_saved(root, tmp_path)
    result, doc = run_json("fetch", str(root), *paths)
    assert result.exit_code == 1 and doc["ok"] is False and doc["saved"] == []
    assert [r["rater"] for r in doc["not_saved"]] == ids
    whys = [r["why"] for r in doc["not_saved"]]
    assert whys[0].startswith("the message is ") and "clip.mp4" in whys[0]
    assert whys[1].startswith("attachment pack.xlsx is 21.") and "20 MB limit" in whys[1]
    assert whys[2] == ("an Outlook winmail.dat wrapper: ask the rater to send the workbook "
                       "as a plain attachment")
    assert all(f"recorded as {i}'s reply" in "\n".join(doc["listed"]) for i in ids)

    # a rerun journals nothing twice; another source still names them, and exits 1
    assert run_json("fetch", str(root), *paths)[0].exit_code == 1
    other = _write(tmp_path, "other.eml", _message("x@elsewhere.org", []))
    again = run("fetch", str(root), str(other))
    assert again.exit_code == 1
    assert again.stderr.count("(recorded by an earlier fetch)") == 3
    assert len([r for r in journal(root) if r["event"] == "not-saved"]) == 3

    _, doc = run_json("status", str(root))
    rows = {r["rater"]: r for r in doc["raters"]}
    assert [rows[i]["not_saved"] for i in ids] == whys
    assert run("status", str(root)).stdout.count("(replied, workbook not saved: ") == 3
    remind, doc = run_json("remind", str(root))
    assert remind.exit_code == 1 and doc["drafts"] == []
    assert [r["rater"] for r in doc["replied_not_saved"]] == ids
    assert run("remind", str(root)).stdout.count(": replied, workbook not saved: ") == 3
    dry = run("send", str(root), "reminders", "--dry-run").stdout
    assert dry.count(" (sitting 1): replied, workbook not saved: ") == 3
    assert "0 reminders would be sent" in dry
    collected = run("collect", str(root)).stdout
    assert collected.count("; replied, workbook not saved: ") == 3
    assert "3 of them replied, workbook not saved: no reminder" in collected

    # the rater sends the workbook plainly: resolved; the others still stand
    plain = _write(tmp_path, "plain.eml", _message(load_study(root).raters[2].email, [
        (books[2], "application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         "pack.xlsx")]))
    result, doc = run_json("fetch", str(root), str(plain))
    assert result.exit_code == 1 and [r["rater"] for r in doc["not_saved"]] == ids[:2]
    assert [r["rater"] for r in run_json("remind", str(root))[1]["replied_not_saved"]] \
        == ids[:2]


def test_a_busy_inbox_counts_its_other_mail_and_names_the_raters_problem_first(tmp_path):
    """With a busy inbox, fetch printed a warning per unrelated message, every run, with
    the rater's problem last among them."""
    root = mail_study(tmp_path / "s")
    rater = load_study(root).raters[0].email
    other = [_message(f"news{n}@elsewhere.org", [(b"%PDF-1.4", "application", "pdf",
                                                  "flyer.pdf")] if n % 2 else [],
                      subject=f"news {n}") for n in range(30)]
    wrapped = _message(rater, [(b"\x78\x9f\x3e\x22", "application", "ms-tnef",
                                "winmail.dat")])
    box = tmp_path / "inbox.mbox"
    box.write_bytes(b"".join(b"From x@example.org Tue Sep 15 09:30:00 2026\n"
                             + data.replace(b"\r\n", b"\n") + b"\n"
                             for data in [*other, wrapped]))
    result = run("fetch", str(root), "--mbox", str(box))
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 1 and f"#31 from {rater}" in warnings[0]
    assert "30 messages from no rater's address without a spreadsheet attachment: " \
        "nothing saved, not listed" in result.stdout
    _, doc = run_json("fetch", str(root), "--mbox", str(box))
    assert doc["unrelated"] == 30 and len(doc["listed"]) == 31
    assert f"#31 from {rater}" in doc["listed"][0]


@pytest.fixture
def dovecot(monkeypatch):
    # a loaded machine's Dovecot may answer a login UNAVAILABLE for seconds: waited out
    monkeypatch.setattr(imap_source, "LOGIN_TRIES", 8)
    with dovecot_server() as server:
        yield server


def _truncate(server, uid: int) -> None:
    """Cut the file of the message with ``uid`` in the server's maildir in half (a
    damaged disk or a copy cut short): the server drops the connection when asked for
    it.

    The file is found by Dovecot's own list of uids (``dovecot-uidlist``, lines
    ``UID [fields] :NAME``), not by sorting names: a name's microseconds are not padded
    (``M99999`` sorts after ``M100000``), so name order is not always append order.
    """
    (uidlist,) = (server.folder / "mail").rglob("dovecot-uidlist")
    lines = uidlist.read_text().splitlines()[1:]
    base = next(line.split(":", 1)[1] for line in lines if line.split()[0] == str(uid))
    (path,) = (p for folder in ("new", "cur") for p in (uidlist.parent / folder).iterdir()
               if p.name.split(":2,")[0] == base)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def test_a_message_the_server_breaks_off_on_is_named_and_the_rest_are_read(
        tmp_path, dovecot, monkeypatch):
    """A damaged message made every run stop at it ("broke off", exit 3): the messages
    after it were never read, it was never named, and the files saved before it never
    shown."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    books = [filled(root, pack) for pack in packs(root)]
    for n in range(3):
        dovecot.append(reply(raters[n].email, [("pack.xlsx", books[n])],
                             subject=f"mine {n}"))
    _truncate(dovecot, 2)
    imap = ["--imap", f"127.0.0.1:{dovecot.port}", "--imap-security", "none", "--username",
            dovecot.user]
    env = {"SHEETFLOW_IMAP_PASSWORD": dovecot.password}
    result, doc = run_json("fetch", str(root), *imap, env=env)
    assert result.exit_code == 1 and doc["ok"] is False
    assert sorted(sha256((root / L.RETURNS_DIR / s["file"]).read_bytes())
                  for s in doc["saved"]) == sorted(sha256(books[n]) for n in (0, 2))
    named = f"INBOX uid 2 from {raters[1].email} ('mine 1')"
    assert doc["skipped"] == [named]
    assert [r["rater"] for r in doc["not_saved"]] == [raters[1].id]
    assert doc["not_saved"][0]["why"].startswith("the IMAP server could not give the message")
    screen = run("fetch", str(root), *imap, env=env)
    assert screen.exit_code == 1 and f"{named}: the IMAP server broke off" in screen.stderr
    assert "forward it to this mailbox again" in screen.stderr

    # the server gone for good after it: what was saved before is shown, then the error
    (root / L.RETURNS_DIR).rename(tmp_path / "moved")
    (root / "mail.jsonl").unlink()
    connect, calls = imap_source._imap_connect, []

    def once(source):
        calls.append(source)
        if len(calls) > 1:
            raise MailError("the IMAP server is gone")
        return connect(source)

    monkeypatch.setattr(imap_source, "_imap_connect", once)
    gone = run("fetch", str(root), *imap, env=env)
    assert gone.exit_code == 3 and "error: the IMAP server is gone" in gone.stderr
    assert gone.stdout.count("saved      returns/") == 1


def test_a_fetched_file_that_cannot_be_read_is_linked_by_the_name_it_was_sent_under(
        tmp_path, dovecot):
    """fetch saves an attachment as "<time received>-<its name>": a cut-off workbook or
    an .ods sent under its pack's name was then linked to no pack (status "not
    returned", a reminder saying it had not arrived, no reply asking for it again)."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    _, second, third = packs(root)
    cut = filled(root, second)
    dovecot.append(reply(raters[1].email, [(second["file"], cut[:len(cut) // 2])]))
    ods = Path(third["file"]).with_suffix(".ods").name
    dovecot.append(reply(raters[2].email, [(ods, b"PK\x03\x04 not an ods after all")]))
    imap = ["--imap", f"127.0.0.1:{dovecot.port}", "--imap-security", "none", "--username",
            dovecot.user]
    result, doc = run_json("fetch", str(root), *imap,
                           env={"SHEETFLOW_IMAP_PASSWORD": dovecot.password})
    assert result.exit_code == 0 and len(doc["saved"]) == 2
    assert all(s["file"] != s["attachment"] for s in doc["saved"])  # saved under a time

    _, doc = run_json("status", str(root))
    rows = {r["rater"]: r for r in doc["raters"]}
    assert rows[raters[0].id]["unusable"] == ""
    assert "named like" in rows[raters[1].id]["unusable"]
    assert "named like" in rows[raters[2].id]["unusable"]
    remind, doc = run_json("remind", str(root))
    assert remind.exit_code == 1
    assert [r["rater"] for r in doc["unusable"]] == [raters[1].id, raters[2].id]
    drafts = sorted(p.name for p in (root / "out" / "reminders").iterdir())
    assert drafts == [f"{raters[0].id}.eml"]  # no "it has not arrived" to those who sent
    collect(root)
    replies = sorted(p.name for p in (root / "out" / "feedback").glob("*.eml"))
    assert replies == [f"{raters[1].id}.eml", f"{raters[2].id}.eml"]


def _imap(server) -> tuple[list[str], dict[str, str]]:
    """fetch's options and environment for the test's Dovecot."""
    return (["--imap", f"127.0.0.1:{server.port}", "--imap-security", "none", "--username",
             server.user], {"SHEETFLOW_IMAP_PASSWORD": server.password})


def test_a_raters_workbook_sent_inside_a_zip_is_their_reply_not_saved(tmp_path, dovecot):
    """A rater's return.zip holding their workbook was "no spreadsheet attachment",
    exit 0 and nothing journalled: status showed the pack not returned and remind told
    the rater it had not arrived."""
    import io
    import zipfile

    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    first = packs(root)[0]
    box = io.BytesIO()
    with zipfile.ZipFile(box, "w") as archive:
        archive.writestr(first["file"], filled(root, first))
    dovecot.append(reply(raters[0].email, [("return.zip", box.getvalue())]))
    dovecot.append(reply("x@elsewhere.org", [("photos.zip", b"PK\x03\x04")]))
    imap, env = _imap(dovecot)
    result, doc = run_json("fetch", str(root), *imap, env=env)
    assert result.exit_code == 1 and doc["saved"] == [] and doc["unrelated"] == 1
    assert [r["rater"] for r in doc["not_saved"]] == [raters[0].id]
    assert doc["not_saved"][0]["why"] == (
        "the workbook came inside an archive (return.zip), which fetch does not open: "
        "ask the rater to attach the .xlsx itself")
    assert not (root / L.RETURNS_DIR / first["file"]).exists()  # not unpacked
    _, doc = run_json("status", str(root))
    assert doc["raters"][0]["not_saved"].startswith("the workbook came inside an archive")
    remind, doc = run_json("remind", str(root))
    assert remind.exit_code == 1 and [r["rater"] for r in doc["replied_not_saved"]] \
        == [raters[0].id]
    assert f"{raters[0].id}.eml" not in [Path(p).name for p in doc["drafts"]]


def test_an_unreadable_file_from_a_raters_address_gets_no_has_not_arrived(tmp_path,
                                                                          dovecot):
    """scores.ods (named like no pack) from a rater's own address could not be read:
    status showed the pack "not returned" and remind told them it had not arrived."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    dovecot.append(reply(raters[1].email, [("scores.ods", b"PK\x03\x04 no ods at all")]))
    imap, env = _imap(dovecot)
    assert run_json("fetch", str(root), *imap, env=env)[0].exit_code == 0
    saved = next((root / L.RETURNS_DIR).iterdir()).name
    said = (f"a file came from their address, {saved}, that could not be read: ask them "
            "for the workbook as .xlsx")
    _, doc = run_json("status", str(root))
    rows = {r["rater"]: r for r in doc["raters"]}
    assert rows[raters[1].id]["unread_from"] == [saved] and not rows[raters[1].id]["returned"]
    assert rows[raters[0].id]["unread_from"] == []
    assert f"(not returned; {said}; pack " in run("status", str(root)).stdout
    remind, doc = run_json("remind", str(root))
    assert remind.exit_code == 1
    assert doc["unread_from"] == [{"rater": raters[1].id, "sitting": 1, "why": said}]
    drafts = sorted(Path(p).name for p in doc["drafts"])
    assert drafts == [f"{raters[0].id}.eml", f"{raters[2].id}.eml"]
    dry = run("send", str(root), "reminders", "--dry-run").stdout
    assert f"{raters[1].id} (sitting 1): {said}" in dry
    sheet = {r.rater_id: r.todo for r in collect(root, write=False).roster}
    assert sheet[raters[1].id] == f"not returned yet: {said}"  # the Status sheet's
    lines = run("collect", str(root)).stdout.splitlines()  # collect's own lines say it too
    assert any(ln.startswith(f"not returned: {raters[1].id}") and ln.endswith(f"; {said}")
               for ln in lines), lines
    assert "1 of them with an unreadable file from their address: no reminder" in lines[-1]


def test_a_file_an_interrupted_fetch_wrote_unrecorded_is_saved_on_the_rerun(
        tmp_path, dovecot, monkeypatch):
    """Ctrl-C between writing a file and journalling it: the rerun called it a
    "duplicate ... not saved again" and journalled it so, and no run said "saved"."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    first = packs(root)[0]
    dovecot.append(reply(raters[0].email, [(first["file"], filled(root, first))]))
    imap, env = _imap(dovecot)
    real = inbox.append

    def interrupted(study, record):
        if record.get("event") == "received":
            raise KeyboardInterrupt
        return real(study, record)

    monkeypatch.setattr(inbox, "append", interrupted)
    assert run("fetch", str(root), *imap, env=env).exit_code == 130
    written = [p.name for p in (root / L.RETURNS_DIR).iterdir()]
    assert len(written) == 1 and journal(root) == []
    monkeypatch.setattr(inbox, "append", real)
    result, doc = run_json("fetch", str(root), *imap, env=env)
    assert result.exit_code == 0 and doc["duplicates"] == []
    assert [s["file"] for s in doc["saved"]] == written
    assert [p.name for p in (root / L.RETURNS_DIR).iterdir()] == written  # no second copy
    assert [r["duplicate"] for r in journal(root)] == [False]
    assert run_json("fetch", str(root), *imap, env=env)[1]["fetched_before"] == 1


def test_a_raters_message_without_the_workbook_is_their_reply_not_saved(tmp_path, dovecot):
    """A rater wrote "done!" and forgot the file: one warning, exit 0 and nothing
    journalled, so status showed them silent and remind told them it had not arrived.
    A note from a rater whose workbook was saved before asks for nothing."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    second = packs(root)[1]
    dovecot.append(reply(raters[0].email, [], subject="done!"))
    dovecot.append(reply(raters[1].email, [(second["file"], filled(root, second))]))
    dovecot.append(reply(raters[1].email, [], subject="thanks"))
    imap, env = _imap(dovecot)
    result, doc = run_json("fetch", str(root), *imap, env=env)
    assert result.exit_code == 1 and doc["ok"] is False and len(doc["saved"]) == 1
    assert [r["rater"] for r in doc["not_saved"]] == [raters[0].id]
    assert doc["not_saved"][0]["why"] == (
        "their message had no workbook attached: ask the rater to attach the filled .xlsx "
        "and send it again")
    assert f"recorded as {raters[0].id}'s reply with the workbook not saved" \
        in doc["listed"][0]
    status = run("status", str(root)).stdout
    assert "(replied, workbook not saved: their message had no workbook attached: ask " \
        "the rater" in status
    remind, doc = run_json("remind", str(root))
    assert remind.exit_code == 1 and [r["rater"] for r in doc["replied_not_saved"]] \
        == [raters[0].id]
    first = packs(root)[0]
    dovecot.append(reply(raters[0].email, [(first["file"], filled(root, first))]))
    result, doc = run_json("fetch", str(root), *imap, env=env)
    assert result.exit_code == 0 and doc["not_saved"] == [], result.output


def _zipped_then_from_home(root: Path) -> tuple[bytes, bytes]:
    """The first rater's sitting-1 workbook as they sent it twice: zipped from their
    own address (not saved: an archive), then as .xlsx from their home address. The
    two messages' bytes."""
    import io
    import zipfile

    rater = load_study(root).raters[0]
    first = next(p for p in packs(root) if p["rater_id"] == rater.id and p["sitting"] == 1)
    book = filled(root, first)
    box = io.BytesIO()
    with zipfile.ZipFile(box, "w") as archive:
        archive.writestr(first["file"], book)
    return (reply(rater.email, [("return.zip", box.getvalue())]),
            reply(f"{rater.name} <home@example.net>", [(first["file"], book)]))


def test_a_reply_not_saved_then_the_workbook_from_another_address_ends_it(tmp_path,
                                                                        dovecot):
    """The rater zipped sitting 1, then sent the .xlsx from their home address: the
    reply not saved stood unresolved (another address) and was pinned on sitting 2,
    which had not even been sent: status and remind said they had replied to it."""
    root = mail_study(tmp_path / "s", "keep-known")
    for message in _zipped_then_from_home(root):
        dovecot.append(message)
    imap, env = _imap(dovecot)
    # both in one fetch: the pack is back, so the reply not saved stands no more
    assert run_json("fetch", str(root), *imap, env=env)[0].exit_code == 0
    _, doc = run_json("status", str(root))
    rater = load_study(root).raters[0]
    rows = {r["sitting"]: r for r in doc["raters"] if r["rater"] == rater.id}
    assert rows[1]["returned"] and [rows[1]["not_saved"], rows[2]["not_saved"]] == ["", ""]
    assert "replied, workbook not saved" not in run("status", str(root)).stdout
    _, doc = run_json("remind", str(root))
    assert doc["replied_not_saved"] == []


def test_an_attachment_copied_into_returns_by_hand_is_named_as_found_not_saved(
        tmp_path, dovecot):
    """The coordinator had saved a rater's attachment into returns/ by hand under a name
    of their own: fetch said "saved returns/from-my-mail.xlsx", a file it never saved."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    first = packs(root)[0]
    data = filled(root, first)
    dovecot.append(reply(raters[0].email, [(first["file"], data)]))
    returns = root / L.RETURNS_DIR
    returns.mkdir(exist_ok=True)
    (returns / "from-my-mail.xlsx").write_bytes(data)
    imap, env = _imap(dovecot)
    result = run("fetch", str(root), *imap, env=env)
    assert result.exit_code == 0 and "saved      " not in result.stdout
    assert (f"duplicate  {first['file']} from {raters[0].email}: already in the folder as "
            "returns/from-my-mail.xlsx (the same bytes); not saved") in result.stdout
    assert "0 files saved, 1 duplicate, 0 fetched before" in result.stdout + result.stderr
    assert [p.name for p in returns.iterdir()] == ["from-my-mail.xlsx"]  # no second copy
    # its sender is recorded against the file found, for collect's sender check
    assert [(r["saved"], r["sender"]) for r in journal(root)] == [
        (f"{L.RETURNS_DIR}/from-my-mail.xlsx", raters[0].email)]
    assert run_json("fetch", str(root), *imap, env=env)[1]["fetched_before"] == 1


def test_fetch_ends_a_reply_not_saved_once_the_pack_came_from_another_address(tmp_path,
                                                                              dovecot):
    """The rater zipped their workbook (fetch exits 1: ask them for the .xlsx), then sent
    it from their home address: status, collect and remind took the pack as back, but
    fetch still exited 1 and asked for the .xlsx on every later run, since no workbook
    came from the address the zip came from."""
    import io
    import zipfile

    root = mail_study(tmp_path / "s")
    rater = load_study(root).raters[0]
    pack = next(p for p in packs(root) if p["rater_id"] == rater.id)
    book = filled(root, pack)
    box = io.BytesIO()
    with zipfile.ZipFile(box, "w") as archive:
        archive.writestr(pack["file"], book)
    dovecot.append(reply(rater.email, [("return.zip", box.getvalue())]))
    imap, env = _imap(dovecot)
    first, doc = run_json("fetch", str(root), *imap, env=env)
    assert first.exit_code == 1 and len(doc["not_saved"]) == 1, first.output
    dovecot.append(reply(f"{rater.name} <home@example.net>", [(pack["file"], book)]))
    for _ in range(2):  # the fetch that saves it, and every later one
        result, doc = run_json("fetch", str(root), *imap, env=env)
        assert result.exit_code == 0 and doc["ok"] and doc["not_saved"] == [], result.output
        again = run("fetch", str(root), *imap, env=env)
        assert again.exit_code == 0, again.output
        assert "attach the .xlsx itself" not in again.output
        over = ("EV-01's reply with the workbook not saved (mail.jsonl) is over: a "
                "workbook of theirs came since")
        # nothing is left to do about it: a plain line, not a warning (--json unchanged)
        (line,) = [ln for ln in again.output.splitlines() if over in ln]
        assert line in again.stdout.splitlines() and not line.startswith("warning"), line
        assert [ln for ln in doc["listed"] if over in ln] == [line]
    _, doc = run_json("status", str(root))
    assert next(r for r in doc["raters"] if r["rater"] == rater.id)["not_saved"] == ""


def test_fetch_ends_a_reply_not_saved_by_the_current_collect_without_reading_returns(
        tmp_path, monkeypatch):
    """Whether a rater's reply not saved is over (their pack came back after it, from
    another address) was judged by validating every return again on each fetch. While
    out/collection.json is current it is read from there; once returns/ holds a file
    collect did not read, the returns are read again. The answer is the same."""
    from sheetflow.collect import pack_status

    root = mail_study(tmp_path / "s")
    zipped, home = (_write(tmp_path, name, message) for name, message
                    in zip(("zip.eml", "home.eml"), _zipped_then_from_home(root), strict=True))
    assert inbox.fetch(root, eml=[zipped, home]).not_saved == []
    assert run("collect", str(root)).exit_code in (0, 1)
    reads: list[Path] = []
    full = pack_status._read_returns

    def counted(root: Path, *args: object, **kwargs: object) -> object:
        reads.append(root)
        return full(root, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pack_status, "_read_returns", counted)
    assert inbox.fetch(root, eml=[zipped]).not_saved == []  # the reply is met again
    assert reads == []  # collect is current: its record says when the pack came back
    record_path = root / "out" / "collection.json"
    kept = record_path.read_bytes()
    record = json.loads(kept)
    record["returned"] = {pack: "2001-01-01T00:00:00Z" for pack in record["returned"]}
    record_path.write_text(json.dumps(record), encoding="utf-8")
    assert inbox.fetch(root, eml=[zipped]).not_saved == []
    assert reads == [root]  # a record edited since collect (its mark fails): not trusted
    record_path.write_bytes(kept)
    reads.clear()
    late = root / L.RETURNS_DIR / "late.xlsx"
    late.write_bytes(home.read_bytes()[:100])  # a file collect did not read
    assert inbox.fetch(root, eml=[zipped]).not_saved == []
    assert reads == [root]
