"""Round trips: generate every template's packs, fill them (LibreOffice, openpyxl),
collect, and compare every value read back with what was entered.

The LibreOffice fill is LibreOffice itself entering the answers (UNO cell API, see
``tests/lo_fill.py``) and saving xlsx with its own filter; one soffice fills every
template's packs."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import (
    LO_FILL,
    entered_as_number,
    fill_libreoffice_many,
    fill_openpyxl,
    find_uno_python,
    libreoffice_profile,
    plan_answers,
    require_libreoffice,
)

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study, list_templates
from sheetflow.workbook.layout import IDENTITY_SHEET, SCORING_SHEET, iter_answer_cells

TEMPLATES = sorted(list_templates())


def _study(tmp_path: Path, template: str) -> tuple[Path, dict]:
    root = tmp_path / template
    init_study(root, template)
    generate_packs(root)
    manifest = read_manifest(root / "packs" / "manifest.json")
    (root / "returns").mkdir(exist_ok=True)
    return root, manifest


def _confidence_owners(pack: dict) -> dict[str, str]:
    """Confidence cell -> the answer cell whose rating row carries it."""
    owners: dict[str, str] = {}
    last_value = ""
    for a in iter_answer_cells(pack):
        if a["part"] == "confidence":
            owners[a["cell"]] = last_value
        elif a["part"] in ("value", "q1"):
            last_value = a["cell"]
    return owners


def _check_values(root: Path, manifest: dict, plans: dict[str, dict]) -> None:
    result = collect(root)
    errors = [i for i in result.report.issues if i.severity == "error"]
    assert not errors, errors[:5]
    assert len(result.report.files) == len(manifest["packs"])
    assert all(f.used for f in result.report.files)
    rows = {(r["rater_id"], r["cell"]): r for r in result.ratings if r["cell"]}
    checked = 0
    for pack in manifest["packs"]:
        owners = _confidence_owners(pack)
        for cell, (_, expected) in plans[pack["identity"]["pack_id"]].items():
            if cell in owners:
                assert rows[(pack["rater_id"], owners[cell])]["confidence"] == expected
            else:
                assert rows[(pack["rater_id"], cell)]["value"] == expected, cell
            checked += 1
    assert checked >= 10 * len(manifest["packs"])


@pytest.mark.parametrize("template", TEMPLATES)
def test_openpyxl_fill_reads_back_exactly(tmp_path, template):
    root, manifest = _study(tmp_path, template)
    plans = {}
    for pack in manifest["packs"]:
        plans[pack["identity"]["pack_id"]] = plan = plan_answers(pack)
        fill_openpyxl(root / "packs" / pack["file"], root / "returns" / pack["file"], plan)
    _check_values(root, manifest, plans)


@pytest.fixture(scope="module")
def libreoffice_filled(tmp_path_factory):
    """Every template's packs, answered by LibreOffice itself (one soffice for all).

    Returns template -> (study root, manifest, plans, lo_fill report).
    """
    require_libreoffice()
    base = tmp_path_factory.mktemp("lo")
    studies, jobs = {}, []
    for template in TEMPLATES:
        root, manifest = _study(base, template)
        plans = {}
        for pack in manifest["packs"]:
            plans[pack["identity"]["pack_id"]] = plan = plan_answers(pack)
            jobs.append((root / "packs" / pack["file"], root / "returns" / pack["file"], plan))
        studies[template] = (root, manifest, plans)
    report = fill_libreoffice_many(jobs, libreoffice_profile(base))
    assert len(report["files"]) == len(jobs)
    return {t: (*study, report) for t, study in studies.items()}


@pytest.mark.libreoffice
@pytest.mark.parametrize("template", TEMPLATES)
def test_libreoffice_fill_reads_back_exactly(libreoffice_filled, template, tmp_path):
    root, manifest, plans, _ = libreoffice_filled[template]
    _check_values(root, manifest, plans)
    # The same entries (a Likert choice "3" as the number LibreOffice makes of it)
    # written with openpyxl collect to the very same ratings and issues: only the
    # files' own hashes differ.
    twin = tmp_path / template
    shutil.copytree(root, twin, ignore=lambda d, _: ["returns", "out"] if d == str(root) else [])
    (twin / "returns").mkdir()
    for pack in manifest["packs"]:
        typed = {cell: (v if isinstance(v, float) else int(v) if entered_as_number(v) else v,
                        want)
                 for cell, (v, want) in plans[pack["identity"]["pack_id"]].items()}
        fill_openpyxl(twin / "packs" / pack["file"], twin / "returns" / pack["file"], typed)
    lo, op = collect(root), collect(twin)

    def comparable(result):
        return ([{k: v for k, v in r.items() if k != "source_sha256"} for r in result.ratings],
                [dataclasses.astuple(i) for i in result.report.issues])

    lo_ratings, lo_issues = comparable(lo)
    op_ratings, op_issues = comparable(op)
    assert lo_issues == op_issues
    for got, want in zip(lo_ratings, op_ratings, strict=True):
        assert got == want


@pytest.mark.libreoffice
@pytest.mark.parametrize("template", TEMPLATES)
def test_libreoffice_fill_is_libreoffices_own_xlsx(libreoffice_filled, template):
    """The returns were written by LibreOffice, with its conversions, not by openpyxl.

    The generated pack does not name LibreOffice and has a very hidden identity sheet;
    LibreOffice's save names itself, keeps the identity sheet only plain hidden,
    stores every entry that is a number (a Likert choice picked too) as a number, and
    note text with newlines, tabs and any Unicode as text. Collect reading these
    files exactly is checked by ``test_libreoffice_fill_reads_back_exactly``.
    """
    root, manifest, plans, _ = libreoffice_filled[template]
    for pack in manifest["packs"]:
        source, path = root / "packs" / pack["file"], root / "returns" / pack["file"]
        with zipfile.ZipFile(source) as z:
            assert b"LibreOffice" not in z.read("docProps/app.xml")
        assert openpyxl.load_workbook(source)[IDENTITY_SHEET].sheet_state == "veryHidden"
        with zipfile.ZipFile(path) as z:
            app = z.read("docProps/app.xml").decode("utf-8")
        assert "<Application>LibreOffice" in app, (path.name, app[:300])
        wb = openpyxl.load_workbook(path)
        assert wb[IDENTITY_SHEET].sheet_state == "hidden"
        ws = wb[SCORING_SHEET]
        assert ws.protection.sheet, "the Scoring sheet must still be protected"
        for cell, (value, _) in plans[pack["identity"]["pack_id"]].items():
            got = ws[cell].value
            assert ws[cell].protection.locked is False, cell
            if entered_as_number(value):
                assert isinstance(got, int | float) and got == float(value), (cell, got)
                assert ws[cell].data_type == "n", cell
            else:
                assert got == value, (path.name, cell, got, value)


@pytest.mark.libreoffice
def test_lo_fill_refuses_a_locked_cell_and_leaves_no_soffice(tmp_path):
    """lo_fill.py fails loudly on a cell no rater could type into (the UNO API writes
    through sheet protection), saves nothing, and ends the soffice it started."""
    require_libreoffice()
    root, manifest = _study(tmp_path, "keep-known")
    pack = manifest["packs"][0]
    pid_file, dst = tmp_path / "soffice.pid", tmp_path / "out.xlsx"
    spec = {"profile": str(libreoffice_profile(tmp_path)), "timeout": 120,
            "pid_file": str(pid_file),
            "jobs": [{"src": str(root / "packs" / pack["file"]), "dst": str(dst),
                      "sheet": SCORING_SHEET, "cells": [["B1", "string", "typed over"]]}]}
    (tmp_path / "jobs.json").write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run([find_uno_python(), str(LO_FILL), str(tmp_path / "jobs.json")],
                          capture_output=True, timeout=180, check=False)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert not report["ok"] and "B1 is locked" in report["error"], report
    assert not dst.exists()
    with pytest.raises(ProcessLookupError):
        os.killpg(int(pid_file.read_text(encoding="ascii")), 0)
