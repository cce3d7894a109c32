"""Outputs whole or not at all, as one set, one run at a time.

A collect killed while it writes never leaves analyze able to use a partial or
mismatched ratings table; two collects at once never leave a corrupt workbook; the
study lock makes a second run wait, then refuse with one line.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from roundtrip_helpers import paired_study_with_filled_packs

import sheetflow
from sheetflow.analysis import analyze
from sheetflow.cli import cli
from sheetflow.collect.outputs import (
    COLLECTION_FILE,
    OutputError,
    verify_ratings,
)
from sheetflow.collect.returns import file_digest
from sheetflow.collect.run import collect
from sheetflow.collect.run_lock import study_lock
from sheetflow.errors import MissingStepError, WriteError
from sheetflow.spec import init_study
from sheetflow.staging import OutputSet

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A paired study with three filled returns kept aside in ``filled/``."""
    return paired_study_with_filled_packs(tmp_path_factory.mktemp("outputs") / "study")


def _study(made: Path, tmp: Path, returns: int) -> Path:
    root = tmp / "study"
    shutil.copytree(made, root)
    (root / "returns").mkdir(exist_ok=True)
    for path in sorted((root / "filled").iterdir())[:returns]:
        shutil.copyfile(path, root / "returns" / path.name)
    return root


_KILLED_CHILD = r"""
import os, sys, time
from pathlib import Path
import sheetflow.collect.run as collect_module
import sheetflow.collect.outputs as outputs

root, where = Path(sys.argv[1]), sys.argv[2]

def pause():
    (root / "reached").write_text("x")
    time.sleep(600)

if where == "mid-csv":  # half of ratings.csv written, then killed
    real_write = collect_module.Ratings.write_csv
    def cut(self, path):
        real_write(self, path)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
        pause()
    collect_module.Ratings.write_csv = cut
else:  # the new ratings.csv in place, the rest of the set not yet
    real_replace = os.replace
    def replace(src, dst):
        real_replace(src, dst)
        if str(dst).endswith("ratings.csv"):
            pause()
    outputs.os.replace = replace
collect_module.collect(root)
"""


def _killed_collect(root: Path, where: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(root), where],
                             env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not (root / "reached").exists():
            assert child.poll() is None, "the child collect ended before the kill point"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child and its reader processes
        child.wait()
    (root / "reached").unlink()


def test_a_collect_killed_mid_write_leaves_the_previous_set_whole(made, tmp_path):
    root = _study(made, tmp_path, 2)
    collect(root)
    before = (root / "out" / "ratings.csv").read_bytes()
    shutil.copytree(root / "filled", root / "returns", dirs_exist_ok=True)
    _killed_collect(root, "mid-csv")
    assert (root / "out" / "ratings.csv").read_bytes() == before  # the old table, whole
    # and not analysed as if current: the returns it lacks are named
    with pytest.raises(MissingStepError, match="1 file the last collect did not read"):
        analyze(root, allow_partial=True)
    assert list((root / "out").glob(".*.partial"))  # the half-written one, hidden
    collect(root)
    assert not list((root / "out").glob(".*.partial"))  # removed by the next run
    assert (root / "out" / "ratings.csv").read_bytes() != before


