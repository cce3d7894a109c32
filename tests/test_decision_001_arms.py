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

