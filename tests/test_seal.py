"""The seal holds: key, plan lock, spec and internal scores are checked against each other.

Each test changes one thing after ``generate`` the way someone tempted to move a verdict
would, and asserts that ``analyze`` refuses with one line naming it (exit 3, nothing
written; the earlier analysis outputs removed, and said so in a warning, since they no
longer stand for the study) and that ``verify`` reports the same line (exit 3).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.packs.seal import dump_json, verify_seal, write_seal
from sheetflow.packs.secret import read_secret
from sheetflow.spec.study import load_study


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seal") / "demo"
    result = CliRunner().invoke(cli, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture
def study(demo, tmp_path):
    copy = tmp_path / "study"
    shutil.copytree(demo, copy)
    return copy


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(folder: Path, *words: str) -> str:
    """analyze exits 3 with one line holding ``words`` and writes nothing; the earlier
    analysis outputs (and only they) are removed, in one warning; verify agrees."""
    before = _snapshot(folder)
    run = json.loads((folder / "out" / "run.json").read_text(encoding="utf-8"))
    result = CliRunner().invoke(cli, ["analyze", str(folder)])
    assert result.exit_code == 3, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 2 and lines[0].startswith("error: "), lines
    assert lines[1].startswith("warning: removed the earlier analysis outputs"), lines
    for word in words:
        assert word in lines[0], f"{word!r} missing from: {lines[0]}"
    after = _snapshot(folder)
    assert after == {name: before[name] for name in after}  # nothing written or changed
    assert set(before) - set(after) == {f"out/{name}" for name in [*run["files"], "run.json"]}
    verified = CliRunner().invoke(cli, ["verify", str(folder)])
    assert verified.exit_code == 3, verified.output  # a broken seal, as analyze says
    assert lines[0] in verified.output.splitlines()
    return lines[0]


def _lock(folder: Path) -> Path:
    return folder / "sealed" / "plan.lock.json"


def test_the_untouched_seal_verifies(study):
    check = verify_seal(study)
    assert check.ok, check.problems
    key = json.loads((study / "sealed" / "key.json").read_text(encoding="utf-8"))
    lock = json.loads(_lock(study).read_text(encoding="utf-8"))
    assert key["spec_hash"] == lock["spec_hash"] == load_study(study).hash
    assert set(key["inputs"]) == {"internal_scores.csv"} and key["inputs"] == lock["inputs"]
    assert CliRunner().invoke(cli, ["analyze", str(study)]).exit_code == 0


def test_plan_lock_bypass_is_refused(study):
    """Edit the spec, write its new hash into plan.lock.json: the key still says the old."""
    spec = study / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("n_boot = 1000", "n_boot = 40"),
                    encoding="utf-8")
    lock = json.loads(_lock(study).read_text(encoding="utf-8"))
    lock["spec_hash"] = load_study(study).hash
    _lock(study).write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _refused(study, "plan.lock.json", "the sealed key records", "edited after generate")


def test_changed_internal_scores_are_refused(study):
    path = study / "internal_scores.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([lines[0], *reversed(lines[1:])]), encoding="utf-8")
    line = _refused(study, "internal_scores.csv changed after generate",
                    "restore the file as it was at generate")
    assert "sha256" in line


def test_internal_scores_rehashed_into_the_lock_are_refused(study):
    path = study / "internal_scores.csv"
    data = path.read_bytes()
    end = data.index(b"\n", data.index(b"\n") + 1)  # the end of the first data row
    end -= data[end - 1:end] == b"\r"
    other = b"1" if data[end - 1:end] != b"1" else b"2"  # one total changed, still valid
    path.write_bytes(data[:end - 1] + other + data[end:])
    lock = json.loads(_lock(study).read_text(encoding="utf-8"))
    lock["inputs"]["internal_scores.csv"] = hashlib.sha256(path.read_bytes()).hexdigest()
    _lock(study).write_text(json.dumps(lock), encoding="utf-8")
    _refused(study, "plan.lock.json and key.json record different input hashes")


def test_missing_internal_scores_are_named(study):
    (study / "internal_scores.csv").unlink()
    result = CliRunner().invoke(cli, ["analyze", str(study)])
    assert result.exit_code != 0
    assert "internal_scores.csv" in result.output and "Traceback" not in result.output


def test_a_rewritten_key_and_key_hash_fail_against_the_published_hash(study):
    published = (study / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    key_path = study / "sealed" / "key.json"
    key_path.write_bytes(key_path.read_bytes().replace(b'"A"', b'"B"', 1))
    digest = hashlib.sha256(key_path.read_bytes()).hexdigest()
    (study / "sealed" / "key.sha256").write_text(f"{digest}  key.json\n", encoding="utf-8")
    lock = json.loads(_lock(study).read_text(encoding="utf-8"))
    lock["key_sha256"] = digest
    _lock(study).write_text(json.dumps(lock), encoding="utf-8")
    assert verify_seal(study).ok  # consistent in itself: only the published hash tells
    result = CliRunner().invoke(cli, ["verify", str(study), "--key-sha256", published])
    assert result.exit_code == 3
    assert "published hash" in result.output
    before = _snapshot(study)
    result = CliRunner().invoke(cli, ["analyze", str(study), "--key-sha256", published])
    assert result.exit_code == 3 and "published hash" in result.output
    after = _snapshot(study)  # nothing written; the earlier analysis removed, and said so
    assert after == {name: before[name] for name in after}
    assert "out/summary.json" in set(before) - set(after)
    assert "removed the earlier analysis outputs" in result.output


def test_analyze_accepts_the_published_hash(study):
    published = (study / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    result = CliRunner().invoke(cli, ["analyze", str(study), "--key-sha256", published.upper()])
    assert result.exit_code == 0, result.output


def test_a_malformed_published_hash_is_a_usage_error_not_a_broken_seal(study):
    """'--key-sha256 abc' read "this is not the key sealed before scoring" (exit 3)."""
    before = _snapshot(study)
    for command in ("verify", "analyze"):
        result = CliRunner().invoke(cli, [command, str(study), "--key-sha256", "abc"])
        assert result.exit_code == 2, result.output
        (line,) = [ln for ln in result.output.splitlines() if ln.strip()]
        assert line == "error: --key-sha256 'abc': not a sha256 (64 hexadecimal digits, the " \
            "first word of sealed/key.sha256 as published)"
    assert _snapshot(study) == before


@pytest.mark.parametrize("edit", ["valid", "invalid"])
def test_internal_scores_edited_after_generate_stop_every_command_as_a_seal(study, edit):
    """check printed "ok" (and status, collect exit 0) on internal scores edited after
    generate, while verify and analyze refused the seal; an edit leaving the file
    invalid was told as a content problem (exit 1) by all five. The file is compared
    with its sealed sha256 before its content is checked: exit 3, restore the file."""
    path = study / "internal_scores.csv"
    if edit == "valid":
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join([lines[0], *reversed(lines[1:])]), encoding="utf-8")
    else:
        path.write_text("case_id,arm,total\n", encoding="utf-8")
    for command in ("check", "status", "collect", "verify", "analyze"):
        result = CliRunner().invoke(cli, [command, str(study)])
        assert result.exit_code == 3, (command, result.output)
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"error: {path} changed after generate: sha256 "), \
            (command, first)
        assert first.endswith("; restore the file as it was at generate"), (command, first)
        assert "ok" not in result.stdout.split(), (command, result.stdout)


def test_generate_force_still_seals_internal_scores_edited_before_scoring(study):
    """The comparison is for commands reading a generated study, not for the generate
    that seals the file again."""
    path = study / "internal_scores.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([lines[0], *reversed(lines[1:])]), encoding="utf-8")
    for folder in ("out", "returns"):
        shutil.rmtree(study / folder)
    assert CliRunner().invoke(cli, ["generate", "--force", str(study)]).exit_code == 0
    result = CliRunner().invoke(cli, ["check", str(study)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("damage", "words"), [
    (lambda s: (s / "sealed" / "key.json").write_text("{", encoding="utf-8"),
     "sealed/key.json has sha256 "),
    (lambda s: (s / "sealed" / "key.sha256").write_text("x\n", encoding="utf-8"),
     "sealed/key.sha256 is not the line "),
    (lambda s: (s / "sealed" / "secret").write_bytes(b"x"), "sealed/secret has sha256 "),
    (lambda s: (s / "packs" / "manifest.json").write_bytes(b"{}"),
     "packs/manifest.json has sha256 "),
    (lambda s: (s / "study.toml").write_text((s / "study.toml").read_text(
        encoding="utf-8").replace("title = ", 'title = "x" #', 1), encoding="utf-8"),
     "study.toml: the study spec (this file, its items or raters) changed after generate"),
    (lambda s: (s / "out" / "ratings.csv").write_bytes(b"x"),
     "out/ratings.csv does not match out/collection.json"),
    (lambda s: (s / "out" / "collection.json").write_bytes(b"{"),
     "out/collection.json is unreadable ("),
])
def test_seal_and_collection_problems_name_the_file_with_the_study_folder(study, damage,
                                                                           words):
    """README: errors name the file with the study folder ("my-study/study.toml: ...");
    these named a bare "sealed/key.json", "packs/manifest.json", "out/ratings.csv"."""
    damage(study)
    result = CliRunner().invoke(cli, ["analyze", str(study)])
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith(f"error: {study}/{words}"), result.stderr


@pytest.mark.parametrize("text", ["[]", '{"ratings": "x"}'])
def test_a_collection_record_of_another_shape_says_so_not_a_python_message(study, text):
    """JSON that is no collection record read "is unreadable (list indices must be
    integers or slices, not str)", Python's words, which tell the reader nothing."""
    (study / "out" / "collection.json").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["analyze", str(study)])
    assert result.exit_code == 3, result.output
    assert result.stderr.splitlines()[0] == (
        f"error: {study}/out/collection.json is unreadable (not laid out as sheetflow "
        f"writes it); run 'sheetflow collect {study}' again"), result.stderr