_INTERRUPTED_CHILD = r"""
import sys, time
from pathlib import Path
import sheetflow.collect.run as collect_module
from sheetflow.cli import main

root = Path(sys.argv[1])
real_write = collect_module.Ratings.write_csv
def paused(self, path):  # half the outputs staged when Ctrl-C comes
    real_write(self, path)
    (root / "reached").write_text("x")
    time.sleep(600)
collect_module.Ratings.write_csv = paused
sys.argv = ["sheetflow", "collect", str(root), *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize("json_output", [False, True])
def test_ctrl_c_exits_130_in_one_line_and_writes_nothing(made, tmp_path, json_output):
    """Click would say "Aborted!" and exit 1, the code for data problems."""
    root = _study(made, tmp_path, 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_CHILD, str(root),
                              *(["--json"] if json_output else [])], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = time.monotonic() + 180
    while not (root / "reached").exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGINT)  # what Ctrl-C sends: the whole process group
    out, err = child.communicate(timeout=120)
    line = "interrupted (Ctrl-C) before the end: run the same command again"
    assert child.returncode == 130, err
    assert err.decode() == f"\n{line}\n"
    if json_output:
        assert json.loads(out) == {"ok": False, "exit_code": 130, "errors": [line]}
    assert not (root / "out").exists()  # nor the lock file and out/ the run made


def test_a_collect_killed_between_replaces_is_refused_then_rolled_back(made, tmp_path):
    """Killed with the new ratings.csv in place and the rest of the set not: analyze
    (the library) refuses the mixed set; the next command rolls the set back to the
    previous collect's, whole, and says which run was interrupted."""
    root = _study(made, tmp_path, 2)
    collect(root)
    before = {p.name: p.read_bytes() for p in (root / "out").iterdir() if p.is_file()}
    shutil.copytree(root / "filled", root / "returns", dirs_exist_ok=True)
    _killed_collect(root, "between-replaces")
    with pytest.raises(OutputError, match=r"does not match out/collection\.json"):
        analyze(root)  # the broken set is named before the panel is looked at
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert "warning: collect was interrupted at " in result.output
    assert "the previous ones were restored" in result.output
    assert "Traceback" not in result.output
    assert (root / "out" / "ratings.csv").read_bytes() == before["ratings.csv"]
    assert (root / "out" / COLLECTION_FILE).read_bytes() == before[COLLECTION_FILE]
    left = [p.name for p in (root / "out").glob(".*")]
    assert not [n for n in left if n.endswith((".previous", ".partial", ".json"))], left


