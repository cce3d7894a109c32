"""A reply to a rater whose file must be saved another way (.xls, .ods, macros,
Strict Open XML, an opening password, a zip archive) says in its closing and its
subject what to send: the workbook saved as .xlsx, not "your workbook again", which
would be the very file refused. A file whose hidden part was changed gets a subject
asking for the answers copied into the workbook attached, as its body does. A reply
about two files names each on its lines and speaks of both.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import hashlib
import zipfile
from pathlib import Path

import openpyxl
import pytest

from sheetflow.collect import replies
from sheetflow.collect.run import collect
from sheetflow.collect.validate import issue
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.journal import append, iso
from sheetflow.spec.study import Rater
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

NOW = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 4096


class _Row:
    file = "pack.xls"


def _reply(*codes: str) -> tuple[str, str]:
    found = [issue(code, file="pack.xls", detail="d") for code in codes]
    body = replies.unusable_body(Rater("EV-01", "Validator One"), _Row(), found)
    # looked up when called: the reply's subject is composed beside its body
    subject = getattr(replies, "unusable_subject", lambda *_: "none composed")
    return subject("Study", found), body


@pytest.mark.parametrize("code", ["legacy-xls", "ods-file", "macro-workbook",
                                  "strict-ooxml", "unreadable-workbook"])
def test_a_file_to_save_as_xlsx_is_asked_for_saved_as_xlsx(code):
    subject, body = _reply(code)
    assert subject == "Study: please send your workbook saved as .xlsx"
    assert "again" not in subject
    assert "attach your filled-in workbook again" not in body
    assert "Please attach your filled-in workbook, saved as .xlsx, and send it back to " \
           "me." in body


def test_a_password_protected_file_is_asked_for_without_its_password():
    subject, body = _reply("encrypted-workbook")
    assert subject == "Study: please send your workbook without its opening password"
    assert "Please attach your filled-in workbook, without its opening password, and " \
           "send it back to me." in body
    subject, _ = _reply("encrypted-workbook", "legacy-xls")
    assert subject == ("Study: please send your workbook without its opening password, "
                       "saved as .xlsx")


def test_a_zipped_workbook_is_asked_for_unzipped_in_the_raters_words():
    """The rater read the coordinator's advice to put the workbook in the returns
    folder, and was asked to attach the same zip archive again."""
    subject, body = _reply("zipped-workbook")
    assert subject == "Study: please send your workbook not zipped"
    assert "returns folder" not in body and "sheetflow" not in body
    assert "Please attach your filled-in workbook, not zipped, and send it back" in body


def test_a_damaged_file_is_still_asked_for_again():
    subject, body = _reply("corrupt-file")
    assert subject == "Study: please send your workbook again"
    assert "Please attach your filled-in workbook again and send it back to me." in body


@pytest.mark.parametrize("code, detail, said", [
    ("corrupt-file", "Bad CRC-32 for file 'xl/worksheets/sheet1.xml'",
     "The file arrived damaged or incomplete (it may have been cut off on the way), so it "
     "could not be opened here. Please check that your workbook opens in Excel or "
     "LibreOffice, and attach it again."),
    ("unreadable-workbook", "ParseError: not well-formed (invalid token): line 1, column 9",
     "The file is a workbook, but it could not be read here. Please open it in Excel or "
     "LibreOffice, save it again as an Excel workbook (.xlsx), and send that file.")])
def test_a_file_that_could_not_be_read_is_put_to_the_rater_without_the_readers_error(
        code, detail, said):
    """The rater was quoted the zip or XML reader's error; the coordinator keeps it."""
    found = issue(code, file="pack.xlsx", detail=detail)
    body = replies.unusable_body(Rater("EV-01", "Validator One"), _Row(), [found])
    assert f"- {said}" in body
    assert detail not in body and "(" + detail[:8] not in body
    assert detail in found.message  # the Issues sheet's


def test_an_xls_file_is_told_how_to_save_it_in_excel_and_in_libreoffice():
    """A .xls may come from LibreOffice, whose Save As names the type otherwise."""
    _, body = _reply("legacy-xls")
    said = issue("legacy-xls", file="pack.xls").message
    assert said in body
    assert "in Excel, File > Save As > Excel Workbook (.xlsx)" in said
    assert "in LibreOffice Calc, File > Save As, file type 'Excel 2007\u2013365 (.xlsx)'" \
        in said


