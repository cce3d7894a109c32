"""The vectorised unblinding gives exactly what a per-rating reading gives.

``_reference_unblind`` is the straightforward per-rating implementation (one pandas
group per rater x sitting x case x label x dimension); the library's vectorised
:func:`sheetflow.analysis.unblind` must agree with it row for row on every template's
simulated returns and on hand-made edge cases.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

from sheetflow.analysis import key_sides, unblind
from sheetflow.analysis.context import DATA_COLUMNS, number
from sheetflow.analysis.unblind import key_entries
from sheetflow.collect.run import collect
from sheetflow.collect.values import is_blank
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study

TEMPLATES = ["paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert"]
_GUARDED = "=+-@\t\r\n"


def _reference_unblind(study, raw: pd.DataFrame, sides: pd.DataFrame) -> pd.DataFrame:
    """One rating at a time, exactly as the rules in the unblind module's docstring say."""
    names = {"rater": "rater_id", "sitting": "sitting", "case": "case_id", "label": "label",
             "dimension": "dimension", "part": "field", "value": "value", "raw": "raw",
             "confidence": "confidence"}
    df = pd.DataFrame({k: raw[v].astype(str) if v in raw else "" for k, v in names.items()})
    for col in df.columns:
        df[col] = df[col].map(lambda t: t[1:] if len(t) > 1 and t[0] == "'" and t[1] in
                              _GUARDED else t)
    df["sitting"] = pd.to_numeric(df["sitting"], errors="coerce").fillna(1).astype(int)
    arm_of = {(r.rater, r.sitting, r.case, r.label): r.arm for r in sides.itertuples()}
    items = {it.id: it for it in study.items}
    roles = {r.id: r.role for r in study.raters}
    rows = []
    for (rater, sitting, case, label, dim_id), grp in df.groupby(
            ["rater", "sitting", "case", "label", "dimension"], sort=False):
        try:
            dim = study.rubric.dimension(dim_id)
        except KeyError:
            continue
        value, confidence = _reference_value(dim, grp)
        arm = arm_of.get((rater, sitting, case, label), "")
        if not arm and case in items and study.design.arm_column:
            arm = items[case].fields.get(study.design.arm_column, "")
        if dim.kind == "preference" and isinstance(value, str) and ">" in value:
            winner = value.split(">")[0].strip()
            value = arm_of.get((rater, sitting, case, winner), np.nan) \
                if winner in study.design.labels else np.nan
        rows.append({"rater": rater, "role": roles.get(rater, "primary"), "sitting": sitting,
                     "case": case, "label": label, "arm": arm, "dimension": dim_id,
                     "value": value, "confidence": confidence})
    return pd.DataFrame(rows, columns=list(DATA_COLUMNS))


def _reference_value(dim, grp: pd.DataFrame) -> tuple[Any, str]:
    parts = dict(zip(grp["part"], grp["value"], strict=False))
    raws = dict(zip(grp["part"], grp["raw"], strict=False))
    confidence = parts.get("confidence", "") or next((c for c in grp["confidence"] if c), "")
    if dim.kind == "checklist":
        answers = [v for p, v in parts.items() if p.startswith("q")]
        if answers:
            return (sum(a.strip().lower() == "yes" for a in answers)
                    if all(a for a in answers) else np.nan), confidence
    value = parts.get("value", parts.get("", next(iter(parts.values()), "")))
    # a raw text collect read as blank (control characters, as _xHHHH_) stays blank
    if value == "" and raws.get("value") and not is_blank(
            re.sub(r"_x([0-9A-F]{4})_", lambda m: chr(int(m.group(1), 16)), raws["value"])):
        value = raws["value"]
    if dim.kind == "count":
        count = number(value)
        return (dim.points_for_count(int(count)) if not math.isnan(count) else np.nan,
                confidence)
    if dim.kind in ("scale", "number", "checklist"):
        if dim.kind == "scale" and value in dim.na_choices:
            return np.nan, confidence
        return number(value), confidence
    if dim.kind == "binary" and value == "" and dim.blank_means:
        return dim.blank_means, confidence
    # a categorical N/A label stays as answered (the plan's na_handling applies later)
    return (value if value != "" else np.nan), confidence


def _assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in got.columns:
        g, w = got[col].tolist(), want[col].tolist()
        for i, (a, b) in enumerate(zip(g, w, strict=True)):
            same = (pd.isna(a) and pd.isna(b)) if (pd.isna(a) or pd.isna(b)) else a == b
            assert same, f"row {i} column {col}: {a!r} != {b!r}"


@pytest.mark.parametrize("template", TEMPLATES)
def test_vectorised_unblind_matches_per_rating_reading(tmp_path, template):
    root = init_study(tmp_path / template, template)
    generate_packs(root)
    fill_packs(root, seed=7)
    errors = [i for i in collect(root).report.issues if i.severity == "error"]
    assert errors == [], "the simulated raters return valid workbooks"
    study = load_study(root)
    raw = pd.read_csv(root / "out" / "ratings.csv", dtype=str, keep_default_na=False)
    import json
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    sides = key_sides(key)
    assert key_entries(key)
    got = unblind(study, raw, sides)
    assert len(got) > 0
    _assert_same(got, _reference_unblind(study, raw, sides))


def _raw(rows: list[tuple]) -> pd.DataFrame:
    cols = ["rater_id", "sitting", "case_id", "label", "dimension", "field", "value", "raw",
            "confidence"]
    return pd.DataFrame([dict(zip(cols, r, strict=True)) for r in rows], dtype=str)


