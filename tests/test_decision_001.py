"""Protocol 001 end to end on planted returns with a known decision.

Two owners mark every item. An item is KEPT (KEEP yes, KNOWN no) when it is among the
first k of its arm in the items file that are not already in the corpus; every other
item is neither. Owner 1 keeps b3 9, b6 4, b1 2, b4 3 of 15; owner 2 keeps b3 8, b6 4,
b1 3, b4 3. Yield b3 17/30 against b1 5/30: the permutation p is below 0.05 and b3
(0.567) is above b4 (0.2): SIGNAL, PASS, b3 ahead of b1 by 0.4 with Newcombe's
interval. The trend is computed by hand over near/mid/far only (the single-note arm's
"single" band takes no part). Sitting 2 repeats the marks 48 hours later.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import warnings
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from decision_helpers import passed_cell, run_analyze
from scipy import stats as sps

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.stats import monte_carlo_se, newcombe_difference, wilson_interval
from sheetflow.words import p_said
from sheetflow.workbook import layout as L

KEPT = {"owner-01": {"b3_distance_forced": 9, "b6_distance_forced_critic": 4,
                     "b1_random_pairing": 2, "b4_single_note": 3},
        "owner-02": {"b3_distance_forced": 8, "b6_distance_forced_critic": 4,
                     "b1_random_pairing": 3, "b4_single_note": 3}}
DAY = dt.datetime(2026, 10, 2, 9, 0)


def _items(root: Path) -> list[dict[str, str]]:
    with (root / "items.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _kept(items: list[dict[str, str]], owner: str, kept: dict | None = None) -> set[str]:
    out: set[str] = set()
    for arm, k in (kept or KEPT)[owner].items():
        out |= {it["item_id"] for it in items if it["arm"] == arm and it["in_corpus"] == "no"}
        out -= set(sorted(it["item_id"] for it in items if it["arm"] == arm
                          and it["in_corpus"] == "no")[k:])
    return out


def _batch_time(sitting: int, batch: int, part: str) -> dt.datetime:
    start = DAY + dt.timedelta(days=2 * (sitting - 1), hours=batch)
    return start + dt.timedelta(minutes=40) if part == "end" else start


def _study(root: Path, owners: tuple[str, ...], marks: dict | None = None,
           when=None, said: dict | None = None, edit=None) -> Path:
    init_study(root, "keep-known")
    if edit is not None:  # e.g. fewer items
        edit(root)
    (root / "raters.csv").write_text(
        "rater_id,name,last_name,email,role\n" + "".join(
            f"{o},Owner {o[-1]},Owner,{o}@example.org,primary\n" for o in owners),
        encoding="utf-8")
    generate_packs(root)
    items = _items(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    (root / "returns").mkdir(exist_ok=True)
    for pack in manifest["packs"]:
        kept = _kept(items, pack["rater_id"], marks)
        wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
        for a in L.iter_answer_cells(pack):
            if a["part"] == "value":
                # the owner consents (a No keeps their files out: consent-refused)
                yes = a["item_id"] in kept if a["dimension"] == "keep" else \
                    a["dimension"] == "consent"
                own = (said or {}).get(pack["rater_id"], {}).get(a["dimension"])
                wb[a["sheet"]][a["cell"]].value = own or ("Yes" if yes else "No")
        for b in pack["batches"]:
            for part in ("start", "end"):
                wb[b[part]["sheet"]][b[part]["cell"]].value = (when or _batch_time)(
                    pack["sitting"], b["batch"], part)
        wb.save(root / "returns" / pack["file"])
    collect(root)
    return root


def _outputs(root: Path):
    return run_analyze(root)


@pytest.fixture(scope="module")
def two_owners(tmp_path_factory):
    root = _study(tmp_path_factory.mktemp("p001") / "two", ("owner-01", "owner-02"))
    return (root, *_outputs(root))


def _counts(root: Path) -> dict[str, tuple[int, int]]:
    items = _items(root)
    out = {}
    for arm in KEPT["owner-01"]:
        ids = {it["item_id"] for it in items if it["arm"] == arm}
        out[arm] = (sum(len(ids & _kept(items, o)) for o in KEPT), 2 * len(ids))
    return out


def test_decision_arms_and_intervals(two_owners):
    root, out, summary, rows = two_owners
    assert out.exit_code == 0, out.output
    decision = summary["decision"]
    assert decision["status"] == "pass"
    checks = {c["name"]: c for c in decision["checks"]}
    perm = checks["permutation p (b3_distance_forced vs b1_random_pairing)"]
    # items shuffled with both owners' ratings (about 0.018); pooled as independent
    # ratings it would be far smaller
    assert perm["passed"] is True and perm["value"] < 0.05
    # the winner is re-chosen in every shuffle: never below the fixed-winner reading
    permutation = summary["permutation"]
    assert permutation["p"] == perm["value"] >= permutation["p_fixed_winner"]
    assert "max-statistic" in permutation["statistic"]
    above = checks["winner b3_distance_forced above reference b4_single_note"]
    assert above["passed"] is True and above["value"] == pytest.approx(17 / 30)
    counts = _counts(root)
    assert counts["b3_distance_forced"] == (17, 30) and counts["b1_random_pairing"] == (5, 30)
    arms = summary["arms"]
    assert arms["winner"] == "b3_distance_forced" and arms["other"] == "b1_random_pairing"
    gap = newcombe_difference(17, 30, 5, 30).loc[0]
    assert arms["effect"] == pytest.approx(0.4)
    assert arms["ci"] == pytest.approx([gap["ci_low"], gap["ci_high"]])
    for arm, (k, n) in counts.items():
        w = wilson_interval(k, n).loc[0]
        got = summary["yield_ci"][arm]
        assert (got["n_yield"], got["n"]) == (k, n)
        assert type(got["n_yield"]) is int and type(got["n"]) is int  # 9, never 9.0
        assert [got["ci_low"], got["ci_high"]] == pytest.approx([w["ci_low"], w["ci_high"]])
        assert got["note"] == ""  # 30 ratings: no few-units mark
    # no few-units mark (30 ratings), but the pooled owners' ratings are named
    assert arms["ci_note"] == POOLED_GAP and all(f["gap_note"] == "" for f in summary["fisher"])
    assert rows[2] == "DECISION: PASS"
    assert f"arms: {arms['sentence']}" in rows
    assert any(r.startswith("gap b3_distance_forced vs b1_random_pairing: 40.0% [95% CI")
               for r in rows)  # yields and their gaps read as percentages
    assert f"yield b3_distance_forced: 17/30 = 56.7% [95% CI 39.2%, 72.6%] ({POOLED})" in rows


POOLED_GAP = ("the interval pools the 2 owners' ratings as if independent: descriptive, "
              "too narrow when owners agree")
POOLED = "pooled over 2 owners as if independent: descriptive"


def test_figures_pooled_over_two_owners_are_marked_where_shown(two_owners):
    """With two owners the Wilson intervals, the Newcombe gaps and the Fisher p pool
    their ratings as if independent (an item's arm is shared by both): the Methods called
    them descriptive, yet the Summary's yield, gap and Fisher lines, and the Fisher p
    quoted in the reference check's decision line, carried no mark. Each now says so on
    its line. The decision's own p (the permutation test, items shuffled with both
    owners' ratings) is no pooled test and carries no such mark."""
    _, out, summary, rows = two_owners
    assert all(c["pooled"] == POOLED for c in summary["yield_ci"].values())
    assert [f["pooled"] for f in summary["fisher"]] == [POOLED, POOLED]
    shown = [r for r in rows if r.startswith(("yield b", "gap b", "Fisher one-sided"))]
    assert len(shown) == 4 + 2 + 2 and all(r.endswith(f" ({POOLED})") for r in shown), shown
    fisher = next(f for f in summary["fisher"] if f["comparison"].endswith("b1_random_pairing"))
    assert (f"Fisher one-sided test: b3_distance_forced vs b1_random_pairing: "
            f"{p_said(fisher['p'])} ({POOLED})") in rows
    checks = {c["name"]: c for c in summary["decision"]["checks"]}
    above = checks["winner b3_distance_forced above reference b4_single_note"]
    to_ref = next(f for f in summary["fisher"] if f["comparison"].endswith("b4_single_note"))
    quoted = (f"the one-sided Fisher test of the two ({p_said(to_ref['p'])}, {POOLED}) is "
              "reported, not decided on")
    assert above["note"].endswith(quoted) and quoted in out.output
    assert any(r.startswith("- winner b3_distance_forced") and r.endswith(quoted)
               for r in rows)
    decided = next(r for r in rows if r.startswith("- permutation p"))
    assert "pooled" not in decided and "descriptive" not in decided


def _csv_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


T2_COLUMNS = ["arm", "n", "n_yield", "yield", "ci_low", "ci_high", "note", "n_keep",
              "n_known", "known_rate", "n_in_corpus"]
T3_COLUMNS = ["band", "score", "n", "n_yield", "yield", "ci_low", "ci_high", "note",
              "none_rate"]


def test_pooled_figures_are_marked_on_their_sheets_and_in_the_results_files(two_owners):
    """The Yield Fisher and Trend by band sheets and results/T2.csv and T3.csv showed
    the same pooled Wilson intervals, gap intervals, Fisher and trend p as the Summary,
    with no mark: read there they passed for valid inference. Each CSV now ends with a
    pooled column saying it on every row; each sheet says it once, above its table, in
    the rows printed on every page (a column of it wrapped every row eight lines tall
    and broke the Yield Fisher sheet over two pages). The Summary still marks each
    line once."""
    root, _, _, rows = two_owners
    for name, columns, n in (("T2.csv", T2_COLUMNS, 4), ("T3.csv", T3_COLUMNS, 3)):
        head, *body = _csv_rows(root / "out" / "results" / name)
        assert head == [*columns, "pooled"] and len(body) == n, (name, head)
        assert {r[-1] for r in body} == {POOLED}, name
    book = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    for title, first in (("Yield Fisher", "arm"), ("Trend by band", "band")):
        ws = book[title]
        assert ws["A1"].value == f"Every row of this table: {POOLED}", title
        assert ws["A3"].value == first and ws.print_title_rows == "$1:$3", title
        header = [c.value for c in ws[3]]
        assert "pooled" not in header and ws.max_column == len(header), title
        assert not any(POOLED in str(c.value) for row in ws.iter_rows(min_row=2)
                       for c in row), title
        assert len(ws.row_breaks.brk) == 0, title  # six rows print on one page
    marked = [r for r in rows if "pooled over" in str(r)]
    assert marked and all(str(r).count("pooled over") == 1 for r in marked)
    methods = " ".join(str(c.value) for c in book["Methods"]["B"])
    assert ("with two or more owners a last column, pooled, says on every row that the "
            "interval pools their ratings as if independent") in methods
    assert ("the Yield Fisher and Trend by band sheets say it above their tables, "
            "results/T2.csv and T3.csv in their pooled column") in methods


def test_one_owners_figures_carry_no_pooled_mark(one_owner_null):
    """With one owner each rating is an item: nothing is pooled, nothing marked; the
    results files have the columns they always had, and the sheets no line above."""
    root, out, summary, rows = one_owner_null
    assert {c["pooled"] for c in summary["yield_ci"].values()} == {""}
    assert {f["pooled"] for f in summary["fisher"]} == {""}
    assert not any("pooled" in r for r in rows) and "pooled" not in out.output
    for name, columns in (("T2.csv", T2_COLUMNS), ("T3.csv", T3_COLUMNS)):
        path = root / "out" / "results" / name
        assert _csv_rows(path)[0] == columns and "pooled" not in path.read_text("utf-8")
    book = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    assert book["Yield Fisher"]["A1"].value == "arm"
    assert book["Trend by band"]["A1"].value == "band"


def _band_counts(root):
    """Kept items and ratings per distance band (near, mid, far), counted by hand from
    the planted keeps, with the bands' scores 1, 2, 3."""
    items = {it["item_id"]: it for it in _items(root)}
    kept = [_kept(list(items.values()), o) for o in KEPT]
    x, n = [], []
    for band in ("near", "mid", "far"):
        ids = [i for i, it in items.items() if it["distance_band"] == band]
        x.append(sum(i in k for k in kept for i in ids))
        n.append(2 * len(ids))
    return np.array(x, float), np.array(n, float), np.array([1.0, 2.0, 3.0])


def test_trend_over_near_mid_far_only_by_hand(two_owners):
    root, _, summary, _ = two_owners
    x, n, s = _band_counts(root)
    p_bar, s_bar = x.sum() / n.sum(), (n * s).sum() / n.sum()
    chi2 = (x * (s - s_bar)).sum() ** 2 / (p_bar * (1 - p_bar) * (n * (s - s_bar) ** 2).sum())
    trend = summary["trend"]
    assert trend["bands"] == ["near", "mid", "far"] and trend["n"] == n.sum()
    assert trend["statistic"] == pytest.approx(chi2, rel=1e-12)
    assert trend["p"] == pytest.approx(sps.chi2.sf(chi2, 1), rel=1e-12)
    # 15 single-note items, each rated by both owners: items are not ratings
    assert "15 items (30 ratings) outside the ordered bands left out ('single')" \
        in trend["note"]


def _band_line(x, n) -> str:
    """Each band's yield with its counts, as the trend line lists them."""
    return ", ".join(f"{b} {k / m:.1%} ({int(k)}/{int(m)})"
                     for b, k, m in zip(("near", "mid", "far"), x, n, strict=True))


RISE = {"owner-01": {"b3_distance_forced": 6, "b6_distance_forced_critic": 2,
                     "b1_random_pairing": 1, "b4_single_note": 2}}


def _one_owner_bands(root, kept) -> tuple[np.ndarray, np.ndarray]:
    """One owner's kept items and items per band (near, mid, far), counted by hand."""
    items = _items(root)
    keep = _kept(items, "owner-01", kept)
    x = [sum(it["item_id"] in keep for it in items if it["distance_band"] == b)
         for b in ("near", "mid", "far")]
    n = [sum(it["distance_band"] == b for it in items) for b in ("near", "mid", "far")]
    return np.array(x, float), np.array(n, float)


def _hand_trend(x: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """Cochran-Armitage z and two-sided p with scores 1, 2, 3, by hand."""
    s = np.array([1.0, 2.0, 3.0])
    p_bar, s_bar = x.sum() / n.sum(), (n * s).sum() / n.sum()
    z = (x * (s - s_bar)).sum() / np.sqrt(p_bar * (1 - p_bar) * (n * (s - s_bar) ** 2).sum())
    return float(z), float(sps.chi2.sf(z * z, 1))


def test_the_trend_line_says_its_direction_and_sidedness(tmp_path):
    """Protocol 001 Analysis, secondary: yield by distance band (Cochran-Armitage trend).
    One owner's planted keeps give near 2/18, mid 1/13, far 6/14 (counted by hand): not
    monotone, yet the linear trend test shows a rise (z > 0 by hand, two-sided p 0.033,
    below the plan's 0.05), so the line names the direction, as a linear trend, with
    each band's yield and counts beside it."""
    root = _study(tmp_path / "rise", ("owner-01",), RISE)
    _, summary, rows = _outputs(root)
    x, n = _one_owner_bands(root, RISE)
    assert (x.tolist(), n.tolist()) == ([2, 1, 6], [18, 13, 14])
    z, p = _hand_trend(x, n)
    assert z > 0 and p < 0.05
    trend = summary["trend"]
    assert trend["z"] == pytest.approx(z, rel=1e-12)
    assert trend["sided"] == "two-sided" and trend["shown"] is True
    assert trend["direction"] == "yield rises across the bands (linear trend)"
    line = next(r for r in rows if str(r).startswith("trend across"))
    assert line == (f"trend across near -> mid -> far: yield rises across the bands (linear "
                    f"trend) (Cochran-Armitage, two-sided p = {p:.4f}, below 0.05; z = "
                    f"{z:.3f}, chi2 {z * z:.3f}, n 45); yield {_band_line(x, n)}; 15 items "
                    "outside the ordered bands left out ('single')")
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = " ".join(str(c.value) for c in methods["B"])
    assert "its p is two-sided (chi-square, 1 df: a trend either way counts). A direction " \
           "is stated only when that p is below alpha_test" in text


def test_the_none_rate_by_band_says_its_reading(tmp_path):
    """Protocol 001 Analysis, secondary: "NONE rate by band". The protocol never defines
    NONE; sheetflow reads it as neither KEEP nor KNOWN marked, and the Methods now say
    so. Planted: one owner keeps b3 6, b6 2, b1 1, b4 2 and marks KNOWN on D003 (near,
    kept: both marks), D012 (far, kept) and D036 (near, not kept); counted by hand per
    band."""
    from decision_helpers import KEEP, edit_returns

    root = _study(tmp_path / "none", ("owner-01",), RISE)
    known = {"D003", "D012", "D036"}
    edit_returns(root, lambda pack, cell: "Yes" if cell["dimension"] == "known"
                 and cell["item_id"] in known else KEEP)
    collect(root)
    _outputs(root)
    items = _items(root)
    keep = _kept(items, "owner-01", RISE)
    by_hand = {b: sum(it["item_id"] not in keep | known for it in items
                      if it["distance_band"] == b) /
               sum(it["distance_band"] == b for it in items) for b in ("near", "mid", "far")}
    assert by_hand["near"] == pytest.approx(15 / 18)  # 2 kept, D036 known, of 18
    with (root / "out" / "results" / "T3.csv").open(encoding="utf-8") as fh:
        t3 = {r["band"]: float(r["none_rate"]) for r in csv.DictReader(fh)}
    assert t3 == pytest.approx(by_hand, rel=1e-5)
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = " ".join(str(c.value) for c in methods["B"])
    assert ("The protocol asks for a NONE rate by band without defining NONE; sheetflow "
            "reads it as the share of the band's sitting-1 ratings with neither KEEP nor "
            "KNOWN marked.") in text


def test_two_owners_trend_reads_no_direction_from_pooled_ratings(tmp_path):
    """Protocol 001 Analysis (secondary: Cochran-Armitage trend by band) and Multi-owner
    extension. A second owner repeating the first's marks adds no evidence about the
    bands: one owner's near 1/18, mid 1/13, far 4/14 give p = 0.065 by hand, no trend
    shown; the same marks twice, pooled as if independent, give p = 0.009, and the
    Summary said "yield rises". An item's band is shared by all its ratings, so with
    two owners the trend is descriptive and no direction is read from its p; the arms
    line's Newcombe interval, pooled the same way, is marked as such."""
    same = {"b3_distance_forced": 5, "b6_distance_forced_critic": 1,
            "b1_random_pairing": 0, "b4_single_note": 1}
    root = _study(tmp_path / "twin", ("owner-01", "owner-02"),
                  {"owner-01": same, "owner-02": same})
    _, summary, rows = _outputs(root)
    x, n = _one_owner_bands(root, {"owner-01": same})
    assert (x.tolist(), n.tolist()) == ([1, 1, 4], [18, 13, 14])
    assert _hand_trend(x, n)[1] > 0.05  # one owner's evidence: no trend shown
    z, p = _hand_trend(2 * x, 2 * n)
    assert p < 0.05  # the trap: the same marks counted twice
    trend = summary["trend"]
    assert trend["p"] == pytest.approx(p, rel=1e-12)
    assert trend["shown"] is False and trend["direction"] == "no direction read"
    assert trend["n_owners"] == 2
    line = next(r for r in rows if str(r).startswith("trend across"))
    assert line == (f"trend across near -> mid -> far: no direction read (the 2 owners' "
                    "ratings pooled as if independent, though an item's band is shared by "
                    "all its ratings, so this p is too small when owners agree: descriptive; "
                    f"Cochran-Armitage, two-sided p = {p:.5f}; z = {z:.3f}, chi2 "
                    f"{z * z:.3f}, n 90); yield {_band_line(2 * x, 2 * n)}; 15 items "
                    "(30 ratings) outside the ordered bands left out ('single')")
    assert "rises" not in line and "falls" not in line
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = " ".join(str(c.value) for c in methods["B"])
    assert "with two or more owners it reads no direction at all" in text
    # the arms line's Newcombe interval pools the same marks twice: narrower than one
    # owner's evidence gives, so it is marked, never passed off as a 95% interval
    one, twice = (newcombe_difference(5 * k, 15 * k, 0, 15 * k).loc[0] for k in (1, 2))
    assert twice["ci_high"] - twice["ci_low"] < one["ci_high"] - one["ci_low"]
    arms = summary["arms"]
    assert arms["ci"] == pytest.approx([twice["ci_low"], twice["ci_high"]])
    assert arms["ci_note"] == POOLED_GAP
    assert f"({POOLED_GAP}); permutation test of the yield gap" in arms["sentence"]
    assert "the Newcombe interval of the gap then pool the owners' ratings and are " \
           "descriptive" in text


def test_the_trend_direction_in_words():
    """A direction only when the two-sided p is below alpha: the sign of z alone is no
    evidence of one."""
    from sheetflow.analysis.p001_keep_known import trend_direction

    assert trend_direction(-2.6, 0.009, 0.05) == "yield falls across the bands (linear trend)"
    assert trend_direction(2.6, 0.009, 0.05) == "yield rises across the bands (linear trend)"
    assert trend_direction(-0.767, 0.443, 0.05) == "no trend shown"
    assert trend_direction(-2.6, 0.009, 0.005) == "no trend shown"  # the plan's alpha
    assert trend_direction(float("nan"), 0.01, 0.05) == "no trend shown"
    assert trend_direction(0.0, 1.0, 0.05) == "no trend shown"


def test_a_degenerate_two_owner_fit_is_not_quoted(two_owners):
    """The two planted owners keep nearly the same items, so the owner variance has
    nothing to estimate: statsmodels stops on the boundary (variance 0) at a point whose
    Hessian is not positive definite, with an intercept of about 0 for a control arm
    whose yield is 5/30 and a standard error in the millions, yet says converged. The
    table says not converged and not usable with the reasons, shows no standard error
    or interval, and the Summary quotes no effect of it."""
    smf = pytest.importorskip("statsmodels.formula.api")
    import pandas as pd

    root, _, summary, rows = two_owners
    items = _items(root)
    arms = ["b1_random_pairing", "b3_distance_forced", "b4_single_note",
            "b6_distance_forced_critic"]
    frame = pd.DataFrame([{"owner": o, "arm": it["arm"],
                           "y": float(it["item_id"] in _kept(items, o))}
                          for o in KEPT for it in items])
    frame["arm"] = pd.Categorical(frame["arm"], categories=arms)
    with warnings.catch_warnings():  # the referee's own refit: broken as planted
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ C(arm)", frame, groups=frame["owner"]).fit(reml=True)
    assert abs(fit.params["Intercept"] - 5 / 30) > 0.1 and fit.bse["Intercept"] > 1
    model = summary["mixed_effects"]
    assert model["fitted"] and model["n_owners"] == 2
    assert model["usable"] is False and model["converged"] is False
    assert model["effects"] == []
    assert "Hessian is not positive definite" in model["reason"]
    assert "owner variance is estimated at 0" in model["reason"]
    assert f"mixed-effects model (2 owners): fit not usable, no owner-adjusted effect is " \
           f"reported: {model['reason']}" in rows
    assert not any(str(r).startswith("mixed-effects (2 owners)") for r in rows)
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Mixed-effects model"]
    head = [c.value for c in sheet[1]]
    first = dict(zip(head, [c.value for c in sheet[2]], strict=True))
    assert (first["converged"], first["usable"]) == ("No", "No")
    # blank on every row, those columns are left off the sheet
    assert first.get("standard error") is None and first.get("95% CI low") is None
    assert first["reason"] == model["reason"]


def test_verdicts_and_results_files(two_owners):
    root, _, summary, _ = two_owners
    lines = [json.loads(x) for x in
             (root / "out" / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 * (60 + 30)
    assert {line["sitting"] for line in lines} == {1, 2}
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    arm_of = {it["item_id"]: it["arm"] for it in _items(root)}
    kept = {o: _kept(_items(root), o) for o in KEPT}
    for line in lines:
        assert set(line) >= {"item_id", "arm", "keep", "known", "sitting", "rater",
                             "batch", "batch_start", "batch_end"}
        assert line["arm"] == arm_of[line["item_id"]]
        assert line["keep"] == ("Yes" if line["item_id"] in kept[line["rater"]] else "No")
        pack = next(p for p in key["packs"] if p["rater_id"] == line["rater"]
                    and p["sitting"] == line["sitting"])
        batch = pack["order"].index(line["item_id"]) // 20 + 1
        assert line["batch"] == batch
        assert line["batch_start"] == _batch_time(line["sitting"], batch, "start").isoformat()
        assert line["batch_end"] == _batch_time(line["sitting"], batch, "end").isoformat()
    t2 = list(csv.DictReader((root / "out" / "results" / "T2.csv").open(encoding="utf-8")))
    assert [r["arm"] for r in t2] == list(KEPT["owner-01"].keys()) or len(t2) == 4
    b3 = next(r for r in t2 if r["arm"] == "b3_distance_forced")
    assert (int(b3["n"]), int(b3["n_yield"])) == (30, 17)
    assert float(b3["ci_low"]) == pytest.approx(summary["yield_ci"]["b3_distance_forced"]
                                                ["ci_low"], abs=1e-5)
    t3 = list(csv.DictReader((root / "out" / "results" / "T3.csv").open(encoding="utf-8")))
    assert [r["band"] for r in t3] == ["near", "mid", "far"]
    assert sum(int(r["n"]) for r in t3) == 2 * 45


def test_one_owner_gets_a_clear_note_instead_of_the_model(tmp_path):
    root = _study(tmp_path / "one", ("owner-01",))
    out, summary, rows = _outputs(root)
    assert out.exit_code == 0, out.output
    assert summary["mixed_effects"]["fitted"] is False
    note = ("mixed-effects model: not fitted: the mixed-effects model needs two or more "
            "owners (owner as a random effect); the ratings analysed here come from 1 owner")
    assert note in rows
    assert summary["decision"]["status"] in ("pass", "null")


def test_a_missing_owner_is_not_said_to_leave_the_study_with_one(tmp_path):
    """Protocol 001 Multi-owner extension: two owners are planned and owner-02 returns
    nothing; analyze --allow-partial analyses owner-01 alone. The model's note said
    "this study has 1" though the study has two owners: it says the ratings analysed
    come from one owner, and the panel line names the missing one."""
    root = _study(tmp_path / "partial", ("owner-01", "owner-02"))
    for path in (root / "returns").glob("*owner-02*"):
        path.unlink()
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1 and summary["decision"]["status"] == "incomplete"
    assert summary["mixed_effects"]["fitted"] is False
    assert ("mixed-effects model: not fitted: the mixed-effects model needs two or more "
            "owners (owner as a random effect); the ratings analysed here come from 1 owner"
            ) in rows
    assert not any("this study has 1" in str(r) for r in rows)
    assert any(str(r).startswith("panel: 1 of 2 expected raters") and "MISSING owner-02"
               in str(r) for r in rows)


def _exact_best_of_p(n: int, ones: dict[str, int]) -> float:
    """Exact max-statistic p for one owner: every arm has ``n`` items, ``ones`` the
    yields of b3, b6 (candidates), b1 (control) and b4 (shuffled along); enumerated
    over the multivariate hypergeometric counts of ones under random relabelling."""
    from itertools import product
    from math import comb

    total_ones = sum(ones.values())
    observed = max(ones["b3"], ones["b6"]) - ones["b1"]
    hits = 0
    for b3, b6, b1 in product(range(n + 1), repeat=3):
        b4 = total_ones - b3 - b6 - b1
        if 0 <= b4 <= n and max(b3, b6) - b1 >= observed:
            hits += comb(n, b3) * comb(n, b6) * comb(n, b1) * comb(n, b4)
    return hits / comb(4 * n, total_ones)


def test_two_owners_are_not_pooled_as_independent_ratings(tmp_path):
    """Pseudo-replication planted: two owners give identical marks (b3 5, b6 4, b1 1,
    b4 2 kept of 15), so the second owner adds no information about the arms. Shuffling
    the 120 ratings as if independent gives p = 0.0145 exactly (a false signal); the
    honest null shuffles the 60 items, each with both owners' ratings, and its p is the
    one-owner exact p 0.1023 (enumeration of the hypergeometric counts). The decision
    is a null, and the summary says two owners allow no general claim (protocol 001:
    five owners before any generalisation)."""
    same = {"b3_distance_forced": 5, "b6_distance_forced_critic": 4,
            "b1_random_pairing": 1, "b4_single_note": 2}
    owners = ("owner-01", "owner-02")
    root = _study(tmp_path / "same", owners, {o: same for o in owners})
    out, summary, rows = _outputs(root)
    assert out.exit_code == 0, out.output
    # b3 and b6 each lose in-corpus items, whose yield is 0 but which count in n
    ones = {"b3": 5, "b6": 4, "b1": 1, "b4": 2}
    exact = _exact_best_of_p(15, ones)
    assert exact == pytest.approx(0.1023, abs=5e-5)
    pooled = _exact_best_of_p(30, {k: 2 * v for k, v in ones.items()})
    assert pooled < 0.05  # the trap: ratings treated as independent
    perm = summary["permutation"]
    m = perm["n_permutations"]
    se = (exact * (1 - exact) / m) ** 0.5
    assert abs(perm["p"] - exact) < 4 * se + 1 / m, (perm["p"], exact)
    assert perm["n_owners"] == 2 and "each with its 2 owners' ratings" in perm["statistic"]
    decision = summary["decision"]
    assert decision["status"] == "null"
    owners_check = next(c for c in decision["checks"] if c["name"].startswith("owners"))
    assert owners_check["value"] == 2 and owners_check["outcome"] == "reported"
    assert "no general claim" in owners_check["note"]
    assert passed_cell(root, owners_check["name"]) == "no target"  # nothing to pass
    assert rows[2].startswith("NULL: no signal shown (permutation p = ")


def _hurried(sitting: int, batch: int, part: str) -> dt.datetime:
    """Sitting 1: batch 2 starts 20 minutes into batch 1, batch 3 has zero length;
    sitting 2 starts 3 hours after sitting 1 ended."""
    if sitting == 2:
        start = DAY + dt.timedelta(hours=9 + batch)
        return start + dt.timedelta(minutes=30) if part == "end" else start
    starts = {1: DAY, 2: DAY + dt.timedelta(minutes=20), 3: DAY + dt.timedelta(hours=5)}
    lengths = {1: 40, 2: 40, 3: 0}
    start = starts.get(batch, DAY + dt.timedelta(hours=batch))
    return start + dt.timedelta(minutes=lengths.get(batch, 30)) if part == "end" else start


def test_owner_record_and_every_deviation_reach_the_summary(tmp_path):
    """Protocol 001 Reporting: rater description (relationship, time spent, breaks,
    deviations) and per-owner compensation and consent; planted batch times that
    overlap, have zero length and start sitting 2 three hours after sitting 1."""
    said = {"owner-01": {"relationship": "my own research notes, 2019-2026",
                         "breaks": "none", "deviations": "looked up one item",
                         "compensation": "none", "consent": "Yes"}}
    root = _study(tmp_path / "hurried", ("owner-01",), when=_hurried, said=said)
    out, summary, rows = _outputs(root)
    assert out.exit_code == 0, out.output
    codes = {(i.code, i.cell) for i in collect(root, write=False).report.issues}
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    cells = {b["batch"]: b for b in pack["batches"]}
    assert ("batch-time-overlap", cells[2]["start"]["cell"]) in codes
    assert ("batch-time-zero", cells[3]["end"]["cell"]) in codes
    assert any(code == "sitting-too-soon" for code, _ in codes)
    record = json.loads((root / "out" / "results" / "metadata.json").read_text("utf-8"))
    assert record["irb"].startswith("no IRB approval is claimed")
    (owner,) = record["owners"]
    assert {k: owner[k] for k in said["owner-01"]} == said["owner-01"]
    # sitting 1: 40 + 40 + 0 minutes; sitting 2 (30 repeats): two batches of 30 minutes
    assert owner["minutes_spent"] == {"1": 80.0, "2": 60.0}
    found = owner["deviations_found"]
    assert "sitting 1: Batch 2 starts at 2026-10-02 09:20, before batch 1 ends " \
           "(2026-10-02 09:40)" in found
    assert "sitting 1: batch 3 starts and ends at 2026-10-02 14:00" in found
    last_end = max(_hurried(1, b, "end") for b in cells)
    hours = (_hurried(2, 1, "start") - last_end).total_seconds() / 3600
    assert f"sitting 2: Batch 1 starts {hours:.1f} h after sitting 1 ended " \
           f"({last_end:%Y-%m-%d %H:%M})" in found
    assert summary["owners"] == record["owners"]
    reported = [d for d in summary["deviations"] if d["source"] == "reported by the owner"]
    assert reported == [{"owner": "owner-01", "source": "reported by the owner",
                         "text": "looked up one item"}]
    assert len(summary["deviations"]) == len(found) + 1
    assert f"deviations from the protocol: {len(found) + 1}" in rows
    assert "deviation (owner-01, reported by the owner): looked up one item" in rows
    # the screen says them beside the intra-rater kappa, the sitting begun too soon named
    screen = out.output.splitlines()
    kappa = max(i for i, ln in enumerate(screen) if ln.startswith("kappa "))
    assert screen[kappa + 1] == (
        f"deviations {len(found)} in the batch times (owner-01), 1 reported by an owner; "
        "sitting 2 began less than 24 hours after sitting 1 (owner-01), so the repeated "
        "marks may be remembered ones; each is listed on the Summary")


def test_no_deviation_line_without_deviations(two_owners):
    _, out, summary, _ = two_owners
    assert summary["deviations"] == []
    assert any(ln.startswith("kappa ") for ln in out.output.splitlines())
    assert not any(ln.startswith("deviations") for ln in out.output.splitlines())


def test_an_answer_meaning_none_is_not_a_deviation(tmp_path):
    """Two owners answer the deviations question " None " and "NO", and the batch times
    show none: the run has no deviation, and the Summary says so instead of counting
    two and quoting "None" and "NO" as deviations."""
    said = {"owner-01": {"deviations": " None "}, "owner-02": {"deviations": "NO"}}
    root = _study(tmp_path / "none", ("owner-01", "owner-02"), said=said)
    out, summary, rows = _outputs(root)
    assert out.exit_code == 0, out.output
    assert summary["deviations"] == []
    assert "deviations from the protocol: none found in the batch times, none reported" \
        in rows
    assert not any(str(r).startswith("deviation (") for r in rows)
    owners = {o["owner"]: o["deviations"] for o in summary["owners"]}
    assert owners == {"owner-01": " None ", "owner-02": "NO"}  # on record as typed


@pytest.mark.parametrize("answer", ["none", "None.", "  no ", "N/A", "-", "nil",
                                    "No deviations", ""])
def test_answers_meaning_none(answer):
    from sheetflow.analysis.owner_record import means_none

    assert means_none(answer)


@pytest.mark.parametrize("answer", ["looked up one item", "nothing unusual, but one break",
                                    "none except one item looked up", "yes"])
def test_answers_that_report_a_deviation(answer):
    from sheetflow.analysis.owner_record import means_none

    assert not means_none(answer)


def test_a_tie_between_the_candidates_is_named(tmp_path):
    """b3 and b6 keep as many (8 and 8 per owner: 16/30 each): the winner was the first
    candidate in the plan, named alone as if it had won. Every test reads the same
    for either, so the decision stands; the tie is named in the check and the arms."""
    tied = {o: {**KEPT[o], "b3_distance_forced": 8, "b6_distance_forced_critic": 8}
            for o in KEPT}
    root = _study(tmp_path / "tie", ("owner-01", "owner-02"), marks=tied)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    names = [c["name"] for c in summary["decision"]["checks"]]
    assert "winner b3_distance_forced (tied with b6_distance_forced_critic) above reference " \
        "b4_single_note" in names
    arms = summary["arms"]
    assert arms["means"]["b3_distance_forced"] == arms["means"]["b6_distance_forced_critic"]
    assert arms["note"] == ("b3_distance_forced and b6_distance_forced_critic have the same "
                            "yield: either reads the same in every test; b3_distance_forced "
                            "is named as the first in the plan")
    assert arms["note"] in arms["sentence"] and f"arms: {arms['sentence']}" in rows


def test_the_headline_says_signal_or_null_in_the_protocols_words(two_owners, tmp_path):
    """Protocol 001: "Anything else is a null and is published as one". Every arm keeps
    as many: the winner is not above the reference and the permutation p is 1 or near
    it, so the status is "null", the headline says so in the protocol's word (never
    "FAIL"), and the exit code is 0, as for any decision."""
    _, _, summary, rows = two_owners
    assert summary["decision"]["reasons"][0] == "signal: the protocol's rule is met"
    flat = {o: {arm: 3 for arm in KEPT[o]} for o in KEPT}  # every arm keeps as many
    root = _study(tmp_path / "null", ("owner-01", "owner-02"), marks=flat)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    decision = summary["decision"]
    assert decision["status"] == decision["provisional_status"] == "null"
    p = summary["permutation"]["p"]
    assert p >= 0.05
    first = (f"no signal shown (permutation p = {p:.3f}, not below 0.05; "
             "b3_distance_forced (tied with b6_distance_forced_critic) not above reference "
             "b4_single_note): a null, published as one, as the protocol says")
    assert decision["reasons"][0] == first and f"- {first}" in rows
    assert rows[2] == f"NULL: {first}" and f"NULL: {first}" in out.output
    assert "FAIL" not in out.output


AUDITED = {"owner-01": {"b3_distance_forced": 2, "b6_distance_forced_critic": 3,
                        "b1_random_pairing": 1, "b4_single_note": 0}}


@pytest.fixture(scope="module")
def one_owner_null(tmp_path_factory):
    """One owner keeps b3 2, b6 3, b1 1, b4 0 of 15: b6 is the winner, 3/15 against the
    control's 1/15 (no signal) and the reference's 0/15 (above it)."""
    root = _study(tmp_path_factory.mktemp("p001") / "null", ("owner-01",), marks=AUDITED)
    return (root, *_outputs(root))


def test_a_trend_the_test_does_not_show_has_no_direction(one_owner_null):
    """Near 2/18, mid 2/13, far 2/14 (counted by hand): z > 0 but the two-sided p is
    far above 0.05, so the line says no trend shown, never "yield rises", and lists
    each band's yield with its counts."""
    root, _, summary, rows = one_owner_null
    items = {it["item_id"]: it for it in _items(root)}
    kept = _kept(list(items.values()), "owner-01", AUDITED)
    x = np.array([sum(i in kept for i, it in items.items() if it["distance_band"] == b)
                  for b in ("near", "mid", "far")], float)
    n = np.array([sum(it["distance_band"] == b for it in items.values())
                  for b in ("near", "mid", "far")], float)
    assert (x.tolist(), n.tolist()) == ([2, 2, 2], [18, 13, 14])
    trend = summary["trend"]
    assert trend["z"] > 0 and trend["p"] > 0.05
    assert trend["direction"] == "no trend shown" and trend["shown"] is False
    assert [(b["band"], b["n_yield"], b["n"]) for b in trend["per_band"]] == \
        [("near", 2, 18), ("mid", 2, 13), ("far", 2, 14)]
    line = next(r for r in rows if str(r).startswith("trend across"))
    assert line.startswith(f"trend across near -> mid -> far: no trend shown "
                           f"(Cochran-Armitage, two-sided p = {trend['p']:.3f}, not below "
                           f"0.05; z = {trend['z']:.3f}")
    assert f"; yield {_band_line(x, n)}; 15 items outside" in line
    assert "rises" not in line and "falls" not in line


def test_a_null_is_named_as_the_protocol_names_it(one_owner_null):
    """The permutation p of b6 vs b1 (3/15 vs 1/15) is not below 0.05: the headline is
    "NULL: no signal shown (...)" on a banner that is not the red of a failure, and the
    exit code 0 (a null is a result)."""
    root, out, summary, rows = one_owner_null
    assert out.exit_code == 0, out.output
    p = summary["permutation"]["p"]
    assert p >= 0.05
    headline = (f"NULL: no signal shown (permutation p = {p:.3f}, not below 0.05): a null, "
                "published as one, as the protocol says")
    assert rows[2] == headline and headline in out.output
    assert "DECISION: FAIL" not in out.output
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    banner = next(c for (c,) in sheet.iter_rows(max_col=1) if c.value == headline)
    assert banner.fill.fgColor.rgb.endswith("FFEB9C")  # amber, as an undecided result


def test_the_reference_arms_yield_is_no_target(one_owner_null):
    """The rule's "winner above B4" compares two yields: b6 3/15 against b4 0/15. The
    check called b4's yield its "target" (0.0%); it names both yields with counts, the
    bar as the reference's yield, and says that no test decides it; the one-sided Fisher
    p of the two (by hand) is beside it."""
    root, out, summary, rows = one_owner_null
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == "winner b6_distance_forced_critic above reference "
                                 "b4_single_note")
    assert check["passed"] is True and check["value"] == pytest.approx(3 / 15)
    assert check["target"] == "above the reference's yield, 0/15 = 0.0%"
    fisher = sps.fisher_exact([[3, 12], [0, 15]], alternative="greater").pvalue
    note = (f"yields b6_distance_forced_critic 3/15 = 20.0% vs the reference b4_single_note "
            f"0/15 = 0.0%; the rule compares the two yields, no test decides it; the "
            f"one-sided Fisher test of the two (p = {fisher:.3f}) is reported, not decided on")
    assert check["note"] == note
    # the terminal's check line is the decision line, its bar in words beside the value
    line = (f"check      winner b6_distance_forced_critic above reference b4_single_note: "
            f"20.0% ({check['target']}): met - {note}")
    assert line in out.output and "target 0.0%" not in out.output
    assert f"- {check['name']}: 20.0% ({check['target']}): met - {note}" in rows
    assert passed_cell(root, check["name"]) == "Yes"
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    row = next(r for r in sheet.iter_rows(max_col=3) if r[0].value == check["name"])
    assert (row[1].value, row[2].value) == (pytest.approx(0.2), check["target"])
    assert row[2].alignment.wrap_text  # wrapped in its narrow column, not clipped


def test_a_sitting_of_one_category_gives_the_true_cause_of_a_zero_kappa(tmp_path):
    """Sitting 2 marks every repeated item No; sitting 1 keeps some. Intra-rater kappa is
    then 0 by construction (chance agreement equals the observed, which is not 1) and
    has no interval: the note says so, on the sheet, the Summary row and in
    summary.json, and never that the two sittings agree on every unit."""
    from plant_helpers import KEEP, plant, study_from

    root = study_from("keep-known", tmp_path / "one")
    kept = _kept(_items(root), "owner-01")

    def answer(cell):
        if cell["dimension"] not in ("keep", "known") or cell["part"] != "value":
            return KEEP
        if cell["sitting"] == 2 or cell["dimension"] == "known":
            return "No"
        return "Yes" if cell["item_id"] in kept else "No"

    plant(root, answer)
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    said = ("sitting 2 used one category throughout, so the agreement expected by chance "
            "equals the observed agreement and kappa is 0 by construction (Cohen 1960), "
            "with no standard error or interval")
    (keep,) = [r for r in summary["reported"]
               if r["analysis"] == "intra_rater_kappa" and r["measure"] == "keep"]
    # R irr::kappa2's 0, and no interval: [0, 0] would claim a certainty
    assert keep["value"] == 0 and keep["ci_low"] is None and keep["ci_high"] is None
    # the statistic's own reason follows
    assert keep["note"].startswith(said) and "agree on every unit" not in keep["note"]
    assert "0 by construction" in keep["note"][len(said):]
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    summary_cells = [str(c) for r in sheet["Summary"].iter_rows(values_only=True)
                     for c in r if c is not None]
    assert any(said in c for c in summary_cells)
    head = [c.value for c in sheet["Intra-rater kappa"][1]]
    notes = [dict(zip(head, [c.value for c in r], strict=True))
             for r in sheet["Intra-rater kappa"].iter_rows(min_row=2)]
    keep_row = next(r for r in notes if str(r["measure"]).startswith("KEEP"))
    assert keep_row["note"] == said and 0 < keep_row["observed agreement"] < 1
    assert "one_category" not in head
    assert f"; {said}" in next(ln for ln in out.output.splitlines()
                               if ln.startswith("kappa      KEEP"))


def test_the_permutation_p_check_is_shown_as_a_p_value(two_owners):
    """The permutation p is a p-value: its check line and the Summary sheet's Checks row
    show it as every p is shown (three significant digits, "< 0.001" below), never as a
    coefficient's three decimals ("0.000 (target 0.050)"); its limit is the level as the
    protocol writes it ("0.05", not "0.0500"); summary.json keeps the exact number."""
    root, out, summary, _ = two_owners
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"].startswith("permutation p"))
    p = check["value"]
    assert check["p_value"] is True and p == summary["permutation"]["p"]
    from sheetflow.words import p_text
    line = f"{check['name']}: {p_text(p, [0.05])} (target below 0.05): met"
    assert any(r.startswith(f"integrity check: {line}") or r.startswith(line)
               for r in summary["decision"]["reasons"]), summary["decision"]["reasons"]
    assert line in out.output
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    cells = next(r for r in sheet.iter_rows(max_col=3) if r[0].value == check["name"])
    assert cells[1].value == p and cells[2].value == 0.05
    shown = '"< 0.001"' if p < 0.001 else "0." + "0" * (len(p_text(p, [0.05])) - 2)
    assert (cells[1].number_format, cells[2].number_format) == \
        (shown, '"below "0.00;"below "-0.00')
    assert check["comparison"] == "<"  # decided as p < alpha: the target says "below"


def test_a_p_value_check_reads_below_a_thousandth_as_every_p_does():
    from sheetflow.analysis.decision import shown_against
    assert shown_against(0.0004, 0.05, p_value=True) == ("< 0.001", "0.05")
    assert shown_against(0.0552, 0.05, p_value=True) == ("0.0552", "0.05")
    # the level as written, the p beside it with the digits that keep it on its side
    assert shown_against(0.0499996, 0.05, p_value=True) == ("0.0499996", "0.05")
    assert shown_against(0.01, 0.025, p_value=True) == ("0.0100", "0.025")
    assert shown_against(0.5, 1e-7, p_value=True) == ("0.500", "0.0000001")
    assert shown_against(0.0004, 0.05) == ("0.000", "0.050")  # a coefficient, as ever


def test_the_permutation_methods_say_the_monte_carlo_error_of_each_p(two_owners):
    """A permutation p from m random shuffles estimates the exact p: the Methods entry
    gives m and the standard error sqrt(p(1 - p)/m) of each p shown, computed from it."""
    from sheetflow.words import p_said
    root, _, summary, _ = two_owners
    perm = summary["permutation"]
    m = perm["n_permutations"]
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    topic, text = "", {}
    for first, second in methods.iter_rows(max_col=2, values_only=True):
        topic = first or topic
        text[topic] = f"{text.get(topic, '')} {second or ''}".strip()

    def se(p: float) -> str:
        value = (p * (1 - p) / m) ** 0.5
        return f"{value:.{1 - math.floor(math.log10(value))}f}"

    assert (f"Monte Carlo error: each p here rests on {m:,} random shuffles, so it "
            f"estimates the exact permutation p with a standard error of sqrt(p(1 - p)/"
            f"{m:,}): {se(perm['p'])} for the decided {p_said(perm['p'], [0.05])} and "
            f"{se(perm['p_fixed_winner'])} for the fixed-winner "
            f"{p_said(perm['p_fixed_winner'], [0.05])}.") in text["Permutation test"]
    assert monte_carlo_se(0.89, 10_000) == pytest.approx(0.00313, abs=5e-6)
