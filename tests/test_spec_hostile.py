"""Hostile or careless specs and rater lists are refused at ``check``, one line each.

Each case fails on a sheetflow that wrote packs first and crashed later (CR/LF in a
name), mailed two recipients (a comma in an address), overwrote one rater's pack with
another's (two raters with the same last name), recursed without bound (deep nesting),
copied a file from outside the study into every pack, or ran out of memory (100,000
items).
"""

from __future__ import annotations

import csv
import email
import os
from email import policy
from pathlib import Path

import pytest
from click.testing import CliRunner
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.cli import cli
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.limits import MAX_DEPTH, MAX_ITEMS, nesting_depth
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study

HEADER = "rater_id,name,last_name,email,role\n"


def _raters(d: Path, *rows: str) -> None:
    (d / "raters.csv").write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8",
                                  newline="")


def _append(d: Path, text: str) -> None:
    with (d / "study.toml").open("a", encoding="utf-8") as f:
        f.write(text)


def _outside(d: Path) -> None:
    (d.parent / "secret.txt").write_text("the arm key is ...", encoding="utf-8")


def _items(d: Path, n: int) -> None:
    """``n`` items with short texts (the limit is on rows; texts only cost time here)."""
    path = d / "items.csv"
    header = next(csv.reader(path.open(encoding="utf-8")))
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(",".join(header) + "\n")
        f.writelines(f"TC-{i:06d}" + ",text" * (len(header) - 1) + "\n" for i in range(n))
    scores = d / "internal_scores.csv"  # the internal scores name only items that exist
    if scores.exists():
        with scores.open("w", encoding="utf-8", newline="") as f:
            f.write("case_id,arm,total\n")
            f.writelines(f"TC-{i:06d},{arm},5\n" for i in range(n)
                         for arm in ("iter1_baseline", "iter2_improved"))


