"""The spec in a pack: a mark keyed by the study secret, never the spec hash.

The attack these tests replay: a rater who knows the whole study but which response is
which arm (a template kept as shipped, ``[items] show_id = true`` so the ids are on the
cards, the responses read off their own pack) tries every assignment of each case's
two responses to the arms, hashes each spec and looks for the hash in the pack. The
spec hash is a plain sha256 of the spec, so the guess that matches names the arm on
every side of every card. The pack now carries ``spec_mark``, HMAC-SHA256 of the spec
hash under the secret, which no guess can be tested against; ``collect`` recomputes
it, and still takes the packs of earlier versions, which carry the spec hash itself.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import hmac
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.workbook.defined_name import DefinedName

from sheetflow.collect import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import Item, Study, load_study
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent
CASES = 8  # 2^8 guesses: every side of every case


def _small_paired_study(folder: Path) -> Path:
    """The paired-rubric template cut to its first :data:`CASES` cases, ids shown."""
    shutil.copytree(ROOT / "templates" / "paired-rubric", folder)
    keep = {f"TC-{k:03d}" for k in range(1, CASES + 1)}
    for name, column in (("items.csv", "case_id"), ("internal_scores.csv", "case_id")):
        path = folder / name
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
            header = list(rows[0])
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, header)
            writer.writeheader()
            writer.writerows(r for r in rows if r[column] in keep)
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('id_column = "case_id"\n',
                                 'id_column = "case_id"\nshow_id = true\n', 1),
                    encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory) -> Path:
    folder = _small_paired_study(tmp_path_factory.mktemp("mark") / "study")
    generate_packs(folder)
    return folder


def _swapped(item: Item, first: str, second: str) -> Item:
    fields = dict(item.fields)
    fields[first], fields[second] = item.fields[second], item.fields[first]
    return dataclasses.replace(item, fields=fields)


def _guessed_hashes(study: Study) -> list[str]:
    """The spec hash of every assignment of each case's two responses to the arms."""
    first, second = (arm.column for arm in study.design.arms)
    guesses = []
    for sides in range(2 ** len(study.items)):
        items = tuple(_swapped(it, first, second) if sides >> k & 1 else it
                      for k, it in enumerate(study.items))
        guesses.append(dataclasses.replace(study, items=items).hash)
    return guesses


def _every_part(pack: Path) -> list[bytes]:
    """The pack's bytes as stored, and each part of the zip decompressed, in lower case."""
    with zipfile.ZipFile(pack) as z:
        parts = [z.read(name) for name in z.namelist()]
    return [data.lower() for data in [pack.read_bytes(), *parts]]


def test_no_guess_about_the_arms_matches_anything_in_a_pack(study_dir):
    study = load_study(study_dir)
    assert len(study.items) == CASES and study.show_id
    guesses = _guessed_hashes(study)
    assert guesses[0] == study.hash  # no case turned: the spec as it is
    assert len(set(guesses)) == 2 ** CASES
    packs = sorted((study_dir / L.PACKS_DIR).glob("*.xlsx"))
    assert packs
    for pack in packs:
        parts = _every_part(pack)
        found = [g for g in guesses if any(g.encode() in data for data in parts)]
        assert not found, f"{pack.name} holds the spec hash of a guess about the arms"


def test_the_pack_carries_the_spec_mark_in_every_identity_store(study_dir):
    study = load_study(study_dir)
    secret = bytes.fromhex((study_dir / "sealed" / "secret").read_text(encoding="ascii"))
    # the documented recipe: HMAC-SHA256 under the secret of the purpose and the spec hash
    mark = hmac.new(secret, b"sheetflow spec mark\x1f" + study.hash.encode(),
                    hashlib.sha256).hexdigest()
    manifest = read_manifest(study_dir / L.PACKS_DIR / L.MANIFEST_FILE)
    for entry in manifest["packs"]:
        assert entry["identity"]["spec_mark"] == mark
        wb = openpyxl.load_workbook(study_dir / L.PACKS_DIR / entry["file"])
        props = {p.name: p.value for p in wb.custom_doc_props.props}
        assert props[L.identity_property("spec_mark")] == mark
        assert L.identity_property("spec_hash") not in props
        assert wb.defined_names[L.identity_name("spec_mark")].attr_text == f'"{mark}"'
        sheet = wb[L.IDENTITY_SHEET]
        assert [sheet.cell(3, 1).value, sheet.cell(3, 2).value] == ["spec_mark", mark]


