"""What a rater sees in a pack: how-to first, one count of required answers shared with
collect, out-of-rule values flagged, human labels, cards kept whole on printed pages, and
the Submission area collected like every other answer."""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import math
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import fill_openpyxl, needs_soffice, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs import pages
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.guides import answer_label
from sheetflow.packs.instructions import SHORT_INSTRUCTIONS, with_batch_size, with_case_count
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.rubric import answer_required
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ["paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert"]
needs_lo = needs_soffice  # fails under CI when LibreOffice is missing, never skips there


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """Every template generated once."""
    tmp = tmp_path_factory.mktemp("packs")
    out = {}
    for template in TEMPLATES:
        folder = tmp / template
        shutil.copytree(ROOT / "templates" / template, folder)
        generate_packs(folder)
        out[template] = folder
    return out


def _manifest_json(folder: Path) -> dict:
    return read_manifest(folder / L.PACKS_DIR / L.MANIFEST_FILE)


def _required(folder: Path, pack: dict) -> list[dict]:
    dims = {d.id: d for d in load_study(folder).rubric.dimensions}
    return [a for a in L.iter_answer_cells(pack)
            if answer_required(dims.get(a["dimension"]), a["part"])]


def _progress_total(path: Path, pack: dict) -> int:
    ws = openpyxl.load_workbook(path)[L.SCORING_SHEET]
    formula = ws[pack["progress"]["cell"]].value
    match = re.search(r'"All (\d+) answers done"', formula)
    assert match, formula
    assert f'" of {match.group(1)} required answers filled"' in formula
    return int(match.group(1))


@pytest.mark.parametrize("template", TEMPLATES)
def test_progress_line_and_collect_agree_on_required(studies, template, tmp_path):
    """N in the pack's progress line is collect's ``required``, blank and part-filled."""
    folder = studies[template]
    pack = _manifest_json(folder)["packs"][0]
    src = folder / L.PACKS_DIR / pack["file"]
    required = _required(folder, pack)
    total = _progress_total(src, pack)
    assert total == len(required) > 0
    blank = collect(folder, [src], write=False).report.files[0]
    assert (blank.answered, blank.required) == (0, total)
    plan = plan_answers(pack)
    plan.update({a["cell"]: (dt.datetime(2026, 11, 2, 9 + i % 9, 30), "") for i, a in
                 enumerate(L.iter_answer_cells(pack))
                 if a["validation"]["type"] in ("time", "datetime")})
    filled = {a["cell"] for a in required[::2]}
    dst = tmp_path / pack["file"]
    fill_openpyxl(src, dst, {c: v for c, v in plan.items() if c in filled})
    part = collect(folder, [dst], write=False).report.files[0]
    assert (part.answered, part.required) == (len(filled), total)


def test_confidence_counts_in_both_where_the_rubric_asks(studies):
    """Protocol 000 asks a confidence for every scored dimension: both counts include it."""
    folder = studies["paired-rubric"]
    pack = _manifest_json(folder)["packs"][0]
    parts = {a["part"] for a in _required(folder, pack)}
    assert "confidence" in parts


