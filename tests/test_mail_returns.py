"""Saved messages as returns, and the mail history: status, the sitting-2 hold, remind,
replies. A damaged line of the history: ``test_mail_journal.py``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re

import pytest
from mail_helpers import (
    filled,
    journal,
    mail_study,
    packs,
    parsed,
    reply,
    run,
    run_json,
    sha256,
)
from mail_servers import smtp_server
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.outbox import outbox
from sheetflow.collect.outputs import verify_ratings, verify_returns
from sheetflow.collect.pack_status import status
from sheetflow.collect.reminders import remind
from sheetflow.collect.run import collect
from sheetflow.packs.journal import append
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

T0 = dt.datetime(2026, 9, 15, 9, 0, tzinfo=dt.UTC)


def test_a_saved_eml_and_an_mbox_are_collected_like_the_workbooks_they_carry(tmp_path):
    root = mail_study(tmp_path / "s")
    raters = {r.id: r for r in load_study(root).raters}
    one, two, three = packs(root)
    returns = root / L.RETURNS_DIR
    eml = returns / "Re my workbook.eml"
    eml.write_bytes(reply(raters[one["rater_id"]].email, [(one["file"], filled(root, one))]))
    mbox = returns / "returns.mbox"
    mbox.write_bytes(b"".join(
        b"From rater@example.org Tue Sep 15 09:30:00 2026\n"
        + reply(raters[p["rater_id"]].email, [(p["file"], filled(root, p))]).replace(
            b"\r\n", b"\n") + b"\n" for p in (two, three)))
    before = {p: sha256(p.read_bytes()) for p in (eml, mbox)}
    result = collect(root)
    assert result.valid, [i.message for i in result.report.issues]
    assert len(result.report.files) == 3 and all(f.used for f in result.report.files)
    assert {f.rater for f in result.report.files} == set(raters)
    names = sorted(f.file for f in result.report.files)
    assert names == sorted([f"Re my workbook.eml/{one['file']}",
                            f"returns.mbox/1/{two['file']}", f"returns.mbox/2/{three['file']}"])
    assert len(result.ratings) > 0
    assert {p: sha256(p.read_bytes()) for p in (eml, mbox)} == before  # never modified
    # analyze's check that the returns are still those collected holds for attachments
    files = json.loads((root / "out" / "collection.json").read_text())["files"]
    assert len(verify_returns(root, files)) == 2
    assert verify_ratings(root).rows == len(result.ratings)


def test_a_message_without_a_workbook_or_unreadable_is_reported(tmp_path):
    root = mail_study(tmp_path / "s")
    returns = root / L.RETURNS_DIR
    (returns / "note.eml").write_bytes(reply("ev01@example.org", [("notes.txt", b"hi")]))
    (returns / "junk.mbox").write_bytes(b"\x00\x01\x02 not mail")
    result = collect(root, write=False)
    codes = {(i.file, i.code) for i in result.report.issues}
    assert ("note.eml", "mail-no-spreadsheet") in codes
    assert ("junk.mbox", "mail-unreadable") in codes


def test_status_json_shows_invited_returned_and_reminded(tmp_path):
    root = mail_study(tmp_path / "s", mail='deadline = "2026-09-20"\n')
    first, second, third = packs(root)
    with smtp_server() as (port, server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none", "--yes"]
        result, _ = run_json("send", str(root), "invitations", *smtp)
        assert result.exit_code == 0 and len(server.delivered) == 3
        returned = root / L.RETURNS_DIR / first["file"]
        returned.write_bytes(filled(root, first))
        os.utime(returned, (T0.timestamp(), T0.timestamp()))
        result, doc = run_json("send", str(root), "reminders", "--min-days", "0", *smtp)
        assert result.exit_code == 0 and len(server.delivered) == 5
        assert sorted(x["rater"] for x in doc["sent"]) == sorted(
            [second["rater_id"], third["rater_id"]])
        again, doc = run_json("send", str(root), "reminders", *smtp)  # within --min-days
        assert again.exit_code == 0
        assert len(server.delivered) == 5
        assert all("less than 3 days ago" in x["why"] for x in doc["not_sent"])
    result, doc = run_json("status", str(root))
    assert result.exit_code == 1 and doc["ok"] is False  # two packs are still out
    rows = {r["rater"]: r for r in doc["raters"]}
    sent = {r["rater"]: r["time"] for r in journal(root) if r["event"] == "sending"}
    assert all(rows[r]["invited"] for r in rows)
    assert rows[first["rater_id"]]["returned_at"] == T0.isoformat()
    assert rows[first["rater_id"]]["reminded"] == []
    for pack in (second, third):
        row = rows[pack["rater_id"]]
        assert row["returned_at"] == "" and len(row["reminded"]) == 1
        assert row["reminded"][0] >= sent[pack["rater_id"]]
        assert row["overdue"] is (dt.datetime.now(dt.UTC).date() > dt.date(2026, 9, 20))
    collect(root)  # the Mail sheet, beside the Status sheet, carries the same columns
    import openpyxl
    sheet = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Mail"]
    header = [c.value for c in sheet[1]]
    for column in ("Invited", "Returned", "Reminded", "Reply sent", "Overdue"):
        assert column in header
    row = next(r for r in sheet.iter_rows(min_row=2, values_only=True)
               if r[1] == first["rater_id"])
    assert row[header.index("Returned")] == "2026-09-15 09:00"


def test_a_sitting_2_invitation_is_held_until_24_hours_after_sitting_1(tmp_path):
    root = mail_study(tmp_path / "s", template="keep-known")
    heads = packs(root)
    rater = heads[0]["rater_id"]
    first = next(p for p in heads if p["rater_id"] == rater and p["sitting"] == 1)
    settings = load_study(root).mail
    box = outbox(root, "invitations", settings, now=T0)
    assert {(m.rater, m.sitting) for m in box.messages} == {
        (p["rater_id"], 1) for p in heads if p["sitting"] == 1}
    assert (rater, 2, "held: sitting 1 has not come back yet") in box.left_out
    returned = root / L.RETURNS_DIR / first["file"]
    returned.write_bytes(filled(root, first))
    os.utime(returned, (T0.timestamp(), T0.timestamp()))
    early = outbox(root, "invitations", settings, now=T0 + dt.timedelta(hours=23, minutes=59))
    assert (rater, 2) not in {(m.rater, m.sitting) for m in early.messages}
    why = next(w for r, s, w in early.left_out if (r, s) == (rater, 2))
    assert why.startswith("held until 2026-09-16T09:00:00+00:00 (24 hours after sitting 1")
    due = outbox(root, "invitations", settings, now=T0 + dt.timedelta(hours=24))
    assert (rater, 2) in {(m.rater, m.sitting) for m in due.messages}
    # a reminder for the sitting-2 pack is not drafted before it is due either
    early_remind = remind(root, now=T0 + dt.timedelta(hours=1))
    assert (rater, 2) not in {(r.rater_id, r.sitting) for r in early_remind.rows}


def test_remind_skips_raters_never_invited(tmp_path):
    root = mail_study(tmp_path / "s")
    one, two, three = packs(root)
    for pack in (one, two):  # invitations sent to two of the three
        mid = f"<{pack['rater_id']}@test>"
        append(root, {"event": "sending", "kind": "invitation", "rater": pack["rater_id"],
                      "sitting": 1, "message_id": mid, "time": T0.isoformat()})
        append(root, {"event": "sent", "message_id": mid, "time": T0.isoformat(),
                      "reply": "250 OK"})
    result = remind(root, now=T0 + dt.timedelta(days=1), min_days=0)
    assert sorted(r.rater_id for r in result.rows) == sorted([one["rater_id"],
                                                              two["rater_id"]])
    assert result.skipped == [(three["rater_id"], 1,
                               "never invited (no invitation sent in the mail journal)")]
    assert len(result.drafts.written) == 2 and not result.by_hand
    by_hand = remind(mail_study(tmp_path / "t"))  # no journal: packs sent by hand
    assert by_hand.by_hand and len(by_hand.rows) == 3


def test_an_unconfirmed_invitation_shows_in_status_and_remind_not_as_never_invited(
        tmp_path):
    """The server keeps EV-02's invitation and drops the line before its answer: the
    invitation is unconfirmed (held back from the rerun). Status showed no invitation
    at all and remind said "never invited", though it may well have arrived."""
    root = mail_study(tmp_path / "s")
    second = load_study(root).raters[1]
    smtp = ["--smtp-security", "none", "--smtp"]
    with smtp_server() as (port, server):
        server.drop_after.add(second.email)
        assert run("send", str(root), "--yes", *smtp, f"127.0.0.1:{port}").exit_code == 3
        server.drop_after.clear()
        assert run("send", str(root), "--yes", *smtp, f"127.0.0.1:{port}").exit_code == 0
        reminders = run("send", str(root), "reminders", "--dry-run", "--min-days", "0",
                        *smtp, f"127.0.0.1:{port}")
    shown = run("status", str(root))
    rows = shown.stdout.splitlines()
    at = next(i for i, line in enumerate(rows) if line.startswith(second.id))
    assert "invitation unconfirmed (sending began " in rows[at + 1]
    assert "it may have arrived (ask the rater); 'sheetflow send " \
        f"{root} invitations --resend --rater {second.id}' sends it again" in rows[at + 1]
    _, doc = run_json("status", str(root))
    row = next(r for r in doc["raters"] if r["rater"] == second.id)
    assert row["invited"] == "" and row["invitation_unconfirmed"]
    reminded = run("remind", str(root), "--min-days", "0")
    for output in (reminded.stdout, reminders.stdout):
        assert "never invited" not in output
        assert f"{second.id} (sitting 1): invitation unconfirmed (sending began " in output
    result = remind(root, min_days=0)
    assert second.id not in {r.rater_id for r in result.rows}
    assert len(result.rows) == 2  # the two confirmed invitations are reminded


def test_status_says_sent_only_for_a_pack_that_was_sent(tmp_path):
    """Every pack not returned read "sent <pack file>", before any send and for a
    rater whose invitation the server refused."""
    root = mail_study(tmp_path / "s")
    raters = load_study(root).raters
    by_rater = {p["rater_id"]: p["file"] for p in packs(root)}
    with smtp_server() as (port, server):
        server.refuse.add(raters[2].email)
        sent = run("send", str(root), "--yes", "--smtp", f"127.0.0.1:{port}",
                   "--smtp-security", "none")
        assert sent.exit_code == 1 and len(server.delivered) == 2
    lines = run("status", str(root)).stdout.splitlines()
    assert "file returned (or the pack)" in lines[0]

    def shown(rater: str) -> str:
        return next(line for line in lines if line.startswith(rater))
    for rater in raters[:2]:
        assert re.search(rf"\(not returned; pack {re.escape(by_rater[rater.id])} sent "
                         r"\d{4}-\d\d-\d\d \d\d:\d\d\)$", shown(rater.id))
    refused = raters[2].id
    assert shown(refused).endswith(f"(not returned; pack {by_rater[refused]}, not sent by "
                                   "sheetflow)")


def test_replies_go_once_per_reply_text(tmp_path):
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    answers = plan_answers(pack)
    cell = next(iter(answers))
    answers[cell] = ("not a score", "text")
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                  answers)
    assert not collect(root).valid
    with smtp_server() as (port, server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none", "--yes"]
        result, doc = run_json("send", str(root), "replies", *smtp)
        assert result.exit_code == 0 and len(server.delivered) == 1
        assert "please fix" in str(server.delivered[0].content)
        collect(root)  # the same errors: the same reply, not sent again
        result, doc = run_json("send", str(root), "replies", *smtp)
        assert len(server.delivered) == 1 and "already sent" in doc["not_sent"][0]["why"]
    rows = {s.rater: s for s in status(root)}
    assert rows[pack["rater_id"]].mail.reply_sent


def _send_the_reply(root):
    """``send replies`` through a real SMTP server: the one reply due goes."""
    with smtp_server() as (port, server):
        result, _ = run_json("send", str(root), "replies", "--yes", "--smtp",
                             f"127.0.0.1:{port}", "--smtp-security", "none")
        assert result.exit_code == 0 and len(server.delivered) == 1


def _collected_with_an_error(tmp_path):
    """A mail study whose first pack came back with one answer that is no score, and
    was collected (so a reply asking for the fix is due)."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    answers = plan_answers(pack)
    answers[next(iter(answers))] = ("not a score", "text")
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                  answers)
    assert not collect(root).valid
    return root, pack


