"""Items files and column roles ``check`` once read wrongly in silence, each refused in
one line naming the file and the line, key or column.

A quote left open in a CSV swallowed every line after it into one cell: the study lost
those items and ``check`` said "ok" with fewer items. Two arms reading one column were
compared with themselves; a response read from the id or a shown column showed the
rater that text twice; a scatter column the file lacks scattered nothing.
"""

from __future__ import annotations

import csv
import io

import pytest
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.spec import init_study


def _plain_items(root, open_quote_at: int | None = None, glued_at: int | None = None) -> None:
    """keep-known's items without quotes (commas made ';'), one row optionally broken:
    a quote opened and never closed, or text glued after a closing quote."""
    path = root / "items.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    lines = [",".join(rows[0])]
    for i, row in enumerate(rows[1:], start=2):
        line = ",".join(c.replace('"', "").replace(",", ";") for c in row)
        if i == open_quote_at:
            line = line.rsplit(",", 1)[0] + ',"no'
        if i == glued_at:
            line = line.rsplit(",", 1)[0] + ',"no"x'
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_quote_never_closed_is_named_with_its_line(tmp_path):
    root = init_study(tmp_path / "s", "keep-known")
    _plain_items(root)
    from sheetflow.spec import load_study

    assert len(load_study(root).items) == 60  # the file as rewritten is sound
    _plain_items(root, open_quote_at=42)  # 19 items after it were lost in silence
    check_gives_one_line(root, ['items.csv: a quote (") opened on line 42, as a text editor '
                                "numbers lines, is never closed, so every line after it "
                                "would be one cell; close the quote or remove it"])


def test_text_after_a_closing_quote_is_not_valid_csv(tmp_path):
    root = init_study(tmp_path / "s", "keep-known")
    _plain_items(root, glued_at=7)
    check_gives_one_line(root, ["items.csv: is not valid CSV (',' expected after '\"') on "
                                "line 7"])


ROLES = [
    ("paired-rubric", 'column = "response_improved"', 'column = "response_baseline"',
     ["[design]", "column 'response_baseline' is both arm 'iter1_baseline''s response and "
                  "arm 'iter2_improved''s response"]),
    ("paired-rubric", 'column = "response_improved"', 'column = "case_id"',
     ["[design]", "column 'case_id' is both the item id and arm 'iter2_improved''s "
                  "response"]),
    ("answer-review", 'response_column = "answer"', 'response_column = "question"',
     ["[design]", "column 'question' is both shown as 'Question' and the response"]),
    ("answer-review", 'scatter_column = "question_id"', 'scatter_column = "qid"',
     ["[design]", "scatter_column 'qid' is not a column of s/items.csv; it has: item_id"]),
]


@pytest.mark.parametrize("template,old,new,words", ROLES, ids=[r[2] for r in ROLES])
def test_a_column_with_two_roles_or_none_is_one_line(tmp_path, template, old, new, words):
    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    check_gives_one_line(root, ["study.toml", *words])


def test_an_items_workbook_formula_without_a_saved_result_is_named(tmp_path):
    """A workbook written by a program holds a formula without its result, which read as
    an empty cell: "row 2: 'case_id' is empty; every item needs an id", untrue."""
    import openpyxl

    d = init_study(tmp_path / "s", "paired-rubric")
    rows = list(csv.reader(io.StringIO((d / "items.csv").read_text(encoding="utf-8"),
                                       newline="")))
    wb = openpyxl.Workbook()
    for row in rows:
        wb.active.append(row)
    wb.active["A2"] = '="TC-"&"001"'
    wb.save(d / "items.xlsx")
    replace_once(d / "study.toml", 'file = "items.csv"', 'file = "items.xlsx"')
    line = check_gives_one_line(d, ["items.xlsx", "row 2", "cell A2 holds the formula "
                                    '="TC-"&"001" with no saved result', "save it as CSV"])
    assert "is empty" not in line


def test_repeats_over_a_single_item_say_item_in_the_singular(tmp_path):
    root = init_study(tmp_path / "s", "keep-known")
    path = root / "items.csv"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(True)[:2]),
                    encoding="utf-8")
    line = check_gives_one_line(root, ["[design.repeats]"])
    assert line.endswith("repeats count 30 exceeds the 1 item"), line


def test_an_items_workbook_whose_first_sheet_is_empty_names_that_sheet(tmp_path):
    # the items on a second sheet: "has no header row" left unsaid which sheet was read
    import openpyxl

    d = init_study(tmp_path / "s", "paired-rubric")
    rows = list(csv.reader(io.StringIO((d / "items.csv").read_text(encoding="utf-8"),
                                       newline="")))
    wb = openpyxl.Workbook()
    wb.active.title = "Notes"
    items = wb.create_sheet("Items")
    for row in rows:
        items.append(row)
    wb.save(d / "items.xlsx")
    replace_once(d / "study.toml", 'file = "items.csv"', 'file = "items.xlsx"')
    check_gives_one_line(d, ["items.xlsx", "its first sheet 'Notes' has no header row; only "
                             "the first sheet is read"])
