"""The mail history (``mail.jsonl``) as each command reads it: a damaged line stops
remind as it stops send; status, collect and analyze name it (file and line) and exit 1;
each command reads the journal once."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mail_helpers import filled, mail_study, packs, reply, run, run_json
from mail_servers import free_port, smtp_server

from sheetflow.collect.outputs import OutputError
from sheetflow.collect.run import collect
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L


def _cut_record(root: Path, event: str, kind: str) -> int:
    """Cut inside the first ``event`` record of a ``kind`` message in mail.jsonl (as a
    bad edit would); its line number."""
    path = root / "mail.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    mids = {json.loads(line)["message_id"] for line in lines
            if json.loads(line).get("kind") == kind}
    at = next(i for i, line in enumerate(lines) if json.loads(line)["event"] == event
              and json.loads(line)["message_id"] in mids)
    lines[at] = lines[at][:20] + b"\n"
    path.write_bytes(b"".join(lines))
    return at + 1


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_a_damaged_journal_line_stops_remind_as_it_stops_send(tmp_path):
    """A line of mail.jsonl that is no record was passed over by remind: the rater
    whose reminder's "sent" record it held was drafted (and sent) a reminder again."""
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]
        assert run("send", str(root), "invitations", "--yes", *smtp).exit_code == 0
        assert run("send", str(root), "reminders", "--yes", "--min-days", "0",
                   *smtp).exit_code == 0
        assert len(server.delivered) == 6
        line = _cut_record(root, "sent", "reminder")
        drafts = _files(root / "out" / "reminders")
        said = f"mail.jsonl: line {line} holds no record sheetflow wrote"
        reminded = run("remind", str(root))
        assert reminded.exit_code == 3, reminded.output
        assert said in reminded.stderr and "could go again" in reminded.stderr
        assert reminded.stderr.rstrip().endswith(f"then run 'sheetflow remind {root}' again")
        for extra in (["--yes"], ["--dry-run"]):
            again = run("send", str(root), "reminders", *extra, *smtp)
            assert again.exit_code == 3, again.output
            assert said in again.stderr and "Traceback" not in again.stderr
        assert len(server.delivered) == 6  # no reminder sent again
    assert _files(root / "out" / "reminders") == drafts  # no draft written or removed
    _, doc = run_json("remind", str(root))
    assert doc["exit_code"] == 3 and said in doc["errors"][0]


def test_a_folder_named_mail_jsonl_stops_remind_as_it_stops_send(tmp_path):
    """A folder where mail.jsonl goes read as a journal with no message: remind said
    "no invitation in mail.jsonl: packs taken as sent by hand" and drafted from there."""
    root = mail_study(tmp_path / "s")
    (root / "mail.jsonl").mkdir()
    reminded = run("remind", str(root))
    assert reminded.exit_code == 3, reminded.output
    assert reminded.stderr == (f"error: {root}/mail.jsonl: is a directory; a folder is "
                               "where sheetflow needs a file: move or rename it, then run "
                               "again\n"), reminded.stderr
    assert not (root / "out" / "reminders").exists()


def test_status_warns_of_a_damaged_journal_line_and_exits_1(tmp_path):
    """A line of mail.jsonl that is no record was passed over by status in silence: the
    invitation it recorded showed as never sent, and status exited 0."""
    root = mail_study(tmp_path / "s")
    with smtp_server() as (port, _):
        assert run("send", str(root), "--yes", "--smtp", f"127.0.0.1:{port}",
                   "--smtp-security", "none").exit_code == 0
    for pack in packs(root):
        (root / L.RETURNS_DIR / pack["file"]).write_bytes(filled(root, pack))
    assert run("collect", str(root)).exit_code == 0
    assert run("status", str(root)).exit_code == 0  # every pack back, out/ current
    line = _cut_record(root, "sent", "invitation")
    shown = run("status", str(root))
    assert shown.exit_code == 1, shown.output
    assert "file returned (or the pack)" in shown.stdout  # the table is still shown
    assert all(p["rater_id"] in shown.stdout for p in packs(root))
    assert (f"warning: mail.jsonl: line {line} holds no record sheetflow wrote (damaged "
            "or edited by hand): status read the returns and the mail without what it "
            "recorded, so the table may show a message recorded there") in shown.stderr
    # status runs collect's checks too: what they may have got wrong is said as well
    # (only the message shown as never sent was)
    warned = " ".join(shown.stderr.split())
    assert "a reply as still to send" in warned
    assert "may have gone without its sender check or its time received" in warned
    assert "a rater's two files may show as rivals" in warned
    assert f"then run 'sheetflow status {root}' again" in shown.stderr
    result, doc = run_json("status", str(root))
    assert result.exit_code == 1 and doc["ok"] is False and doc["exit_code"] == 1
    assert doc["journal_damaged"] == [line]
    assert any(f"line {line} holds no record" in w for w in doc["warnings"])


