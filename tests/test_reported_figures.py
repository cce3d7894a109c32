"""The agreement figures each protocol names beside its decision, on the Summary.

000 section 4.3 names pairwise Cohen's kappa and the ICC on totals; 001 the intra-rater
kappa on the repeated items ("report it even if it is bad"); 002 ICC(A,1). Each is on
the Summary sheet and in ``summary.json`` under ``reported``, with its interval, target
and published reading, and each value is recomputed here from the analysis's own Data
sheet by the textbook formula, not by sheetflow's code:

- ICC(A,1): McGraw & Wong (1996), Psychol. Methods 1, 30-46, table 4 (case 2A), from
  the two-way ANOVA mean squares;
- Cohen's kappa (unweighted, two categories): Cohen (1960), (p_o - p_e) / (1 - p_e).

The readings follow Landis & Koch (1977, Biometrics 33, p. 165) and Koo & Li (2016,
J. Chiropr. Med. 15, p. 161), whose bounds are tested at their edges.
"""

from __future__ import annotations

import re
import types

import numpy as np
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from decision_helpers import fill_returns, methods_by_topic, run_analyze

from sheetflow.analysis.readings import PAST_ONE, icc_reading, kappa_reading
from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


@pytest.mark.parametrize(("kappa", "word"), [
    (-0.01, "poor"), (0.0, "slight"), (0.20, "slight"), (0.21, "fair"), (0.40, "fair"),
    (0.41, "moderate"), (0.604, "moderate"), (0.61, "substantial"), (0.80, "substantial"),
    (0.81, "almost perfect"), (1.0, "almost perfect"), (float("nan"), ""), (None, "")])
def test_kappa_reads_on_landis_and_kochs_table(kappa, word):
    assert kappa_reading(kappa) == word


@pytest.mark.parametrize(("icc", "word"), [
    (0.49, "poor"), (0.5, "moderate"), (0.7499, "moderate"), (0.75, "good"),
    (0.9, "good"), (0.9001, "excellent"), (float("nan"), "")])
def test_icc_reads_on_koo_and_lis_guideline(icc, word):
    assert icc_reading(icc) == word


def icc_a1(matrix: np.ndarray) -> float:
    """ICC(A,1) of an n units x k raters matrix without gaps (McGraw & Wong 1996, case
    2A): (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n)."""
    n, k = matrix.shape
    grand = matrix.mean()
    ss_rows = k * ((matrix.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((matrix.mean(axis=0) - grand) ** 2).sum()
    ss_error = ((matrix - grand) ** 2).sum() - ss_rows - ss_cols
    msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
    mse = ss_error / ((n - 1) * (k - 1))
    return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)


def cohen_kappa(a: list, b: list) -> float:
    """Cohen's (1960) unweighted kappa of two equally long label lists."""
    labels = sorted(set(a) | set(b))
    p_o = np.mean([x == y for x, y in zip(a, b, strict=True)])
    p_e = sum(a.count(c) / len(a) * b.count(c) / len(b) for c in labels)
    return (p_o - p_e) / (1 - p_e)


def data_sheet(root) -> pd.DataFrame:
    """The analysis workbook's Data sheet: one row per unblinded rating."""
    return pd.read_excel(root / "out" / "analysis.xlsx", sheet_name="Data", engine="openpyxl")


def summary_rows(root) -> list[tuple]:
    """The Summary sheet's rows, as values."""
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    return [r for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)]


def reported_row(rows: list[tuple], start: str) -> tuple:
    return next(r for r in rows if isinstance(r[0], str) and r[0].startswith(start))