def test_a_damaged_key_hash_file_is_named_not_the_key(study):
    """An unreadable key.sha256 read "the key was changed after sealing": the key was
    intact, its hash file was not."""
    (study / "sealed" / "key.sha256").write_text("garbage\n", encoding="utf-8")
    line = _refused(study, "sealed/key.sha256 is not the line '<sha256>  key.json', so "
                    "key.json cannot be checked against it: restore it as published before "
                    "scoring")
    assert "the key (or its hash file) was changed" not in line


def test_a_changed_manifest_is_reported(study):
    manifest = study / "packs" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"sitting":1', b'"sitting":2', 1))
    _refused(study, "packs/manifest.json", "changed after generate")


def test_a_key_without_input_hashes_is_refused(study):
    """A seal that never recorded the internal scores cannot vouch for them."""
    for name in ("key.json", "plan.lock.json"):
        path = study / "sealed" / name
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc.pop("inputs")
        path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    digest = hashlib.sha256((study / "sealed" / "key.json").read_bytes())
    (study / "sealed" / "key.sha256").write_text(f"{digest.hexdigest()}  key.json\n")
    lock = json.loads(_lock(study).read_text(encoding="utf-8"))
    lock["key_sha256"] = digest.hexdigest()
    _lock(study).write_text(json.dumps(lock), encoding="utf-8")
    _refused(study, "internal_scores.csv was not sealed at generate")


