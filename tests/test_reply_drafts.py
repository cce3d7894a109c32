"""collect's reply drafts are whole with the record that names them, and ``send replies``
and ``status`` never take a draft the last collect did not make.

The drafts were a second set, written after ``out/collection.json``: a collect stopped
between the two left the record of one run beside the drafts of another, and ``send
replies`` listed the drafts on disk, so it sent a reply the rater's current file no
longer needed and none that was due, with exit 0.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import openpyxl
import pytest
from mail_helpers import mail_study, packs, run, run_json

from sheetflow.collect.run import collect
from sheetflow.collect.run_lock import study_lock
from sheetflow.workbook import layout as L


def _spoil(path: Path, pack: dict) -> None:
    """Put an answer off the list into the first list cell of ``pack``'s file."""
    cell = next(a for a in L.iter_answer_cells(pack) if a["validation"]["type"] == "list")
    wb = openpyxl.load_workbook(path)
    wb[cell["sheet"]][cell["cell"]].value = "Maybe"
    wb.save(path)


@pytest.fixture(scope="module")
def fixed_one(tmp_path_factory) -> Path:
    """A study collected once with EV-01's file in error (so out/feedback/EV-01.eml),
    then EV-01's file fixed and EV-02's spoiled in returns/, not collected yet: the
    next collect replaces EV-01's draft with EV-02's."""
    from sheetflow.demo.simulate import fill_packs

    root = mail_study(tmp_path_factory.mktemp("replies") / "s")
    files = {p.name: p for p in fill_packs(root, seed=5)}
    by_rater = {p["rater_id"]: p for p in packs(root)}
    first, second = (files[by_rater[r]["file"]] for r in ("EV-01", "EV-02"))
    clean = first.read_bytes()
    _spoil(first, by_rater["EV-01"])
    assert run("collect", str(root)).exit_code == 1
    assert (root / "out" / "feedback" / "EV-01.eml").is_file()
    first.write_bytes(clean)
    _spoil(second, by_rater["EV-02"])
    later = time.time() + 120  # changed since the collect, as a rater's new file is
    for path in (first, second):
        os.utime(path, (later, later))
    return root


def _copy(root: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(root, tmp_path / "s"))


def _would_send(root: Path) -> tuple[int, list[str], str]:
    """``send replies --dry-run``: its exit code, the raters it would send to, stderr."""
    result, doc = run_json("send", str(root), "replies", "--dry-run")
    return result.exit_code, [m["rater"] for m in doc.get("messages", [])], result.stderr


def _stopping_at(stop: int, real):
    """``os.replace`` that raises KeyboardInterrupt (Ctrl-C) at its ``stop``-th call."""
    calls = 0

    def replace(src, dst, *args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == stop:
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)

    return replace


def test_a_collect_stopped_anywhere_never_lets_send_take_a_stale_or_missing_draft(
        fixed_one, tmp_path, monkeypatch):
    """Stopped before each os.replace of its outputs in turn, collect leaves out/ such
    that send replies either refuses (exit not 0, naming what to run) or would send
    exactly the reply due now (EV-02's), never EV-01's stale one and never none."""
    real = os.replace
    stop = 0
    while True:
        stop += 1
        root = _copy(fixed_one, tmp_path / str(stop))
        with monkeypatch.context() as m:
            m.setattr(os, "replace", _stopping_at(stop, real))
            try:
                collect(root)
                finished = True
            except KeyboardInterrupt:
                finished = False
        code, raters, err = _would_send(root)
        if finished:
            assert (code, raters) == (0, ["EV-02"]), err
            break
        if raters != ["EV-02"]:  # refused, saying what to run
            assert raters == [] and code != 0, (stop, code, raters, err)
            assert f"run 'sheetflow collect {root}'" in err, (stop, err)
    assert stop > 4  # the drafts moved in with the outputs, before their record


def test_send_and_status_name_a_draft_collect_did_not_make_and_one_gone(fixed_one, tmp_path):
    """A draft left from an earlier collect is refused by send and named by status, even
    for a rater whose file now needs no reply; a draft collect made that is gone is
    named too, and nothing is sent."""
    root = _copy(fixed_one, tmp_path)
    stale = (root / "out" / "feedback" / "EV-01.eml").read_bytes()
    assert collect(root).feedback.written == [root / "out" / "feedback" / "EV-02.eml"]
    (root / "out" / "feedback" / "EV-01.eml").write_bytes(stale)
    (root / "out" / "feedback" / "EV-02.eml").unlink()
    again = f"run 'sheetflow collect {root}' again"
    old = f"out/feedback/EV-01.eml: EV-01's reply draft is not the one collect made last: {again}"
    gone = (f"out/feedback/EV-02.eml: EV-02's reply draft, which collect made last, is "
            f"missing: {again}, which writes it")

    code, raters, err = _would_send(root)
    assert code == 3 and raters == [], err
    assert f"error: {old}" in err.splitlines() and f"error: {gone}" in err.splitlines()
    assert "nothing was sent" in err

    status, doc = run_json("status", str(root))
    assert status.exit_code == 1
    assert doc["reply_drafts"] == [old]  # EV-01's file is clean: named apart
    by_rater = {r["rater"]: r for r in doc["raters"]}
    assert by_rater["EV-02"]["reply_held"] == gone  # due, and what send would not send
    assert f"warning: {old}" in run("status", str(root)).stderr


def test_send_waits_for_the_study_lock(fixed_one, tmp_path):
    """send read the drafts while a collect could be replacing them: it now holds the
    study lock, as collect and analyze do, and waits for a collect to finish."""
    root = _copy(fixed_one, tmp_path)
    collect(root)
    done: list[tuple[int, list[str], str]] = []
    with study_lock(root, "collect"):
        worker = threading.Thread(target=lambda: done.append(_would_send(root)))
        worker.start()
        worker.join(1.5)
        assert worker.is_alive() and not done  # waiting for the lock
    worker.join(60)
    assert done and done[0][:2] == (0, ["EV-02"]), done