def _returned(study_dir: Path, tmp: Path, change=None) -> Path:
    """A study copy whose returns hold rater R1's pack, as sent or changed by ``change``."""
    folder = tmp / "study"
    shutil.copytree(study_dir, folder)
    manifest = read_manifest(folder / L.PACKS_DIR / L.MANIFEST_FILE)
    name = manifest["packs"][0]["file"]
    returns = folder / L.RETURNS_DIR
    returns.mkdir(exist_ok=True)
    if change is None:
        shutil.copy(folder / L.PACKS_DIR / name, returns / name)
    else:
        wb = openpyxl.load_workbook(folder / L.PACKS_DIR / name)
        change(wb)
        wb.save(returns / name)
    return folder


def _as_earlier_version(value: str):
    """The identity an earlier sheetflow wrote: ``spec_hash`` with ``value``, no mark."""
    def change(wb: openpyxl.Workbook) -> None:
        for prop in wb.custom_doc_props.props:
            if prop.name == L.identity_property("spec_mark"):
                prop.name, prop.value = L.identity_property("spec_hash"), value
        del wb.defined_names[L.identity_name("spec_mark")]
        wb.defined_names[L.identity_name("spec_hash")] = DefinedName(
            L.identity_name("spec_hash"), attr_text=f'"{value}"')
        sheet = wb[L.IDENTITY_SHEET]
        sheet.cell(3, 1).value, sheet.cell(3, 2).value = "spec_hash", value
    return change


def _spec_issues(folder: Path, *, write: bool = True) -> list:
    result = collect(folder, write=write, workers=1)
    assert result.report.files  # the return was read
    return [i for i in result.report.issues
            if i.code in ("spec-hash-mismatch", "unknown-rater", "identity-conflict",
                          "identity-partial")]


def test_a_pack_as_sent_is_taken_for_the_current_spec(study_dir, tmp_path):
    assert _spec_issues(_returned(study_dir, tmp_path)) == []


def test_a_pack_of_an_earlier_version_carrying_the_spec_hash_is_taken(study_dir, tmp_path):
    folder = _returned(study_dir, tmp_path, _as_earlier_version(load_study(study_dir).hash))
    assert _spec_issues(folder) == []


def test_a_pack_of_an_earlier_version_with_another_spec_hash_is_refused(study_dir, tmp_path):
    folder = _returned(study_dir, tmp_path, _as_earlier_version("0" * 64))
    found = _spec_issues(folder)
    assert [i.code for i in found] == ["spec-hash-mismatch"]
    assert "(spec hash 000000000000..., current " in found[0].message


def test_a_pack_of_another_version_of_the_spec_is_refused(study_dir, tmp_path):
    folder = _returned(study_dir, tmp_path)
    toml = folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'version = "1.0"', 'version = "1.1"', 1), encoding="utf-8")
    old = {p.name: p.read_bytes() for p in (folder / L.RETURNS_DIR).iterdir()}
    shutil.rmtree(folder / L.RETURNS_DIR)  # generate --force refuses while returns exist
    generate_packs(folder, force=True)
    (folder / L.RETURNS_DIR).mkdir(exist_ok=True)
    for name, data in old.items():
        (folder / L.RETURNS_DIR / name).write_bytes(data)
    found = _spec_issues(folder)
    assert [i.code for i in found] == ["spec-hash-mismatch"]
    assert "where the current spec and the study secret give" in found[0].message
    # sheetflow's own words, whole: not cut at 80 characters as a rater's pasted value is
    assert re.search(r"\(spec mark [0-9a-f]{12}\.\.\., where the current spec and the "
                     r"study secret give [0-9a-f]{12}\.\.\.\)", found[0].message), \
        found[0].message


def test_a_preview_without_the_secret_checks_the_mark_against_the_manifest(study_dir,
                                                                             tmp_path):
    folder = _returned(study_dir, tmp_path)
    (folder / "sealed" / "secret").unlink()  # a preview need not read sealed/
    assert _spec_issues(folder, write=False) == []
    forged = _returned(study_dir, tmp_path / "forged", _mark("f" * 64))
    (forged / "sealed" / "secret").unlink()
    found = _spec_issues(forged, write=False)
    assert [i.code for i in found] == ["spec-hash-mismatch"]
    assert "where the manifest's packs carry" in found[0].message


def _mark(value: str):
    def change(wb: openpyxl.Workbook) -> None:
        for prop in wb.custom_doc_props.props:
            if prop.name == L.identity_property("spec_mark"):
                prop.value = value
        wb.defined_names[L.identity_name("spec_mark")].attr_text = f'"{value}"'
        wb[L.IDENTITY_SHEET].cell(3, 2).value = value
    return change


def _sealed_set(folder: Path) -> dict[str, bytes]:
    return {f"{p.parent.name}/{p.name}": p.read_bytes()
            for d in (L.PACKS_DIR, "sealed") for p in sorted((folder / d).iterdir())
            if p.is_file()}


