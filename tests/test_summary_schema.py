"""summary.json of every template, complete and partial panels, validates against
docs/summary-schema.json (checked with the jsonschema package, Draft 2020-12)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.analysis import analyze
from sheetflow.collect.data_lock import lock_second_rater
from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.second_rater import selects_at_lock
from sheetflow.report import write_analysis_outputs
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

DOCS = Path(__file__).resolve().parent.parent / "docs"
SCHEMA = json.loads((DOCS / "summary-schema.json").read_text(encoding="utf-8"))
SCHEMA_1 = json.loads((DOCS / "summary-schema-1.json").read_text(encoding="utf-8"))
TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _problems(document: dict) -> list[str]:
    return sorted(f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(document))


def _summary(root: Path, *, drop: int | None = None) -> dict:
    """Every pack filled with valid answers (all but pack ``drop``), collected and
    analysed; the summary.json written. A study of one pack (002 before its lock) is
    made partial by one blank required answer instead: with no return at all there
    would be nothing to analyse. A complete 002 panel is locked after the primary
    return and its second rater's pack filled too."""
    _fill_packs(root, drop)
    collect(root)
    if drop is None and selects_at_lock(load_study(root)):
        lock_second_rater(root)
        _fill_packs(root, None)
        collect(root)
    write_analysis_outputs(analyze(root, allow_partial=drop is not None), root / "out")
    return json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))


def _fill_packs(root: Path, drop: int | None) -> None:
    """Fill each pack not yet returned (all but pack ``drop``; see :func:`_summary`)."""
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for n, pack in enumerate(packs):
        answers = plan_answers(pack)
        if (n == drop and len(packs) > 1) or (root / L.RETURNS_DIR / pack["file"]).exists():
            continue
        if n == drop:
            del answers[next(iter(answers))]  # the first case's first score
        fill_openpyxl(root / L.PACKS_DIR / pack["file"],
                      root / L.RETURNS_DIR / pack["file"], answers)


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    out = {}
    for name in TEMPLATES:
        for panel in ("complete", "partial"):
            root = init_study(tmp_path_factory.mktemp(f"{name}-{panel}") / "s", name)
            generate_packs(root)
            out[name, panel] = _summary(root, drop=0 if panel == "partial" else None)
    return out


@pytest.mark.parametrize("panel", ["complete", "partial"])
@pytest.mark.parametrize("name", TEMPLATES)
def test_summary_validates(summaries, name, panel):
    summary = summaries[name, panel]
    assert _problems(summary) == []
    decision = summary["decision"]
    assert summary["panel"]["complete"] is (panel == "complete")
    if panel == "complete":
        assert decision["status"] in ("pass", "fail", "null", "inconclusive", "reported")
    else:  # the missing rater is named, and the decision waits for them
        assert decision["status"] == "incomplete" and summary["panel"]["missing"]
        assert decision["provisional_status"] != "incomplete"
    assert decision["checks"], "every protocol decides from named checks"
    for check in decision["checks"]:  # nothing is "met" without a target it meets
        assert check["outcome"] != "met" or check["target"] is not None, check


def test_schema_rejects_what_it_should(summaries):
    good = summaries["paired-rubric", "complete"]
    bad = copy.deepcopy(good)
    bad["decision"]["status"] = "probably"
    del bad["panel"]["missing"]
    bad["arms"]["ci"] = [1.0]
    bad["decision"]["checks"][0]["outcome"] = "fine"
    bad["audit"]["ratings_sha256"] = "not a hash"
    problems = " ".join(_problems(bad))
    for where in ("$.decision.status", "$.panel", "$.arms", "$.decision.checks[0].outcome",
                  "$.audit.ratings_sha256"):
        assert where in problems, where
    assert _problems({k: v for k, v in good.items() if k != "decision"}) == [
        "$: 'decision' is a required property"]


def test_summary_is_version_2_and_not_version_1(summaries):
    """summary.json gained required fields after version 1 (the pairwise kappa's
    units_range, the confidence alphas' units and raters, the ICC's note): it says it is
    version 2, validates against version 2's schema, and a consumer still checking
    against version 1's is told by the version, not left to miss the fields."""
    assert SCHEMA["$id"] == SCHEMA["properties"]["schema"]["const"] == "sheetflow-summary/2"
    assert SCHEMA_1["$id"] == SCHEMA_1["properties"]["schema"]["const"] == "sheetflow-summary/1"
    for name in TEMPLATES:
        summary = summaries[name, "complete"]
        assert summary["schema"] == "sheetflow-summary/2"
        assert _problems(summary) == []
        old = jsonschema.Draft202012Validator(SCHEMA_1).iter_errors(summary)
        assert "$.schema" in {e.json_path for e in old}, name
    reported = summaries["paired-rubric", "complete"]["reported"]
    assert all("units_range" in r for r in reported)
    assert "units_range" not in SCHEMA_1["properties"]["reported"]["items"]["required"]
    assert "units_range" in SCHEMA["properties"]["reported"]["items"]["required"]