@pytest.mark.parametrize("template", TEMPLATES)
def test_what_a_rater_needs_comes_first(studies, template):
    """Instructions: how to fill the workbook, then what is scored; the study's own text
    there only when short, else verbatim on More instructions, with the rubric in detail."""
    folder = studies[template]
    study = load_study(folder)
    pack = _manifest_json(folder)["packs"][0]
    wb = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])
    assert wb.sheetnames[:3] == [L.INSTRUCTIONS_SHEET, L.SCORING_SHEET, L.MORE_SHEET]
    first = {c.row: str(c.value) for c in wb[L.INSTRUCTIONS_SHEET]["B"] if c.value is not None}
    more = {c.row: str(c.value) for c in wb[L.MORE_SHEET]["B"] if c.value is not None}
    start = min(r for r, t in first.items() if t == "Before you start")
    scored = min(r for r, t in first.items() if t == "What you score on each case")
    assert start <= 8 and start < scored
    assert sum(t.startswith("\u2022") for r, t in first.items() if start < r < scored) >= 3
    # {n_cases} says the number of cases in this workbook, {batch_size} its batches' size
    shown = with_batch_size(with_case_count(study.instructions, len(pack["cards"])),
                            study.design.batch_size)
    lines = [line for line in shown.split("\n") if line.strip()]
    short = len(shown) <= SHORT_INSTRUCTIONS
    home = first if short else more
    # verbatim, one row per line (a long line in consecutive rows)
    text = "\n".join(home.values())
    assert all(line in text for line in lines)
    assert short or not any(line in first.values() for line in lines if len(line) > 40)
    assert "The rubric in detail" in more.values()
    assert all(answer_label(d) in more.values() for d in study.rubric.dimensions)


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_heading_ends_a_printed_page(studies, template):
    """The text sheets print at a fixed scale with page breaks; a heading is never the
    last row before one (nor the last row of the sheet)."""
    folder = studies[template]
    for pack in _manifest_json(folder)["packs"]:
        wb = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])
        for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET):
            ws = wb[name]
            fit = ws.sheet_properties.pageSetUpPr
            assert ws.page_setup.scale and not (fit and fit.fitToPage), (pack["file"], name)
            headings = {c.row for c in ws["B"] if c.value is not None and c.font.sz >= 12}
            breaks = {b.id for b in ws.row_breaks.brk}  # the last row of a page, 1-based
            assert not headings & (breaks | {ws.max_row}), (pack["file"], name)


def _cf_rules(path: Path) -> list[tuple[list[str], str, str]]:
    """(cells, rule type, formula) of every conditional format on the Scoring sheet."""
    with zipfile.ZipFile(path) as zf:
        xml = zf.read("xl/worksheets/sheet2.xml").decode("utf-8")
    out = []
    for sqref, body in re.findall(r'<conditionalFormatting sqref="([^"]+)">(.*?)'
                                  r"</conditionalFormatting>", xml):
        for kind, formula in re.findall(r'<cfRule type="(\w+)"[^>]*><formula>([^<]+)</formula>',
                                        body):
            cells = [c for ref in sqref.split() for c in _expand(ref)]
            out.append((cells, kind, formula.replace("&quot;", '"').replace("&lt;", "<")
                        .replace("&gt;", ">").replace("&amp;", "&")))
    return out


def _expand(ref: str) -> list[str]:
    first, _, last = ref.partition(":")
    last = last or first
    c1, r1 = first[0], int(first[1:])
    c2, r2 = last[0], int(last[1:])
    return [f"{chr(c)}{r}" for c in range(ord(c1), ord(c2) + 1) for r in range(r1, r2 + 1)]


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_answer_cell_has_an_out_of_rule_highlight(studies, template):
    """A paste bypasses validation; the expression rule covers every cell with a rule."""
    folder = studies[template]
    study = load_study(folder)
    dims = {d.id: d for d in study.rubric.dimensions}
    for pack in _manifest_json(folder)["packs"]:
        rules = _cf_rules(folder / L.PACKS_DIR / pack["file"])
        flagged: dict[str, str] = {}
        for cells, kind, formula in rules:
            if kind == "expression" and formula != f'LEFT({L.PROGRESS_CELL},4)="All "' \
                    and "ROW(" not in formula:  # the blank highlight (tested on its own)
                top = min(cells, key=lambda c: (int(c[1:]), c[0]))
                assert top in formula, (top, formula[:60])  # anchored on its top-left cell
                flagged.update(dict.fromkeys(cells, formula))
        for a in L.iter_answer_cells(pack):
            dim = dims.get(a["dimension"])
            free = a["validation"]["type"] == "any" and (
                dim is None or (dim.min_words is None and dim.max_words is None))
            assert free or a["cell"] in flagged, (pack["file"], a["cell"], a["dimension"])


