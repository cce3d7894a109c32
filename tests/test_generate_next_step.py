"""The step ``sheetflow generate`` names last is the one that comes next for its packs.

Automated judges (judge-likert, mapped in ``[analysis.params.jsonl]``) have no e-mail:
their packs are filled by ``sheetflow import-judges``, not sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study

WINDOW = "2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z"


def test_judge_packs_are_imported_not_sent_and_the_step_named_works(tmp_path):
    study = tmp_path / "judges"
    init_study(study, "judge-likert")
    out = CliRunner().invoke(cli, ["generate", str(study)])
    assert out.exit_code == 0, out.output
    assert out.output.strip().splitlines()[-1] == (
        f"3 packs written; next: sheetflow import-judges {study} OUTPUTS.jsonl "
        "--execution-window 'START to END' (the judges' JSONL outputs and the run's UTC "
        f"times), then sheetflow collect {study}")
    assert "send them" not in out.output
    # the step as named, with the template's example outputs, then the one after it
    done = CliRunner().invoke(cli, ["import-judges", str(study),
                                    str(study / "judge-outputs.example.jsonl"),
                                    "--execution-window", WINDOW])
    assert done.exit_code == 0, done.output
    assert CliRunner().invoke(cli, ["collect", str(study)]).exit_code == 0


def test_generate_json_says_which_packs_are_imported(tmp_path):
    study = tmp_path / "judges"
    init_study(study, "judge-likert")
    out = CliRunner().invoke(cli, ["generate", str(study), "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["judges"] == ["judge-1", "judge-2", "judge-3"]
    assert doc["next"].startswith(f"sheetflow import-judges {study} OUTPUTS.jsonl")


def test_people_are_sent_their_packs_and_judges_imported():
    from sheetflow.cli.generate_commands import next_step

    study = Path("s")
    assert next_step(study, ["r1", "r2"], []) == "send them, then sheetflow status s"
    # one pack: "1 pack written; next: send them" read wrong
    assert next_step(study, ["r1"], []) == "send it, then sheetflow status s"
    assert next_step(study, ["r1", "r1"], []) == "send them, then sheetflow status s"
    assert next_step(study, ["r1", "j1", "r1"], ["j1"]) == (
        "send the packs of r1; sheetflow import-judges s OUTPUTS.jsonl --execution-window "
        "'START to END' for j1 (the judges' JSONL outputs and the run's UTC times); then "
        "sheetflow status s")
    assert next_step(study, ["j1"], ["j1"], "move o/packs and o/sealed into s") == (
        "move o/packs and o/sealed into s, then sheetflow import-judges s OUTPUTS.jsonl "
        "--execution-window 'START to END' (the judges' JSONL outputs and the run's UTC "
        "times), then sheetflow collect s")


def test_generate_eml_says_once_that_judges_get_no_draft(tmp_path):
    """generate --eml warned once per judge that they had no e-mail address: judges are
    models, whose packs import-judges fills; they get no draft by design (not even one
    with an address), and the mailing line says so once. A person without an address is
    still warned of."""
    study = tmp_path / "judges"
    init_study(study, "judge-likert")
    raters = study / "raters.csv"
    raters.write_text(raters.read_text().replace(
        "judge-1,Judge One (Claude Opus 4.7),Opus,,", "judge-1,Judge One (Claude Opus 4.7),"
        "Opus,judge-1@example.org,"), encoding="utf-8")
    assert "judge-1@example.org" in raters.read_text()
    out = CliRunner().invoke(cli, ["generate", str(study), "--eml"])
    assert out.exit_code == 0, out.output
    assert out.stderr == ""
    assert ("mailing    mailing-list.csv, 0 .eml drafts (none for the 3 judges: "
            "import-judges fills their packs)") in out.stdout.splitlines()
    assert not list((study / "packs" / "eml").rglob("*.eml"))
    people = tmp_path / "people"
    init_study(people, "paired-rubric")
    listed = people / "raters.csv"
    listed.write_text(listed.read_text().replace("ev03@example.org", ""), encoding="utf-8")
    sent = CliRunner().invoke(cli, ["generate", str(people), "--eml"])
    assert sent.exit_code == 0, sent.output
    assert "mailing    mailing-list.csv, 2 .eml drafts" in sent.stdout.splitlines()
    assert "warning: rater EV-03 has no email address" in sent.stderr
