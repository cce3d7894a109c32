"""Spec problems that once passed in silence: each is refused, or warned about, in one
clear line.

* a byte that is not UTF-8 is reported on the physical line an editor shows;
* a blank item text (a response, a prompt) never passes ``check`` in silence;
* a total's declared ``min``/``max`` must be the range its dimensions allow.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.errors import SpecError
from sheetflow.spec.tables import _first_bad_byte
from sheetflow.spec.templates import init_study

EXAMPLE_SCORES = "holds the paired-rubric template's example internal scores"
"""The warning every study kept from that template gets (its own test is in
test_check_inputs.py): left out of the lines these tests compare."""


def _check(folder: Path) -> tuple[int, list[str], list[str]]:
    """Exit code, stdout lines and stderr lines of ``sheetflow check``, the template's
    example-scores warning left out."""
    result = CliRunner().invoke(cli, ["check", str(folder)])
    assert "Traceback" not in result.output
    err = [line for line in result.stderr.splitlines() if EXAMPLE_SCORES not in line]
    return result.exit_code, result.stdout.splitlines(), err


def _edit_items(folder: Path, row: int, column: str, value: str) -> None:
    """Set ``column`` of table row ``row`` (the header is row 1) of items.csv."""
    path = folder / "items.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    rows[row - 1][rows[0].index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8", newline="")


# -- 1. the line of a byte that is not UTF-8 ------------------------------------------


@pytest.mark.parametrize(("line", "newline"), [(465, b"\n"), (2, b"\n"), (1, b"\n"),
                                               (465, b"\r\n")])
def test_a_latin1_byte_is_reported_on_its_physical_line(tmp_path, line, newline):
    """The paired-rubric items hold multi-line quoted responses (18 cases on 468
    lines, CRLF between records and LF inside them, as Excel writes them): the CSV
    reader's own count, or a record number, would name the wrong line."""
    folder = init_study(tmp_path / "s", "paired-rubric")
    data = (folder / "items.csv").read_bytes()
    lines = (data.replace(b"\r\n", b"\n") if newline == b"\r\n" else data).split(b"\n")
    assert len(lines) > line
    lines[line - 1] = lines[line - 1][:3] + b"\xe9" + lines[line - 1][3:]
    (folder / "items.csv").write_bytes(newline.join(lines))
    text = check_gives_one_line(folder, [])
    assert text == (f"error: s/items.csv: is not UTF-8 (byte 0xe9 on line {line}, as a text "
                    "editor numbers lines); save it as CSV UTF-8")


def test_the_bad_byte_is_found_across_chunks_and_line_endings():
    assert _first_bad_byte([b"a\r", b"\nb\rc\n", b"\xe9"]) == (0xE9, 4)
    assert _first_bad_byte([b"x\n\xe2\x82", b"\n"]) == (0xE2, 2)  # cut off by a newline
    assert _first_bad_byte([b"ok\n\xe2\x82", b"\xac\n"]) is None  # a sign split in two


# -- 2. blank item texts --------------------------------------------------------------


def test_a_blank_response_is_a_warning_naming_file_rows_and_column(tmp_path):
    folder = init_study(tmp_path / "s", "paired-rubric")
    _edit_items(folder, 4, "response_improved", "")
    _edit_items(folder, 9, "response_improved", "\u200b ")  # shows as nothing
    code, out, err = _check(folder)
    assert code == 0 and out[-1] == "ok"
    assert err == [f"warning: {folder}/items.csv: rows 4 and 9: column 'response_improved' (a "
                   "response) is empty, so raters will see and score an empty response; "
                   "fill it in, or leave it if the model really returned nothing"]


def test_a_blank_prompt_is_an_error(tmp_path):
    folder = init_study(tmp_path / "s", "paired-rubric")
    _edit_items(folder, 6, "prompt", "")
    text = check_gives_one_line(folder, [])
    assert text == ("error: s/items.csv: row 6: column 'prompt' (shown to raters as 'Prompt') "
                    "is empty, so raters would judge the response against nothing; fill it "
                    "in, or if it may be blank add optional = true to its entry in "
                    "[items] show")


def test_a_shown_field_marked_optional_may_be_blank(tmp_path):
    folder = init_study(tmp_path / "s", "paired-rubric")
    _edit_items(folder, 6, "prompt", "")
    replace_once(folder / "study.toml", 'label = "Prompt" }', 'label = "Prompt", '
                 "optional = true }")
    code, _out, err = _check(folder)
    assert (code, err) == (0, [])


# -- 3. a total's declared range ------------------------------------------------------


@pytest.mark.parametrize(("declared", "said"), [
    ("min = 0\nmax = 30", "min = 0, max = 30"),
    ("min = 0\nmax = 15", "min = 0, max = 15"),
    ("max = 30", "max = 30"),
])
def test_a_total_range_the_dimensions_cannot_give_is_an_error(tmp_path, declared, said):
    folder = init_study(tmp_path / "s", "paired-rubric")
    replace_once(folder / "study.toml", 'method = "sum"\nmin = 0\nmax = 20',
                 f'method = "sum"\n{declared}')
    text = check_gives_one_line(folder, [])
    assert text == ("error: s/study.toml: [[totals]] id=total: total 'total' declares "
                    f"{said}, but its dimensions give totals from 0 to 20 (sum of depth, "
                    "evidence, alternatives, logic, actionability); a total is never capped, "
                    "so declare min = 0, max = 20")


# -- rules added after a study was generated -------------------------------------------


def test_a_study_generated_before_these_rules_is_still_collected_and_analysed(
        tmp_path, monkeypatch):
    """A blank shown field and a total's declared range stop check and generate; a study
    whose packs went out before the rules existed (simulated: generate run without
    them) is still collected and analysed, since what its raters saw cannot change,
    while check names the problems."""
    import sheetflow.packs.generate as generate
    from sheetflow.collect.run import collect
    from sheetflow.demo.simulate import fill_packs
    from sheetflow.report import analyze_and_write
    from sheetflow.spec.study import load_study

    folder = init_study(tmp_path / "s", "paired-rubric")
    _edit_items(folder, 6, "prompt", "")
    replace_once(folder / "study.toml", "min = 0\nmax = 20\n", "min = 0\nmax = 30\n")
    with pytest.raises(SpecError):
        generate.generate_packs(folder)
    monkeypatch.setattr(generate, "require_generatable", lambda study: None)
    generate.generate_packs(folder)  # as an earlier version did
    monkeypatch.undo()
    fill_packs(folder, folder / "returns", seed=5)
    assert len(load_study(folder).generate_problems) == 2
    code, _out, err = _check(folder)
    assert code == 1 and len(err) == 2, err
    assert "column 'prompt'" in err[0] + err[1] and "declares min = 0, max = 30" in err[0] + err[1]
    result = collect(folder)
    assert result.valid and len(result.ratings) > 0
    assert analyze_and_write(folder)[0].summary["decision"]["status"]
