"""What ``check`` says about a spec whose tables or files are not what it reads.

A raters column named 'e-mail' dropped every address in silence (``check`` said ok,
each draft then said the rater had none). A missing or broken table gave, beside its
own line, lines about what it would have held: the items file's 'id' column (which
study.toml never named), 'seed' both wrong and missing, a design "None".
"""

from __future__ import annotations

import contextlib

import pytest
from click.testing import CliRunner
from spec_helpers import edited_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study


def _errors(study_dir, command: str = "check") -> list[str]:
    """The lines ``command`` prints, run from the folder holding the study as a user
    does, naming the study by its folder name."""
    with contextlib.chdir(study_dir.parent):
        result = CliRunner().invoke(cli, [command, study_dir.name])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return [ln for ln in result.output.splitlines() if ln.strip()]


ONE_LINE = [  # (file, old, new), words of the one line check prints
    pytest.param("raters.csv", "email", "e-mail",
                 ["raters.csv: header: column 'e-mail' is not read; did you mean 'email'? "
                  "Rename it"], id="misnamed-raters-column"),
    pytest.param("raters.csv", "last_name", "Last Name",
                 ["column 'Last Name' is not read; did you mean 'last_name'?"],
                 id="raters-column-in-other-case-and-spaces"),
    pytest.param("items.csv", "case_id,prompt,", "case_id,Prompt,",
                 ["error: s/items.csv: header: column 'prompt' named in s/study.toml is "
                  "missing", "did you mean 'Prompt'? Rename that column to 'prompt', or "
                  "name 'Prompt' in s/study.toml"], id="items-column-in-other-case"),
    pytest.param("study.toml", "seed = 20260915", 'seed = "twenty"',
                 ["study.toml: [design]: 'seed' must be a whole number, not 'twenty'"],
                 id="seed-no-number"),
    pytest.param("study.toml", "seed = 20260916", "seed = 1.5",
                 ["study.toml: [analysis]: 'seed' must be a whole number, not 1.5"],
                 id="analysis-seed-no-number"),
    pytest.param("raters.csv", "rater_id", "Rater ID",
                 ["raters.csv: header: has no 'rater_id' column; the file has: Rater ID, "
                  "name", "did you mean 'Rater ID'? Rename it to 'rater_id'"],
                 id="rater-id-column-spelt-otherwise"),
    pytest.param("study.toml", 'id_column = "case_id"', 'id_column = "case_id"\ncolour = "red"',
                 ["error: s/study.toml: [items]: unknown key 'colour'; allowed: file, "
                  "id_column, show, show_id"], id="key-like-none-allowed-no-guess"),
]


@pytest.mark.parametrize(("file", "old", "new", "words"), ONE_LINE)
def test_a_spec_file_check_misread_is_one_line_naming_the_fix(tmp_path, file, old, new,
                                                               words):
    """A column or key named otherwise than check reads it (the one meant suggested,
    none where none is like it), a seed that is no number: one error line each."""
    edited_gives_one_line(tmp_path, "paired-rubric", [(file, old, new)], words)


