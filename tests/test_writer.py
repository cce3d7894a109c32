"""The workbook writer: hostile and long texts stay text and read back unchanged;
a real application (LibreOffice) opens the packs."""

from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from python_calamine import CalamineWorkbook
from roundtrip_helpers import needs_soffice

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.rules import boxes
from sheetflow.packs.text import clip, split_text, utf16_len
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent

TRICKY = {
    "eq": "=1+1",
    "dde": "=cmd|' /C calc'!A0",
    "plus": "+41 22 123",
    "minus": "-2-3",
    "at": "@SUM(A1:A2)",
    "url": "http://example.org/a?b=c",
    "mailto": "mailto:someone@example.org",
    "tab": "col1\tcol2",
    "newline": "line one\nline two\n\nline four",
    "emoji": "Great answer \U0001F600\U0001F44D\U0001F3FD and \u2764\ufe0f",
    "rtl": "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd mixed with English",
    "escape": "literal _x000D_ stays literal",
    "spaces": "internal   runs  of\t spaces kept",
    "long": ("word " * 4000)[:19999] + ".",  # 20,000 characters
    "huge_emoji": "\U0001F600" * 20000,  # 40,000 UTF-16 units: over one cell's limit
    "one_word": "x" * 50000,
}


def _decode_escapes(text: str) -> str:
    """openpyxl leaves OOXML ``_xHHHH_`` escapes encoded; decode them as Excel does."""
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), text)


@pytest.fixture(scope="module")
def tricky_study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tricky") / "study"
    shutil.copytree(ROOT / "templates" / "answer-review", folder)
    with (folder / "items.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    out = []
    for i, (name, text) in enumerate(TRICKY.items()):
        row = dict(rows[i % len(rows)])
        row["item_id"] = f"T-{name}"
        row["answer"] = text
        row["question"] = text if name in ("eq", "rtl", "tab") else row["question"]
        out.append(row)
    with (folder / "items.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(out)
    result = generate_packs(folder)
    manifest = read_manifest(result.manifest_path)
    return folder, result, manifest


def _field_cells(pack: dict, item_id: str, field: str) -> list[str]:
    card = next(c for c in pack["cards"] if c["item_id"] == item_id)
    for f in card["locked"] + card["rows"][0]["locked"]:
        if f["field"] == field:
            return f["cells"]
    raise KeyError(field)


def test_tricky_texts_are_text_and_read_back_unchanged(tricky_study):
    folder, _, manifest = tricky_study
    pack = manifest["packs"][0]
    ws = openpyxl.load_workbook(folder / "packs" / pack["file"])[L.SCORING_SHEET]
    for name, text in TRICKY.items():
        cells = _field_cells(pack, f"T-{name}", "response")
        for c in cells:
            assert ws[c].data_type == "s", (name, c, ws[c].value)
        read = _decode_escapes("".join(ws[c].value or "" for c in cells))
        if name == "escape":  # the one text where decoding openpyxl's output is ambiguous
            continue
        assert read == text, name


def test_calamine_reads_the_same_texts(tricky_study):
    folder, _, manifest = tricky_study
    pack = manifest["packs"][0]
    sheet = CalamineWorkbook.from_path(str(folder / "packs" / pack["file"])).get_sheet_by_name(
        L.SCORING_SHEET).to_python()

    def value(ref: str) -> str:
        col, row = re.match(r"([A-Z]+)(\d+)", ref).groups()
        v = sheet[int(row) - 1][ord(col) - ord("A")]
        return v if isinstance(v, str) else ""

    for name, text in TRICKY.items():
        cells = _field_cells(pack, f"T-{name}", "response")
        assert "".join(value(c) for c in cells) == text, name
    question = _field_cells(pack, "T-eq", "question")
    assert "".join(value(c) for c in question) == TRICKY["eq"]


def test_text_over_the_cell_limit_is_split_not_truncated(tricky_study):
    folder, _, manifest = tricky_study
    pack = manifest["packs"][0]
    ws = openpyxl.load_workbook(folder / "packs" / pack["file"])[L.SCORING_SHEET]
    for name in ("huge_emoji", "one_word", "long"):
        cells = _field_cells(pack, f"T-{name}", "response")
        assert len(cells) > 1
        assert all(utf16_len(ws[c].value) <= L.CELL_LIMIT_UTF16 for c in cells)
        assert all(len(ws[c].value) <= L.CHUNK_CHARS for c in cells)
        assert "".join(ws[c].value for c in cells) == TRICKY[name]
    assert utf16_len(TRICKY["huge_emoji"]) > L.CELL_LIMIT_UTF16


def test_no_formula_anywhere_but_sheetflows_own(tricky_study):
    folder, _, manifest = tricky_study
    pack = manifest["packs"][0]
    ws = openpyxl.load_workbook(folder / "packs" / pack["file"])[L.SCORING_SHEET]
    allowed = {pack["progress"]["cell"]}
    counts = set(L.helper_columns(()))
    for row in ws.iter_rows():
        for cell in row:
            if cell.data_type == "f":
                assert cell.coordinate in allowed or cell.column_letter in counts, (
                    cell.coordinate, cell.value)
            if isinstance(cell.value, str) and cell.value.startswith("http"):
                assert cell.hyperlink is None


def test_locked_hashes_match_the_written_text(tricky_study):
    folder, _, manifest = tricky_study
    pack = manifest["packs"][0]
    ws = openpyxl.load_workbook(folder / "packs" / pack["file"])[L.SCORING_SHEET]
    for card in pack["cards"]:
        for f in card["locked"] + card["rows"][0]["locked"]:
            text = _decode_escapes("".join(ws[c].value or "" for c in f["cells"]))
            if card["item_id"] != "T-escape":
                assert L.text_sha256(text) == f["sha256"], card["item_id"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6000),
       st.integers(min_value=5, max_value=140))
def test_split_text_loses_nothing(text, cpl):
    chunks = split_text(text, cpl)
    assert "".join(chunks) == text
    assert all(len(c) <= L.CHUNK_CHARS for c in chunks)
    assert len(chunks) == 1 or all(chunks)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 40), st.integers(2, 7)), max_size=120))
