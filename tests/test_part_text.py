"""Text a rater writes outside every sheet's cells (a document property, a page header
or footer, a ``customXml/`` part) is named, never used in silence: a warning that makes
collect and status exit 1 until the file is marked read, put to the rater in the second
person; what the pack was generated with, and what LibreOffice writes by itself, is
not named."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.packaging.custom import StringProperty
from roundtrip_helpers import (
    first_return_changed,
    paired_study_every_pack_returned,
    paired_study_with_a_copy,
    require_libreoffice,
    return_both_from_libreoffice,
)

from sheetflow.cli import cli
from sheetflow.collect.replies import feedback_body
from sheetflow.collect.run import collect
from sheetflow.collect.validate import issue
from sheetflow.spec.study import Rater
from sheetflow.workbook import layout as L

NOTE = "case 3: response B cites no source"
CODES = ("property-text", "header-footer-text", "extra-part")


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A study whose every pack came back filled in (openpyxl)."""
    return paired_study_every_pack_returned(tmp_path_factory.mktemp("part-text") / "s")


def _found(root: Path) -> list[tuple[str, str, str, str, str]]:
    issues = collect(root, write=False).report.issues
    return [(i.code, i.sheet, i.label, i.value, i.message) for i in issues if i.code in CODES]


def _properties(wb) -> None:
    wb.properties.description = NOTE
    wb.properties.keywords = "hurried"
    wb.properties.category = ""  # an empty property holds nothing to read
    wb.custom_doc_props.append(StringProperty(name="MyNote", value="see case 2"))


def _footer(wb) -> None:
    ws = wb[L.SCORING_SHEET]
    ws.oddFooter.center.text = f"{NOTE} &P"
    ws.oddHeader.right.text = "&D &T &P"  # a date, a time, a page number: fields alone
    wb[L.MORE_SHEET].evenHeader.left.text = "&B&&more"


def _add_custom_xml(path: Path, text: str) -> None:
    with zipfile.ZipFile(path) as zf:
        parts = {info.filename: zf.read(info) for info in zf.infolist()}
    parts["customXml/item1.xml"] = f"<note><p>{text}</p></note>".encode()
    parts["customXml/itemProps1.xml"] = (
        b'<ds:datastoreItem xmlns:ds="http://schemas.openxmlformats.org/officeDocument/'
        b'2006/customXml" ds:itemID="{1B2C3D4E-0000-0000-0000-000000000000}"/>')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    path.write_bytes(out.getvalue())


CHANGES = {"property-text": _properties, "header-footer-text": _footer}


def test_document_properties_are_named_with_their_text_but_not_the_packs_own(clean,
                                                                            tmp_path):
    """The rater's Comments, Keywords and a custom property are named; the Title the
    pack carries, sheetflow's identity properties, and the dates, revision and user
    name the saving program writes are not."""
    root, _ = first_return_changed(clean, tmp_path, _properties)
    found = _found(root)
    assert sorted(f[:4] for f in found) == [
        ("property-text", "", "Comments", NOTE), ("property-text", "", "Keywords", "hurried"),
        ("property-text", "", "MyNote (custom)", "see case 2")]
    (comments,) = [f for f in found if f[2] == "Comments"]
    assert comments[4].startswith(f"The document property Comments holds '{NOTE}' (File > "
                                  "Properties). sheetflow reads only the cells' values")


def test_a_changed_title_is_named_and_an_unchanged_one_is_not(clean, tmp_path):
    root, _ = first_return_changed(clean, tmp_path,
                                   lambda wb: setattr(wb.properties, "title", NOTE))
    assert [f[:4] for f in _found(root)] == [("property-text", "", "Title", NOTE)]


def test_a_header_or_footer_is_named_by_its_sheet_page_numbers_alone_are_not(clean,
                                                                            tmp_path):
    root, _ = first_return_changed(clean, tmp_path, _footer)
    found = _found(root)
    assert sorted(f[:4] for f in found) == [
        ("header-footer-text", L.MORE_SHEET, "even-page header", "&more"),
        ("header-footer-text", L.SCORING_SHEET, "footer", f"{NOTE} &P")]
    (footer,) = [f for f in found if f[2] == "footer"]
    assert footer[4].startswith(f"The footer of sheet '{L.SCORING_SHEET}' (Page Setup) "
                                f"holds '{NOTE} &P'.")


