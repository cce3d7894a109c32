"""Protocol 004: automated judges' JSONL outputs import as raters, end to end."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from click.testing import CliRunner

from sheetflow.analysis import analyze
from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.generate import generate_packs
from sheetflow.judges import JudgeImportError, import_judges
from sheetflow.templates import init_study

DIMS = ("completeness", "accuracy", "synthesis", "judgment", "actionability", "structure")
JUDGES = {"judge_opus": "judge-1", "judge_gpt": "judge-2", "judge_minimax": "judge-3"}


@pytest.fixture
def study(tmp_path):
    folder = init_study(tmp_path / "pilot", "judge-likert")
    generate_packs(folder)
    return folder


def _records(folder):
    path = folder / "judge-outputs.example.jsonl"
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_judges_become_raters_and_collect_reads_their_scores(study):
    path, records = _records(study)
    before = {p.name: p.read_bytes() for p in (study / "packs").glob("*.xlsx")}
    result = import_judges(study, path)
    assert result.records == 12 and len(result.files) == 3 and not result.missing
    assert result.answers == 12 * 3 * (len(DIMS) + 2)  # six scores, rationale, verdict
    assert {p.name: p.read_bytes() for p in (study / "packs").glob("*.xlsx")} == before

    collection = collect(study)
    assert collection.valid, [i.message for i in collection.report.issues]
    ratings = pd.DataFrame(collection.ratings)
    items = pd.read_csv(study / "items.csv")
    arm_of_cell = {"A": "cell_a_opus_solo", "B": "cell_b_opus_memory_harness",
                   "C": "cell_c_qwen_solo", "D": "cell_d_qwen_memory_harness"}
    for record in records:
        item = items[(items.task_id == record["task_id"])
                     & (items.cell == arm_of_cell[record["cell_id"]])].response_id.item()
        for key, rater in JUDGES.items():
            got = ratings[(ratings.rater_id == rater) & (ratings.case_id == item)]
            values = dict(zip(got.dimension, got.value, strict=False))
            for dim in DIMS:
                assert float(values[dim]) == record[key][dim]
            assert values["rationale"] == record[key]["rationale"]
            assert values["overall_verdict"] == record[key]["overall_verdict"]


def test_trio_means_match_the_judges_own_means(study):
    path, records = _records(study)
    import_judges(study, path)
    collect(study)
    trio = analyze(study).tables["judge_trio"]
    expected = {(r["task_id"], r["cell_id"]): r["trio_mean"] for r in records}
    assert len(trio) == 12
    got = sorted(round(v, 4) for v in trio["trio_mean"])
    assert got == pytest.approx(sorted(expected.values()), abs=1e-3)
    passes = sum(r["trio_strict_pass"] for r in records)
    assert int(trio["strict_pass"].sum()) == passes


def test_bad_line_names_file_and_line(study, tmp_path):
    path, _ = _records(study)
    bad = tmp_path / "bad.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4][:-5]
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(JudgeImportError, match=r"bad\.jsonl: line 5: not valid JSON"):
        import_judges(study, bad)
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(bad)])
    assert result.exit_code == 1
    assert "bad.jsonl: line 5" in result.output and "Traceback" not in result.output


def test_unknown_cell_is_reported(study, tmp_path):
    _, records = _records(study)
    records[2]["cell_id"] = "Z"
    bad = tmp_path / "z.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    with pytest.raises(JudgeImportError, match=r"z\.jsonl: line 3: cell_id 'Z'"):
        import_judges(study, bad)


def test_existing_returns_are_not_overwritten(study):
    path, _ = _records(study)
    import_judges(study, path)
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(path)])
    assert result.exit_code == 2 and "already exists" in result.output
    assert CliRunner().invoke(
        cli, ["import-judges", str(study), str(path), "--force"]).exit_code == 0


def test_missing_judge_object_leaves_cells_blank_and_collect_says_so(study, tmp_path):
    _, records = _records(study)
    del records[0]["judge_gpt"]
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    result = import_judges(study, partial)
    assert len(result.missing) == 1 and result.missing[0].startswith("judge_gpt: ")
    codes = {i.code for i in collect(study).report.issues if i.rater == "judge-2"}
    assert "answer-missing" in codes


def test_study_without_mapping_is_a_usage_error(tmp_path):
    folder = init_study(tmp_path / "p", "paired-rubric")
    generate_packs(folder)
    jsonl = tmp_path / "x.jsonl"
    jsonl.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(folder), str(jsonl)])
    assert result.exit_code == 2 and "[analysis.params.jsonl]" in result.output
    shutil.rmtree(folder)
