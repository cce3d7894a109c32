"""Hidden row ids swapped between two cases, every line left where it was.

The ids bind a line to its case, not to the text beside it: the cases of a study lie
alike, so ids swapped between two cases aligned every label, and each case's answers
were read as the other's (the file used, with only a warning that rows were reordered).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import openpyxl
import pytest
from generate_helpers import SECRET, manifest_of
from roundtrip_helpers import (
    fill_libreoffice,
    fill_openpyxl,
    libreoffice_profile,
    plan_answers,
    require_libreoffice,
)

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _line_rows(card: dict) -> list[int]:
    """The rows of a card's answer lines (those carrying its hidden ids)."""
    return sorted({int(ref[1:]) for r in card["rows"] for a in r["answers"].values()
                   for ref in ([q["cell"] for q in a["questions"]] if "questions" in a
                               else [a["cell"]])})


def _alike(cards: list[dict]) -> tuple[int, int]:
    """The first two cards whose answer lines lie alike (a page break can put a
    heading between one card's lines and not another's)."""
    def shape(card):
        rows = _line_rows(card)
        return [r - rows[0] for r in rows]
    return next((i, j) for i in range(len(cards)) for j in range(i + 1, len(cards))
                if shape(cards[i]) == shape(cards[j]))


def _swapped(tmp_path: Path, template: str, lines: slice, whole_rows: bool = False,
             insert_after: bool = False, secret: bytes = SECRET,
             libreoffice: bool = False):
    """The first pack filled in, the column A ids of two alike cases' ``lines``
    swapped (or those rows' first eight columns, ``whole_rows``), and a row inserted
    into the next case (``insert_after``); the rows swapped and what collect made of
    the return. With ``libreoffice``, the ids are swapped in the pack and LibreOffice
    enters the answers and saves the return."""
    root = tmp_path / template
    init_study(root, template)
    generate_packs(root, secret=secret)  # the same layout each run
    pack = manifest_of(root)["packs"][0]
    (root / "returns").mkdir(exist_ok=True)
    filled = tmp_path / "filled.xlsx"
    if libreoffice:
        shutil.copyfile(root / L.PACKS_DIR / pack["file"], filled)
    else:
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], filled, plan_answers(pack))
    wb = openpyxl.load_workbook(filled)
    ws = wb[L.SCORING_SHEET]
    i, j = _alike(pack["cards"])
    pairs = list(zip(_line_rows(pack["cards"][i]), _line_rows(pack["cards"][j]),
                     strict=True))[lines]
    for a, b in pairs:
        for col in range(1, 9 if whole_rows else 2):
            top, low = ws.cell(a, col), ws.cell(b, col)
            top.value, low.value = low.value, top.value
    if insert_after:
        ws.insert_rows(_line_rows(pack["cards"][j + 1])[0])
    if libreoffice:
        wb.save(filled)
        fill_libreoffice(filled, root / "returns" / pack["file"], plan_answers(pack),
                         libreoffice_profile(tmp_path))
    else:
        wb.save(root / "returns" / pack["file"])
    return pairs, collect(root, write=False)


@pytest.mark.parametrize("template", ["paired-rubric", "answer-review"])
def test_ids_swapped_between_two_cases_are_refused_and_named(tmp_path, template):
    pairs, result = _swapped(tmp_path, template, slice(None))
    assert not result.report.files[0].used and len(result.ratings) == 0
    errors = [i for i in result.report.issues if i.severity == "error"]
    assert [i.code for i in errors] == ["row-ids-edited"], errors
    cells = sorted(r for pair in pairs for r in pair)
    assert errors[0].cell == f"A{cells[0]}"
    assert errors[0].message.startswith(
        f"The hidden row ids in column A ({', '.join(f'A{r}' for r in cells[:6])} and "
        f"{len(cells) - 6} more) name other cases than the lines beside them: ")
    assert not {"rows-reordered", "row-inserted"} & {i.code for i in result.report.issues}


def test_one_id_swapped_is_named_not_called_a_moved_line(tmp_path):
    """Nothing moved but two ids: the label the rater sees is where it always was."""
    ((a, b),), result = _swapped(tmp_path, "paired-rubric", slice(0, 1))
    assert not result.report.files[0].used
    (error,) = [i for i in result.report.issues if i.severity == "error"]
    assert (error.code, error.cell) == ("row-ids-edited", f"A{a}")
    assert error.message.startswith(f"The hidden row ids in column A (A{a}, A{b}) name "
                                    "other cases than the lines beside them: ")


def test_lines_swapped_whole_are_still_lines_moved(tmp_path):
    """Two lines sharing a label swapped with their formulas are not an id edit."""
    _, result = _swapped(tmp_path, "paired-rubric", slice(0, 1), whole_rows=True)
    assert not result.report.files[0].used
    codes = [i.code for i in result.report.issues if i.severity == "error"]
    assert codes == ["answer-line-moved"], codes


def test_ids_swapped_and_a_row_inserted_are_refused(tmp_path):
    """A row inserted in a later case kept the ids from reading as merely edited; each
    swapped case's locked text, found where the pack put it, passed for rows inserted
    above its lines, and its answers were read from the other case's lines."""
    # a secret under which this return, read without the check, was used
    pairs, result = _swapped(tmp_path, "paired-rubric", slice(None), insert_after=True,
                             secret=hashlib.sha256(b"1").digest())
    assert not result.report.files[0].used and len(result.ratings) == 0
    errors = [i for i in result.report.issues if i.severity == "error"]
    assert [i.code for i in errors] == ["row-ids-edited"], errors
    assert errors[0].cell == f"A{pairs[0][1]}"  # the first case's ids, on the other's lines
    assert "name another case than the locked text above those lines" in errors[0].message
    assert not {"rows-reordered", "row-inserted"} & {i.code for i in result.report.issues}


@pytest.mark.libreoffice
@pytest.mark.parametrize("lines", [slice(0, 1), slice(None)], ids=["one-line", "all-lines"])
def test_ids_swapped_in_a_return_libreoffice_saved_are_named(tmp_path, lines):
    """LibreOffice saves the pack's TRUE and FALSE as TRUE() and FALSE(): the id rows'
    formulas, the same, must not make the swap read as lines moved."""
    require_libreoffice()
    pairs, result = _swapped(tmp_path, "paired-rubric", lines, libreoffice=True)
    assert not result.report.files[0].used and len(result.ratings) == 0
    errors = [i for i in result.report.issues if i.severity == "error"]
    assert [i.code for i in errors] == ["row-ids-edited"], errors
    assert errors[0].cell == f"A{pairs[0][0]}"
    assert "the ids were changed, or whole lines were moved" in errors[0].message


def test_formula_text_reads_libreoffices_logical_calls_as_constants():
    """TRUE() outside a string literal is LibreOffice's TRUE; inside, it is text."""
    from sheetflow.collect.row_ids import _text
    from sheetflow.collect.values import Formula

    assert _text(Formula('IF(A1,TRUE(),FALSE())&"TRUE()"')) == '=IF(A1,TRUE,FALSE)&"TRUE()"'
