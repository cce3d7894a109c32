"""Protocol 001's arms line, panel reason and kappa lines say what the decision says.

One owner marks every item (planted as ``test_decision_001`` plants them).

- The decision rests on the permutation p against alpha_test; the arms' "shown" follows
  that same test, not Newcombe's 95% interval of the gap (two-sided, it may include 0
  beside a one-sided p below alpha, and exclude 0 beside a p above it).
"""

from __future__ import annotations

import openpyxl
import pytest
from decision_helpers import run_analyze
from test_decision_001 import _study


def _marks(b3: int, b6: int, b1: int, b4: int) -> dict:
    return {"owner-01": {"b3_distance_forced": b3, "b6_distance_forced_critic": b6,
                         "b1_random_pairing": b1, "b4_single_note": b4}}


def _arm_ahead_cell(root) -> str:
    """The Summary sheet's "arm ahead" cell of the arms block."""
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    rows = [r for r in sheet.iter_rows(max_col=6, values_only=True)]
    head = next(i for i, r in enumerate(rows) if r[0] == "arm ahead")
    return str(rows[head + 1][0])


@pytest.mark.parametrize(("marks", "status", "shown"), [
    # b3 5/15 vs b1 1/15: p about 0.028 (PASS) while the interval, about -2.8% to
    # 52.2%, includes 0
    ((5, 0, 1, 0), "pass", True),
    # b3 and b6 4/15 vs b1 0/15: the max-statistic p about 0.061 (NULL) while the
    # interval, about 0.9% to 52.0%, excludes 0
    ((4, 4, 0, 0), "null", False),
])
def test_the_arms_are_shown_to_differ_by_the_decisions_own_test(tmp_path, marks, status,
                                                               shown):
    root = _study(tmp_path / "s", ("owner-01",), marks=_marks(*marks))
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["decision"]["status"] == status
    arms, p = summary["arms"], summary["permutation"]["p"]
    low, high = arms["ci"]
    assert (low <= 0 <= high) is shown  # the interval alone would say the opposite
    assert arms["p"] == p and arms["alpha"] == 0.05 and arms["shown"] is shown
    unsure = (f"b3_distance_forced ahead of b1_random_pairing (not shown to differ: "
              f"permutation p = {p:.3}, not below 0.05): ")
    said = arms["sentence"]
    assert said.startswith(unsure) if not shown else "not shown" not in said
    assert "interval includes 0" not in said
    # the interval is still shown as it is
    assert f"[95% CI {100 * low:.1f}%, {100 * high:.1f}%]" in said
    assert f"arms: {said}" in rows and f"arms: {said}" in out.output
    assert _arm_ahead_cell(root) == "b3_distance_forced" + \
        ("" if shown else " (not shown to differ)")


def test_a_missing_second_sitting_is_named_in_the_reason(tmp_path):
    """The owner's sitting-2 return is not in: the panel line says "MISSING owner-01
    sitting 2", and the decision's reason names the sitting too (on the console, the
    Summary sheet and in summary.json), not "missing owner-01" as if no return were in."""
    from sheetflow.collect.run import collect
    from sheetflow.packs.manifest import read_manifest

    root = _study(tmp_path / "s", ("owner-01",), marks=_marks(10, 4, 2, 3))
    for pack in read_manifest(root / "packs" / "manifest.json")["packs"]:
        if pack["sitting"] == 2:
            (root / "returns" / pack["file"]).unlink()
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    reason = "panel incomplete: missing owner-01 sitting 2 (see the panel line)"
    assert summary["decision"]["reasons"][0] == reason
    assert f"- {reason}" in rows and f"- {reason}" in out.output
    assert "MISSING owner-01 sitting 2: no return collected" in out.output


def _panel(included: list[str], *packs: dict) -> object:
    from sheetflow.analysis.panel import Panel

    return Panel(expected=["owner-01", "owner-02"], included=included,
                 missing=list(dict.fromkeys(p["rater"] for p in packs)),
                 missing_packs=list(packs))


@pytest.mark.parametrize(("included", "packs", "said"), [
    # nothing of owner-02 is in: the rater alone, once
    (["owner-01"], [{"rater": "owner-02", "sitting": 1}, {"rater": "owner-02", "sitting": 2}],
     "missing owner-02"),
    # owner-01's sitting 2 is in, sitting 1 is not
    (["owner-01", "owner-02"], [{"rater": "owner-01", "sitting": 1}],
     "missing owner-01 sitting 1"),
    # sitting 1 in part, sitting 2 missing: both said, each with what is missing
    (["owner-01", "owner-02"], [{"rater": "owner-01", "sitting": 1, "partial": True},
                                {"rater": "owner-01", "sitting": 2}],
     "missing owner-01 sitting 2; answers in part from owner-01"),
    (["owner-01", "owner-02"], [{"rater": "owner-02", "sitting": 2, "empty": True}],
     "every answer blank from owner-02 sitting 2"),
])
def test_the_panel_gaps_name_the_sitting_where_another_is_in(included, packs, said):
    from sheetflow.analysis.decision import _gaps

    assert _gaps(_panel(included, *packs)) == said


def test_every_intra_rater_kappa_is_on_the_console(tmp_path):
    """The owner marks KNOWN No throughout, so its intra-rater kappa is undefined: the
    console prints it with its reason beside KEEP's (protocol 001: "Report it even if
    it is bad"), as the Summary sheet does."""
    root = _study(tmp_path / "s", ("owner-01",), marks=_marks(5, 0, 1, 0))
    out, summary, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    kappas = [r for r in summary["reported"] if r["analysis"] == "intra_rater_kappa"]
    assert [r["measure"] for r in kappas] == ["keep", "known"]
    known = kappas[1]
    assert known["value"] is None and known["reason"]
    lines = [ln for ln in out.output.splitlines() if ln.startswith("kappa ")]
    assert [ln.split()[1] for ln in lines] == ["KEEP", "KNOWN"]
    assert lines[1] == (f"kappa      KNOWN (known): {known['figure']} n/a (30 units, 1 rater) "
                        f"undefined: {known['reason']}")
