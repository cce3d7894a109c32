"""summary.json of every template validates against docs/summary-schema.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from json_schema import errors

from sheetflow.analysis import analyze
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.report import write_analysis_outputs
from sheetflow.spec.templates import init_study

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "docs" / "summary-schema.json")
                    .read_text(encoding="utf-8"))
TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    out = {}
    for name in TEMPLATES:
        root = init_study(tmp_path_factory.mktemp(name) / "s", name)
        generate_packs(root)
        fill_packs(root, root / "returns", seed=11)
        collect(root)
        write_analysis_outputs(analyze(root), root / "out")
        out[name] = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    return out


@pytest.mark.parametrize("name", TEMPLATES)
def test_summary_validates(summaries, name):
    summary = summaries[name]
    assert errors(summary, SCHEMA) == []
    decision, panel = summary["decision"], summary["panel"]
    if panel["complete"]:
        assert decision["status"] in ("pass", "fail", "inconclusive")
    else:  # a simulated return collect refused: named, and the decision waits for it
        assert decision["status"] == "incomplete" and panel["excluded_files"]
    assert summary["decision"]["checks"], "every protocol decides from named checks"


def test_schema_rejects_what_it_should(summaries):
    good = summaries["paired-rubric"]
    bad = copy.deepcopy(good)
    bad["decision"]["status"] = "probably"
    del bad["panel"]["missing"]
    bad["arms"]["ci"] = [1.0]
    bad["decision"]["checks"][0]["outcome"] = "fine"
    problems = errors(bad, SCHEMA)
    assert any("$.decision.status" in p for p in problems)
    assert any("$.panel: missing 'missing'" in p for p in problems)
    assert any("$.arms" in p for p in problems)
    assert any("$.decision.checks[0].outcome" in p for p in problems)
    assert errors({k: v for k, v in good.items() if k != "decision"}, SCHEMA) == \
        ["$: missing 'decision'"]


def test_checker_keywords():
    schema = {"type": "object", "required": ["n"], "additionalProperties": False,
              "properties": {"n": {"type": "integer", "minimum": 0},
                             "s": {"anyOf": [{"type": "null"}, {"type": "string",
                                                                "pattern": "^a"}]}}}
    assert errors({"n": 1, "s": "ab"}, schema) == []
    assert errors({"n": True}, schema) == ["$.n: True is not of type ['integer']"]
    assert errors({"n": -1, "s": "b", "x": 0}, schema) == [
        "$.n: -1 < 0", "$.s: matches none of anyOf", "$.x: not allowed"]
    assert errors(1, {"type": "number", "format": "x"}) != []  # unknown keyword refused
