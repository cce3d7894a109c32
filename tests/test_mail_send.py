"""``sheetflow send`` against a real SMTP server (aiosmtpd) on 127.0.0.1; when the
line or the server fails, see ``test_mail_send_failures.py``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from mail_helpers import SENDER, journal, mail_study, packs, parsed, run, run_json, sha256
from mail_servers import smtp_server
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.packs.mail import build_eml
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L


def _plain(port: int) -> list[str]:
    return ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]


def _attachment(msg) -> tuple[str, bytes]:
    (part,) = list(msg.iter_attachments())
    return part.get_filename(), part.get_payload(decode=True)


def test_invitations_reach_each_rater_with_their_own_pack(tmp_path):
    root = mail_study(tmp_path / "s")
    raters = {r.id: r for r in load_study(root).raters}
    by_rater = {p["rater_id"]: p for p in packs(root)}
    with smtp_server() as (port, server):
        result, doc = run_json("send", str(root), "invitations", "--yes", *_plain(port))
        assert result.exit_code == 0, result.stderr
        assert len(server.delivered) == 3
        for delivery in server.delivered:
            msg = parsed(delivery.content)
            (to,) = msg["To"].addresses
            rater = next(r for r in raters.values() if r.email == to.addr_spec)
            assert delivery.rcpt_tos == [rater.email]  # to that rater only
            assert delivery.mail_from == "desk@example.org"
            name, data = _attachment(msg)
            pack = root / L.PACKS_DIR / by_rater[rater.id]["file"]
            assert name == pack.name and sha256(data) == sha256(pack.read_bytes())
            assert msg["From"].addresses[0].addr_spec == "desk@example.org"
            assert msg["Date"] and msg["Message-ID"] and msg["X-Unsent"] is None
        sent = [r for r in journal(root) if r["event"] == "sent"]
        assert len(sent) == 3 and all(r["reply"].startswith("250") for r in sent)

        again, doc = run_json("send", str(root), "invitations", "--yes", *_plain(port))
        assert again.exit_code == 0 and len(server.delivered) == 3  # nothing twice
        assert len(doc["not_sent"]) == 3
        assert all("already sent" in x["why"] for x in doc["not_sent"])

        one, _ = run_json("send", str(root), "invitations", "--yes", "--resend",
                          "--rater", "EV-02", *_plain(port))
        assert one.exit_code == 0 and len(server.delivered) == 4
        assert server.delivered[-1].rcpt_tos == [raters["EV-02"].email]


def test_a_refused_recipient_is_reported_and_the_others_still_go(tmp_path):
    root = mail_study(tmp_path / "s")
    refused = load_study(root).raters[1].email
    with smtp_server() as (port, server):
        server.refuse.add(refused)
        result, doc = run_json("send", str(root), "--yes", *_plain(port))
        assert result.exit_code == 1
        assert sorted(d.rcpt_tos[0] for d in server.delivered) == sorted(
            r.email for r in load_study(root).raters if r.email != refused)
        assert len(doc["refused"]) == 1 and refused in doc["refused"][0]["to"]
        assert refused in result.stderr and "was refused by the server: 550" in result.stderr
        outcomes = {r["message_id"]: r["event"] for r in journal(root) if r["event"] != "sending"}
        sending = {r["message_id"]: r for r in journal(root) if r["event"] == "sending"}
        refused_records = [sending[m] for m, e in outcomes.items() if e == "refused"]
        assert [r["to"] for r in refused_records] == [refused]
        assert "550" in next(r["reply"] for r in journal(root) if r["event"] == "refused")

        server.refuse.clear()  # the address fixed: a rerun sends only what did not go
        rerun, _ = run_json("send", str(root), "--yes", *_plain(port))
        assert rerun.exit_code == 0
        assert len(server.delivered) == 3 and server.delivered[-1].rcpt_tos == [refused]


def test_now_neither_dates_the_message_nor_lets_a_reminder_go_again_at_once(tmp_path):
    """--now stamped the Date header with the simulated time, and a second reminder
    went out moments after the first: the spacing compared the simulated clock with
    the real sending times in the journal."""
    root = mail_study(tmp_path / "s")
    real = dt.datetime.now(dt.UTC)
    ahead = [f"{real + dt.timedelta(days=d):%Y-%m-%d %H:%M}" for d in (2, 6)]
    with smtp_server() as (port, server):
        assert run("send", str(root), "--yes", *_plain(port)).exit_code == 0
        first = run("send", str(root), "reminders", "--yes", "--now", ahead[0],
                    "--min-days", "0", *_plain(port))
        assert first.exit_code == 0, first.output
        assert len(server.delivered) == 6  # three invitations, three reminders
        for delivery in server.delivered[3:]:
            date = parsed(delivery.content)["Date"].datetime
            assert abs(date - real) < dt.timedelta(minutes=10)  # when it really went
        again, doc = run_json("send", str(root), "reminders", "--yes", "--now", ahead[1],
                              *_plain(port))
        assert again.exit_code == 0, again.output
        assert len(server.delivered) == 6  # none again moments later
        assert len(doc["not_sent"]) == 3
        assert all("less than 3 days ago" in x["why"] for x in doc["not_sent"])
    assert "the --min-days spacing of reminders use the real time" in " ".join(
        run("send", "--help").stdout.split())


def test_a_pack_changed_after_generate_is_not_sent(tmp_path):
    """send attached whatever bytes were in packs/ at the time: a workbook edited or
    swapped after generate went to the rater. Now the bytes attached must be the ones
    the sealed manifest records, for invitations and reminders alike."""
    root = mail_study(tmp_path / "s")
    name = packs(root)[1]["file"]
    pack = root / L.PACKS_DIR / name
    original = pack.read_bytes()
    refused = (f"error: {L.PACKS_DIR}/{name}: the bytes attached are not the ones "
               "packs/manifest.json records the sha256 of: the workbook was changed or "
               "replaced after generate, so nothing was sent; restore the workbook generate "
               f"wrote ('sheetflow generate {root}' on the unchanged spec writes the same "
               "bytes again), then run 'sheetflow send {}' again")
    ahead = f"{dt.datetime.now(dt.UTC) + dt.timedelta(days=2):%Y-%m-%d %H:%M}"
    with smtp_server() as (port, server):
        pack.write_bytes(original + b"\0")
        server_words = f"--smtp 127.0.0.1:{port} --smtp-security none"
        for args, again in ((["invitations", "--yes"], "invitations"),
                            (["invitations", "--dry-run"], "invitations --dry-run")):
            result = run("send", str(root), *args, *_plain(port))
            assert result.exit_code == 3, result.output
            assert result.stderr.strip().splitlines() == [refused.format(
                f"{root} {again} {server_words}")]
        assert not server.delivered and journal(root) == []
        pack.write_bytes(original)
        assert run("send", str(root), "--yes", *_plain(port)).exit_code == 0
        assert len(server.delivered) == 3
        pack.write_bytes(original + b"\0")  # the reminder attaches it again
        result = run("send", str(root), "reminders", "--yes", "--now", ahead,
                     "--min-days", "0", *_plain(port))
        assert result.exit_code == 3, result.output
        assert result.stderr.strip().splitlines() == [refused.replace(
            "nothing was sent", "no reminder was drafted or sent").format(
            f'{root} reminders --now "{ahead}" --min-days 0 {server_words}')]  # remind
        assert len(server.delivered) == 3


def test_a_refused_send_of_reminders_writes_and_removes_no_draft(tmp_path):
    """A real send of reminders wrote its drafts (through remind) before it checked the
    packs: a refused send left in out/reminders/ new drafts attaching the changed
    workbook, the earlier ones removed. Now the packs are checked first and the study
    is left as it was."""
    root = mail_study(tmp_path / "s")
    assert run("remind", str(root)).exit_code == 0  # a draft for each of the three
    name = packs(root)[2]["file"]
    pack = root / L.PACKS_DIR / name
    pack.write_bytes(pack.read_bytes() + b"\0")
    before = _state(root)
    assert len([n for n in before if n.startswith("out/reminders/")]) == 3
    refused = (f"error: {L.PACKS_DIR}/{name}: the bytes attached are not the ones "
               "packs/manifest.json records the sha256 of: the workbook was changed or "
               "replaced after generate, so no reminder was drafted or sent; restore the "
               f"workbook generate wrote ('sheetflow generate {root}' on the unchanged spec "
               "writes the same bytes again), then run 'sheetflow send {}' again")
    with smtp_server() as (port, server):
        for args, again in ((["--yes"], ""), (["--dry-run"], " --dry-run")):
            result = run("send", str(root), "reminders", *args, *_plain(port))
            assert result.exit_code == 3, result.output
            assert result.stderr.strip().splitlines() == [refused.format(
                f"{root} reminders{again} --smtp 127.0.0.1:{port} --smtp-security none")]
            assert _state(root) == before
        assert not server.delivered and journal(root) == []


def test_dry_run_lists_each_message_and_sends_nothing(tmp_path):
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        result, doc = run_json("send", str(root), "--dry-run", *_plain(port))
        assert result.exit_code == 0 and not server.delivered and not journal(root)
    assert len(doc["messages"]) == 3
    for item in doc["messages"]:
        assert item["attachment"].endswith(".xlsx") and item["size"] > 1000
        assert item["to"] and item["subject"]
    with smtp_server() as (port, server):  # one message: "1 invitation", not "1 invitations"
        one = run("send", str(root), "--dry-run", "--rater", "EV-01", *_plain(port))
    assert one.exit_code == 0 and not server.delivered
    assert one.stdout.strip().splitlines()[-1] == \
        "1 invitation would be sent (dry run: nothing sent)"


def _state(root) -> dict[str, tuple[str, int]]:
    """Every entry under the study folder: a file's sha256 and modification time."""
    return {p.relative_to(root).as_posix(): (sha256(p.read_bytes()), p.stat().st_mtime_ns)
            if p.is_file() else ("dir", 0) for p in sorted(root.rglob("*"))}