def test_paired_rubric_reports_icc_and_pairwise_kappa_with_its_target(tmp_path):
    root = tmp_path / "pr"
    init_study(root, "paired-rubric")
    spec = root / "study.toml"  # a target for the ICC: met or not is said, outside the decision
    spec.write_text(spec.read_text(encoding="utf-8").replace(
        "[analysis.targets]\n", "[analysis.targets]\nicc = 0.95\n"), encoding="utf-8")
    generate_packs(root)
    fill_packs(root, seed=5)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    icc = next(f for f in summary["reported"] if f["figure"].startswith("ICC(A,1)"))
    data = data_sheet(root)
    totals = data[data["dimension"] == "total"].pivot_table(
        index=["case", "arm"], columns="rater", values="value")
    assert icc["value"] == pytest.approx(icc_a1(totals.to_numpy(float)), abs=1e-9)
    assert (icc["units"], icc["raters"]) == (len(totals), 3)
    assert icc["target"] == 0.95 and icc["met"] is (icc["value"] >= 0.95)
    assert icc["reading"] == icc_reading(icc["value"]) and icc["scale"] == "Koo & Li 2016"
    assert icc["ci_low"] < icc["value"] < icc["ci_high"]
    assert summary["decision"]["checks"] and not any(
        "ICC" in c["name"] for c in summary["decision"]["checks"])  # never in the decision
    rows = summary_rows(root)
    shown = reported_row(rows, "Total (total): ICC(A,1) (ICC(2,1))")
    # the packs' order follows the study's random secret, so the value varies by run
    said = "0.950: met" if icc["value"] >= 0.95 else "0.950: not met"
    assert shown[1] == pytest.approx(icc["value"]) and shown[6] == said
    kappas = pd.read_excel(root / "out" / "analysis.xlsx", sheet_name="Cohen kappa",
                           engine="openpyxl")
    depth = kappas[kappas["measure"] == "Depth of Analysis (depth)"]  # as the rubric names it
    pairwise = next(f for f in summary["reported"]
                    if f["measure"] == "depth" and "Cohen" in f["figure"])
    assert pairwise["value"] == pytest.approx(depth["kappa"].mean())
    low = depth.loc[depth["kappa"].idxmin()]
    assert pairwise["note"] == (f"lowest pair {low['rater 1']} with {low['rater 2']}: "
                                f"{low['kappa']:.3f} ({low['units']} units)")
    # the headline names the weighting: quadratic-weighted kappa on the point values
    # reads higher than the unweighted one, and the Summary said only "Cohen's kappa"
    assert set(depth["weights"]) == {"quadratic"}
    shown = reported_row(rows, "Depth of Analysis (depth): Cohen's kappa (quadratic weights), "
                               "mean of 3 rater pairs")
    assert shown[6] == "none set" and shown[7].startswith(
        f"{kappa_reading(pairwise['value'])} (Landis & Koch 1977); lowest pair")
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    (other,) = [r[1] for r in methods.iter_rows(values_only=True)
                if r[0] == "Other agreement figures"]
    assert "Each kappa's name gives its weighting: unweighted on nominal dimensions, " \
        "quadratic weights on ordered ones" in other


def test_keep_known_reports_the_intra_rater_kappa_even_when_it_is_bad(tmp_path):
    """A simulated owner fills both sittings; then every KEEP mark of sitting 2 is set
    against the owner's sitting-1 mark for that item (a blank mark means No): a kappa
    below 0, reported with its interval and read "poor"."""
    root = tmp_path / "kk"
    init_study(root, "keep-known")
    generate_packs(root)
    fill_packs(root, seed=5)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    first, second = (next(p for p in manifest["packs"] if p["sitting"] == s) for s in (1, 2))
    # sitting 2's KEEP marks set against sitting 1's for the same items (turning over
    # sitting 2's own simulated marks left the agreement to chance: kappa was at times
    # just above 0, by the study's random secret)
    book = openpyxl.load_workbook(root / L.RETURNS_DIR / first["file"])
    kept = {cell["item_id"]: book[cell["sheet"]][cell["cell"]].value == "Yes"
            for cell in L.iter_answer_cells(first)
            if cell["part"] == "value" and cell["dimension"] == "keep"}
    path = root / L.RETURNS_DIR / second["file"]
    wb = openpyxl.load_workbook(path)
    for cell in L.iter_answer_cells(second):
        if cell["part"] == "value" and cell["dimension"] == "keep":
            wb[cell["sheet"]][cell["cell"]].value = None if kept[cell["item_id"]] else "Yes"
    wb.save(path)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    data = data_sheet(root)
    keep = data[data["dimension"] == "keep"].fillna({"value": "No"}).pivot_table(
        index="case", columns="sitting", values="value", aggfunc="first").dropna()
    expected = cohen_kappa(keep[1].tolist(), keep[2].tolist())
    assert expected < 0  # every mark turned over: no agreement beyond what chance gives
    rec = next(f for f in summary["reported"] if f["measure"] == "keep")
    assert rec["figure"] == "intra-rater Cohen's kappa (unweighted), sitting 1 vs 2 (owner-01)"
    assert rec["value"] == pytest.approx(expected, abs=1e-9)
    assert rec["units"] == len(keep) == 30
    assert rec["reading"] == "poor" and rec["ci_low"] <= rec["value"] <= rec["ci_high"]
    shown = reported_row(summary_rows(root), "KEEP (keep): intra-rater Cohen's kappa")
    assert shown[1] == pytest.approx(expected) and shown[7] == "poor (Landis & Koch 1977)"