@pytest.mark.libreoffice
@needs_lo
def test_libreoffice_evaluates_the_highlight_as_promised(studies, tmp_path):
    """Each rule's formula, evaluated by LibreOffice in a spare cell: pasted values that
    the rule refuses are flagged, allowed ones and blanks are not."""
    folder = studies["paired-rubric"]
    pack = _manifest_json(folder)["packs"][0]
    src = folder / L.PACKS_DIR / pack["file"]
    rules = [r for r in _cf_rules(src) if r[1] == "expression" and L.PROGRESS_CELL not in r[0]]
    by_kind = {}
    for a in L.iter_answer_cells(pack):
        by_kind.setdefault((a["dimension"], a["part"][:1]), a)
    cases = []  # (cell, value, expected flag)
    samples = {"preference": [("Maybe", True), ("B = A", True), ("B > A", False),
                              ("A>B", False)],
               "count": [("three", True), (2.5, True), (-1, True), (4, False), ("4", False),
                         ("4 ", False), (" 4", True), ("1e1", True), ("4.0", False)],
               "checklist": [("Maybe", True), ("Yes", False), ("Y", False)],
               "number": [(6.5, False), (6.125, True), (41, True), ("six", True)],
               "confidence": [("Hi", True), ("High", False)]}
    study = load_study(folder)
    dims = {d.id: d for d in study.rubric.dimensions}
    for (dim_id, part), a in by_kind.items():
        kind = "confidence" if part == "c" else dims[dim_id].kind if dim_id else "time"
        cases += [(a["cell"], v, flag) for v, flag in samples.get(kind, [])]
    cases.append((cases[0][0], None, False))  # blank is the blank rule's business
    wb = openpyxl.load_workbook(src)
    ws = wb[L.SCORING_SHEET]
    probe = []
    for i, (cell, value, flag) in enumerate(cases):
        # one probe row per case: copy the answer cell's rule to a spare row and cell
        formula = next(f for cells, _, f in rules if cell in cells)
        top = formula_anchor(formula)
        spare = f"Z{i + 1}"
        ws[f"Y{i + 1}"] = value
        ws[spare] = "=" + formula.replace(top, f"Y{i + 1}")
        probe.append((cell, value, flag))
    assert len(probe) >= 15
    filled = tmp_path / "probe.xlsx"
    wb.save(filled)
    csv_filter = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,2"
    proc = subprocess.run(
        ["soffice", f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}", "--headless",
         "--convert-to", csv_filter, "--outdir", str(tmp_path / "csv"), str(filled)],
        capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader((tmp_path / "csv" / f"probe-{L.SCORING_SHEET}.csv")
                           .read_text(encoding="utf-8").splitlines()))
    for i, (cell, value, flag) in enumerate(probe):
        got = rows[i][25].upper()
        assert got == ("TRUE" if flag else "FALSE"), (cell, value, got)


def formula_anchor(formula: str) -> str:
    """The first cell reference in a rule's formula (its anchor)."""
    return re.search(r"\b([A-H][0-9]+)\b", formula).group(1)


def test_a_card_taller_than_a_page_is_cut_only_before_its_scores():
    """Blocks that fit a page stay whole (an inner cut is ignored); a taller one starts a
    page, and its scores (with their heading) start the next when they do not fit."""
    page = pages.page_room(100, 0.0, True)
    heights = [page * 0.4] * 2 + [page * 0.3] * 5 + [page * 0.2] * 3
    # blocks: rows 0-1 (0.8 page), rows 2-6 (1.5 pages, scores from row 5), rows 7-9
    assert pages.page_breaks(heights, [0, 2, 7], 0, 0.0, 100, True, inner=[1, 5]) == [
        2, 5, 7]
    assert pages.page_breaks(heights, [0, 2, 7], 0, 0.0, 100, True) == [2, 7]


