"""Text a rater puts in a text box or shape drawn on a sheet is named, never lost in
silence: its sheet, the cell it is anchored to and its text, a warning that makes
collect exit 1 until the file is marked read, put to the rater in the second person;
a clean return reads no drawing at all.

openpyxl cannot write a shape with text, so the drawing parts are written into the
returned zip directly, as Excel writes them: ``xl/drawings/drawing1.xml`` (a
``xdr:wsDr`` of anchors holding ``xdr:sp`` shapes, their text in ``a:t`` runs), the
sheet's relationship to it in ``xl/worksheets/_rels/sheetN.xml.rels``, a ``<drawing>``
element in the sheet, and its content type."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.comments import Comment
from roundtrip_helpers import (
    paired_study_with_a_copy,
    require_libreoffice,
    return_both_from_libreoffice,
    return_every_pack,
)

from sheetflow.cli import cli
from sheetflow.collect.replies import feedback_body
from sheetflow.collect.run import collect
from sheetflow.collect.safety import sheet_members
from sheetflow.collect.validate import issue
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.study import Rater
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
DRAWING_REL = f"{REL}/drawing"
DRAWING_TYPE = "application/vnd.openxmlformats-officedocument.drawing+xml"
WHY = "case 3: response B cites no source"


def _from(col: int, row: int) -> str:
    """An anchor's top-left corner, 0-based as the drawing counts."""
    return (f"<xdr:from><xdr:col>{col}</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>{row}"
            "</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>")


def _to(col: int, row: int) -> str:
    return _from(col, row).replace("xdr:from", "xdr:to")


def _shape(ident: int, *paragraphs: list[str]) -> str:
    """A text box (``txBox="1"``) whose paragraphs hold these runs; none: no text."""
    body = "".join("<a:p>" + "".join(f'<a:r><a:rPr lang="en-GB" sz="1100"/><a:t>{run}'
                                      "</a:t></a:r>" for run in runs) + "</a:p>"
                   for runs in paragraphs)
    text = ('<xdr:txBody><a:bodyPr wrap="square" rtlCol="0" anchor="t"/><a:lstStyle/>'
            f"{body}</xdr:txBody>") if paragraphs else ""
    return (f'<xdr:sp macro="" textlink=""><xdr:nvSpPr><xdr:cNvPr id="{ident}" '
            f'name="TextBox {ident}"/><xdr:cNvSpPr txBox="1"/></xdr:nvSpPr><xdr:spPr>'
            '<a:xfrm><a:off x="0" y="0"/><a:ext cx="1828800" cy="457200"/></a:xfrm>'
            '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr>'
            f"{text}</xdr:sp>")


def _two_cell(col: int, row: int, inner: str) -> str:
    return (f'<xdr:twoCellAnchor editAs="oneCell">{_from(col, row)}{_to(col + 3, row + 2)}'
            f"{inner}<xdr:clientData/></xdr:twoCellAnchor>")


def _drawing(*anchors: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<xdr:wsDr '
            f'xmlns:xdr="{XDR}" xmlns:a="{A}" xmlns:mc="{MC}">{"".join(anchors)}'
            "</xdr:wsDr>").encode()