def test_anchored_plan_reports_icc_a1_of_its_second_ratings(tmp_path):
    """The primary rater's component scores vary by item; the second rater scores the
    subset 2 points lower on completeness for every other item: ICC(A,1) on the
    recomputed totals of the doubly rated items, by the textbook formula."""
    root = tmp_path / "ap"
    init_study(root, "anchored-plan")
    generate_packs(root)
    seen: dict[str, int] = {}

    def answer(pack, cell):
        number = int("".join(ch for ch in cell["item_id"] if ch.isdigit()))
        dim = cell["dimension"]
        if dim == "material_errors":
            return 0
        if dim == "severe_safety":
            return "No"
        value = 5 + (number * 3) % 11
        if pack["rater_id"] != "R-7QX" and dim == "completeness":
            seen.setdefault(cell["item_id"], len(seen))
            value -= 2 * (seen[cell["item_id"]] % 2)
        return value

    fill_returns(root, answer)
    collect(root)
    locked = CliRunner().invoke(cli, ["lock", str(root)])
    assert locked.exit_code == 0, locked.output
    fill_returns(root, answer)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    data = data_sheet(root)
    totals = data[data["dimension"] == "total"].pivot_table(
        index="case", columns="rater", values="value").dropna()
    assert totals.shape[1] == 2 and len(totals) >= 4
    rec = next(f for f in summary["reported"] if f["figure"].startswith("ICC(A,1)"))
    assert rec["value"] == pytest.approx(icc_a1(totals.to_numpy(float)), abs=1e-9)
    assert (rec["units"], rec["raters"]) == (len(totals), 2)
    shown = reported_row(summary_rows(root),
                         "Recomputed total (0-100) (total): ICC(A,1) (ICC(2,1))")
    assert shown[1] == pytest.approx(rec["value"]) and shown[6] == "none set"
    # the items rated once (outside the second rater's subset) are left out, and the
    # reading says so beside the figure, as items outside the subset, not as missing
    rated = data[data["dimension"] == "total"]["case"].nunique()
    few = "fewer than 10 units: too few for a stable interval"
    assert shown[7] == (f"{icc_reading(rec['value'])} (Koo & Li 2016); {rated - len(totals)} "
                        f"of {rated} items are outside the second-rater subset (rated once); "
                        f"{few}")
    # the ICC is what the plan sizes for 002: the command prints it beside the alphas,
    # in their form (it was on the workbook's first page only)
    lo, hi = (f"{rec[k]:.3f}" for k in ("ci_low", "ci_high"))
    assert (f"icc        Recomputed total (0-100) (total): ICC(A,1) (ICC(2,1)), two-way, "
            f"absolute agreement, single rater {rec['value']:.3f} [95% CI {lo}, {hi}] "
            f"({len(totals)} units, 2 raters) {icc_reading(rec['value'])} (Koo & Li 2016); "
            f"{rated - len(totals)} of {rated} items are outside the second-rater subset") \
        in out.output
    # the ICC's F-based interval rests on the same few units as the alphas' bootstrap
    # ones, and is marked as they are: in summary.json, on the screen, on its sheet
    assert rec["note"].endswith(f"; {few}")
    assert [i["note"] for i in summary["icc"]] == [few]  # its reason says what was dropped
    icc_line = next(ln for ln in out.output.splitlines() if ln.startswith("icc "))
    assert icc_line.endswith(few), icc_line
    icc_sheet = pd.read_excel(root / "out" / "analysis.xlsx", sheet_name="ICC",
                              engine="openpyxl")
    assert all(str(n).endswith(few) for n in icc_sheet["note"]), icc_sheet["note"]
    # its alphas rest on the few doubly rated items: each bootstrap interval says so,
    # on the screen, on the Summary, on the Alpha sheet, and the Methods sheet says why
    total = next(a for a in summary["alpha"] if a["measure"] == "total")
    # on 4 units some resamples have no variation: their count follows the mark
    said_alpha = total["note"]
    assert total["n_units"] == len(totals) < 10 and re.fullmatch(
        re.escape(few) + r"(; \d+ of 1000 resamples had no variation \(alpha undefined\) "
        r"and (?:was|were) left out of the interval)?", said_alpha), said_alpha
    line = next(ln for ln in out.output.splitlines()
                if ln.startswith("alpha      Recomputed total"))
    assert line.endswith(f"({len(totals)} units, 2 raters; {said_alpha})"), line
    alpha_row = next(r for r in summary_rows(root) if r[0] == "Recomputed total (0-100) (total)"
                     and r[6] == "interval")
    assert alpha_row[4] == len(totals) and alpha_row[7].endswith(said_alpha)
    sheet = pd.read_excel(root / "out" / "analysis.xlsx", sheet_name="Alpha", engine="openpyxl")
    shown_total = sheet[sheet["measure"] == "Recomputed total (0-100) (total)"]
    assert shown_total["note"].tolist() == [said_alpha]
    methods = methods_by_topic(root)
    said = methods["Intervals on few units"]
    assert f"rests on fewer than 10 units is marked \"{few}\" beside it" in said
    assert "the ICC's F-based interval" in said and "exact only under the normal" in said
    assert "Gwet" not in said and "Cohen" not in said  # only the intervals reported
    assert "see Intervals on few units" in methods["Krippendorff's alpha"]