def _fetched_with_a_cut_record(tmp_path: Path) -> tuple[Path, int, bytes]:
    """A study whose every pack came back by mail, the first from a stranger, collected
    clean and the stranger's file marked read; then mail.jsonl cut inside that file's
    "received" record. The study, the number of the line cut and the journal as it
    was."""
    root = mail_study(tmp_path / "s")
    raters = {r.id: r for r in load_study(root).raters}
    messages = []
    for n, pack in enumerate(packs(root)):
        sender = "stranger@elsewhere.org" if n == 0 else raters[pack["rater_id"]].email
        messages.append(tmp_path / f"m{n}.eml")
        messages[-1].write_bytes(reply(sender, [(pack["file"], filled(root, pack))]))
    assert run("fetch", str(root), *map(str, messages)).exit_code == 0
    clean, doc = run_json("collect", str(root))
    # exit 1 until the stranger's file is checked and marked read
    (stranger,) = doc["unchecked_sender"]
    assert clean.exit_code == 1 and "sender-unknown" in {i["code"] for i in doc["issues"]}
    assert run("collect", str(root), "--mark-read", stranger).exit_code == 0
    path = root / "mail.jsonl"
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b"stranger@" in line)
    lines[at] = lines[at][:20] + b"\n"  # cut inside the record
    path.write_bytes(b"".join(lines))
    return root, at + 1, whole


def test_collect_warns_of_a_damaged_journal_line_and_exits_1(tmp_path):
    """A line of mail.jsonl that is no record was passed over by collect in silence: the
    "received" record it held named a stranger as a file's sender, and collect, without
    it, warned of no sender and exited 0."""
    root, line, _ = _fetched_with_a_cut_record(tmp_path)
    at = line - 1
    shown = run("collect", str(root))
    assert shown.exit_code == 1, shown.output
    assert "[sender-unknown]" not in shown.stdout  # what the lost record would have said
    assert "0 errors" in shown.stdout  # the summary is still shown
    assert (f"warning: mail.jsonl: line {at + 1} holds no record sheetflow wrote (damaged "
            "or edited by hand): a file fetched in the message recorded there may have "
            "gone without its sender check") in shown.stderr
    assert shown.stderr.rstrip().endswith(f"then run 'sheetflow collect {root}' again")
    result, doc = run_json("collect", str(root))
    assert result.exit_code == 1 and doc["ok"] is False and doc["exit_code"] == 1
    assert doc["journal_damaged"] == [at + 1]
    assert f"line {at + 1} holds no record" in result.stderr
    # the warning lines are in the document too (they reached stderr only); "warnings"
    # stays the count of the files' warnings
    assert isinstance(doc["warnings"], int)
    (said,) = doc["warning_lines"]
    assert said.startswith(f"mail.jsonl: line {at + 1} holds no record sheetflow wrote")
    assert said.endswith(f"then run 'sheetflow collect {root}' again")
    assert collect(root, write=False).journal_damaged == [at + 1]


def test_collect_counts_the_damaged_journal_once_among_its_warnings(tmp_path):
    """The damaged journal had no issue of its own: the Issues sheet and --json's
    ``issues`` left it out. It is one warning now, counted once in the headline and in
    ``warnings``, said once on the screen (the warning line, not an issue line too)."""
    root, line, _ = _fetched_with_a_cut_record(tmp_path)
    shown = run("collect", str(root))
    assert shown.exit_code == 1, shown.output
    files = re.findall(r", (\d+) warnings?, used", shown.stdout)
    assert len(files) == 3
    headline = shown.stdout.strip().splitlines()[-1]
    assert headline.endswith(f", {sum(map(int, files)) + 1} warnings (one of them about "
                             "mail.jsonl, below)"), headline
    assert "[journal-damaged]" not in shown.stdout
    assert (shown.stdout + shown.stderr).count("no record sheetflow wrote") == 1
    result, doc = run_json("collect", str(root))
    assert result.exit_code == 1 and doc["ok"] is False
    (journal_issue,) = [i for i in doc["issues"] if i["code"] == "journal-damaged"]
    assert journal_issue["file"] == "mail.jsonl" and journal_issue["severity"] == "warning"
    assert journal_issue["message"].startswith(
        f"collect read mail.jsonl while its line {line} held no record sheetflow wrote")
    assert journal_issue["message"].endswith(f"then run 'sheetflow collect {root}' again")
    assert doc["warnings"] == sum(f["warnings"] for f in doc["files"]) + 1
    assert doc["warnings"] == sum(i["severity"] == "warning" for i in doc["issues"])
    assert doc["errors"] == 0 and doc["valid"] is True  # no file has an error
    assert doc["journal_damaged"] == [line]


