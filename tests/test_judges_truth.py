"""Protocol 004: an import that says PASS only for the whole, consistent trio design.

Each case plants one flaw in the template's example records (12 = 4 cells x 3 tasks,
three judges each) and asserts the import refuses it naming the line and field, and
writes and removes nothing: the earlier import's workbooks and pilot summary stay
together, as it wrote them.
"""

from __future__ import annotations

import json
import math

import pytest

from sheetflow.judges.importer import PILOT_SUMMARY, JudgeImportError, import_judges
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study

WINDOW = "2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z"


@pytest.fixture
def study(tmp_path):
    folder = init_study(tmp_path / "pilot", "judge-likert")
    generate_packs(folder)
    return folder


def _lines(folder) -> list[dict]:
    path = folder / "judge-outputs.example.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(folder, records) -> object:
    path = folder / "planted.jsonl"
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _set(record: dict, field: str, value) -> dict:
    out = json.loads(json.dumps(record))
    node = out
    *parents, last = field.split(".")
    for key in parents:
        node = node[key]
    node[last] = value
    return out


def _planted(records: list[dict], case: str) -> list[dict]:
    if case == "a record missing":
        return records[:-1]
    if case == "a task missing":
        task = records[0]["task_id"]
        return [r for r in records if r["task_id"] != task]
    if case == "a record twice":
        return [*records, records[3]]
    edits = {
        "an empty rationale": ("judge_opus.rationale", "  "),
        "a NaN mean": ("judge_gpt.mean", math.nan),
        "an infinite trio mean": ("trio_mean", math.inf),
        "a negative cost": ("candidate_cost_usd", -0.5),
        "an anchor from another run": ("manifest_anchor", "another-run"),
        "a model that contradicts its cell": ("model", "someone-else"),
        "a fourth judge": ("judge_extra", dict(records[0]["judge_opus"])),
    }
    field, value = edits[case]
    return [_set(records[0], field, value), *records[1:]]