@pytest.mark.parametrize(("units", "said"), [
    (9, "fewer than 10 units: too few for a stable interval"), (10, "")])
def test_an_interval_on_fewer_than_ten_units_is_marked(units, said):
    from sheetflow.words import few_units_note

    assert few_units_note(units, 0.1, 0.9) == said
    assert few_units_note(units, float("nan"), 0.9) == ""  # no interval, nothing to mark


def test_every_kind_of_agreement_interval_on_few_units_is_marked():
    """Kappa (Cohen's, intra-rater), Fleiss', Gwet's, the ICC's and Spearman's tables:
    the same mark at the same threshold as alpha's, after what the note already says,
    and none where there is no interval to read."""
    from sheetflow.analysis.readings import ZERO_WIDTH, few_units_notes, interval_notes

    few = "fewer than 10 units: too few for a stable interval"
    kappas = interval_notes(pd.DataFrame({
        "ci_low": [0.1, 0.1, 1.0, float("nan")], "ci_high": [0.9, 0.9, 1.0, float("nan")],
        "n_units": [9, 10, 4, 4], "p_o": [0.6, 0.6, 1.0, 0.5], "p_e": [0.5, 0.5, 0.5, 0.5]}))
    assert kappas["note"].tolist() == [few, "", f"{ZERO_WIDTH}; {few}", ""]
    icc = few_units_notes(pd.DataFrame({
        "ci_low": [0.1, 0.1, float("nan")], "ci_high": [0.9, 0.9, float("nan")],
        "n_units": [9, 10, 4], "note": ["listwise deletion", "", ""]}))
    assert icc["note"].tolist() == [f"listwise deletion; {few}", "", ""]
    rho = few_units_notes(pd.DataFrame({"ci_low": [0.1], "ci_high": [0.9], "n": [6]}),
                          units="n")
    assert rho["note"].tolist() == [few]
    # the Methods text names the intervals reported, each kind with why it is marked
    from sheetflow.words import few_units_method

    said = few_units_method(["gwet", "spearman_internal", "percent_agreement"])
    assert "Gwet's AC1/AC2's standard-error interval and Spearman's rho's Fisher-z" in said
    assert "large-sample approximation" in said and "bootstrap" not in said
    assert few_units_method(["percent_agreement"]) == ""


