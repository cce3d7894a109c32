"""A later sitting's pack has no Submission area (the study questions are asked once,
in the first sitting), so its More instructions sheet does not describe them either: a
rater told "Your relationship to the corpus ... Required." looks for a cell the pack
does not have."""

from __future__ import annotations

import openpyxl

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _texts(ws) -> list[str]:
    return [str(c.value) for row in ws.iter_rows() for c in row if isinstance(c.value, str)]


def test_the_rubric_in_detail_names_study_questions_only_where_the_pack_asks_them(tmp_path):
    root = init_study(tmp_path / "kk", "keep-known")
    generate_packs(root)
    labels = [d.label for d in load_study(root).rubric.dimensions if d.scope == "study"]
    assert labels
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for pack in packs:
        wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
        asked = [t for t in _texts(wb[L.SCORING_SHEET]) if t in labels]
        told = [t for t in _texts(wb[L.MORE_SHEET]) if t in labels]
        assert told == asked, (pack["file"], told, asked)
    assert {int(p.get("sitting", 1)) for p in packs} == {1, 2}
