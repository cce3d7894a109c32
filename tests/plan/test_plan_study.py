"""Planning a study folder: protocol 000's design, the recorded design, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.errors import SpecError, UsageError
from sheetflow.plan import SIZING_FILE, Target, band_width, plan_study, record_plan
from sheetflow.plan.inputs import Measure, read_pilot_csv
from sheetflow.plan.workbook import write_plan_workbook
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir

FAST = dict(simulations=40, n_boot=200)


@pytest.fixture
def study000(tmp_path) -> Path:
    """Protocol 000's design: the paired-rubric template with four validators, 18 cases."""
    folder = tmp_path / "p000"
    shutil.copytree(data_dir("templates") / "paired-rubric", folder)
    with (folder / "raters.csv").open("a", encoding="utf-8") as f:
        f.write("EV-04,Validator Four,Tanaka,ev04@example.org,primary\n")
    study = load_study(folder)
    assert (len(study.raters), len(study.items)) == (4, 18)
    return folder


def test_bands_080_070_060_are_010_apart(study000):
    assert band_width(load_study(study000)) == pytest.approx(0.10)


def test_protocol_000_design_gets_a_plain_note(study000):
    """Acceptance: 4 validators x 18 cases -> the interval it can expect, and how many
    cases would make it narrow enough for one band. The decision's alpha counts the
    internal team beside the validators (protocol 000 sections 4.1-4.2): every design
    has it."""
    res = plan_study(study000, expected=0.75, raters=[4], items=[18, 100], **FAST)
    first, second = res.notes[0], next(n for n in res.notes if n.startswith("About "))
    assert "4 validators plus the internal team x 18 cases, 36 rated responses" in first
    assert "wider than one band" in first
    row = res.table[(res.table["raters"] == 4) & (res.table["items"] == 18)].iloc[0]
    assert row["expected_width"] > 0.2  # far wider than a 0.10 band
    assert f"about {row['expected_width']:.2f} wide" in first
    assert "cases with 4 validators plus the internal team" in second
    needed = int(second.split()[1])
    assert 100 < needed < 2000
    assert res.target.width == pytest.approx(0.10)


def test_the_items_note_gives_the_width_with_its_simulation_error(study000, monkeypatch):
    """The note on how many cases would meet the target gave its width alone, the one
    simulated figure of the plan without its SE; it now gives the SE and, like every
    design, whether the width lies within simulation error of the target: for a design
    searched beyond the grid and for one of the grid."""
    from sheetflow.plan import notes

    searched, search = [], notes.cell_for_target

    def recorded(*args, **kwargs):  # the search's own figures, to compare the note with
        searched.append(search(*args, **kwargs))
        return searched[-1]

    monkeypatch.setattr(notes, "cell_for_target", recorded)
    res = plan_study(study000, expected=0.75, raters=[4], items=[18, 100], **FAST)
    (need, cell), = searched
    grid = plan_study(study000, expected=0.75, raters=[4], items=[18, 400],
                      target=Target(width=0.2), **FAST)
    row = grid.table[grid.table["items"] == 400].iloc[0].to_dict()
    for plan, n, figures in ((res, need, cell), (grid, 400, row)):
        note = next(n for n in plan.notes if n.startswith("About "))
        assert (f"About {n} cases with 4 validators plus the internal team (expected width "
                f"{figures['expected_width']:.3f}, simulation SE "
                f"{figures['width_se']:.2g}) would make") in note, note
        assert plan.target.within_error(figures) == (
            "within simulation error of the target" in note), note


def test_recorded_design_is_frozen_by_the_spec_hash(study000, tmp_path):
    before = load_study(study000).hash
    res = plan_study(study000, expected=0.75, raters=[4], items=[18, 400],
                     target=Target(width=0.2), **FAST)
    path = record_plan(study000, res)
    assert path.name == SIZING_FILE
    study = load_study(study000)
    assert study.sizing["raters"] == 4 and study.sizing["items"] == 400
    assert study.sizing["notes"] == res.notes
    # the recorded width carries its simulation SE, as every simulated figure does
    chosen = res.to_dict()
    assert study.sizing["expected_width_se"] == chosen["expected_width_se"] > 0
    assert study.sizing["within_error"] is chosen["within_error"]
    assert study.hash != before
    record_plan(study000, res)  # same inputs, same bytes, same hash
    assert load_study(study000).hash == study.hash
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SpecError, match=r"sizing\.json"):
        load_study(study000)