def test_a_missing_pack_workbook_fails_verify_naming_it(study):
    """verify passed with a pack workbook the manifest lists gone from packs/ (a
    reminder attaches it again). analyze reads no pack, so it still unseals."""
    listed = sorted(p.name for p in (study / "packs").glob("*.xlsx"))
    gone = listed[:2]
    for name in gone:
        (study / "packs" / name).unlink()
    result = CliRunner().invoke(cli, ["verify", str(study)])
    assert result.exit_code == 3, result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error: ")]
    assert sorted(errors) == [f"error: {study}/packs/{name}: missing (packs/manifest.json lists "
                              "it); restore it from the generate run" for name in gone]
    doc = json.loads(CliRunner().invoke(cli, ["verify", str(study), "--json"]).stdout)
    assert doc["exit_code"] == 3 and len(doc["errors"]) == 2
    assert verify_seal(study).ok  # the seal itself holds


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_member_changed(path: Path, member: str) -> None:
    """Rewrite the workbook with one byte added to one zip member (it still opens: what
    saving it in a spreadsheet program does, more or less)."""
    with zipfile.ZipFile(path) as zf:
        parts = [(info, zf.read(info)) for info in zf.infolist()]
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in parts:
            zf.writestr(info, data + b" " if info.filename == member else data)


def test_a_changed_pack_workbook_fails_verify_naming_it(study):
    """generate recorded no hash of a workbook's bytes, so verify passed on a pack
    edited (or swapped) after generate, and send attached it as it was then."""
    fresh = CliRunner().invoke(cli, ["verify", str(study)])
    assert fresh.exit_code == 0 and "seal ok" in fresh.output, fresh.output
    assert "note:" not in fresh.output
    edited, grown = sorted(p.name for p in (study / "packs").glob("*.xlsx"))[:2]
    sealed = {name: _sha256(study / "packs" / name) for name in (edited, grown)}
    _one_member_changed(study / "packs" / edited, "docProps/core.xml")
    with (study / "packs" / grown).open("ab") as fh:
        fh.write(b"\0")
    result = CliRunner().invoke(cli, ["verify", str(study)])
    assert result.exit_code == 3, result.output
    errors = sorted(ln for ln in result.stderr.splitlines() if ln.startswith("error: "))
    assert len(errors) == 2
    for line, name in zip(errors, sorted((edited, grown)), strict=True):
        found = _sha256(study / "packs" / name)
        assert line.startswith(f"error: {study}/packs/{name}: sha256 {found} "
                               f"but packs/manifest.json records {sealed[name]} for it: the "
                               "workbook was changed or replaced after generate."), line
        assert "find which copy they got" in line
    assert verify_seal(study).ok  # analyze reads no pack: it still unseals
    assert len(verify_seal(study, pack_files=True).problems) == 2


