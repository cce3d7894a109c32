"""Hostile values and layouts: digits only in whole-number fields, Excel error values,
Strict Open XML, cells without addresses, and a copied answer sheet."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import (
    fill_libreoffice,
    fill_openpyxl,
    libreoffice_profile,
    plan_answers,
    require_libreoffice,
)

from sheetflow.collect.run import collect
from sheetflow.collect.safety import scan_sheet
from sheetflow.collect.values import ExcelError, parse_value
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.rubric import Dimension
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

COUNT = Dimension("n", "N", "count")
SCALE = Dimension("q", "Q", "scale", minimum=1, maximum=5)


@pytest.mark.parametrize(("raw", "code"), [
    ("1_0", "value-not-a-number"),  # Python's float() reads 10
    ("1e3", "value-not-a-number"),  # ... and 1000
    ("1E+308", "value-not-a-number"),
    ("inf", "value-not-a-number"),
    ("\u0665", "value-not-a-number"),  # Arabic-Indic five: float() reads 5
    (1e308, "value-too-large"),
    (-1e12, "value-too-large"),
    ("5.5", "value-not-whole"),
    (ExcelError("#DIV/0!"), "error-value"),
    (ExcelError("#N/A"), "error-value"),
])
def test_whole_number_fields_take_plain_digits_only(raw, code):
    assert parse_value(COUNT, raw).code == code


@pytest.mark.parametrize(("raw", "value", "code"), [
    (7.0, 7, None), ("7", 7, "number-stored-as-text"), ("7.0", 7, "number-stored-as-text"),
    ("\uff17", 7, "number-stored-as-text"), ("7 ", 7, "number-stored-as-text"),
])
def test_plain_digits_are_still_read(raw, value, code):
    parsed = parse_value(COUNT, raw)
    assert (parsed.value, parsed.code) == (value, code)


def test_an_error_value_is_refused_in_any_field():
    assert parse_value(SCALE, ExcelError("#VALUE!")).code == "error-value"
    labels = Dimension("d", "D", "preference", choices=("A>B", "B>A", "Tied"))
    assert parse_value(labels, ExcelError("#REF!")).code == "error-value"


# --------------------------------------------------------------------------- files


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("values") / "study"
    init_study(root, "keep-known")
    generate_packs(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    pack = manifest["packs"][0]
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / "filled.xlsx", plan_answers(pack))
    return root, pack


@pytest.fixture
def study(made, tmp_path):
    root, pack = made
    copy = tmp_path / "study"
    shutil.copytree(root, copy)
    (copy / "returns").mkdir(exist_ok=True)
    return copy, pack, copy / "returns" / pack["file"]


def _answers(pack) -> list[str]:
    return [a["cell"] for a in L.iter_answer_cells(pack) if a["part"] == "value"]


def _codes(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in result.report.issues:
        out.setdefault(item.code, set()).add(item.cell or item.sheet)
    return out


def _rewrite(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, change(info.filename, zin.read(info.filename)))


def test_an_error_value_in_an_answer_cell_is_coded(study):
    root, pack, target = study
    cell = _answers(pack)[0]
    wb = openpyxl.load_workbook(root / "filled.xlsx")
    wb[L.SCORING_SHEET][cell].value = "#DIV/0!"
    wb[L.SCORING_SHEET][cell].data_type = "e"
    wb.save(target)
    result = collect(root, write=False)
    assert cell in _codes(result).get("error-value", set())
    found = next(i for i in result.report.issues if i.code == "error-value")
    assert "#DIV/0!" in found.message and not result.report.files[0].used


def test_strict_open_xml_gets_its_own_code(study):
    root, _, target = study

    def strict(name, data):
        transitional = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
        return data.replace(transitional, b"http://purl.oclc.org/ooxml/spreadsheetml/main")

    _rewrite(root / "filled.xlsx", target, strict)
    result = collect(root, write=False)
    assert set(_codes(result)) == {"strict-ooxml"}
    assert "Excel Workbook" in result.report.issues[0].message


def _without_addresses(name: str, data: bytes) -> bytes:
    """Every cell written in order with no r= (empty cells as <c/>), as some writers do."""
    if not name.startswith("xl/worksheets/sheet"):
        return data

    def row(match: re.Match) -> bytes:
        out, col = [], 0
        for cell in re.finditer(rb'<c r="([A-Z]+)[0-9]+"(.*?)(/>|>.*?</c>)', match[2], re.S):
            number = openpyxl.utils.column_index_from_string(cell[1].decode())
            out += [b"<c/>"] * (number - col - 1)
            out.append(b"<c" + cell[2] + cell[3])
            col = number
        return match[1] + b"".join(out) + b"</row>"

    return re.sub(rb"(<row\b[^>]*>)(.*?)</row>", row, data, flags=re.S)


def test_cells_without_addresses_are_read_by_position(study, tmp_path):
    root, _, target = study
    shutil.copyfile(root / "filled.xlsx", target)
    plain = collect(root, write=False)
    _rewrite(root / "filled.xlsx", target, _without_addresses)
    with zipfile.ZipFile(target) as zf:
        assert b'<c r="' not in zf.read("xl/worksheets/sheet2.xml")
    result = collect(root, write=False)
    assert _codes(result) == _codes(plain)
    assert result.report.files[0].used
    values = [(r["case_id"], r["dimension"], r["value"]) for r in result.ratings]
    assert values == [(r["case_id"], r["dimension"], r["value"]) for r in plain.ratings]


def test_scan_places_cells_without_addresses_and_notes_errors():
    xml = (b'<worksheet><sheetData><row r="2"><c t="e"><v>#N/A</v></c><c/>'
           b'<c><f>1+1</f><v>2</v></c></row><row><c r="E3" t="e"><v>#REF!</v></c></row>'
           b"</sheetData></worksheet>")
    scan = scan_sheet(xml)
    assert scan.extent == (3, 5)
    assert scan.errors == {(2, 1): "#N/A", (3, 5): "#REF!"}
    assert set(scan.formulas) == {(2, 3)}


def test_a_copied_answer_sheet_is_reported(study):
    root, pack, target = study
    wb = openpyxl.load_workbook(root / "filled.xlsx")
    copy = wb.copy_worksheet(wb[L.SCORING_SHEET])
    cell = _answers(pack)[0]
    copy[cell].value = "No" if wb[L.SCORING_SHEET][cell].value == "Yes" else "Yes"
    wb.save(target)
    result = collect(root, write=False)
    assert _codes(result).get("sheet-duplicated") == {copy.title}
    assert not result.report.files[0].used


def test_a_checklist_answer_issue_names_its_question(tmp_path):
    """The issue of one checklist question names the dimension and that question."""
    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    target = root / "returns" / pack["file"]
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], target, plan_answers(pack))
    question = next(a for a in L.iter_answer_cells(pack) if a["part"] == "q2")
    wb = openpyxl.load_workbook(target)
    wb[L.SCORING_SHEET][question["cell"]].value = "Maybe"
    wb.save(target)
    result = collect(root, write=False)
    found = [i for i in result.report.issues if i.cell == question["cell"]]
    assert len(found) == 1 and found[0].severity == "error", found
    dim = next(d for d in load_study(root).rubric.dimensions
               if d.id == question["dimension"])
    text = next(q["question"] for card in pack["cards"] for row in card["rows"]
                for dim_id, answer in row["answers"].items() if dim_id == dim.id
                for q in answer.get("questions", []) if q["cell"] == question["cell"])
    assert f"{dim.label}: {text}" in found[0].message and "'Maybe'" in found[0].message


def test_a_long_description_keeps_its_response_label_and_a_long_value_is_cut():
    """The description of the cell is sheetflow's own words and names the response:
    cut at 80 characters it read 'for case 10 (LNPK), respon... is blank', and the
    rater's mail has no other column saying A or B. A pasted value is still cut."""
    from sheetflow.collect.validate import issue

    what = ("Evidence Integration: Source credibility assessed? for case 10 (LNPK), "
            "response B")
    assert len(what) > 80
    blank = issue("answer-missing", file="f.xlsx", sheet="Scoring", cell="E5", what=what,
                  expected="Yes or No")
    assert blank.message.startswith(what + " is blank")
    pasted = issue("value-not-a-number", file="f.xlsx", sheet="Scoring", cell="C5",
                   value="x" * 300, what="Depth", expected="a whole number")
    assert "x" * 77 + "..." in pasted.message and "x" * 78 not in pasted.message


