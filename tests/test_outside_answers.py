"""``generate`` records in the manifest how many cells with content each visible sheet
of a pack has: what collect compares a return with to see text typed outside the
answer cells."""

from __future__ import annotations

from sheetflow.collect.file_check import _Plan
from sheetflow.collect.reader import open_book
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study, list_templates
from sheetflow.workbook import layout as L


def test_generate_records_the_cells_a_reader_sees_on_each_visible_sheet(tmp_path):
    """The counts in the manifest are what collect's reader finds in the pack as
    written (a cell holding "" does not count: openpyxl drops it, Excel keeps it)."""
    for template in sorted(list_templates()):
        root = tmp_path / template
        init_study(root, template)
        generate_packs(root)
        for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
            recorded = pack["sheet_cells"]
            assert set(recorded) == {L.INSTRUCTIONS_SHEET, L.SCORING_SHEET, L.MORE_SHEET}
            book = open_book(root / L.PACKS_DIR / pack["file"])
            for sheet, count in recorded.items():
                rows, cols = book.extents[sheet]
                assert len(book.cells(sheet, rows, cols)) == count, (template, sheet)
            # all of the Scoring sheet's within the window collect reads and counts
            assert len(book.cells(L.SCORING_SHEET, *_Plan(pack).window)) == \
                recorded[L.SCORING_SHEET], template
            book.close()
