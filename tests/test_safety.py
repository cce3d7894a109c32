"""Byte/zip checks and the sandbox: a child that aborts or overruns costs one job."""

from __future__ import annotations

import random
import signal

import pytest

from sheetflow.collect import safety
from sheetflow.collect.safety import Limits, column_number, inspect_file, scan_sheet
from sheetflow.collect.sandbox import Sandbox


def test_sandbox_survives_abort_memory_and_timeout():
    limits = Limits(memory_bytes=512 * 2**20, timeout_seconds=3)
    aborts = Sandbox(signal.raise_signal, limits).run([signal.SIGABRT])
    assert aborts[0].kind == "aborted" and "SIGABRT" in aborts[0].reason
    memory = Sandbox(bytearray, limits).run([8 * 2**30, 10])
    assert memory[0].kind == "aborted" and "memory" in memory[0].reason
    assert memory[1].ok and memory[1].value == bytearray(10)


def test_sandbox_time_limit_then_next_job_runs():
    import time

    limits = Limits(timeout_seconds=1)
    out = Sandbox(time.sleep, limits).run([30, 0])
    assert out[0].kind == "aborted" and "time limit" in out[0].reason
    assert out[1].ok


def test_parser_exception_is_a_reason(tmp_path):
    out = Sandbox(int, Limits()).run(["not a number"])
    assert out[0].kind == "error" and "ValueError" in out[0].reason


def test_magic_checks(tmp_path):
    cases = {b"": "empty-file", b"a,b\n1,2\n": "not-a-workbook",
             b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600: "legacy-xls",
             b"PK\x03\x04garbage": "corrupt-file"}
    for i, (data, code) in enumerate(cases.items()):
        path = tmp_path / f"f{i}.xlsx"
        path.write_bytes(data)
        assert inspect_file(path).problem.code == code


PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x04,\x00\x00\x02;\x08\x06"


