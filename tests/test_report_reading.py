"""The analysis workbook of every template, read back as an analyst reads it.

Each template's study (its bundled items, simulated raters) is generated, filled,
collected and analysed once; the tests read ``out/analysis.xlsx`` with openpyxl: the
rubric's labels where a reader needs them, one form per kind of quantity, the Methods
sheet's references, the print setup and no sheet left as a bare header.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from citation_helpers import cited as _cited
from citation_helpers import missing as _missing
from demo_helpers import analysed_templates, built_demo
from openpyxl.utils import get_column_letter

from sheetflow.analysis import methods
from sheetflow.report import SHEET_TITLES
from sheetflow.report.cells import PAD
from sheetflow.spec.study import load_study


@pytest.fixture(scope="module")
def studies(tmp_path_factory) -> dict[str, Path]:
    """Template -> its study folder, analysed (``out/analysis.xlsx``)."""
    return analysed_templates(tmp_path_factory.mktemp("reading"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo study (``sheetflow demo``), analysed."""
    return built_demo(tmp_path_factory.mktemp("reading-demo") / "demo")


def _book(root: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(root / "out" / "analysis.xlsx")


def _references(root: Path) -> str:
    """The References entry of the Methods sheet (its rows joined)."""
    methods = _book(root)["Methods"]
    text, inside = [], False
    for topic, body in methods.iter_rows(max_col=2, values_only=True):
        inside = topic == "References" or (inside and not topic)
        if inside:
            text.append(str(body))
    return "\n".join(text)


def _methods_entries(root: Path) -> list[tuple[str, str]]:
    """The Methods sheet as (topic, text), a topic's continuation rows joined."""
    entries: list[tuple[str, str]] = []
    for topic, body in _book(root)["Methods"].iter_rows(max_col=2, values_only=True):
        if topic:
            entries.append((str(topic), str(body or "")))
        elif entries:
            entries[-1] = (entries[-1][0], f"{entries[-1][1]} {body or ''}")
    return entries


CITED = {  # a reference (its authors and year) and the analyses whose figures rest on it
    "Krippendorff, K. (2011)": {"alpha", "confidence_agreement"},
    "Zapf, A., Castell, S., Morawietz, L., & Karch, A. (2016)": {"alpha",
                                                                 "confidence_agreement"},
    "Hayes, A. F., & Krippendorff, K. (2007)": set(),
    "Hughes, J. (2022)": set(),
    "Cohen, J. (1960)": {"cohen_kappa", "intra_rater_kappa"},
    "Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969)": {"cohen_kappa", "intra_rater_kappa"},
    "Fleiss, J. L. (1971)": {"fleiss_kappa", "percent_agreement"},
    "Gwet, K. L. (2014)": {"gwet"},
    "Shrout, P. E., & Fleiss, J. L. (1979)": {"icc"},
    "McGraw, K. O., & Wong, S. P. (1996)": {"icc"},
    "Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957)": {"spearman_internal"},
    "Westfall, P. H., & Young, S. S. (1993)": {"permutation"},
    "Phipson, B., & Smyth, G. K. (2010)": {"permutation"},
    "Wilson, E. B. (1927)": {"yield_fisher", "trend"},
    "Newcombe, R. G. (1998)": {"yield_fisher"},
    "Cochran, W. G. (1954)": {"trend"},
    "Armitage, P. (1955)": {"trend"},
    "Wilcoxon, F. (1945)": {"wilcoxon_totals"},
    "Landis, J. R., & Koch, G. G. (1977)": {"cohen_kappa", "intra_rater_kappa"},
    "Koo, T. K., & Li, M. Y. (2016)": {"icc"},
}


def test_methods_lists_only_the_references_behind_the_figures_reported(studies):
    """Every reference was listed for every study: a keep-known study, which computes
    no alpha, ICC, Fleiss' kappa, Gwet's AC, Spearman's rho or Wilcoxon test, cited
    them all. Now a reference is listed exactly when a figure resting on it is on a
    sheet of the workbook, or when the Methods text shown cites it (the readings of
    kappa and ICC are explained together, each on its published scale)."""
    for template, root in studies.items():
        sheets = {ws.title for ws in _book(root).worksheets}
        shown = {name for name, title in SHEET_TITLES.items() if title in sheets}
        refs = _references(root).split("\n")
        text = " ".join(t for topic, t in _methods_entries(root) if topic != "References")
        for head, behind in CITED.items():
            listed = any(head in ref for ref in refs)
            cited = any(head.startswith(f"{names[0]}, ") and head.endswith(f"({year})")
                        for names, year, _ in _cited(text))
            assert listed == (bool(shown & behind) or cited), (template, head)
    keep_known = _references(studies["keep-known"])
    assert "Phipson, B." in keep_known and "Armitage, P." in keep_known
    # the trend test is Cochran's and Armitage's: both are listed where it is reported
    assert "Cochran, W. G. (1954)" in keep_known
    assert "Krippendorff" not in keep_known and "McGraw, K. O." not in keep_known
    paired = _references(studies["paired-rubric"])
    assert "Phipson" not in paired and "Armitage" not in paired and "Wilson" not in paired


def test_every_source_the_methods_cite_is_in_their_references(studies, demo):
    """The keep-known Methods cited Westfall & Young (1993), Wilson (1927) and
    Newcombe (1998), the Cohen's kappa entry Fleiss, Cohen & Everitt (1969), and the
    Fleiss' kappa entry Gwet (2014) when no AC was reported, none of them in the
    References. Now every author-year citation on the Methods sheet of every template's
    study and of the demo, and in every template's Methods text for all its planned
    analyses, has a full entry there (authors, year, title, source)."""
    assert _cited("Westfall & Young 1993; Landis & Koch (1977, p. 165); Wilson 1927") == {
        (("Westfall", "Young"), "1993", False), (("Landis", "Koch"), "1977", False),
        (("Wilson",), "1927", False)}
    for name, root in {**studies, "demo": demo}.items():
        entries = _methods_entries(root)
        assert _cited(" ".join(text for _, text in entries)), name  # the pattern finds some
        assert _missing(entries) == [], name
        assert _missing(methods(load_study(root))) == [], name
    keep_known = _references(studies["keep-known"])
    for first_words in ("Westfall, P. H., & Young, S. S. (1993)", "Wilson, E. B. (1927)",
                        "Newcombe, R. G. (1998). Interval estimation for the difference"):
        assert first_words in keep_known


def test_methods_name_only_the_agreement_figures_reported(studies):
    """The entry on kappa and ICC readings named both scales, Landis & Koch's and Koo &
    Li's, whatever was reported, and the "Fleiss' kappa and Gwet's AC1/AC2" entry
    described Gwet's AC where only Fleiss' kappa ran. Each entry now names only the
    figures reported: an anchored-plan study (the ICC, no kappa) reads the ICC on Koo &
    Li alone, a keep-known study (intra-rater kappa, no ICC) kappa on Landis & Koch
    alone; a judge-likert study (Fleiss' kappa, no Gwet's AC) and an answer-review one
    (Gwet's AC, no Fleiss' kappa) each describe their own figure only."""
    entries = {template: dict(_methods_entries(root)) for template, root in studies.items()}
    icc = entries["anchored-plan"]["Other agreement figures"]
    assert icc.startswith("ICC is reported") and "Koo & Li (2016, p. 161)" in icc
    assert "Landis" not in icc and "kappa" not in icc
    assert "Landis, J. R." not in _references(studies["anchored-plan"])
    kappa = entries["keep-known"]["Other agreement figures"]
    assert kappa.startswith("Intra-rater kappa is reported") and "Landis & Koch (1977" in kappa
    assert "Koo" not in kappa and "ICC" not in kappa and "Pairwise" not in kappa
    assert "Koo, T. K." not in _references(studies["keep-known"])
    both = entries["paired-rubric"]["Other agreement figures"]
    assert all(words in both for words in ("ICC and pairwise Cohen's kappa are",
                                            "Koo & Li (2016", "Landis & Koch (1977",
                                            "Pairwise kappa: "))
    fleiss, gwet = entries["judge-likert"], entries["answer-review"]
    assert "Fleiss' kappa" in fleiss and "Gwet's AC1/AC2" not in fleiss
    assert not any("AC1" in text or "AC2" in text for text in fleiss.values())
    assert "Gwet's AC1/AC2" in gwet and "Fleiss' kappa" not in gwet
    assert not any("Fleiss' kappa" in text for text in gwet.values())
    assert {"Fleiss' kappa", "Gwet's AC1/AC2"} <= set(entries["paired-rubric"])


def _rows(ws) -> list[list]:
    """A sheet's rows of values, trailing empty rows left out."""
    rows = [list(r) for r in ws.iter_rows(values_only=True)]
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    return rows


def test_no_sheet_is_a_bare_header(studies):
    """The Rater self-checks sheet of a keep-known or answer-review study was a header
    and one column of zeros ("rater | confidence (count)", each rater 0): its rubric has
    no total and asks for no confidence, so no check applies. It now says so in one
    line; a sheet with a table has a row under its header; the confidence count, 0 for
    every rater of a rubric that asks for none, is left out."""
    for template, root in studies.items():
        for ws in _book(root).worksheets:
            rows = _rows(ws)
            assert len(rows) >= 2 or (len(rows) == 1 and str(rows[0][0]).startswith(
                "Nothing to show for this study: ")), (template, ws.title, rows)
    for template in ("keep-known", "answer-review"):
        rows = _rows(_book(studies[template])["Rater self-checks"])
        assert len(rows) == 1 and [v for v in rows[0] if v is not None] == [rows[0][0]]
        assert rows[0][0].startswith("Nothing to show for this study: no self-check "
                                     "applies"), rows
        assert "has no total and asks for no confidence." in rows[0][0]
    for template in ("anchored-plan", "judge-likert"):
        head = _rows(_book(studies[template])["Rater self-checks"])[0]
        assert head[:3] == ["rater", "total SD", "has variance"]
        assert "confidence (count)" not in head, (template, head)
    head = _rows(_book(studies["paired-rubric"])["Rater self-checks"])[0]
    assert "confidence (count)" in head and "direction consistent share" in head


def test_a_table_with_no_row_is_one_line(tmp_path):
    """A table without a row (or with nothing but its reason) is one line saying so."""
    import pandas as pd
    import xlsxwriter

    from sheetflow.report.cells import OPTIONS, formats
    from sheetflow.report.workbook import _sheet_or_digest

    path = tmp_path / "t.xlsx"
    wb = xlsxwriter.Workbook(str(path), OPTIONS)
    fmt = formats(wb)
    _sheet_or_digest(wb, "empty", "Empty", pd.DataFrame(columns=["item", "n"]), fmt)
    _sheet_or_digest(wb, "why", "Why", pd.DataFrame([{"measure": "", "reason": "no x"}]),
                     fmt)
    _sheet_or_digest(wb, "full", "Full", pd.DataFrame({"item": ["a"], "n": [1]}), fmt)
    wb.close()
    book = openpyxl.load_workbook(path)
    assert _rows(book["Empty"]) == [["Nothing to show for this study: the analysis found "
                                     "no row to show."]]
    assert _rows(book["Why"]) == [["Nothing to show for this study: no x."]]
    assert _rows(book["Full"]) == [["item", "count"], ["a", 1]]


def _chart_titles(path: Path) -> list[str]:
    """Every chart's title, read from the workbook's chart parts."""
    with zipfile.ZipFile(path) as book:
        parts = [n for n in book.namelist() if n.startswith("xl/charts/chart")]
        return ["".join(re.findall(r"<a:t>([^<]*)</a:t>", book.read(n).decode("utf-8")
                                   .split("</c:title>")[0])) for n in parts]


def test_sheets_an_analyst_reads_name_each_dimension_as_the_rubric_does(studies):
    """Measures and dimensions read "accuracy", "owners_deadlines", "overall" (ids of
    the spec) on the Summary, the agreement sheets and the charts; they now read as the
    rubric labels them, with the id to match the spec ("Accuracy (accuracy)"). The Data
    sheet, a table for re-use, keeps the ids."""
    for template, root in studies.items():
        rubric = load_study(root).rubric
        names = rubric.names()
        assert all(f"({key})" in name for key, name in names.items()), names
        book = _book(root)
        for ws in book.worksheets:
            rows = _rows(ws)
            head = rows[0] if rows else []
            for col, title in enumerate(head):
                if title not in ("measure", "dimension"):
                    continue
                values = {r[col] for r in rows[1:] if col < len(r) and r[col]}
                if ws.title == "Data":
                    assert values <= set(names) | {""}, (template, values - set(names))
                else:
                    assert not values & set(names), (template, ws.title, values & set(names))
                    assert values & set(names.values()), (template, ws.title, values)
        summary = [r[0] for r in _rows(book["Summary"]) if isinstance(r[0], str)]
        shown = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
        for rec in shown.get("alpha", []):
            assert names[rec["measure"]] in summary, (template, rec["measure"])
        for rec in shown.get("reported", []):
            assert any(line.startswith(f"{names[rec['measure']]}: ") for line in summary)
        if rubric.totals and "Distribution chart" in book.sheetnames:
            total = names[rubric.totals[0].id]
            titles = _chart_titles(root / "out" / "analysis.xlsx")
            assert any(t.startswith(f"Distribution of {total} ") for t in titles), titles
    paired = [r[0] for r in _rows(_book(studies["paired-rubric"])["Summary"])]
    assert "Depth of Analysis (depth)" in paired and "Total (total)" in paired
    checks = [r[0] for r in _rows(_book(studies["answer-review"])["Summary"])]
    assert "alpha on Overall rating (overall_rating)" in checks


PROPORTION_HEADERS = {
    "agreement", "pairwise agreement", "all agree share", "share chose A", "preference",
    "observed agreement", "chance agreement", "yield", "known rate", "none rate",
    "arm under A, share chosen", "arm under B, share chosen", "share medium high",
    "extreme share", "medium high share", "direction consistent share", "gap",
    "gap ci low", "gap ci high"}
COEFFICIENT_HEADERS = {"alpha", "kappa", "ICC", "Gwet AC", "Spearman rho", "p"}
PROPORTION_SHEETS = {"Direction by confidence", "Position bias", "Position-free preference",
                     "Yield Fisher", "Trend by band"}  # their intervals are of proportions
READ_AS_TABLES = {"Summary", "Methods", "Chart data", "Data"}


def _percent(cell) -> bool:
    """A percentage, with or without the room a number beside text keeps after it."""
    return cell.number_format.removesuffix(PAD).endswith("%")


def test_each_kind_of_quantity_has_one_form_throughout(studies):
    """The same proportion read 0.667 on the Fleiss kappa sheet ("observed agreement")
    and 66.7% on the Percent agreement sheet; direction agreement read 0.500 against
    a rule of ">= 70%"; yields read 20.0% on their sheet and 0.200 on the Summary.
    Now every proportion (and its interval) is a percentage, every coefficient and p a
    decimal, on every sheet and in the Summary's lines, and both sheets say so."""
    for template, root in studies.items():
        book = _book(root)
        for ws in book.worksheets:
            if ws.title in READ_AS_TABLES:
                continue
            head = [c.value for c in ws[1]]
            for row in ws.iter_rows(min_row=2):
                for title, cell in zip(head, row, strict=False):
                    if not isinstance(cell.value, float):
                        continue
                    share = title in PROPORTION_HEADERS or (
                        str(title).startswith("95% CI") and ws.title in PROPORTION_SHEETS)
                    if share or title in COEFFICIENT_HEADERS or str(title).startswith("95%"):
                        assert _percent(cell) is share, (template, ws.title, title,
                                                         cell.number_format)
    for template, root in studies.items():
        book = _book(root)
        summary = book["Summary"]
        lines = [str(r[0].value) for r in summary.iter_rows(max_col=1) if r[0].value]
        said = [t for t in lines if t.startswith("Proportions ")]  # the forms, stated
        assert len(said) == 1 and "as percentages" in said[0], template
        assert "p-values with three significant digits" in said[0], template
        methods = {r[0]: r[1] for r in book["Methods"].iter_rows(values_only=True)}
        assert methods["number forms"] == said[0]
    paired = _book(studies["paired-rubric"])["Summary"]
    cells = {r[0].value: r for r in paired.iter_rows() if r[0].value}
    check = cells["direction agreement with the improved arm"]
    assert _percent(check[1]) and _percent(check[2]) and check[2].value == 0.70
    assert _percent(cells["vs improved arm"][1]) and _percent(cells["pairwise mean"][1])
    assert not _percent(cells["Krippendorff's alpha on Total (total), ordinal level"][1])
    line = next(t for t in cells if str(t).startswith("- direction agreement"))
    assert re.match(r"- direction agreement with the improved arm: \d+\.\d% "
                    r"\(target at least 70\.0%\):", line), line
    keep = _book(studies["keep-known"])["Summary"]
    rows = {r[0].value: r for r in keep.iter_rows() if r[0].value}
    above = next(r for t, r in rows.items() if str(t).startswith("winner "))
    # the bar is the reference arm's yield, a figure of the data, given in words (001)
    assert _percent(above[1]) and str(above[2].value).startswith("above the reference's yield")
    arms = next(r for t, r in rows.items() if t == "none" or str(t).startswith("b"))
    assert all(_percent(c) for c in arms[1:4] if c.value is not None)
    yields = [t for t in rows if str(t).startswith(("yield ", "gap "))]
    assert yields and all("%" in t and not re.search(r"= 0\.\d{3}", t) for t in yields)


def _printed_pixels(ws) -> int:
    """The sheet's used columns as printed at 100% (pixels, as Excel counts them)."""
    widths = {}
    for dim in ws.column_dimensions.values():
        for col in range((dim.min or 1), (dim.max or dim.min or 1) + 1):
            widths[col] = dim.width
    return sum(round((widths.get(c) or 8.43) * 7) for c in range(1, ws.max_column + 1))


def test_every_sheet_prints_one_page_wide_legibly_with_its_header_repeated(studies):
    """The Alpha sheet (14 columns), Cohen kappa, ICC, Gwet AC, Yield Fisher and others
    printed at 70% across two pages. Every sheet now prints fit to one page wide,
    its columns narrowed first (text wraps, numbers keep the room they print in) so
    that the fit leaves the text at 70% or more; a table's header row repeats on every
    page."""
    from sheetflow.workbook.printing import MIN_SCALE, page_pixels

    for template, root in studies.items():
        for ws in _book(root).worksheets:
            where = (template, ws.title)
            assert ws.sheet_properties.pageSetUpPr.fitToPage, where
            assert ws.page_setup.fitToWidth in (None, 1) and ws.page_setup.fitToHeight == 0
            assert ws.page_setup.scale is None and ws.print_title_cols is None, where
            landscape = ws.page_setup.orientation == "landscape"
            assert _printed_pixels(ws) * MIN_SCALE <= page_pixels(landscape), where
            head = _rows(ws)[0]
            if len(head) > 2 and ws.title not in ("Summary", "Methods", "Chart data"):
                top = next(i for i, r in enumerate(ws.iter_rows(values_only=True), 1)
                           if r[1] is not None)  # a digest's header is under its note
                assert ws.print_title_rows == f"$1:${top}", (where, ws.print_title_rows)


def test_every_sheet_prints_its_used_range_and_nothing_past_it(studies):
    """File > Print prints the cells written, from A1 to the last written row and
    column of each sheet: no blank page from a formatted cell beyond them."""
    for template, root in studies.items():
        for ws in _book(root).worksheets:
            last = f"${get_column_letter(ws.max_column)}${ws.max_row}"
            used = "$A$1" if last == "$A$1" else f"$A$1:{last}"  # one cell: no range
            assert ws.print_area == f"'{ws.title}'!{used}", (template, ws.title)


def test_a_wide_table_is_narrowed_text_first_and_numbers_keep_their_room():
    """15 columns (two of long text, one of a long word) are too wide for a legible
    page: text is narrowed first, to its longest word; numbers only then, never below
    what they print in ("< 0.001", "-0.336", "20260916") or their header's longest
    word."""
    import pandas as pd

    from sheetflow.report.cells import column_floors, column_widths
    from sheetflow.workbook.printing import (
        MIN_SCALE,
        column_pixels,
        fitted_widths,
        page_pixels,
    )

    fmt = {"share": object(), "count": object()}  # compared by identity
    table = pd.DataFrame({
        "arm": ["b6_distance_forced", "b1"], "note": ["a long note " * 8, "x"],
        "statement": ["word " * 30, "y"], "p": [0.0001, 0.5], "gap": [-0.336, 0.2],
        "seed": [20260916, 7], **{f"n_col{i}": [1, 2] for i in range(6)},
        "kappa": [0.5, 0.25], "mean_x": [1.5, 2.25], "rate": [0.5, 0.25]})
    widths = column_widths(table)
    assert sum(map(column_pixels, widths)) * MIN_SCALE > page_pixels(True)  # too wide
    fitted = fitted_widths(widths, *column_floors(table, fmt))
    assert sum(map(column_pixels, fitted)) * MIN_SCALE <= page_pixels(True)
    col = {name: w for name, w in zip(table.columns, fitted, strict=True)}
    assert col["arm"] >= len("b6_distance_forced")  # its one word kept whole
    assert col["note"] < widths[1] and col["statement"] < widths[2]  # text wraps
    assert col["p"] >= len("< 0.001") + 1 and col["seed"] >= len("20260916") + 1
    assert col["gap"] >= len("-0.336") + 1 and col["n_col0"] >= len("(count)") + 1
    narrow = pd.DataFrame({"measure": ["a"], "alpha": [0.5]})
    assert fitted_widths(column_widths(narrow), *column_floors(narrow, fmt)) == \
        column_widths(narrow)  # a table that fits keeps its widths


SUMMARY_TABLES = ("Checks behind the decision", "Arms: which wins", "Krippendorff's alpha",
                  "Direction agreement", "Other agreement figures")


def test_no_summary_table_is_split_from_its_heading_across_pages(studies):
    """The Checks table broke across pages, its last row alone on page 2 without its
    headings, and "Other agreement figures" was left a lone heading at the foot of page
    1. Laid out as LibreOffice pages the Summary (page after page of its rows' heights
    at the scale fit to one page wide prints, with its manual breaks), each table
    shorter than a page sits whole on one page with its heading."""
    from sheetflow.packs.pages import page_room
    from sheetflow.report.summary_sheet import fit_scale

    room = page_room(fit_scale(), 0.0, True)
    for template in ("paired-rubric", "anchored-plan"):
        ws = _book(studies[template])["Summary"]
        breaks = {b.id for b in ws.row_breaks.brk}  # a break after row id (1-based)
        heights = [ws.row_dimensions[r].height or 15.0 for r in range(1, ws.max_row + 1)]
        page, used = [], 0.0
        for r, height in enumerate(heights, 1):
            if used and (r - 1 in breaks or used + height > room):
                used, page = 0.0, [*page, r]
            used += height
        heads = [r for r in range(1, ws.max_row + 1)
                 if str(ws.cell(r, 1).value or "").startswith(SUMMARY_TABLES)]
        assert len(heads) >= 3, template
        for head in heads:  # a table runs from its heading to the first blank row
            end = next((r for r in range(head + 2, ws.max_row + 1)
                        if all(c.value is None for c in ws[r])), ws.max_row + 1)
            size = sum(heights[head - 1:end - 1])
            cut = [p for p in page if head < p < end]
            assert not cut or size > room, (template, ws.cell(head, 1).value, cut)


def test_a_gwet_table_with_reason_and_note_columns_fits_a_legible_page():
    """The Gwet AC sheet of a study where one dimension agrees in full gets a reason
    and a note column (16 in all) and printed below 70%: text columns at 12
    characters left it 25 pixels too wide. Its text now narrows further first."""
    import pandas as pd

    from sheetflow.report.cells import column_floors, column_widths
    from sheetflow.workbook.printing import MIN_SCALE, column_pixels, fitted_widths, page_pixels

    fmt = {"share": object(), "count": object()}
    row = ["Overall rating (overall_rating)", "AC2", 1.0, 0.0, float("nan"), float("nan"), 1.0, 1.0,
           1.0, 0.5679012345679012, 18, 18, 2, "quadratic",
           "standard error 0 (no spread between units): no z or p",
           "a zero-width interval (standard error 0) is no certainty: the variance formula "
           "gives no width when the ratings agree on every unit, however few the units"]
    other = ["Factual correctness (factual_correctness)", "AC2", 0.9010989010989012,
             0.05448491777236766, 16.53850162468078, 6.513420728109783e-12,
             0.7861457728257927, 1.0, 0.9583333333333334, 0.5787037037037037, 18, 18, 2,
             "quadratic", "", ""]
    table = pd.DataFrame([row, other], columns=[
        "measure", "coefficient", "Gwet AC", "standard error", "z", "p", "95% CI low",
        "95% CI high", "observed agreement", "chance agreement", "units",
        "pairable units", "raters", "weights", "reason", "note"])
    fitted = fitted_widths(column_widths(table), *column_floors(table, fmt))
    assert sum(map(column_pixels, fitted)) * MIN_SCALE <= page_pixels(True)