def test_edge_cases_match_per_rating_reading(tmp_path):
    """Blank checklist answers, raw fallback, guarded text, labels not in the design,
    unknown dimensions, duplicated cells and confidence columns."""
    study = load_study(init_study(tmp_path / "p", "paired-rubric"))
    first, second = (a.id for a in study.design.arms)
    sides = pd.DataFrame([
        {"rater": "R1", "sitting": 1, "case": "C1", "label": "A", "arm": first, "order": 1},
        {"rater": "R1", "sitting": 1, "case": "C1", "label": "B", "arm": second, "order": 1},
    ])
    raw = _raw([
        ("R1", "1", "C1", "A", "depth", "value", "3", "3", "High"),
        ("R1", "1", "C1", "A", "depth", "confidence", "", "", "Low"),
        ("R1", "1", "C1", "B", "depth", "value", "", "7", ""),          # raw fallback
        ("R1", "1", "C1", "A", "evidence", "q1", "Yes", "", ""),
        ("R1", "1", "C1", "A", "evidence", "q2", "", "", ""),           # blank -> NaN
        ("R1", "1", "C1", "B", "evidence", "q1", " yes ", "", "Medium"),
        ("R1", "1", "C1", "B", "evidence", "q2", "No", "", ""),
        ("R1", "1", "C1", "B", "evidence", "q2", "Yes", "", ""),        # last cell wins
        ("R1", "1", "C1", "", "direction", "value", "B>A", "", ""),
        ("R1", "1", "C2", "", "direction", "value", "Z>A", "", ""),     # not a label
        ("R1", "1", "C3", "", "direction", "value", "Tied", "", ""),
        ("R1", "1", "C1", "", "notes", "value", "'=1+1", "", ""),       # guarded text
        ("R1", "1", "C2", "", "notes", "value", "", "_x0007__x0085_", ""),  # read as blank
        ("R1", "1", "C3", "", "notes", "value", "", "\u200b", ""),       # read as blank
        ("R1", "1", "", "", "batch_start", "value", "09:00", "", ""),   # not in the rubric
        ("R2", "x", "C1", "A", "logic", "points", "2", "", ""),         # first part only
    ])
    got = unblind(study, raw, sides)
    want = _reference_unblind(study, raw, sides)
    _assert_same(got, want)
    by = got.set_index(["rater", "case", "label", "dimension"])["value"]
    assert by[("R1", "C1", "", "direction")] == second
    assert pd.isna(by[("R1", "C1", "A", "evidence")])
    assert by[("R1", "C1", "B", "evidence")] == 2
    assert by[("R1", "C1", "", "notes")] == "=1+1"
    # collect read these cells as blank: their raw text is no answer
    assert by[("R1", "C2", "", "notes")] in ("", None) or pd.isna(by[("R1", "C2", "", "notes")])
    assert by[("R1", "C3", "", "notes")] in ("", None) or pd.isna(by[("R1", "C3", "", "notes")])


def test_no_rubric_rows_gives_empty_table(tmp_path):
    study = load_study(init_study(tmp_path / "p", "paired-rubric"))
    raw = _raw([("R1", "1", "", "", "batch_start", "value", "09:00", "", "")])
    out = unblind(study, raw, pd.DataFrame(columns=["rater", "sitting", "case", "label",
                                                    "arm", "order"]))
    assert out.empty and list(out.columns) == list(DATA_COLUMNS)


def test_direction_self_check_counts_cases_with_a_clear_total_gap(tmp_path):
    """Planted: R1 names the higher-total response in 3 of the 4 cases whose gap is at
    least 15% of the total's range (3 of 0-20); a 1-point case is not checked."""
    from sheetflow.analysis import run_plan

    study = load_study(init_study(tmp_path / "p", "paired-rubric"))
    first, second = (a.id for a in study.design.arms)
    dims = [d for d in study.rubric.by_scope("response")]
    rows = []
    plan = {"C1": (first, 20, 5), "C2": (first, 18, 4), "C3": (second, 3, 19),
            "C4": (second, 15, 2), "C5": (first, 10, 9)}  # C4 inconsistent, C5 too close
    for case, (choice, top_first, top_second) in plan.items():
        for arm, label, target in ((first, "A", top_first), (second, "B", top_second)):
            left = target
            for d in dims:  # spread the planted total over the dimensions
                hi = max(d.value_domain())
                give = min(hi, left)
                left -= give
                value = give if d.kind != "count" else {0: 0, 2: 2, 4: 4, 5: 6}.get(give, 0)
                if d.kind == "checklist":
                    value = min(give, len(d.questions))
                rows.append({"rater": "R1", "case": case, "label": label, "arm": arm,
                             "dimension": d.id, "value": float(value), "confidence": "High"})
        rows.append({"rater": "R1", "case": case, "label": "", "arm": "",
                     "dimension": "direction", "value": choice, "confidence": ""})
    res = run_plan(study, pd.DataFrame(rows))
    totals = res.data[res.data["dimension"] == "total"]
    totals = totals.assign(value=pd.to_numeric(totals["value"])).pivot_table(
        index="case", columns="arm", values="value")
    gap = (totals[first] - totals[second]).abs()
    checked = gap[gap >= 3].index
    higher = totals.loc[checked].idxmax(axis=1)
    want = float((higher == pd.Series({c: plan[c][0] for c in checked})).mean())
    row = res.tables["self_checks"].set_index("rater").loc["R1"]
    assert row["n_direction_checked"] == len(checked) >= 3
    assert row["direction_consistent_share"] == pytest.approx(want)
    assert want < 1.0 and bool(row["mixed_directions"])
