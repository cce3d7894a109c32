"""Protocol 004: automated judges' JSONL outputs import as raters, end to end."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from click.testing import CliRunner

from sheetflow.analysis import analyze
from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.judges.importer import JudgeImportError, import_judges
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study

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


def test_a_rationale_with_a_control_character_is_named_not_a_traceback(study):
    """A rationale holding U+0007 passed the checks, then openpyxl refused the cell
    while the workbooks were filled: IllegalCharacterError and its traceback."""
    _, records = _records(study)
    records[0]["judge_opus"]["rationale"] = "weak\x07 on accuracy"
    bad = study / "ctrl.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(bad)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert ("ctrl.jsonl: line 1 (task-1/A): judge_opus.rationale: contains U+0007, a "
            "control character a workbook cell cannot hold") in result.stderr
    assert not list((study / "returns").glob("*.xlsx"))


@pytest.mark.parametrize(("char", "code", "kind"), [("\ud800", "U+D800", "lone surrogate"),
                                                  ("\ufffe", "U+FFFE", "non-character")])
def test_a_rationale_xml_cannot_hold_is_named_not_saved_unreadable(study, char, code, kind):
    """A lone surrogate or U+FFFE passed the checks and openpyxl wrote it: the import
    said it succeeded, but the judge's workbook could not be opened, so collect left
    that judge's whole output out."""
    _, records = _records(study)
    records[0]["judge_opus"]["rationale"] = f"weak{char} on accuracy"
    bad = study / "xml.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(bad)])
    assert result.exit_code == 1, result.output
    assert (f"xml.jsonl: line 1 (task-1/A): judge_opus.rationale: contains {code}, a "
            f"{kind} a workbook cell cannot hold") in result.stderr
    assert not list((study / "returns").glob("*.xlsx"))


def test_a_key_given_twice_in_a_record_is_named_not_the_last_kept(study):
    """json keeps the last of two equal keys: a rationale given twice imported the
    second silently."""
    path, _ = _records(study)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"rationale": ', '"rationale": "first", "rationale": ', 1)
    bad = study / "twice.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(bad)])
    assert result.exit_code == 1, result.output
    assert "twice.jsonl: line 2: 'rationale' appears twice in one object" in result.stderr
    assert not list((study / "returns").glob("*.xlsx"))


def test_existing_returns_are_not_overwritten(study):
    path, _ = _records(study)
    import_judges(study, path)
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(path)])
    assert result.exit_code == 2 and "already exists" in result.output
    assert CliRunner().invoke(
        cli, ["import-judges", str(study), str(path), "--force", "--execution-window",
              "2026-04-26T09:00Z to 2026-04-26T10:00Z"]).exit_code == 0


@pytest.mark.parametrize("folder", ["packs", "sealed", "out", "packs/filled"])
def test_returns_inside_packs_sealed_or_out_are_refused(study, folder):
    # with --force, --returns packs/ would save each filled copy over the blank pack
    path, _ = _records(study)
    before = {p.name: p.read_bytes() for p in (study / "packs").glob("*.xlsx")}
    result = CliRunner().invoke(cli, ["import-judges", str(study), str(path), "--returns",
                                      str(study / folder), "--force"])
    assert result.exit_code == 2, result.output
    assert f"is (inside) the study's {folder.split('/')[0]}/ folder" in result.output
    assert "Traceback" not in result.output
    assert {p.name: p.read_bytes() for p in (study / "packs").glob("*.xlsx")} == before
    assert not (study / "packs" / "filled").exists()


def test_returns_elsewhere_are_written(study, tmp_path):
    path, _ = _records(study)
    result = import_judges(study, path, tmp_path / "judged")
    assert sorted(p.parent for p in result.files) == [tmp_path / "judged"] * 3


def test_missing_judge_object_leaves_cells_blank_and_collect_says_so(study, tmp_path):
    _, records = _records(study)
    del records[0]["judge_gpt"]
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    result = import_judges(study, partial)
    assert len(result.missing) == 1 and result.missing[0].startswith("judge_gpt: ")
    codes = {i.code for i in collect(study).report.issues if i.rater == "judge-2"}
    assert "answer-missing" in codes


