"""A return carried by a message from another rater's address (``sender-not-rater``) or
from no rater's (``sender-unknown``) is the one sign that someone returned a workbook
for someone else: collect and status exit 1, and the Status sheet and status say what
to do, until the coordinator has checked who sent it and marks the file read
(``collect --mark-read FILE``, recorded in text-read.json); the rater's reply never
names the other rater."""

from __future__ import annotations

import json
import re
from pathlib import Path

import openpyxl
import pytest
from mail_helpers import mail_study, packs, reply, run
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

STRANGER = "someone@elsewhere.org"


def _fill(root: Path, pack: dict, blank: int = 0) -> bytes:
    """The pack filled in (``blank`` answers left out: each an error)."""
    answers = plan_answers(pack)
    for cell in list(answers)[:blank]:
        del answers[cell]
    dst = root / "filled" / pack["file"]
    dst.parent.mkdir(exist_ok=True)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, answers)
    return dst.read_bytes()


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, list[str]]:
    """Every pack returned as a saved message in returns/: the first from the second
    rater's address, the second from an address of no rater, the third from its own
    rater's; the names collect gives the first two files."""
    root = mail_study(tmp_path / "s")
    email = {r.id: r.email for r in load_study(root).raters}
    one, two, three = packs(root)
    senders = (email[two["rater_id"]], STRANGER, email[three["rater_id"]])
    for n, (pack, sender) in enumerate(zip((one, two, three), senders, strict=True)):
        (root / L.RETURNS_DIR / f"m{n}.eml").write_bytes(
            reply(sender, [(pack["file"], _fill(root, pack))]))
    return root, [f"m0.eml/{one['file']}", f"m1.eml/{two['file']}"]


def _todo(root: Path) -> dict[str, str]:
    """File returned -> "What to do" on the Status sheet."""
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Status"]
    rows = list(ws.iter_rows(values_only=True))
    at = next(n for n, row in enumerate(rows) if "What to do" in row)
    head = rows[at]
    return {row[head.index("File returned")]: row[head.index("What to do")]
            for row in rows[at + 1:] if row[head.index("File returned")]}


def test_a_return_from_another_raters_or_no_raters_address_makes_collect_exit_1(study):
    root, (other, unknown) = study
    shown = run("collect", str(root))
    assert shown.exit_code == 1, shown.output
    assert f"warning: {other}: [sender-not-rater]" in shown.stdout
    assert f"warning: {unknown}: [sender-unknown]" in shown.stdout
    last = shown.stdout.splitlines()[-1]
    assert " 0 errors, " in last and last.endswith(
        "; 2 returns came from another rater's address, from no rater's or with no single "
        "sender: check who sent "
        f"each, named above (then 'sheetflow collect {root} --mark-read FILE')"), last
    doc = json.loads(run("collect", str(root), "--json").stdout)
    assert doc["ok"] is False and doc["valid"] is True
    assert doc["unchecked_sender"] == [other, unknown] and doc["unread_text"] == []
    assert all(f["used"] for f in doc["files"])  # a warning: the ratings are used
    todo = _todo(root)
    assert todo[other].startswith(
        f"the message carrying {other} came from another rater's address: check who sent "
        f"it (the Issues sheet names the address), then 'sheetflow collect {root} "
        "--mark-read FILE'"), todo[other]
    assert todo[unknown].startswith(
        f"the message carrying {unknown} came from an address of no rater: check who sent")
    status = run("status", str(root))
    assert status.exit_code == 1, status.output
    lines = status.stdout.splitlines()
    assert lines[-2].endswith("; 2 returns came from another rater's address, from no "
                              "rater's or with no single sender"), lines[-2]
    assert lines[-1].startswith(f"{other}, {unknown} came in a message from another "
                                "rater's address, from no rater's or with no single sender: "
                                "check who sent it")
    doc = json.loads(run("status", str(root), "--json").stdout)
    assert doc["ok"] is False and doc["unchecked_sender"] == [other, unknown]


def test_marking_the_returns_read_settles_them_in_collect_and_status(study):
    """The same record as for unread text (text-read.json, by sha256): the warnings
    stay, marked read; the Status sheet no longer asks; exit 0."""
    root, (other, unknown) = study
    marked = run("collect", str(root), "--mark-read", other, "--mark-read", unknown)
    assert marked.exit_code == 0, marked.output
    (line,) = [ln for ln in marked.stdout.splitlines() if "[sender-not-rater]" in ln]
    assert re.search(r"mark the file read \(collect --mark-read\)\. \(marked read "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC, recorded in text-read.json\)$", line)
    assert marked.stdout.splitlines()[-1].endswith("; 2 returns marked read (text-read.json)")
    recorded = json.loads((root / "text-read.json").read_text(encoding="utf-8"))["read"]
    assert sorted(r["file"] for r in recorded) == [other, unknown]
    assert "check who sent" not in " ".join(_todo(root).values())
    doc = json.loads(run("collect", str(root), "--json").stdout)
    assert doc["ok"] is True and doc["unchecked_sender"] == []
    assert run("status", str(root)).exit_code == 0