def test_collect_names_its_journal_issue_apart_from_the_files_issues(tmp_path):
    """The screen found the damaged journal's issue by its code string. The result now
    holds it (``journal_issue``) and the files' issues without it (``file_issues``);
    a whole journal has none."""
    from sheetflow.collect.run import collect

    root, line, _ = _fetched_with_a_cut_record(tmp_path)
    result = collect(root, write=False)
    assert result.journal_damaged == [line]
    assert result.journal_issue is not None and result.journal_issue.file == "mail.jsonl"
    assert result.journal_issue in result.report.issues
    assert result.file_issues == [i for i in result.report.issues
                                  if i is not result.journal_issue]
    assert len(result.file_issues) == len(result.report.issues) - 1
    (root / "mail.jsonl").unlink()
    whole = collect(root, write=False)
    assert whole.journal_issue is None and whole.file_issues == whole.report.issues


def test_collect_records_a_damaged_journal_line_in_its_outputs(tmp_path):
    """collect warned of a line of mail.jsonl that is no record on the screen only:
    out/collection.json and out/validation.xlsx, read later by the analyst and the
    coordinator, did not say that the sender checks and received times went without it."""
    import openpyxl

    root, line, whole = _fetched_with_a_cut_record(tmp_path)
    assert run("collect", str(root)).exit_code == 1
    out = root / "out"
    assert json.loads((out / "collection.json").read_text("utf-8"))["journal_damaged"] \
        == [line]
    said = (f"collect read mail.jsonl while its line {line} held no record sheetflow "
            "wrote (damaged or edited by hand): a file fetched in the message recorded "
            "there may have gone without its sender check")
    book = openpyxl.load_workbook(out / "validation.xlsx")
    assert book.active.title == "Status"  # the sheet it opens on
    for name in ("Status", "Mail"):  # and the sheet of the mail history
        sheet = book[name]
        assert sheet["A1"].value.startswith(said), name
        assert sheet["A1"].value.endswith(f"then run 'sheetflow collect {root}' again")
        assert "A1" in {str(r).split(":")[0] for r in sheet.merged_cells.ranges}
        assert sheet["A2"].value == "State" and sheet.freeze_panes == "A3"
        assert sheet.auto_filter.ref.startswith("A2:")
    # and one row of the Issues sheet, where filtering by file, code or severity finds
    # it (the Files sheet lists the returns read, of which the journal is none)
    rows = _issue_rows(book)
    (row,) = [r for r in rows if r["File"] == "mail.jsonl"]
    assert (row["Severity"], row["Code"]) == ("warning", "journal-damaged")
    assert row["Message"].startswith(said) and not row["Sheet"] and not row["Cell"]
    assert row["Message"].endswith(f"then run 'sheetflow collect {root}' again")
    assert len(row["Message"].split("\n")) == 1
    assert book["Issues"].row_dimensions[rows.index(row) + 2].height >= 15 * 10
    assert "mail.jsonl" not in {c.value for c in book["Files"]["A"]}
    issued = sum(r["Severity"] == "warning" for r in rows)
    assert issued == sum(c.value for c in book["Files"]["E"][1:]) + 1
    # mended, the outputs say nothing of it
    (root / "mail.jsonl").write_bytes(whole)
    assert run("collect", str(root)).exit_code == 0
    assert json.loads((out / "collection.json").read_text("utf-8"))["journal_damaged"] == []
    book = openpyxl.load_workbook(out / "validation.xlsx")
    sheet = book["Status"]
    assert sheet["A1"].value == "State" and sheet.freeze_panes == "A2"
    assert "mail.jsonl" not in {r["File"] for r in _issue_rows(book)}