def test_two_raters_report_their_one_pair_with_its_interval(tmp_path):
    """answer-review has two raters: the pair's own kappa and interval, no "mean"."""
    root = tmp_path / "ar"
    init_study(root, "answer-review")
    # a fixed secret fixes the packs' orders, so the seeded answers are the same each run
    # (with a fresh secret, one run in many draws a column both raters agree on throughout)
    generate_packs(root, secret=bytes(range(32)))
    fill_packs(root, seed=5)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    kappas = pd.read_excel(root / "out" / "analysis.xlsx", sheet_name="Cohen kappa",
                           engine="openpyxl")
    for rec in (f for f in summary["reported"] if "Cohen" in f["figure"]):
        named = load_study(root).rubric.named(rec["measure"])  # the sheet names it so
        row = kappas[kappas["measure"] == named].iloc[0]
        weighting = "unweighted" if row["weights"] == "identity" else \
            f"{row['weights']} weights"
        assert rec["figure"] == (f"Cohen's kappa ({weighting}) of {row['rater 1']} with "
                                 f"{row['rater 2']}")
        assert (rec["value"], rec["ci_low"], rec["ci_high"]) == pytest.approx(
            (row["kappa"], row["95% CI low"], row["95% CI high"]))
        # nothing else to say of one pair, but how an interval can pass 1
        assert rec["note"] == ("" if rec["ci_high"] <= 1 else PAST_ONE)


# a stub study whose N/A answers are a category of their own: the pairwise readings
# below have no N/A answers to name
_NO_NA_STUDY = types.SimpleNamespace(
    plan=types.SimpleNamespace(params={"na_handling": "category"}))

def test_pairs_without_a_kappa_are_counted_out_loud():
    """A pair sharing no unit has no kappa: the mean leaves it out and says so."""
    from types import SimpleNamespace

    from sheetflow.analysis.readings import reported_figures

    table = pd.DataFrame({
        "measure": ["depth"] * 3, "rater1": ["R1", "R1", "R2"], "rater2": ["R2", "R3", "R3"],
        "n_units": [10, 0, 10], "kappa": [0.5, np.nan, 0.7], "ci_low": [0.1, np.nan, 0.3],
        "ci_high": [0.9, np.nan, 1.0], "reason": ["", "no unit rated by both", ""]})
    ctx = SimpleNamespace(target=lambda name, default=None: default,
                          study=_NO_NA_STUDY)
    (rec,) = reported_figures(ctx, {"cohen_kappa": table})
    assert rec["figure"] == ("Cohen's kappa, mean of 2 of 3 rater pairs (1 undefined: no "
                             "unit rated by both)")
    assert rec["value"] == pytest.approx(0.6) and rec["raters"] == 3
    # the two pairs in the mean rest on 10 units each; the undefined one on none
    assert rec["units"] == 10 and rec["units_range"] is None
    assert rec["note"] == "lowest pair R1 with R2: 0.500 (10 units)"


@pytest.mark.parametrize(("weights", "named"), [("quadratic", "quadratic weights"),
                                                ("identity", "unweighted")])
def test_a_pairwise_kappa_names_its_weighting(weights, named):
    """A quadratic-weighted kappa on point values reads higher than the unweighted one
    (0.651 against 0.508 in the demo): the figure's name says which it is."""
    from types import SimpleNamespace

    from sheetflow.analysis.readings import reported_figures

    table = pd.DataFrame({
        "measure": ["depth"] * 2, "rater1": ["R1", "R1"], "rater2": ["R2", "R3"],
        "n_units": [10, 10], "kappa": [0.5, 0.7], "ci_low": [0.1, 0.3],
        "ci_high": [0.9, 1.0], "reason": ["", ""], "weights": [weights] * 2})
    ctx = SimpleNamespace(target=lambda name, default=None: default,
                          study=_NO_NA_STUDY)
    (rec,) = reported_figures(ctx, {"cohen_kappa": table})
    assert rec["figure"] == f"Cohen's kappa ({named}), mean of 2 rater pairs"


