"""A note a marked flag needs: the pack says and counts what collect checks (003).

Protocol 003: "Put Y in gold_dispute and one line in rater_note"; collect refuses a
marked flag whose note is blank (``flag-note-missing``). The pack's guide and
Instructions say when the note is required, its progress line is not "done" while such
a note is missing, and the note cell turns orange.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pdfplumber
import pytest
from roundtrip_helpers import fill_openpyxl, libreoffice_profile, needs_soffice, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.text import progress_text
from sheetflow.packs.writer import COLOURS
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

WHEN = "Required when Gold answer disputed is Y; otherwise optional."
ORANGE = tuple(int(COLOURS["blank"][i:i + 2], 16) / 255 for i in (1, 3, 5))
CSV_FILTER = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,2"
# a flag and its note added to the paired template: one pair per label, A and B
PAIRED_FLAG = '''
[[dimensions]]
id = "off_topic"
label = "Off topic"
kind = "flag"
note = "off_topic_why"

[[dimensions]]
id = "off_topic_why"
label = "Why off topic"
kind = "text"
required = false
'''


def _study(root: Path, template: str = "answer-review") -> dict:
    """``template`` initialised at ``root`` and generated; its first pack's entry."""
    init_study(root, template)
    if template == "paired-rubric":
        toml = root / "study.toml"
        toml.write_text(toml.read_text(encoding="utf-8") + PAIRED_FLAG, encoding="utf-8")
    generate_packs(root)
    return read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]


def _cells(pack: dict, dimension: str) -> list[dict]:
    return [a for a in L.iter_answer_cells(pack)
            if a["dimension"] == dimension and a["part"] == "value"]


def _lines(ws) -> list[str]:
    return [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]


def test_the_notes_guide_and_instructions_say_when_it_is_required(tmp_path):
    """Not "Optional." / "Free text." alone: collect refuses a dispute without it."""
    root = tmp_path / "review"
    pack = _study(root)
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
    ws = wb[L.SCORING_SHEET]
    note = _cells(pack, "rater_note")[0]["cell"]
    guide = ws[f"{L.guide_column(())}{note[1:]}"].value
    assert guide.endswith("\n" + WHEN), guide
    assert "Optional." not in guide
    first = _lines(wb[L.INSTRUCTIONS_SHEET])
    assert f"\u2022 Note: Free text. {WHEN}" in first
    assert any(line.startswith("\u2022 Where Gold answer disputed is Y, Note is required")
               for line in first), first
    more = _lines(wb[L.MORE_SHEET])
    rubric = more[more.index("Note"):]
    assert rubric[rubric.index("Free text.") + 1] == WHEN


def test_the_progress_text_counts_notes_still_to_write():
    """The text the formula shows before LibreOffice or Excel computes it."""
    assert progress_text(90, 90) == "All 90 answers done"
    assert progress_text(90, 90, notes=1) == \
        "90 of 90 required answers filled; 1 note to write (orange)"
    assert progress_text(80, 90, 2, notes=3) == \
        "2 to correct (red cells); 80 of 90 required answers filled; 3 notes to write (orange)"


@pytest.mark.parametrize(("template", "flag", "note"), [
    ("answer-review", "gold_dispute", "rater_note"),
    ("paired-rubric", "off_topic", "off_topic_why"),  # two labels: columns C and E
])
def test_each_note_is_counted_with_the_flag_of_its_own_case_and_column(
        tmp_path, template, flag, note):
    root = tmp_path / "study"
    pack = _study(root, template)
    flags = {(a["item_id"], a["label"]): a["cell"] for a in _cells(pack, flag)}
    pairs = {(flags[(a["item_id"], a["label"])], a["cell"]) for a in _cells(pack, note)}
    assert len(pairs) == len(flags) == len(pack["cards"]) * (2 if template == "paired-rubric"
                                                               else 1)
    ws = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    labels = () if template == "answer-review" else ("A", "B")
    counted = set()
    for row in ws.iter_rows(min_col=ord(L.notes_column(labels)) - 64,
                            max_col=ord(L.notes_column(labels)) - 64):
        for cell in row:
            if cell.value is not None:
                counted |= set(re.findall(
                    r'AND\(OR\(TRIM\((?:SUBSTITUTE\()*(\w+)(?:,(?:CHAR\(\d+\)|"\s"),"\s"\))*\)="Y"\),'
                    r'TRIM\(CLEAN\((?:SUBSTITUTE\()+(\w+),[^=]*=""\)', cell.value))
    assert counted == pairs