def test_a_dry_run_of_reminders_writes_nothing(tmp_path):
    """send reminders --dry-run composed the reminders with remind, which wrote them to
    out/reminders/ and removed the drafts there first: a dry run changed the study.
    Now, like invitations, it lists the messages and leaves every file as it was."""
    root = mail_study(tmp_path / "s")
    assert run("remind", str(root)).exit_code == 0  # a draft for each of the three
    first = packs(root)[0]
    fill_openpyxl(root / L.PACKS_DIR / first["file"], root / L.RETURNS_DIR / first["file"],
                  plan_answers(first))  # back since: no reminder due for them now
    before = _state(root)
    assert len([n for n in before if n.startswith("out/reminders/")]) == 3
    with smtp_server() as (port, server):
        dry, doc = run_json("send", str(root), "reminders", "--dry-run", *_plain(port))
        assert dry.exit_code == 0, dry.stderr
        assert _state(root) == before and not server.delivered
        invitations = run("send", str(root), "invitations", "--dry-run", *_plain(port))
        assert invitations.exit_code == 0 and _state(root) == before
        listed = [(m["rater"], m["subject"], m["attachment"]) for m in doc["messages"]]
        assert [r for r, _, _ in listed] == [p["rater_id"] for p in packs(root)[1:]]
        sent, real = run_json("send", str(root), "reminders", "--yes", *_plain(port))
        assert sent.exit_code == 0 and len(server.delivered) == 2
    assert [(m["rater"], m["subject"], m["attachment"]) for m in real["messages"]] == listed
    drafts = sorted(p.name for p in (root / "out" / "reminders").iterdir())
    assert drafts == [f"{r}.eml" for r, _, _ in listed]  # what a real send wrote


