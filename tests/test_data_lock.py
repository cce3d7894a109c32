"""``sheetflow lock`` (protocol 002): every input read once, every output whole.

The selection is written whole or not at all and a damaged one is one line; the
selection whose sha256 the lock record seals is the one the second raters' packs are
drawn by, and ``verify`` compares the two; the ratings drawn from are the table
``collect`` recorded; the lock holds the study lock.
"""

from __future__ import annotations

import errno
import hashlib
import json
import pathlib
import shutil

import openpyxl
import pytest
from click.testing import CliRunner
from interrupt_helpers import stop_at_replace
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.packs import generate_packs, verify_seal
from sheetflow.spec import init_study

SELECTION = "second-rater-selection.json"


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """Protocol 002 after generate and collect, before the lock (made once)."""
    root = init_study(tmp_path_factory.mktemp("lock") / "a", "anchored-plan")
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    return root


@pytest.fixture
def study(collected, tmp_path):
    root = tmp_path / "a"
    shutil.copytree(collected, root, symlinks=True)
    return root


def _lock(root):
    return CliRunner().invoke(cli, ["lock", str(root)])


def _errors(result) -> list[str]:
    return [ln for ln in result.output.splitlines() if ln.startswith("error:")]


def _selected(root) -> list[str]:
    return json.loads((root / "sealed" / SELECTION).read_text(encoding="utf-8"))["selected"]


def _second_packs(root) -> list[dict]:
    record = json.loads((root / "sealed" / "lock-record.json").read_text(encoding="utf-8"))
    return [p for p in record["packs"] if p["sitting"] == 1]


def test_a_full_disk_leaves_no_selection_and_a_rerun_locks(study, monkeypatch):
    """Out of space while the selection was written, the lock left a 0-byte file, and
    every later lock stopped on it with a traceback; now nothing is left behind."""
    real = pathlib.Path.write_bytes

    def full_disk(self, data):
        if SELECTION.removesuffix(".json") in self.name:
            self.open("wb").close()  # created, then the write finds no space
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)
    monkeypatch.setattr(pathlib.Path, "write_bytes", full_disk)
    result = _lock(study)
    assert result.exit_code == 3 and isinstance(result.exception, SystemExit), result.output
    errors = _errors(result)
    assert len(errors) == 1 and f"sealed/{SELECTION}: could not be written" in errors[0]
    assert "free some space" in errors[0]
    assert sorted(p.name for p in (study / "sealed").iterdir()) == [
        "key.json", "key.sha256", "plan.lock.json", "secret"]
    monkeypatch.undo()
    again = _lock(study)
    assert again.exit_code == 0, again.output
    assert verify_seal(study).ok


def test_a_damaged_selection_is_one_line_naming_the_file_and_what_to_do(study):
    """A 0-byte selection (as a full disk left one) stopped 'lock' with a
    JSONDecodeError traceback, though 'verify' said to run it again."""
    (study / "sealed" / SELECTION).write_bytes(b"")
    result = _lock(study)
    assert result.exit_code == 3 and isinstance(result.exception, SystemExit), result.output
    errors = _errors(result)
    assert len(errors) == 1, result.output
    assert f"sealed/{SELECTION}: is not a second-rater selection sheetflow wrote (it is " \
        f"empty) and no packs were sealed from it; remove it, then run 'sheetflow lock " \
        f"{study}' again" in errors[0]
    (study / "sealed" / SELECTION).unlink()  # as the line says
    assert _lock(study).exit_code == 0 and verify_seal(study).ok


def test_a_lock_resumed_after_a_stop_writes_the_selection_hash(study):
    """Stopped after the selection was written and before its .sha256, the lock
    finished by a rerun never wrote the .sha256."""
    assert _lock(study).exit_code == 0
    sealed = study / "sealed"
    hash_file = sealed / "second-rater-selection.sha256"
    written = hash_file.read_bytes()
    for name in ("lock-record.json", "lock-record.sha256", hash_file.name):
        (sealed / name).unlink()  # as the stop leaves the study
    again = _lock(study)
    assert again.exit_code == 0 and "already locked" not in again.output, again.output
    assert hash_file.read_bytes() == written
    check = verify_seal(study)
    assert check.ok and not check.notes, check.problems + check.notes


def _assert_locked_whole(study):
    sealed = study / "sealed"
    digest = hashlib.sha256((sealed / SELECTION).read_bytes()).hexdigest()
    assert (sealed / "second-rater-selection.sha256").read_text(encoding="utf-8") == \
        f"{digest}  {SELECTION}\n"
    assert not [p for p in sealed.iterdir() if p.name.startswith(".")]
    check = verify_seal(study)
    assert check.ok and not check.notes, check.problems + check.notes


