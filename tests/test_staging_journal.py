"""The journaled commit of an output set against other runs (sheetflow/staging.py).

What another run may do meanwhile: a run started in the same process id (each run is
process 1 in a container), a command that recovers while a commit writes its record,
a file system that has no flock.
"""

from __future__ import annotations

import errno

import pytest

from sheetflow import staging
from sheetflow.errors import WriteError


def test_two_runs_stage_a_file_under_different_names(tmp_path, monkeypatch):
    """Staged and kept-aside names carry more than the process id: a stale record of
    an earlier run with the same id named this run's own staged files."""
    monkeypatch.setattr(staging.os, "getpid", lambda: 1)
    target = tmp_path / "out.txt"
    first, second = staging.OutputSet(tmp_path), staging.OutputSet(tmp_path)
    assert first.stage(target) != second.stage(target)


def test_recovery_leaves_the_record_a_live_commit_is_writing(tmp_path):
    """A command recovering while another run writes its commit record must not take
    the record's temporary file from under it (the commit then failed and was undone)."""
    writing = tmp_path / f"{staging.JOURNAL}.1-0a0b0c0d{staging.PARTIAL}"
    writing.write_text("{}", encoding="utf-8")
    held = staging._lock(tmp_path)  # the live commit holds the folder
    try:
        with pytest.raises(WriteError, match="another sheetflow run"):
            staging.recover_interrupted(tmp_path)
        assert writing.exists()
    finally:
        staging._unlock(held)
    assert staging.recover_interrupted(tmp_path) is None  # stopped run: now cleared
    assert not writing.exists()


def test_a_file_system_without_flock_still_commits(tmp_path, monkeypatch):
    """Some network mounts refuse flock (ENOLCK): the set still goes in whole."""
    def no_locks(fd, how):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(staging.fcntl, "flock", no_locks)
    (tmp_path / "a.txt").write_text("old", encoding="utf-8")
    with staging.OutputSet(tmp_path) as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new", encoding="utf-8")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_staged_file_is_named_by_the_name_it_will_have(tmp_path):
    """A write error on a staged file names the output, not its hidden staged name."""
    from sheetflow.errors import known_name

    target = tmp_path / "out" / "analysis.xlsx"
    staged = staging.OutputSet(tmp_path).stage(target)
    assert known_name(str(staged)) == str(target)