def test_a_real_send_off_a_terminal_needs_yes(tmp_path):
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        result = run("send", str(root), *_plain(port))
        assert result.exit_code == 2 and "--yes" in result.stderr and not server.delivered


def test_a_display_name_with_a_comma_and_accents_stays_one_recipient(tmp_path):
    root = mail_study(tmp_path / "s")
    raters = root / "raters.csv"
    raters.write_text(raters.read_text().replace("Validator One", '"O\'Brien, Séan"'))
    study = load_study(root)
    rater = study.raters[0]
    assert rater.name == "O'Brien, Séan"
    draft = parsed(build_eml(study, rater, root / L.PACKS_DIR / packs(root)[0]["file"]))
    (to,) = draft["To"].addresses
    assert (to.display_name, to.addr_spec) == ("O'Brien, Séan", rater.email)
    with smtp_server() as (port, server):
        assert run("send", str(root), "--yes", "--rater", rater.id, *_plain(port)).exit_code == 0
    (delivery,) = server.delivered
    assert delivery.rcpt_tos == [rater.email]
    assert [a.display_name for a in parsed(delivery.content)["To"].addresses] == [rater.name]


def test_a_composed_draft_names_the_bytes_it_attached(tmp_path):
    """The drafts' callers parsed each draft back to learn what it attached. compose_eml
    now says it: the name and sha256 of the very bytes put in the message (none when the
    pack is missing), and build_eml's message is the same draft."""
    from sheetflow.packs.mail import compose_eml

    root = mail_study(tmp_path / "s")
    study = load_study(root)
    rater = study.raters[0]
    pack = root / L.PACKS_DIR / packs(root)[0]["file"]
    draft = compose_eml(study, rater, pack)
    name, data = _attachment(parsed(draft.message))
    assert draft.attached == [(pack.name, sha256(data))] == [
        (name, sha256(pack.read_bytes()))]
    assert parsed(build_eml(study, rater, pack)).get_body(("plain",)).get_content() == \
        parsed(draft.message).get_body(("plain",)).get_content()
    pack.unlink()
    missing = compose_eml(study, rater, pack)
    assert missing.attached == [] and not list(parsed(missing.message).iter_attachments())
    text = parsed(missing.message).get_body(("plain",)).get_content()
    assert "was not found when this draft was made: attach it." in text