def test_boxes_cover_exactly_the_cells(cells):
    found = boxes(cells)
    covered = [(r, c) for r1, c1, r2, c2 in found
               for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]
    assert sorted(covered) == sorted(cells)  # every cell once: no gap, no overlap
    assert found == sorted(found)


def test_split_prefers_white_space():
    text = " ".join(f"word{i}" for i in range(600))
    chunks = split_text(text, 100)
    assert len(chunks) > 1
    assert all(c.endswith(" ") for c in chunks[:-1])


def test_clip_keeps_input_messages_within_excel_limits():
    assert clip("short", 255) == "short"
    long = "\U0001F600" * 300
    assert utf16_len(clip(long, 255)) <= 255
    assert clip(long, 255).endswith("\u2026")


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_converts_a_pack_to_pdf(tmp_path):
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / "paired-rubric", folder)
    result = generate_packs(folder)
    pack = result.packs[0].path
    outdir = tmp_path / "pdf"
    profile = (tmp_path / "lo-profile").as_uri()
    proc = subprocess.run(
        ["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
         "--outdir", str(outdir), str(pack)],
        capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    pdf = outdir / (pack.stem + ".pdf")
    assert pdf.exists() and pdf.stat().st_size > 1000
    assert pdf.read_bytes().startswith(b"%PDF")


def _valid_value(rule: dict, dim) -> object:
    if rule["type"] == "list":
        return rule["choices"][0]
    if rule["type"] in ("whole", "decimal"):
        return rule["min"]
    return " ".join(["word"] * max(dim.min_words or 2, 2))


def _progress_lines(tmp_path: Path, books: dict[str, openpyxl.Workbook]) -> dict[str, str]:
    """The progress line of each workbook as LibreOffice computes it."""
    for name, wb in books.items():
        wb.save(tmp_path / f"{name}.xlsx")
    csv_filter = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,2"
    proc = subprocess.run(
        ["soffice", f"-env:UserInstallation={(tmp_path / 'lo-profile').as_uri()}", "--headless",
         "--convert-to", csv_filter, "--outdir", str(tmp_path / "csv"),
         *(str(tmp_path / f"{name}.xlsx") for name in books)],
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    out = {}
    for name in books:
        sheet = tmp_path / "csv" / f"{name}-{L.SCORING_SHEET}.csv"
        out[name] = list(csv.reader(sheet.read_text(encoding="utf-8").splitlines()))[1][2]
    return out


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_computes_the_progress_line(tmp_path):
    """Filled required answers are counted once each; optional answers are not counted;
    a refused value (pasted past the dropdown) is "to correct", never "done"."""
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / "paired-rubric", folder)
    result = generate_packs(folder)
    manifest = read_manifest(result.manifest_path)
    pack = manifest["packs"][0]
    study = load_study(folder)
    dims = {d.id: d for d in study.rubric.dimensions}
    answers = list(L.iter_answer_cells(pack))
    required = [a for a in answers if dims[a["dimension"]].required]
    optional = [a for a in answers if not dims[a["dimension"]].required]
    assert optional, "the template should have an optional answer"
    books = {}
    for name, filled in (("part", required[::3]), ("every", required)):
        wb = books[name] = openpyxl.load_workbook(result.packs[0].path)
        for a in filled + optional:
            wb[L.SCORING_SHEET][a["cell"]] = _valid_value(a["validation"], dims[a["dimension"]])
    refused = openpyxl.load_workbook(result.packs[0].path)
    for a in required:
        refused[L.SCORING_SHEET][a["cell"]] = _valid_value(a["validation"],
                                                           dims[a["dimension"]])
    lists = [a for a in required if a["validation"]["type"] == "list"]
    refused[L.SCORING_SHEET][lists[0]["cell"]] = "not a choice"
    refused[L.SCORING_SHEET][lists[5]["cell"]] = "99"
    books["refused"] = refused
    # a required text answer of spaces alone: blank to collect, so not "done" (the line
    # said "All ... done" of a pack that collect refused for that blank answer)
    spaces = books["spaces"] = openpyxl.load_workbook(result.packs[0].path)
    for a in required:
        spaces[L.SCORING_SHEET][a["cell"]] = _valid_value(a["validation"], dims[a["dimension"]])
    texts = [a for a in required if dims[a["dimension"]].kind == "text"]
    assert texts, "the template should have a required text answer"
    spaces[L.SCORING_SHEET][texts[0]["cell"]] = "     "
    lines = _progress_lines(tmp_path, books)
    n = len(required)
    def where(cell: str) -> str:  # "case 2, row 40", the case by its card's rows
        row = int(cell[1:])
        starts = sorted(int(c["title"]["cell"][1:]) for c in pack["cards"])
        late = row >= min(int(a["cell"][1:]) for a in pack["study_answers"].values())
        return f"the Submission area, row {row}" if late else \
            f"case {sum(s <= row for s in starts)}, row {row}"

    by_row = sorted(required, key=lambda a: (int(a["cell"][1:]), a["cell"]))
    part_blank = next(a for a in by_row if a not in required[::3])
    assert lines["spaces"] == \
        f"{n - 1} of {n} required answers filled (first blank: {where(texts[0]['cell'])})"
    assert lines["part"] == (f"{len(required[::3])} of {n} required answers filled (first "
                             f"blank: {where(part_blank['cell'])})")
    assert lines["every"] == f"All {n} answers done"
    first_red = min((lists[0]["cell"], lists[5]["cell"]), key=lambda c: int(c[1:]))
    assert lines["refused"] == (f"2 to correct (red cells, first: {where(first_red)}); {n} "
                                f"of {n} required answers filled")


@pytest.mark.libreoffice
@needs_soffice
def test_keep_known_progress_reports_the_marks_a_blank_answers(tmp_path):
    """KEEP/KNOWN marks are not required (a blank means No), so the line counts them on
    their own; with every batch time filled and no mark set it does not hide them."""
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / "keep-known", folder)
    result = generate_packs(folder)
    pack = read_manifest(result.manifest_path)["packs"][0]
    cells = [a for a in L.iter_answer_cells(pack) if a["part"] == "value"]
    marks = [a for a in cells if a["scope"] == "response"]
    owner = [a for a in cells if a["scope"] == "study"]  # the rater description
    wb = openpyxl.load_workbook(result.packs[0].path)
    for b in pack["batches"]:
        for part in ("start", "end"):
            wb[b[part]["sheet"]][b[part]["cell"]] = dt.datetime(2026, 10, 2, 9, b["batch"])
    for a in owner:
        wb[a["sheet"]][a["cell"]] = "Yes" if a["validation"]["type"] == "list" else "none"
    for a in marks[:7]:
        wb[a["sheet"]][a["cell"]] = "Yes"
    study = load_study(folder)
    required = 2 * len(pack["batches"]) + sum(study.rubric.dimension(a["dimension"]).required
                                              for a in owner)
    line = _progress_lines(tmp_path, {"marks": wb})["marks"]
    assert line == (f"All {required} answers done; 7 of {len(marks)} marks set "
                    "(a blank mark means No)")