def test_a_reply_draft_whose_pack_changed_after_collect_is_not_sent(tmp_path):
    """send checked the attachments of invitations and reminders only: a reply draft
    waits in out/feedback/ between collect and send, and one whose attached pack was
    swapped meanwhile went to the rater. Now it stops the send like the others."""
    from email import message_from_bytes
    from email.policy import default

    root, pack = _collected_with_an_error(tmp_path)
    draft = next((root / "out" / "feedback").glob("*.eml"))
    message = message_from_bytes(draft.read_bytes(), policy=default)
    part = next(p for p in message.iter_attachments() if p.get_filename() == pack["file"])
    part.set_content(part.get_content() + b"\0", maintype="application",
                     subtype="octet-stream", filename=pack["file"])
    draft.write_bytes(message.as_bytes(policy=default))
    with smtp_server() as (port, server):
        result, _ = run_json("send", str(root), "replies", "--yes", "--smtp",
                             f"127.0.0.1:{port}", "--smtp-security", "none")
        assert result.exit_code == 3, result.output  # not the draft collect made
        assert f"out/feedback/{draft.name}: " in result.stderr
        # collect's record of the draft edited with it: the attachment still stops it
        record_path = root / "out" / "collection.json"
        record = json.loads(record_path.read_text(encoding="utf-8"))
        record["replies"][draft.name]["sha256"] = hashlib.sha256(
            draft.read_bytes()).hexdigest()
        record_path.write_text(json.dumps(record), encoding="utf-8")
        result, _ = run_json("send", str(root), "replies", "--yes", "--smtp",
                             f"127.0.0.1:{port}", "--smtp-security", "none")
        assert result.exit_code == 3, result.output
        assert f"{L.PACKS_DIR}/{pack['file']}: the bytes attached are not the ones" in \
            result.stderr and "nothing was sent" in result.stderr
        assert not server.delivered and journal(root) == []