def test_plan_workbook_has_designs_and_a_chart(study000, tmp_path):
    res = plan_study(study000, expected=0.75, raters=[3, 4], items=[18, 60], **FAST)
    path = write_plan_workbook(res, tmp_path / "out" / "plan.xlsx")
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Plan", "Chart", "Chart data", "Methods"]
    values = [c for row in wb["Plan"].iter_rows(values_only=True) for c in row if c]
    assert "Expected width" in values and res.notes[0] in values
    assert wb["Chart data"]["B1"].value == \
        "Expected width, 3 validators plus the internal team"
    assert wb["Chart"]._charts  # a chart sheet: the chart alone on its page
    # every simulated width with its Monte Carlo error, and the convention on Methods
    rows = list(wb["Plan"].iter_rows(values_only=True))
    head = next(r for r in rows if r and r[0] == "Validators (plus the internal team)")
    se = [r[head.index("Width, simulation SE")] for r in rows[rows.index(head) + 1:]]
    assert se == pytest.approx(res.table["width_se"].tolist()) and all(v > 0 for v in se)
    assert "Within simulation error of the target" in head
    methods = dict(wb["Methods"].iter_rows(values_only=True, max_col=2))
    assert "less than 2 SEs from the target is marked within simulation error" in \
        methods["Simulation error"]


