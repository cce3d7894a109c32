"""What ``check`` says about a spec whose tables or files are not what it reads.

A raters column named 'e-mail' dropped every address in silence (``check`` said ok,
each draft then said the rater had none).
"""

from __future__ import annotations

from click.testing import CliRunner
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study


def test_a_misnamed_raters_column_is_named_with_the_one_meant(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "raters.csv", "email", "e-mail")
    check_gives_one_line(root, ["raters.csv: header: column 'e-mail' is not read; did you "
                                "mean 'email'? Rename it"])


def test_a_raters_column_differing_in_case_and_spaces_is_named(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "raters.csv", "last_name", "Last Name")
    check_gives_one_line(root, ["column 'Last Name' is not read; did you mean 'last_name'?"])


def test_a_raters_column_of_the_coordinators_own_is_a_warning(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    text = (root / "raters.csv").read_text(encoding="utf-8").splitlines()
    rows = [text[0] + ",affiliation"] + [row + ",Lab" for row in text[1:]]
    (root / "raters.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 0, result.output
    assert ("warning: raters.csv: header: column 'affiliation' is not read (the columns "
            "read are rater_id, name, last_name, email, role)") in result.output


def test_an_items_column_differing_in_case_is_suggested(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    replace_once(root / "items.csv", "case_id,prompt,", "case_id,Prompt,")
    check_gives_one_line(root, ["items.csv: header: column 'prompt' named in study.toml is "
                                "missing", "did you mean 'Prompt'? Rename that column to "
                                "'prompt', or name 'Prompt' in study.toml"])