# --------------------------------------------------------------------------- percentages

# cell value, number format, what the message quotes (in quotes)
PERCENT_CELLS = (
    (0.03, "0%", "3%"),  # typed 3% (Excel stores 0.03, formatted 0%)
    (0.035, "0.00%", "3.50%"),
    (0.035, "0%", "3.5% (shown as 4%)"),  # the cell rounds what was typed
    (0.03, "General", "0.03"),  # no percentage: the number as stored is what shows
)


@pytest.mark.parametrize("saved_by", ["openpyxl", "libreoffice"])
def test_a_percentage_is_quoted_as_the_rater_sees_it(tmp_path, saved_by):
    """A rater who typed 3% in a whole-number cell, or pasted a cell formatted as a
    percentage, read "'0.03' is not a whole number": a value they never saw. The
    format comes from the file (built-in ids as Excel and openpyxl write them, or
    LibreOffice's own custom formats)."""
    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    answers = plan_answers(pack)
    cells = list(L.iter_answer_cells(pack))
    whole = [a["cell"] for a in cells if a["validation"]["type"] == "whole"]
    yes_no = next(a["cell"] for a in cells if a["validation"].get("choices") == ["Yes", "No"])
    filled = tmp_path / "filled.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], filled, answers)
    wb = openpyxl.load_workbook(filled)
    ws = wb[L.SCORING_SHEET]
    planted = dict(zip(whole, PERCENT_CELLS, strict=False))
    planted[yes_no] = (0.5, "0%", "50%")
    for cell, (value, number_format, _) in planted.items():
        ws[cell].value = value
        ws[cell].number_format = number_format
    target = root / "returns" / pack["file"]
    if saved_by == "openpyxl":
        wb.save(target)
    else:
        require_libreoffice()
        wb.save(tmp_path / "pasted.xlsx")
        untouched = next(c for c in answers if c not in planted)
        fill_libreoffice(tmp_path / "pasted.xlsx", target, {untouched: answers[untouched]},
                         libreoffice_profile(tmp_path))
    result = collect(root, write=False)
    found = {i.cell: i for i in result.report.issues if i.severity == "error"}
    assert set(found) == set(planted)
    for cell, (_, _, quoted) in planted.items():
        assert found[cell].value == quoted
        assert f"'{quoted}' is not" in found[cell].message, found[cell].message