def test_replies_are_refused_when_a_return_came_in_after_the_collect(tmp_path):
    """The rater sent a fixed file after the collect that drafted "please fix": the
    reply went all the same, asking for what was fixed. Now send (and its dry run)
    names the file and asks for a collect first."""
    root, pack = _collected_with_an_error(tmp_path)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / "fixed.xlsx",
                  plan_answers(pack))
    for extra in (["--dry-run"], ["--yes", "--smtp", "127.0.0.1:1", "--smtp-security",
                                  "none"]):
        result = run("send", str(root), "replies", *extra)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"error: {L.RETURNS_DIR}/ holds 1 file the last collect did not read "
            f"(fixed.xlsx): the reply drafts may ask for what is fixed already; run "
            f"'sheetflow collect {root}' first")
    (root / L.RETURNS_DIR / pack["file"]).unlink()
    collect(root)  # the fixed file read: nothing to reply, nothing refused
    assert run("send", str(root), "replies", "--dry-run").exit_code == 0


def test_a_file_sent_after_the_reply_replaces_the_earlier_one(tmp_path):
    """The fix loop: a file with an error, the reply asking for a fix, the fixed file.
    Both came back as the rater's, so neither was used and the rater was asked which
    one is theirs. The journal shows the order: the newer file stands."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    sender = load_study(root).raters[0].email
    bad = plan_answers(pack)
    bad[next(iter(bad))] = ("not a score", "text")
    files = {}
    for name, answers in (("bad.xlsx", bad), ("fixed.xlsx", plan_answers(pack))):
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], tmp_path / name, answers)
        files[name] = (tmp_path / name).read_bytes()
    first = tmp_path / "first.eml"
    first.write_bytes(reply(sender, [(pack["file"], files["bad.xlsx"])]))
    assert run("fetch", str(root), str(first)).exit_code == 0
    assert not collect(root).valid
    _send_the_reply(root)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    second = tmp_path / "second.eml"
    second.write_bytes(reply(sender, [(pack["file"], files["fixed.xlsx"])], when=later))
    assert run("fetch", str(root), str(second)).exit_code == 0
    result = collect(root)
    by_name = {f.file: f for f in result.report.files}
    (old,) = [f for f in by_name.values() if f.sha256 == sha256(files["bad.xlsx"])]
    (new,) = [f for f in by_name.values() if f.sha256 == sha256(files["fixed.xlsx"])]
    assert new.used and not old.used
    codes = {(i.file, i.code) for i in result.report.issues}
    assert (old.file, "superseded") in codes
    (superseded,) = [i for i in result.report.issues if i.code == "superseded"]
    assert superseded.message == (
        f"Rater {pack['rater_id']} sent {new.file} after the reply asking for fixes; it "
        "replaces this earlier file, which is not used.")
    assert not any(code == "duplicate-rater" for _, code in codes)
    assert not (root / "out" / "feedback" / f"{pack['rater_id']}.eml").exists()
    # the earlier file's errors are what the reply asked to fix: they no longer make
    # collect, status and analyze exit 1, and status shows the file that stands (all
    # three exited 1, analyze telling the coordinator to remove the earlier file)
    assert result.valid
    rater = pack["rater_id"]
    status = run("status", str(root))
    (line,) = [ln for ln in status.output.splitlines() if ln.startswith(rater)]
    assert new.file in line and old.file not in line, line
    collected = run("collect", str(root))
    assert "(1 in files set aside for the rater's newer one)" in collected.output
    return_all_others = [p for p in packs(root) if p["rater_id"] != rater]
    for other in return_all_others:
        fill_openpyxl(root / L.PACKS_DIR / other["file"], root / L.RETURNS_DIR / other["file"],
                      plan_answers(other))
    assert run("collect", str(root)).exit_code == 0
    analyzed = run("analyze", str(root))
    assert analyzed.exit_code == 0, analyzed.output
    assert f"file left out: {old.file}" in analyzed.output  # still named, as history


@pytest.mark.parametrize("who", ["another rater", "a stranger"])
def test_a_file_from_another_address_after_the_reply_replaces_nothing(tmp_path, who):
    """The rater's file with an error, the reply, then a file of the same pack from a
    colleague's address (a forwarded blank pack, filled): it replaced the rater's own
    file as theirs ("Rater EV-01 sent ... after the reply") and was used. It is a rival
    now, saying why it replaced nothing, until the coordinator decides."""
    root, pack, own = _filled_with_an_error(tmp_path)
    study = load_study(root)
    sender, whose = (study.raters[1].email, f" (the address of rater {study.raters[1].id})") \
        if who == "another rater" else ("someone@elsewhere.org", "")
    result, forged = _fixed_after_the_reply(root, tmp_path, pack, own, (sender, "forged.xlsx"))
    assert not any(f.used for f in result.report.files)
    codes = {(i.file, i.code) for i in result.report.issues}
    assert not any(code == "superseded" for _, code in codes)
    rivals = [i for i in result.report.issues if i.code == "duplicate-rater"]
    assert len(rivals) == 2 and not result.valid
    assert all(i.message.endswith(
        f" {forged.file} came after the reply asking for fixes, but from {sender}"
        f"{whose}, not rater "
        f"{pack['rater_id']}'s address, so it replaces no earlier file.") for i in rivals)
    assert run("status", str(root)).exit_code == 1


def test_a_file_after_the_reply_from_the_address_of_every_earlier_one_says_who_sent_it(
        tmp_path):
    """Both files came from an address of no rater (the rater writing from home): the
    newer one replaces the earlier, as it came the same way, with a sender-unknown
    warning beside it. The superseded line said "Rater EV-01 sent ..." of a file no
    rater's address sent; it names the address it came from."""
    root, pack, _ = _filled_with_an_error(tmp_path)
    sender = "someone@elsewhere.org"
    result, fixed = _fixed_after_the_reply(root, tmp_path, pack, sender, (sender, "fixed.xlsx"))
    assert fixed.used
    (superseded,) = [i for i in result.report.issues if i.code == "superseded"]
    assert superseded.message == (
        f"{fixed.file} came after the reply asking for fixes (from {sender}, the address "
        "every earlier file came from); it replaces this earlier file, which is not used.")
    assert any(i.code == "sender-unknown" and i.file == fixed.file
               for i in result.report.issues)


