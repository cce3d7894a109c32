"""``remind`` and ``send reminders`` after a pack came back only from another rater's
address or from no rater's (``sender-not-rater``, ``sender-unknown``), fetched from a
real IMAP server (Dovecot) on 127.0.0.1: collect exits 1 and asks who sent it, so
remind must not say that every pack has come back; it names the pack with what to do,
drafts no reminder and exits 1, until the file is marked read."""

from __future__ import annotations

import pytest
from mail_helpers import filled, mail_study, packs, reply, run, run_json
from mail_servers import dovecot_server

from sheetflow.collect import imap_source
from sheetflow.spec.study import load_study

STRANGER = "someone@elsewhere.org"


@pytest.fixture
def dovecot(monkeypatch):
    # a loaded machine's Dovecot may answer a login UNAVAILABLE for seconds: waited out
    monkeypatch.setattr(imap_source, "LOGIN_TRIES", 8)
    with dovecot_server() as server:
        yield server


def test_a_pack_back_only_from_another_address_is_no_pack_come_back(tmp_path, dovecot):
    root = mail_study(tmp_path / "s")
    email = {r.id: r.email for r in load_study(root).raters}
    one, two, three = packs(root)
    senders = (STRANGER, email[three["rater_id"]], email[three["rater_id"]])
    for pack, sender in zip((one, two, three), senders, strict=True):
        dovecot.append(reply(sender, [(pack["file"], filled(root, pack))]))
    imap = ["--imap", f"127.0.0.1:{dovecot.port}", "--imap-security", "none",
            "--username", dovecot.user]
    fetched = run("fetch", str(root), *imap, env={"SHEETFLOW_IMAP_PASSWORD": dovecot.password})
    assert fetched.exit_code == 0, fetched.output
    collected, doc = run_json("collect", str(root))
    assert collected.exit_code == 1 and len(doc["unchecked_sender"]) == 2, collected.output
    stranger_file, other_file = (next(f for f in doc["unchecked_sender"]
                                      if f.endswith(pack["file"])) for pack in (one, two))

    shown = run("remind", str(root))
    assert shown.exit_code == 1, shown.output
    assert "every pack has come back" not in shown.output
    lines = shown.stdout.splitlines()
    for rater, file in ((one["rater_id"], stranger_file), (two["rater_id"], other_file)):
        (line,) = [ln for ln in lines if ln.startswith(f"no reminder {rater} (sitting 1): ")]
        assert f"only in a message from another rater's address, from no rater's or with " \
               f"no single sender ({file}): check who sent it" in line, line
        assert f"'sheetflow collect {root} --mark-read FILE'" in line
    assert lines[-1] == ("no reminders needed; 2 packs back only from another rater's "
                         "address or no rater's (no reminder: check who sent each, as said "
                         "above)")
    _, doc = run_json("remind", str(root))
    assert doc["ok"] is False and doc["drafts"] == []
    assert [r["rater"] for r in doc["sender_unchecked"]] == [one["rater_id"], two["rater_id"]]

    # send reminders agrees: the same packs named, nothing sent
    dry, doc = run_json("send", str(root), "reminders", "--dry-run")
    assert dry.exit_code == 0 and doc["messages"] == [], dry.output
    assert [r["rater"] for r in doc["not_sent"]] == [one["rater_id"], two["rater_id"]]
    assert all("check who sent it" in r["why"] for r in doc["not_sent"])

    # checked and marked read: the pack is back
    assert run("collect", str(root), "--mark-read", stranger_file).exit_code == 1
    _, doc = run_json("remind", str(root))
    assert [r["rater"] for r in doc["sender_unchecked"]] == [two["rater_id"]]
    assert run("collect", str(root), "--mark-read", other_file).exit_code == 0
    again = run("remind", str(root))
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[-1] == "every pack has come back; no reminders needed"