def test_a_missing_judge_object_is_named_by_file_and_line(study, tmp_path):
    """The warning named only the judge and item id ("no output from judge_gpt: R08"):
    in a file of many records the coordinator could not find which line lacked it."""
    _, records = _records(study)
    del records[2]["judge_gpt"]
    result = CliRunner().invoke(cli, ["import-judges", str(study),
                                      str(_write(tmp_path, records, "gap.jsonl"))])
    assert result.exit_code == 1, result.output
    where = f"{records[2]['task_id']}/{records[2]['cell_id']}"
    assert f"warning: gap.jsonl: line 3 ({where}): judge_gpt: item " in result.stderr
    assert ": no output; that judge's cells for it stay blank" in result.stderr


def test_a_judge_output_that_is_not_an_object_is_a_mismatch_not_missing(study, tmp_path):
    _, records = _records(study)
    records[0]["judge_opus"] = [1, 2]
    result = CliRunner().invoke(cli, ["import-judges", str(study),
                                      str(_write(tmp_path, records, "list.jsonl"))])
    assert result.exit_code == 1, result.output
    assert ": no output;" not in result.output
    assert ("list.jsonl: line 1 (task-1/A): judge_opus: a list ([1, 2]), where the judge's "
            "object of scores, rationale, verdict and mean belongs") in result.stderr
    assert not (study / "returns").exists() or not any((study / "returns").iterdir())


def test_a_rationale_over_the_rubrics_max_words_is_named_and_imported(study, tmp_path):
    # the judge-likert rubric states max_words = 80 for the rationale: guidance, as
    # collect treats it, so a warning, not a refused record set
    _, records = _records(study)
    records[1]["judge_gpt"]["rationale"] = " ".join(["long"] * 500)
    result = CliRunner().invoke(cli, ["import-judges", str(study),
                                      str(_write(tmp_path, records, "long.jsonl")),
                                      "--execution-window", WINDOW])
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "words" in line] == [
        "warning: long.jsonl: line 2 (task-1/B): judge_gpt.rationale: 500 words, where the "
        "rubric asks at most 80 words; imported as given (the range is guidance: collect "
        "warns too)"]
    assert "text-word-count" in {i.code for i in collect(study).report.issues}


def test_study_without_mapping_is_a_usage_error(tmp_path):
    folder = init_study(tmp_path / "p", "paired-rubric")
    generate_packs(folder)
    jsonl = tmp_path / "x.jsonl"
    jsonl.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(folder), str(jsonl)])
    assert result.exit_code == 2 and "[analysis.params.jsonl]" in result.output
    shutil.rmtree(folder)


WINDOW = "2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z"