@pytest.mark.parametrize(("number_format", "shown"), [
    ("0.0%", "3.0%"), ("[Red]0%", "3%"), ('0%" done"', "3%"),
    ('0.0"%"', None), ("0.0\\%", None), ("0.00", None), ("", None),  # a literal % only
])
def test_only_a_format_that_scales_by_100_is_a_percentage(number_format, shown):
    from sheetflow.collect.values import percent_text

    assert percent_text(0.03, number_format) == shown


def _whole_number_errors(tmp_path, planted) -> tuple[list[str], dict[str, str]]:
    """A paired-rubric return with ``planted(cells)`` -> {cell: (value, number format
    or None)} in its whole-number cells; the cells and each error's quoted value."""
    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    answers = plan_answers(pack)
    whole = [a["cell"] for a in L.iter_answer_cells(pack)
             if a["validation"]["type"] == "whole"]
    filled = tmp_path / "filled.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], filled, answers)
    wb = openpyxl.load_workbook(filled)
    for cell, (value, number_format) in planted(whole).items():
        wb[L.SCORING_SHEET][cell].value = value
        if number_format:
            wb[L.SCORING_SHEET][cell].number_format = number_format
    wb.save(root / "returns" / pack["file"])
    return whole, {i.cell: i.value for i in collect(root, write=False).report.issues
                   if i.severity == "error"}


def test_every_percentage_of_a_return_is_quoted_past_the_first_few(tmp_path):
    """The first cells a message quotes are looked up one by one, the rest from an
    index of the sheet built once: a percentage is quoted as shown either way."""
    whole, found = _whole_number_errors(tmp_path, lambda cells: dict.fromkeys(
        cells, (0.03, "0%")))
    assert len(whole) > 40  # well past the cells looked up one by one
    assert found == dict.fromkeys(whole, "3%")


def test_the_sheet_index_finds_each_cell_style_as_the_search_does():
    from sheetflow.collect.reader import _cell_style, _cell_styles

    xml = (b'<sheetData><row r="1"><c r="A1" s="3"><v>1</v></c><c s="7" r="B1"/>'
           b"<x:c r='C1' s='9' t=\"n\"><v>2</v></x:c><c r=\"D1\"><v>3</v></c>"
           b'<c x="a r=\'E1\'" r="F1" s="2"/><c r="G1" s="q"/></row></sheetData>')
    index = _cell_styles(xml)
    for ref in ("A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1"):
        assert index.get(ref.encode()) == _cell_style(xml, ref), ref
    assert index == {b"A1": 3, b"B1": 7, b"C1": 9, b"D1": 0, b"F1": 2, b"G1": None}