def _issue_rows(book) -> list[dict]:
    """The Issues sheet's rows, by header."""
    values = list(book["Issues"].iter_rows(values_only=True))
    return [dict(zip(values[0], row, strict=True)) for row in values[1:]]


def test_analyze_names_the_damaged_journal_line_collect_read(tmp_path):
    """analyze said nothing of the line of mail.jsonl that was no record when collect
    ran, and exited 0: its decision rested on sender checks and received times made
    without that record, and neither the analyst nor the Summary knew."""
    import openpyxl

    from sheetflow.analysis.panel import recorded_journal_damage

    root, line, whole = _fetched_with_a_cut_record(tmp_path)
    assert run("collect", str(root)).exit_code == 1
    (root / "mail.jsonl").write_bytes(whole)  # mended since: the ratings are not
    said = (f"collect read mail.jsonl while its line {line} held no record sheetflow "
            "wrote (damaged or edited by hand)")
    analyzed = run("analyze", str(root))
    assert analyzed.exit_code == 1, analyzed.output
    assert f"warning: {said}" in analyzed.stderr
    assert (f"then run 'sheetflow collect {root}' and 'sheetflow analyze {root}' again"
            in " ".join(analyzed.stderr.split()))
    # said once on the screen, as the warning: it was also printed as a note line
    assert said not in analyzed.stdout
    assert (analyzed.stdout + analyzed.stderr).count(said) == 1
    assert "panel: 3 of 3 expected raters" in analyzed.stdout  # the rest is still shown
    summary = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    assert any(str(c.value).startswith(f"note: {said}") for row in summary.iter_rows()
               for c in row), "not on the Summary sheet"
    result, doc = run_json("analyze", str(root))
    assert result.exit_code == 1 and doc["ok"] is False
    assert doc["summary"]["panel"]["journal_damaged"] == [line]
    # once among the warnings, once among the panel's notes (summary.json's object)
    assert [w for w in doc["warnings"] if said in w] == [doc["warnings"][0]]
    assert doc["warnings"][0].startswith(said)
    assert [n for n in doc["summary"]["panel"]["notes"] if said in n] \
        == [doc["warnings"][0]]
    # collected again from the mended journal: nothing to say, exit 0
    assert run("collect", str(root)).exit_code == 0
    again = run("analyze", str(root))
    assert again.exit_code == 0, again.output
    assert "held no record" not in again.output + again.stderr
    assert recorded_journal_damage({}) == []  # a record from before the field: none
    for bad in ("7", [0], [True], ["7"]):  # not line numbers: named, never taken as none
        try:
            recorded_journal_damage({"journal_damaged": bad})
        except OutputError as exc:
            assert "collection.json is unreadable (journal_damaged" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was taken")


def test_analyze_refusing_an_incomplete_panel_names_the_damaged_journal_line(tmp_path):
    """Which of a rater's two files stands, and so who is missing, rests on the journal:
    analyze refused the incomplete panel without a word of the line collect read that
    held no record."""
    root, line, _ = _fetched_with_a_cut_record(tmp_path)
    next((root / L.RETURNS_DIR).glob("*.xlsx")).unlink()  # a pack not back
    assert run("collect", str(root)).exit_code == 1
    refused = run("analyze", str(root))
    assert refused.exit_code == 1, refused.output
    assert "the panel is incomplete, so nothing was unsealed" in refused.stderr
    assert (f"Also: collect read mail.jsonl while its line {line} held no record "
            "sheetflow wrote") in " ".join(refused.stderr.split())


def test_each_command_reads_mail_jsonl_once(tmp_path, monkeypatch):
    """send reminders read mail.jsonl four times in one run (send, remind, status and
    collect each read it again): the records checked for damage were not the records
    the reminders were decided by. collect read it twice, status and remind too."""
    import sheetflow.packs.journal as journal_module

    root = mail_study(tmp_path / "s")
    reads = []
    real = journal_module.records

    def counted_records(*args, **kwargs):
        reads.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(journal_module, "records", counted_records)
    with smtp_server() as (port, server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]
        assert run("send", str(root), "invitations", "--yes", *smtp).exit_code == 0
        first = packs(root)[0]
        (root / L.RETURNS_DIR / first["file"]).write_bytes(filled(root, first))
        counts = {}
        for args in (["send", str(root), "reminders", "--dry-run", *smtp, "--min-days", "0"],
                     ["send", str(root), "reminders", "--yes", *smtp, "--min-days", "0"],
                     ["remind", str(root), "--min-days", "0"], ["status", str(root)],
                     ["collect", str(root)]):
            reads.clear()
            result = run(*args)
            assert result.exit_code in (0, 1), (args, result.output)
            counts[" ".join(a for a in args[:4] if a != str(root))] = len(reads)
        assert len(server.delivered) == 5  # the two reminders went
    assert counts == dict.fromkeys(counts, 1), counts