CASES = {
    "a record missing": ("task_id/cell_id", "1 of the design's 12 task and cell records"),
    "a task missing": ("task_id/cell_id", "4 of the design's 12"),
    "a record twice": ("line 13", "a second record for item"),  # refused before as well
    "an empty rationale": ("judge_opus.rationale", "is empty"),
    "a NaN mean": ("judge_gpt.mean", "nan is not a finite number"),
    "an infinite trio mean": ("trio_mean", "inf is not a finite number"),
    "a negative cost": ("candidate_cost_usd", "-0.5 is negative"),
    "an anchor from another run": ("manifest_anchor", "different runs"),
    "a model that contradicts its cell": ("model/configuration", "but cell"),
    "a fourth judge": ("judge_extra", "is not a judge of the locked trio"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_flawed_record_set_is_refused_and_no_stale_summary_stays(study, case):
    first = import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    assert first.summary_path == study / PILOT_SUMMARY and first.summary_path.exists()
    field, words = CASES[case]
    with pytest.raises(JudgeImportError) as caught:
        import_judges(study, _write(study, _planted(_lines(study), case)), window=WINDOW,
                      force=True)
    text = str(caught.value)
    assert field in text and words in text, text
    assert "planted.jsonl" in text


def test_the_whole_design_imports_and_writes_valid_json(study):
    result = import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    assert result.records == 12
    json.loads((study / PILOT_SUMMARY).read_text(encoding="utf-8"),
               parse_constant=lambda c: pytest.fail(f"{c} in pilot-summary.json"))


def _files(study) -> dict[str, bytes]:
    """Every file of returns/ and out/ (hidden staged files included) -> its bytes."""
    return {p.relative_to(study).as_posix(): p.read_bytes()
            for folder in ("returns", "out") for p in sorted((study / folder).glob("*"))}


BAD_ARGUMENTS = {
    "a window in words": ["--execution-window", "yesterday to today", "--force"],
    "a window that ends before it starts": [
        "--execution-window", "2026-04-26T11:30:00Z to 2026-04-26T09:00:00Z", "--force"],
    "an empty window": ["--execution-window", "", "--force"],
    "returns inside out/": ["--execution-window", WINDOW, "--force", "--returns", "OUT"],
    "workbooks in the way without --force": ["--execution-window", WINDOW],
}


@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_a_bad_argument_leaves_the_earlier_import_as_it_was(study, case):
    """A window in words was refused (exit 2) after the earlier import's
    pilot-summary.json had been removed, without a word."""
    from click.testing import CliRunner

    from sheetflow.cli import cli

    import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    before = _files(study)
    assert PILOT_SUMMARY in before
    args = [str(study / "out") if a == "OUT" else a for a in BAD_ARGUMENTS[case]]
    out = CliRunner().invoke(cli, ["import-judges", str(study),
                                   str(study / "judge-outputs.example.jsonl"), *args])
    assert out.exit_code == 2, out.output
    assert _files(study) == before


@pytest.mark.parametrize("case", ["a negative cost", "a record missing"])
def test_a_refused_record_set_writes_and_removes_nothing(study, case):
    """A refused import said "nothing was written" but removed the earlier import's
    out/pilot-summary.json (and said so in a warning), leaving that import's workbooks
    without the summary made from them. Now a refusal changes nothing, as it says."""
    from click.testing import CliRunner

    from sheetflow.cli import cli

    import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    before = _files(study)
    assert PILOT_SUMMARY in before
    planted = _write(study, _planted(_lines(study), case))
    out = CliRunner().invoke(cli, ["import-judges", str(study), str(planted),
                                   "--execution-window", WINDOW, "--force"])
    assert out.exit_code == 1, out.output
    assert "nothing was written" in out.output
    assert "removed" not in out.output
    assert _files(study) == before  # the earlier import whole, its summary beside it


def test_a_write_that_fails_leaves_every_earlier_file_whole(study, monkeypatch):
    """The workbooks were saved one by one over the earlier ones: a failure at the
    second left the first replaced and the others not."""
    import sheetflow.judges.importer as importer

    import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    before = _files(study)
    fill, calls = importer._fill, []

    def failing_second(*args):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return fill(*args)

    monkeypatch.setattr(importer, "_fill", failing_second)
    # a valid set whose first workbook (judge-1's, filled first) differs from the earlier
    changed = [_set(r, "judge_opus.rationale", "Other words.") for r in _lines(study)]
    with pytest.raises(OSError):
        import_judges(study, _write(study, changed), window=WINDOW, force=True)
    assert len(calls) == 2
    assert _files(study) == before


def test_an_import_waits_for_an_analyze(study):
    """import-judges took no study lock: run while analyze held it (analyze builds its
    own out/pilot-summary.json from the one there), its summary was replaced by
    analyze's and lost. It now waits for the lock, and writes once it is free."""
    import threading

    from sheetflow.collect.run_lock import study_lock

    import_judges(study, study / "judge-outputs.example.jsonl", window=WINDOW)
    other = "2026-04-27T09:00:00Z to 2026-04-27T10:00:00Z"
    done: list[object] = []

    def run_import() -> None:
        done.append(import_judges(study, study / "judge-outputs.example.jsonl",
                                  window=other, force=True))

    with study_lock(study, "analyze"):
        before = _files(study)
        worker = threading.Thread(target=run_import)
        worker.start()
        worker.join(1.5)
        assert worker.is_alive() and not done  # waiting for the lock
        assert _files(study) == before
    worker.join(60)
    assert done and "2026-04-27T09:00:00Z" in (study / PILOT_SUMMARY).read_text(
        encoding="utf-8")


def test_a_verdict_outside_the_four_labels_is_named_as_such(study):
    """A verdict the prompt does not allow was reported only as disagreeing with the
    mean ("PASS stated, but a mean of 3.0000 is FAIL_WEAK"), never as no label at all;
    a lower-case "fail_weak" read as if it were a different band."""
    records = _lines(study)
    planted = _write(study, [_set(records[0], "judge_opus.overall_verdict", "fail_weak"),
                             *records[1:]])
    with pytest.raises(JudgeImportError) as caught:
        import_judges(study, planted, window=WINDOW)
    assert ("planted.jsonl: line 1 (task-1/A): judge_opus.overall_verdict: 'fail_weak' is "
            "not one of PASS_STRONG, PASS_ADEQUATE, FAIL_WEAK, FAIL_CRITICAL") in str(caught.value)


def test_records_missing_from_the_set_name_no_line_0(study):
    """The set's own gap was said to be on "line 0", a line no file has."""
    with pytest.raises(JudgeImportError) as caught:
        import_judges(study, _write(study, _lines(study)[:-1]), window=WINDOW)
    text = str(caught.value)
    assert "planted.jsonl (the record set): task_id/cell_id: 1 of the design's 12" in text
    assert "line 0" not in text


def test_a_rationale_longer_than_a_cell_is_refused_not_cut_short(study):
    """openpyxl cut a 40,000-character rationale at 32,767 without a word: the import
    said it succeeded and the judge's text reached collect shortened."""
    records = _lines(study)
    planted = _write(study, [_set(records[0], "judge_opus.rationale", "x" * 40_000),
                             *records[1:]])
    with pytest.raises(JudgeImportError) as caught:
        import_judges(study, planted, window=WINDOW)
    assert ("planted.jsonl: line 1 (task-1/A): judge_opus.rationale: 40,000 characters "
            "(UTF-16 units, as Excel counts), but a workbook cell holds at most 32,767"
            ) in str(caught.value)
    assert not list((study / "returns").glob("*.xlsx"))