def _page_labels(wb) -> None:
    """A sheet the rater added, with the footer LibreOffice gives it ("Page &P"), and
    page labels in other languages beside a footer holding the rater's words."""
    wb.create_sheet("My notes").oddFooter.center.text = "Page &P"
    wb[L.SCORING_SHEET].oddHeader.left.text = "Seite &P"
    wb[L.SCORING_SHEET].evenFooter.right.text = "&D Página &P"
    wb[L.MORE_SHEET].oddFooter.center.text = f"Page &P {NOTE}"


def test_a_page_label_beside_a_page_number_is_not_named_other_words_are(clean, tmp_path):
    root, _ = first_return_changed(clean, tmp_path, _page_labels)
    assert [f[:4] for f in _found(root)] == [
        ("header-footer-text", L.MORE_SHEET, "footer", f"Page &P {NOTE}")]


def test_a_custom_xml_part_holding_text_is_named(clean, tmp_path):
    """Its text quoted; the properties part beside it, holding no text, not named."""
    root, _ = first_return_changed(clean, tmp_path, lambda wb: None)
    _add_custom_xml(sorted((root / L.RETURNS_DIR).glob("*.xlsx"))[0], NOTE)
    (found,) = _found(root)
    assert found[:4] == ("extra-part", "", "customXml/item1.xml", NOTE)
    assert found[4].startswith("The part customXml/item1.xml of the workbook file, which "
                               f"no sheet shows, holds '{NOTE}'.")


@pytest.mark.parametrize("code", CODES)
def test_text_outside_the_cells_makes_collect_and_status_exit_1_until_marked_read(
        clean, tmp_path, code):
    root, path = first_return_changed(clean, tmp_path, CHANGES.get(code, lambda wb: None))
    name = path.name
    if code == "extra-part":
        _add_custom_xml(path, NOTE)
    shown = CliRunner().invoke(cli, ["collect", str(root)])
    assert shown.exit_code == 1, shown.output
    assert f"[{code}]" in shown.stdout
    assert shown.stdout.splitlines()[-1].endswith(
        "1 return holds text sheetflow does not read: read it in the files named above "
        f"(then 'sheetflow collect {root} --mark-read FILE')")
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["ok"] is False and doc["valid"] is True and doc["unread_text"] == [name]
    assert all(f["used"] for f in doc["files"])  # a warning: the ratings are used
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 1
    marked = CliRunner().invoke(cli, ["collect", str(root), "--mark-read", name])
    assert marked.exit_code == 0, marked.output
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 0


@pytest.mark.parametrize(("code", "label", "sheet", "said"), [
    ("property-text", "Comments", "",
     f"The document property Comments of your workbook (File > Properties) says '{NOTE}'"),
    ("header-footer-text", "footer", "Scoring",
     f"The footer of the sheet 'Scoring' of your workbook (Page Setup) says '{NOTE}'"),
    ("extra-part", "customXml/item1.xml", "",
     f"Your workbook file holds text no sheet shows (in its part customXml/item1.xml): "
     f"'{NOTE}'")])
def test_text_outside_the_cells_is_put_to_the_rater_in_the_second_person(code, label,
                                                                         sheet, said):
    found = issue(code, file="f", sheet=sheet, label=label, value=NOTE, what="(ours)")
    body = feedback_body(Rater("R1", "Rae"), type("Row", (), {"file": "f"})(), [found])
    assert f"{said}; we read only the answer cells" in body
    assert "sheetflow" not in body


@pytest.mark.libreoffice
def test_libreoffice_round_trip_names_the_raters_text_and_nothing_else(tmp_path):
    """A Comments property and a footer, then every answer entered and the workbook
    saved by LibreOffice itself: both are named; a pack only answered in LibreOffice
    (its own application name, dates, language and empty headers and footers, the
    pack's title and comments kept) names nothing."""
    require_libreoffice()
    root, packs, noted = paired_study_with_a_copy(tmp_path, "noted.xlsx")
    wb = openpyxl.load_workbook(noted)
    wb.properties.description = NOTE
    wb[L.SCORING_SHEET].oddFooter.center.text = "case 4 seemed odd"
    wb.save(noted)
    return_both_from_libreoffice(root, packs, noted, tmp_path)
    issues = collect(root, write=False).report.issues
    assert sorted((i.file, i.code, i.sheet, i.label, i.value) for i in issues
                  if i.code in CODES) == \
        [(packs[0]["file"], "header-footer-text", L.SCORING_SHEET, "footer",
          "case 4 seemed odd"),
         (packs[0]["file"], "property-text", "", "Comments", NOTE)]
