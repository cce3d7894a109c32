"""Values read from the sheet scan (plain_cells) are python-calamine's, or not read.

The referee is python-calamine itself: every sheet below is read both ways, and
wherever the plain reading answers it must give the same cells with the same types;
where the sheet is outside the plain form it must decline (and calamine reads it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
import random
import zipfile
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect import reader
from sheetflow.collect.file_check import FileJob, check_file, known_study
from sheetflow.collect.reader import open_book
from sheetflow.collect.safety import Limits
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import open_manifest
from sheetflow.spec import load_study
from sheetflow.spec.templates import init_study

_HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet '
         b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
         b'<dimension ref="A1"/><sheetData>')
_TAIL = b"</sheetData></worksheet>"
# style 0: General; 1: built-in date (14); 2: custom "0.00"; 3: custom "yyyy-mm-dd";
# 4: custom ";;;"
_STYLES = (b'<?xml version="1.0" encoding="UTF-8"?><styleSheet '
           b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           b'<numFmts count="3"><numFmt numFmtId="164" formatCode="0.00"/>'
           b'<numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/>'
           b'<numFmt numFmtId="166" formatCode=";;;"/></numFmts>'
           b'<fonts count="1"><font/></fonts><fills count="1"><fill/></fills>'
           b'<borders count="1"><border/></borders>'
           b'<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="5">'
           b'<xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/>'
           b'<xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="165" applyNumberFormat="1"/>'
           b'<xf numFmtId="166" applyNumberFormat="1"/></cellXfs></styleSheet>')
_PLAIN_SST = [b"<t>High</t>", b'<t xml:space="preserve">  two  spaces </t>',
              b"<t>a &amp; b &lt;c&gt; &quot;q&quot; &apos;</t>", b"<t/>",
              "<t>é — ✓</t>".encode(), b"<t>line\none</t>"]
_RICH_SST = [b"<r><t>ri</t></r><r><rPr><b/></rPr><t>ch</t></r>"]

# (cell body after the address, whether it is in the plain form); {} is the address
PLAIN_CELLS = [
    '<c r="{}"><v>1</v></c>', '<c r="{}" s="2"><v>-2.5</v></c>', '<c r="{}"><v>1E-3</v></c>',
    '<c r="{}" t="n"><v>1.0000000000000001E-3</v></c>', '<c r="{}" s="4"><v>12</v></c>',
    '<c r="{}"><v>007</v></c>', '<c r="{}" s="1"><v></v></c>', '<c r="{}"><v></v></c>',
    '<c r="{}" t="b"><v>1</v></c>', '<c r="{}" t="b"><v>0</v></c>',
    '<c r="{}" t="str"><v>text &amp; more</v></c>', '<c r="{}" t="str"><v></v></c>',
    '<c r="{}" t="inlineStr"><is><t>inline</t></is></c>',
    '<c r="{}" s="3" t="inlineStr"><is><t xml:space="preserve"> pad </t></is></c>',
    '<c r="{}" t="inlineStr"><is><t>&lt;x&gt; &amp;</t></is></c>',
    '<c r="{}" t="inlineStr"><is><t></t></is></c>',
    '<c r="{}" t="s"><v>0</v></c>', '<c r="{}" t="s"><v>1</v></c>',
    '<c r="{}" t="s"><v>2</v></c>', '<c r="{}" t="s"><v>3</v></c>',
    '<c r="{}" t="s"><v>4</v></c>', '<c r="{}" t="s"><v>5</v></c>',
    '<c r="{}" s="1"/>', '<c r="{}"><f>1+1</f><v>2</v></c>',
    '<c r="{}" t="str"><f>"a"&amp;"b"</f><v>ab</v></c>', '<c r="{}"><f>A1</f></c>',
    '<c r="{}" t="inlineStr"> <is><t>x</t></is></c>',
]
NOT_PLAIN_CELLS = [
    '<c r="{}" s="1"><v>45000</v></c>', '<c r="{}" s="3"><v>45000.5</v></c>',
    '<c r="{}" t="d"><v>2024-01-05T00:00:00</v></c>',
    '<c r="{}" t="inlineStr"><is><t>a&#10;b</t></is></c>',
    '<c r="{}" t="inlineStr"><is><t>a_x000D_b</t></is></c>',
    '<c r="{}" t="inlineStr"><is><r><t>rich</t></r></is></c>',
    '<c r="{}" t="str"><v>a\rb</v></c>', '<c r="{}"><v>1</v><v>2</v></c>',
    '<c r="{}" cm="1"><v>1</v></c>', '<c r="{}"><v>0x10</v></c>',
    '<c r="{}" t="b"><v>true</v></c>', '<c r="{}" t="s"><v>99</v></c>',
    '<c r="{}"><v> 1</v></c>',
    '<c r="{}" t="inlineStr"><v>9</v></c>',  # python-calamine versions differ on it
]


def _workbook(sheet: bytes, strings: list[bytes] | None) -> bytes:
    """A workbook whose one sheet, styles and shared strings are exactly these."""
    base = io.BytesIO()
    wb = openpyxl.Workbook()
    wb.active["A1"] = "x"
    wb.save(base)
    out = io.BytesIO()
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = sheet
            elif info.filename == "xl/styles.xml":
                data = _STYLES
            elif info.filename == "xl/sharedStrings.xml":
                continue
            elif info.filename == "[Content_Types].xml" and strings is not None:
                data = data.replace(b"</Types>", (
                    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
                    b"</Types>"))
            dst.writestr(info, data)
        if strings is not None:
            dst.writestr("xl/sharedStrings.xml", (
                b'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.'
                b'openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">'
                % (len(strings), len(strings))
                + b"".join(b"<si>" + s + b"</si>" for s in strings) + b"</sst>"))
    return out.getvalue()


def _both_ways(tmp_path: Path, sheet: bytes, strings: list[bytes] | None) -> tuple:
    """(plain reading, calamine's reading without the formula cells), or (None, None)."""
    path = tmp_path / "book.xlsx"
    path.write_bytes(_workbook(sheet, strings))
    book = open_book(path)
    assert not isinstance(book, reader.Problem), book
    name = book.sheets[0][0]
    scan = book.scans[name]
    try:
        plain = book._plain_window(scan, 1000, 64)
        if plain is None:  # (python-calamine may refuse it: a string index too far)
            return None, None
        calamine = book._calamine_window(name, 1000, 64)
    finally:
        book.close()
    return plain, {k: v for k, v in calamine.items() if k not in scan.formulas}


def _sheet(cells: list[str]) -> bytes:
    rows: dict[int, list[str]] = {}
    for i, cell in enumerate(cells):
        rows.setdefault(i // 3 + 1, []).append(cell.format(f"{'ABC'[i % 3]}{i // 3 + 1}"))
    body = "".join(f'<row r="{r}">{"".join(c)}</row>' for r, c in rows.items())
    return _HEAD + body.encode() + _TAIL


def _typed(cells: dict) -> dict:
    return {k: (type(v), v) for k, v in cells.items()}


def test_each_plain_cell_reads_as_calamine_reads_it(tmp_path):
    for cell in PLAIN_CELLS:
        plain, calamine = _both_ways(tmp_path, _sheet([cell]), _PLAIN_SST)
        assert plain is not None, cell
        assert _typed(plain) == _typed(calamine), cell


def test_a_sheet_outside_the_plain_form_is_left_to_calamine(tmp_path):
    for cell in NOT_PLAIN_CELLS:
        plain, _ = _both_ways(tmp_path, _sheet([PLAIN_CELLS[0], cell]), _PLAIN_SST)
        assert plain is None, cell
    for sheet, strings in [
            (_sheet(['<c r="{}" t="s"><v>0</v></c>']), _RICH_SST),  # rich text
            (_sheet(['<c r="{}" t="s"><v>0</v></c>']), None),  # no shared strings
            (_sheet([PLAIN_CELLS[0]]).replace(b"<row", b"<!-- c --><row", 1), None),
            (_sheet([PLAIN_CELLS[0]]).replace(b"</row>", b'<c r="A1"><v>2</v></c></row>'),
             None),  # an address twice
            (_sheet([PLAIN_CELLS[0]]).replace(b"</worksheet>",
                                              b'<x><c r="B9"><v>1</v></c></x></worksheet>'),
             None)]:  # a cell tag outside sheetData
        plain, _ = _both_ways(tmp_path, sheet, strings)
        assert plain is None, sheet


def test_random_sheets_read_as_calamine_reads_them_or_not_at_all(tmp_path):
    rng = random.Random(20261204)
    taken = 0
    for _ in range(60):
        pool = PLAIN_CELLS + (NOT_PLAIN_CELLS if rng.random() < 0.3 else [])
        cells = [rng.choice(pool) for _ in range(rng.randint(1, 40))]
        plain, calamine = _both_ways(tmp_path, _sheet(cells), _PLAIN_SST)
        if plain is not None:
            taken += 1
            assert _typed(plain) == _typed(calamine), cells
        else:
            assert any(c in NOT_PLAIN_CELLS for c in cells), cells
    assert taken >= 30


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    root = tmp_path_factory.mktemp("plain") / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    manifest = open_manifest(root)
    for head in manifest.heads[:3]:
        fill_openpyxl(root / "packs" / head.file, root / "returns" / head.file,
                      plan_answers(manifest.pack(head)))
    manifest.close()
    return root


def test_a_return_checks_the_same_read_either_way(filled, monkeypatch):
    """The whole check of a filled return (rows, issues, identity) is the same whether
    its sheets are read from the scan or by python-calamine, and the scan reads them."""
    manifest = open_manifest(filled)
    known_study(str(filled), load_study(filled))
    jobs = [FileJob(str(p), p.name, hashlib.sha256(p.read_bytes()).hexdigest(), str(filled),
                    manifest, Limits()) for p in sorted((filled / "returns").glob("*.xlsx"))]
    read = []
    plain_window = reader.Book._plain_window
    monkeypatch.setattr(reader.Book, "_plain_window",
                        lambda *a: read.append(plain_window(*a)) or read[-1])
    from_scan = [check_file(job) for job in jobs]
    assert read and None not in read  # every sheet of these returns is plain
    monkeypatch.setattr(reader.Book, "_plain_window", lambda *a: None)
    by_calamine = [check_file(job) for job in jobs]
    assert _unpickled(from_scan) == _unpickled(by_calamine)
    manifest.close()


def _unpickled(results: list) -> list:
    """The results with each block's rows unpickled (a pickle's bytes depend on which
    equal strings are one object)."""
    return [dataclasses.replace(r, checks={
        k: dataclasses.replace(c, block=dataclasses.replace(
            c.block, data=pickle.loads(c.block.data))) for k, c in r.checks.items()})
        for r in results]
