"""Human judges are treated as automated ones are (protocol 004).

Planted: three people fill the judge workbooks by hand. Every judge gives a response
the same score on all six dimensions: cell A 3, B 4, C 3, D 4 (as the automated-judge
test plants through JSONL), so H2, H3 and H4 are +1 in 3 of 3 tasks and no cell is
critical: PILOT PASS, known before the run. One judge's verdict on one response
contradicts the band of their own mean (PASS_STRONG on a mean of 3.00, which the judge
prompt calls FAIL_WEAK): collect warns, naming the verdict's cell. analyze writes
out/pilot-summary.json from the ratings with the same aggregate the JSONL import
would give, and the costs and execution window (which workbooks do not carry) as null,
with a note saying why (the study maps no JSON judges: people scored), not a warning.
"""

from __future__ import annotations

import json

import pytest
from decision_helpers import KEEP, fill_returns, run_analyze

from sheetflow.collect.run import collect
from sheetflow.judges.records import DIMENSIONS, verdict_for
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.spec.verdicts import verdict_rule

LEVEL = {"cell_a_opus_solo": 3, "cell_b_opus_memory_harness": 4, "cell_c_qwen_solo": 3,
         "cell_d_qwen_memory_harness": 4}


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory):
    root = tmp_path_factory.mktemp("human") / "study"
    init_study(root, "judge-likert")
    # people score: no JSON keys map to the judges (the arms keep naming the cells A-D)
    toml = root / "study.toml"
    text = toml.read_text(encoding="utf-8")
    judges = next(line for line in text.splitlines() if line.startswith("judges = {"))
    toml.write_text(text.replace(judges + "\n", ""), encoding="utf-8")
    generate_packs(root)
    study = load_study(root)
    arm_of = {it.id: it.fields["cell"] for it in study.items}
    wrong = []

    def answer(pack, cell):
        level = LEVEL[arm_of[cell["item_id"]]]
        if cell["dimension"] in DIMENSIONS:
            return level
        if cell["dimension"] == "rationale":
            return "Weakest on synthesis."
        if cell["dimension"] != "overall_verdict":
            return KEEP
        if not wrong and level == 3 and pack["rater_id"] == "judge-2":
            wrong.append(cell["cell"])
            return "PASS_STRONG"  # a mean of 3.00 is FAIL_WEAK
        return verdict_for(level)

    fill_returns(root, answer)
    return root, wrong[0]


def test_the_template_bands_are_the_judge_prompts():
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp()) / "s"
    init_study(root, "judge-likert")
    rule = verdict_rule(load_study(root).plan.params)
    assert rule is not None
    for mean in (1.0, 2.49, 2.5, 3.0, 3.49, 3.5, 3.99, 4.0, 5.0):
        assert rule.label_for(mean) == verdict_for(mean), mean


def test_a_verdict_off_its_band_is_warned_with_its_cell(by_hand):
    root, wrong = by_hand
    result = collect(root)
    off = [i for i in result.report.issues if i.code == "verdict-off-band"]
    assert [(i.rater, i.cell, i.severity) for i in off] == [("judge-2", wrong, "warning")]
    assert "3.00, which is FAIL_WEAK" in off[0].message
    assert result.valid  # a warning: the ratings are used


def test_analyze_writes_the_pilot_summary_for_human_judges(by_hand):
    root, _ = by_hand
    collect(root)
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["decision"]["status"] == "pass"
    pilot = json.loads((root / "out" / "pilot-summary.json").read_text(encoding="utf-8"))
    assert pilot["aggregate"] == {"h2_pass_count": 3, "h3_pass_count": 3, "h4_pass_count": 3,
                                  "critical_failures": 0, "pilot_verdict": "PASS"}
    assert pilot["total_cost_usd"] is None and pilot["execution_window_utc"] is None
    # said as what it is, not a warning: people scoring have no costs or run window
    assert "warning" not in out.output
    note = ("note: out/pilot-summary.json: total_cost_usd and execution_window_utc are "
            "null: the judges scored by hand")
    assert note in out.output
    assert summary["pilot"]["unrecorded"] == ["total_cost_usd", "execution_window_utc"]
    assert pilot["total_candidate_calls"] == 12 and pilot["total_judge_calls"] == 36
    for task in pilot["results_per_task"].values():
        assert task["cell_A_trio_mean"] == 3 and task["cell_B_trio_mean"] == 4
        assert task["h2_delta_opus"] == 1 and task["h4_directional_pass"] is True