# (name, template, mutate(study_dir), words the one line must contain)
CASES = [
    ("two raters whose pack names differ only in case", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,Smith,anna@example.org,primary",
                       "EV-02,Bob,smith,bob@example.org,primary"),
     ["raters.csv", "rows 2 and 3", "EV-01", "EV-02", "external-validation-scores-smith",
      "{rater_id}"]),
    ("two raters whose pack names collide after sanitising", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,O'Neil,anna@example.org,primary",
                       "EV-02,Bob,O Neil,bob@example.org,primary"),
     ["raters.csv", "rows 2 and 3", "O-Neil"]),
    ("CR/LF in a rater's name", "paired-rubric",
     lambda d: _raters(d, 'EV-01,"Anna\r\nBcc: x@evil.example",Smith,anna@example.org,primary'),
     ["raters.csv", "row 2", "column 'name'", "U+000A", "one line of plain text"]),
    ("NUL in a rater's name", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna\x00,Smith,anna@example.org,primary"),
     ["raters.csv", "row 2", "column 'name'", "U+0000"]),
    ("line separator in an e-mail address", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,Smith,anna@example.org\u2028Bcc: x@evil.example,primary"),
     ["raters.csv", "row 2", "column 'email'", "U+2028"]),
    ("paragraph separator in a last name", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,Smi\u2029th,anna@example.org,primary"),
     ["raters.csv", "row 2", "column 'last_name'", "U+2029"]),
    ("bidirectional override in a last name", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,\u202exslx.htimS,anna@example.org,primary"),
     ["raters.csv", "row 2", "U+202E"]),
    ("a comma giving two recipients", "paired-rubric",
     lambda d: _raters(d, 'EV-01,Anna,Smith,"anna@example.org,eve@evil.example",primary'),
     ["raters.csv", "row 2", "more than one address", "one address"]),
    ("an address with a display name", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,Smith,Eve <eve@evil.example>,primary"),
     ["raters.csv", "row 2", "email", "name@example.org"]),
    ("an address without a domain", "answer-review",
     lambda d: _raters(d, "rater1,Anna,Smith,anna,primary"),
     ["raters.csv", "row 2", "email 'anna' is not a valid address"]),
    ("a line break in the mail subject", "paired-rubric",
     lambda d: replace_once(d / "study.toml", 'subject = "External validation package: ',
                        'subject = "Bcc: eve@evil.example\\nExternal validation package: '),
     ["study.toml", "[email]", "'subject'", "U+000A"]),
    ("a line break in the study title (it fills the mail subject)", "answer-review",
     lambda d: replace_once(d / "study.toml", 'title = "', 'title = "Bcc: eve@evil.example\\r\\n'),
     ["study.toml", "[study]", "'title'", "U+000D"]),
    ("a pack name Windows cannot create", "paired-rubric",
     lambda d: _raters(d, "EV-01,Anna,Smith,anna@example.org,primary",
                       "EV-02,Bob,x,bob@example.org,primary") or replace_once(
         d / "study.toml", '"external-validation-scores-{last_name}-{date}.xlsx"',
         '"{name}.xlsx"') or replace_once(d / "raters.csv", "Bob,x", "Con,x"),
     ["raters.csv", "row 3", "EV-02", "'Con.xlsx'", "reserves for a device"]),
    ("a pack name too long for a file system", "paired-rubric",
     lambda d: _raters(d, f"EV-01,Anna,{'S' * 300},anna@example.org,primary"),
     ["raters.csv", "row 2", "longer than 200 bytes"]),
    ("deep nesting", "paired-rubric",
     lambda d: _append(d, "\n[analysis.params.x]\ny = " + "[" * 100_000 + "]" * 100_000 + "\n"),
     ["study.toml", f"nest more than {MAX_DEPTH} levels"]),
    ("nesting just past the limit", "judge-likert",
     lambda d: _append(d, "\n[analysis.params.x]\ny = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH
                       + "\n"),
     ["study.toml", f"nest more than {MAX_DEPTH} levels"]),
    ("an instructions file outside the study", "paired-rubric",
     lambda d: (_outside(d), replace_once(d / "study.toml", 'instructions_file = "instructions.md"',
                                      'instructions_file = "../secret.txt"')),
     ["study.toml", "[study] instructions_file", "'../secret.txt' is outside the study folder"]),
    ("an absolute instructions path", "keep-known",
     lambda d: (_outside(d), replace_once(d / "study.toml", '"instructions.md"',
                                      f'"{(d.parent / "secret.txt").as_posix()}"')),
     ["study.toml", "[study] instructions_file", "is outside the study folder"]),
    ("an instructions symlink leading out", "answer-review",
     lambda d: (_outside(d), (d / "instructions.md").unlink(),
                (d / "instructions.md").symlink_to(d.parent / "secret.txt")),
     ["study.toml", "[study] instructions_file", "'instructions.md' is outside"]),
    ("an items file outside the study", "anchored-plan",
     lambda d: (_outside(d), replace_once(d / "study.toml", 'file = "items.csv"',
                                      'file = "../../etc/items.csv"')),
     ["study.toml", "[items] file", "is outside the study folder"]),
    ("a raters file outside the study", "judge-likert",
     lambda d: replace_once(d / "study.toml", 'file = "raters.csv"', 'file = "../raters.csv"'),
     ["study.toml", "[raters] file", "is outside the study folder"]),
    ("a pipe named as the items file", "paired-rubric",
     lambda d: ((d / "items.csv").unlink(), os.mkfifo(d / "items.csv")),
     ["study.toml", "[items]", "items file 'items.csv' is not a regular file"]),
    ("a folder named as the instructions file", "paired-rubric",
     lambda d: ((d / "instructions.md").unlink(), (d / "instructions.md").mkdir()),
     ["study.toml", "[study]", "is not a regular file"]),
    ("a target that is not a number", "paired-rubric",  # "alpha >= nan": never met
     lambda d: replace_once(d / "study.toml", "alpha = 0.70\ndirection", "alpha = nan\ndirection"),
     ["study.toml", "'targets' must be finite numbers; alpha is nan"]),
    ("an infinite target", "paired-rubric",
     lambda d: replace_once(d / "study.toml", "spearman = 0.60", "spearman = -inf"),
     ["study.toml", "'targets' must be finite numbers; spearman is -inf"]),
    ("a raters file saved with semicolons", "paired-rubric",  # European Excel's "CSV"
     lambda d: (d / "raters.csv").write_text(
         (d / "raters.csv").read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8"),
     ["raters.csv", "header", "separated by semicolons", "CSV UTF-8 (comma delimited)"]),
    ("100,000 items", "paired-rubric",
     lambda d: _items(d, 100_000),
     ["items.csv", f"more than {MAX_ITEMS:,} rows", "split it into several studies"]),
    ("one item past the limit", "paired-rubric",
     lambda d: _items(d, MAX_ITEMS + 1),
     ["items.csv", f"more than {MAX_ITEMS:,} rows"]),
    ("a spec over 1 MB", "paired-rubric",
     lambda d: _append(d, "\n# " + "x" * 1_100_000 + "\n"),
     ["study.toml", "bytes; sheetflow reads at most 1,000,000"]),
    ("too many dimensions", "judge-likert",
     lambda d: _append(d, "".join(f'\n[[dimensions]]\nid = "d{i}"\nkind = "text"\n'
                                  for i in range(300))),
     ["study.toml", "[[dimensions]]", "at most 200"]),
]


