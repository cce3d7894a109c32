"""Protocol 000's decision at the edges of each section 4.4 consequence, end to end on
planted returns whose answer is known before the run.

The three validators give every response the same total (8-15, the improved arm two
points up), so alpha on the total is 1. The internal team's totals are the same, or
(``flat``) 11 for every baseline response and 12 for every improved one: Spearman's
rho is then 0.486, below its 0.60 target, while alpha with the internal team beside the
validators stays 0.749. Direction judgements: the first ``n`` of the 54 (3 raters x 18
cases) name the improved arm, the rest alternate between Tied and the baseline.

Section 4.4 lists no success criteria, only consequences: direction 50-70% is a "weak
signal" (inconclusive), nothing is said below 50% (sheetflow reads it as a fail, and
says so, unless at least half the judgements naming an arm name the improved one: Tied
judgements alone keep the share under the protocol's coin-flip 50%), and rho below 0.60
asks to "investigate" (inconclusive, never a fail).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from decision_helpers import methods_by_topic, run_analyze
from plant_helpers import KEEP, direction, plant, rubric_answer, study_from

from sheetflow.collect.run import collect

CASES = [f"TC-{i:03d}" for i in range(1, 19)]
RATERS = ["EV-01", "EV-02", "EV-03"]
IMPROVED, BASELINE = "iter2_improved", "iter1_baseline"


def _total(case: str, arm: str) -> int:
    i = CASES.index(case)
    return 8 + i % 6 + (2 if arm == IMPROVED else 0)


def _flat(_case: str, arm: str) -> int:
    return 12 if arm == IMPROVED else 11


def _internal(score=_total):
    """Write the internal team's totals, ``score(case, arm)``, before generate."""
    def edit(root: Path) -> None:
        rows = [f"{c},{a},{score(c, a)}" for c in CASES for a in (BASELINE, IMPROVED)]
        (root / "internal_scores.csv").write_text("case_id,arm,total\n" + "\n".join(rows)
                                                  + "\n", encoding="utf-8")
    return edit


def _answers(n_improved: int):
    def answer(cell):
        if cell["dimension"] == "direction" and cell["part"] == "value":
            k = RATERS.index(cell["rater"]) * len(CASES) + CASES.index(cell["item_id"])
            if k < n_improved:
                return direction(cell, IMPROVED)
            return "Tied" if k % 2 else direction(cell, BASELINE)
        if cell["dimension"] == "recognised_arm":
            return "No"
        if cell["scope"] == "response":
            return rubric_answer(_total(cell["item_id"], cell["arm"]), cell)
        return KEEP
    return answer


def _run(root: Path, n_improved: int):
    plant(root, _answers(n_improved))
    collect(root)
    result, summary, rows = run_analyze(root)
    assert result.exit_code == 0, result.output
    checks = {c["name"].split(":")[0].split(" on ")[0]: c for c in summary["decision"]["checks"]}
    return result, summary, rows, checks


@pytest.fixture(scope="module")
def same(tmp_path_factory):
    return study_from("paired-rubric", tmp_path_factory.mktemp("p000e") / "same",
                      _internal())


@pytest.mark.parametrize(("n", "status", "outcome"), [
    (38, "pass", "met"),            # 70.4%
    (37, "inconclusive", "weak"),   # 68.5%: a weak signal
    (27, "inconclusive", "weak"),   # 50.0%: still the weak range
    (14, "fail", "not met"),        # 25.9%, and 14 of the 34 naming an arm: below chance
])
def test_each_direction_range_decides_as_its_consequence_says(same, n, status, outcome):
    _, summary, rows, checks = _run(same, n)
    check = checks["direction agreement with the improved arm"]
    assert check["value"] == pytest.approx(n / 54) and check["outcome"] == outcome
    assert summary["decision"]["status"] == status
    assert rows[2].startswith(f"DECISION: {status.upper()}")
    assert checks["Spearman's rho vs internal"]["outcome"] == "met"
    # the outcome in the protocol's word for the range: 50-70% is its "weak signal"
    said = {"weak": "weak signal"}.get(outcome, outcome)
    assert _outcome_cell(same, "direction agreement with the improved arm") == said
    assert any(r.startswith("- direction agreement with the improved arm: ")
               and f"(target at least 70.0%): {said} - " in r for r in rows), rows
    if outcome == "weak":
        assert check["note"].endswith("'Weak signal; effect size may be smaller than "
                                      "internal estimates' (section 4.4): inconclusive")
    if outcome == "not met":  # sheetflow's own reading, said as such
        assert check["note"].endswith(
            "the protocol states no consequence below 50%; sheetflow reads it as a fail: "
            "fewer than half the judgements name the improved arm, and so do fewer than "
            "half of those naming an arm (Tied left out), short of the 50% the protocol "
            "calls random ('better than random 50%', section 4.3), so no signal is left "
            "to call weak")
    rule = summary["decision"]["rule"]
    assert "(50%-70%: 'weak signal', inconclusive; below 50%: no consequence in the " \
        "protocol, sheetflow reads it as a fail, or as 'weak signal' where at least half " \
        "the judgements naming an arm name the improved one)" in rule
    assert "Spearman's rho vs internal >= 0.60 (below: 'investigate', inconclusive)" in rule
    assert "(0.60-0.70: 'marginal', inconclusive; below 0.60: 'cannot validate', fail)" in rule
    # the Wilcoxon p of 18 equal differences is below 0.001, and reads so
    assert "Wilcoxon signed-rank (two-sided) p < 0.001" in summary["arms"]["sentence"]