def test_a_stop_between_the_selection_and_its_hash_leaves_neither(study, monkeypatch):
    """Ctrl-C just before the selection's .sha256 is moved into place: the two are one
    set, so the selection moved in is taken back; a rerun draws and writes both."""
    stop_at_replace(monkeypatch, "second-rater-selection.sha256")
    assert _lock(study).exit_code != 0
    monkeypatch.undo()
    sealed = study / "sealed"
    assert not (sealed / SELECTION).exists()
    assert not (sealed / "second-rater-selection.sha256").exists()
    assert not [p for p in sealed.iterdir() if p.name.startswith(".")]
    assert _lock(study).exit_code == 0
    _assert_locked_whole(study)


def test_a_lock_killed_between_the_selection_and_its_hash_is_rolled_back_first(
        study, monkeypatch):
    """Killed there (no rollback in the process: its record stays): the rerun rolls the
    set back before it reads anything, says so, then draws and writes both. Before, the
    rerun read the half-placed selection, and finishing its .sha256 rolled the selection
    back underneath it: the lock said it sealed a file no longer there."""
    from sheetflow import staging

    stop_at_replace(monkeypatch, "second-rater-selection.sha256")
    # as if killed: the commit neither rolls back nor removes its record
    monkeypatch.setattr(staging._Journal, "__exit__",
                        lambda journal, *exc: staging._unlock(journal.lock))
    assert _lock(study).exit_code != 0
    monkeypatch.undo()
    assert (study / "sealed" / SELECTION).is_file()  # left half in place, as a kill would
    again = _lock(study)
    assert again.exit_code == 0, again.output
    assert "lock was interrupted" in again.output
    _assert_locked_whole(study)


def test_generate_after_a_lock_stopped_before_its_record_keeps_the_key(study,
                                                                      monkeypatch):
    """A lock stopped before its record was sealed, then 'generate': the second raters'
    packs went into the key sealed at generate, whose published hash then failed."""
    key = (study / "sealed" / "key.json").read_bytes()
    stop_at_replace(monkeypatch, "lock-record.json")
    assert _lock(study).exit_code != 0
    monkeypatch.undo()
    assert (study / "sealed" / SELECTION).is_file()
    generate_packs(study)
    assert (study / "sealed" / "key.json").read_bytes() == key
    published = hashlib.sha256(key).hexdigest()
    assert [p for p in verify_seal(study, published=published).problems
            if "stopped half-way" not in p] == []
    assert _lock(study).exit_code == 0
    assert verify_seal(study, published=published).ok


def test_the_packs_hold_the_selection_whose_hash_is_sealed(study, monkeypatch):
    """The selection swapped for another on disk while the packs were drawn: the lock
    chained the hash of the first and drew the packs from the second, and verify said
    'seal ok'. The packs now come from the bytes hashed."""
    import sheetflow.packs.generate as generate_module

    real = generate_module._sittings
    path = study / "sealed" / SELECTION
    sealed_bytes = {}

    def swapped(*args, **kwargs):
        if not sealed_bytes:
            sealed_bytes["data"] = path.read_bytes()
            doc = json.loads(sealed_bytes["data"])
            doc["selected"] = [c for c in doc["completed"] if c not in doc["selected"]][
                :len(doc["selected"])]
            path.write_text(json.dumps(doc), encoding="utf-8")
        return real(*args, **kwargs)
    monkeypatch.setattr(generate_module, "_sittings", swapped)
    assert _lock(study).exit_code == 0
    path.write_bytes(sealed_bytes["data"])  # put back: the file whose hash was sealed
    selected = _selected(study)
    assert [sorted(p["order"]) for p in _second_packs(study)] == [sorted(selected)]
    assert verify_seal(study).ok


def test_verify_compares_the_second_raters_packs_with_the_selection(study):
    """A selection that names other items than the second raters' packs hold, its
    hashes rewritten to match (what the swap above left), passed verify."""
    assert _lock(study).exit_code == 0
    sealed = study / "sealed"
    doc = json.loads((sealed / SELECTION).read_text(encoding="utf-8"))
    doc["selected"] = [c for c in doc["completed"] if c not in doc["selected"]][
        :len(doc["selected"])]
    data = json.dumps(doc).encode()
    digest = hashlib.sha256(data).hexdigest()
    (sealed / SELECTION).write_bytes(data)
    (sealed / "second-rater-selection.sha256").write_text(f"{digest}  {SELECTION}\n",
                                                          encoding="utf-8")
    record = json.loads((sealed / "lock-record.json").read_text(encoding="utf-8"))
    record["selection_sha256"] = digest
    record_bytes = json.dumps(record).encode()
    (sealed / "lock-record.json").write_bytes(record_bytes)
    (sealed / "lock-record.sha256").write_text(
        f"{hashlib.sha256(record_bytes).hexdigest()}  lock-record.json\n", encoding="utf-8")
    check = verify_seal(study)
    assert not check.ok
    assert any("were not drawn by the selection the lock sealed" in p and
               f"but {SELECTION} selected 4 items ({', '.join(doc['selected'][:3])}, ...)" in p
               for p in check.problems), check.problems
    (sealed / SELECTION).write_text("{}", encoding="utf-8")  # changed after the lock
    check = verify_seal(study)
    assert any(f"{SELECTION} has sha256" in p and "the selection was changed after the "
               "lock" in p for p in check.problems), check.problems


