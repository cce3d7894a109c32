"""A validator who skips a case: left out whole, said so, and with --allow-partial the
cases they did rate are used (alpha takes missing data, protocol 003).

Planted: two reviewers of the answer-review template rate 18 items; reviewer 2 leaves
every answer of one item blank. collect refuses that file (answer-missing) and keeps
its rows apart in out/ratings-incomplete.csv. analyze without --allow-partial unseals
nothing and names the reviewer; with it, alpha on citation_quality equals the
krippendorff package's nominal alpha on the 2 x 18 matrix with the skipped item
missing, computed here from the planted answers alone; the decision stays incomplete
and the panel line says 17 of 18 cases were rated in full. A reviewer who returns the
pack with every answer blank gives no rating: named as returned empty, not counted.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import krippendorff
import numpy as np
import pytest
from decision_helpers import refused_before_unsealing, run_analyze
from plant_helpers import ReviewAnswer, plant_answer_review

from sheetflow.collect.run import collect
from sheetflow.packs import generate_packs
from sheetflow.spec import init_study

SKIPPED = "HV-07"
CITATION = ("Good", "Partial", "Poor", "None present")


def _value(study, dim_id: str, index: int, rater: str):
    dim = study.rubric.dimension(dim_id)
    if dim_id in ("gold_dispute", "rater_note"):
        return None
    if dim_id == "citation_quality":
        return CITATION[_code(index, rater)]
    return dim.choices[index % len(dim.choices)] if dim.choices else None


def _code(index: int, rater: str) -> int:
    """Reviewer 2 departs from reviewer 1 on every third item."""
    return (index * 3 + 1) % 4 if rater == "rater2" and index % 3 == 0 else index % 4


def _rater2_blank(blank: Callable[[str], bool]) -> ReviewAnswer:
    """The planted answers, reviewer 2 leaving every answer blank on each item ``blank``
    is true of."""
    def answer(study, pack, cell, index):
        if pack["rater_id"] == "rater2" and blank(cell["item_id"]):
            return None
        return _value(study, cell["dimension"], index, pack["rater_id"])
    return answer


@pytest.fixture(scope="module")
def skipped(tmp_path_factory):
    root = tmp_path_factory.mktemp("partial") / "study"
    study, order = plant_answer_review(root, _rater2_blank(lambda item: item == SKIPPED))
    result = collect(root)
    return root, study, order, result


def test_collect_refuses_the_file_and_keeps_its_rows_apart(skipped):
    root, _, _, result = skipped
    bad = [f for f in result.report.files if not f.used]
    assert [f.rater for f in bad] == ["rater2"] and bad[0].errors >= 1
    assert {i.code for i in result.report.issues if i.severity == "error"} == {"answer-missing"}
    with (root / "out" / "ratings.csv").open(encoding="utf-8") as fh:
        assert {r["rater_id"] for r in csv.DictReader(fh)} == {"rater1"}
    with (root / "out" / "ratings-incomplete.csv").open(encoding="utf-8") as fh:
        left = list(csv.DictReader(fh))
    assert {r["rater_id"] for r in left} == {"rater2"}
    assert {r["value"] for r in left if r["case_id"] == SKIPPED} == {""}


def test_without_allow_partial_nothing_is_unsealed(skipped):
    root = skipped[0]
    refused_before_unsealing(root, "rater2 (sitting 1)", "answer-missing")


def test_with_allow_partial_the_rated_cases_are_used(skipped):
    root, study, order, _ = skipped
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # written, but incomplete: never exit 0
    assert "exit 1: the panel is incomplete (see the panel line); the outputs were " \
        "written because of --allow-partial" in out.output
    assert summary["decision"]["status"] == "incomplete"
    panel = summary["panel"]
    assert panel["missing"] == ["rater2"] and set(panel["included"]) == {"rater1", "rater2"}
    (pack,) = panel["missing_packs"]
    assert pack["partial"] is True
    said = "the answers this rater gave are used (17 of 18 cases in full, 0 in part)"
    assert said in pack["reason"]
    assert any(said in r for r in rows)
    items = [it.id for it in study.items]
    matrix = np.array([[_code(order[i], r) if not (r == "rater2" and i == SKIPPED)
                        else np.nan for i in items] for r in ("rater1", "rater2")], float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    got = next(a for a in summary["alpha"] if a["measure"] == "citation_quality")
    assert got["n_units"] == 17  # the skipped item has one rating: no pair to compare
    assert got["alpha"] == pytest.approx(expected, abs=1e-12)
    assert 0 < expected < 1


@pytest.fixture(scope="module")
def empty(tmp_path_factory):
    """Reviewer 2 returns the pack with every answer blank."""
    root = tmp_path_factory.mktemp("empty") / "study"
    plant_answer_review(root, _rater2_blank(lambda item: True))
    collect(root)
    return root


def test_a_return_with_every_answer_blank_adds_no_rater(empty):
    """--allow-partial took in reviewer 2's blank return and said "2 of 2 expected
    raters with ratings (rater1, rater2)" and "2 raters": reviewer 2 has no rating.
    They are named as returned empty, counted nowhere, and the exit code stays 1."""
    out, summary, rows = run_analyze(empty, "--allow-partial")
    assert out.exit_code == 1, out.output
    assert summary["decision"]["status"] == "incomplete"
    assert summary["n_raters"] == 1
    assert "study      answer-review-rater2: 1 of 2 raters, 18 items\n" in out.output
    panel = summary["panel"]
    assert (panel["expected"], panel["included"], panel["missing"]) == (
        ["rater1", "rater2"], ["rater1"], ["rater2"])
    (pack,) = panel["missing_packs"]
    assert pack["empty"] is True and "partial" not in pack
    assert "every answer in it is blank (0 of 18 cases in full, 0 in part), so this " \
        "rater has no rating in the analysis" in pack["reason"]
    line = "panel: 1 of 2 expected raters with ratings (rater1); RETURNED EMPTY rater2: file "
    assert any(r.startswith(line) for r in rows), rows
    assert line in out.output
    assert "- panel incomplete: every answer blank from rater2 (see the panel line)" in rows
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs"
                         / "summary-schema.json").read_text(encoding="utf-8"))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(summary)) == []


def test_a_keep_known_return_holding_every_mark_is_complete_but_its_times(tmp_path):
    """Sitting 2 of keep-known with every KEEP/KNOWN cell marked and no batch time was
    "0% complete": only the times counted, and a blank time is only a warning. A mark's
    blank is an answer too (No), so each mark cell counts as holding one."""
    import openpyxl

    from sheetflow.packs.manifest import read_manifest
    from sheetflow.workbook import layout as L

    root = tmp_path / "study"
    init_study(root, "keep-known")
    generate_packs(root)
    pack = next(p for p in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
                if p["sitting"] == 2)
    cells = list(L.iter_answer_cells(pack))
    marks = [a for a in cells if a["dimension"] in ("keep", "known")]
    times = [a for a in cells if a["dimension"] is None]
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
    for a in marks:
        wb[L.SCORING_SHEET][a["cell"]].value = a["validation"]["choices"][0]
    wb.save(root / L.RETURNS_DIR / pack["file"])
    (status,) = collect(root, write=False).report.files
    assert status.used and status.errors == 0 and times
    assert status.percent_complete == round(100 * len(marks) / len(cells), 1) < 100