def _add_drawing(path: Path, sheet: str, drawing: bytes) -> None:
    """Write ``drawing`` into the workbook at ``path`` as the drawing of ``sheet``."""
    with zipfile.ZipFile(path) as zf:
        parts = {info.filename: zf.read(info) for info in zf.infolist()}
        member = dict(sheet_members(zf, set(parts)))[sheet]
    folder, _, base = member.rpartition("/")
    rels = f"{folder}/_rels/{base}.rels"
    assert rels not in parts  # a pack's sheet links to nothing: the drawing is rId1
    parts[rels] = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                   f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                   f'relationships"><Relationship Id="rId1" Type="{DRAWING_REL}" '
                   f'Target="../drawings/drawing1.xml"/></Relationships>').encode()
    parts["xl/drawings/drawing1.xml"] = drawing
    xml = parts[member].decode()
    # a sheet's <drawing> comes after its page set-up and before any <legacyDrawing>,
    # <tableParts> or <extLst> (a pack's sheets have none of those three)
    assert "<legacyDrawing" not in xml and "<tableParts" not in xml
    at = xml.index("<extLst") if "<extLst" in xml else xml.index("</worksheet>")
    if f'xmlns:r="{REL}"' not in xml:
        xml = xml.replace("<worksheet ", f'<worksheet xmlns:r="{REL}" ', 1)
        at = xml.index("<extLst") if "<extLst" in xml else xml.index("</worksheet>")
    parts[member] = (xml[:at] + '<drawing r:id="rId1"/>' + xml[at:]).encode()
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>", f'<Override PartName="/xl/drawings/drawing1.xml" ContentType='
        f'"{DRAWING_TYPE}"/></Types>'.encode())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    path.write_bytes(out.getvalue())


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A study whose every pack came back filled in (openpyxl), with no drawing."""
    root = init_study(tmp_path_factory.mktemp("drawings") / "s", "paired-rubric")
    generate_packs(root)
    return_every_pack(root)
    return root


def _returned_with(clean: Path, tmp_path: Path, sheet: str, drawing: bytes) -> tuple[Path, str]:
    """A copy of the study whose first return (by name) has ``drawing`` on ``sheet``."""
    root = Path(shutil.copytree(clean, tmp_path / "s"))
    path = sorted((root / L.RETURNS_DIR).glob("*.xlsx"))[0]
    _add_drawing(path, sheet, drawing)
    return root, path.name


def _drawn(root: Path) -> list[tuple[str, str, str, str]]:
    issues = collect(root, write=False).report.issues
    return [(i.sheet, i.cell, i.value, i.message) for i in issues if i.code == "drawing-text"]


def test_a_text_box_is_named_with_its_sheet_anchor_cell_and_text(clean, tmp_path):
    """Runs and paragraphs joined on one line; each shape of a group named; a shape
    with no text, and Excel's fallback copy of a shape for older programs, not named;
    a shape placed by position alone named without a cell."""
    group = ("<xdr:grpSp><xdr:nvGrpSpPr><xdr:cNvPr id=\"9\" name=\"Group 9\"/>"
             "<xdr:cNvGrpSpPr/></xdr:nvGrpSpPr><xdr:grpSpPr/>"
             f"{_shape(10, ['first in group'])}{_shape(11, ['second in group'])}</xdr:grpSp>")
    newer = (f'<mc:AlternateContent><mc:Choice Requires="a14">'
             f"{_two_cell(1, 40, _shape(12, ['in a newer shape']))}</mc:Choice>"
             f"<mc:Fallback>{_two_cell(1, 40, _shape(13, ['in a newer shape']))}"
             "</mc:Fallback></mc:AlternateContent>")
    absolute = ('<xdr:absoluteAnchor><xdr:pos x="0" y="0"/><xdr:ext cx="1" cy="1"/>'
                f"{_shape(14, ['placed by position'])}<xdr:clientData/></xdr:absoluteAnchor>")
    drawing = _drawing(_two_cell(7, 2, _shape(2, ["case 3: ", "response B"],
                                              [" cites no source"])),
                       _two_cell(0, 0, _shape(3)), _two_cell(9, 5, group), newer, absolute)
    root, _ = _returned_with(clean, tmp_path, L.SCORING_SHEET, drawing)
    found = _drawn(root)
    assert [f[:3] for f in found] == [
        (L.SCORING_SHEET, "", "placed by position"),
        (L.SCORING_SHEET, "H3", WHY),
        (L.SCORING_SHEET, "J6", "first in group"),
        (L.SCORING_SHEET, "J6", "second in group"),
        (L.SCORING_SHEET, "B41", "in a newer shape")]
    assert found[1][3].startswith(
        f"A text box or shape at cell H3 of sheet '{L.SCORING_SHEET}' holds the text "
        f"'{WHY}'. sheetflow reads only the cells' values: read it in the file")
    assert found[0][3].startswith(
        f"A text box or shape on sheet '{L.SCORING_SHEET}' holds the text")


def test_many_text_boxes_are_named_up_to_twenty_then_counted(clean, tmp_path):
    drawing = _drawing(*(_two_cell(8, row, _shape(row + 2, [f"remark {row + 1}"]))
                         for row in range(25)))
    root, _ = _returned_with(clean, tmp_path, L.MORE_SHEET, drawing)
    found = _drawn(root)
    assert [cell for _, cell, value, _ in found if value] == [f"I{r}" for r in range(1, 21)]
    (rest,) = [f for f in found if not f[2]]
    assert rest[1] == "I21" and "on, 5 more hold text; only the first 20" in rest[3]


def test_a_text_box_makes_collect_exit_1_until_marked_read(clean, tmp_path):
    """Named on the screen and the Issues sheet; exit 1 (the ratings still used);
    --mark-read acknowledges it: exit 0, in the next collect and in status too."""
    root, name = _returned_with(clean, tmp_path, L.INSTRUCTIONS_SHEET,
                                _drawing(_two_cell(4, 9, _shape(2, [WHY]))))
    shown = CliRunner().invoke(cli, ["collect", str(root)])
    assert shown.exit_code == 1, shown.output
    (line,) = [ln for ln in shown.stdout.splitlines() if "[drawing-text]" in ln]
    assert line.startswith(f"  warning: {name} {L.INSTRUCTIONS_SHEET}, E10: [drawing-text] "
                           f"A text box or shape at cell E10 of sheet "
                           f"'{L.INSTRUCTIONS_SHEET}' holds the text '{WHY}'."), line
    assert shown.stdout.splitlines()[-1].endswith(
        "1 return holds text sheetflow does not read: read it in the files named above "
        f"(then 'sheetflow collect {root} --mark-read FILE')")
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["ok"] is False and doc["valid"] is True and doc["unread_text"] == [name]
    assert all(f["used"] for f in doc["files"])
    rows = list(openpyxl.load_workbook(root / "out" / "validation.xlsx")["Issues"]
                .iter_rows(values_only=True))
    assert sum("drawing-text" in row for row in rows) == 1
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 1
    marked = CliRunner().invoke(cli, ["collect", str(root), "--mark-read", name])
    assert marked.exit_code == 0, marked.output
    assert CliRunner().invoke(cli, ["collect", str(root)]).exit_code == 0
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 0


def test_a_text_box_is_put_to_the_rater_in_the_second_person():
    boxed = issue("drawing-text", file="f", sheet="Scoring", cell="H3", value=WHY,
                  what=f"A text box or shape at cell H3 of sheet 'Scoring' holds the text "
                       f"'{WHY}'")
    body = feedback_body(Rater("R1", "Rae"), type("Row", (), {"file": "f"})(), [boxed])
    assert (f"Your workbook has a text box or shape at cell H3 of the sheet 'Scoring' that "
            f"says '{WHY}'; we read only the answer cells") in body
    assert "sheetflow" not in body


def test_a_drawing_that_cannot_be_read_is_named_in_one_warning(clean, tmp_path):
    root, name = _returned_with(clean, tmp_path, L.SCORING_SHEET, b"<xdr:wsDr><unclosed>")
    (found,) = _drawn(root)
    assert found[:3] == ("", "", "")
    assert found[3].startswith("The workbook holds drawings (text boxes or shapes) that "
                               "could not be read (ParseError); open it to read any text")
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["unread_text"] == [name]


def test_a_pack_has_no_drawing_and_a_clean_return_reads_none(clean, monkeypatch):
    """Every drawing in a return is the rater's, since generate writes none; the usual
    return is settled by the zip's member names, no drawing part is read."""
    for pack in (clean / L.PACKS_DIR).glob("*.xlsx"):
        with zipfile.ZipFile(pack) as zf:
            assert not [n for n in zf.namelist() if "drawing" in n.lower()], pack.name

    def refuse(*_args):
        raise AssertionError("read for a clean return")

    monkeypatch.setattr("sheetflow.collect.drawings.read_drawings", refuse)
    issues = collect(clean, write=False, workers=1).report.issues
    assert not [i for i in issues if i.code == "drawing-text"]
    assert not [i for i in issues if i.severity == "error"]  # (a read refused: an error)


