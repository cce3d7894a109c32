"""Failures of the machine, not the data: each is one line naming the file, never a
traceback, and nothing half-written is left in place."""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.errors import WriteError, close_workbook, known_name
from sheetflow.packs import generate_packs
from sheetflow.spec import init_study
from sheetflow.workbook import layout as L


def _collected(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    return root


def _small_disk(limit: int):
    """In the child: files may grow to ``limit`` bytes; past it a write fails with
    EFBIG, as on a full disk (the signal that would kill the process is ignored)."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_analyze_on_a_full_disk_is_one_line_and_writes_nothing(tmp_path):
    root = _collected(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "sheetflow", "analyze", str(root)],
                         capture_output=True, text=True, env=env, timeout=600,
                         preexec_fn=_small_disk(40_000))
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert len(errors) == 1 and "could not be written" in errors[0], run.stderr
    assert "out/analysis.xlsx: could not be written" in errors[0], errors  # not the staged name
    out = root / "out"
    assert not (out / "analysis.xlsx").exists() and not (out / "summary.json").exists()
    assert not list(out.rglob("*.partial"))


def test_a_deeply_nested_judge_record_is_one_line(tmp_path):
    root = init_study(tmp_path / "s", "judge-likert")
    generate_packs(root)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(root), str(deep)])
    text = result.output
    assert result.exit_code != 0 and "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "line 1" in lines[0] and "nested too deeply" in lines[0], text
    assert json.loads("[1]") == [1]  # the interpreter is unharmed


# --------------------------------------------------------------------------- full disks


class _FullFile:
    """A file opened for writing on a full disk: every write fails, as the system's
    write() does, with an error that names no file."""

    def __init__(self, file):
        self._file = file

    def write(self, _data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def __getattr__(self, name):
        return getattr(self._file, name)


def _disk_full_for(monkeypatch, name: str) -> None:
    """Writing a file whose name (staged or not) ends with ``name`` fails for lack of
    space (``Path.write_bytes`` and ``write_text`` open through ``Path.open``)."""
    real = Path.open

    def opened(self, mode="r", *args, **kwargs):
        file = real(self, mode, *args, **kwargs)
        if "w" in mode and known_name(str(self)).endswith(name):
            return _FullFile(file)
        return file
    monkeypatch.setattr(Path, "open", opened)


def _one_error(result) -> str:
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


def test_a_workbook_that_cannot_be_written_leaves_no_zip_file_open(tmp_path, monkeypatch):
    """Left open, xlsxwriter's zip file flushed to the full disk again when collected and
    printed "Exception ignored ... Traceback" after the error line."""
    import xlsxwriter
    import xlsxwriter.workbook

    opened = []

    class FullZip(zipfile.ZipFile):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

        def write(self, *_args, **_kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(xlsxwriter.workbook, "ZipFile", FullZip)
    path = tmp_path / ".book.xlsx.123.partial"
    workbook = xlsxwriter.Workbook(str(path))
    workbook.add_worksheet().write(0, 0, "x")
    with pytest.raises(WriteError, match=r"/book\.xlsx: could not be written"):
        close_workbook(workbook, path)
    assert opened and all(z.fp is None for z in opened)  # closed: nothing left to flush


def test_generate_on_a_full_disk_names_the_pack_and_leaves_nothing(tmp_path, monkeypatch):
    """The pack's failure is the one reported, with its folder: the manifest written
    beside it used to fail its own close too, replacing the error with one that named no
    file and leaving ``packs/.manifest.json.PID.partial.partial`` behind."""
    import xlsxwriter.workbook

    class FullZip(zipfile.ZipFile):
        def write(self, *_args, **_kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    root = init_study(tmp_path / "s", "keep-known")
    real = Path.open

    def opened(self, mode="r", *args, **kwargs):
        file = real(self, mode, *args, **kwargs)
        if "w" in mode and "manifest.json" in self.name:  # its last flush fails too
            return _FullOnClose(file)
        return file
    monkeypatch.setattr(Path, "open", opened)
    monkeypatch.setattr(xlsxwriter.workbook, "ZipFile", FullZip)
    result = CliRunner().invoke(cli, ["generate", str(root)])
    assert result.exit_code == 3, result.output
    assert re.search(r"packs/[^ ]+\.xlsx: could not be written", _one_error(result))
    packs = root / "packs"
    assert not packs.exists() or not any(packs.iterdir()), list(packs.iterdir())


class _FullOnClose:
    """A file whose buffered bytes cannot be flushed when it is closed (a full disk)."""

    def __init__(self, file):
        self._file = file

    def close(self):
        self._file.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._file, name)


@pytest.mark.parametrize("name", ["manifest.json", "mailing-list.csv", "key.sha256"])
def test_generate_names_the_file_a_full_disk_stopped(tmp_path, monkeypatch, name):
    root = init_study(tmp_path / "s", "keep-known")
    _disk_full_for(monkeypatch, name)
    result = CliRunner().invoke(cli, ["generate", str(root)])
    assert result.exit_code == 3, result.output
    line = _one_error(result)
    assert f"/{name}: no space left on device; free some space, then run again" in line, line
    assert not list(root.rglob("*.partial")) and not (root / "packs" / name).exists()


def test_collect_names_the_file_a_full_disk_stopped(tmp_path, monkeypatch):
    root = init_study(tmp_path / "s", "keep-known")
    generate_packs(root)
    return_every_pack(root)
    _disk_full_for(monkeypatch, "out/ratings.csv")
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 3, result.output
    assert "out/ratings.csv: no space left on device" in _one_error(result)
    assert not (root / "out" / "ratings.csv").exists()
    assert not list(root.rglob("*.partial"))


def test_remind_names_the_draft_a_full_disk_stopped(tmp_path, monkeypatch):
    root = init_study(tmp_path / "s", "keep-known")
    generate_packs(root)
    _disk_full_for(monkeypatch, ".eml")
    result = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"])
    assert result.exit_code == 3, result.output
    assert re.search(r"out/reminders/[^ ]+\.eml: no space left on device", _one_error(result))
    assert not list((root / "out").rglob("*.eml")) and not list(root.rglob("*.partial"))


def _disk_full_where(monkeypatch, full) -> None:
    """Writing a file whose path ``full(path)`` accepts fails for lack of space, after
    the file was created (whatever its staged name)."""
    real = Path.open

    def opened(self, mode="r", *args, **kwargs):
        file = real(self, mode, *args, **kwargs)
        return _FullFile(file) if "w" in mode and full(self) else file
    monkeypatch.setattr(Path, "open", opened)


def test_fetch_on_a_full_disk_names_the_return_and_leaves_no_part_of_it(tmp_path,
                                                                         monkeypatch):
    """The attachment was staged as ``returns/.NAME.partial``, left there when the disk
    was full, and the error line named no file."""
    from mail_helpers import mail_study, reply

    root = mail_study(tmp_path / "s")
    message = tmp_path / "reply.eml"
    message.write_bytes(reply("a@example.org", [("pack.xlsx", b"PK-filled")]))
    _disk_full_where(monkeypatch, lambda path: path.parent.name == L.RETURNS_DIR)
    result = CliRunner().invoke(cli, ["fetch", str(root), str(message)])
    assert result.exit_code == 3, result.output
    assert re.fullmatch(rf"error: {re.escape(str(root / L.RETURNS_DIR))}/\d{{8}}-\d{{6}}-"
                        r"pack\.xlsx: no space left on device; free some space, then run "
                        "again", _one_error(result)), result.output
    assert list((root / L.RETURNS_DIR).iterdir()) == []  # no .partial, no half file
    journal = root / "mail.jsonl"
    assert not journal.exists() or '"received"' not in journal.read_text(encoding="utf-8")


def test_mark_read_on_a_full_disk_names_the_record_and_leaves_no_part_of_it(tmp_path,
                                                                             monkeypatch):
    """``text-read.json`` was staged as ``.text-read.json.partial``, left there when the
    disk was full, and the error line named no file."""
    from roundtrip_helpers import first_return_changed, paired_study_every_pack_returned

    study = paired_study_every_pack_returned(tmp_path / "clean")

    def noted(wb):
        wb[L.INSTRUCTIONS_SHEET]["H2"] = "a note outside the answers"
    root, path = first_return_changed(study, tmp_path, noted)
    _disk_full_where(monkeypatch, lambda p: "text-read.json" in p.name)
    result = CliRunner().invoke(cli, ["collect", str(root), "--mark-read", path.name])
    assert result.exit_code == 3, result.output
    assert _one_error(result) == (f"error: {root / 'text-read.json'}: no space left on "
                                  "device; free some space, then run again")
    assert not (root / "text-read.json").exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith(".partial")]


# --------------------------------------------------------------------------- worker processes


def _full_disk_jobs(folder: Path) -> list:
    """A CSV table, a slice of one and a feedback workbook, each staged on a full disk:
    its staged path is a link to ``/dev/full``, where every write fails with ENOSPC."""
    import datetime as dt
    from functools import partial

    import pandas as pd

    from sheetflow.report.feedback import write_feedback_tables
    from sheetflow.report.large import write_csv

    table = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    jobs = [(write_csv, (table,), folder / ".pairs.csv.7-0badc0de.partial"),
            # a later slice of a large table, which a worker writes to a part file
            (partial(write_csv, header=False), (table,),
             folder / ".pairs.csv.7-0badc0de.p1.partial"),
            (write_feedback_tables, ("T", "R1", {"Totals": table}, dt.datetime(2026, 1, 1)),
             folder / ".feedback-R1.xlsx.7-0badc0de.partial")]
    for _, _, staged in jobs:
        staged.symlink_to("/dev/full")
    return jobs


def test_a_worker_that_cannot_write_raises_what_this_process_would(tmp_path):
    """A worker's full disk read "an output writer failed: pairs.csv: OSError: [Errno
    28] ...": no advice, the error's type in the text; the same failure in this process
    is one line naming the file and what to do."""
    from sheetflow.cli.common import os_error_line
    from sheetflow.report.parallel import run_jobs

    for write, args, staged in _full_disk_jobs(tmp_path):
        with pytest.raises((OSError, WriteError)) as here:
            write(*args, staged)
        with pytest.raises((OSError, WriteError)) as there:
            run_jobs([(write, args, staged)], 1, [1], lambda: None)
        assert type(there.value) is type(here.value)
        assert str(there.value) == str(here.value)
        if isinstance(here.value, OSError):
            assert os_error_line(there.value) == (
                f"{tmp_path / 'pairs.csv'}: no space left on device; free some space, then "
                "run again")
        else:
            assert str(there.value).startswith(f"{tmp_path / 'feedback-R1.xlsx'}: could not "
                                               "be written (")


def test_analyze_names_the_feedback_workbook_a_worker_could_not_write(tmp_path, monkeypatch):
    import sheetflow.report.early as early
    from sheetflow.staging import OutputSet

    root = _collected(tmp_path)
    monkeypatch.setattr(early, "worker_count", lambda workers, cost: 1)  # a worker writes
    real = OutputSet.stage

    def on_full_disk(self, path):
        staged = real(self, path)
        if Path(path).name.startswith("feedback-"):
            staged.symlink_to("/dev/full")
        return staged
    monkeypatch.setattr(OutputSet, "stage", on_full_disk)
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert result.exit_code == 3, result.output
    line = _one_error(result)
    assert re.fullmatch(rf"error: {re.escape(str(root / 'out'))}/feedback-[^ ]+\.xlsx: could "
                        r"not be written \(.*No space left on device.*\); free some space or "
                        "fix the folder's permissions, then run again", line), line
    out = root / "out"
    assert not list(out.glob("feedback-*")) and not list(out.rglob("*.partial"))
    assert not (out / "analysis.xlsx").exists()


def test_a_worker_failing_otherwise_names_its_output_and_the_error(tmp_path):
    from sheetflow.collect.outputs import OutputError
    from sheetflow.report.large import write_csv
    from sheetflow.report.parallel import run_jobs

    job = (write_csv, ("no table",), tmp_path / ".pairs.csv.7-0badc0de.partial")
    with pytest.raises(OutputError, match=r"^an output writer failed: pairs\.csv: "
                                          r"AttributeError: "):
        run_jobs([job], 1, [1], lambda: None)
