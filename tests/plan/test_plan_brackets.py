"""Plan notes say a design, a method or a form without brackets within brackets.

"(2 raters x 4 of 16 items (the second-rater subset, fraction 0.25))", "(Bonett (2002);
a lower bound for this ICC)", "(ICC(A,1))" and "(3 validators (plus the internal
team) x 18 cases)" read badly: each is now said with a semicolon, a comma or a
sentence of its own.
"""

from __future__ import annotations

import pytest

from sheetflow.plan import plan_study
from sheetflow.spec import init_study


def _nested(text: str) -> bool:
    """Whether a bracket opens within another."""
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "(" and depth > 1:
            return True
    return False


def test_the_check_sees_nesting():
    assert _nested("(2 raters x 4 of 16 items (the second-rater subset))")
    assert not _nested("(2 raters x 4 of 16 items; the second-rater subset) (Bonett 2002)")


@pytest.mark.parametrize(("template", "options"), [
    ("anchored-plan", {}),  # a subset, the exact width, ICC(A,1)
    ("judge-likert", {"assurance": 0.9}),  # Zou (2012) as the method
    ("paired-rubric", {"simulations": 10, "n_boot": 20, "items": [18]}),  # the team
])
def test_no_plan_note_nests_brackets(template, options, tmp_path):
    notes = plan_study(init_study(tmp_path / template, template=template), **options).notes
    assert notes and [n for n in notes if _nested(n)] == []


def test_the_method_and_the_form_are_still_named(tmp_path):
    notes = plan_study(init_study(tmp_path / "ap", template="anchored-plan")).notes
    method = "Bonett (2002), the exact expected width where his approximation does not hold"
    assert "2 raters x 4 of 16 items; the second-rater subset, fraction 0.25):" in notes[0]
    assert any("the absolute-agreement ICC this study reports, ICC(A,1), is wider where "
               f"raters differ in level, so take the widths and item counts as lower "
               f"bounds. Method: {method}." in n for n in notes)
    assert ("At least 313 items (79 of them in the second-rater subset) with 2 raters are "
            "needed to make the interval no wider than 0.2: the closed form's count is a "
            f"lower bound for this ICC. Method: {method}.") in notes