def _write(tmp_path, records, name="r.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_pilot_summary_follows_the_documents_schema_and_its_numbers(study):
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    path, records = _records(study)
    result = import_judges(study, path, window=WINDOW)
    summary = json.loads(result.summary_path.read_text(encoding="utf-8"))
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs"
                         / "pilot-summary.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(summary, schema)
    assert summary["pilot_id"] == "agentic-knowledge-work-pilot-2026-04-26"
    assert summary["execution_window_utc"] == WINDOW
    assert (summary["total_judge_calls"], summary["total_candidate_calls"]) == (36, 12)
    assert summary["total_cost_usd"] == pytest.approx(sum(r["candidate_cost_usd"]
                                                          for r in records))
    # hand computation from the records' own trio means (rounded to 4 decimals)
    trio = {(r["task_id"], r["cell_id"]): r["trio_mean"] for r in records}
    for task, row in summary["results_per_task"].items():
        for cell in "ABCD":
            assert row[f"cell_{cell}_trio_mean"] == pytest.approx(trio[(task, cell)], abs=2e-4)
        assert row["h2_delta_opus"] == pytest.approx(trio[(task, "B")] - trio[(task, "A")],
                                                     abs=2e-4)
        # H4 says "D >= A" (relation ">="): a tie holds it
        assert row["h4_directional_pass"] == (trio[(task, "D")] - trio[(task, "A")] >= -1e-9)
    agg = summary["aggregate"]
    assert agg["h2_pass_count"] == sum(r["h2_directional_pass"]
                                       for r in summary["results_per_task"].values())
    assert agg["pilot_verdict"] in ("PASS", "FAIL")


@pytest.mark.parametrize(("cell", "hypothesis", "key", "holds"), [
    ("B", "h2", "h2_delta_opus", False),  # H2 says "B > A": a tie is not directional
    ("D", "h4", "h4_delta_sovereignty", True),  # H4 says "D >= A": a tie holds it
])
def test_an_exact_tie_is_directional_only_for_at_least(study, tmp_path, cell, hypothesis,
                                                       key, holds):
    _, records = _records(study)
    by = {(r["task_id"], r["cell_id"]): r for r in records}
    for task in ("task-1", "task-2", "task-3"):  # the cell equals A exactly in every task
        for judge in ("judge_opus", "judge_gpt", "judge_minimax"):
            by[(task, cell)][judge] = dict(by[(task, "A")][judge])
        for field in ("trio_mean", "trio_strict_pass", "trio_critical_fail"):
            by[(task, cell)][field] = by[(task, "A")][field]
    result = import_judges(study, _write(tmp_path, records), window=WINDOW)
    summary = json.loads(result.summary_path.read_text(encoding="utf-8"))
    for row in summary["results_per_task"].values():
        assert row[key] == 0 and row[f"{hypothesis}_directional_pass"] is holds
    assert summary["aggregate"][f"{hypothesis}_pass_count"] == (3 if holds else 0)
    if not holds:
        assert summary["aggregate"]["pilot_verdict"] == "FAIL"


def test_records_are_checked_against_themselves_and_the_items(study, tmp_path):
    _, records = _records(study)
    records[0]["trio_mean"] = 4.0                      # stated 4.0, computed 2.8889
    records[1]["judge_gpt"]["mean"] = 1.0              # a judge mean that is not its scores'
    records[2]["judge_opus"]["overall_verdict"] = "PASS_STRONG"
    records[3]["trio_strict_pass"] = not records[3]["trio_strict_pass"]
    records[4]["candidate_response"] = "Something else entirely."
    records[5]["judge_minimax"]["accuracy"] = 7
    del records[6]["candidate_cost_usd"]
    bad = _write(tmp_path, records, "bad.jsonl")
    with pytest.raises(JudgeImportError) as info:
        import_judges(study, bad, window=WINDOW)
    lines = info.value.lines
    fields = [(line.split(": ")[1], line.split(": ")[2]) for line in lines]
    assert ("line 1 (task-1/A)", "trio_mean") in fields
    assert ("line 2 (task-1/B)", "judge_gpt.mean") in fields
    assert any(f[1] == "judge_opus.overall_verdict" and f[0].startswith("line 3") for f in fields)
    assert any(f[1] == "trio_strict_pass" and f[0].startswith("line 4") for f in fields)
    assert any(f[1] == "candidate_response" and f[0].startswith("line 5") for f in fields)
    assert any(f[1] == "judge_minimax.accuracy" and f[0].startswith("line 6") for f in fields)
    assert any(f[1] == "candidate_cost_usd" and f[0].startswith("line 7") for f in fields)
    assert "4.0 stated, 2.8889 recomputed" in lines[0]
    assert not (study / "returns").exists() or not any((study / "returns").iterdir())
    assert not (study / "out" / "pilot-summary.json").exists()
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(bad)])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert "bad.jsonl: line 1 (task-1/A): trio_mean: 4.0 stated" in out.output


def test_the_example_records_agree_with_themselves(study):
    path, _ = _records(study)
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                   "--execution-window", WINDOW])
    assert out.exit_code == 0, out.output
    assert "pilot-summary.json" in out.output


def test_a_missing_judge_means_no_pilot_summary_and_exit_1(study, tmp_path):
    _, records = _records(study)
    for r in records:
        del r["judge_minimax"]
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(_write(tmp_path, records)),
                                   "--execution-window", WINDOW])
    assert out.exit_code == 1
    assert "pilot-summary.json not written: the trio is locked" in out.output
    assert not (study / "out" / "pilot-summary.json").exists()


def test_execution_window_is_checked_before_anything_is_written(study):
    """A bad window was refused after the workbooks were written, and the corrected
    rerun was then refused for the files the refused run had left."""
    path, _ = _records(study)
    for window in ("yesterday", "2026-04-26T11:30:00Z to 2026-04-26T09:00:00Z"):
        out = CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                       "--execution-window", window])
        assert out.exit_code == 2, out.output
        assert not (study / "returns").exists() or not list((study / "returns").iterdir())
    assert "'<ISO start> to <ISO end>'" in out.output or "the end is before" in out.output
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                   "--execution-window", WINDOW])
    assert out.exit_code == 0, out.output