def test_a_card_taller_than_a_page_starts_one_with_its_title():
    """Cut into parts, a tall card's first part (its title) fitted at the foot of the
    page before and was printed there, apart from the rest of the case."""
    page = pages.page_room(100, 0.0, True)
    heights = [page * 0.5, page * 0.3, page * 0.6, page * 0.6]
    # blocks: row 0 (half a page), rows 1-3 (1.5 pages, cut before rows 2 and 3)
    assert pages.page_breaks(heights, [0, 1], 0, 0.0, 100, True, inner=[2, 3]) == [1, 3]
    # the answer lines' headings are placed where these parts leave a page
    assert pages.last_page_used(heights[1:], page) == pytest.approx(page * 0.6)


@pytest.mark.parametrize("template", TEMPLATES)
def test_page_breaks_fall_between_cards_that_fit_a_page(studies, template):
    folder = studies[template]
    pack = _manifest_json(folder)["packs"][0]
    ws = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    breaks = [b.id for b in ws.row_breaks.brk]  # 1-based: the break is below this row
    starts = {int(c["title"]["cell"][1:]) for c in pack["cards"]}
    starts |= {int(b["start"]["cell"][1:]) for b in pack["batches"]}
    submission = [int(a["cell"][1:]) for a in pack["study_answers"].values()]
    if submission:
        starts.add(min(submission) - 2)
    # inside a card taller than a page, a page starts on a line naming the case: a
    # response's band or a heading over the answer lines
    names_case = {b + 1 for b in breaks if "Case " in str(ws[f"B{b + 1}"].value)}
    assert breaks and all(b + 1 in starts | names_case for b in breaks), breaks
    landscape = ws.page_setup.orientation == "landscape"
    room = pages.page_room(ws.page_setup.scale, sum(ws.row_dimensions[r].height or 15
                                                     for r in range(1, 5)), landscape)
    edges = [5, *[b + 1 for b in breaks], ws.max_row + 1]
    for top, bottom in itertools.pairwise(edges):
        height = sum(ws.row_dimensions[r].height or 15 for r in range(top, bottom))
        inner = [s for s in starts if top < s < bottom]
        # a card taller than a page at a legible scale starts a page and runs on alone
        assert height <= room or not inner, (top, bottom, height, room)


def _scoring_sheet_alone(folder: Path) -> tuple[dict, openpyxl.Workbook]:
    """The first pack of the study in ``folder`` (its manifest entry and workbook), the
    Scoring sheet the only one shown and the active one: what is printed is its pages."""
    pack = _manifest_json(folder)["packs"][0]
    wb = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])
    for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET):
        wb[name].sheet_state = "hidden"
    wb.active = 1
    return pack, wb


def _print_scoring(wb: openpyxl.Workbook, tmp_path: Path) -> None:
    """``wb`` saved as ``scoring.xlsx`` and printed by LibreOffice to ``scoring.pdf``, both
    in ``tmp_path``."""
    scoring = tmp_path / "scoring.xlsx"
    wb.save(scoring)
    proc = subprocess.run(
        ["soffice", f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}", "--headless",
         "--convert-to", "pdf", "--outdir", str(tmp_path), str(scoring)],
        capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.libreoffice
@needs_lo
@pytest.mark.parametrize("template", ["paired-rubric", "keep-known", "answer-review"])
def test_libreoffice_prints_one_page_per_break(studies, template, tmp_path):
    """Printed by LibreOffice, the Scoring sheet has the manual breaks' pages and, for a
    card taller than a page (it starts a page and runs on alone), the pages it runs
    on: no card that fits a page was split."""
    _, wb = _scoring_sheet_alone(studies[template])
    ws = wb[L.SCORING_SHEET]
    marks = [b.id for b in ws.row_breaks.brk]
    room = pages.page_room(ws.page_setup.scale, sum(ws.row_dimensions[r].height or 15
                                                    for r in range(1, 5)),
                           ws.page_setup.orientation == "landscape")
    edges = [5, *[b + 1 for b in marks], ws.max_row + 1]
    heights = [sum(ws.row_dimensions[r].height or 15 for r in range(a, b))
               for a, b in itertools.pairwise(edges)]
    least = len(heights)  # a page per break, at least
    most = sum(math.ceil(h / (room * pages.SLACK)) for h in heights)
    _print_scoring(wb, tmp_path)
    info = subprocess.run(["pdfinfo", str(tmp_path / "scoring.pdf")], capture_output=True,
                          text=True, check=True).stdout
    assert least <= int(re.search(r"Pages:\s+(\d+)", info).group(1)) <= most