def test_a_return_from_its_raters_own_address_is_nothing_to_mark_read(study):
    root, _ = study
    own = f"m2.eml/{packs(root)[2]['file']}"
    shown = run("collect", str(root), "--mark-read", own)
    assert shown.exit_code == 2, shown.output
    assert (f"--mark-read {own}: it holds no text sheetflow does not read" in shown.stderr
            and "came from its rater's address" in shown.stderr), shown.stderr


def test_the_reply_to_a_return_sent_from_another_raters_address_names_no_other_rater(
        tmp_path):
    """A file with an error, from another rater's address: its reply asks for the fix
    and says nothing of the sender (the Issues sheet names them)."""
    root = mail_study(tmp_path / "s")
    raters = {r.id: r for r in load_study(root).raters}
    one, two, _ = packs(root)
    other = raters[two["rater_id"]]
    (root / L.RETURNS_DIR / "m.eml").write_bytes(
        reply(other.email, [(one["file"], _fill(root, one, blank=1))]))
    assert run("collect", str(root)).exit_code == 1
    (draft,) = (root / "out" / "feedback").glob("*.eml")
    text = draft.read_text(encoding="utf-8", errors="replace")
    assert "blank" in text
    for word in (other.id, other.email, other.name):
        assert word not in text


def _from_header(raw: bytes, header: bytes) -> bytes:
    """``raw`` (a reply) with its From line replaced by ``header`` (b"" for none)."""
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = [ln for ln in head.split(b"\r\n") if not ln.startswith(b"From:")]
    return b"\r\n".join(([header] if header else []) + lines) + b"\r\n\r\n" + body


@pytest.mark.parametrize(("header", "why"), [
    (b"", "no sender"),
    (b"From: ev01@example.org, someone@attacker.org",
     "several senders: ev01@example.org, someone@attacker.org"),
    (b"From: ev01@example.org\r\nFrom: someone@attacker.org",
     "several senders: ev01@example.org, someone@attacker.org"),
    (b"From: a:b:c;d", "unreadable From header"),
])
def test_a_saved_message_with_no_single_sender_is_checked_like_an_unknown_sender(
        tmp_path, header, why):
    """A message without a From, or one naming two addresses (one of them a rater's),
    passed the sender check: anyone may have sent it."""
    root = mail_study(tmp_path / "s")
    email = {r.id: r.email for r in load_study(root).raters}
    for n, pack in enumerate(packs(root)):
        raw = reply(email[pack["rater_id"]], [(pack["file"], _fill(root, pack))])
        (root / L.RETURNS_DIR / f"m{n}.eml").write_bytes(_from_header(raw, header)
                                                         if n == 1 else raw)
    suspect = f"m1.eml/{packs(root)[1]['file']}"
    shown = run("collect", str(root))
    assert shown.exit_code == 1, shown.output
    assert (f"warning: {suspect}: [sender-unknown] The message carrying this file came "
            f"with no single sender address ({why}). Check who sent it") in shown.stdout
    doc = json.loads(run("collect", str(root), "--json").stdout)
    assert doc["unchecked_sender"] == [suspect]
    assert _todo(root)[suspect].startswith(
        f"the message carrying {suspect} had no single sender address ({why}): check who")
    assert run("status", str(root)).exit_code == 1
    assert run("collect", str(root), "--mark-read", suspect).exit_code == 0
    assert run("status", str(root)).exit_code == 0


def test_the_summary_counts_every_return_whose_sender_is_unchecked(tmp_path):
    """Three returns from an address of no rater, two of them with errors (not used): the
    last line said "1 return came from ..." under three sender warnings."""
    root = mail_study(tmp_path / "s")
    names = []
    for n, pack in enumerate(packs(root)):
        (root / L.RETURNS_DIR / f"m{n}.eml").write_bytes(
            reply(STRANGER, [(pack["file"], _fill(root, pack, blank=1 if n else 0))]))
        names.append(f"m{n}.eml/{pack['file']}")
    shown = run("collect", str(root))
    assert shown.exit_code == 1, shown.output
    assert shown.stdout.count("[sender-unknown]") == 3
    assert ("; 3 returns came from another rater's address, from no rater's or with no "
            "single sender: check who sent each") in shown.stdout.splitlines()[-1]
    assert json.loads(run("collect", str(root), "--json").stdout)["unchecked_sender"] == \
        names[:1]  # the one used: what the exit code waits on
    lines = run("status", str(root)).stdout.splitlines()
    assert lines[-3].endswith("; 3 returns came from another rater's address, from no "
                              "rater's or with no single sender"), lines
    assert lines[-2].startswith(", ".join(names) + " came in a message from another"), lines
    marked = run("collect", str(root), *[w for n in names for w in ("--mark-read", n)])
    assert "came from another" not in marked.stdout.splitlines()[-1], marked.output