def test_packs_sent_with_the_spec_hash_are_regenerated_byte_for_byte(tmp_path, monkeypatch):
    """A study an earlier version generated (its packs carry the spec hash) and
    regenerated in place keeps its packs, manifest and published key hash: those packs
    are in the raters' hands already."""
    import sheetflow.packs.generate as G

    folder = _small_paired_study(tmp_path / "study")
    with monkeypatch.context() as patch:  # what an earlier version wrote
        patch.setattr(G, "_spec_field",
                      lambda root, spec_hash, secret, reused: (L.LEGACY_SPEC_KEY, spec_hash))
        generate_packs(folder)
    before = _sealed_set(folder)
    manifest = read_manifest(folder / L.PACKS_DIR / L.MANIFEST_FILE)
    assert manifest["packs"][0]["identity"]["spec_hash"] == load_study(folder).hash
    generate_packs(folder)
    assert _sealed_set(folder) == before


def test_an_edited_mark_is_not_said_to_be_only_another_version(study_dir, tmp_path):
    """The rater's own pack with its mark edited was told "This workbook was made from
    a different version of the study": collect cannot tell the two apart, so it says
    both."""
    found = _spec_issues(_returned(study_dir, tmp_path, _mark("0" * 64)))
    assert [i.code for i in found] == ["spec-hash-mismatch"]
    assert "or its identity was edited" in found[0].message


def test_a_pack_its_rows_prove_with_its_mark_edited_says_whose_it_is(study_dir, tmp_path):
    """The rater's own pack, its mark edited, was "rater unknown (not a pack of this
    study)" with no cell named: its hidden row ids prove whose pack it is."""
    from mail_helpers import run

    folder = _returned(study_dir, tmp_path, _mark("0" * 64))
    (found,) = _spec_issues(folder, write=False)
    assert (found.sheet, found.cell) == (L.IDENTITY_SHEET, "B3")
    head = read_manifest(folder / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    result = run("collect", str(folder))
    assert result.exit_code == 1
    (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith(head["file"])]
    assert line == (f"{head['file']}: {head['rater_id']}'s pack by its hidden row ids, but "
                    f"its spec mark ({L.IDENTITY_SHEET}!B3) was edited or is of another "
                    "version of the study: counted for nobody, 1 error, 0 warnings, "
                    "NOT USED")
    assert "not a pack of this study" not in result.stdout


@pytest.fixture
def mark_edited(study_dir, tmp_path) -> tuple[Path, dict, str]:
    """Rater R1's own pack returned with its mark edited, collected: the study, R1's
    manifest entry and collect's output."""
    from mail_helpers import run

    folder = _returned(study_dir, tmp_path, _mark("0" * 64))
    head = read_manifest(folder / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    result = run("collect", str(folder))
    assert result.exit_code == 1, result.output
    return folder, head, result.stdout


def test_a_pack_its_rows_prove_with_its_mark_edited_is_returned_unusable(mark_edited):
    """collect said "not returned" of the pack whose file it had just named, so a
    reminder would tell its rater the pack never arrived; it drafted them no reply."""
    import email
    import email.policy

    folder, head, stdout = mark_edited
    rater = head["rater_id"]
    assert f"not returned: {rater} " not in stdout
    assert f"returned unusable: {rater}: returned, but it cannot be used: " in stdout
    draft = folder / "out" / "feedback" / f"{rater}.eml"
    msg = email.message_from_bytes(draft.read_bytes(), policy=email.policy.default)
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert [a.get_filename() for a in msg.iter_attachments()] == [head["file"]]
    # the same file sent again is refused again: not "attach your workbook again"
    assert "attach your filled-in workbook again" not in body
    assert "The hidden part of this workbook that says which version of the study it is "\
           "was changed, or the workbook is from an earlier version" in body
    assert "Sending this file again would not help" in body
    # collect's line for the pack says what the draft asks, not "attach it again"
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith(f"returned unusable: {rater}")]
    assert "attach it again" not in line
    assert f"asking {rater} to copy their answers into their original workbook" in line


def test_status_shows_a_pack_its_rows_prove_on_its_raters_row(mark_edited):
    """status called the file one that "matches no pack of this study" and counted it
    as a file to find the sender of, and the pack as not returned."""
    from mail_helpers import run

    folder, head, _ = mark_edited
    result = run("status", str(folder))
    assert result.exit_code == 1
    assert "matches no pack" not in result.stdout
    assert "matching no pack" not in result.stdout
    (row,) = [ln for ln in result.stdout.splitlines() if ln.startswith(head["rater_id"])]
    assert f"{head['file']} (UNUSABLE: {head['file']}: {head['rater_id']}'s pack by its " \
           "hidden row ids" in row
    assert "with a file that cannot be used" in result.stdout.splitlines()[-1]