@pytest.mark.parametrize(("data", "said"), [
    (PNG_HEAD, "it is a PNG image"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00,;\t", "it is a JPEG image"),
    (b"\x00\x00\x00\x18ftypheic\x00,", "it is a HEIC photo"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\x00,", "it is a PDF"),
    (bytes(range(256)) * 2, "it is not a spreadsheet"),
    (b"case_id,score\nTC-001,5\n", "it is a text/CSV file"),
    ("caf\xe9;5\r\n".encode("cp1252"), "it is a text/CSV file"),
    ("case_id\tscore\n".encode("utf-16"), "it is a text/CSV file"),
    (b"scores attached\n", "it is a text file"),
    (b"<html><table>", "it is an HTML page"),
])
def test_a_file_not_a_workbook_is_called_what_it_is(tmp_path, data, said):
    """The rater reads this in the reply draft: a photo (whose bytes hold commas and
    tabs too) was "a text/CSV file"."""
    path = tmp_path / "scores.xlsx"
    path.write_bytes(data)
    problem = inspect_file(path).problem
    assert (problem.code, problem.detail) == ("not-a-workbook", said)


def test_zipped_workbook_is_named_not_called_no_workbook(tmp_path):
    """A zip archive holding the workbook says so, by the names alone."""
    import zipfile

    from sheetflow.collect.validate import issue

    zipped, other = tmp_path / "R.zip", tmp_path / "notes.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("my scores.xlsx", b"not read")
        zf.writestr("__MACOSX/._my scores.xlsx", b"")
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("notes.txt", b"hello")
    problem = inspect_file(zipped).problem
    assert (problem.code, problem.detail) == ("zipped-workbook", "'my scores.xlsx'")
    message = issue(problem.code, file="R.zip", detail=problem.detail).message
    assert "zip archive holding 'my scores.xlsx': unzip it" in message
    assert inspect_file(other).problem.detail == "a zip archive without a workbook in it"


def test_column_number():
    assert column_number("A") == 1 and column_number("XFD") == 16384


def test_scan_sheet_extent_and_formulas():
    xml = (b'<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="H1" s="2"/></row>'
           b'<row r="7"><c r=\'C7\'><f>SUM(A1:A2)&amp;"x"</f><v>3</v></c>'
           b'<x:c r="D9" t="inlineStr"><x:is><x:t>a</x:t></x:is></x:c>'
           b'<c r="E9"><f t="shared" ref="E9:E12" si="0">A9+1</f><v/></c>'
           b'<c r="E10"><f t="shared" si="0"/><v>2</v></c></row>'
           b'<row r="1048576"><c r="XFD1048576" s="1"/></row></sheetData>')
    scan = scan_sheet(xml)
    assert scan.extent == (10, 5)  # style-only cells (H1, XFD1048576) do not count
    assert scan.formulas[(7, 3)] == (b"", b'SUM(A1:A2)&amp;"x"')
    assert scan.formulas[(10, 5)] == (b' t="shared" si="0"', b"")


@pytest.mark.parametrize("cell", [
    b'<c r="C5"><!-- x --><f>1</f><v>7</v></c>',  # a comment before the formula
    b'<c r="C5"><v>7</v><f>1</f></c>',  # the value first
    b'<c r="C5" t="e"><!-- x --><f>1</f><v>#N/A</v></c>',  # by position (an error cell)
])
def test_a_formula_the_scan_cannot_place_is_named(cell):
    """A comment before the formula hid it from the scan, and collect took the stored
    value (7) for what the cell shows (1): no spreadsheet program writes either."""
    xml = b'<sheetData><row r="5"><c r="A5"><v>1</v></c>' + cell + b"</row></sheetData>"
    assert scan_sheet(xml).unplaced == 1
    plain = xml.replace(cell, b'<c r="C5"><f>1</f><v>1</v></c>')
    assert scan_sheet(plain).unplaced == 0 and (5, 3) in scan_sheet(plain).formulas


@pytest.mark.parametrize("tag", [
    b'<c x="r=\'J13\'" r="C13">',  # a decoy "r=" inside another attribute's value
    b'<c q:r="J13" r="C13">',  # a prefixed attribute named r
    b'<c r = "C13">',  # spaces around "=", as XML allows
    b'<c x=" r=\'J13\'" r="C13">',
])
def test_a_cell_is_placed_where_a_parser_places_it(tag):
    """Each form put the scan's formula at J13 (or nowhere) while readers place it at
    C13: a formula in an answer cell went unseen and its stored value was taken."""
    xml = b'<sheetData><row r="13">' + tag + b"<f>1</f><v>7</v></c></row></sheetData>"
    scan = scan_sheet(xml)
    assert scan.formulas == {(13, 3): (b"", b"1")} and scan.unplaced == 0
    assert scan.extent == (13, 3)


# cell tags as writers and forgers spell them: '<c r="' first (the fast path), r later
# or single-quoted, a tab, a second r, a bad first r, self-closing, a prefix, no r
_CELL_TAGS = ['<c r="{ref}"{attrs}>{body}</c>', '<c r="{ref}"{attrs}/>',
              '<c s="1" r="{ref}">{body}</c>', "<c r='{ref}'>{body}</c>",
              '<c\tr="{ref}">{body}</c>', '<c r="zz" r="{ref}">{body}</c>',
              '<c r="{ref}" xr="B2">{body}</c>', '<x:c r="{ref}">{body}</x:c>',
              '<c r="{ref}" t="s"><x:v>1</x:v></c>']
_BODIES = ["<v>1</v>", "<v/>", '<is><t>a</t></is>', "<f>A1&amp;B1</f><v>2</v>",
           '<f t="shared" si="0"/>', " <v>3</v>", "<x/>", "<f>A1<x/>B1</f>",
           '<f a="1">1+1</g></f>', "<f>SUM(A1:A2)", "<x:f>A2</x:f>"]


def _plain_scan(data: bytes) -> tuple:
    """The scan's definition: one general regex, and the full no-address search."""
    if safety._cells_without_address(data):
        return None
    found = (safety._CELL_REF if b":c" in data else safety._PLAIN_CELL_REF).findall(data)
    rows = [int(row) for _, row, *_ in found]
    cols = [column_number(col.decode()) for col, *_ in found]
    formulas = {(int(row), column_number(col.decode())): (attrs, text)
                for col, row, f, attrs, text in found if f}
    return (max(rows, default=0), max(cols, default=0)), formulas


def test_scan_sheet_fast_path_finds_what_the_general_regex_finds():
    rng = random.Random(20261202)
    for _ in range(600):
        kinds = rng.sample(range(len(_CELL_TAGS)), rng.choice([1, 1, 2, 3]))
        cells = []
        for _ in range(rng.randint(1, 30)):
            ref = f"{rng.choice('ABCXZ')}{rng.randint(1, 2000)}"
            tag = _CELL_TAGS[rng.choice(kinds)]
            body = rng.choice(_BODIES if rng.random() < 0.3 else _BODIES[:7])
            cells.append(tag.format(ref=ref, attrs=rng.choice(["", ' s="3"', ' t="n" ']),
                                    body=body))
        xml = ("<sheetData><row>" + "".join(cells) + "</row></sheetData>").encode()
        want = _plain_scan(xml)
        scan = scan_sheet(xml)
        # a cell tag not starting '<c r="' (or prefixed): its attributes are read one by
        # one, by the positional scan, as an XML parser reads them
        odd = safety._ODD_CELL.search(xml) is not None or b":c" in xml
        if want is None or odd:
            placed = safety._scan_by_position(xml)
            assert (scan.extent, scan.formulas, scan.errors) == \
                (placed.extent, placed.formulas, placed.errors)
        else:
            assert (scan.extent, scan.formulas) == want, xml


def test_sandbox_imap_yields_each_result_once():
    out = dict(Sandbox(abs, Limits(), workers=2).imap([-1, -2, -3]))
    assert {i: o.value for i, o in out.items()} == {0: 1, 1: 2, 2: 3}


def test_sandbox_runs_in_fresh_interpreters_where_it_cannot_fork(monkeypatch):
    """Off Linux, or with other threads running, each child is a new interpreter that
    imports the worker by name: the same results, and a crash still costs one job."""
    from sheetflow.collect import sandbox

    monkeypatch.setattr(sandbox, "_can_fork", lambda: False)
    out = Sandbox(abs, Limits(), workers=2).run([-1, -2, -3])
    assert [o.value for o in out] == [1, 2, 3]
    aborts = Sandbox(signal.raise_signal, Limits()).run([signal.SIGABRT])
    assert aborts[0].kind == "aborted" and "SIGABRT" in aborts[0].reason


def test_two_sheets_of_one_name_are_refused(tmp_path):
    """A reader took the first sheet named "Scoring" while the scan checked the last:
    a formula on the one read went unseen."""
    import zipfile

    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = "Scoring"
    wb.create_sheet("Other")
    made = tmp_path / "made.xlsx"
    wb.save(made)
    forged = tmp_path / "forged.xlsx"
    with zipfile.ZipFile(made) as src, zipfile.ZipFile(forged, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "xl/workbook.xml":
                data = data.replace(b'name="Other"', b'name="Scoring"')
            dst.writestr(info, data)
    found = inspect_file(forged)
    assert found.problem is not None and found.problem.code == "corrupt-file"
    assert found.problem.detail == "two sheets are named 'Scoring'"
    assert inspect_file(made).problem is None


def test_whatever_its_name_says_only_where_the_name_claims_a_workbook(tmp_path):
    """A pack saved as CSV and named .csv was "not an Excel workbook (it is a text/CSV
    file), whatever its name says": its name says CSV, as it is."""
    from sheetflow.collect.run import collect
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    root = init_study(tmp_path / "jl", "judge-likert")
    generate_packs(root)
    files = [tmp_path / "scores.csv", tmp_path / "scores.xlsx"]
    for score, path in enumerate(files):  # not the same bytes: one would be a copy
        path.write_text(f"case_id,score\nTC-001,{score}\n")
    said = {i.file: i.message for i in collect(root, files, write=False).report.issues
            if i.code == "not-a-workbook"}
    assert said == {
        "scores.csv": "This file is not an Excel workbook (it is a text/CSV file). Please "
                      "send the .xlsx workbook you received, filled in.",
        "scores.xlsx": "This file is not an Excel workbook (it is a text/CSV file), whatever "
                       "its name says. Please send the .xlsx workbook you received, filled in."}
