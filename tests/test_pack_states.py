"""What status and remind say of each pack is what is so: no completeness for a pack
not back, no hold on a pack already back, no reminder on the heels of its invitation,
and a received record without an attachment name never names the file "None"."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from mail_helpers import mail_study, packs, run, run_json, sha256
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.reminders import remind
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.journal import append, iso
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

NOW = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)


def _set_time(path: Path, moment: dt.datetime) -> None:
    os.utime(path, (moment.timestamp(), moment.timestamp()))


def _row_line(output: str, rater: str, sitting: int = 1) -> str:
    """The status table's line of ``rater``'s pack of ``sitting``."""
    return next(line for line in output.splitlines()
                if line.startswith(rater) and re.search(rf" {sitting} +(yes|no) ", line))


def test_a_pack_not_returned_has_no_completeness_in_status(tmp_path):
    """status showed "0%" (JSON 0.0) for a pack not returned, and 0.0 in its JSON for a
    file that could not be read, where collect's Status sheet is blank: nothing of
    either was read, so there is no completeness to give."""
    root = mail_study(tmp_path / "s")
    first, second, third = packs(root)
    fill_openpyxl(root / L.PACKS_DIR / first["file"], root / L.RETURNS_DIR / first["file"],
                  plan_answers(first))
    # cut off in transfer, named like the second pack: linked to it, unreadable
    (root / L.RETURNS_DIR / second["file"]).write_bytes(
        (root / L.RETURNS_DIR / first["file"]).read_bytes()[:5000])
    _, doc = run_json("status", str(root))
    rows = {r["rater"]: r for r in doc["raters"]}
    assert rows[first["rater_id"]]["percent_complete"] == 100.0
    assert rows[second["rater_id"]]["returned"] is True
    assert rows[second["rater_id"]]["percent_complete"] is None
    assert rows[third["rater_id"]]["returned"] is False
    assert rows[third["rater_id"]]["percent_complete"] is None
    text = run("status", str(root)).stdout
    assert re.search(r" no +- +0 +0 ", _row_line(text, third["rater_id"]))
    assert re.search(r" yes +- +\d+ +\d+ ", _row_line(text, second["rater_id"]))
    sheet = {r.rater_id: r.percent_complete for r in collect(root, write=False).roster}
    assert sheet[second["rater_id"]] is None and sheet[third["rater_id"]] is None


def test_a_sitting_2_pack_back_is_no_longer_held(tmp_path):
    """status still said "held until ... (24 hours after sitting 1 came back ...)" of a
    sitting-2 pack that had come back: the hold was over, not pending."""
    root = init_study(tmp_path / "s", "keep-known")
    generate_packs(root)
    files = {f.name: f for f in fill_packs(root, seed=7)}
    heads = packs(root)
    rater = heads[0]["rater_id"]
    mine = {p["sitting"]: files[p["file"]] for p in heads if p["rater_id"] == rater}
    for p in heads:  # only this rater's two packs came back
        if p["rater_id"] != rater:
            files[p["file"]].unlink()
    _set_time(mine[1], NOW - dt.timedelta(hours=2))
    _set_time(mine[2], NOW - dt.timedelta(hours=1))
    _, doc = run_json("status", str(root))
    row = next(r for r in doc["raters"] if r["rater"] == rater and r["sitting"] == 2)
    assert row["returned"] is True and row["held"] == ""
    text = run("status", str(root)).stdout
    assert "held until" not in text, text


def test_a_received_record_without_an_attachment_name_never_names_the_file_none(tmp_path):
    """A received record of mail.jsonl holding "attachment": null made the reply draft
    thank the rater for "None": the file's own name is the name to give."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    answers = plan_answers(pack)
    answers[next(iter(answers))] = ("not a score", "text")
    local = root / L.RETURNS_DIR / "20260915-0930-workbook.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], local, answers)
    append(root, {"event": "received", "message_id": "<m1@test>", "sender": "",
                  "received": iso(NOW), "attachment": None,
                  "sha256": sha256(local.read_bytes()),
                  "saved": f"{L.RETURNS_DIR}/{local.name}", "time": iso(NOW)})
    assert not collect(root).valid
    draft = (root / "out" / "feedback" / f"{pack['rater_id']}.eml").read_text()
    assert "None" not in draft
    assert f"Thank you for returning your workbook ({local.name})" in " ".join(draft.split())


def test_a_received_record_without_a_sender_is_a_message_with_no_sender(tmp_path):
    """A received record of mail.jsonl holding "sender": null was read as the address
    "none", a stranger; then as a file that never came by mail, with no sender check. It
    came by mail from nobody the journal names: no sender, checked like a stranger."""
    root = mail_study(tmp_path / "s")
    pack = packs(root)[0]
    local = root / L.RETURNS_DIR / "20260915-0930-workbook.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], local, plan_answers(pack))
    append(root, {"event": "received", "message_id": "<m1@test>", "sender": None,
                  "received": iso(NOW), "attachment": local.name,
                  "sha256": sha256(local.read_bytes()),
                  "saved": f"{L.RETURNS_DIR}/{local.name}", "time": iso(NOW)})
    found = [i for i in collect(root).report.issues if i.code.startswith("sender-")]
    assert [(i.code, i.value) for i in found] == [("sender-unknown", "no sender")], found
    assert "none" not in found[0].message.replace("no sender", "")


def _invite(root: Path, rater: str, when: dt.datetime, kind: str = "invitation") -> None:
    mid = f"<{kind}-{rater}-{when.timestamp()}@test>"
    append(root, {"event": "sending", "kind": kind, "rater": rater, "sitting": 1,
                  "message_id": mid, "time": iso(when)})
    append(root, {"event": "sent", "message_id": mid, "time": iso(when), "reply": "250 OK"})


def test_no_reminder_within_min_days_of_the_invitation(tmp_path):
    """remind right after send invitations drafted a reminder to every pack at once:
    --min-days spaced reminders from each other only. Each pack held back is named, with
    when its reminder may go."""
    root = mail_study(tmp_path / "s")
    first, second, third = (p["rater_id"] for p in packs(root))
    _invite(root, first, NOW - dt.timedelta(hours=1))
    _invite(root, second, NOW - dt.timedelta(days=4))
    _invite(root, third, NOW - dt.timedelta(days=10))
    _invite(root, third, NOW - dt.timedelta(days=1), kind="reminder")
    result = remind(root)
    assert [r.rater_id for r in result.rows] == [second]

    def until(moment: dt.datetime) -> str:
        return f"{moment:%Y-%m-%d %H:%M} UTC, less than 3 days ago: no reminder before " \
            f"{moment + dt.timedelta(days=3):%Y-%m-%d %H:%M} UTC"

    assert result.skipped == [
        (first, 1, f"invited on {until(NOW - dt.timedelta(hours=1))}"),
        (third, 1, f"reminded on {until(NOW - dt.timedelta(days=1))}")]
    shown = run("remind", str(root)).stdout
    assert f"no reminder {first} (sitting 1): invited on " \
        f"{until(NOW - dt.timedelta(hours=1))}" in shown
    at_once = remind(root, min_days=0, write=False)
    assert sorted(r.rater_id for r in at_once.rows) == sorted([first, second, third])
