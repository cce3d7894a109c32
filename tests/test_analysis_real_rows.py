"""Totals, self-checks, the Data sheet and Methods come from real answers only.

Paired data where raters saw the arms under different labels (as the key randomises
them): a pivot over every combination of rater, label and arm used to add "ratings"
nobody made (empty totals), which halved the self-checks' extreme share and put
blank rows with labels and arms on the Data sheet.
"""

from __future__ import annotations

import numpy as np
import openpyxl
import pandas as pd
import pytest

from sheetflow.analysis import add_totals, run_plan
from sheetflow.report import write_analysis_workbook
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir


@pytest.fixture(scope="module")
def paired():
    return load_study(data_dir("templates") / "paired-rubric")


def _data(study, points: float | None = None) -> pd.DataFrame:
    """Every rater scores every response; labels swap between raters.

    ``points`` None: each dimension at its maximum (total 20, an extreme total);
    otherwise that value for every dimension.
    """
    first, second = (a.id for a in study.design.arms)
    rows = []
    for i, rater in enumerate(r.id for r in study.raters):
        sides = {"A": first, "B": second} if i % 2 == 0 else {"A": second, "B": first}
        for case in (it.id for it in study.items):
            for label, arm in sides.items():
                for d in study.rubric.by_scope("response"):
                    value = max(d.value_domain()) if points is None else points
                    rows.append({"rater": rater, "role": "primary", "sitting": 1,
                                 "case": case, "label": label, "arm": arm,
                                 "dimension": d.id, "value": float(value),
                                 "confidence": "High"})
            rows.append({"rater": rater, "role": "primary", "sitting": 1, "case": case,
                         "label": "", "arm": "", "dimension": "direction", "value": second,
                         "confidence": ""})
    return pd.DataFrame(rows)


def test_totals_only_for_ratings_that_exist(paired):
    data = _data(paired)
    totals = add_totals(data, paired.rubric)
    totals = totals[totals["dimension"] == "total"]
    n_responses = len(paired.raters) * len(paired.items) * 2
    assert len(totals) == n_responses
    assert totals["value"].notna().all() and (totals["value"] == 20).all()


def test_extreme_share_counts_real_totals(paired):
    res = run_plan(paired, _data(paired))
    checks = res.tables["self_checks"].set_index("rater")
    assert (checks["extreme_share"] == 1.0).all()  # every total is 20 (>= 18)


def test_data_sheet_has_no_blank_ratings_and_sorts_cases_naturally(paired, tmp_path):
    data = _data(paired)
    # case ids whose text order differs from their natural order
    rename = {it.id: f"C{n}" for n, it in enumerate(paired.items, 1)}
    data["case"] = data["case"].map(lambda c: rename.get(c, c))
    data = data.sort_values("case", kind="stable")  # text order: C1, C10, C11, ..., C2
    res = run_plan(paired, data)
    path = write_analysis_workbook(res, tmp_path / "analysis.xlsx")
    ws = openpyxl.load_workbook(path)["Data"]
    rows = list(ws.iter_rows(values_only=True))
    head, body = rows[0], rows[1:]
    value = head.index("value")
    assert all(r[value] is not None for r in body if r[head.index("dimension")] != "direction")
    cases = list(dict.fromkeys(r[head.index("case")] for r in body))
    assert cases == [f"C{n}" for n in range(1, len(paired.items) + 1)]


def test_methods_list_only_what_ran(paired, tmp_path):
    res = run_plan(paired, _data(paired, points=2.0))
    topics = [t for t, _ in res.methods]
    assert "Krippendorff's alpha" in topics and "Direction agreement" in topics
    for other in ("Permutation test", "Judge trio (004)", "Acceptance and second rater (002)"):
        assert other not in topics


def test_alpha_error_bars_point_at_the_interval_cells(paired, tmp_path):
    """The chart's error bars are references to the cells holding each interval's
    lengths (they used to be written as the literal list of the range's coordinates)."""
    import re
    import zipfile

    rng = np.random.default_rng(1)
    data = _data(paired, points=2.0)
    data["value"] = [v if d == "direction" else float(rng.choice([0.0, 2.0]))
                     if d in ("depth", "alternatives", "actionability") else
                     float(rng.integers(0, 4))
                     for v, d in zip(data["value"], data["dimension"], strict=True)]
    res = run_plan(paired, data)
    path = write_analysis_workbook(res, tmp_path / "analysis.xlsx")
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    alpha_chart = next(c for c in charts if "per measure" in c)
    plus = re.search(r"<c:plus><c:numRef><c:f>([^<]+)</c:f>(.*?)</c:numRef>", alpha_chart)
    minus = re.search(r"<c:minus><c:numRef><c:f>([^<]+)</c:f>(.*?)</c:numRef>", alpha_chart)
    assert plus and minus, "error bars must be cell references, not literal numbers"
    assert plus.group(1).startswith("'Chart data'!$") and minus.group(1).startswith("'Chart")
    cached = [float(v) for v in re.findall(r"<c:v>([^<]+)</c:v>", plus.group(2))]
    expected = res.figures["alpha"]["err_plus"].fillna(0).tolist()
    assert cached == pytest.approx(expected)
    assert max(expected) < 1  # interval lengths, not row or column numbers