def test_inputs_are_checked(study000, tmp_path):
    assumed = plan_study(study000, raters=[4], items=[18], **FAST)  # no value: the default
    assert assumed.source.startswith("assumed alpha 0.75 (the default: give --expected")
    with pytest.raises(UsageError, match="choose one of"):
        plan_study(study000, expected=0.7, measure="nope", **FAST)
    with pytest.raises(UsageError, match="21 values"):
        plan_study(study000, expected=0.7, shares=[0.5, 0.5], **FAST)
    bad = tmp_path / "pilot.csv"
    bad.write_text("unit,rater,value\nc1,r1,3\nc1,r2,99\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"pilot.csv: line 3: value '99' \(unit c1, rater r2\)"):
        plan_study(study000, pilot=bad, **FAST)


def test_pilot_csv_plans_a_dimension(study000, tmp_path):
    rows = ["unit,rater,value"] + [f"u{u},r{r},{(u + (r == 2 and u % 4 == 0)) % 4}"
                                   for u in range(40) for r in range(3)]
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("\n".join(rows) + "\n", encoding="utf-8")
    res = plan_study(study000, measure="evidence", pilot=pilot, raters=[3], items=[18, 40],
                     **FAST)
    assert res.level == "ordinal"
    # the study's own 4 raters are always planned; the 3-rater pilot cannot be resampled
    # for them, so the model fitted to the pilot stands in for every design (one method
    # for the grid), and says so
    assert set(res.table["method"]) == {"model fitted to pilot"}
    assert res.method == "model fitted to pilot"
    assert any(n.startswith("The pilot's units hold at most 3 values, fewer than the "
                            "grid's 4 raters: every design is drawn from a model fitted")
               for n in res.notes)
    assert res.source.startswith("pilot pilot.csv: 40 units")


def test_icc_plan_uses_bonett(study000):
    res = plan_study(study000, statistic="icc", expected=0.7, raters=[2, 4], items=[18, 200],
                     target=Target(width=0.2))
    assert res.method == "Bonett (2002)" and res.simulations == 0
    # Bonett counts rated responses: 105 (2 raters: 100.5 + 1 and his correction for 2
    # raters, 5 x 0.7) and 57 (4 raters; 8 z^2 .09 3.1^2 / (12 .04) + 1 = 56.4); a
    # paired case gives two, so 53 and 29 cases
    assert set(res.table["items_needed"]) == {53, 29}
    assert set(res.table["units"]) == {36, 400}
    assert "4 raters x 18 cases, 36 rated responses" in res.notes[0]


def test_cli_plan_json_and_exit_codes(study000):
    runner = CliRunner()
    args = ["plan", str(study000), "--expected", "0.75", "--raters", "4", "--items",
            "18,400", "--width", "0.2", "--simulations", "30", "--n-boot", "150", "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"raters", "items", "expected_width", "method", "simulations"} <= set(data)
    assert (data["raters"], data["items"], data["simulations"]) == (4, 400, 30)
    assert (study000 / "out" / "plan.xlsx").exists()
    narrow = runner.invoke(cli, [*args[:-1], "--width", "0.01"])  # the last --width wins
    assert narrow.exit_code == 1
    assert narrow.output.rstrip().splitlines()[-1].startswith("no design of the grid")
    usage = runner.invoke(cli, ["plan", str(study000), "--raters", "two"])
    assert usage.exit_code == 2 and "error: --raters 'two' is not a list" in usage.output
    both = runner.invoke(cli, ["plan", str(study000), "--expected", "0.7", "--width", "0.1",
                               "--above", "0.7"])
    assert both.exit_code == 2 and "not both" in both.output


def test_cli_plan_record_writes_sizing(study000):
    result = CliRunner().invoke(cli, [
        "plan", str(study000), "--expected", "0.75", "--raters", "4", "--items", "18,400",
        "--width", "0.2", "--simulations", "20", "--n-boot", "100", "--record"])
    assert result.exit_code == 0, result.output
    # a paired study lists cases; the internal team rates beside the validators sized
    assert "cheapest   4 validators plus the internal team x 400 cases" in result.output
    best = json.loads((study000 / SIZING_FILE).read_text())
    # the recommended design's simulated width with its simulation SE
    assert f"expected width {best['expected_width']:.3f} (simulation SE " in result.output
    assert json.loads((study000 / SIZING_FILE).read_text())["items"] == 400


def test_the_study_own_ratings_are_the_pilot(tmp_path):
    """After collect, plan unblinds out/ratings.csv with the sealed key and resamples it."""
    from sheetflow.demo.run import run_demo

    folder = run_demo(tmp_path / "demo").folder
    res = plan_study(folder, raters=[4], items=[18], simulations=20, n_boot=100)
    # the demo's internal scores rate its total: one more rater, as the decision counts it
    assert res.source.startswith(
        "pilot out/ratings.csv (the 4 validators and the internal team's totals as one "
        "more rater, as analyze's alpha on 'total' counts them): 36 units, 5 values per unit")
    assert res.method == "pilot resampling"
    assert "4 validators plus the internal team x 18 cases" in res.notes[0]
    assumed = plan_study(folder, expected=0.75, raters=[4], items=[18], simulations=20,
                         n_boot=100)
    assert assumed.source.startswith("assumed alpha 0.75")
    assert ("The study's own ratings (out/ratings.csv) were not used: --expected 0.75 was "
            "given instead.") in assumed.notes


def test_kappa_plans_name_the_statistic(study000):
    res = plan_study(study000, statistic="fleiss_kappa", measure="direction", expected=0.6,
                     raters=[4], items=[18], simulations=20, n_boot=1)
    assert res.statistic == "fleiss_kappa" and res.level == "nominal"
    assert "Fleiss' kappa on 'direction'" in res.notes[0]
    cohen = plan_study(study000, statistic="cohen_kappa", measure="direction",
                       expected=0.6, raters=[2], items=[18], simulations=20, n_boot=1)
    assert set(cohen.table["raters"]) == {2}
    # Cohen's kappa compares two raters: a third is refused, never dropped in silence
    with pytest.raises(UsageError, match="Cohen's kappa compares two raters"):
        plan_study(study000, statistic="cohen_kappa", measure="direction", expected=0.6,
                   raters=[2, 3], items=[18], simulations=20, n_boot=1)


def test_no_record_after_generate(study000):
    """Recording after generate would change the sealed spec hash: refused."""
    res = plan_study(study000, expected=0.75, raters=[4], items=[18, 400],
                     target=Target(width=0.3), simulations=10, n_boot=50)
    (study000 / "sealed").mkdir()
    (study000 / "sealed" / "key.json").write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match="already generated"):
        record_plan(study000, res)
    assert not (study000 / SIZING_FILE).exists()
    # the command refuses before planning: it wrote out/plan.xlsx, then refused
    result = CliRunner().invoke(cli, ["plan", str(study000), "--record", "--expected", "0.7"])
    assert result.exit_code == 2 and "already generated" in result.output
    assert not (study000 / "out" / "plan.xlsx").exists()


def test_options_that_would_be_ignored_are_refused(study000):
    with pytest.raises(UsageError, match="not value shares"):
        plan_study(study000, statistic="icc", expected=0.7, shares=[1.0] * 21)
    with pytest.raises(UsageError, match="--assurance is for ICC"):
        plan_study(study000, expected=0.7, assurance=0.8, **FAST)
    # Zou's assurance with an --above target was dropped for --probability's 0.8, and
    # 0 read as "not given" (Bonett's plan, exit 0); below 0.5 Zou's term is negative
    with pytest.raises(UsageError, match="--assurance goes with a --width target"):
        plan_study(study000, statistic="icc", expected=0.7, assurance=0.9,
                   target=Target(edge=0.5))
    for assurance in (0, 1e-9, 0.4, 1.0):
        with pytest.raises(UsageError, match=rf"--assurance {assurance:g}: give the "
                                             "probability that the interval is no wider"):
            plan_study(study000, statistic="icc", expected=0.7, assurance=assurance,
                       target=Target(width=0.3))
    assert plan_study(study000, statistic="icc", expected=0.7, assurance=0.5,
                      target=Target(width=0.3)).method == "Zou (2012), assurance 0.5"


def test_a_pilot_without_a_unit_rated_twice_names_the_option_to_give(study000, tmp_path):
    """One rater's collected return (the study's own ratings) or a one-rater pilot CSV:
    no unit is rated twice, so nothing can be planned from it. The study's own ratings,
    read without being asked for, give way to the default value, the source line saying
    why; a pilot given by name is refused in one line saying which file was read, why,
    and to give --expected (exit 2), not a bare failure."""
    from sheetflow.collect.run import collect
    from sheetflow.demo.run import run_demo

    folder = run_demo(tmp_path / "demo").folder
    for path in sorted((folder / "returns").iterdir())[1:]:
        path.unlink()
    collect(folder)
    # a dimension: the internal scores rate the total only, so no unit is rated twice
    args = ["plan", str(folder), "--measure", "depth", "--raters", "4", "--items", "18"]
    result = CliRunner().invoke(cli, args)
    assert ("source     assumed alpha 0.75 (the default: out/ratings.csv has no unit with "
            "two or more ratings of 'depth' yet, 1 of 4 raters so far; give --expected or "
            "--pilot)") in result.output, result.output
    result = CliRunner().invoke(cli, [*args, "--pilot", str(folder / "out" / "ratings.csv")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line == ("error: pilot out/ratings.csv (the study's own ratings, 1 of 4 raters "
                    "so far, read as the pilot when --expected is not given): no unit has "
                    "two or more ratings of 'depth', and a pilot needs units rated by at "
                    "least two raters; "
                    "give --expected (the anticipated value, e.g. 0.75) or a pilot that "
                    "has them")
    lone = tmp_path / "lone.csv"
    lone.write_text("unit,rater,value\nc1,r1,3\nc2,r1,4\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"^pilot lone.csv: no unit has two or more .*"
                                          r"give --expected"):
        plan_study(study000, pilot=lone, **FAST)


def test_the_words_name_the_statistic_and_measure_planned(study000):
    """"the anticipated the ICC", and "Planned: alpha on the total" above a plan of
    alpha on 'direction' (asked for with --measure)."""
    with pytest.raises(UsageError, match=r"--expected 1\.2: the anticipated ICC must lie"):
        plan_study(study000, statistic="icc", expected=1.2, target=Target(width=0.3))
    res = plan_study(study000, measure="direction", expected=0.6, **FAST)
    assert res.notes[0].startswith("Planned: alpha on 'direction'. This study as "
                                   "specified (")
    own = plan_study(study000, expected=0.6, **FAST)
    assert own.notes[0].startswith("Planned: alpha on the total against the bands.")


@pytest.mark.parametrize(("content", "code", "said"), [
    (None, 2, "nope.csv: no such file"),
    ("unit,rater,value\n".encode("utf-16"), 1, "is not UTF-8 text; save it as 'CSV UTF-8"),
    (b"", 1, "is empty; a pilot CSV needs the columns unit, rater, value"),
    (b"unit;rater;value\nc1;a;3\n", 1, "is separated by semicolons"),
    (b"unit,rater,value\nc1,a,x\nc1,b,3\n", 1, "value 'x' (unit c1, rater a) is not a value"),
    (b"unit,rater,value\n" + b"".join(f"c{i},{r},3\n".encode() for i in range(9)
                                       for r in "ab"), 2,
     "every rating of 'total' in it is the same value (3), so its alpha is undefined"),
    (b"unit,rater,value\n1,a,3\n1,a,3\n2,a,2\n2,a,2\n3,a,5\n3,a,4\n", 1,
     "nope.csv: line 3: rater 'a' rates unit '1' again (first at line 2); a pilot CSV "
     "has one row per rating"),
])
def test_a_bad_pilot_file_is_one_line_with_its_exit_code(study000, tmp_path, content, code,
                                                         said):
    """A missing pilot exited 3 with Python's own words; bad content exited 3 with the
    codec's error text; a pilot of one value printed 'alpha nan, about nan wide'."""
    pilot = tmp_path / "nope.csv"
    if content is not None:
        pilot.write_bytes(content)
    result = CliRunner().invoke(cli, ["plan", str(study000), "--pilot", str(pilot)])
    assert result.exit_code == code, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ") and said in line, line
    assert "nan" not in line.replace("nope", "")


@pytest.mark.parametrize("edge", [2.0, 1.0, -1.5])
def test_a_lower_bound_edge_no_statistic_reaches_is_refused(edge):
    """'--above 2' was planned against, with the advice to give --expected above it."""
    with pytest.raises(ValueError, match=f"the lower-bound edge {edge:g} must lie between "
                                         r"-1 and 1"):
        Target(edge=edge)


def test_a_repeated_rating_in_a_pilot_is_named_by_its_lines(tmp_path):
    """One rater's rows read as two raters' (alpha 0.949 from a lone rater), and a pilot
    pasted twice moved its alpha; the lines are an editor's, past blank lines and a
    quoted cell that spans two, and a row without a value or of another dimension is
    no rating."""
    measure = Measure("q", "ordinal", (1, 2, 3), 1)
    pilot = tmp_path / "pilot.csv"
    pilot.write_text('unit,rater,value,dimension\n\n"u\n1",a,1,q\nu2,a,,q\nu2,a,2,q\n'
                     'u2,a,2,other\n\n"u2",a,3,q\n', encoding="utf-8")
    with pytest.raises(SpecError, match=r"^.*pilot.csv: line 9: rater 'a' rates unit "
                                         r"'u2' again \(first at line 6\); a pilot CSV"):
        read_pilot_csv(pilot, measure)
    pilot.write_text("unit,rater,value\nu1,a,1\nu1,b,2\nu2,a,1\n", encoding="utf-8")
    assert len(read_pilot_csv(pilot, measure)) == 3


def test_a_second_sitting_in_a_ratings_table_is_not_one_more_rater(tmp_path):
    """Protocol 001's second sitting re-scores items by the same raters; read as a pilot,
    it was one more value per unit (analyze's alpha reads the first sitting)."""
    pilot = tmp_path / "ratings.csv"
    pilot.write_text("rater_id,sitting,case_id,label,dimension,value\n"
                     "R1,1,c1,,q,1\nR2,1,c1,,q,2\nR1,2,c1,,q,3\nR2,,c2,,q,2\n",
                     encoding="utf-8")
    got = read_pilot_csv(pilot, Measure("q", "ordinal", (1, 2, 3), 1))
    assert got.values.tolist() == [["c1", "R1", "1"], ["c1", "R2", "2"], ["c2", "R2", "2"]]


def test_plan_removes_the_staged_workbook_a_killed_plan_left(study000, tmp_path):
    """A plan killed before its commit leaves its staged workbook hidden in out/; the
    next plan removes it, and leaves another output's staged file alone."""
    res = plan_study(study000, expected=0.75, raters=[3], items=[18], **FAST)
    out = tmp_path / "out"
    out.mkdir()
    mine = out / ".plan.xlsx.1234-abcd0123.partial"
    other = out / ".ratings.csv.1234-abcd0123.partial"
    for left in (mine, other):
        left.write_bytes(b"cut off")
    write_plan_workbook(res, out / "plan.xlsx")
    assert not mine.exists()
    assert other.exists()