def test_files_in_the_way_are_refused_before_one_is_written(study):
    path, _ = _records(study)
    assert CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                    "--execution-window", WINDOW]).exit_code == 0
    returns = sorted((study / "returns").iterdir())
    returns[0].unlink()  # one file gone, the others still in the way
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                   "--execution-window", WINDOW])
    assert out.exit_code == 2 and "already exists (and 1 other)" in out.output, out.output
    assert not returns[0].exists()


def test_a_missing_or_bom_marked_jsonl(study, tmp_path):
    """A missing JSONL file exited 1 (a data problem) where every command exits 2 for a
    missing file; one saved with a BOM (Notepad) was refused with Python's own words."""
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(tmp_path / "none.jsonl")])
    assert out.exit_code == 2 and out.output.strip() == \
        f"error: {tmp_path / 'none.jsonl'}: no such file"
    path, _ = _records(study)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(bom),
                                   "--execution-window", WINDOW])
    assert out.exit_code == 0, out.output


def test_the_help_example_gives_the_window():
    """The example left --execution-window out: run as shown it wrote no summary."""
    out = CliRunner().invoke(cli, ["import-judges", "--help"])
    example = out.output[out.output.index("Example:"):out.output.index("Options:")]
    assert "--execution-window '2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z'" in example


def test_the_missing_window_warning_gives_the_command_that_writes_the_summary(study):
    """The warning said to give --execution-window; rerun with it, the import was
    refused for the workbooks the first run had written. Its command now works as
    given, and an earlier import's summary does not outlive a run that writes none."""
    import shlex

    path, _ = _records(study)
    assert CliRunner().invoke(cli, ["import-judges", str(study), str(path),
                                    "--execution-window", WINDOW]).exit_code == 0
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(path), "--force"])
    assert out.exit_code == 1, out.output
    summary = study / "out" / "pilot-summary.json"
    assert f"removed    {summary} (written before this import" in out.output
    assert not summary.exists()
    advice = out.output.split("by running again: ", 1)[1].splitlines()[0]
    argv = shlex.split(advice.replace("'START to END'", shlex.quote(WINDOW)))
    assert argv[:2] == ["sheetflow", "import-judges"] and "--force" in argv
    again = CliRunner().invoke(cli, argv[1:])
    assert again.exit_code == 0, again.output
    assert summary.exists()


def _sheet_rows(path, title):
    import openpyxl

    return [list(r) for r in openpyxl.load_workbook(path)[title].iter_rows(values_only=True)]


def test_the_trio_sheet_says_each_verdicts_rule_with_the_plans_numbers(study):
    """"strict pass" and "trio fail" beside the trio mean read as contradictory: R04's
    trio mean of 3.000 failed while R01's 2.889 did not. The verdicts count the judges'
    own means (at least 2 of 3 below fail_below 3.0 for "fails"); the headers now say
    so, and the Methods sheet gives the targets used and where they come from."""
    from sheetflow.report import write_analysis_outputs

    path, _ = _records(study)
    import_judges(study, path, window=WINDOW)
    collect(study)
    write_analysis_outputs(analyze(study), study / "out")
    rows = _sheet_rows(study / "out" / "analysis.xlsx", "Judge trio")
    head = rows[0]
    assert head[3:] == ["judge-1 mean", "judge-2 mean", "judge-3 mean", "trio mean",
                        "strict pass: at least 2 of 3 judges' means >= 3.5",
                        "fails: at least 2 of 3 judges' means below 3.0",
                        "critical: at least 2 of 3 judges' means below 2.0"]
    by_case = {r[1]: dict(zip(head, r, strict=True)) for r in rows[1:]}
    # by hand from the example records' scores: R04 (17/6, 17/6, 20/6), R05 (17/6,
    # 15/6, 19/6) and R10 (15/6, 14/6, 17/6) have two or three judges below 3.0; R01
    # (16/6, 18/6, 18/6) and R08 (18/6, 16/6, 18/6) have one (3.0 is not below 3.0)
    fails = {c for c, r in by_case.items() if r[head[8]] == "Yes"}
    strict = {c for c, r in by_case.items() if r[head[7]] == "Yes"}
    assert fails == {"R04", "R05", "R10"}
    assert strict == {"R02", "R03", "R07", "R09", "R11", "R12"}
    assert {r[head[9]] for r in by_case.values()} == {"No"}
    assert by_case["R04"]["trio mean"] == pytest.approx(3.0)
    assert by_case["R01"]["trio mean"] == pytest.approx(26 / 9)
    methods = " ".join(str(r[1]) for r in _sheet_rows(study / "out" / "analysis.xlsx",
                                                      "Methods") if r[0] == "Judge trio (004)")
    assert "Targets used: strict_pass 3.5 (the plan's); fail_below 3.0 (the plan's); " \
        "critical_below 2.0 (the plan's)" in methods