@pytest.mark.parametrize("name,template,mutate,words", CASES, ids=[c[0] for c in CASES])
def test_hostile_spec_gives_one_clear_line(tmp_path, name, template, mutate, words):
    d = init_study(tmp_path / "study", template)
    mutate(d)
    check_gives_one_line(d, words)


def test_generate_refuses_colliding_pack_names_before_writing(tmp_path):
    d = init_study(tmp_path / "study", "paired-rubric")
    _raters(d, "EV-01,Anna,Smith,anna@example.org,primary",
            "EV-02,Bob,Smith,bob@example.org,primary")
    result = CliRunner().invoke(cli, ["generate", str(d), "--eml"])
    assert result.exit_code == 1, result.output
    assert "EV-01" in result.output and "EV-02" in result.output
    assert not (d / "packs").exists() and not (d / "sealed").exists()


def test_sitting_two_names_count_in_collisions(tmp_path):
    """A last name ending in '-sitting2' would take another rater's second-sitting file."""
    d = init_study(tmp_path / "study", "keep-known")
    replace_once(d / "study.toml", "{rater_id}-{date}", "{last_name}")
    _raters(d, "R1,Anna,Smith,anna@example.org,primary",
            "R2,Bob,Smith-sitting2,bob@example.org,primary")
    result = CliRunner().invoke(cli, ["check", str(d)])
    assert result.exit_code == 1 and "Smith-sitting2" in result.output, result.output


def test_the_item_limit_itself_is_allowed(tmp_path):
    d = init_study(tmp_path / "study", "paired-rubric")
    _items(d, MAX_ITEMS)
    result = CliRunner().invoke(cli, ["check", str(d)])
    assert result.exit_code == 0, result.output
    assert f"items      {MAX_ITEMS}" in result.output


def test_nesting_depth_counts_without_recursion():
    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    assert nesting_depth(deep) == MAX_DEPTH + 1
    assert nesting_depth({"a": [{"b": 1}]}) == 3
    assert nesting_depth(7) == 0


@pytest.mark.parametrize("template", ["paired-rubric", "answer-review", "keep-known",
                                      "anchored-plan", "judge-likert"])
