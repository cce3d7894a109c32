"""generate's set survives an interruption: whole, or the previous one restored.

The packs, drafts, manifest and seal go in by one journaled commit (see
:mod:`sheetflow.staging`): stopped at any point (Ctrl-C, a crash, a full disk, a kill)
the previous set stays or comes back whole, secret included, and the next command says
that generate was interrupted rather than that something was edited. A new set also
removes the packs and drafts of the previous one that it does not vouch for.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.packs import generate_packs, verify_seal
from sheetflow.spec import init_study
from sheetflow.workbook import layout as L

JOURNAL = ".sheetflow-commit.json"  # sheetflow.staging's record of a commit under way
ROOT = Path(__file__).resolve().parent.parent
MOREAU = "external-validation-scores-Moreau-2026-09-15"  # EV-03's pack, as named


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A paired-rubric study generated with drafts (three raters)."""
    root = init_study(tmp_path_factory.mktemp("generated") / "s", "paired-rubric")
    generate_packs(root, emails=True)
    return root


def _copy(generated: Path, tmp_path: Path) -> Path:
    root = tmp_path / "s"
    shutil.copytree(generated, root, symlinks=True)
    return root


def _set_of(root: Path) -> dict[str, bytes]:
    """Every file of the packs, drafts and seal, hidden ones too, by path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for d in (L.PACKS_DIR, "sealed") for p in sorted((root / d).rglob("*"))
            if p.is_file()}


def _drop_ev03(root: Path) -> None:
    raters = root / "raters.csv"
    lines = raters.read_text(encoding="utf-8").splitlines(keepends=True)
    raters.write_text("".join(line for line in lines if not line.startswith("EV-03")),
                      encoding="utf-8")


def _stop_at_replace(monkeypatch, n: int) -> None:
    """Ctrl-C just before the n-th os.replace of the run."""
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("n", [3, 8, 14, 21])
def test_generate_stopped_mid_commit_leaves_the_previous_set_whole(generated, tmp_path,
                                                                   monkeypatch, n):
    """Ctrl-C between two replaces of `generate --force` (the 8th: the new secret and
    packs in, the old key and plan lock not yet) puts every previous file back."""
    root = _copy(generated, tmp_path)
    before = _set_of(root)
    _drop_ev03(root)
    _stop_at_replace(monkeypatch, n)
    with pytest.raises(KeyboardInterrupt):
        generate_packs(root, emails=True, force=True)
    monkeypatch.undo()
    assert _set_of(root) == before
    assert not (root / JOURNAL).exists()


_KILLED_CHILD = """
import os, signal, sys
real, calls = os.replace, []
def replace(src, dst):
    calls.append(dst)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst)
