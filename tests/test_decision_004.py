"""Protocol 004 end to end on planted judge records: pilot verdict, tie, locked trio.

Every judge gives the same score on all six dimensions of a cell, so each trio mean
is known exactly: A = 3, B = 4, C = 3, D = 4 in every task. H2 (B - A), H3 (D - C) and
H4 (D - A) are all +1 in 3 of 3 tasks and no cell is critical: PILOT PASS.

Ties: a cell planted equal to A gets the same three judges' scores dealt to the judges
in another order, so only float noise can differ. H2 says "B > A": with B tied to A,
H2 is not directional in any task, PILOT FAIL. H4 says "D >= A" (the protocol's own
sign): with D tied to A (and C planted at 2, so H3 stays +1), H4 holds in every task,
PILOT PASS (it had failed, as if H4 said ">"). With one judge's workbook missing the
trio is incomplete: "incomplete", exit 1.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import pytest
from decision_helpers import (
    KEEP,
    edit_returns,
    fill_returns,
    passed_cell,
    refused_before_unsealing,
    run_analyze,
)

from sheetflow.collect.run import collect
from sheetflow.judges.importer import import_judges
from sheetflow.judges.records import DIMENSIONS, judge_mean, verdict_for
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study

WINDOW = "2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z"
JUDGES = ("judge_opus", "judge_gpt", "judge_minimax")


def _set(record: dict, scores: list[list[int]]) -> None:
    """Give the three judges these six-score lists and make every derived field agree."""
    means = []
    for key, six in zip(JUDGES, scores, strict=True):
        judged = record[key]
        judged.update(dict(zip(DIMENSIONS, six, strict=True)))
        judged["mean"] = round(judge_mean(judged), 4)
        judged["overall_verdict"] = verdict_for(judge_mean(judged))
        means.append(judge_mean(judged))
    record["trio_mean"] = round(sum(means) / 3, 4)
    record["trio_strict_pass"] = sum(m >= 3.5 for m in means) >= 2
    record["trio_critical_fail"] = sum(m < 2.0 for m in means) >= 2


def _planted(root: Path, tie: str | None) -> Path:
    lines = (root / "judge-outputs.example.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    a_scores = [[2, 4, 3, 3, 3, 3], [3, 3, 3, 3, 3, 3], [4, 2, 3, 3, 3, 3]]  # means 3, 3, 3
    for r in records:
        level = {"A": 3, "B": 4, "C": 2 if tie == "H4" else 3, "D": 4}[r["cell_id"]]
        tied = {"H2": "B", "H4": "D"}.get(tie or "")
        if r["cell_id"] == "A":
            _set(r, a_scores)
        elif r["cell_id"] == tied:
            _set(r, a_scores[::-1])  # the same scores, dealt to other judges
        else:
            _set(r, [[level] * 6] * 3)
    path = root / "planted.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _run(root: Path, tie: str | None = None, drop: str | None = None):
    init_study(root, "judge-likert")
    generate_packs(root)
    result = import_judges(root, _planted(root, tie), window=WINDOW)
    assert result.summary_path is not None
    imported = json.loads(result.summary_path.read_text(encoding="utf-8"))
    if drop:
        next((root / "returns").glob(f"*{drop}*")).unlink()
    collect(root)
    if drop:
        refused_before_unsealing(root, f"{drop} (sitting 1): no return collected")
    out, summary, _ = run_analyze(root, *(["--allow-partial"] if drop else []))
    if drop:  # the trio is incomplete: the import's pilot summary no longer stands
        assert not result.summary_path.exists()
        return out, summary, imported
    # analyze writes the pilot summary from the ratings it analysed, through the same
    # function as the import: the same document, costs and window kept from the import
    pilot = json.loads(result.summary_path.read_text(encoding="utf-8"))
    assert pilot == imported
    return out, summary, pilot


def _summary_rows(root: Path) -> list[str]:
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    return [str(r[0]) for r in ws.iter_rows(min_row=1, max_row=60, max_col=1, values_only=True)
            if r[0] is not None]


def _checks(summary: dict) -> dict[str, dict]:
    return {c["name"]: c for c in summary["decision"]["checks"]}


def test_planted_pass(tmp_path):
    root = tmp_path / "pass"
    out, summary, pilot = _run(root)
    assert out.exit_code == 0, out.output
    assert summary["decision"]["status"] == "pass"
    checks = _checks(summary)
    for h in ("H2", "H3", "H4"):
        assert checks[f"tasks where {h} is directional (of 3)"]["value"] == 3
    assert checks["judges of the locked trio who scored"]["passed"] is True
    assert checks["critical failures"]["value"] == 0
    deltas = {(h["task"], h["hypothesis"]): h["delta"] for h in summary["hypotheses"]}
    assert len(deltas) == 9 and all(d == pytest.approx(1.0) for d in deltas.values())
    assert pilot["aggregate"] == {"h2_pass_count": 3, "h3_pass_count": 3, "h4_pass_count": 3,
                                  "critical_failures": 0, "pilot_verdict": "PASS"}
    assert _summary_rows(root)[2] == "DECISION: PASS"
    assert summary["pilot"]["pilot_verdict"] == "PASS" and \
        "pilot verdict: PASS (critical failures 0)" in _summary_rows(root)
    # the protocol's "in >= 2 of 3 tasks (6/9 cells minimum)" reads three ways: the
    # Methods sheet says which one the checks use
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = " ".join(str(c.value) for c in methods["B"])
    assert ("Protocol 004's \"directional sign correct on H2/H3/H4 in >= 2 of 3 tasks (6/9 "
            "cells minimum)\" is read as: each hypothesis directional in at least 2 tasks "
            "(pilot_pass_min_tasks), so at least 6 hypothesis-task results directional, the "
            "\"6/9 cells minimum\" this reading implies; not as any 6 of the 9 results (H4 "
            "could then fail in every task), nor as 2 tasks in which all three hold.") in text
    # the Summary's checks table shows counts as whole numbers ("3", not "3.000")
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    (trio,) = [r for r in ws.iter_rows(max_col=3)
               if r[0].value == "judges of the locked trio who scored"]
    assert [(c.value, c.number_format) for c in trio[1:]] == \
        [(3, "0"), (3, '"at least "0;"at least "-0')]


def test_each_target_says_which_side_passes(tmp_path):
    """A bare "target 2" beside 3 directional tasks, and "target 0" beside 0 critical
    failures, did not say which side passes. The target says it, as the check is
    decided (n >= 2, failures == 0 of a count): on the screen, in the Summary's lines
    and its target column (the number kept a number), and summary.json names the
    comparison beside the number."""
    root = tmp_path / "sides"
    out, summary, _ = _run(root)
    checks = _checks(summary)
    tasks, critical = checks["tasks where H2 is directional (of 3)"], checks["critical failures"]
    assert (tasks["target"], tasks["comparison"]) == (2, ">=")
    assert (critical["target"], critical["comparison"]) == (0, "<=")
    for line in ("tasks where H2 is directional (of 3): 3 (target at least 2): met",
                 "critical failures: 0 (target at most 0): met",
                 "judges of the locked trio who scored: 3 (target at least 3): met"):
        assert f"check      {line}" in out.output, out.output
        assert any(r.startswith(f"- {line}") for r in _summary_rows(root)), line
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    cells = {r[0].value: r[2] for r in ws.iter_rows(max_col=3)}
    assert (cells["critical failures"].value, cells["critical failures"].number_format) == \
        (0, '"at most "0;"at most "-0')
    assert cells["tasks where H2 is directional (of 3)"].number_format == \
        '"at least "0;"at least "-0'


def test_an_exact_tie_is_not_directional_for_a_strict_hypothesis(tmp_path):
    root = tmp_path / "tie"
    out, summary, pilot = _run(root, tie="H2")
    assert out.exit_code == 0, out.output
    h2 = [h for h in summary["hypotheses"] if h["hypothesis"] == "H2"]
    assert len(h2) == 3 and all(abs(h["delta"]) < 1e-12 for h in h2)
    assert not any(h["directional_pass"] for h in h2)
    check = _checks(summary)["tasks where H2 is directional (of 3)"]
    assert (check["value"], check["passed"]) == (0, False)
    assert "a tie is not directional" in check["note"]
    assert summary["decision"]["status"] == "fail"
    assert pilot["aggregate"]["h2_pass_count"] == 0
    assert pilot["aggregate"]["pilot_verdict"] == "FAIL"
    rows = _summary_rows(root)
    assert rows[2] == "DECISION: FAIL"
    assert any(r.startswith("- tasks where H2 is directional (of 3): 0 (target at least 2): "
                            "not met")
               for r in rows)


def test_an_exact_tie_holds_h4_which_says_at_least(tmp_path):
    """Protocol 004: "H4 - Sovereignty bridge: Cell D trio mean >= Cell A trio mean"."""
    root = tmp_path / "tie4"
    out, summary, pilot = _run(root, tie="H4")
    assert out.exit_code == 0, out.output
    by = {(h["task"], h["hypothesis"]): h for h in summary["hypotheses"]}
    h4 = [h for (_, name), h in by.items() if name == "H4"]
    assert len(h4) == 3 and all(abs(h["delta"]) < 1e-12 and h["directional_pass"] for h in h4)
    assert all(h["delta"] == pytest.approx(1.0) for (_, name), h in by.items() if name != "H4")
    check = _checks(summary)["tasks where H4 is directional (of 3)"]
    assert (check["value"], check["passed"]) == (3, True)
    assert "a tie counts" in check["note"]
    assert summary["decision"]["status"] == "pass"
    assert pilot["aggregate"]["h4_pass_count"] == 3
    assert pilot["aggregate"]["pilot_verdict"] == "PASS"
    assert _summary_rows(root)[2] == "DECISION: PASS"


def test_a_missing_judge_makes_the_pilot_incomplete(tmp_path):
    root = tmp_path / "missing"
    out, summary, _ = _run(root, drop="judge-3")
    assert out.exit_code == 1, out.output  # --allow-partial: written, still exit 1
    assert summary["decision"]["status"] == "incomplete"
    assert summary["panel"]["missing"] == ["judge-3"]
    trio = _checks(summary)["judges of the locked trio who scored"]
    assert trio["passed"] is False and trio["value"] == 2 and "judge-3" in trio["note"]
    # the line reads "label: value (target): outcome", and the label no longer says
    # "3 of 3 judges scored" beside a value of 2
    assert "check      judges of the locked trio who scored: 2 (target at least 3): not met - " \
        "missing: judge-3" in out.output
    assert "DECISION: INCOMPLETE" in out.output
    rows = _summary_rows(root)
    assert rows[2] == "DECISION: INCOMPLETE"
    # no trio mean anywhere, so no delta: the pilot has no verdict, not a FAIL
    assert summary["pilot"]["pilot_verdict"] == "INCOMPLETE"
    assert summary["pilot"]["undefined_counts"] == {"H2": 3, "H3": 3, "H4": 3}
    assert summary["pilot"]["items_without_trio"] == 12
    (verdict,) = [v for v in summary["verdicts"] if v["name"] == "pilot verdict"]
    assert (verdict["met"], verdict["note"]) == (None, "INCOMPLETE")
    assert "pilot verdict: INCOMPLETE (critical failures 0; 9 hypothesis deltas undefined, " \
        "12 items without a complete trio)" in rows
    for h in ("H2", "H3", "H4"):
        check = _checks(summary)[f"tasks where {h} is directional (of 3)"]
        assert (check["value"], check["passed"], check["outcome"]) == (0, None, "undefined")
        assert "3 of 3 tasks have no delta: task-1, task-2, task-3 (a cell without a " \
            "complete trio: " in check["note"]
    assert summary["decision"]["provisional_status"] == "inconclusive"
    assert not any("FAIL" in r for r in summary["decision"]["reasons"])
    # the rule read "otherwise PILOT FAIL" of any pilot short of a PASS, an incomplete
    # trio among them, while the verdict beside it is INCOMPLETE (or a FAIL the judges
    # there already settle): the rule now says when each is given
    rule = summary["decision"]["rule"]
    assert "otherwise PILOT FAIL" not in rule
    assert "PILOT FAIL when a hypothesis falls short even counting its tasks without a " \
        "delta as right, or an item is a critical failure on the judges' scores there " \
        "are" in rule and "Without the whole trio the decision is INCOMPLETE" in rule
    assert not any(r.startswith("- on the raters included the checks say FAIL") for r in rows)


def test_a_cell_without_a_complete_trio_leaves_the_pilot_incomplete(tmp_path):
    """judge-3's accuracy left blank on cell B of task-1 and task-2, taken in with
    --allow-partial: those two cells have no trio mean, so H2 has no delta in task-1 and
    task-2 and is directional (+1) in task-3 only. One of 3 with two tasks open could
    still reach 2: the H2 check is undefined, not "not met", and with H3, H4 met and no
    critical failure the pilot verdict is INCOMPLETE (it said FAIL, and the reasons "on
    the raters included the checks say FAIL")."""
    root = tmp_path / "no-trio"
    init_study(root, "judge-likert")
    generate_packs(root)
    import_judges(root, _planted(root, None), window=WINDOW)
    with (root / "items.csv").open(encoding="utf-8") as f:
        blank = {r["response_id"] for r in csv.DictReader(f)
                 if r["cell"] == "cell_b_opus_memory_harness"
                 and r["task_id"] in ("task-1", "task-2")}
    assert len(blank) == 2
    edit_returns(root, lambda _pack, a: None if a["item_id"] in blank
                 and a["dimension"] == "accuracy" else KEEP, {"judge-3"})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    assert rows[2] == "DECISION: INCOMPLETE"
    h2 = _checks(summary)["tasks where H2 is directional (of 3)"]
    assert (h2["value"], h2["passed"], h2["outcome"]) == (1, None, "undefined")
    assert h2["note"].endswith("; 2 of 3 tasks have no delta: task-1, task-2 (a cell without "
                               "a complete trio: cell_b_opus_memory_harness)")
    for h in ("H3", "H4"):
        assert _checks(summary)[f"tasks where {h} is directional (of 3)"]["passed"] is True
    assert summary["pilot"]["pilot_verdict"] == "INCOMPLETE"
    assert summary["pilot"]["undefined_counts"] == {"H2": 2, "H3": 0, "H4": 0}
    (verdict,) = [v for v in summary["verdicts"] if v["name"] == "pilot verdict"]
    assert (verdict["met"], verdict["note"]) == (None, "INCOMPLETE")
    assert "pilot verdict: INCOMPLETE (critical failures 0; 2 hypothesis deltas undefined, " \
        "2 items without a complete trio)" in rows
    assert summary["decision"]["provisional_status"] == "inconclusive"
    assert "on the raters included the checks say INCONCLUSIVE" in summary["decision"]["reasons"]
    assert not any("say FAIL" in r for r in rows)
    assert "- tasks where H2 is directional (of 3): 1 (target at least 2): undefined - " \
        f"{h2['note']}" in rows
    deltas = {(h["task"], h["hypothesis"]): h["delta"] for h in summary["hypotheses"]}
    assert deltas[("task-1", "H2")] is None and deltas[("task-3", "H2")] == pytest.approx(1.0)


def test_a_hypothesis_short_even_with_its_open_tasks_is_not_met():
    """Two tasks not directional and one without a delta: at most 1 of 3, short of 2
    whatever the open task holds: not met, and the pilot FAILs; with only one task not
    directional and two open it is undefined and the pilot INCOMPLETE."""
    import pandas as pd

    from sheetflow.analysis.p004_judge_likert import _direction_check, pilot_verdict

    check = _direction_check("H2", 0, 2, 3, (1, ["task-3 (a cell without a complete "
                                                  "trio: B)"]), "delta above 0")
    assert (check.passed, check.outcome) == (False, "not met")
    assert check.note == ("delta above 0; 1 of 3 tasks has no delta: task-3 (a cell without a "
                          "complete trio: B), short of the target even if they were "
                          "directional")
    assert _direction_check("H2", 0, 2, 3, (2, ["x"]), "d").passed is None
    trio = pd.DataFrame({"trio_mean": [3.0, float("nan")], "critical_fail": [False, False]})
    short = pd.DataFrame({"hypothesis": "H2", "delta": [-1.0, 0.0, float("nan")],
                          "directional_pass": False})
    assert pilot_verdict(short, trio, 2)["pilot_verdict"] == "FAIL"
    open_ = short.assign(delta=[-1.0, float("nan"), float("nan")])
    assert pilot_verdict(open_, trio, 2)["pilot_verdict"] == "INCOMPLETE"


def test_a_judge_whose_every_answer_is_blank_did_not_score(tmp_path):
    """judge-3's return has every cell blank, taken in with --allow-partial: analyze said
    "3 raters", "judges of the locked trio who scored: 3 (target at least 3): met" and "3 of 3
    expected raters with ratings". judge-3 scored nothing: 2 raters, the trio check is
    not met, the panel names judge-3 as returned empty, and the exit code is 1."""
    root = tmp_path / "blank"
    init_study(root, "judge-likert")
    generate_packs(root)
    import_judges(root, _planted(root, None), window=WINDOW)
    edit_returns(root, lambda _pack, _cell: None, {"judge-3"})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    assert summary["n_raters"] == 2 and ": 2 of 3 raters, 12 items" in out.output
    trio = _checks(summary)["judges of the locked trio who scored"]
    assert (trio["value"], trio["passed"], trio["note"]) == (2, False, "missing: judge-3")
    assert summary["panel"]["included"] == ["judge-1", "judge-2"]
    assert summary["panel"]["missing_packs"][0]["empty"] is True
    assert summary["decision"]["status"] == "incomplete"
    assert any(r.startswith("panel: 2 of 3 expected raters with ratings (judge-1, judge-2); "
                            "RETURNED EMPTY judge-3: file ") for r in rows), rows
    assert passed_cell(root, "judges of the locked trio who scored") == "No"


def test_equal_cell_means_give_a_delta_of_exactly_zero(monkeypatch):
    """The same trio scores in both cells, averaged in two ways: the two cell means
    differ in the last bit, and the Hypotheses sheet showed -8.88E-16 for a tie.
    Within rounding of its terms the delta is 0 (never directional, as before)."""
    from types import SimpleNamespace

    import numpy as np
    import pandas as pd

    import sheetflow.analysis.p004_judge_likert as p004

    rng = np.random.default_rng(3)
    for _ in range(500):  # the same trio scores, their mean taken in two ways
        scores = rng.integers(1, 6, (18, 3)).tolist()
        better = [(a + b + c) / 3 for a, b, c in scores]
        worse = [a / 3 + b / 3 + c / 3 for a, b, c in rng.permutation(scores).tolist()]
        items = pd.DataFrame({"task": "t1", "arm": ["b"] * 18 + ["w"] * 18,
                              "trio_mean": better + worse})
        means = items.groupby("arm")["trio_mean"].mean()
        if means["b"] != means["w"]:
            break
    else:
        pytest.fail("no case whose means differ in the last bit")
    monkeypatch.setattr(p004, "_trio_items", lambda _ctx: items)
    params = {"hypotheses": [{"id": "H1", "better": "b", "worse": "w"}]}
    ctx = SimpleNamespace(param=lambda name, default=None: params.get(name, default))
    row = p004._hypotheses(ctx).iloc[0]
    assert row["delta"] == 0.0 and not row["directional_pass"] and row["threshold_pass"]
    params["hypotheses"][0]["relation"] = ">="  # "at least": the same tie holds it
    assert bool(p004._hypotheses(ctx).iloc[0]["directional_pass"])


def test_the_rule_says_the_default_tolerance_in_words():
    """The headline read "delta > 1e-09": the default tolerance only absorbs rounding."""
    from sheetflow.analysis.p004_judge_likert import _above

    assert _above(1e-9) == "above 0, beyond rounding"
    assert _above(0.25) == "> 0.25"


CRITICAL_NOTE = ("items with a judge's mean below 2 from at least 2 of 3 judges (critical_below "
                 "in the plan's targets; protocol 004's halt threshold: a cell < 2.0 on a "
                 "majority of judges); not the judges' FAIL_CRITICAL verdict (mean < 2.5)")


def _critical_cell(record: dict, means: list[int]) -> None:
    _set(record, [[m] * 6 for m in means])


def test_the_critical_mark_is_named_and_is_the_protocols(tmp_path):
    """Protocol 004: critical failure is a cell "< 2.0 on majority of judges"; the judges'
    FAIL_CRITICAL verdict (mean < 2.5) is their label, not the halt threshold. Planted:
    task-1's cell C scored 2 by every judge (FAIL_CRITICAL by the judges' bands, not
    below 2.0: no critical failure), task-2's cell C scored 1, 1, 3 (below 2.0 on 2 of 3:
    one critical failure). The check counts 1, names the mark and where it comes from,
    and each hypothesis check says of how many tasks."""
    root = tmp_path / "critical"
    init_study(root, "judge-likert")
    generate_packs(root)
    path = _planted(root, None)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["cell_id"] == "C" and r["task_id"] in ("task-1", "task-2"):
            _critical_cell(r, [2, 2, 2] if r["task_id"] == "task-1" else [1, 1, 3])
    assert [r["judge_opus"]["overall_verdict"] for r in records
            if r["cell_id"] == "C" and r["task_id"] == "task-1"] == ["FAIL_CRITICAL"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert import_judges(root, path, window=WINDOW).summary_path is not None
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    check = _checks(summary)["critical failures"]
    assert (check["value"], check["passed"]) == (1, False)
    assert check["note"] == CRITICAL_NOTE
    assert summary["decision"]["status"] == "fail"
    assert {c["name"] for c in summary["decision"]["checks"]} >= {
        f"tasks where {h} is directional (of 3)" for h in ("H2", "H3", "H4")}
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = " ".join(str(c.value) for c in methods["B"])
    assert "The critical mark is the plan's critical_below (2; protocol 004's halt " \
           "threshold is a cell below 2.0 on a majority of judges)" in text


def test_missing_costs_and_window_are_a_warning_naming_the_command(tmp_path):
    """The import ran without its window, so no summary recorded the costs: analyze
    wrote them as null, said PASS and exited 0 without a word. It now warns with the
    command that supplies them (exit 1), and following it gives them back (exit 0)."""
    import shlex

    from click.testing import CliRunner

    from sheetflow.cli import cli

    root = tmp_path / "no-window"
    init_study(root, "judge-likert")
    generate_packs(root)
    planted = _planted(root, None)
    assert import_judges(root, planted).summary_path is None
    collect(root)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 1, out.output
    assert summary["decision"]["status"] == "pass"  # the decision stands; the record lacks
    pilot = json.loads((root / "out" / "pilot-summary.json").read_text(encoding="utf-8"))
    assert pilot["total_cost_usd"] is None and pilot["execution_window_utc"] is None
    warning = next(line for line in out.output.splitlines()
                   if line.startswith("warning: out/pilot-summary.json: "))
    assert "total_cost_usd and execution_window_utc are null" in warning
    assert f"note: {warning.removeprefix('warning: ')}" in rows  # the Summary sheet too
    assert summary["pilot"]["unrecorded"] == ["total_cost_usd", "execution_window_utc"]
    command = warning.split("to record them run ", 1)[1].split(", then ")[0]
    argv = shlex.split(command.replace("OUTPUTS.jsonl", shlex.quote(str(planted)))
                       .replace("'START to END'", shlex.quote(WINDOW)))
    assert "--force" in argv
    assert CliRunner().invoke(cli, argv[1:]).exit_code == 0
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert "warning" not in out.output and summary["pilot"]["unrecorded"] == []
    pilot = json.loads((root / "out" / "pilot-summary.json").read_text(encoding="utf-8"))
    assert pilot["execution_window_utc"] == WINDOW and pilot["total_cost_usd"] > 0


def _one_judge_unscored(root: Path, critical: dict[str, list[int]]) -> None:
    """The planted study with these tasks' cell C scored by the three judges at these
    means (``critical``), judge-3's accuracy then left blank on task-1's cell C: that
    item has no judge-3 mean. Collected with the blank as missing data."""
    init_study(root, "judge-likert")
    generate_packs(root)
    path = _planted(root, None)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["cell_id"] == "C" and r["task_id"] in critical:
            _critical_cell(r, critical[r["task_id"]])
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_judges(root, path, window=WINDOW)
    with (root / "items.csv").open(encoding="utf-8") as f:
        (blank,) = [r["response_id"] for r in csv.DictReader(f)
                    if r["cell"] == "cell_c_qwen_solo" and r["task_id"] == "task-1"]
    edit_returns(root, lambda _pack, a: None if a["item_id"] == blank
                 and a["dimension"] == "accuracy" else KEEP, {"judge-3"})
    collect(root)


ONE_OPEN = "R01 (task-1, cell_c_qwen_solo; no score from judge-3)"


def test_an_item_a_missing_score_could_make_critical_leaves_the_check_undefined(tmp_path):
    """Protocol 004's halt: a cell "< 2.0 on majority of judges" (2 of 3). task-1's cell C
    (R01) is scored 1 by judge-1 and 3 by judge-2, and judge-3's score is missing: below
    2.0 on one judge and possibly on a second. The check said "critical failures: 0 ...:
    met" and the reasons "the checks say PASS"; it is now undefined, naming R01."""
    root = tmp_path / "open"
    _one_judge_unscored(root, {"task-1": [1, 3, 3]})
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    check = _checks(summary)["critical failures"]
    assert (check["value"], check["passed"], check["outcome"]) == (0, None, "undefined")
    assert check["note"] == (f"{CRITICAL_NOTE}; 1 item could be critical for lack of a "
                             f"judge's score: {ONE_OPEN}")
    assert summary["pilot"]["items_possibly_critical"] == 1
    assert summary["pilot"]["possibly_critical"] == [ONE_OPEN]
    assert summary["pilot"]["pilot_verdict"] == "INCOMPLETE"
    assert rows[2] == "DECISION: INCOMPLETE"
    assert "on the raters included the checks say INCONCLUSIVE" in summary["decision"]["reasons"]
    assert any(r.startswith("- critical failures: 0 (target at most 0): undefined - ")
               for r in rows)
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Judge trio"]
    head, *table = sheet.iter_rows(values_only=True)
    open_ = [dict(zip(head, r, strict=True)) for r in table
             if r[head.index("could be critical: a judge's mean is missing")] == "Yes"]
    assert [(r["case"], r["critical: at least 2 of 3 judges' means below 2.0"], r["reason"])
            for r in open_] == [("R01", "No", "no score from judge-3")]
    assert "pilot verdict: INCOMPLETE (critical failures 0, 1 more item could be, lacking a " \
        "judge's score; 1 hypothesis delta undefined, 1 item without a complete trio)" in rows


def test_a_critical_failure_on_the_scores_present_still_fails(tmp_path):
    """As above, and task-2's cell C scored 1, 1, 3 by the full trio: critical on the
    scores present, whatever judge-3 gave R01. The check is not met (1), its note also
    names R01, and the pilot FAILs."""
    root = tmp_path / "fails"
    _one_judge_unscored(root, {"task-1": [1, 3, 3], "task-2": [1, 1, 3]})
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    assert summary["decision"]["provisional_status"] == "fail"
    check = _checks(summary)["critical failures"]
    assert (check["value"], check["passed"], check["outcome"]) == (1, False, "not met")
    assert check["note"].endswith(f"; 1 item could also be critical for lack of a judge's "
                                  f"score: {ONE_OPEN}")
    assert summary["pilot"]["pilot_verdict"] == "FAIL"
    assert "pilot verdict: FAIL (critical failures 1, 1 more item could be, lacking a " \
        "judge's score)" in rows


def test_a_verdict_a_missing_score_could_decide_is_left_blank(tmp_path):
    """R01 (task-1, cell C) scored 4 by judge-1 and 1 by judge-2, judge-3's score missing:
    one judge at or above 3.5 and one below 3.0, so judge-3's mean decides both strict
    PASS and fails ("at least 2 of 3"). The Judge trio sheet said "No" for each; they
    are now blank, and summary.json counts neither."""
    root = tmp_path / "open-verdicts"
    _one_judge_unscored(root, {"task-1": [4, 1, 3]})
    _, summary, _ = run_analyze(root, "--allow-partial")
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Judge trio"]
    head, *table = sheet.iter_rows(values_only=True)
    rows = {r[head.index("case")]: dict(zip(head, r, strict=True)) for r in table}
    strict = "strict pass: at least 2 of 3 judges' means >= 3.5"
    fails = "fails: at least 2 of 3 judges' means below 3.0"
    assert (rows["R01"][strict], rows["R01"][fails]) == (None, None)
    decided = [r for case, r in rows.items() if case != "R01"]
    assert {r[strict] for r in decided} == {"Yes", "No"} and \
        {r[fails] for r in decided} == {"No"}
    assert summary["judge_trio"]["strict_pass"] == 6 and summary["judge_trio"]["trio_fail"] == 0


LEVEL = {"cell_a_opus_solo": 3, "cell_b_opus_memory_harness": 4, "cell_c_qwen_solo": 3,
         "cell_d_qwen_memory_harness": 4}
SPLIT = ("task-1", "task-2")
"""The tasks whose cell B the two-per-cell studies score 2 on its R item, 5 on its S."""


def _by_hand(root: Path, double: bool, blank: bool = False,
             drop: tuple[tuple[str, str], ...] = ()) -> None:
    """The judge-likert study scored by hand (no JSON keys map to the judges), every
    cell at its planted level (A 3, B 4, C 3, D 4). ``double``: items.csv doubled
    (S01-S12 beside R01-R12), and cell B of :data:`SPLIT` scored 2 on R, 5 on S;
    ``blank``: judge-3's accuracy then left blank on those S items; ``drop``: the
    (task, cell) items taken out of items.csv. Collected."""
    init_study(root, "judge-likert")
    toml = root / "study.toml"
    text = toml.read_text(encoding="utf-8")
    judges = next(line for line in text.splitlines() if line.startswith("judges = {"))
    toml.write_text(text.replace(judges + "\n", ""), encoding="utf-8")
    with (root / "items.csv").open(encoding="utf-8", newline="") as f:
        items = list(csv.DictReader(f))
    rows = items + ([{**r, "response_id": "S" + r["response_id"][1:]} for r in items]
                    if double else [])
    with (root / "items.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(items[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if (r["task_id"], r["cell"]) not in drop)
    generate_packs(root)
    where = {r["response_id"][1:]: (r["task_id"], r["cell"]) for r in items}

    def answer(pack, cell):
        item = cell["item_id"]
        task, arm = where[item[1:]]
        split = double and arm == "cell_b_opus_memory_harness" and task in SPLIT
        score = (2 if item.startswith("R") else 5) if split else LEVEL[arm]
        if blank and split and item.startswith("S") and pack["rater_id"] == "judge-3" \
                and cell["dimension"] == "accuracy":
            return None
        if cell["dimension"] in DIMENSIONS:
            return score
        if cell["dimension"] == "rationale":
            return "Weakest on synthesis."
        return verdict_for(score) if cell["dimension"] == "overall_verdict" else KEEP

    fill_returns(root, answer)
    collect(root)


def _pilot_file(root: Path) -> dict:
    """out/pilot-summary.json, checked against its schema."""
    jsonschema = pytest.importorskip("jsonschema")
    pilot = json.loads((root / "out" / "pilot-summary.json").read_text(encoding="utf-8"))
    schema = Path(__file__).resolve().parent.parent / "docs" / "pilot-summary.schema.json"
    jsonschema.validate(pilot, json.loads(schema.read_text(encoding="utf-8")))
    return pilot


def test_the_pilot_file_takes_a_cells_mean_over_all_its_items(tmp_path):
    """Two items per cell, every score given: cell B of task-1 and task-2 is (2 + 5) / 2
    = 3.5, H2's delta 0.5 on the Hypotheses sheet. out/pilot-summary.json kept one trio
    per task and cell, the last item's: cell B 5.0 and a delta of 2.0. It now gives the
    analysis's own means and deltas."""
    root = tmp_path / "two-per-cell"
    _by_hand(root, double=True)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    pilot = _pilot_file(root)
    deltas = {(h["task"], h["hypothesis"]): h["delta"] for h in summary["hypotheses"]}
    for task, row in pilot["results_per_task"].items():
        b = 3.5 if task in SPLIT else 4.0
        assert (row["cell_A_trio_mean"], row["cell_B_trio_mean"]) == (3.0, b)
        assert row["h2_delta_opus"] == deltas[(task, "H2")] == pytest.approx(b - 3.0)
    assert (pilot["total_candidate_calls"], pilot["total_judge_calls"]) == (24, 72)
    assert pilot["aggregate"]["pilot_verdict"] == summary["pilot"]["pilot_verdict"] == "PASS"


def test_a_task_without_a_cell_leaves_the_pilot_file_incomplete_as_the_summary(tmp_path):
    """Every score given, but task-2 and task-3 have no cell D item: H3 and H4 have no
    delta there and are directional in task-1 only. The Summary says INCOMPLETE (the
    two tasks could still bring each to 2); out/pilot-summary.json counted them as not
    directional and said FAIL, and left cell D's mean out against its own schema."""
    root = tmp_path / "no-cell-d"
    _by_hand(root, double=False, drop=(("task-2", "cell_d_qwen_memory_harness"),
                                       ("task-3", "cell_d_qwen_memory_harness")))
    _, summary, rows = run_analyze(root)
    assert summary["pilot"]["pilot_verdict"] == "INCOMPLETE"
    # no cell D: only the deltas are open, no "0 items without a complete trio"
    assert "pilot verdict: INCOMPLETE (critical failures 0; 4 hypothesis deltas " \
        "undefined)" in rows
    pilot = _pilot_file(root)
    assert pilot["aggregate"] == {"h2_pass_count": 3, "h3_pass_count": 1, "h4_pass_count": 1,
                                  "critical_failures": 0, "pilot_verdict": "INCOMPLETE"}
    for task in ("task-2", "task-3"):
        row = pilot["results_per_task"][task]
        assert row["cell_D_trio_mean"] is None and row["h3_delta_qwen"] is None
        assert row["h4_directional_pass"] is False


def test_a_task_without_a_cell_leaves_a_hypothesis_already_met_passing(tmp_path):
    """Every score given, task-3 has no cell D item: H3 and H4 have no delta there but are
    directional in task-1 and task-2, 2 of 3 as protocol 004's PILOT PASS asks, and no
    cell is critical. Every check was met and the decision PASS, yet the pilot verdict,
    in the Summary and in out/pilot-summary.json, read INCOMPLETE: task-3 cannot change
    a hypothesis already at its minimum."""
    root = tmp_path / "no-cell-d-task-3"
    _by_hand(root, double=False, drop=(("task-3", "cell_d_qwen_memory_harness"),))
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["decision"]["status"] == "pass" and rows[2] == "DECISION: PASS"
    assert summary["pilot"]["undefined_counts"] == {"H2": 0, "H3": 1, "H4": 1}
    assert summary["pilot"]["pilot_verdict"] == "PASS"
    assert "pilot verdict: PASS (critical failures 0)" in rows
    assert _pilot_file(root)["aggregate"] == {
        "h2_pass_count": 3, "h3_pass_count": 2, "h4_pass_count": 2, "critical_failures": 0,
        "pilot_verdict": "PASS"}


def test_a_cell_mean_needs_every_items_trio(tmp_path):
    """Two items per cell (items.csv doubled: S01-S12 beside R01-R12), scored by hand.
    Every cell at its planted level (A 3, B 4, C 3, D 4), except cell B of task-1 and
    task-2: its R item scored 2, its S item 5 by judge-1 and judge-2 with judge-3's
    accuracy left blank. Cell B's mean there was taken over the R item alone (pandas
    skips the NaN): 2, H2 -1 in task-1 and task-2, "not met" and PILOT FAIL. Whatever
    judge-3 gives, S's trio mean is 11/3 to 5 and cell B's 2.83 to 3.5 against A's 3:
    the sign is open. Cell B has no mean there, H2 no delta, and the pilot is INCOMPLETE."""
    root = tmp_path / "two-per-cell"
    _by_hand(root, double=True, blank=True)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    by = {(h["task"], h["hypothesis"]): h for h in summary["hypotheses"]}
    for task in ("task-1", "task-2"):
        assert by[(task, "H2")]["delta"] is None and not by[(task, "H2")]["directional_pass"]
        assert by[(task, "H4")]["delta"] == pytest.approx(1.0)  # cell B takes no part
    assert by[("task-3", "H2")]["delta"] == pytest.approx(1.0)
    h2 = _checks(summary)["tasks where H2 is directional (of 3)"]
    assert (h2["value"], h2["passed"], h2["outcome"]) == (1, None, "undefined")
    assert h2["note"].endswith("; 2 of 3 tasks have no delta: task-1, task-2 (a cell without "
                               "a complete trio: cell_b_opus_memory_harness)")
    assert summary["pilot"]["pilot_verdict"] == "INCOMPLETE"
    assert summary["pilot"]["undefined_counts"] == {"H2": 2, "H3": 0, "H4": 0}
    assert rows[2] == "DECISION: INCOMPLETE"
    assert "pilot verdict: INCOMPLETE (critical failures 0; 2 hypothesis deltas undefined, " \
        "2 items without a complete trio)" in rows
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    assert "A cell's trio mean is the mean of its items' trio means, undefined when any of " \
        "its items has none" in " ".join(str(c.value) for c in methods["B"])
    # a judge's scores left blank: the panel is incomplete and the file is not written
    assert not (root / "out" / "pilot-summary.json").exists()