def test_a_table_cut_or_without_record_is_refused(made, tmp_path):
    root = _study(made, tmp_path, 3)
    collect(root)
    ratings = root / "out" / "ratings.csv"
    verify_ratings(root)
    ratings.write_bytes(ratings.read_bytes()[: ratings.stat().st_size // 2])
    with pytest.raises(OutputError, match="cut off or changed"):
        analyze(root)
    (root / "out" / COLLECTION_FILE).unlink()
    with pytest.raises(OutputError, match=r"collection\.json is missing"):
        analyze(root)


def test_collection_record_names_the_table_and_its_sources(made, tmp_path):
    root = _study(made, tmp_path, 3)
    result = collect(root)
    record = json.loads((root / "out" / COLLECTION_FILE).read_text(encoding="utf-8"))
    assert record["ratings"] == {"file": "ratings.csv", "rows": len(result.ratings),
                                 "sha256": file_digest(root / "out" / "ratings.csv")}
    assert sorted(f["file"] for f in record["files"]) == \
        sorted(p.name for p in (root / "returns").iterdir())


def test_a_second_run_waits_for_the_lock_then_refuses(made, tmp_path):
    root = _study(made, tmp_path, 1)
    with study_lock(root, "analyze"):
        started = time.monotonic()
        with pytest.raises(OutputError, match="another sheetflow collect, analyze, plan, "
                                              "lock, send or import-judges"):
            collect(root, lock_wait=0.5)
        assert time.monotonic() - started >= 0.5
    assert not (root / "out" / "ratings.csv").exists()
    collect(root, lock_wait=0.5)  # released: runs


def test_the_lock_message_names_every_command_that_takes_the_lock(tmp_path):
    """Each ``study_lock(root, "<command>")`` in the package is a command the message
    names: a plan waiting on an analyze said only "collect or analyze"."""
    import ast

    from sheetflow.collect.run_lock import LOCKING_COMMANDS

    package = Path(sheetflow.__file__).parent
    callers = {node.args[1].value for path in package.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "study_lock"
               and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)}
    assert callers == set(LOCKING_COMMANDS)
    with study_lock(tmp_path, "plan"), pytest.raises(OutputError) as refused, \
            study_lock(tmp_path, "analyze", wait=0):
        pass
    assert all(f"{c}" in str(refused.value) for c in LOCKING_COMMANDS)
    assert "analyze waited 0 s" in str(refused.value)


_CONCURRENT_CHILD = r"""
import sys
from sheetflow.collect.run import collect
collect(sys.argv[1], sys.argv[2:], lock_wait=120)
"""


def _tree(root: Path) -> list[str]:
    """Every path under ``root``, relative and sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize(("args", "spec"), [
    (["plan", "--expected", "1.5"], None),  # options refused once the study is read
    (["plan", "--measure", "nosuch"], None),
    (["plan"], "[study\n"),  # a study that does not load
    (["analyze"], None),  # no seal yet: generate first
    (["analyze"], "[study\n"),
    (["collect"], None),  # no manifest yet: generate first
])
@pytest.mark.parametrize("had_out", [False, True])
def test_a_refused_run_leaves_the_folder_as_it_was(tmp_path, args, spec, had_out):
    """A refused plan (a bad option or study) left out/.lock behind, and out/ when the
    study had none: the study lock is taken before the study is read. So did analyze
    and collect refused before generate. A run that fails now removes the lock file and
    out/ it made, so the folder holds exactly what it held before."""
    root = init_study(tmp_path / "study", "paired-rubric")
    if spec is not None:
        (root / "study.toml").write_text(spec, encoding="utf-8")
    if had_out:
        (root / "out").mkdir()
        (root / "out" / "notes.txt").write_text("kept", encoding="utf-8")
    before = _tree(root)
    result = CliRunner().invoke(cli, [args[0], str(root), *args[1:]])
    assert result.exit_code in (1, 2), result.output
    assert result.output.startswith("error: "), result.output
    assert _tree(root) == before


def _opened_by(pid: int, path: Path) -> bool:
    """Whether process ``pid`` holds ``path`` open (Linux: its /proc fd links)."""
    with contextlib.suppress(OSError):
        return any(os.path.realpath(fd) == str(path.resolve())
                   for fd in Path(f"/proc/{pid}/fd").iterdir())
    return False


_WAITING_CHILD = r"""
import sys, time
from sheetflow.collect.run_lock import study_lock
with study_lock(sys.argv[1], "collect", wait=120):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_lock_file_removed_by_a_failed_run_is_not_held_by_the_run_waiting(tmp_path):
    """A run waiting on out/.lock while the run holding it fails and removes the file
    must not go on holding the removed file: a third run would make a new one and run
    at the same time. The waiting run locks the file that is there."""
    root = tmp_path / "study"
    root.mkdir()
    waiting = subprocess.Popen([sys.executable, "-c", _WAITING_CHILD, str(root)],
                               env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.PIPE, text=True)
    try:
        with pytest.raises(RuntimeError), study_lock(root, "plan"):
            deadline = time.monotonic() + 120
            while not _opened_by(waiting.pid, root / "out" / ".lock"):
                assert waiting.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            raise RuntimeError("refused")  # removes the file the child waits on
        assert waiting.stdout.readline() == "held\n"
        with pytest.raises(OutputError, match="another sheetflow"), \
                study_lock(root, "analyze", wait=0.3):
            pass
    finally:
        waiting.kill()
        waiting.communicate()


def test_two_concurrent_collects_leave_a_whole_set(made, tmp_path):
    root = _study(made, tmp_path, 0)
    files = sorted((root / "filled").iterdir())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sets = ([str(p) for p in files[:1]], [str(p) for p in files[1:]])
    for _ in range(2):
        children = [subprocess.Popen([sys.executable, "-c", _CONCURRENT_CHILD, str(root),
                                      *paths], env=env) for paths in sets]
        assert [c.wait(timeout=300) for c in children] == [0, 0]
        wb = openpyxl.load_workbook(root / "out" / "validation.xlsx")
        named = sorted(str(c.value) for c in wb["Files"]["A"][1:])
        data = verify_ratings(root).data
        record = json.loads((root / "out" / COLLECTION_FILE).read_text(encoding="utf-8"))
        assert named == sorted(f["file"] for f in record["files"])
        assert named in ([Path(p).name for p in s] for s in sets)
        assert data.count(b"\r\n") > 1


def test_an_output_set_that_fails_leaves_the_old_files(tmp_path):
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "b.txt").write_text("old b")
    with pytest.raises(RuntimeError), OutputSet() as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new a")
        raise RuntimeError("stopped before b")
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_an_output_set_that_fails_removes_the_folders_it_made_and_no_other(tmp_path):
    """An interrupted analyze left an empty out/tables/: the folders a failed set made
    go with its files; a folder that was there, or holds another file, stays."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "kept").mkdir()
    with pytest.raises(KeyboardInterrupt), OutputSet() as outputs:
        outputs.stage(tmp_path / "out" / "tables" / "deep" / "a.csv").write_text("a")
        outputs.stage(tmp_path / "out" / "kept" / "b.csv").write_text("b")
        outputs.stage(tmp_path / "out" / "other" / "c.csv").write_text("c")
        (tmp_path / "out" / "other" / "someone-elses.txt").write_text("not ours")
        raise KeyboardInterrupt
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "out", "out/kept", "out/other", "out/other/someone-elses.txt"]


def test_a_folder_in_an_outputs_place_stops_the_set_before_anything_moves(tmp_path):
    """out/ratings.csv made a folder: the set is refused whole, in one line naming it,
    the other outputs keep their old content and no staged file is left behind."""
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "b.txt").mkdir()
    with pytest.raises(WriteError, match=r"b.txt: a folder where sheetflow writes a file; "
                                         r"move or rename it, then run again"), \
            OutputSet() as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new a")
        outputs.stage(tmp_path / "b.txt").write_text("new b")
    assert (tmp_path / "a.txt").read_text() == "old a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    (tmp_path / "out").write_text("not a folder")
    with pytest.raises(WriteError, match=r"out: a file where sheetflow keeps a folder of "
                                         r"outputs; move or rename it"):
        OutputSet().stage(tmp_path / "out" / "tables" / "c.csv")


def test_a_file_where_out_should_be_is_named_in_one_line(made, tmp_path):
    root = _study(made, tmp_path, 1)
    shutil.rmtree(root / "out", ignore_errors=True)
    (root / "out").write_text("a file named out")
    for command in ("collect", "analyze"):
        result = CliRunner().invoke(cli, [command, str(root)])
        assert result.exit_code == 3, result.output
        assert result.output.strip().splitlines() == [
            f"error: {root / 'out'}: file exists; a file is where sheetflow needs a "
            "folder: move or rename it, then run again"]


def test_status_names_a_file_where_out_should_be_and_not_a_run_record(made, tmp_path):
    root = _study(made, tmp_path, 1)
    shutil.rmtree(root / "out", ignore_errors=True)
    (root / "out").write_text("a file named out")
    result = CliRunner().invoke(cli, ["status", str(root)])
    warnings = [line for line in result.output.splitlines() if line.startswith("warning")]
    assert warnings == [f"warning: {root / 'out'} is a file where sheetflow needs a folder: "
                        "move or rename it"], result.output


@pytest.mark.parametrize(("error", "line"), [
    (PermissionError(errno.EACCES, "Permission denied", "/s/out/x.csv"),
     "/s/out/x.csv: permission denied; fix the permissions (or run as a user who may "
     "read and write there), then run again"),
    (OSError(errno.ENOSPC, "No space left on device", "/s/out/x.csv"),
     "/s/out/x.csv: no space left on device; free some space, then run again"),
    (IsADirectoryError(errno.EISDIR, "Is a directory", "/s/out/.x.1.partial", None,
                       "/s/out/x.csv"),
     "/s/out/x.csv: is a directory; a folder is where sheetflow needs a file: move or "
     "rename it, then run again"),
    (OSError(errno.EIO, "Input/output error", "/s/out/x.csv"),
     "/s/out/x.csv: input/output error; run again with --debug for details")])
def test_operating_system_refusals_name_the_path_and_what_to_do(error, line):
    from sheetflow.cli.common import os_error_line

    assert os_error_line(error) == line


def test_an_analysis_that_stops_while_writing_leaves_the_previous_outputs(
        made, tmp_path, monkeypatch):
    import sheetflow.report.outputs as report

    root = _study(made, tmp_path, 3)
    collect(root)
    analysis = analyze(root)
    out = root / "out"
    report.write_analysis_outputs(analysis, out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def half_written(analysis, path, **options):
        Path(path).write_bytes(b"PK\x03\x04 cut off")
        raise OSError("No space left on device")

    monkeypatch.setattr(report, "write_analysis_workbook", half_written)  # analysis.xlsx
    with pytest.raises(OSError, match="No space left"):
        report.write_analysis_outputs(analysis, out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def _cells_of(folder: Path) -> dict[str, list]:
    """Every workbook's cell values and every CSV's text, by file name."""
    seen: dict[str, list] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".xlsx":
            wb = openpyxl.load_workbook(path)
            seen[path.name] = [(ws.title, list(ws.iter_rows(values_only=True)))
                               for ws in wb.worksheets]
        elif path.suffix in (".csv", ".json"):
            seen[path.name] = [path.read_text(encoding="utf-8")]
    return seen


def test_outputs_written_by_worker_processes_equal_those_written_here(made, tmp_path):
    from sheetflow.report import write_analysis_outputs

    root = _study(made, tmp_path, 3)
    collect(root)
    analysis = analyze(root)
    assert analysis.feedback  # the paired design gives one feedback workbook per rater
    here, workers = tmp_path / "here", tmp_path / "workers"
    written_here = write_analysis_outputs(analysis, here, workers=1)
    written_workers = write_analysis_outputs(analysis, workers, workers=2)
    assert [p.name for p in written_here] == [p.name for p in written_workers]
    assert _cells_of(here) == _cells_of(workers)
    assert not list(workers.glob(".*partial"))


def test_a_worker_that_fails_leaves_the_previous_outputs_and_names_the_file(made, tmp_path):
    from sheetflow.report import write_analysis_outputs

    root = _study(made, tmp_path, 3)
    collect(root)
    analysis = analyze(root)
    out = root / "out"
    write_analysis_outputs(analysis, out, workers=2)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    rater = sorted(analysis.feedback)[0]
    analysis.feedback[rater] = {"Overview": "not a table"}  # fails in the worker
    with pytest.raises(OutputError, match=rf"feedback-{rater}\.xlsx: AttributeError"):
        write_analysis_outputs(analysis, out, workers=2)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_analyze_and_write_gives_the_files_of_analyze_then_write(made, tmp_path):
    """The overlapped run (workers fed while the analysis goes on) writes the same."""
    from sheetflow.report import analyze_and_write, write_analysis_outputs

    root = _study(made, tmp_path, 3)
    collect(root)
    serial = tmp_path / "serial"
    expected = write_analysis_outputs(analyze(root), serial, workers=1)
    analysis, written, _ = analyze_and_write(root, workers=2)  # workers from the first part
    assert analysis.feedback
    assert [p.name for p in written] == [p.name for p in expected]
    want, got = _cells_of(serial), _cells_of(root / "out")
    assert {name: got.get(name) for name in want} == want
    assert not list((root / "out").glob(".*partial"))


def test_analyze_and_write_fails_whole_when_a_worker_fails(made, tmp_path, monkeypatch):
    import sheetflow.report.early as early
    import sheetflow.report.overlap as overlap
    from sheetflow.report.feedback import write_feedback_tables

    root = _study(made, tmp_path, 3)
    collect(root)
    overlap.analyze_and_write(root, workers=2)
    before = {p.name: p.read_bytes() for p in (root / "out").iterdir() if p.is_file()}

    def broken_jobs(analysis, out):
        return [(write_feedback_tables, ("t", "R9", {"Overview": "not a table"},
                                         None), out / "feedback-R9.xlsx")]

    monkeypatch.setattr(early, "feedback_jobs", broken_jobs)
    with pytest.raises(OutputError, match=r"feedback-R9\.xlsx: AttributeError"):
        overlap.analyze_and_write(root, workers=2)
    assert {p.name: p.read_bytes() for p in (root / "out").iterdir() if p.is_file()} == before
    assert not list((root / "out").glob(".*partial"))


def test_analyze_and_write_with_a_broken_seal_writes_nothing(made, tmp_path):
    from sheetflow.errors import SealError
    from sheetflow.report import analyze_and_write

    root = _study(made, tmp_path, 3)
    collect(root)
    key = root / "sealed" / "key.json"
    key.write_text(key.read_text(encoding="utf-8") + " ", encoding="utf-8")  # not the sealed hash
    with pytest.raises(SealError):
        analyze_and_write(root, workers=2)
    assert not (root / "out" / "analysis.xlsx").exists()
    assert not list((root / "out").glob(".*partial"))


def test_large_tables_written_in_slices_join_to_the_same_bytes(made, tmp_path, monkeypatch):
    """Tables sliced by rows across workers (part files joined in order) equal the
    table written whole; no part file is left."""
    import sheetflow.report.early as early
    import sheetflow.report.large as large
    from sheetflow.report import analyze_and_write, write_analysis_outputs

    monkeypatch.setattr(large, "LARGE_ROWS", 10)  # every table of 11+ rows to CSV
    monkeypatch.setattr(early, "SPLIT_FROM", 1)  # and every one of them sliced
    root = _study(made, tmp_path, 3)
    collect(root)
    serial = tmp_path / "serial"
    expected = write_analysis_outputs(analyze(root), serial, workers=1)
    tables = sorted(p.name for p in expected if p.parent.name == "tables")
    assert len(tables) >= 3
    written = analyze_and_write(root, workers=3).written  # two workers, two slices each
    assert sorted(p.name for p in written if p.parent.name == "tables") == tables
    for name in tables:
        assert (root / "out" / "tables" / name).read_bytes() == \
            (serial / "tables" / name).read_bytes(), name
    assert not [p for p in (root / "out").rglob("*partial*")]


def test_workers_start_from_about_two_seconds_of_writing(monkeypatch):
    """On 4 CPUs workers start only for outputs of about 2 s of writing or more, at the
    costs measured for report/jobs.py (a CSV cell 0.085 us, a feedback workbook's cell
    3.5 us): a table of 20 million CSV cells (1.7 s) or 300 raters' feedback workbooks
    of 1,620 cells each (1.7 s) are written here, 500 raters' workbooks (2.8 s) by
    three workers."""
    import numpy as np
    import pandas as pd

    import sheetflow.report.jobs as jobs

    monkeypatch.setattr(jobs, "_cpus", lambda: 4)
    table = pd.DataFrame(np.zeros((2_000_000, 10), dtype=np.int8))
    assert jobs.worker_count(None, jobs.job_cost((table,))) == 0
    feedback = {"Your scores": pd.DataFrame(np.zeros((162, 10)))}  # 1,620 cells

    def workbooks(raters: int) -> int:
        return sum(jobs.job_cost(("title", f"R{r}", feedback, None)) for r in range(raters))

    assert jobs.worker_count(None, workbooks(300)) == 0
    assert jobs.worker_count(None, workbooks(500)) == 3


def test_a_table_is_sliced_across_workers_from_about_one_second_of_writing(tmp_path):
    """A table of 10 million CSV cells (0.85 s of writing) goes to one worker whole, one
    of 13 million (1.1 s) in a slice per worker."""
    import numpy as np
    import pandas as pd

    from sheetflow.report.early import EarlyWrites
    from sheetflow.report.large import write_csv

    weights: list[int] = []

    class Pool:
        size = 2

        def submit(self, job, weight):
            weights.append(weight)

    class Staging:
        def stage(self, path):
            return path.with_name(f".{path.name}.1.partial")

    early = EarlyWrites(tmp_path, Staging(), None)
    early._pool = Pool()
    for rows in (1_000_000, 1_300_000):
        early.send((write_csv, (pd.DataFrame(np.zeros((rows, 10), dtype=np.int8)),),
                    tmp_path / f"{rows}.csv"))
    assert weights == [10_000_000, 6_500_000, 6_500_000]


def test_workers_count_this_process_and_share_no_cpu_with_the_analysis(monkeypatch):
    """``workers`` counts this process; by default a worker per CPU beyond this one's,
    none for small outputs or with fewer than two CPUs to spare."""
    import sheetflow.report.jobs as jobs

    assert jobs.worker_count(1, 10**9) == 0 and jobs.worker_count(3, 0) == 2
    for cpus, want in ((1, 0), (2, 0), (3, 2), (4, 3), (16, jobs.MAX_WORKERS)):
        monkeypatch.setattr(jobs, "_cpus", lambda n=cpus: n)
        assert jobs.worker_count(None, jobs.PARALLEL_FROM) == want
        assert jobs.worker_count(None, jobs.PARALLEL_FROM - 1) == 0
