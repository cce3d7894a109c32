"""Round trips: generate every template's packs, fill them (LibreOffice, openpyxl),
collect, and compare every value read back with what was entered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from roundtrip_helpers import fill_libreoffice, fill_openpyxl, libreoffice_profile, plan_answers

from sheetflow.collect import collect
from sheetflow.generate import generate_packs
from sheetflow.templates import init_study, list_templates
from sheetflow.workbook.layout import iter_answer_cells

TEMPLATES = sorted(list_templates())
needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None,
                                   reason="LibreOffice (soffice) is not installed")


def _study(tmp_path: Path, template: str) -> tuple[Path, dict]:
    root = tmp_path / template
    init_study(root, template)
    generate_packs(root)
    manifest = json.loads((root / "packs" / "manifest.json").read_text(encoding="utf-8"))
    (root / "returns").mkdir()
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


@pytest.mark.libreoffice
@needs_soffice
@pytest.mark.parametrize("template", TEMPLATES)
def test_libreoffice_fill_reads_back_exactly(tmp_path, template):
    root, manifest = _study(tmp_path, template)
    profile = libreoffice_profile(tmp_path)
    plans = {}
    for pack in manifest["packs"]:
        plans[pack["identity"]["pack_id"]] = plan = plan_answers(pack)
        fill_libreoffice(root / "packs" / pack["file"], root / "returns" / pack["file"],
                         plan, profile)
    _check_values(root, manifest, plans)