def _progress_lines(tmp: Path, files: list[Path]) -> dict[str, str]:
    """The progress line of each workbook as LibreOffice computes it."""
    subprocess.run(["soffice", f"-env:UserInstallation={libreoffice_profile(tmp).as_uri()}",
                    "--headless", "--convert-to", CSV_FILTER, "--outdir", str(tmp / "csv"),
                    *map(str, files)], capture_output=True, timeout=300, check=True)
    return {f.stem: list(csv.reader((tmp / "csv" / f"{f.stem}-{L.SCORING_SHEET}.csv")
                                    .read_text(encoding="utf-8").splitlines()))[1][2]
            for f in files}


def _orange_rects(tmp: Path, path: Path) -> int:
    """How many orange rectangles LibreOffice draws printing ``path``."""
    out = tmp / "pdf"
    subprocess.run(["soffice", f"-env:UserInstallation={libreoffice_profile(tmp).as_uri()}",
                    "--headless", "--convert-to", "pdf", "--outdir", str(out), str(path)],
                   capture_output=True, timeout=300, check=True)
    with pdfplumber.open(out / f"{path.stem}.pdf") as doc:
        return sum(1 for page in doc.pages for r in page.rects
                   if len(r.get("non_stroking_color") or ()) == 3 and all(
                       abs(a - b) < 0.01 for a, b in zip(r["non_stroking_color"], ORANGE,
                                                         strict=True)))


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_a_dispute_without_its_note_is_not_done_as_collect_says(tmp_path):
    """Every required answer filled and one dispute marked: the line is not "done" and
    the note is orange until it is written, when collect accepts the pack too."""
    root = tmp_path / "review"
    pack = _study(root)
    answers = plan_answers(pack)
    flags, notes = _cells(pack, "gold_dispute"), _cells(pack, "rater_note")
    for cell in [a["cell"] for a in flags + notes]:
        del answers[cell]
    src = root / L.PACKS_DIR / pack["file"]
    books = {}
    for name, flag, note in (("flagged", "Y", None), ("lower", "y", None),
                             ("noted", "Y", "The gold answer contradicts block [1].")):
        given = {**answers, flags[0]["cell"]: (flag, flag)}
        if note:
            given[notes[0]["cell"]] = (note, note)
        books[name] = tmp_path / f"{name}.xlsx"
        fill_openpyxl(src, books[name], given)
    n = int(re.search(r"All (\d+) answers done",
                      openpyxl.load_workbook(src)[L.SCORING_SHEET]["C2"].value).group(1))
    lines = _progress_lines(tmp_path, list(books.values()))
    missing = f"{n} of {n} required answers filled; 1 note to write (orange)"
    assert lines == {"flagged": missing, "lower": missing, "noted": f"All {n} answers done"}
    assert _orange_rects(tmp_path, books["flagged"]) == 1  # the note, nothing else
    assert _orange_rects(tmp_path, books["noted"]) == 0
    for name, refused in (("flagged", True), ("lower", True), ("noted", False)):
        target = root / L.RETURNS_DIR / pack["file"]
        shutil.copy(books[name], target)
        errors = [i.code for i in collect(root, write=False).report.issues
                  if i.severity == "error"]
        assert errors == (["flag-note-missing"] if refused else []), (name, errors)