def test_the_mail_table_is_checked_and_is_not_part_of_the_spec_hash(tmp_path):
    root = mail_study(tmp_path / "s")
    before = load_study(root).hash
    spec = root / "study.toml"
    spec.write_text(spec.read_text().replace(SENDER, "Other <other@example.org>"))
    assert load_study(root).hash == before
    spec.write_text(spec.read_text() + 'smtp = "nohost"\ndeadline = "soon"\n')
    result = run("check", str(root))
    assert result.exit_code == 1
    assert "[mail]: 'smtp' is 'nohost'; give host:port" in result.stderr
    assert "[mail]: 'deadline' is 'soon'; give a date as yyyy-mm-dd" in result.stderr
    assert "Traceback" not in result.output


def test_a_damaged_journal_line_stops_a_send_that_could_repeat_a_message(tmp_path):
    """A line of mail.jsonl that is no record (edited by hand, damaged) was passed over
    in silence: had it held a message's "sent" record, the next send sent it again."""
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        first, _ = run_json("send", str(root), "invitations", "--yes", *_plain(port))
        assert first.exit_code == 0 and len(server.delivered) == 3
        path = root / "mail.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if b'"event": "sent"' in line
                  or b'"event":"sent"' in line)
        lines[at] = lines[at][:20] + b"\n"  # cut inside the record
        path.write_bytes(b"".join(lines))
        for extra in ([], ["--dry-run"]):
            again = run("send", str(root), "invitations", "--yes", *extra, *_plain(port))
            assert again.exit_code == 3, again.output
            assert f"mail.jsonl: line {at + 1} holds no record sheetflow wrote" in again.stderr
            assert "could go again" in again.stderr and "Traceback" not in again.stderr
        assert len(server.delivered) == 3  # nothing sent twice