os.replace = replace
from sheetflow.packs import generate_packs
generate_packs(sys.argv[1], emails=True, force=True)
"""


@pytest.mark.parametrize("n", [8, 14, 20])
def test_a_generate_killed_mid_commit_is_named_and_rolled_back_by_verify(generated, tmp_path,
                                                                         n):
    """Killed (nothing in the process runs after) with packs/ and sealed/ half replaced:
    verify restores the previous seal, secret included, says generate was interrupted
    and claims no edit."""
    root = _copy(generated, tmp_path)
    before = _set_of(root)
    secret = (root / "sealed" / "secret").read_bytes()
    _drop_ev03(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", _KILLED_CHILD, str(root), str(n)],
                         env=env, timeout=300)
    assert run.returncode == -signal.SIGKILL
    assert (root / JOURNAL).is_file()
    shutil.copyfile(generated / "raters.csv", root / "raters.csv")  # the spec as sealed
    problems = verify_seal(root).problems  # the library's check, which writes nothing
    assert len(problems) == 1 and problems[0].startswith("generate was interrupted at ")
    result = CliRunner().invoke(cli, ["verify", str(root)])
    assert result.exit_code == 0, result.output
    assert "warning: generate was interrupted at " in result.output
    assert "the previous ones were restored" in result.output
    assert "after generate" not in result.output and "restore the secret" not in result.output
    assert "seal ok" in result.output
    assert (root / "sealed" / "secret").read_bytes() == secret
    assert {k: v for k, v in _set_of(root).items() if ".partial" not in k} == before
    assert not (root / JOURNAL).exists()


def test_a_full_disk_while_drafting_replaces_nothing(generated, tmp_path, monkeypatch):
    """The drafts are in the set: a disk that fills on the second draft leaves the
    previous packs, drafts and seal as they were, and no cut-off draft."""
    from sheetflow.packs import mail

    root = _copy(generated, tmp_path)
    before = _set_of(root)
    _drop_ev03(root)
    real, calls = mail.compose_eml, []

    def full(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(mail, "compose_eml", full)
    with pytest.raises(OSError):
        generate_packs(root, emails=True, force=True)
    assert _set_of(root) == before


def test_force_removes_the_pack_and_draft_of_a_rater_no_longer_listed(generated, tmp_path):
    root = _copy(generated, tmp_path)
    (root / L.PACKS_DIR / "notes.txt").write_text("mine", encoding="utf-8")
    _drop_ev03(root)
    result = CliRunner().invoke(cli, ["generate", str(root), "--eml", "--force"])
    assert result.exit_code == 0, result.output
    assert (f"removed    1 pack and 1 draft of the previous generate: EV-03 ({MOREAU}.xlsx, "
            f"eml/{MOREAU}.eml)") in result.output
    assert not (root / L.PACKS_DIR / f"{MOREAU}.xlsx").exists()
    assert not (root / L.PACKS_DIR / "eml" / f"{MOREAU}.eml").exists()
    assert (root / L.PACKS_DIR / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert len(list((root / L.PACKS_DIR / "eml").glob("*.eml"))) == 2
    assert not [p for p in (root / L.PACKS_DIR).rglob(".*")]  # nothing kept aside
    assert verify_seal(root).ok


def test_a_new_seal_without_eml_removes_the_drafts_of_the_changed_packs(generated, tmp_path):
    """Drafts attaching packs the new manifest does not vouch for are never left ready
    to mail; regenerating the same spec keeps them (the packs are the same bytes)."""
    root = _copy(generated, tmp_path)
    drafts = sorted((root / L.PACKS_DIR / "eml").glob("*.eml"))
    generate_packs(root)
    assert sorted((root / L.PACKS_DIR / "eml").glob("*.eml")) == drafts
    _drop_ev03(root)
    result = generate_packs(root, force=True)
    assert not list((root / L.PACKS_DIR / "eml").glob("*.eml"))
    assert sorted(p for _, p in result.removed) == sorted(
        [*drafts, root / L.PACKS_DIR / f"{MOREAU}.xlsx"])


def test_a_commit_killed_after_it_was_done_is_finished_quietly(tmp_path, monkeypatch):
    """Stopped while deleting the previous files, the new set is whole: the next
    recovery deletes what was left and says nothing."""
    from sheetflow.staging import OutputSet, recover_interrupted

    (tmp_path / "a.txt").write_text("old", encoding="utf-8")
    real = Path.unlink

    def stopped(self, missing_ok=False):
        if self.name.endswith(".previous"):
            raise KeyboardInterrupt
        return real(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", stopped)
    with pytest.raises(KeyboardInterrupt), OutputSet(tmp_path) as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new", encoding="utf-8")
    monkeypatch.undo()
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "new"
    assert recover_interrupted(tmp_path) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_commit_under_way_in_another_process_is_not_rolled_back(tmp_path):
    """A record whose folder another run holds locked is a live commit, not a stopped
    one: recovery refuses in one line and touches nothing."""
    import fcntl

    from sheetflow.errors import WriteError
    from sheetflow.staging import recover_interrupted

    (tmp_path / JOURNAL).write_text('{"moves": []}', encoding="utf-8")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(WriteError, match="another sheetflow run is putting its files"):
            recover_interrupted(tmp_path)
    finally:
        os.close(fd)
    assert (tmp_path / JOURNAL).exists()


def test_a_file_an_interrupted_set_kept_aside_is_removed_by_the_next_set(tmp_path, monkeypatch):
    """A set killed after moving a file it supersedes aside: the next set first puts it
    back, then removes it as its own superseded file, leaving nothing kept aside."""
    from sheetflow import staging

    (tmp_path / "a.txt").write_text("old", encoding="utf-8")
    (tmp_path / "old.txt").write_text("old", encoding="utf-8")
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # the record written, old.txt moved aside
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    # as after a kill: nothing runs after the stop, so the record stays
    monkeypatch.setattr(staging._Journal, "__exit__", lambda self, *_: staging._unlock(self.lock))
    with pytest.raises(KeyboardInterrupt), staging.OutputSet(tmp_path) as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new", encoding="utf-8")
        outputs.supersede([tmp_path / "old.txt"])
    monkeypatch.undo()
    assert not (tmp_path / "old.txt").exists()  # kept aside by the stopped set
    with staging.OutputSet(tmp_path) as outputs:  # (another name: the same process)
        outputs.stage(tmp_path / "b.txt").write_text("new", encoding="utf-8")
        outputs.supersede([tmp_path / "old.txt"])
    assert outputs.recovered and outputs.removed == [tmp_path / "old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "old"


def test_the_next_generate_removes_drafts_a_killed_run_left_staged(generated, tmp_path):
    """A run killed before its commit leaves staged drafts in packs/eml/ as it does in
    packs/ and sealed/: the next generate removes them all, not only the outer ones."""
    root = _copy(generated, tmp_path)
    left = [root / L.PACKS_DIR / "eml" / f".{MOREAU}.eml.1234-abcd.partial",
            root / L.PACKS_DIR / f".{MOREAU}.xlsx.1234-abcd.partial"]
    for path in left:
        path.write_bytes(b"cut off")
    generate_packs(root, emails=True, force=True)
    assert not [p for p in left if p.exists()]
