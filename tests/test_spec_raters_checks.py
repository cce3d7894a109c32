"""Raters files ``check`` once accepted, each refused in one line naming the file and row.

An address with a space went into the mail drafts' ``To:``; two raters sharing an
address could not be told apart by the sender of a return; ids differing only in case
gave files (``out/feedback/<rater_id>.eml``) that are one file on Windows and macOS; a
pack name starting with '.' made every pack a hidden file, which collect passed over
("0 files, 3 of 3 packs not returned"); a 002 study whose raters were all second raters
generated no pack and analysed an empty panel as complete; a 002 study listing a third
rater was frozen although protocol 002's plan freezes two rater IDs; a row with fewer
cells than the header (no e-mail, no last name) got a pack, where one with more was
refused.
"""

from __future__ import annotations

import openpyxl
import pytest
from click.testing import CliRunner
from spec_helpers import check_gives_one_line, edited_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.spec import init_study
from sheetflow.spec.tables import read_table

HEADER = "rater_id,name,last_name,email,role\n"
PAIRED = [
    ("ev01 @example.org", "EV-02,Two,Lindqvist,ev02@example.org,primary",
     ["raters.csv: row 2: email 'ev01 @example.org' holds a space"]),
    ("ev01@example.org", "EV-02,Two,Lindqvist,EV01@Example.org,primary",
     ["raters.csv: row 3: email 'EV01@Example.org' is also rater EV-01's (row 2)",
      "an address of their own"]),
    ("ev01@example.org", "ev-01,Two,Lindqvist,ev02@example.org,primary",
     ["raters.csv: row 3: rater_id 'ev-01' differs from 'EV-01' (row 2) only in case"]),
    ("ev01@example.org", "EV-02,Validator Two",
     ["raters.csv: row 3: has 2 cells but the header has 5 columns: give the row a cell "
      "for each column"]),
    ("ev01@example.org", "EV-02,Two,Lindqvist,ev02@example.org,primary,Oslo,Norway",
     ["raters.csv: row 3: has 7 cells but the header has 5 columns: put a cell that holds "
      "a comma in double quotes"]),
]


@pytest.mark.parametrize("first,second,words", PAIRED,
                         ids=["space", "shared", "case", "short-row", "long-row"])
def test_a_rater_row_check_once_accepted_is_one_line(tmp_path, first, second, words):
    root = init_study(tmp_path / "s", "paired-rubric")
    (root / "raters.csv").write_text(
        HEADER + f"EV-01,One,Okafor,{first},primary\n{second}\n", encoding="utf-8")
    check_gives_one_line(root, words)