@pytest.mark.parametrize("which", ["invitations", "reminders"])
def test_a_send_reads_the_manifest_once_for_its_messages_and_their_check(tmp_path,
                                                                          monkeypatch,
                                                                          which):
    """outbox opened the manifest, then its invitations (or remind) opened it again: the
    pack heads the attachments were checked against were not those the messages were
    made from. Now the heads read once go to both."""
    from sheetflow.collect import outbox as outbox_module
    from sheetflow.collect import reminders as reminders_module

    root = mail_study(tmp_path / "s")
    opened: list[str] = []
    for module in (outbox_module, reminders_module):
        real = module.open_manifest

        def counting(*args, _real=real, **kwargs):
            opened.append("manifest")
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, "open_manifest", counting)
    box = outbox_module.outbox(root, which, load_study(root).mail, dry_run=True)
    assert len(box.messages) == 3 and opened == ["manifest"]


def test_a_reminder_to_one_rater_is_not_blocked_by_another_raters_changed_pack(tmp_path):
    """send reminders --rater EV-01 was refused because EV-02's pack changed after
    generate: remind drafts every reminder, and refused the lot. Now a changed pack stops
    only a send that would attach it; another rater's leaves out/reminders/ (replaced as
    one set) as it was, named in a warning with what to do, and the exit code is 1. Nor
    does a send to EV-01 speak of EV-03's missing address."""
    import json

    root = mail_study(tmp_path / "s")
    raters = root / "raters.csv"
    raters.write_text(raters.read_text().replace("ev03@example.org", ""))
    assert run("remind", str(root)).exit_code == 1  # EV-03: no address to remind
    reminders = root / "out" / "reminders"
    before = {p.name: p.read_bytes() for p in reminders.iterdir()}
    name = next(p["file"] for p in packs(root) if p["rater_id"] == "EV-02")
    pack = root / L.PACKS_DIR / name
    pack.write_bytes(pack.read_bytes() + b"\0")
    kept = (f"packs/{name}: the bytes attached are not the ones packs/manifest.json records "
            "the sha256 of: the workbook was changed or replaced after generate, so no "
            "reminder to EV-02 can be drafted and out/reminders/ is left as it was (its "
            "drafts are replaced as one set; the reminders asked for are composed and "
            "checked all the same); restore the workbook generate wrote ('sheetflow "
            f"generate {root}' on the unchanged spec writes the same bytes again), then run "
            "'sheetflow send {}' again")  # to every rater: what writes out/reminders/
    with smtp_server() as (port, server):
        dry, doc = run_json("send", str(root), "reminders", "--rater", "EV-01", "--dry-run")
        assert dry.exit_code == 1 and not doc["not_sent"]
        assert doc["drafts_kept"] == kept.format(f"{root} reminders --dry-run")
        assert [m["rater"] for m in doc["messages"]] == ["EV-01"] and not server.delivered
        result = run("send", str(root), "reminders", "--rater", "EV-01", "--yes",
                     *_plain(port))
        assert result.exit_code == 1, result.output
        assert result.stderr.splitlines() == ["warning: " + kept.format(
            f"{root} reminders --smtp 127.0.0.1:{port} --smtp-security none")]
        assert "EV-03" not in result.output
        (delivery,) = server.delivered
        assert delivery.rcpt_tos == ["ev01@example.org"]
        assert {p.name: p.read_bytes() for p in reminders.iterdir()} == before
        blocked = run("send", str(root), "reminders", "--rater", "EV-02", "--yes",
                      *_plain(port))
        assert blocked.exit_code == 3 and len(server.delivered) == 1
        assert f"error: packs/{name}: the bytes attached" in blocked.stderr
        assert "so no reminder was drafted or sent" in blocked.stderr
    every = run("send", str(root), "reminders", "--dry-run", "--json")
    assert every.exit_code == 3 and json.loads(every.stdout)["exit_code"] == 3
    assert {p.name: p.read_bytes() for p in reminders.iterdir()} == before


