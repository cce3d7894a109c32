"""A study with its first pack filled in and returned, edited cell by cell: the set-up
of the tests of what collect says about the cells outside the answers."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from generate_helpers import manifest_before
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def first_pack(root: Path, template: str = "paired-rubric") -> dict:
    """Make and generate a ``template`` study at ``root``; its first pack's entry."""
    init_study(root, template)
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    return read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]


def filled_return(root: Path, pack: dict, name: str | None = None) -> Path:
    """``pack`` with every answer filled in (openpyxl), in ``returns/``."""
    dst = root / "returns" / (name or pack["file"])
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, plan_answers(pack))
    return dst


def edit_cells(path: Path, cells: dict[tuple[str, str], object]) -> dict[tuple[str, str], object]:
    """Write each (sheet, cell) -> value of ``cells`` with openpyxl; what each held before."""
    wb = openpyxl.load_workbook(path)
    before = {}
    for (sheet, cell), value in cells.items():
        before[(sheet, cell)] = wb[sheet][cell].value
        wb[sheet][cell] = value
    wb.save(path)
    return before


def coded(issues, code: str) -> list:
    """The issues of ``code``."""
    return [i for i in issues if i.code == code]


def assert_old_manifest_skips(root: Path, key: str, code: str) -> None:
    """With one ``code`` issue planted in the study's return: a manifest written before
    generate recorded ``key`` makes no such check, and the return is still used."""
    assert len(coded(collect(root, write=False).report.issues, code)) == 1
    manifest_before(root, key)
    result = collect(root, write=False)
    assert not coded(result.report.issues, code)
    assert result.report.files[0].used