def test_a_copy_over_file_beside_a_file_to_convert_is_told_both_ways():
    """Two files came back: one whose hidden part was changed, one .xls. The reply
    asked only to copy the answers over, as if the .xls were not there."""
    subject, body = _reply("legacy-xls", "identity-missing")
    assert subject == ("Study: please copy your answers into the workbook attached, or "
                       "send your workbook saved as .xlsx")
    assert "Sending this file again would not help" not in body
    assert ("Please send me one workbook with your answers: either the workbook attached "
            "(your original one, as I sent it) with your answers copied into it, or your "
            "filled-in workbook, saved as .xlsx. Sending the workbook whose hidden part "
            "was changed again would not help: it would still not match.") in body
    subject, body = _reply("corrupt-file", "identity-mismatch")
    assert subject == ("Study: please copy your answers into the workbook attached, or "
                       "send your workbook again")
    assert "or your filled-in workbook again. Sending the workbook" in body


def test_a_reply_about_three_files_speaks_of_all_in_number():
    """An .xls beside two files whose hidden parts were changed: the closing spoke of
    "the workbook whose hidden part was changed", one of two."""
    found = [issue(code, file=name, detail="d") for code, name in (
        ("legacy-xls", "a.xls"), ("identity-missing", "b.xlsx"),
        ("identity-conflict", "c.xlsx"))]
    row = type("Row", (), {"file": "a.xls, b.xlsx, c.xlsx"})()
    body = " ".join(replies.unusable_body(Rater("EV-01", "Validator One"), row,
                                          found).split())
    assert ("Thank you for sending your files (a.xls, b.xlsx, c.xlsx). They arrived, but "
            "none of them could be used:") in body
    assert [line.split(":")[0] for line in body.split(" - ")[1:]] == \
        ["a.xls", "b.xlsx", "c.xlsx"]
    assert ("Sending the workbooks whose hidden parts were changed again would not help: "
            "they would still not match.") in body


@pytest.mark.parametrize("code", ["identity-missing", "identity-conflict",
                                  "identity-mismatch"])
def test_a_copy_over_reply_does_not_ask_for_the_workbook_again_in_its_subject(code):
    subject, body = _reply(code)
    assert subject == "Study: please copy your answers into the workbook attached"
    assert "Please copy your answers into the workbook attached and send that one." in body


@pytest.fixture(scope="module")
def drafts(tmp_path_factory) -> Path:
    """EV-01 returns an .xls, EV-02 an encrypted file, EV-03 a workbook stripped of its
    identity; collect drafts the three replies."""
    root = init_study(tmp_path_factory.mktemp("resave") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=3)
    files[0].with_suffix(".xls").write_bytes(OLE)
    files[0].unlink()
    files[1].write_bytes(OLE + "EncryptedPackage".encode("utf-16-le")
                         + "EncryptionInfo".encode("utf-16-le"))
    wb = openpyxl.load_workbook(files[2])
    for key in L.IDENTITY_KEYS:
        del wb.defined_names[L.identity_name(key)]
    wb.custom_doc_props.props = []
    del wb[L.IDENTITY_SHEET]
    wb.save(files[2])
    collect(root)
    return root / "out" / "feedback"


@pytest.mark.parametrize("rater, subject", [
    ("EV-01", "please send your workbook saved as .xlsx"),
    ("EV-02", "please send your workbook without its opening password"),
    ("EV-03", "please copy your answers into the workbook attached")])
def test_collects_drafts_say_what_to_send_in_their_subject(drafts, rater, subject):
    msg = email.message_from_bytes((drafts / f"{rater}.eml").read_bytes(),
                                   policy=email.policy.default)
    assert msg["Subject"].endswith(": " + subject)
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert "attach your filled-in workbook again" not in body


def _strip_identity(path: Path) -> None:
    """``path`` without its hidden identity (every store of it removed)."""
    wb = openpyxl.load_workbook(path)
    for key in L.IDENTITY_KEYS:
        del wb.defined_names[L.identity_name(key)]
    wb.custom_doc_props.props = []
    del wb[L.IDENTITY_SHEET]
    wb.save(path)


