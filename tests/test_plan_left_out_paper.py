"""The plan workbook's columns of what a width rests on, printed by LibreOffice.

Where simulated studies have no interval or bootstrap resamples no alpha, the design
table gains three columns (studies with an interval, resamples used, resamples in all):
the Plan sheet must still print one page wide, legible, nothing cut.
"""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from render_helpers import paper_faults, print_to_pdf
from roundtrip_helpers import needs_soffice

from sheetflow.cli import cli
from sheetflow.spec.templates import data_dir

pytestmark = [pytest.mark.libreoffice, needs_soffice]


def test_the_columns_of_what_the_width_rests_on_print_legibly(tmp_path):
    folder = tmp_path / "p001"
    shutil.copytree(data_dir("templates") / "keep-known", folder)
    run = CliRunner().invoke(cli, [
        "plan", str(folder), "--statistic", "alpha", "--measure", "keep", "--expected",
        "0.6", "--shares", "0.95,0.05", "--raters", "2", "--items", "25",
        "--simulations", "40", "--n-boot", "200"])
    assert "with interval" in run.output
    xlsx = folder / "out" / "plan.xlsx"
    pdf = print_to_pdf([xlsx], tmp_path / "pdf")[xlsx]
    assert paper_faults(xlsx, pdf) == []