PACK_NAME = '"external-validation-scores-{last_name}-{date}.xlsx"'
REFUSED = [  # template, (file, old, new) edits, words of the one line check prints
    pytest.param("paired-rubric", [("study.toml", PACK_NAME, '"../{rater_id}.xlsx"')],
                 ["study.toml: [files]: pack_name '../{rater_id}.xlsx' gives file names "
                  "starting with '.' (such as '..-EV-01.xlsx'), which hides them from "
                  "collect"], id="pack-name-starting-with-a-dot"),
    pytest.param("paired-rubric", [("study.toml", PACK_NAME, '"{last_name}.xlsx"'),
                                   ("raters.csv", "Okafor", ".Okafor")],
                 ["raters.csv: row 2: rater EV-01's pack file '.Okafor.xlsx' starts with "
                  "'.', which hides the file; start [files] pack_name with a letter"],
                 id="rater-name-making-a-hidden-pack"),
    pytest.param("anchored-plan", [("raters.csv", ",primary", ",second")],
                 ["study.toml: [design.second_rater]: a second-rater subset is planned but "
                  "no rater has role 'primary'"], id="second-raters-without-a-primary"),
    pytest.param("anchored-plan", [("raters.csv", "r3md@example.org,second",
                                    "r3md@example.org,second\nR-9ZZ,Nine,Okafor,"
                                    "r9zz@example.org,primary")],
                 ["raters.csv: lists 3 raters (R-7QX, R-3MD, R-9ZZ), but protocol 002's "
                  "plan freezes two pseudonymous rater IDs", "list exactly 2 raters"],
                 id="a-002-study-with-three-raters"),
    pytest.param("judge-likert", [("study.toml", 'judge_minimax = "judge-3"',
                                   'judge_minimax = "judge-2"')],
                 ["study.toml: [analysis.params.jsonl] judges: maps 2 judges to rater "
                  "'judge-2'; each judge of protocol 004's locked trio fills its own rater's "
                  "workbook"], id="a-004-mapping-two-judges-to-one-rater"),
    pytest.param("judge-likert", [("study.toml", ', judge_minimax = "judge-3"', "")],
                 ["study.toml: [analysis.params.jsonl] judges: maps 2 judges (judge_opus, "
                  "judge_gpt), but protocol 004's judge ensemble is a locked trio",
                  "map each of the three judges to a rater"],
                 id="a-004-mapping-two-judges"),
    pytest.param("judge-likert", [("study.toml", "judges = { judge_opus", "# judges = { j"),
                                  ("raters.csv", "MiniMax,,primary",
                                   "MiniMax,,primary\nR4,Ada,Nwosu,,primary")],
                 ["raters.csv: lists 4 raters (judge-1, judge-2, judge-3, R4) and no "
                  "[analysis.params.jsonl] judges line names the trio, so every rater is a "
                  "judge", "list exactly 3 raters"], id="a-004-study-of-four-judges-by-hand"),
]


@pytest.mark.parametrize(("template", "edits", "words"), REFUSED)
def test_a_study_check_once_accepted_is_one_line(tmp_path, template, edits, words):
    """A pack name that hides the packs (for every rater, or for one by their name), a
    second-rater subset with no primary rater to draw it from: one error line each."""
    edited_gives_one_line(tmp_path, template, edits, words)


def test_a_004_person_rating_beside_the_mapped_trio_is_accepted(tmp_path):
    """The trio is the three raters the judges line maps; a person rating beside them
    is not a judge, and a fourth rater is no reason to refuse the study."""
    from sheetflow.spec import load_study

    root = init_study(tmp_path / "s", "judge-likert")
    replace_once(root / "raters.csv", "MiniMax,,primary",
                 "MiniMax,,primary\nR4,Ada,Nwosu,ada@example.org,primary")
    study = load_study(root)
    assert len(study.raters) == 4 and not study.generate_problems


def test_raters_without_addresses_may_share_the_blank(tmp_path):
    from sheetflow.spec import load_study

    root = init_study(tmp_path / "s", "judge-likert")  # three judges, no addresses
    assert len(load_study(root).raters) == 3


def test_generate_refuses_a_002_study_without_two_raters(tmp_path):
    """generate runs check's validation: a third rater in a 002 study writes no pack."""
    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "raters.csv", "r3md@example.org,second",
                 "r3md@example.org,second\nR-9ZZ,Nine,Okafor,r9zz@example.org,second")
    result = CliRunner().invoke(cli, ["generate", str(root)])
    assert result.exit_code == 1, result.output
    assert "lists 3 raters" in result.output and "Traceback" not in result.output
    assert not (root / "packs").exists()


def test_a_trailing_cell_left_empty_is_no_short_row(tmp_path):
    """'a,b,' has its 3 cells, the last empty; an unnamed trailing header column needs
    no cell; an XLSX row's blank cells are not missing ones."""
    table = tmp_path / "t.csv"
    table.write_text("id,name,note,\nx,y,\nz,w,v\n", encoding="utf-8")
    _, rows = read_table(table)
    assert [r for _, r in rows] == [{"id": "x", "name": "y", "note": ""},
                                    {"id": "z", "name": "w", "note": "v"}]
    wb = openpyxl.Workbook()
    wb.active.append(["id", "name", "note"])
    wb.active.append(["x"])
    wb.save(tmp_path / "t.xlsx")
    assert [r for _, r in read_table(tmp_path / "t.xlsx")[1]] == [
        {"id": "x", "name": "", "note": ""}]