def _ratings_with_a_rater_on_fewer_cases(study, seed: int = 11) -> pd.DataFrame:
    """Random depth ratings by every rater of ``study`` on every case and arm, except
    that the last rater rated only the first half of the cases."""
    rng = np.random.default_rng(seed)
    cases = [it.id for it in study.items]
    raters = [r.id for r in study.raters]
    domain = study.rubric.dimension("depth").value_domain()
    rows = [{"rater": r, "case": c, "label": label, "arm": arm, "dimension": "depth",
             "value": float(domain[rng.integers(len(domain))]), "confidence": "High"}
            for r in raters for c in cases[:len(cases) // 2 if r == raters[-1] else None]
            for label, arm in (("A", "iter1_baseline"), ("B", "iter2_improved"))]
    return pd.DataFrame(rows)


def test_a_pairwise_mean_says_the_range_of_units_its_pairs_rest_on(tmp_path):
    """One rater rated half the cases: the pairs with them rest on half the units. The
    mean's units are the range, never the largest pair's N."""
    from sheetflow.analysis import run_plan
    from sheetflow.report import write_analysis_workbook
    from sheetflow.spec.templates import data_dir

    study = load_study(data_dir("templates") / "paired-rubric")
    res = run_plan(study, _ratings_with_a_rater_on_fewer_cases(study))
    pairs = res.tables["cohen_kappa"]
    pairs = pairs[pairs["measure"] == "depth"]
    fewest, most = int(pairs["n_units"].min()), int(pairs["n_units"].max())
    assert fewest < most
    rec = next(f for f in res.summary["reported"]
               if f["measure"] == "depth" and "Cohen" in f["figure"])
    assert rec["units"] is None and rec["units_range"] == [fewest, most]
    low = pairs.loc[pd.to_numeric(pairs["kappa"]).idxmin()]
    assert rec["note"].startswith(f"lowest pair {low['rater1']} with {low['rater2']}: "
                                  f"{low['kappa']:.3f} ({low['n_units']} units)")
    write_analysis_workbook(res, tmp_path / "analysis.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "analysis.xlsx")["Summary"]
    rows = [r for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)]
    shown = reported_row(rows, "Depth of Analysis (depth): Cohen's kappa (quadratic weights), "
                               "mean of")
    assert (shown[4], shown[5]) == (f"{fewest}-{most}", len(study.raters))


def test_a_kappa_interval_past_one_says_why():
    """A kappa of 0.883 with interval 0.708 to 1.058 stood on the Summary with nothing
    saying how an interval can pass 1 (the Methods sheet alone said it is not cut)."""
    from types import SimpleNamespace

    from sheetflow.analysis.readings import reported_figures

    table = pd.DataFrame([{"measure": "overall", "rater1": "A", "rater2": "B",
                           "n_units": 30, "kappa": 0.883, "ci_low": 0.708, "ci_high": 1.058,
                           "reason": ""}])
    ctx = SimpleNamespace(target=lambda _name, default=None: default,
                          study=_NO_NA_STUDY)
    (rec,) = reported_figures(ctx, {"cohen_kappa": table})
    assert rec["ci_high"] == 1.058 and rec["note"].endswith(PAST_ONE)
    inside = table.assign(ci_high=0.99)
    (rec,) = reported_figures(ctx, {"cohen_kappa": inside})
    assert PAST_ONE not in rec["note"]


def test_a_zero_width_kappa_interval_says_its_own_cause():
    """Agreement on every unit, on none, exactly at chance, or one side of one category:
    each zero-width interval's note names the cause that holds for it."""
    from sheetflow.analysis.readings import (
        ZERO_WIDTH,
        ZERO_WIDTH_CHANCE,
        ZERO_WIDTH_NONE,
        ZERO_WIDTH_OTHER,
        interval_notes,
        one_category_note,
    )

    table = interval_notes(pd.DataFrame({
        "ci_low": [1.0, -1.0, 0.0, 0.0, 0.2], "ci_high": [1.0, -1.0, 0.0, 0.0, 0.2],
        "n_units": [30] * 5, "p_o": [1.0, 0.0, 0.8, 0.6, 0.5],
        "p_e": [0.5, 0.5, 0.8, 0.6, 0.375], "one_category": ["", "", "", "sitting 2", ""]}))
    assert table["note"].tolist() == [ZERO_WIDTH, ZERO_WIDTH_NONE, ZERO_WIDTH_CHANCE,
                                      one_category_note("sitting 2"), ZERO_WIDTH_OTHER]
    assert "agree on every unit" not in " ".join(table["note"].tolist()[1:])


def test_a_kappa_0_by_construction_gets_no_landis_koch_reading():
    """A rater who gave one category throughout fixes kappa at 0 (Cohen 1960; the
    statistics say "0 by construction" and give no interval): Landis & Koch's "slight"
    read it as if the raters' agreement had produced it. It is now not read."""
    from sheetflow.analysis.readings import NOT_READ, reported_figures
    from sheetflow.report.headline import figure_line
    from sheetflow.stats import cohen_kappa

    pair = cohen_kappa([[1, 1, 1, 1], [1, 2, 1, 2]]).assign(
        measure="overall", rater1="A", rater2="B")
    assert pair.loc[0, "kappa"] == 0 and np.isnan(pair.loc[0, "ci_low"])
    ctx = types.SimpleNamespace(target=lambda _name, default=None: default,
                                study=_NO_NA_STUDY)
    (rec,) = reported_figures(ctx, {"cohen_kappa": pair})
    assert rec["reading"] == NOT_READ and rec["scale"] == ""
    assert kappa_reading(0.0) == "slight"  # what it was read as
    line = figure_line(rec, "overall")
    assert "not read: 0 by construction" in line and "slight" not in line \
        and "undefined" not in line
    intra = pair.drop(columns=["rater1", "rater2"]).assign(rater="A")
    (rec,) = reported_figures(ctx, {"intra_rater_kappa": intra})
    assert rec["reading"] == NOT_READ


def test_a_pairwise_mean_says_how_many_pairs_are_0_by_construction():
    """Raters A (1 on every unit), B (1 2 1 2), C (1 1 2 1): by Cohen's (1960) formula
    the pairs with A have p_o = p_e, so kappa 0 by construction; B with C has, by hand,
    p_o = 1/4, p_e = (1/2)(3/4) + (1/2)(1/4) = 1/2, kappa = (1/4 - 1/2) / (1/2) = -0.5.
    Light's (1971) mean of the pairs' kappas counts all three: (0 + 0 - 0.5) / 3. The
    figure says that two of its three pairs are 0 by construction."""
    from sheetflow.analysis.readings import NOT_READ, reported_figures
    from sheetflow.stats import cohen_kappa

    pairs = cohen_kappa([[1, 1, 1, 1], [1, 2, 1, 2], [1, 1, 2, 1]]).assign(measure="overall")
    assert pairs["kappa"].tolist() == pytest.approx([0.0, 0.0, -0.5])
    ctx = types.SimpleNamespace(target=lambda _name, default=None: default,
                                study=_NO_NA_STUDY)
    (rec,) = reported_figures(ctx, {"cohen_kappa": pairs})
    assert rec["figure"] == ("Cohen's kappa (unweighted), mean of 3 rater pairs, 2 of them "
                             "0 by construction (a rater gave one category throughout)")
    assert rec["value"] == pytest.approx(-0.5 / 3) and rec["reading"] != NOT_READ
    # every pair fixed: the mean is not read, and the figure says why
    alone = cohen_kappa([[1, 1, 1, 1], [1, 2, 1, 2], [1, 2, 2, 1]]).assign(measure="overall")
    alone = alone[alone["rater1"] == alone["rater1"].iloc[0]]  # the pairs with A only
    (rec,) = reported_figures(ctx, {"cohen_kappa": alone})
    assert rec["reading"] == NOT_READ and rec["figure"].endswith(
        "mean of 2 rater pairs, 2 of them 0 by construction (a rater gave one category "
        "throughout)")