def test_every_draft_has_one_recipient_and_no_extra_header(tmp_path, template):
    d = init_study(tmp_path / "study", template)
    # judge-likert's locked trio is R1-R3 (no draft: import-judges fills their packs);
    # R4 is a person rating beside them, whose invitation is drafted
    extra = ["R4,Ada,Nwosu,ada@example.org,primary"] if template == "judge-likert" else []
    # anchored-plan's protocol 002 fixes two raters: a primary and a second rater
    r2 = [] if template == "anchored-plan" else ["R2,Bob,Lindqvist,bob@example.org,primary"]
    _raters(d, 'R1,"Okafor, Anna",Okafor,anna@example.org,primary', *r2,
            "R3,Eve,Moreau,eve@example.org,second", *extra)
    if template != "anchored-plan":
        replace_once(d / "raters.csv", ",second", ",primary")
    if template == "judge-likert":  # the locked trio names the raters
        replace_once(d / "study.toml", '"judge-1", judge_gpt = "judge-2", judge_minimax = '
                     '"judge-3"', '"R1", judge_gpt = "R2", judge_minimax = "R3"')
    result = generate_packs(d, emails=True)
    drafted = len(result.packs) - (3 if template == "judge-likert" else 0)
    assert len(result.eml_paths) == drafted >= 1  # second raters: at data lock
    for path in result.eml_paths:
        msg = email.message_from_bytes(path.read_bytes(), policy=policy.default)
        assert len(msg["To"].addresses) == 1
        assert sorted(set(msg.keys())) == sorted(
            {"To", "Subject", "X-Unsent", "Content-Type", "MIME-Version"})


# Values of the wrong type where the loader used to convert or iterate without asking
WRONG_TYPES = [
    ("paired-rubric", "{ min = 0, max = 1, points = 0 }", '{ min = "a", max = 1, points = 0 }'),
    ("paired-rubric", "{ min = 0, max = 1, points = 0 }", '{ min = 0, max = 1, points = "x" }'),
    ("paired-rubric", "{ min = 0, max = 1, points = 0 }", '"bin"'),
    ("judge-likert", "min = 1\nmax = 5", 'min = "x"\nmax = 5'),
    ("anchored-plan", 'id_column = "output_id"', "id_column = []"),
    ("anchored-plan", 'response_column = "output"', "response_column = [{}]"),
    ("keep-known", 'show = [', "show = -1\nxshow = ["),
    ("paired-rubric", "[analysis]", '[analysis]\nbands = [{ min = "x", label = "y" }]'),
]


@pytest.mark.parametrize("template,old,new", WRONG_TYPES, ids=[w[2] for w in WRONG_TYPES])
def test_a_value_of_the_wrong_type_is_a_line_not_a_traceback(tmp_path, template, old, new):
    d = init_study(tmp_path / "study", template)
    replace_once(d / "study.toml", old, new)
    result = CliRunner().invoke(cli, ["check", str(d)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("error: ") for ln in lines), lines
    assert lines[0].startswith(f"error: {d}/study.toml: "), lines


def test_braces_in_the_mail_text_are_the_coordinators_words(tmp_path):
    """A '{' in the [email] subject or body made generate --eml (and send) crash with a
    traceback after writing the packs and the key: the text was used as a format
    string. Only the known placeholders are filled; every other brace stays as written."""
    d = init_study(tmp_path / "study", "paired-rubric")
    replace_once(d / "study.toml", 'subject = "External validation package: your scoring '
                 'workbook"', 'subject = "Scores {due soon} for {name"')
    replace_once(d / "study.toml", "Dear {name},",
                 "Dear {name}, (type {} or {{name}} or {unknown} as you like) {")
    result = CliRunner().invoke(cli, ["generate", str(d), "--eml"])
    assert result.exit_code == 0, result.output
    draft = sorted((d / "packs" / "eml").glob("*.eml"))[0]
    msg = email.message_from_bytes(draft.read_bytes(), policy=policy.default)
    to = msg["To"].addresses[0].addr_spec
    name = next(r.name for r in load_study(d).raters if r.email == to)
    assert msg["Subject"] == "Scores {due soon} for {name"
    body = msg.get_body(("plain",)).get_content()
    assert f"Dear {name}, (type {{}} or {{{name}}} or {{unknown}} as you like) {{" in body