@pytest.mark.parametrize(("n", "decisive"), [
    (26, "65.0%"),  # 26 name the improved arm, 14 the baseline, 14 Tied: 48.1%
    (18, "50.0%"),  # 18 each: 33.3%, and exactly the protocol's chance among the 36
])
def test_below_half_only_through_tied_judgements_is_a_weak_signal(same, n, decisive):
    """The protocol's 'better than random 50%' is a coin between the two responses.
    Below 50% of all judgements only because Tied ones count as not naming the improved
    arm, with at least half of those naming an arm naming it, is no fail: sheetflow said
    'no signal is left to call weak' of 26 judgements for the improved arm against 14."""
    _, summary, rows, checks = _run(same, n)
    check = checks["direction agreement with the improved arm"]
    assert check["value"] == pytest.approx(n / 54)
    assert check["outcome"] == "weak" and check["said"] == "weak signal"
    assert summary["decision"]["status"] == "inconclusive"
    assert rows[2].startswith("DECISION: INCONCLUSIVE")
    assert "no signal is left" not in check["note"]
    assert f"leaving Tied judgements out, {decisive} name iter2_improved (which keeps the " \
        "share below 50% from being a fail);" in check["note"]
    assert "not decided on" not in check["note"].split("; ")[1]
    assert check["note"].endswith(
        "below 50% only because Tied judgements count as not naming the improved arm: of "
        f"the judgements naming an arm, {decisive} name it, not below the 50% the protocol "
        "calls random ('better than random 50%', section 4.3), so sheetflow reads it as the "
        "protocol's 'Weak signal; effect size may be smaller than internal estimates' "
        "(section 4.4): inconclusive")
    assert _outcome_cell(same, "direction agreement with the improved arm") == "weak signal"


def test_rho_below_its_target_asks_to_investigate_and_is_not_a_fail(tmp_path):
    root = study_from("paired-rubric", tmp_path / "flat", _internal(_flat))
    result, summary, rows, checks = _run(root, 38)
    rho = checks["Spearman's rho vs internal"]
    assert rho["value"] == pytest.approx(0.486, abs=5e-4)
    assert rho["outcome"] == "weak" and rho["passed"] is False
    # shown in the protocol's word: "weak" is its word for direction agreement of 50-70%
    assert rho["said"] == "investigate"
    assert _outcome_cell(root, "Spearman's rho vs internal") == "investigate"
    assert "- Spearman's rho vs internal: 0.486 (target at least 0.600): investigate - " \
        "'External/internal scoring divergence; investigate systematic interpretation " \
        "differences' (section 4.4): a call to investigate, not a failed validation, so " \
        "inconclusive" in rows
    assert "Spearman's rho vs internal: 0.486 (target at least 0.600): investigate" \
        in result.output
    assert rho["note"].endswith(
        "'External/internal scoring divergence; investigate systematic interpretation "
        "differences' (section 4.4): a call to investigate, not a failed validation, so "
        "inconclusive")
    assert checks["direction agreement with the improved arm"]["outcome"] == "met"
    assert checks["Krippendorff's alpha"]["outcome"] == "met"
    assert checks["Krippendorff's alpha"]["value"] == pytest.approx(0.749, abs=5e-4)
    assert summary["decision"]["status"] == "inconclusive"
    assert rows[2].startswith("DECISION: INCONCLUSIVE")
    assert "DECISION: FAIL" not in result.output


def _outcome_cell(root: Path, check: str) -> str:
    """The Summary sheet's outcome cell (column E) on the row of the check whose name
    starts with ``check``."""
    import openpyxl

    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    return next(r[4] for r in sheet.iter_rows(max_col=5, values_only=True)
                if str(r[0] or "").startswith(check))


def _methods_text(root: Path, topic: str) -> str:
    """Plant 38 improved directions in ``root``, collect, analyse; the Methods sheet's
    text under ``topic``, its continuation rows joined."""
    _run(root, 38)
    return methods_by_topic(root)[topic]


def test_the_methods_sheet_maps_each_consequence_in_the_protocols_words(same):
    said = _methods_text(same, "Decision (000)")
    assert "Any value below its range fails" not in said
    for quoted in ("'Marginal reliability; rubric refinement needed for Iteration 3'",
                   "'Study cannot validate improvement claims; redesign evaluation "
                   "methodology' (section 4.4): fail",
                   "'Weak signal; effect size may be smaller than internal estimates' "
                   "(section 4.4): inconclusive",
                   "the protocol states no consequence below 50%; sheetflow reads it as a "
                   "fail", "investigate systematic interpretation differences' (section "
                   "4.4): a call to investigate, not a failed validation, so inconclusive"):
        assert quoted in said, quoted


