"""A return that could not be read, named like no pack, is said to be unreadable with
its rater unknown, never "not a pack of this study": it may well be one of the study's
packs. The coordinator is told how to find its sender (the address it came from, when
the mail journal or its saved message knows it), to ask them for the workbook, and to
remove the file; in the same words on collect's and status's screens and on the Status
sheet. A file read that is no pack of this study is still called so. One sent from a
rater's address whose workbook is in is no stranger's: it is left out, asking nothing of
them (``unusable-beside-used``).

Every pack comes back filled in; then an encrypted workbook fetched from EV-03's
address, an empty file put in ``returns/`` by hand, a text file attached to a saved
message from a stranger, and another study's pack.
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from mail_helpers import mail_study, reply, run

from sheetflow.demo.simulate import fill_packs
from sheetflow.workbook import layout as L

ENCRYPTED, EMPTY, MESSAGE, TEXT, FOREIGN = ("moreau-encrypted.xlsx", "blank.xlsx",
                                            "from-a-stranger.eml", "scores.xlsx",
                                            "other-study.xlsx")
ASK = ("ask them to send the .xlsx workbook they received, filled in (its error says what "
       "went wrong; no reply draft is written, as no rater is identified), and remove ")
FETCHED = f"20260915-093000-{ENCRYPTED}"  # as fetch saves it, after the message's date
LEFT_OUT = ("This file could not be read or identified (could not be read; it came from "
            "ev03@example.org, rater EV-03's address); rater EV-03's ")
NOTES = {
    EMPTY: f"could not be read, so its rater is unknown: find out who sent it, {ASK}"
           f"returns/{EMPTY}",
    f"{MESSAGE}/{TEXT}": "could not be read, so its rater is unknown: find out who sent "
                         "it (it came from someone@elsewhere.org, the address of no rater), "
                         f"{ASK}returns/{MESSAGE}, the saved message it came in",
}


def _encrypted() -> bytes:
    """An Excel file encrypted with an opening password, as the reader sees one: an OLE
    container holding the encrypted package and its encryption info."""
    body = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 4096
    return body + "EncryptedPackage".encode("utf-16-le") + "EncryptionInfo".encode("utf-16-le")


def _foreign(pack: Path, dst: Path) -> None:
    """A copy of ``pack`` whose identity names another study, in all three stores."""
    wb = openpyxl.load_workbook(pack)
    for prop in wb.custom_doc_props.props:
        if prop.name == L.identity_property("study_id"):
            prop.value = "another-study"
    wb.defined_names[L.identity_name("study_id")].attr_text = '"another-study"'
    wb[L.IDENTITY_SHEET].cell(L.IDENTITY_KEYS.index("study_id") + 1, 2).value = "another-study"
    wb.save(dst)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("unread")
    root = mail_study(base / "s")
    returned = fill_packs(root, seed=5)
    fetched = base / "m.eml"
    fetched.write_bytes(reply("ev03@example.org", [(ENCRYPTED, _encrypted())]))
    assert run("fetch", str(root), str(fetched)).exit_code == 0
    assert (root / L.RETURNS_DIR / FETCHED).is_file()
    (root / L.RETURNS_DIR / EMPTY).write_bytes(b"")
    (root / L.RETURNS_DIR / MESSAGE).write_bytes(
        reply("someone@elsewhere.org", [(TEXT, b"these are my scores\n")]))
    _foreign(returned[0], root / L.RETURNS_DIR / FOREIGN)
    return root


@pytest.fixture(scope="module")
def collected(study) -> list[str]:
    result = run("collect", str(study))
    assert result.exit_code == 1, result.output  # files with errors
    return result.stdout.splitlines()


def test_collect_says_an_unreadable_file_could_not_be_read_and_what_to_do(collected):
    for name in NOTES:
        assert f"{name}: could not be read, so its rater is unknown, 1 error, " in "\n".join(
            collected), name
        assert f"{name}: {NOTES[name]}" in collected, name
    assert not any(ln.startswith(tuple(f"{n}: rater unknown" for n in [*NOTES, FETCHED]))
                   for ln in collected)
    assert f"{FETCHED}: could not be read, left out, 1 error, 1 warning, NOT USED" in collected
    assert not any(ln.startswith(f"{FETCHED}: could not be read, so") for ln in collected)
    assert collected[-1].endswith("; 2 files that could not be read, their raters unknown; "
                                  "1 file left out beside its rater's return used (remove "
                                  "it from returns/)")


def test_a_readable_file_of_another_study_is_still_no_pack_of_this_study(collected):
    (line,) = [ln for ln in collected if ln.startswith(f"{FOREIGN}: ")]
    assert line.startswith(f"{FOREIGN}: rater unknown (not a pack of this study), 1 error")


def test_the_status_sheet_says_the_same(study, collected):
    ws = openpyxl.load_workbook(study / "out" / "validation.xlsx")["Status"]
    header = [c.value for c in ws[1]]
    rows = [dict(zip(header, (c.value for c in row), strict=True))
            for row in ws.iter_rows(min_row=2)]
    todo = {r["File returned"]: r["What to do"] for r in rows if r["State"] == "Unknown file"}
    assert todo.pop(FETCHED).startswith(LEFT_OUT)
    assert todo == {**NOTES, FOREIGN: "not a pack of this study (see the Issues sheet): "
                    "find out who sent it and ask for their own workbook"}


def test_status_says_the_same_and_exits_1(study, collected):
    result = run("status", str(study))
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    for name, note in NOTES.items():
        at = lines.index(f"{name}: {note}")
        assert lines[at + 1].startswith(f"  error: {name}: ["), lines[at + 1]
    assert [ln for ln in lines if "matches no pack" in ln] == [
        f"{FOREIGN}: matches no pack of this study: [wrong-study] This workbook belongs to "
        "study another-study, not to this study. Check that it was sent to the right "
        "coordinator."]
    assert any(ln.startswith(f"{FETCHED}: {LEFT_OUT}") for ln in lines), lines
    assert lines[-1] == ("3 of 3 packs returned; 2 files that could not be read, their "
                         "raters unknown (find out who sent it); 1 file left out beside its "
                         "rater's return used (remove it from returns/); 1 file matching no "
                         "pack (remove it from returns/, or find out who sent it)")
    doc = json.loads(run("status", str(study), "--json").stdout)
    assert doc["ok"] is False
    assert {u["file"]: u["unread"] for u in doc["unmatched"]} == {
        **NOTES, FOREIGN: "", FETCHED: ""}
    assert [u["file"] for u in doc["unmatched"] if u["left_out"]] == [FETCHED]