def _replies_held(tmp_path: Path) -> Path:
    """A study whose returns of EV-01 and EV-03 have an error: EV-03 has no e-mail
    address, EV-01 was sent a reply, then sent the file again still to fix and
    collected again (the same reply, held as sent before); EV-02's is clean."""
    import os
    import time

    import openpyxl

    from sheetflow.demo.simulate import fill_packs

    root = mail_study(tmp_path / "s")
    raters = root / "raters.csv"
    raters.write_text(raters.read_text().replace("ev03@example.org", ""))
    files = {p.name: p for p in fill_packs(root, seed=5)}
    for pack in packs(root):
        if pack["rater_id"] in ("EV-01", "EV-03"):
            cell = next(a for a in L.iter_answer_cells(pack)
                        if a["validation"]["type"] == "list")
            wb = openpyxl.load_workbook(files[pack["file"]])
            wb[cell["sheet"]][cell["cell"]].value = "Maybe"
            wb.save(files[pack["file"]])
    ev01 = files[next(p["file"] for p in packs(root) if p["rater_id"] == "EV-01")]
    assert run("collect", str(root)).exit_code == 1
    with smtp_server() as (port, server):
        sent = run("send", str(root), "replies", "--yes", *_plain(port))
        assert sent.exit_code == 0 and len(server.delivered) == 1, sent.output
    wb = openpyxl.load_workbook(ev01)  # sent again after the reply, still to fix
    wb.properties.lastModifiedBy = "saved again"  # other bytes, no other issue
    wb.save(ev01)
    later = time.time() + 120
    os.utime(ev01, (later, later))
    assert run("collect", str(root)).exit_code == 1
    return root


def test_status_names_a_reply_that_send_replies_would_not_send(tmp_path):
    """status advised 'sheetflow send replies sends them' for every return with errors,
    also when send replies leaves the reply out: a rater with no e-mail address, or a
    file that came after the reply asking for the same fixes (the same reply, held as
    sent before). The coordinator never saw that the rater would not hear. Now status
    names each such reply, in the words send uses, and the JSON holds it."""
    root = _replies_held(tmp_path)
    dry, doc = run_json("send", str(root), "replies", "--dry-run")
    assert dry.exit_code == 0 and [x["rater"] for x in doc["not_sent"]] == ["EV-01"]
    status = run("status", str(root))
    assert status.exit_code == 1
    lines = status.stdout.splitlines()
    assert ("no reply to EV-03 (sitting 1): no e-mail address in the raters file, so no "
            "reply draft is written or sent: send them the list on the Issues sheet of "
            "out/validation.xlsx yourself") in lines
    (held,) = [ln for ln in lines if ln.startswith("no reply to EV-01 (sitting 1): ")]
    assert held.startswith(f"no reply to EV-01 (sitting 1): 'sheetflow send {root} replies' "
                           "holds out/feedback/EV-01.eml, the same reply as an earlier one: "
                           "already sent on ")
    assert held.endswith(f"; --resend sends it again ('sheetflow send {root} replies --resend "
                         "--rater EV-01' for theirs alone)")
    assert not any("replies' sends them" in ln for ln in lines)
    _, shown = run_json("status", str(root))
    by_rater = {r["rater"]: r for r in shown["raters"]}
    assert by_rater["EV-01"]["reply_held"] == held.split(": ", 1)[1]
    assert by_rater["EV-03"]["reply_held"].startswith("no e-mail address")
    assert by_rater["EV-02"]["reply_held"] == ""


def _body(delivery) -> str:
    return parsed(delivery.content).get_body(("plain",)).get_content().replace("\r\n", "\n")