def _as_written_before_pack_hashes(folder: Path, keep: tuple[str, ...] = ()) -> None:
    """The manifest as sheetflow wrote it before it recorded each pack's sha256 (but for
    the packs in ``keep``), sealed with the library's own ``write_seal`` as generate
    sealed it then."""
    path = folder / "packs" / "manifest.json"
    manifest = json.loads(path.read_bytes())
    for pack in manifest["packs"]:
        if pack["file"] not in keep:
            del pack["sha256"]
    data = dump_json(manifest, compact=True)
    path.write_bytes(data)
    sealed = folder / "sealed"
    key = json.loads((sealed / "key.json").read_text(encoding="utf-8"))
    lock = json.loads(_lock(folder).read_text(encoding="utf-8"))
    write_seal(folder, key, spec_hash=key["spec_hash"],
               manifest_sha256=hashlib.sha256(data).hexdigest(),
               version=lock["sheetflow_version"], secret=read_secret(sealed / "secret"),
               inputs=key["inputs"])


def test_a_manifest_without_pack_hashes_verifies_with_one_note(study):
    """A study generated before packs were hashed still verifies, and verify says once
    that it could not check their bytes."""
    _as_written_before_pack_hashes(study)
    result = CliRunner().invoke(cli, ["verify", str(study)])
    assert result.exit_code == 0 and "seal ok" in result.output, result.output
    notes = [ln for ln in result.output.splitlines() if ln.startswith("note: ")]
    assert notes == ["note: pack bytes were not recorded for this study (its manifest was "
                     "written by a sheetflow before 'generate' hashed each pack): verify "
                     "checked that each pack is in packs/, not that it is unchanged"]
    doc = json.loads(CliRunner().invoke(cli, ["verify", str(study), "--json"]).stdout)
    assert doc["ok"] and doc["notes"] == [notes[0].removeprefix("note: ")]
    gone = sorted(p.name for p in (study / "packs").glob("*.xlsx"))[0]
    (study / "packs" / gone).unlink()  # a missing pack still fails, the note beside it
    failed = CliRunner().invoke(cli, ["verify", str(study)])
    assert failed.exit_code == 3, failed.output
    assert failed.stderr.splitlines() == [
        f"error: {study}/packs/{gone}: missing (packs/manifest.json lists it); restore it from the "
        f"generate run", "warning: " + notes[0].removeprefix("note: ")]


def test_a_manifest_hashing_only_some_packs_fails_verify(study):
    """generate hashes every pack or none: a manifest with some hashes left out was
    pieced together, and the packs it leaves out would go unchecked."""
    names = sorted(p.name for p in (study / "packs").glob("*.xlsx"))
    _as_written_before_pack_hashes(study, keep=tuple(names[1:]))
    check = verify_seal(study, pack_files=True)
    assert check.problems == [f"{study}/packs/manifest.json records the sha256 of some "
                              f"packs but not of packs/{names[0]}: generate wrote no such "
                              "manifest; restore it from the generate run"]


@pytest.mark.parametrize("edited", ["study.toml", "items.csv", "raters.csv"])
def test_status_stops_on_a_spec_changed_after_generate_as_check_and_collect(study, edited):
    """status exited 0 with its table ("4 of 4 packs returned") on a spec edited after
    generate, while check, collect, verify and analyze stopped: it now prints the line
    check and collect print, shows no table and exits 3, in --json too."""
    path = study / edited
    was, now = {"study.toml": ("title = ", 'title = "edited" #'),
                "items.csv": ("got got charged", "got charged"),
                "raters.csv": ("R4,Sample", "R5,Sample")}[edited]
    text = path.read_text(encoding="utf-8")
    assert was in text
    path.write_text(text.replace(was, now, 1), encoding="utf-8")  # still a valid file
    collected = CliRunner().invoke(cli, ["collect", str(study)])
    assert collected.exit_code == 3, collected.output
    line = collected.stderr.splitlines()[0]
    assert "changed after generate" in line, line
    result = CliRunner().invoke(cli, ["status", str(study)])
    assert result.exit_code == 3, result.output
    assert result.stderr.splitlines() == [line]
    assert result.stdout == ""  # no table read against the edited spec
    as_json = CliRunner().invoke(cli, ["status", str(study), "--json"])
    assert as_json.exit_code == 3, as_json.output
    doc = json.loads(as_json.stdout)
    assert doc["ok"] is False and doc["exit_code"] == 3
    assert doc["errors"] == [line.removeprefix("error: ")]
