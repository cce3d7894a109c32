"""``sheetflow status`` says what collect would: the file that stands for each rater,
the returns not yet collected, the files that match no pack, and whether a reply is due.

EV-01 returns a filled workbook with one error beside the pack sent back untouched
(named so that it sorts first); EV-02 and EV-03 return clean workbooks.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.collect.pack_status import status
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

FILLED = "scores-final.xlsx"
COPY = "copy-of-pack.xlsx"  # sorts before FILLED


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Three raters' packs, filled; EV-01's with one error and the untouched pack beside."""
    root = init_study(tmp_path_factory.mktemp("status") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    assert pack["rater_id"] == "EV-01"
    listed = next(a for a in L.iter_answer_cells(pack) if a["validation"]["type"] == "list")
    (root / "spare").mkdir()
    shutil.copyfile(files[0], root / "spare" / files[0].name)  # EV-01's, without the error
    wb = openpyxl.load_workbook(files[0])
    wb[listed["sheet"]][listed["cell"]].value = "Maybe"
    wb.save(files[0])
    files[0].rename(root / L.RETURNS_DIR / FILLED)
    shutil.copyfile(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / COPY)
    return root


@pytest.fixture
def study(base, tmp_path) -> Path:
    """A fresh copy of :func:`base` for a test that changes it."""
    return Path(shutil.copytree(base, tmp_path / "s"))


def _all_clean(root: Path) -> list[Path]:
    """EV-01's own pack filled without the error, in place of the two files: every
    return clean. Returns the three files, in manifest order."""
    returns = root / L.RETURNS_DIR
    (returns / FILLED).unlink()
    (returns / COPY).unlink()
    (spare,) = (root / "spare").iterdir()
    shutil.copyfile(spare, returns / spare.name)
    heads = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    return [returns / p["file"] for p in heads]


def test_status_shows_the_filled_file_not_the_pack_sent_back_beside_it(base):
    """The untouched pack copy sorted first and was shown as the return (0% complete)
    with the other file's error count; collect uses neither, and works on the filled
    one."""
    row = next(r for r in status(base) if r.rater == "EV-01")
    assert row.returned_file == FILLED
    assert row.percent_complete is not None and row.percent_complete > 90
    assert row.errors == 1
    on_sheet = next(r for r in collect(base, write=False).roster if r.rater_id == "EV-01")
    assert on_sheet.file.split(", ")[0] == FILLED
    assert on_sheet.percent_complete == row.percent_complete
    text = CliRunner().invoke(cli, ["status", str(base)]).stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("EV-01"))
    assert line.endswith(FILLED) and " 0% " not in line


def test_the_pack_sent_back_says_the_filled_file_with_errors_is_not_used(base):
    """collect's pack-as-sent-again warning said the filled file beside it "is the one
    used" when that file had an error and was not used."""
    result = collect(base, write=False)
    (filled,) = [f for f in result.report.files if f.file == FILLED]
    assert not filled.used
    (again,) = [i for i in result.report.issues if i.file == COPY]
    assert again.code == "pack-as-sent-again"
    assert "which is the one used" not in again.message
    assert again.message.endswith(f"it came back beside their filled file ({FILLED}), "
                                  "which has errors: none is used until they are fixed.")


def test_status_exits_1_while_returns_are_not_collected(study):
    """EV-03's file came after the collect: status said "3 of 3 packs returned" and
    exited 0 while out/ still had EV-03 as not returned (analyze then failed)."""
    third = _all_clean(study)[2]
    held = third.rename(study / "spare" / "held.xlsx")
    assert CliRunner().invoke(cli, ["collect", str(study)]).exit_code == 1  # EV-03 is out
    held.rename(third)
    result = CliRunner().invoke(cli, ["status", str(study)])
    assert result.exit_code == 1, result.output
    assert "3 of 3 packs returned" in result.stdout
    assert (f"1 file in returns/ new or changed since the last collect ({third.name}): "
            f"out/ is not current; 'sheetflow collect {study}' is the next step"
            ) in result.stdout
    doc = json.loads(CliRunner().invoke(cli, ["status", str(study), "--json"]).stdout)
    assert doc["ok"] is False and doc["not_collected"] == [third.name]
    assert CliRunner().invoke(cli, ["collect", str(study)]).exit_code == 0
    again = CliRunner().invoke(cli, ["status", str(study)])
    assert again.exit_code == 0 and "sheetflow collect" not in again.stdout, again.output


def test_status_before_any_collect_says_collect_is_next(study):
    """Every pack back and clean, but never collected: out/ holds nothing to analyze."""
    _all_clean(study)
    result = CliRunner().invoke(cli, ["status", str(study)])
    assert result.exit_code == 1, result.output
    assert "3 files in returns/ not collected yet (" in result.stdout
    assert result.stdout.rstrip().endswith(f"'sheetflow collect {study}' is the next step")


def test_status_names_a_file_that_matches_no_pack_and_exits_1(study):
    """A damaged file named like no pack: collect reported corrupt-file and exited 1,
    status showed the three packs back, said nothing of the file and exited 0."""
    _all_clean(study)
    (study / L.RETURNS_DIR / "x.xlsx").write_bytes(b"PK\x03\x04garbage")
    assert CliRunner().invoke(cli, ["collect", str(study)]).exit_code == 1
    result = CliRunner().invoke(cli, ["status", str(study)])
    assert result.exit_code == 1, result.output
    (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith("x.xlsx")]
    assert line.startswith("x.xlsx: could not be read, so its rater is unknown: find out "
                           "who sent it, "), line
    assert "  error: x.xlsx: [corrupt-file] The file is damaged or incomplete" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "3 of 3 packs returned; 1 file that could not be read, its rater unknown (find out "
        "who sent it)")
    doc = json.loads(CliRunner().invoke(cli, ["status", str(study), "--json"]).stdout)
    assert doc["ok"] is False and doc["not_collected"] == []
    (unmatched,) = doc["unmatched"]
    assert unmatched["file"] == "x.xlsx" and unmatched["errors"] == 1
    assert unmatched["reason"].startswith("[corrupt-file] ")