@pytest.mark.libreoffice
@needs_lo
@pytest.mark.parametrize("template", ["paired-rubric", "anchored-plan", "judge-likert"])
def test_every_printed_page_of_cards_names_its_case(studies, template, tmp_path):
    """Cards taller than a page (two long responses and a score grid, a long rubric)
    print over several pages: each page, printed by LibreOffice, names the case it
    holds, so a page of scores is matched to its case."""
    pack, wb = _scoring_sheet_alone(studies[template])
    ws = wb[L.SCORING_SHEET]
    # the Submission area, after the cards, names no case: left out of the print
    end = min((int(a["cell"][1:]) for a in pack["study_answers"].values()),
              default=ws.max_row + 3) - 3
    ws.print_area = f"B1:{ws.print_area.split(':')[-1].rstrip('0123456789')}{end}"
    ws.row_breaks.brk = [b for b in ws.row_breaks.brk if b.id < end]
    _print_scoring(wb, tmp_path)
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "scoring.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    printed = [page for page in text.split("\f") if page.strip()]
    assert len(printed) > len(pack["cards"])  # the cards do run over pages
    assert all(re.search(r"Case \d+", page) for page in printed), [
        page[:300] for page in printed if not re.search(r"Case \d+", page)][:2]


def test_count_lines_ask_for_a_count_and_show_points(studies):
    folder = studies["paired-rubric"]
    pack = _manifest_json(folder)["packs"][0]
    ws = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    row = pack["cards"][0]["rows"][0]
    cell = row["answers"]["depth"]["cell"]
    r = int(cell[1:])
    assert ws[f"B{r}"].value == "Depth of Analysis (count)"
    assert "points" in ws[f"B{r + 1}"].value
    assert ws[f"{cell[0]}{r + 1}"].value.startswith(f"=IF(ISNUMBER({cell}),")
    assert "0-1 \u2192 0 pts" in ws[f"G{r}"].value


def test_labels_are_human_and_guides_filled(studies):
    folder = studies["answer-review"]
    study = load_study(folder)
    pack = _manifest_json(folder)["packs"][0]
    ws = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    ids = {d.id for d in study.rubric.dimensions}
    guide = L.guide_column(())
    for a in L.iter_answer_cells(pack):
        r = int(a["cell"][1:])
        label = ws[f"B{r}"].value
        assert label and label not in ids, label
        if a["part"] == "value":
            assert ws[f"{guide}{r}"].value, (a["dimension"], r)


def test_confidence_columns_show_only_when_asked(studies):
    asked = openpyxl.load_workbook(next((studies["paired-rubric"] / "packs").glob("*.xlsx")))
    not_asked = openpyxl.load_workbook(next((studies["answer-review"] / "packs").glob("*.xlsx")))
    assert not asked[L.SCORING_SHEET].column_dimensions["D"].hidden
    assert not_asked[L.SCORING_SHEET].column_dimensions["D"].hidden is True
    assert not_asked[L.SCORING_SHEET]["D4"].value in (None, "")