def test_the_lock_draws_only_from_the_ratings_collect_recorded(study):
    """Half the cases' rows dropped from out/ratings.csv drew the subset from 8 of 16
    completed items (exit 0, sealed), and a row cut in two was a pandas traceback."""
    ratings = study / "out" / "ratings.csv"
    lines = ratings.read_text(encoding="utf-8").splitlines(keepends=True)
    cases = sorted({ln.split(",")[3] for ln in lines[1:]})
    kept = [lines[0]] + [ln for ln in lines[1:] if ln.split(",")[3] in cases[::2]]
    cut = "".join(lines)[:len("".join(lines)) // 2]
    for text in ("".join(kept), cut):
        ratings.write_text(text, encoding="utf-8")
        result = _lock(study)
        errors = _errors(result)
        assert result.exit_code == 3 and isinstance(result.exception, SystemExit), \
            result.output
        assert len(errors) == 1 and "out/ratings.csv does not match out/collection.json" \
            in errors[0] and f"run 'sheetflow collect {study}' again" in errors[0], errors
        assert not (study / "sealed" / SELECTION).exists()


def test_the_lock_holds_the_study_lock(study):
    """A lock started while a collect runs waits for it, then refuses."""
    from sheetflow.collect.data_lock import lock_second_rater
    from sheetflow.collect.outputs import OutputError
    from sheetflow.collect.run_lock import study_lock

    with study_lock(study, "collect"), pytest.raises(OutputError, match="another sheetflow"):
        lock_second_rater(study, lock_wait=0.2)
    assert not (study / "sealed" / SELECTION).exists()
    assert lock_second_rater(study, lock_wait=0.2).selected


def test_a_library_lock_after_a_killed_one_says_what_it_rolled_back(study, monkeypatch):
    """Called from the library, with no CLI to roll back and say so first, the lock's
    result carries the note of the stopped lock it rolled back; before, the note was
    kept in a field nothing read."""
    from sheetflow import staging
    from sheetflow.collect.data_lock import lock_second_rater

    stop_at_replace(monkeypatch, "second-rater-selection.sha256")
    monkeypatch.setattr(staging._Journal, "__exit__",
                        lambda journal, *exc: staging._unlock(journal.lock))
    assert _lock(study).exit_code != 0
    monkeypatch.undo()
    result = lock_second_rater(study)
    assert "lock was interrupted" in result.warnings[0]
    _assert_locked_whole(study)


@pytest.mark.parametrize("earlier_draft", [False, True])
def test_the_lock_drafts_only_the_second_raters_invitations(study, earlier_draft):
    """The lock drafted an invitation for every pack, the primary rater's too (who had
    returned already), and said only the second rater's; now the primary's draft is
    neither written nor replaced: packs/eml/ holds what it held, and the second's."""
    primary = next(p for p in (study / "packs").glob("*.xlsx"))
    kept = study / "packs" / "eml" / f"{primary.stem}.eml"
    if earlier_draft:  # generate --eml drafted it; sent already, maybe edited
        kept.parent.mkdir()
        kept.write_bytes(b"the draft generate --eml wrote")
    result = _lock(study)
    assert result.exit_code == 0, result.output
    drafted = [ln.split()[1] for ln in result.output.splitlines() if ln.startswith("draft ")]
    second = {pathlib.Path(p["file"]).stem for p in _second_packs(study)}
    assert {pathlib.Path(d).stem for d in drafted} == second
    assert sorted(p.name for p in kept.parent.iterdir()) == sorted(
        [kept.name] * earlier_draft + [f"{s}.eml" for s in second])
    if earlier_draft:
        assert kept.read_bytes() == b"the draft generate --eml wrote"


def test_a_return_the_last_collect_did_not_read_stops_the_draw(study):
    """A primary's corrected return saved after collect (or a collect stopped before its
    outputs moved in): the subset would be drawn from the table before it. The lock
    refuses, naming the file and collect, and writes no selection."""
    first = sorted((study / "returns").glob("*.xlsx"))[0]
    openpyxl.load_workbook(first).save(study / "returns" / "corrected.xlsx")  # new bytes
    result = _lock(study)
    assert result.exit_code == 2, result.output
    assert ("holds 1 file the last collect did not read (corrected.xlsx): the subset "
            "would be drawn without them") in result.output
    assert not (study / "sealed" / SELECTION).exists()
