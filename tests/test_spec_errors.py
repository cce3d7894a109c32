"""Broken specs: each kind gives one clear line naming file and key/row, exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from spec_helpers import check_gives_one_line
from spec_helpers import replace_once as _replace

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study


def _write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)


# Each case: (name, template, mutate(study_dir), words the one line must contain)
CASES = [
    ("unknown dimension kind", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'kind = "checklist"', 'kind = "checkbox"'),
     ["study.toml", "id=evidence", "unknown dimension kind 'checkbox'", "allowed:"]),
    ("bins with a gap", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{ min = 2, max = 3, points = 2 }",
                        "{ min = 2, max = 2, points = 2 }"),
     ["study.toml", "id=depth", "gap between 2 and 4"]),
    ("bins that overlap", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{ min = 4, max = 5, points = 4 }",
                        "{ min = 3, max = 5, points = 4 }"),
     ["study.toml", "id=depth", "overlap"]),
    ("bins not starting at 0", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{ min = 0, max = 1, points = 0 }",
                        "{ min = 1, max = 1, points = 0 }"),
     ["study.toml", "id=depth", "must start at 0"]),
    # one resample made every bootstrap interval of the analysis width 0
    ("too few bootstrap resamples", "paired-rubric",
     lambda d: _replace(d / "study.toml", "n_boot = 1000", "n_boot = 39"),
     ["study.toml", "'n_boot' = 39 is too few for a 95% interval", "at least 40"]),
    ("duplicate dimension id", "paired-rubric",
     lambda d: _replace(d / "study.toml", "[[totals]]",
                        '[[dimensions]]\nid = "notes"\nkind = "text"\n\n[[totals]]'),
     ["study.toml", "id=notes", "duplicate dimension id 'notes'"]),
    ("duplicate case id", "paired-rubric",
     lambda d: _replace(d / "items.csv", "TC-002,", "TC-001,"),
     ["items.csv", "row 3", "duplicate id 'TC-001'", "first at row 2"]),
    ("items file missing a named column", "paired-rubric",
     lambda d: _replace(d / "items.csv", "case_id,prompt,", "case_id,question,"),
     ["items.csv", "header", "column 'prompt'", "the file has:"]),
    ("empty choice label", "answer-review",
     lambda d: _replace(d / "study.toml", '"Over-refusal"', '""'),
     ["study.toml", "id=refusal_appropriateness", "choice label is empty"]),
    ("scale minimum above maximum", "judge-likert",
     lambda d: _replace(d / "study.toml", "min = 1\nmax = 5", "min = 6\nmax = 5"),
     ["study.toml", "id=completeness", "scale min 6 is above max 5"]),
    ("unreadable encoding", "paired-rubric",
     lambda d: _write_bytes(d / "raters.csv", "rater_id,name\nEV-01,Jos\xe9\n".encode("latin-1")),
     ["raters.csv", "is not UTF-8", "byte 0xe9", "save it as CSV UTF-8"]),
    ("BOM in the spec", "paired-rubric",
     lambda d: _write_bytes(d / "study.toml", b"\xef\xbb\xbf" + (d / "study.toml").read_bytes()),
     ["study.toml", "byte-order mark", "without BOM"]),
    ("unknown design", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'kind = "paired"', 'kind = "crossover"'),
     ["study.toml", "[design]", "unknown design 'crossover'", "paired, single"]),
    # a value of a closed set spelt wrong: the one meant is named, as for a key
    ("misspelt design", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'kind = "paired"', 'kind = "Pairde"'),
     ["[design]", "unknown design 'Pairde'; did you mean 'paired'? allowed: paired, single"]),
    ("misspelt level", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'level = "ordinal"', 'level = "ordnial"'),
     ["id=depth", "unknown level 'ordnial'; did you mean 'ordinal'? allowed: nominal, "
      "ordinal, interval, ratio"]),
    ("misspelt dimension kind", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'kind = "checklist"', 'kind = "check_list"'),
     ["id=evidence", "unknown dimension kind 'check_list'; did you mean 'checklist'?"]),
    ("misspelt smtp security", "paired-rubric",
     lambda d: (d / "study.toml").write_text(
         (d / "study.toml").read_text(encoding="utf-8")
         + '\n[mail]\nsmtp = "smtp.example.org:587"\nsmtp_security = "startls"\n',
         encoding="utf-8"),
     ["[mail]", "'smtp_security' is 'startls' (did you mean 'starttls'?); use one of "
      "starttls, ssl, none"]),
    ("N/A value that is also a scale value", "judge-likert",
     lambda d: _replace(d / "study.toml", "min = 1\nmax = 5\n", "min = 1\nmax = 5\nna = [3]\n"),
     ["study.toml", "id=completeness", "N/A value '3' is also a value of the scale 1-5"]),
    ("rater file without ids", "paired-rubric",
     lambda d: (d / "raters.csv").write_text("name,email\nA,a@example.org\n", encoding="utf-8"),
     ["raters.csv", "header", "no 'rater_id' column"]),
    ("duplicate rater ids", "paired-rubric",
     lambda d: _replace(d / "raters.csv", "EV-02,", "EV-01,"),
     ["raters.csv", "row 3", "duplicate rater_id 'EV-01'"]),
    ("empty rater id", "paired-rubric",
     lambda d: _replace(d / "raters.csv", "EV-02,", ","),
     ["raters.csv", "row 3", "'rater_id' is empty"]),
    ("TOML syntax error", "paired-rubric",
     lambda d: _replace(d / "study.toml", 'id = "depth"', 'id = "depth'),
     ["study.toml", "is not valid TOML"]),
    ("typo in a key", "paired-rubric",
     lambda d: _replace(d / "study.toml", "confidence = true", "confidance = true"),
     ["study.toml", "id=depth", "unknown key 'confidance'; did you mean 'confidence'? allowed:"]),
    ("missing seed", "paired-rubric",
     lambda d: _replace(d / "study.toml", "seed = 20260915\n", ""),
     ["study.toml", "[design]", "'seed' is required"]),
    ("total names an unknown dimension", "paired-rubric",
     lambda d: _replace(d / "study.toml", '"logic", "actionability"]', '"logik", "actionability"]'),
     ["study.toml", "[[totals]]", "unknown dimension 'logik'"]),
    ("unknown analysis", "paired-rubric",
     lambda d: _replace(d / "study.toml", '"alpha", "cohen_kappa"', '"alfa", "cohen_kappa"'),
     ["study.toml", "[analysis]", "unknown analysis 'alfa'", "allowed:"]),
    ("preference in a single design", "answer-review",
     lambda d: _replace(d / "study.toml", 'kind = "flag"', 'kind = "preference"\nscope = "case"'),
     ["study.toml", "id=gold_dispute", "needs a paired design"]),
    ("unknown file-name placeholder", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{last_name}-{date}", "{surname}-{date}"),
     ["study.toml", "[files]", "unknown placeholder", "{last_name}"]),
    ("item arm not in the design", "answer-review",
     lambda d: _replace(d / "items.csv", ",assistant_dense_rag,", ",assistant_other,"),
     ["items.csv", "row", "arm 'assistant_other' is not one of the design's arms"]),
    ("control character in an item", "paired-rubric",
     lambda d: _replace(d / "items.csv", "open-source", "open\x07source"),
     ["items.csv", "row 2", "control character U+0007"]),
    ("missing items file", "paired-rubric",
     lambda d: (d / "items.csv").unlink(),
     ["study.toml", "[items]", "items file 'items.csv' not found"]),
    ("second-rater subset without a second rater", "anchored-plan",
     lambda d: _replace(d / "raters.csv", ",second", ",primary"),
     ["study.toml", "[design.second_rater]", "no rater has role 'second'"]),
    ("word range reversed", "paired-rubric",
     lambda d: _replace(d / "study.toml", "min_words = 50", "min_words = 500"),
     ["study.toml", "id=methodology_note", "min_words 500 is above max_words 100"]),
    ("file-name placeholder with an attribute", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{last_name}-{date}", "{last_name.x}-{date}"),
     ["study.toml", "[files]", "uses an unknown placeholder {last_name.x}; allowed:"]),
    ("file-name pattern with a lone brace", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{last_name}-{date}", "{last_name}-{date"),
     ["study.toml", "[files]", "has a '{' or '}' without its partner"]),
    ("file-name pattern with a numbered placeholder", "paired-rubric",
     lambda d: _replace(d / "study.toml", "{last_name}-{date}", "{last_name}-{0}"),
     ["study.toml", "[files]", "uses an unknown placeholder {0}; allowed:"]),
    ("negative design seed", "answer-review",
     lambda d: _replace(d / "study.toml", "seed = 3003", "seed = -1"),
     ["study.toml", "[design]", "'seed' = -1 must be at least 0"]),
    ("negative analysis seed", "keep-known",
     lambda d: _replace(d / "study.toml", "seed = 7\n", "seed = -7\n"),
     ["study.toml", "[analysis]", "'seed' = -7 must be at least 0"]),
]


@pytest.mark.parametrize("name,template,mutate,words", CASES, ids=[c[0] for c in CASES])
def test_broken_spec_gives_one_clear_line(tmp_path, name, template, mutate, words):
    d = init_study(tmp_path / "study", template)
    mutate(d)
    check_gives_one_line(d, words)


def test_at_least_fifteen_kinds():
    assert len(CASES) >= 15


def test_several_problems_are_all_reported(tmp_path):
    d = init_study(tmp_path / "study", "paired-rubric")
    _replace(d / "study.toml", 'kind = "checklist"', 'kind = "checkbox"')
    _replace(d / "raters.csv", "EV-02,", "EV-01,")
    result = CliRunner().invoke(cli, ["check", str(d)])
    assert result.exit_code == 1
    assert "checkbox" in result.output and "duplicate rater_id" in result.output


def test_check_prints_summary_and_hash(tmp_path):
    d = init_study(tmp_path / "study", "paired-rubric")
    result = CliRunner().invoke(cli, ["check", str(d)])
    assert result.exit_code == 0, result.output
    assert "items      18" in result.output
    assert "spec hash  " in result.output
    assert result.output.rstrip().endswith("ok")


def test_check_missing_folder_is_a_usage_error_naming_it(tmp_path):
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'nowhere'}: no such folder" in result.output


def test_check_folder_without_spec_names_init(tmp_path):
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert f"no study.toml here (not a study folder); run 'sheetflow init {tmp_path}'" \
        in result.output


def test_usage_errors_exit_2(tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["check", "--nope"]).exit_code == 2
    assert runner.invoke(cli, ["init", "--template", "nope", str(tmp_path / "x")]).exit_code == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    result = runner.invoke(cli, ["init", str(tmp_path / "full")])
    assert result.exit_code == 2 and "not empty" in result.output
    assert runner.invoke(cli, ["nonsense"]).exit_code == 2


def test_init_list_names_every_template():
    result = CliRunner().invoke(cli, ["init", "--list"])
    assert result.exit_code == 0
    for name in ("paired-rubric", "keep-known", "anchored-plan", "answer-review",
                 "judge-likert"):
        assert name in result.output