def test_no_header_names_an_arm_or_the_tool(studies):
    for template in TEMPLATES:
        folder = studies[template]
        arms = [a.id for a in load_study(folder).design.arms]
        path = next((folder / "packs").glob("*.xlsx"))
        wb = openpyxl.load_workbook(path)
        ws = wb[L.SCORING_SHEET]
        heads = [str(c.value) for row in ws.iter_rows(max_row=L.HEADER_ROWS) for c in row
                 if c.value is not None]
        heads += [str(ws[c["title"]["cell"]].value) for c in _manifest_json(folder)["packs"][0]
                  ["cards"]]
        for text in heads:
            assert "sheetflow" not in text.lower(), text
            assert not any(arm in text for arm in arms), text
        assert "sheetflow" not in (wb.properties.creator or "").lower()


def test_submission_area_is_validated_and_collected(studies, tmp_path):
    """000's step 6.3 asks hours, acknowledgment and blinding integrity: all collected."""
    folder = studies["paired-rubric"]
    pack = _manifest_json(folder)["packs"][0]
    study_cells = pack["study_answers"]
    assert {"hours_worked", "acknowledgment", "recognised_arm", "blinding_concerns",
            "methodology_notes"} <= set(study_cells)
    assert study_cells["hours_worked"]["validation"] == {"type": "decimal", "min": 0,
                                                          "max": 40, "places": 2}
    plan = plan_answers(pack)
    plan[study_cells["hours_worked"]["cell"]] = (6.5, "6.5")
    plan[study_cells["acknowledgment"]["cell"]] = ("Named", "Named")
    dst = tmp_path / pack["file"]
    fill_openpyxl(folder / L.PACKS_DIR / pack["file"], dst, plan)
    got = collect(folder, [dst], write=False)
    values = {r["dimension"]: r["value"] for r in got.ratings if not r["case_id"]}
    assert values["hours_worked"] == "6.5" and values["acknowledgment"] == "Named"
    assert values["recognised_arm"] in ("Yes", "No")
    status = got.report.files[0]
    assert status.answered == status.required
    bad = dict(plan)
    bad[study_cells["hours_worked"]["cell"]] = (6.125, "")
    fill_openpyxl(folder / L.PACKS_DIR / pack["file"], tmp_path / "bad.xlsx", bad)
    issues = collect(folder, [tmp_path / "bad.xlsx"], write=False).report.issues
    assert any(i.code == "too-many-decimals" and i.cell == study_cells["hours_worked"]["cell"]
               for i in issues)


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_filled_pack_is_collected_without_a_warning_of_its_own(studies, template,
                                                                  tmp_path):
    """The pack's own formulas (the helper columns right of the guide) are inside the
    window collect reads: a return filled in as asked draws no content warning."""
    folder = studies[template]
    pack = _manifest_json(folder)["packs"][0]
    dst = tmp_path / pack["file"]
    fill_openpyxl(folder / L.PACKS_DIR / pack["file"], dst, plan_answers(pack))
    codes = {i.code for i in collect(folder, [dst], write=False).report.issues}
    assert "content-outside-window" not in codes, template


def test_the_labels_head_each_cases_scores_not_every_page(studies):
    """Paired: the heading repeated on every page (and over the Submission area) names
    no label; each case's scores start right under a heading naming the case (its title
    line: a printed page of scores is matched to its case) and A's and B's columns."""
    folder = studies["paired-rubric"]
    manifest = _manifest_json(folder)
    a, b = manifest["labels"]
    pack = manifest["packs"][0]
    ws = openpyxl.load_workbook(folder / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    top = [str(c.value) for c in ws[L.HEADER_ROWS] if c.value]
    assert top == ["Question", "Your answers", "Guide"]
    for card in pack["cards"]:
        first = min(int(x["cell"][1:]) for x in L.iter_answer_cells({"cards": [card]}))
        heads = [str(c.value) for c in ws[first - 1] if c.value]
        title = ws[card["title"]["cell"]].value
        assert heads[:3] == [f"{title}: scores", f"{a}: your answer", f"{a}: confidence"], \
            heads
        assert f"{b}: your answer" in heads