def test_after_lock_the_second_raters_invitation_goes_with_the_others(tmp_path):
    from test_decision_002 import PRIMARY, SECOND, _locked

    from sheetflow.spec.mail import MailSettings

    root = tmp_path / "p002"
    _locked(root)
    settings = MailSettings(sender=("Desk", "desk@example.org"))
    box = outbox(root, "invitations", settings, now=T0)
    second = next(p for p in packs(root) if p["rater_id"] == SECOND)
    by_rater = {m.rater: m for m in box.messages}
    assert set(by_rater) == {PRIMARY, SECOND}
    name, digest, _ = by_rater[SECOND].attachment
    assert name == second["file"]
    assert digest == sha256((root / L.PACKS_DIR / second["file"]).read_bytes())


def _fixed_after_the_reply(root, tmp_path, pack, first, second):
    """Fetch ``bad.xlsx`` (beside the study: :func:`_filled_with_an_error`) from the
    address ``first`` and collect, send the reply asking for fixes, then fetch the pack
    filled without error an hour later from ``second`` (address, file name) and collect:
    that collection and the report of the second file."""
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], tmp_path / second[1],
                  plan_answers(pack))
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
    for (sender, name), when in (((first, "bad.xlsx"), None), (second, later)):
        message = tmp_path / name.replace(".xlsx", ".eml")
        message.write_bytes(reply(sender, [(pack["file"], (tmp_path / name).read_bytes())],
                                  when=when))
        assert run("fetch", str(root), str(message)).exit_code == 0
        result = collect(root)
        if when is None:
            assert not result.valid
            _send_the_reply(root)
    digest = sha256((tmp_path / second[1]).read_bytes())
    return result, next(f for f in result.report.files if f.sha256 == digest)


