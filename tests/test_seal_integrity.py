"""The seal holds: nothing sealed or collected can be replaced without a word.

Each test plants one gap a coordinator (or a script) could fall into, and asserts the
step that would have used it refuses, with one line naming the file.
"""

from __future__ import annotations

import csv
import hashlib
import json
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from roundtrip_helpers import fail_at_pack, return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.collect.file_check import FileJob, check_file
from sheetflow.collect.safety import Limits
from sheetflow.errors import UsageError
from sheetflow.packs import generate_packs, verify_seal
from sheetflow.packs.manifest import open_manifest
from sheetflow.spec import init_study, load_study
from sheetflow.workbook import layout as L


def _returned(tmp_path, template: str = "paired-rubric"):
    root = init_study(tmp_path / "s", template)
    generate_packs(root)
    return_every_pack(root)
    return root


def _change_spec(root) -> None:
    toml = root / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("seed = 20260915", "seed = 7", 1),
                    encoding="utf-8")


def test_force_with_returns_is_refused_and_names_what_would_be_lost(tmp_path):
    root = _returned(tmp_path)
    key_before = (root / "sealed" / "key.json").read_bytes()
    _change_spec(root)
    with pytest.raises(UsageError, match=r"returns/ \(\d+ files\).*Move them out"):
        generate_packs(root, force=True)
    assert (root / "sealed" / "key.json").read_bytes() == key_before  # nothing replaced
    result = CliRunner().invoke(cli, ["generate", str(root), "--force"])
    assert result.exit_code != 0 and "returns/" in result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_force_without_data_makes_a_new_seal_and_secret(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    secret = (root / "sealed" / "secret").read_bytes()
    _change_spec(root)
    generate_packs(root, force=True)
    assert (root / "sealed" / "secret").read_bytes() != secret
    assert verify_seal(root).ok


def test_regenerating_the_same_spec_with_returns_changes_nothing(tmp_path):
    root = _returned(tmp_path)
    before = {p.name: p.read_bytes() for p in (root / L.PACKS_DIR).glob("*.xlsx")}
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    generate_packs(root, force=True)  # the same spec: the same secret, the same bytes
    assert {p.name: p.read_bytes() for p in (root / L.PACKS_DIR).glob("*.xlsx")} == before
    assert json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8")) == key


def test_a_seal_made_without_a_secret_is_not_silently_regenerated(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    (root / "sealed" / "secret").unlink()  # as an earlier sheetflow left it
    with pytest.raises(UsageError, match="earlier sheetflow"):
        generate_packs(root)


def _collected(tmp_path):
    root = _returned(tmp_path)
    assert collect(root).report.files
    return root


def _analyze_cli(root) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["analyze", str(root), "--allow-partial"])
    return result.exit_code, result.output + result.stderr


def test_ratings_and_their_record_edited_together_are_refused(tmp_path):
    """Changing one score and rewriting collection.json's hash and row count to match
    passed before; the record's mark (HMAC under the study secret) now fails."""
    root = _collected(tmp_path)
    ratings = root / "out" / "ratings.csv"
    with ratings.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    value = rows[0].index("value")
    row = next(r for r in rows[1:] if r[value] in ("1", "2", "3", "4"))
    row[value] = str(int(row[value]) + 1)  # one score, one point up
    with ratings.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    record_path = root / "out" / "collection.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["ratings"]["sha256"] = hashlib.sha256(ratings.read_bytes()).hexdigest()
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    code, text = _analyze_cli(root)
    assert code == 3 and "collection.json was changed after collect" in text, text
    assert f"run 'sheetflow collect {root}' again" in text, text  # a command to type
    assert "Traceback" not in text and not (root / "out" / "analysis.xlsx").exists()
    record.pop("mac")  # a record without a mark is refused too
    record_path.write_text(json.dumps(record), encoding="utf-8")
    code, text = _analyze_cli(root)
    assert code == 3 and "carries no mark" in text, text


def test_a_return_changed_after_collect_is_refused(tmp_path):
    root = _collected(tmp_path)
    used = next(p for p in sorted((root / L.RETURNS_DIR).glob("*.xlsx")))
    other = next(p for p in sorted((root / L.PACKS_DIR).glob("*.xlsx")))
    used.write_bytes(other.read_bytes())  # another workbook in its place
    code, text = _analyze_cli(root)
    assert code == 3 and f"returns/{used.name} changed after collect" in text, text
    used.unlink()
    code, text = _analyze_cli(root)
    assert code == 3 and "the file is gone" in text, text


def test_analyze_hashes_each_used_return_once(tmp_path, monkeypatch):
    """The check that each used return is the file collected and the search for files
    collect did not read share one hash per return (a 500-rater study's returns are
    read from disk once, not twice)."""
    import sheetflow.collect.outputs as outputs

    root = _collected(tmp_path)
    hashed: list[str] = []
    real = outputs.file_digest

    def counting(path):
        hashed.append(path.name)
        return real(path)

    monkeypatch.setattr(outputs, "file_digest", counting)
    code, text = _analyze_cli(root)
    assert code == 0, text
    returns = sorted(p.name for p in (root / L.RETURNS_DIR).glob("*.xlsx"))
    assert returns and sorted(n for n in hashed if n in returns) == returns, hashed


def test_summary_records_what_the_analysis_read(tmp_path):
    root = _collected(tmp_path)
    code, text = _analyze_cli(root)
    assert code == 0, text
    summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    audit = summary["audit"]
    assert audit["ratings_sha256"] == hashlib.sha256(
        (root / "out" / "ratings.csv").read_bytes()).hexdigest()
    returns = sorted((root / L.RETURNS_DIR).glob("*.xlsx"))
    assert audit["returns_sha256"] == {
        f"returns/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest() for p in returns}
    assert summary["key_sha256"] == hashlib.sha256(
        (root / "sealed" / "key.json").read_bytes()).hexdigest()
    assert summary["spec_hash"] == load_study(root).hash


def test_a_return_swapped_between_the_hash_and_the_read_is_caught(tmp_path):
    """The collector hashes each file, then a child reads it: the child now reads the
    bytes once, hashes them and refuses when they are not the bytes listed."""
    root = _returned(tmp_path)
    path = next(p for p in sorted((root / L.RETURNS_DIR).glob("*.xlsx")))
    listed = hashlib.sha256(path.read_bytes()).hexdigest()
    other = next(p for p in sorted((root / L.PACKS_DIR).glob("*.xlsx")))
    path.write_bytes(other.read_bytes())  # swapped after the listing
    job = FileJob(str(path), path.name, listed, str(root), open_manifest(root), Limits())
    result = check_file(job)
    assert result.problem is not None and result.problem.code == "file-changed-while-collecting"
    assert not result.checks


def test_internal_scores_swapped_after_the_seal_check_are_not_used(tmp_path, monkeypatch):
    """The analysis parses the internal scores' bytes the seal check hashed; a file
    swapped in between (after the check, before the read) is never read."""
    import sheetflow.analysis.plan as plan_module

    root = _collected(tmp_path)
    scores = root / "internal_scores.csv"
    sealed_text = scores.read_text(encoding="utf-8")
    lines = sealed_text.splitlines()
    head = lines[0].split(",")
    total = head.index("total")
    swapped = [lines[0]] + [",".join(c if i != total else "0" for i, c in
                                     enumerate(ln.split(","))) for ln in lines[1:]]
    used = {}
    real_internal, real_run = plan_module.internal_scores, plan_module._run_plan

    def swap_then_read(study, sealed=None):
        scores.write_text("\n".join(swapped) + "\n", encoding="utf-8")
        return real_internal(study, sealed)

    def capture(*args, **kwargs):
        used["internal"] = kwargs["internal"]
        return real_run(*args, **kwargs)
    monkeypatch.setattr(plan_module, "internal_scores", swap_then_read)
    monkeypatch.setattr(plan_module, "_run_plan", capture)
    plan_module.analyze(root)
    assert scores.read_text(encoding="utf-8") != sealed_text  # the swap happened
    expected = sorted(float(ln.split(",")[total]) for ln in lines[1:])
    assert sorted(used["internal"]["total"].tolist()) == expected
    assert set(used["internal"]["total"]) != {0.0}


def test_internal_scores_rewritten_after_the_check_are_not_sealed(tmp_path, monkeypatch):
    """generate seals the sha256 of the internal scores' bytes the check read: a file
    rewritten between the check and the seal was sealed as it then was (a total 'n/a'
    that check refuses), and the study was stuck: restoring the file broke the seal.
    Now the checked bytes are sealed, and the file restored verifies."""
    import sheetflow.packs.generate as generate_module

    root = init_study(tmp_path / "s", "paired-rubric")
    scores = root / "internal_scores.csv"
    checked = scores.read_bytes()
    lines = checked.decode("utf-8").splitlines()
    total = lines[0].split(",").index("total")
    cells = lines[1].split(",")
    cells[total] = "n/a"
    real = generate_module.input_hashes

    def rewrite_then_hash(study):
        scores.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n",
                          encoding="utf-8")
        return real(study)
    monkeypatch.setattr(generate_module, "input_hashes", rewrite_then_hash)
    generate_packs(root)
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    assert key["inputs"] == {"internal_scores.csv": hashlib.sha256(checked).hexdigest()}
    # the file as it is now is named as changed since the seal, and can be put right
    assert verify_seal(root).problems[0].startswith(
        f"{scores} changed after generate: sha256 {key['inputs']['internal_scores.csv']} ")
    scores.write_bytes(checked)  # restored as checked: the seal holds
    assert verify_seal(root).ok


def _anchored_locked(tmp_path):
    """Protocol 002 after generate (its key hash published) and collect, before lock."""
    root = init_study(tmp_path / "a", "anchored-plan")
    published = generate_packs(root).key_sha256
    return_every_pack(root)
    collect(root)
    return root, published


def test_the_key_published_at_generate_still_verifies_after_lock(tmp_path):
    root, published = _anchored_locked(tmp_path)
    key_before = (root / "sealed" / "key.json").read_bytes()
    result = CliRunner().invoke(cli, ["lock", str(root)])
    assert result.exit_code == 0, result.output
    assert (root / "sealed" / "key.json").read_bytes() == key_before
    verify = CliRunner().invoke(cli, ["verify", str(root), "--key-sha256", published])
    assert verify.exit_code == 0, verify.output
    # verify says it compared the lock's record and the packs the lock added
    assert "checked     lock-record.json matches sealed/lock-record.sha256, and extends " \
        "this key.json\n" in verify.output
    assert "checked     2 packs in packs/ have the sha256" in verify.output
    record = json.loads((root / "sealed" / "lock-record.json").read_text(encoding="utf-8"))
    assert record["chained_to"] == published and record["packs"]
    assert {p["role"] for p in record["packs"]} == {"second"}
    check = verify_seal(root)
    assert {p["rater_id"] for p in check.key["packs"]} >= {p["rater_id"] for p in
                                                         record["packs"]}
    generate_packs(root)  # regenerating after the lock keeps the published key too
    assert (root / "sealed" / "key.json").read_bytes() == key_before
    assert verify_seal(root, published=published).ok


def _pack_hashes(root) -> dict[str, str]:
    manifest = open_manifest(root)
    manifest.close()
    return {head.file: head.sha256 for head in manifest.heads}


def test_after_the_lock_every_pack_hash_is_its_workbooks(tmp_path):
    """The lock writes the manifest again with the second raters' packs: each entry's
    sha256 is still its workbook's, the primary packs' as recorded at generate."""
    root, published = _anchored_locked(tmp_path)
    before = _pack_hashes(root)
    assert CliRunner().invoke(cli, ["lock", str(root)]).exit_code == 0
    after = _pack_hashes(root)
    assert after == {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in (root / L.PACKS_DIR).glob("*.xlsx")}
    assert set(after) > set(before) and {name: after[name] for name in before} == before
    verify = CliRunner().invoke(cli, ["verify", str(root), "--key-sha256", published])
    assert verify.exit_code == 0 and "note:" not in verify.output, verify.output


def test_an_edited_lock_record_is_refused(tmp_path):
    root, published = _anchored_locked(tmp_path)
    assert CliRunner().invoke(cli, ["lock", str(root)]).exit_code == 0
    path = root / "sealed" / "lock-record.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["packs"][0]["cases"] = record["packs"][0]["cases"][:-1]
    path.write_text(json.dumps(record), encoding="utf-8")
    check = verify_seal(root, published=published)
    assert not check.ok and "lock-record.json" in check.problems[0]


def test_a_lock_stopped_after_its_selection_is_finished_by_a_rerun(tmp_path):
    root, published = _anchored_locked(tmp_path)
    assert CliRunner().invoke(cli, ["lock", str(root)]).exit_code == 0
    packs = {p.name for p in (root / L.PACKS_DIR).glob("*.xlsx")}
    # as a lock killed after writing its selection leaves the study
    (root / "sealed" / "lock-record.json").unlink()
    (root / "sealed" / "lock-record.sha256").unlink()
    check = verify_seal(root)
    assert not check.ok and "stopped half-way" in check.problems[0]
    again = CliRunner().invoke(cli, ["lock", str(root)])
    assert again.exit_code == 0 and "already locked" not in again.output, again.output
    assert verify_seal(root, published=published).ok
    assert {p.name for p in (root / L.PACKS_DIR).glob("*.xlsx")} == packs
    third = CliRunner().invoke(cli, ["lock", str(root)])
    assert third.exit_code == 0 and "already locked" in third.output


def _set_of(root) -> dict[str, bytes]:
    """Every file of the packs and the seal, by path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for d in (L.PACKS_DIR, "sealed") for p in sorted((root / d).rglob("*"))
            if p.is_file()}


_KILLED_CHILD = """
import os, signal, sys
from sheetflow.packs import generate as G
real, calls = G.write_pack, []
def dying(path, spec, texts):
    calls.append(path)
    if len(calls) == 2:  # half-way: one new pack written, the rest not
        os.kill(os.getpid(), signal.SIGKILL)
    return real(path, spec, texts)
G.write_pack = dying
G.generate_packs(sys.argv[1], force=True)
"""


def test_a_killed_generate_leaves_the_old_set_whole(tmp_path):
    """generate stages packs, manifest and seal and replaces them together: killed
    half-way (here by SIGKILL after the first new pack), the previous set is intact and
    still verifies; the next run clears the staged files and makes the new set."""
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    before = _set_of(root)
    _change_spec(root)
    run = subprocess.run([sys.executable, "-c", _KILLED_CHILD, str(root)], timeout=300)
    assert run.returncode == -signal.SIGKILL
    assert {k: v for k, v in _set_of(root).items() if ".partial" not in k} == before
    assert list((root / L.PACKS_DIR).glob(".*.partial"))  # what the killed run staged
    generate_packs(root, force=True)
    after = _set_of(root)
    assert not [k for k in after if ".partial" in k]
    assert after["sealed/key.json"] != before["sealed/key.json"]
    assert verify_seal(root).ok


def test_a_failing_generate_replaces_nothing(tmp_path, monkeypatch):
    from sheetflow.errors import SheetflowError

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    before = _set_of(root)
    _change_spec(root)
    fail_at_pack(monkeypatch, 3, "could not write item 'x' (no space left on device)")
    with pytest.raises(SheetflowError):
        generate_packs(root, force=True)
    assert _set_of(root) == before  # nothing staged is left either


def test_outputs_of_one_analyze_share_a_run_and_a_mix_is_named(tmp_path):
    """Each analyze stages out/run.json last: the run id (also in summary.json) and the
    sha256 of every output. A file from another run (as a run killed between replaces
    leaves) makes verify and status say so and exit 1."""
    root = _collected(tmp_path)
    code, text = _analyze_cli(root)
    assert code == 0, text
    run = json.loads((root / "out" / "run.json").read_text(encoding="utf-8"))
    summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["run_id"] == run["run_id"]
    assert {"analysis.xlsx", "summary.json"} <= set(run["files"])
    assert any(name.startswith("feedback-") for name in run["files"])
    for name, digest in run["files"].items():
        assert hashlib.sha256((root / "out" / name).read_bytes()).hexdigest() == digest
    assert CliRunner().invoke(cli, ["verify", str(root)]).exit_code == 0
    # a feedback workbook left by another run
    feedback = sorted((root / "out").glob("feedback-*.xlsx"))[0]
    feedback.write_bytes((root / "out" / "analysis.xlsx").read_bytes())
    verify = CliRunner().invoke(cli, ["verify", str(root)])
    assert verify.exit_code == 1, verify.output
    assert f"out/{feedback.name} is not the file analyze run {run['run_id']} wrote" in \
        verify.output and "mixes runs" in verify.output
    status = CliRunner().invoke(cli, ["status", str(root)])
    assert status.exit_code == 1 and "mixes runs" in status.output
    code, text = _analyze_cli(root)  # a new run makes out/ whole again
    assert code == 0 and CliRunner().invoke(cli, ["verify", str(root)]).exit_code == 0


def _swap_two_cards(root) -> bytes:
    """Swap the items of two cards in every pack of the manifest (what an edited
    manifest does to unblinding: each card's ratings go to the other item)."""
    path = root / L.PACKS_DIR / L.MANIFEST_FILE
    original = path.read_bytes()
    manifest = open_manifest(root)
    ids = [case["item_id"] for case in next(manifest.packs())["cards"]]
    manifest.close()
    a, b = ids[0].encode(), ids[1].encode()
    path.write_bytes(original.replace(a, b"\0").replace(b, a).replace(b"\0", b))
    return original


def test_an_edited_manifest_is_refused_by_collect(tmp_path):
    """Edited before collect and restored after, the manifest moved ratings to other
    items; verify and analyze then passed on the shifted results."""
    root = _returned(tmp_path)
    _swap_two_cards(root)
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 3, result.output
    assert "packs/manifest.json has sha256" in result.output + result.stderr
    assert "changed after generate" in result.output + result.stderr
    assert not (root / "out" / "ratings.csv").exists()


def test_a_manifest_and_plan_lock_edited_together_fail_the_seal(tmp_path):
    """The plan lock alone recorded the manifest's hash, outside the published key
    hash: rewriting both passed 'verify --key-sha256'."""
    root = _returned(tmp_path)
    published = (root / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    _swap_two_cards(root)
    lock = root / "sealed" / "plan.lock.json"
    record = json.loads(lock.read_text(encoding="utf-8"))
    record["manifest_sha256"] = hashlib.sha256(
        (root / L.PACKS_DIR / L.MANIFEST_FILE).read_bytes()).hexdigest()
    lock.write_text(json.dumps(record), encoding="utf-8")
    check = verify_seal(root, published=published)
    assert not check.ok
    assert any("records manifest sha256" in p and "key.json sealed" in p for p in check.problems)
    result = CliRunner().invoke(cli, ["verify", str(root), "--key-sha256", published])
    assert result.exit_code == 3, result.output


def test_a_missing_manifest_fails_the_seal(tmp_path):
    root = _returned(tmp_path)
    (root / L.PACKS_DIR / L.MANIFEST_FILE).unlink()
    check = verify_seal(root)
    assert any(p.startswith(f"{root}/packs/manifest.json is missing") for p in check.problems)


def test_the_key_and_the_secret_are_their_owners_alone(tmp_path):
    """They were written world-readable (0644 in a 0755 folder): anyone with an account
    on the machine could read every card's arm and forge the collection's mark."""
    import stat

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    sealed = root / "sealed"
    assert stat.S_IMODE(sealed.stat().st_mode) == 0o700
    for name in ("key.json", "secret"):
        assert stat.S_IMODE((sealed / name).stat().st_mode) == 0o600, name


def test_ratings_placed_by_an_edited_manifest_are_refused_at_analyze(tmp_path):
    """The manifest and the plan lock edited together, collect run, both restored:
    verify then passed and analyze unblinded the ratings placed by the edited map."""
    root = _returned(tmp_path)
    lock = root / "sealed" / "plan.lock.json"
    sealed_lock = lock.read_bytes()
    original = _swap_two_cards(root)
    record = json.loads(sealed_lock)
    record["manifest_sha256"] = hashlib.sha256(
        (root / L.PACKS_DIR / L.MANIFEST_FILE).read_bytes()).hexdigest()
    lock.write_text(json.dumps(record), encoding="utf-8")
    assert collect(root).report.files
    (root / L.PACKS_DIR / L.MANIFEST_FILE).write_bytes(original)
    lock.write_bytes(sealed_lock)
    assert verify_seal(root).ok
    code, text = _analyze_cli(root)
    assert code == 3, text
    assert "was collected with a manifest of sha256" in text and "not the sealed" in text
    assert not (root / "out" / "analysis.xlsx").exists()


def _rewrite_lock_record(root, change) -> None:
    """Edit the lock record and write its new hash beside it (what a forger does)."""
    path = root / "sealed" / "lock-record.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    change(record)
    data = json.dumps(record).encode()
    path.write_bytes(data)
    (root / "sealed" / "lock-record.sha256").write_text(
        f"{hashlib.sha256(data).hexdigest()}  lock-record.json\n", encoding="utf-8")


def test_after_the_lock_a_moved_card_fails_against_the_published_key(tmp_path):
    """With a lock record, the manifest was held only to the record's hash: a card
    moved to another item, with the record and its hash file rewritten, passed."""
    root, published = _anchored_locked(tmp_path)
    assert CliRunner().invoke(cli, ["lock", str(root)]).exit_code == 0
    _swap_two_cards(root)
    moved = hashlib.sha256((root / L.PACKS_DIR / L.MANIFEST_FILE).read_bytes()).hexdigest()
    _rewrite_lock_record(root, lambda record: record.update(manifest_sha256=moved))
    check = verify_seal(root, published=published)
    assert not check.ok
    assert any("do not show the items key.json sealed" in p for p in check.problems)


def test_a_rewritten_lock_record_fails_against_its_published_hash(tmp_path):
    """A second rater's sides flipped in the record, its hash file rewritten: only the
    hash published at the lock tells; 'verify --lock-sha256' now takes it."""
    root, published = _anchored_locked(tmp_path)
    result = CliRunner().invoke(cli, ["lock", str(root)])
    assert result.exit_code == 0, result.output
    at_lock = (root / "sealed" / "lock-record.sha256").read_text(encoding="utf-8").split()[0]
    args = ["verify", str(root), "--key-sha256", published, "--lock-sha256", at_lock]
    assert CliRunner().invoke(cli, args).exit_code == 0

    def flip(record):
        case = record["packs"][0]["cases"][0]
        if "sides" in case:
            case["sides"] = {k: v for k, v in zip(case["sides"], reversed(
                list(case["sides"].values())), strict=True)}
        else:
            case["arm"] = "flipped"
    _rewrite_lock_record(root, flip)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    assert "not the " + at_lock + " published at the lock" in result.output + result.stderr
    bad = CliRunner().invoke(cli, ["verify", str(root), "--lock-sha256", "abc"])
    assert bad.exit_code == 2 and "--lock-sha256 'abc': not a sha256" in bad.output + bad.stderr