def test_from_that_would_contradict_the_signed_drafts_is_refused(tmp_path):
    """The drafts are signed with [mail] from (the address to send the workbook back
    to); --from changed only the headers, so a rater read one address and replied to
    another."""
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        other = run("send", str(root), "invitations", "--yes", "--from",
                    "Other Desk <other@example.org>", *_plain(port))
        assert other.exit_code == 2, other.output
        (line,) = other.stderr.splitlines()
        assert "asks for the workbook back at desk@example.org, but the reply would go " \
            "to other@example.org" in line
        assert "set 'from' (and 'reply_to') there instead" in line
        renamed = run("send", str(root), "invitations", "--yes", "--from",
                      "Someone Else <desk@example.org>", *_plain(port))
        assert renamed.exit_code == 2, renamed.output
        assert "is signed 'Study Desk', but the message would come from 'Someone Else'" \
            in renamed.stderr
        assert not server.delivered and not (root / "mail.jsonl").exists()  # nothing sent
        # the address the drafts name, given again (without its name): the same sender
        same = run("send", str(root), "invitations", "--yes", "--from", "DESK@example.org",
                   *_plain(port))
        assert same.exit_code == 0, same.output
        assert len(server.delivered) == 3
        assert all(_body(d).rstrip().endswith("Study Desk\ndesk@example.org")
                   for d in server.delivered)


def test_from_is_free_when_the_drafts_are_signed_by_no_one(tmp_path):
    """With no [mail] sender the drafts say "reply", true whoever sends them."""
    root = mail_study(tmp_path / "s")
    spec = root / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace(f'from = "{SENDER}"\n', ""),
                    encoding="utf-8")
    with smtp_server() as (port, server):
        sent = run("send", str(root), "invitations", "--yes", "--from",
                   "Other Desk <other@example.org>", *_plain(port))
        assert sent.exit_code == 0, sent.output
        assert len(server.delivered) == 3
        assert all(d.mail_from == "other@example.org" for d in server.delivered)
        assert all("desk@example.org" not in _body(d) for d in server.delivered)


def test_status_takes_a_reply_drafts_key_from_collects_record(tmp_path, monkeypatch):
    """Whether send replies holds a reply back is told by the draft's journal key: the
    sha256 of the pack it attaches and of its text. status parsed every draft, and its
    attachment, for it; collect, which composed the drafts, now records each key (with
    the draft's sha256) in out/collection.json, and status takes it from there, with
    the same words. A record from before these keys is read as before; a draft changed
    since collect is not the one collect made, which send refuses and status names."""
    from sheetflow.collect import pack_status
    from sheetflow.collect.drafts import reply_key

    root = _replies_held(tmp_path)
    draft = root / "out" / "feedback" / "EV-01.eml"
    record = json.loads((root / "out" / "collection.json").read_text(encoding="utf-8"))
    _, _, _, attached, text = reply_key("EV-01", 1, draft.read_bytes())
    assert record["replies"]["EV-01.eml"] == {
        "sha256": sha256(draft.read_bytes()), "attached": attached, "text": text}

    def held() -> dict[str, str]:
        return {r.rater: r.reply_held for r in pack_status.status_report(root).packs}

    with monkeypatch.context() as m:  # as an older collect left it: each draft read
        m.setattr(pack_status, "recorded_reply_keys", lambda _root: {})
        read = held()
    assert read["EV-01"].startswith(f"'sheetflow send {root} replies' holds "
                                    "out/feedback/EV-01.eml, the same reply as an earlier")

    def unread(*_args):
        raise AssertionError("the draft was parsed")

    with monkeypatch.context() as m:
        m.setattr(pack_status, "reply_key", unread)
        assert held() == read
    # a draft changed since collect wrote it is not the reply collect made
    assert b"\r\nDear " in draft.read_bytes()
    draft.write_bytes(draft.read_bytes().replace(b"\r\nDear ", b"\r\nHello ", 1))
    assert held()["EV-01"] == (f"out/feedback/EV-01.eml: EV-01's reply draft is not the one "
                               f"collect made last: run 'sheetflow collect {root}' again")