def test_a_huge_number_is_quoted_as_the_cell_shows_it(tmp_path):
    """1E+308 in a whole-number cell was quoted as the first 80 of its 309 digits."""
    numbers = (1e308, -1e12, 123456789012.0, 5_000_000_000)
    whole, found = _whole_number_errors(tmp_path, lambda cells: {
        cell: (value, None) for cell, value in zip(cells, numbers, strict=False)})
    assert found == dict(zip(whole, ("1E+308", "-1E+12", "1.23457E+11", "5000000000"),
                             strict=False))


def test_a_date_or_time_is_quoted_as_the_cell_shows_it(tmp_path):
    """A date typed into a whole-number cell was quoted '2026-01-05T00:00:00' and a
    time '12:30:00': the rater sees 2026-01-05 and 12:30."""
    import datetime as dt

    typed = ((dt.datetime(2026, 1, 5), "yyyy-mm-dd"), (dt.time(12, 30), "hh:mm"),
             (dt.datetime(2026, 1, 5, 14, 5), "yyyy-mm-dd hh:mm"))
    whole, found = _whole_number_errors(tmp_path, lambda cells: dict(zip(
        cells, typed, strict=False)))
    assert found == dict(zip(whole, ("2026-01-05", "12:30", "2026-01-05 14:05"),
                             strict=False))


def test_a_number_after_a_space_is_refused_saying_so_as_the_pack_marks_it():
    """' 4' is refused, as the pack's highlight marks it red, but not called "not a
    number" (its digits are one): the message names the space; '7 ' and '3.0' are read."""
    from sheetflow.collect.validate import issue
    from sheetflow.collect.values import parse_value

    parsed = parse_value(SCALE, " 4")
    assert (parsed.value, parsed.code) == (None, "number-after-space")
    message = issue(parsed.code, value=" 4", what="Q", expected=parsed.expected).message
    assert message == ("Q: ' 4' is text starting with a space, not a number: delete the "
                       "space (enter a whole number from 1 to 5).")
    assert [parse_value(SCALE, t).code for t in ("4 ", "3.0", " four")] == [
        "number-stored-as-text", "number-stored-as-text", "value-not-a-number"]


def test_too_many_decimals_is_not_called_not_a_whole_number():
    """3.14159 where 2 decimals are allowed was refused as "not a whole number", which a
    field that takes decimals never asked for: the message names the decimals allowed."""
    from sheetflow.collect.validate import issue

    hours = Dimension("h", "Hours", "number", minimum=0, maximum=40, decimals=2)
    parsed = parse_value(hours, 3.14159)
    assert (parsed.value, parsed.code) == (None, "too-many-decimals")
    message = issue(parsed.code, value="3.14159", what="Hours",
                    expected=parsed.expected).message
    assert message == ("Hours: '3.14159' has more decimals than allowed; enter a number "
                       "from 0 to 40 with at most 2 decimals.")
    assert parse_value(Dimension("w", "W", "number", minimum=0, maximum=40), 3.5).code \
        == "value-not-whole"


def test_a_text_answer_loses_its_control_characters_saying_where(tmp_path):
    """A NUL or a bell pasted into a text answer (stored escaped, ``_x0007_``) does not
    reach ratings.csv, where it breaks the programs that read it; the change is named
    with its cell, not made silently."""
    root = tmp_path / "study"
    init_study(root, "judge-likert")
    generate_packs(root)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    cell = next(a["cell"] for a in L.iter_answer_cells(pack)
                if a["dimension"] == "rationale")
    answers = {**plan_answers(pack), cell: ("Clear_x0000_ and_x0007_ right._x000B_Yes.", "")}
    (root / "returns").mkdir(exist_ok=True)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / "returns" / pack["file"], answers)
    result = collect(root)
    found = [i for i in result.report.issues if i.code == "text-control-characters"]
    assert [(i.cell, i.severity) for i in found] == [(cell, "warning")]
    assert "\x00" not in found[0].message and "\x07" not in found[0].message
    ratings = (root / "out" / "ratings.csv").read_text(encoding="utf-8")
    assert "\x00" not in ratings and "\x07" not in ratings
    assert "Clear and right.\nYes." in ratings
    assert "Clear_x0000_ and_x0007_ right._x000B_Yes." in ratings  # the raw column