@pytest.mark.libreoffice
def test_libreoffice_round_trip_names_a_text_box_and_nothing_else(tmp_path):
    """A text box on the Instructions sheet and a comment on an answer cell, then every
    answer entered and the workbook saved by LibreOffice itself: its own drawing part
    names the text box once, at its cell (the comment, which LibreOffice keeps in a
    drawing of its own kind, is a cell-comment only); a pack only answered in
    LibreOffice names none."""
    require_libreoffice()
    root, packs, boxed = paired_study_with_a_copy(tmp_path, "boxed.xlsx")
    cell = next(iter(L.iter_answer_cells(packs[0])))["cell"]
    wb = openpyxl.load_workbook(boxed)
    wb[L.SCORING_SHEET][cell].comment = Comment("unsure", "rater")
    wb.save(boxed)
    _add_drawing(boxed, L.INSTRUCTIONS_SHEET, _drawing(_two_cell(4, 9, _shape(2, [WHY]))))
    return_both_from_libreoffice(root, packs, boxed, tmp_path)
    issues = collect(root, write=False).report.issues
    assert sorted((i.file, i.code, i.sheet, i.cell, i.value) for i in issues
                  if i.code in ("drawing-text", "cell-comment")) == \
        [(packs[0]["file"], "cell-comment", L.SCORING_SHEET, cell, "unsure"),
         (packs[0]["file"], "drawing-text", L.INSTRUCTIONS_SHEET, "E10", WHY)]