def test_the_methods_sheet_names_a_default_target(study):
    """A plan without fail_below uses 3.0; the Methods sheet says it is the default."""
    from sheetflow.analysis.p004_judge_likert import methods
    from sheetflow.spec.study import load_study

    toml = study / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("fail_below = 3.0\n", ""),
                    encoding="utf-8")
    (_, text), = methods(load_study(study))
    assert "fail_below 3.0 (the default: not set in [analysis.targets])" in text
    assert "strict_pass 3.5 (the plan's)" in text


def test_a_judge_is_told_to_import_again_not_written_to(study, tmp_path):
    """collect told the coordinator to send an automated judge the Issues list, or to
    write asking it to attach an unreadable workbook again: a program reads no mail."""
    import openpyxl

    _, records = _records(study)
    del records[0]["judge_gpt"]
    short = _write(tmp_path, records)
    import_judges(study, short)
    judge_1 = next((study / "returns").glob("*judge-1-*.xlsx"))
    judge_1.write_bytes(judge_1.read_bytes()[:3000])  # cut short: it cannot be read
    result = CliRunner().invoke(cli, ["collect", str(study)])
    # OUTPUTS.jsonl is a name to replace, said so: "JSONL" read as a word to type
    again = (f"'sheetflow import-judges {study} OUTPUTS.jsonl --force' (OUTPUTS.jsonl: "
             "your file of the judges' JSONL outputs)")
    assert "no e-mail address" not in result.output
    assert "asking judge-1 to attach it again" not in result.output
    for judge in ("judge-1", "judge-2"):
        assert (f"warning: {judge}'s file has errors and no reply is drafted: {judge} is "
                "an automated judge: import its JSONL outputs again") in result.output
    sheet = openpyxl.load_workbook(study / "out" / "validation.xlsx")["Status"]
    todo = {row[1]: row[10] for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert again in todo["judge-1"] and "write to them" not in todo["judge-1"]
    assert todo["judge-2"].startswith("8 errors: judge-2 is an automated judge")
    assert again in todo["judge-2"] and todo["judge-3"] == "nothing to do"
    reminded = CliRunner().invoke(cli, ["remind", str(study)])
    assert (f"no reminder judge-1 (sitting 1): a file came back but cannot be used "
            f"({judge_1.name}: could not be read; named like judge-1's pack); judge-1 "
            "is an automated judge") in reminded.output
    assert "reply drafts" not in reminded.output
    status = CliRunner().invoke(cli, ["status", str(study)])
    assert ("no reply to judge-2 (sitting 1): no reply draft is written or sent: judge-2 "
            "is an automated judge") in status.output
    assert "no e-mail address" not in status.output


def test_remind_drafts_no_reminder_to_a_judge(tmp_path):
    study = init_study(tmp_path / "pilot", "judge-likert")
    with (study / "raters.csv").open("a", encoding="utf-8") as raters:
        raters.write("human-1,Ada Person,Person,,primary\n")  # a person beside the trio
    generate_packs(study)
    result = CliRunner().invoke(cli, ["remind", str(study), "--min-days", "0"])
    assert result.exit_code == 1, result.output
    assert result.output.count("remind them yourself") == 1
    assert ("human-1 has not returned and has no e-mail address in the raters file; "
            "remind them yourself") in result.output
    assert (f"judge-1 has not returned and no reminder is drafted: judge-1 is an automated "
            f"judge: import its outputs with 'sheetflow import-judges {study} OUTPUTS.jsonl' "
            "(OUTPUTS.jsonl: your file of the judges' JSONL outputs)" in result.output)
    assert not list((study / "out" / "reminders").glob("*.eml"))


def test_send_sends_no_reminder_to_a_judge_and_says_why(study):
    result = CliRunner().invoke(cli, ["send", str(study), "reminders", "--dry-run",
                                      "--from", "coordinator@example.org", "--min-days", "0"])
    assert ("not sent judge-1: an automated judge: its outputs are imported "
            "(import-judges), not reminded") in result.output
    assert "no e-mail address" not in result.output


def test_a_score_written_as_a_decimal_or_text_is_told_the_whole_number(study, tmp_path):
    """A score of 4.0 or "4" was refused as "4.0 is not int", naming a Python type."""
    _, records = _records(study)
    records[0]["judge_gpt"]["accuracy"] = float(records[0]["judge_gpt"]["accuracy"])
    records[0]["judge_opus"]["synthesis"] = str(records[0]["judge_opus"]["synthesis"])
    with pytest.raises(JudgeImportError) as caught:
        import_judges(study, _write(tmp_path, records))
    said = str(caught.value)
    gpt, opus = records[0]["judge_gpt"]["accuracy"], records[0]["judge_opus"]["synthesis"]
    assert (f"judge_gpt.accuracy: {gpt!r} has a decimal point: write the whole number "
            f"{int(gpt)}") in said
    assert (f"judge_opus.synthesis: {opus!r} is text: write the whole number {opus}, "
            "without quotes") in said


def _with_a_person(tmp_path):
    """A judge-likert study with a person (with an e-mail address) beside the trio."""
    study = init_study(tmp_path / "pilot", "judge-likert")
    with (study / "raters.csv").open("a", encoding="utf-8") as raters:
        raters.write("human-1,Ada Person,Person,ada@example.org,primary\n")
    generate_packs(study)
    return study


def test_status_names_import_judges_for_a_judges_unusable_file(tmp_path):
    """status ended "collect's reply drafts in out/feedback/ ask for the files again"
    for an automated judge's unusable workbook, though no reply is drafted to it."""
    study = _with_a_person(tmp_path)
    path, _ = _records(study)
    import_judges(study, path)
    judge_1 = next((study / "returns").glob("*judge-1-*.xlsx"))
    judge_1.write_bytes(judge_1.read_bytes()[:3000])  # cut short: it cannot be read
    human = next((study / "packs").glob("*human-1-*.xlsx"))
    CliRunner().invoke(cli, ["collect", str(study)])
    again = (f"import the automated judges' JSONL outputs again with 'sheetflow "
             f"import-judges {study} OUTPUTS.jsonl --force' (OUTPUTS.jsonl: your file of "
             f"the judges' JSONL outputs), then run 'sheetflow collect {study}'")
    alone = CliRunner().invoke(cli, ["status", str(study)]).output.splitlines()[-1]
    assert alone.endswith(f"1 with a file that cannot be used ({again})"), alone
    (study / "returns" / human.name).write_bytes(human.read_bytes()[:3000])
    CliRunner().invoke(cli, ["collect", str(study)])
    both = CliRunner().invoke(cli, ["status", str(study)]).output.splitlines()[-1]
    assert (f"2 with a file that cannot be used (judges: {again}; the others: collect's "
            "reply drafts in out/feedback/ ask for the files again; 'sheetflow send "
            f"{study} replies' sends them)") in both, both
    # remind's summary too: it gave the people's reply advice for the judge's file
    reminded = CliRunner().invoke(cli, ["remind", str(study)]).output
    assert (f"cannot be used (judges: {again}; the others: collect's reply drafts") \
        in reminded, reminded


def test_collect_counts_judges_not_returned_apart_from_those_reminded(tmp_path):
    """collect said "3 of 3 packs not returned ('sheetflow remind ...' drafts reminders
    for those due)" before import-judges, though no reminder is drafted to a judge."""
    study = init_study(tmp_path / "pilot", "judge-likert")
    generate_packs(study)
    fill = (f"'sheetflow import-judges {study} OUTPUTS.jsonl' (OUTPUTS.jsonl: your file "
            "of the judges' JSONL outputs) fills them from their outputs")
    alone = CliRunner().invoke(cli, ["collect", str(study)]).output
    assert f"3 of 3 packs not returned (automated judges: {fill})" in alone, alone
    assert "sheetflow remind" not in alone
    mixed = _with_a_person(tmp_path / "mixed")
    both = CliRunner().invoke(cli, ["collect", str(mixed)]).output
    fill = fill.replace(str(study), str(mixed))
    assert (f"4 of 4 packs not returned ('sheetflow remind {mixed}' drafts reminders for "
            f"those due; 3 of them automated judges: no reminder; {fill})") in both, both
