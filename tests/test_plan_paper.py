"""plan.xlsx printed by LibreOffice and read back (``render_helpers``): legible, nothing cut.

Every page's text is 7 pt or more, no word leaves the page, no number prints as ###,
every text cell is whole on paper, the chart is on one page; the Plan sheet prints one
page wide, its design table's header on every page.
"""

from __future__ import annotations

import re

import openpyxl
import pytest
from render_helpers import Paper, paper_faults, print_to_pdf
from roundtrip_helpers import needs_soffice

from sheetflow.plan import Target, plan_study
from sheetflow.plan.workbook import write_plan_workbook
from sheetflow.spec import init_study

pytestmark = [pytest.mark.libreoffice, needs_soffice]

PLANS = {  # a simulated paired plan with a lower-bound target; closed forms for kappa
    "paired-rubric": dict(target=Target(edge=0.6), simulations=10, n_boot=50),
    "keep-known": {},
    "judge-likert": {},
    "anchored-plan": {},  # the second-rater subset's column
}


@pytest.mark.parametrize("template", sorted(PLANS))
def test_plan_workbook_prints_legibly(template, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    result = plan_study(folder, **PLANS[template])
    xlsx = write_plan_workbook(result, tmp_path / "plan.xlsx")
    pdf = print_to_pdf([xlsx], tmp_path / "pdf")[xlsx]
    assert paper_faults(xlsx, pdf) == []
    texts = Paper.read(pdf).pages
    header = re.sub(r"\s+", "", "Expected width")
    plan_pages = [t for t in texts if "Meetsthetarget" in t]
    assert plan_pages and all(header in t for t in plan_pages)  # the header repeats
    sheet = openpyxl.load_workbook(xlsx)["Plan"]
    setup = sheet.page_setup
    assert sheet.sheet_properties.pageSetUpPr.fitToPage  # one page wide (1 is the default)
    assert setup.fitToWidth in (None, 1) and setup.fitToHeight == 0
    rows = [row for row in sheet.iter_rows(values_only=True)]
    head = next(i for i, row in enumerate(rows) if "Expected width" in row)
    columns = list(rows[head])
    assert not {"expected_width", "meets", "cheapest"} & set(columns)  # words, not names
    table = [dict(zip(columns, row, strict=True)) for row in rows[head + 1:]]
    assert table and all(r["Meets the target"] in ("Yes", "No") and r["Cheapest"] in
                         ("Yes", "No") for r in table)
    ratings = [r["Ratings per dimension"] for r in table]
    assert all(isinstance(n, int) for n in ratings)  # counts, never 20.000
    # each rater rates every rated response: a paired case's two, not the case once
    units = [r.get("Rated responses", r[columns[1]]) for r in table]
    if "Rated by every rater" in columns:  # one primary rates every item, the rest the subset
        assert ratings == [u + (r[columns[0]] - 1) * r["Rated by every rater"]
                           for r, u in zip(table, units, strict=True)]
    else:
        assert ratings == [r[columns[0]] * u for r, u in zip(table, units, strict=True)]
    if "Studies clearing the edge" in columns:  # a share, shown as a percentage
        cell = sheet.cell(head + 2, columns.index("Studies clearing the edge") + 1)
        assert cell.number_format == "0%"