@pytest.mark.parametrize(("shift", "alpha", "status", "outcome"), [
    (3, 0.607, "inconclusive", "weak"),  # 'marginal reliability'
    (4, 0.437, "fail", "not met"),       # 'cannot validate improvement claims'
])
def test_the_internal_team_is_a_rater_in_the_decisions_alpha(tmp_path, shift, alpha, status,
                                                             outcome):
    """Sections 4.1-4.2: the validators' scores are aggregated with the internal team's
    into one rater x case matrix. The internal team scores every response ``shift``
    points above the validators (who agree exactly): Spearman's rho is still 1, the
    validators alone have alpha 1, and with the internal team beside them alpha drops
    into the marginal band (3 points) or below it (4): the decision follows the latter."""
    root = study_from("paired-rubric", tmp_path / f"shift{shift}",
                      _internal(lambda c, a: _total(c, a) + shift))
    result, summary, _, checks = _run(root, 38)
    check = checks["Krippendorff's alpha"]
    assert check["value"] == pytest.approx(alpha, abs=5e-4)
    assert check["outcome"] == outcome and summary["decision"]["status"] == status
    said = {"weak": "marginal", "not met": "cannot validate"}[outcome]  # section 4.4
    assert check["said"] == said and _outcome_cell(root, "Krippendorff's alpha") == said
    assert checks["Spearman's rho vs internal"]["value"] == pytest.approx(1.0)
    total = next(a for a in summary["alpha"] if a["measure"] == "total")
    assert total["alpha_validators_only"] == pytest.approx(1.0)
    assert total["n_raters"] == 4  # three validators and the internal team
    said = ("with the internal team's totals as one rater beside the 3 validators (protocol "
            "000 sections 4.1-4.2); validators only: 1.000")
    assert total["note"] == said and said in check["note"]
    alpha_line = next(ln for ln in result.output.splitlines()
                      if ln.startswith("alpha      Total (total)"))
    assert said in alpha_line
    # every other column has no internal score: its alpha is the validators', and says so
    depth = next(a for a in summary["alpha"] if a["measure"] == "depth")
    assert depth["n_raters"] == 3 and depth["note"] == (
        "validators only: internal_scores.csv holds no score for this column (totals only)")
    assert "alpha_validators_only" not in depth


def test_the_methods_sheet_says_who_the_alpha_rests_on(same):
    said = _methods_text(same, "Internal team in alpha (000)")
    assert "'Your scores will be aggregated with other external validators and internal " \
        "research team scores to compute IRR statistics'" in said
    assert "counts the internal team as one more rater beside the validators" in said
    assert "every other column's alpha rests on the validators only" in said


def test_a_rater_who_always_picks_the_left_position_is_named_and_the_pool_apart(same):
    """EV-02 answers A>B on every case; the others name the improved arm wherever it sits.
    EV-02 is flagged, and so is the pool (66.7% A, one biased rater is enough): the pool
    is said on its own line, never listed as a rater "all raters" beside EV-02 (read as
    every rater flagged, where EV-01 and EV-03 chose A only where the improved arm sat)."""
    base = _answers(54)

    def answer(cell):
        if cell["dimension"] == "direction" and cell["part"] == "value" \
                and cell["rater"] == "EV-02":
            return "A>B"
        return base(cell)

    plant(same, answer)
    collect(same)
    result, summary, rows = run_analyze(same)
    assert result.exit_code == 0, result.output
    flagged = [r["rater"] for r in summary["position_bias"] if r["flagged"]]
    assert flagged == ["EV-02", "all raters"]
    assert "Position bias flagged: EV-02 (100.0% A, p < 0.001). Their direction judgements " \
        "may reflect display order rather than quality" in result.output
    pooled = ("Position bias flagged in the judgements of all raters pooled (66.7% A, "
              "p = 0.0198): the direction judgements may reflect display order")
    assert pooled in result.output and any(r.startswith(pooled) for r in rows)
    assert not any("all raters (66.7% A" in r for r in [*rows, *summary["readings"]])


def _blank_baseline(root: Path) -> None:
    """The internal team's totals, and every baseline response blanked (a broken export)."""
    import csv
    import io

    _internal()(root)
    path = root / "items.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    column = rows[0].index("response_baseline")
    for row in rows[1:]:
        row[column] = ""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8", newline="")


def test_an_arm_with_empty_responses_is_said_where_the_decision_is_read(tmp_path):
    """check and generate warn of an empty response column, but the analyst reads the
    Summary: it says which column is empty and on how many items, beside the decision,
    which stays as the scores make it (section 2.4 scores a non-answer 0)."""
    root = study_from("paired-rubric", tmp_path / "blank", _blank_baseline)
    result, summary, rows, _ = _run(root, 38)
    assert summary["decision"]["status"] == "pass"
    said = ("items.csv: column 'response_baseline' (arm iter1_baseline's response) is empty "
            "on all 18 items (rows 2, 3, 4, 5, 6 and 13 more): the raters were shown an "
            "empty response there, and the figures include their scores of it")
    assert summary["panel"]["notes"] == [said]
    assert f"note: {said}" in rows
    assert f"note: {said}" in " ".join(result.output.split())