TORN = b'{"event": "sending", "kind": "invi'
"""The start of a record whose write a crash cut off: no line end."""


def test_a_torn_last_line_is_set_aside_by_send_which_goes_on(tmp_path):
    """A crash inside one journal write left a last line without its line end: the
    next append closed it off, and from then on send, remind and fetch refused the
    journal (a damaged line 1) until it was edited. It is moved into mail.jsonl.torn-1
    before send appends, named in a warning, and the rerun is not refused."""
    root = mail_study(tmp_path / "s")
    (root / "mail.jsonl").write_bytes(TORN)
    with smtp_server() as (port, server):
        smtp = ["--smtp", f"127.0.0.1:{port}", "--smtp-security", "none"]
        sent = run("send", str(root), "invitations", "--yes", *smtp)
        assert sent.exit_code == 0, sent.output
        assert len(server.delivered) == 3
        assert "warning: mail.jsonl: its last line was cut off" in sent.stderr
        assert "moved to mail.jsonl.torn-1" in sent.stderr
        again = run("send", str(root), "reminders", "--yes", "--min-days", "0", *smtp)
        assert again.exit_code == 0, again.output
        assert "cut off" not in again.stderr and len(server.delivered) == 6
    assert (root / "mail.jsonl.torn-1").read_bytes() == TORN
    assert not (root / "mail.jsonl.torn-2").exists()
    assert run("remind", str(root)).exit_code in (0, 1)  # no refusal (exit 3)
    assert all(json.loads(line) for line in (root / "mail.jsonl").read_bytes().splitlines())


def test_a_torn_last_line_is_set_aside_by_fetch_and_named_in_its_json(tmp_path):
    """As send, fetch moves a torn last line aside before it appends; its warning is in
    the --json document. A damaged line in the middle still stops it."""
    root = mail_study(tmp_path / "s")
    (root / "mail.jsonl").write_bytes(b'{"event": "x"}\n' + TORN)
    pack = packs(root)[0]
    email = {r.id: r.email for r in load_study(root).raters}[pack["rater_id"]]
    message = tmp_path / "m.eml"
    message.write_bytes(reply(email, [(pack["file"], filled(root, pack))]))
    result, doc = run_json("fetch", str(root), str(message))
    assert result.exit_code == 0, result.output
    assert any("moved to mail.jsonl.torn-1" in w for w in doc["warnings"])
    assert (root / "mail.jsonl.torn-1").read_bytes() == TORN
    lines = (root / "mail.jsonl").read_bytes().splitlines()
    assert lines[0] == b'{"event": "x"}' and json.loads(lines[1])["event"] == "received"
    # a line torn in the middle is no interrupted append: refused, named by its number
    (root / "mail.jsonl").write_bytes(b'{"event": "x"}\n' + TORN + b"\n" + lines[1] + b"\n")
    refused = run("fetch", str(root), str(message))
    assert refused.exit_code == 3 and "mail.jsonl: line 2 holds no record" in refused.stderr


def test_a_fetch_the_server_refuses_still_names_the_torn_line_it_set_aside(tmp_path):
    """fetch moves a torn last line aside before it opens the source: when the server
    then cannot be reached (exit 3), the journal was still cut back and the line
    moved, so the warning naming where it went is printed there too, not only after a
    fetch that went through."""
    root = mail_study(tmp_path / "s")
    (root / "mail.jsonl").write_bytes(b'{"event": "x"}\n' + TORN)
    down = run("fetch", str(root), "--imap", f"127.0.0.1:{free_port()}", "--imap-security",
               "none", "--username", "desk", env={"SHEETFLOW_IMAP_PASSWORD": "pw"})
    assert down.exit_code == 3, down.output
    assert (root / "mail.jsonl.torn-1").read_bytes() == TORN
    assert "moved to mail.jsonl.torn-1" in down.stderr