def test_a_raters_column_of_the_coordinators_own_is_a_warning(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    text = (root / "raters.csv").read_text(encoding="utf-8").splitlines()
    rows = [text[0] + ",affiliation"] + [row + ",Lab" for row in text[1:]]
    (root / "raters.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with contextlib.chdir(tmp_path):
        result = CliRunner().invoke(cli, ["check", "s"])
    assert result.exit_code == 0, result.output
    assert ("warning: s/raters.csv: header: column 'affiliation' is not read (the columns "
            "read are rater_id, name, last_name, email, role)") in result.output


def test_a_misnamed_items_table_is_named_without_its_columns(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", "[items]", "[itemz]")
    lines = _errors(root)
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: s/study.toml: top level: unknown key 'itemz'; did "
                               "you mean 'items'? allowed: analysis, design, ")
    assert lines[1] == ("error: s/study.toml: [items]: the [items] table is missing; every "
                        "study needs one: add [items] with file = \"items.csv\" and "
                        "id_column = \"id\" (the items file and its column of item ids; "
                        "the responses' columns are named in [design]); see docs/spec.md, "
                        "section '[items], [raters], [files], [email]', or run 'sheetflow "
                        "init example' for a whole study.toml")


def test_a_design_without_kind_says_which_to_give(tmp_path):
    line = edited_gives_one_line(tmp_path, "paired-rubric",
                                 [("study.toml", 'kind = "paired"\n', "")],
                                 ["study.toml: [design]: 'kind' is required; give "
                                  "kind = \"paired\" or kind = \"single\""])
    assert "None" not in line


def test_an_empty_spec_names_each_missing_table_once(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    (root / "study.toml").write_text("", encoding="utf-8")
    lines = _errors(root)
    said = "the [{0}] table is missing; every study needs one: add [{0}] with "
    assert [ln.split("; see docs/spec.md")[0] for ln in lines] == [
        "error: s/study.toml: [study]: " + said.format("study")
        + 'id = "my-study" and title = "..."',
        "error: s/study.toml: [[dimensions]]: no [[dimensions]]; a rubric needs at least one "
        "dimension",
        "error: s/study.toml: [design]: " + said.format("design")
        + 'kind = "paired" (or "single"), seed = 20260915 and arms = [{ id = "...", column '
        '= "..." }, ...] (a single design names response_column and arm_column instead of '
        "each arm's column)",
        "error: s/study.toml: [analysis]: " + said.format("analysis")
        + 'run = ["alpha", "percent_agreement"] and seed = 20260915',
        "error: s/study.toml: [items]: " + said.format("items")
        + 'file = "items.csv" and id_column = "id" (the items file and its column of item '
        "ids; the responses' columns are named in [design])",
    ]
    assert all(ln.endswith("', or run 'sheetflow init example' for a whole study.toml")
               for ln in lines if "table is missing" in ln)


@pytest.mark.parametrize(("old", "new", "said"), [
    ("[analysis]\n", "[analysys]\n", "top level: unknown key 'analysys'; did you mean "
     "'analysis'? allowed: analysis, design, "),
    ('id_column = "case_id"', 'id_colum = "case_id"', "[items]: unknown key 'id_colum'; did "
     "you mean 'id_column'? allowed: file, id_column, show, show_id"),
    ("shuffle = true", "Shuffle = true", "[design]: unknown key 'Shuffle'; did you mean "
     "'shuffle'? allowed: "),
    ("[files]\n", '[mail]\nsmpt = "mail.example.org"\n\n[files]\n', "[mail]: unknown key "
     "'smpt'; did you mean 'smtp'? allowed: deadline, from, "),
])
def test_a_misspelt_key_is_named_with_the_one_meant(tmp_path, old, new, said):
    """At the top level and in each table, as for a raters column: the key meant is named."""
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", old, new)
    lines = [ln for ln in _errors(root) if "unknown key" in ln]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: s/study.toml: " + said), lines


@pytest.mark.parametrize("command", ["check", "generate", "collect", "analyze", "lock",
                                     "remind"])
def test_every_command_names_the_spec_with_the_study_folder(tmp_path, command):
    """A spec problem names its file as the other messages do: with the study folder as
    the user gave it, whichever command loaded the spec."""
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "study.toml", "seed = 20260915", 'seed = "twenty"')
    replace_once(root / "items.csv", "case_id,prompt,", "case_id,Prompt,")
    lines = _errors(root, command)
    assert lines[0] == ("error: s/study.toml: [design]: 'seed' must be a whole number, "
                        "not 'twenty'")
    assert lines[1].startswith("error: s/items.csv: header: column 'prompt' named in "
                               "s/study.toml is missing")
    assert len(lines) == 2, lines