def _filled_with_an_error(tmp_path):
    """A mail study, its first pack filled with one answer that is no score (saved as
    ``bad.xlsx`` beside the study, not yet returned), and that rater's address."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    bad = plan_answers(pack)
    bad[next(iter(bad))] = ("not a score", "text")
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], tmp_path / "bad.xlsx", bad)
    return root, pack, load_study(root).raters[0].email


def test_the_pack_sent_back_names_only_the_file_used_after_a_reply(tmp_path):
    """The pack came back untouched beside a file with an error; after the reply the
    fixed file came. The pack-as-sent-again warning listed both filled files, the
    replaced one too, and said "which is the one used" of the pair."""
    root, pack, sender = _filled_with_an_error(tmp_path)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], tmp_path / "fixed.xlsx",
                  plan_answers(pack))
    blank = (root / L.PACKS_DIR / pack["file"]).read_bytes()
    first = tmp_path / "first.eml"
    first.write_bytes(reply(sender, [("scores-final.xlsx", (tmp_path / "bad.xlsx").read_bytes()),
                                     (pack["file"], blank)]))
    assert run("fetch", str(root), str(first)).exit_code == 0
    assert not collect(root).valid
    _send_the_reply(root)
    second = tmp_path / "second.eml"
    second.write_bytes(reply(sender, [("scores-fixed.xlsx",
                                       (tmp_path / "fixed.xlsx").read_bytes())],
                             when=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)))
    assert run("fetch", str(root), str(second)).exit_code == 0
    result = collect(root, write=False)
    by_sha = {f.sha256: f for f in result.report.files}
    old = by_sha[sha256((tmp_path / "bad.xlsx").read_bytes())]
    new = by_sha[sha256((tmp_path / "fixed.xlsx").read_bytes())]
    copy = by_sha[sha256(blank)]
    assert new.used and not old.used
    (again,) = [i for i in result.report.issues if i.file == copy.file]
    assert again.code == "pack-as-sent-again"
    assert again.message.endswith(f"beside their filled file ({new.file}), which is the "
                                  "one used.")
    assert old.file not in again.message


def test_status_stops_asking_to_send_a_reply_already_sent(tmp_path):
    """After send replies had sent the reply (the row even read "reply sent ..."),
    status still said "sheetflow send replies sends them"."""
    root, pack = _collected_with_an_error(tmp_path)
    before = run("status", str(root))
    assert f"'sheetflow send {root} replies' sends them" in before.stdout
    _send_the_reply(root)
    after = run("status", str(root))
    assert after.exit_code == 1  # the errors are still there, and two packs are out
    assert "send replies" not in after.stdout, after.stdout
    assert ("1 returned pack with errors: the reply asking for fixes was sent "
            "(mail.jsonl); waiting for the corrected file") in after.stdout
    _, doc = run_json("status", str(root))
    row = next(r for r in doc["raters"] if r["rater"] == pack["rater_id"])
    assert row["reply_sent"] and row["reply_due"] is False


def test_a_reply_draft_names_the_file_as_the_rater_sent_it(tmp_path):
    """The draft thanked the rater for fetch's local names (the time received before
    each), which they never saw, and for the pack they sent back untouched beside
    their filled file, then asked them to fix "the file you sent"."""
    root, pack, sender = _filled_with_an_error(tmp_path)
    message = tmp_path / "m.eml"
    message.write_bytes(reply(sender, [
        ("scores-final.xlsx", (tmp_path / "bad.xlsx").read_bytes()),
        (pack["file"], (root / L.PACKS_DIR / pack["file"]).read_bytes())]))
    assert run("fetch", str(root), str(message)).exit_code == 0
    saved = sorted(p.name for p in (root / L.RETURNS_DIR).iterdir())
    assert all(name[:8].isdigit() for name in saved) and len(saved) == 2  # local names
    assert not collect(root).valid
    draft = parsed((root / "out" / "feedback" / f"{pack['rater_id']}.eml").read_bytes())
    body = draft.get_body(("plain",)).get_content()
    assert "Thank you for returning your workbook (scores-final.xlsx). Before" in body
    assert not any(name in body for name in saved), body
    assert pack["file"] not in body


def test_an_attachment_named_with_folders_is_shown_by_its_plain_file_name(tmp_path):
    """'../../Réponses finales (v2).XLSX' was shown 'reply.eml/../../Réponses...': the
    attachment's file name is shown, and nothing is written outside the returns."""
    root = mail_study(tmp_path / "s")
    raters = {r.id: r for r in load_study(root).raters}
    one = packs(root)[0]
    returns = root / L.RETURNS_DIR
    (returns / "reply.eml").write_bytes(reply(raters[one["rater_id"]].email, [
        ("../../Réponses finales (v2).XLSX", filled(root, one))]))
    result = collect(root)
    (status,) = result.report.files
    assert status.file == "reply.eml/Réponses finales (v2).XLSX" and status.used
    assert all(".." not in i.file for i in result.report.issues)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_the_which_is_yours_draft_names_the_files_as_the_rater_sent_them(tmp_path):
    """Two workbooks of one pack, both sent as scores.xlsx and no reply between: the
    draft asking which is theirs named fetch's local names (the time received before
    each), which the rater never saw. It names the file they sent and when it came."""
    root, pack, sender = _filled_with_an_error(tmp_path)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], tmp_path / "good.xlsx",
                  plan_answers(pack))
    times = [dt.datetime(2026, 9, 15, 9, 30, tzinfo=dt.UTC),
             dt.datetime(2026, 9, 16, 14, 5, tzinfo=dt.UTC)]
    for n, (book, when) in enumerate(zip(["bad.xlsx", "good.xlsx"], times, strict=True)):
        message = tmp_path / f"m{n}.eml"
        message.write_bytes(reply(sender, [("scores.xlsx", (tmp_path / book).read_bytes())],
                                  when=when))
        assert run("fetch", str(root), str(message)).exit_code == 0
    saved = sorted(p.name for p in (root / L.RETURNS_DIR).iterdir())
    assert len(saved) == 2 and all(name[:8].isdigit() for name in saved)  # local names
    result = collect(root)
    assert any(i.code == "duplicate-rater" for i in result.report.issues)
    draft = parsed((root / "out" / "feedback" / f"{pack['rater_id']}.eml").read_bytes())
    body = " ".join(draft.get_body(("plain",)).get_content().split())
    assert ("Two different workbooks came back as yours: scores.xlsx (received 2026-09-15 "
            "09:30 UTC), scores.xlsx (received 2026-09-16 14:05 UTC). Only") in body, body
    assert not any(name in body for name in saved)