def _strict(path: Path) -> None:
    """``path`` with its workbook part in Strict Open XML's namespace."""
    with zipfile.ZipFile(path) as zf:
        parts = {name: zf.read(name) for name in zf.namelist()}
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        b"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
        b"http://purl.oclc.org/ooxml/spreadsheetml/main")
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in parts.items():
            zf.writestr(name, data)


CONFLICT_NAME = "EV02-scores-final.xlsx"


@pytest.fixture(scope="module")
def two_files(tmp_path_factory) -> tuple[Path, list[Path]]:
    """EV-01 sends an .xls by mail (attached under their pack's name, saved under
    fetch's, the time received before it) and their .xlsx stripped of its identity;
    EV-02 their .xlsx stripped of its identity and a copy of it, renamed, with one
    identity store edited; EV-03 a workbook saved as Strict Open XML. collect drafts
    the replies."""
    root = init_study(tmp_path_factory.mktemp("two-files") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=3)
    attached = files[0].with_suffix(".xls").name
    local = files[0].with_name("20260915-0930-" + attached)
    local.write_bytes(OLE)
    append(root, {"event": "received", "message_id": "<m1@test>", "sender": "",
               "received": iso(NOW), "attachment": attached,
               "sha256": hashlib.sha256(OLE).hexdigest(),
               "saved": f"{L.RETURNS_DIR}/{local.name}", "time": iso(NOW)})
    _strip_identity(files[0])
    conflict = files[1].with_name(CONFLICT_NAME)
    wb = openpyxl.load_workbook(files[1])
    wb[L.IDENTITY_SHEET].cell(L.IDENTITY_KEYS.index("rater_id") + 1, 2).value = "EV-03"
    wb.save(conflict)
    _strip_identity(files[1])
    _strict(files[2])
    collect(root)
    return root / "out" / "feedback", [local, *files]


def _body(drafts: Path, rater: str) -> str:
    msg = email.message_from_bytes((drafts / f"{rater}.eml").read_bytes(),
                                   policy=email.policy.default)
    return msg.get_body(preferencelist=("plain",)).get_content()


def test_a_reply_about_two_files_says_which_file_each_line_is_about(two_files):
    """An .xls and an .xlsx stripped of its identity came back: the reply listed what
    was wrong without saying which file each was about, and said "It arrived"."""
    drafts, (local, xlsx, *_) = two_files
    attached = xlsx.with_suffix(".xls").name
    body = " ".join(_body(drafts, "EV-01").split())
    assert (f"Thank you for sending your files ({attached}, {xlsx.name}). They "
            "arrived, but neither could be used:") in body
    assert "It arrived" not in body and local.name not in body
    assert f"- {attached}: This is an old Excel 97-2003 (.xls) file." in body
    assert (f"- {xlsx.name}: This workbook is not the one you received (it carries none "
            "of its hidden details)") in body


def test_a_reply_about_two_files_to_copy_over_speaks_of_both(two_files):
    """Both files' hidden parts were changed: the closing said "Sending this file
    again would not help", of one file."""
    drafts, (_, _, xlsx, _) = two_files
    body = " ".join(_body(drafts, "EV-02").split())
    assert (f"Thank you for sending your files ({CONFLICT_NAME}, {xlsx.name}). They "
            "arrived, but neither could be used:") in body
    assert f"- {CONFLICT_NAME}: The hidden part of this workbook" in body
    assert f"- {xlsx.name}: This workbook is not the one you received" in body
    assert ("Sending these files again would not help: their hidden parts would still "
            "not match.") in body
    assert "this file" not in body


def test_a_strict_open_xml_file_is_told_how_to_save_it_in_excel_and_in_libreoffice(
        two_files):
    """The advice named only Excel's Save As; LibreOffice Calc reads the file too."""
    drafts, (*_, strict) = two_files
    body = " ".join(_body(drafts, "EV-03").split())
    assert (f"Thank you for sending your workbook ({strict.name}). It arrived, but it "
            "could not be used:") in body
    assert ("- The workbook was saved as 'Strict Open XML Spreadsheet'. Open it and save "
            "it as .xlsx: in Excel, File > Save As > Excel Workbook (.xlsx); in "
            "LibreOffice Calc, File > Save As, file type 'Excel 2007\u2013365 (.xlsx)'. "
            "Then send that file.") in body
