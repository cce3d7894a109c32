"""What import-judges does with the fields of a record: one it does not know is said
to be ignored, once per field name; every text it writes into a workbook is checked
to fit a cell, not the rationale alone."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study

WINDOW = "2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z"
NOTE = '''
[[dimensions]]
id = "note"
label = "Note"
kind = "text"
required = false
help = "Anything else the judge would say."
'''


def _study(tmp_path, note: bool = False):
    folder = init_study(tmp_path / "pilot", "judge-likert")
    if note:  # a second text the judges write, beside the rationale
        spec = folder / "study.toml"
        text = spec.read_text(encoding="utf-8")
        at = text.index("[[totals]]")
        spec.write_text(text[:at] + NOTE.lstrip() + "\n" + text[at:], encoding="utf-8")
    generate_packs(folder)
    return folder


def _records(folder):
    path = folder / "judge-outputs.example.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _import(folder, records, *options):
    path = folder.parent / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return CliRunner().invoke(cli, ["import-judges", str(folder), str(path), *options])


def test_a_field_sheetflow_does_not_know_is_said_to_be_ignored_once(tmp_path):
    """A record's extra fields were imported as nothing, without a word: a judge's
    output given under a name of its own vanished."""
    folder = _study(tmp_path)
    records = _records(folder)
    for record in records[:3]:
        record["seed"] = 7
    records[1]["judge_gpt"]["confidence"] = 0.8
    result = _import(folder, records, "--execution-window", WINDOW)
    assert result.exit_code == 0, result.output
    warned = [ln for ln in result.stderr.splitlines() if "sheetflow knows" in ln]
    assert warned == [
        "warning: r.jsonl: line 1 (task-1/A): seed: not a field sheetflow knows, so it "
        "was ignored (not imported); 2 more lines hold it",
        "warning: r.jsonl: line 2 (task-1/B): judge_gpt.confidence: not a field "
        "sheetflow knows, so it was ignored (not imported)"]
    doc = json.loads(_import(folder, records, "--execution-window", WINDOW, "--force",
                             "--json").stdout)
    assert len([w for w in doc["warnings"] if "sheetflow knows" in w]) == 2


def test_the_records_of_the_template_have_no_field_to_ignore(tmp_path):
    folder = _study(tmp_path)
    result = _import(folder, _records(folder), "--execution-window", WINDOW)
    assert result.exit_code == 0, result.output
    assert "sheetflow knows" not in result.stderr


@pytest.mark.parametrize(("char", "code"), [("\x07", "U+0007"), ("\ufffe", "U+FFFE")])
def test_every_text_written_into_a_workbook_is_checked_not_the_rationale_alone(
        tmp_path, char, code):
    """A judge's text of another rubric dimension holding U+0007 stopped the import
    with openpyxl's IllegalCharacterError; U+FFFE was written, and the workbook could
    not be opened."""
    folder = _study(tmp_path, note=True)
    records = _records(folder)
    records[0]["judge_opus"]["note"] = f"see{char} above"
    result = _import(folder, records, "--execution-window", WINDOW)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert (f"r.jsonl: line 1 (task-1/A): judge_opus.note: contains {code}, a ") \
        in result.stderr
    assert not list((folder / "returns").glob("*.xlsx"))


def test_a_text_the_import_does_not_write_is_not_refused_for_its_characters(tmp_path):
    """A field no cell is filled from is ignored (and said so), never refused."""
    folder = _study(tmp_path)
    records = _records(folder)
    records[0]["judge_opus"]["note"] = "see\x07 above"  # no such dimension in this rubric
    result = _import(folder, records, "--execution-window", WINDOW)
    assert result.exit_code == 0, result.output
    assert "judge_opus.note: not a field sheetflow knows" in result.stderr
