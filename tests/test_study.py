"""Study spec: loading, the five templates pinned to their protocols, the spec hash."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import openpyxl
import pytest

from sheetflow.errors import SpecError
from sheetflow.spec.rubric import Bin
from sheetflow.spec.study import load_study, read_table, spec_hash
from sheetflow.spec.templates import data_dir, init_study, list_templates

TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")


@pytest.fixture
def study_dir(tmp_path: Path):
    """Copy a template into a fresh folder and return that folder."""

    def make(template: str = "paired-rubric", name: str = "s") -> Path:
        return init_study(tmp_path / name, template)

    return make


def test_every_protocol_has_a_template():
    assert set(list_templates()) == set(TEMPLATES)


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_loads(template, study_dir):
    study = load_study(study_dir(template))
    assert study.items and study.raters
    assert len(study.hash) == 64


# ---------------------------------------------------------------- protocol 000


def test_paired_rubric_is_protocol_000_exactly(study_dir):
    """Protocol 000, Step 1.1 (rubric), 2.2 (confidence), 6.1 (columns, file name)."""
    s = load_study(study_dir("paired-rubric"))
    r = s.rubric
    assert [d.id for d in r.by_scope("response")] == [
        "depth", "evidence", "alternatives", "logic", "actionability"]
    depth, evidence, alternatives, logic, action = r.by_scope("response")
    assert depth.kind == alternatives.kind == action.kind == "count"
    assert depth.bins == (Bin(0, 1, 0), Bin(2, 3, 2), Bin(4, 5, 4), Bin(6, None, 5))
    assert alternatives.bins == (Bin(0, 0, 0), Bin(1, 1, 2), Bin(2, 2, 4), Bin(3, None, 5))
    assert action.bins == (Bin(0, 0, 0), Bin(1, 2, 2), Bin(3, None, 4))
    assert [depth.points_for_count(n) for n in range(8)] == [0, 0, 2, 2, 4, 4, 5, 5]
    assert [alternatives.points_for_count(n) for n in range(5)] == [0, 2, 4, 5, 5]
    assert [action.points_for_count(n) for n in range(5)] == [0, 2, 2, 4, 4]
    assert evidence.kind == logic.kind == "checklist"
    assert evidence.questions == (
        "Evidence cited?", "Source credibility assessed?", "Evidence quality evaluated?")
    assert logic.questions == (
        "Clear premises stated?", "Analysis follows from premises?",
        "Conclusion supported by analysis?")
    assert all(d.confidence and d.required and d.level == "ordinal"
               for d in r.by_scope("response"))
    (total,) = r.totals
    assert total.of == ("depth", "evidence", "alternatives", "logic", "actionability")
    assert (total.method, total.minimum, total.maximum) == ("sum", 0, 20)
    assert sum(r.dimension(d).points_range[1] for d in total.of) == 20
    direction, notes = r.by_scope("case")
    assert (direction.kind, direction.choices) == ("preference", ("A>B", "B>A", "Tied"))
    assert direction.required
    assert (notes.kind, notes.required) == ("text", False)
    note, hours, ack, recognised, concerns, method = r.by_scope("study")
    assert (note.kind, note.required, note.min_words, note.max_words) == ("text", True, 50, 100)
    # step 6.3: hours worked, acknowledgment, blinding integrity; 6.2: optional 200-400 words
    assert (hours.kind, hours.decimals, hours.required) == ("number", 2, True)
    assert ack.choices == ("Anonymous", "Named", "Co-authorship request")
    assert (recognised.kind, recognised.required) == ("binary", True)
    assert (concerns.kind, concerns.required) == ("text", False)
    assert (method.required, method.min_words, method.max_words) == (False, 200, 400)
    assert s.pack_name == "external-validation-scores-{last_name}-{date}.xlsx"
    assert s.design.paired and s.design.labels == ("A", "B")
    assert [i.id for i in s.items] == [f"TC-{n:03d}" for n in range(1, 19)]
    assert all(i.fields["prompt"] and i.fields["response_baseline"]
               and i.fields["response_improved"] for i in s.items)
    assert [b.minimum for b in s.plan.bands] == [0.80, 0.70, 0.60, -1.0]
    assert s.plan.targets["direction_agreement"] == 0.70
    assert s.plan.targets["spearman"] == 0.60
    assert s.plan.targets["confidence_medium_high"] == 0.70
    rater = s.raters[0]
    assert s.pack_file_name(rater) == f"external-validation-scores-{rater.last_name}-{s.date}.xlsx"


# ---------------------------------------------------------------- protocol 001


def test_keep_known_is_protocol_001(study_dir):
    """Protocol 001: two binary marks, batches of 20, 30 seeded repeats, its tests, and
    the rater description and owner record asked once (study scope)."""
    s = load_study(study_dir("keep-known"))
    keep, known = s.rubric.by_scope("response")
    assert [d.id for d in s.rubric.by_scope("study")] == [
        "relationship", "breaks", "deviations", "compensation", "consent"]
    assert (keep.id, keep.label, keep.kind) == ("keep", "KEEP", "binary")
    assert (known.id, known.label, known.kind) == ("known", "KNOWN", "binary")
    assert keep.blank_means == known.blank_means == "No"
    assert s.design.batch_size == 20 and s.design.shuffle
    assert s.design.repeats.count == 30 and s.design.repeats.seed
    assert {a.id[:2] for a in s.design.arms} == {"b1", "b3", "b4", "b6"}
    assert set(s.plan.run) == {"yield_fisher", "permutation", "trend", "intra_rater_kappa",
                               "mixed_effects"}
    assert s.plan.params["permutations"] == 10_000
    assert s.plan.params["control"].startswith("b1")
    assert s.instructions.startswith("You will see short proposed connections")
    assert "one batch of {batch_size} at a time" in s.instructions


# ---------------------------------------------------------------- protocol 002


def test_anchored_plan_is_protocol_002(study_dir):
    """Protocol 002: five anchored integer components summing to 0-100, errors, safety."""
    s = load_study(study_dir("anchored-plan"))
    comps = [d for d in s.rubric.dimensions if d.kind == "scale"]
    assert [(d.id, d.minimum, d.maximum) for d in comps] == [
        ("completeness", 0, 25), ("traceability", 0, 25), ("fidelity", 0, 20),
        ("owners_deadlines", 0, 15), ("limitations", 0, 15)]
    assert [sorted(d.labels) for d in comps] == [
        [0, 13, 25], [0, 13, 25], [0, 10, 20], [0, 8, 15], [0, 8, 15]]
    errors = s.rubric.dimension("material_errors")
    assert errors.kind == "number" and errors.minimum == 0
    assert s.rubric.dimension("severe_safety").kind == "binary"
    (total,) = s.rubric.totals
    assert (total.method, total.minimum, total.maximum) == ("sum", 0, 100)
    sr = s.design.second_rater
    assert sr.method == "sha256_rank" and sr.strata == ("arm", "task_block")
    assert sorted(r.role for r in s.raters) == ["primary", "second"]
    assert s.plan.icc_form == "ICC2"  # Shrout-Fleiss ICC(2,1) = McGraw-Wong ICC(A,1)
    assert {"acceptance_threshold", "max_material_errors"} <= set(s.plan.targets)


# ---------------------------------------------------------------- protocol 003


def test_answer_review_is_protocol_003(study_dir):
    """Protocol 003: five categorical columns (N/A, None present), gold_dispute, note."""
    s = load_study(study_dir("answer-review"))
    d = {dim.id: dim for dim in s.rubric.dimensions}
    assert d["overall_rating"].choices == ("Correct", "Partially correct", "Incorrect")
    assert d["factual_correctness"].choices == ("Correct", "Partial", "Incorrect")
    assert d["faithfulness"].choices == ("Faithful", "Partial", "Unfaithful", "N/A")
    assert d["faithfulness"].na_choices == ("N/A",)
    assert d["citation_quality"].choices == ("Good", "Partial", "Poor", "None present")
    assert d["refusal_appropriateness"].choices == (
        "Appropriate", "Over-refusal", "Under-refusal")
    assert all(d[k].required for k in ("overall_rating", "factual_correctness",
                                       "faithfulness", "citation_quality",
                                       "refusal_appropriateness"))
    assert (d["gold_dispute"].kind, d["gold_dispute"].choices) == ("flag", ("Y",))
    assert (d["rater_note"].kind, d["rater_note"].required) == ("text", False)
    assert not s.design.paired and s.design.shuffle
    questions = [i.fields["question_id"] for i in s.items]
    assert len(s.items) == 18 and len(set(questions)) == 9  # each question answered twice
    assert any(i.fields["evidence"] == "" for i in s.items)  # empty evidence is real
    assert any("§" in i.fields["gold_answer"] for i in s.items)


# ---------------------------------------------------------------- protocol 004


def test_judge_likert_is_protocol_004(study_dir):
    """Protocol 004: six Likert 1-5 dimensions, rationale, verdict, trio thresholds."""
    s = load_study(study_dir("judge-likert"))
    likert = [d for d in s.rubric.dimensions if d.kind == "scale"]
    assert [d.id for d in likert] == [
        "completeness", "accuracy", "synthesis", "judgment", "actionability", "structure"]
    assert all((d.minimum, d.maximum, sorted(d.labels)) == (1, 5, [1, 2, 3, 4, 5])
               for d in likert)
    assert s.rubric.dimension("overall_verdict").choices == (
        "PASS_STRONG", "PASS_ADEQUATE", "FAIL_WEAK", "FAIL_CRITICAL")
    (total,) = s.rubric.totals
    assert total.method == "mean"
    t = s.plan.targets
    assert (t["strict_pass"], t["fail_below"], t["critical_below"], t["hypothesis_delta"]) == (
        3.5, 3.0, 2.0, 0.30)
    hyps = {h["id"]: h for h in s.plan.params["hypotheses"]}
    assert set(hyps) == {"H2", "H3", "H4"}
    assert hyps["H4"]["min_delta"] == 0.0
    assert hyps["H4"]["relation"] == ">="  # the protocol: "Cell D trio mean >= Cell A"
    assert "relation" not in hyps["H2"] and "relation" not in hyps["H3"]  # ">"
    assert len(s.raters) == 3
    assert len(s.items) == 12  # 3 tasks x 4 cells


# ---------------------------------------------------------------- hash


def _rewrite(path: Path, func) -> None:
    path.write_bytes(func(path.read_bytes()))


def test_hash_ignores_whitespace_comments_and_line_endings(study_dir):
    base = load_study(study_dir(name="a")).hash
    d = study_dir(name="b")
    toml = d / "study.toml"
    _rewrite(toml, lambda b: b.replace(b"\n", b"\r\n"))
    assert load_study(d).hash == base
    _rewrite(toml, lambda b: b.replace(b" = ", b"   =   ").replace(b"\r\n", b"\n\n# note\n"))
    assert load_study(d).hash == base
    _rewrite(d / "items.csv", lambda b: b.replace(b"\n", b"\r\n"))
    assert load_study(d).hash == base


def test_hash_ignores_key_order(study_dir):
    base = load_study(study_dir(name="a")).hash
    d = study_dir(name="b")
    text = (d / "study.toml").read_text(encoding="utf-8")
    head, sep, rest = text.partition("[design]")
    # move the [study] table after [design]...: tables in another order, same content
    study_table = head[head.index("[study]"):]
    reordered = head[: head.index("[study]")] + sep + rest.replace(
        "[items]", study_table + "\n[items]", 1)
    (d / "study.toml").write_text(reordered, encoding="utf-8")
    assert load_study(d).hash == base
    lines = (d / "study.toml").read_text(encoding="utf-8").splitlines()
    i = lines.index('id = "depth"')
    lines[i], lines[i + 1] = lines[i + 1], lines[i]  # swap id and label keys
    (d / "study.toml").write_text("\n".join(lines), encoding="utf-8")
    assert load_study(d).hash == base


def test_hash_same_for_items_csv_and_xlsx(study_dir):
    d = study_dir(name="a")
    base = load_study(d).hash
    header, rows = read_table(d / "items.csv")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(header)
    for _, row in rows:
        ws.append([row[h] for h in header])
    wb.save(d / "items.xlsx")
    toml = d / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'file = "items.csv"', 'file = "items.xlsx"'), encoding="utf-8")
    study = load_study(d)
    assert study.items_file == "items.xlsx"
    assert study.hash == base


def test_a_stray_cell_far_below_the_items_is_refused_by_name(study_dir):
    """One cell at XFD1048576 of items.xlsx made every command read a million blank
    rows (30 s, 1.7 GB); now the sheet is refused in one line saying what to do, and
    a few blank rows below the items are still read as before."""
    d = study_dir(name="a")
    header, rows = read_table(d / "items.csv")
    toml = d / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'file = "items.csv"', 'file = "items.xlsx"'), encoding="utf-8")
    for stray_row, refused in ((len(rows) + 50, False), (1_048_576, True)):
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(header)
        for _, row in rows:
            ws.append([row[h] for h in header])
        ws.cell(row=stray_row, column=16384 if refused else 1).value = " "
        wb.save(d / "items.xlsx")
        if not refused:
            assert len(load_study(d).items) == len(rows)
            continue
        with pytest.raises(SpecError) as caught:
            load_study(d)
        assert str(caught.value) == (
            f"{d}/items.xlsx: its first sheet is used down to row 1,048,576, far below where "
            "items can be: delete the rows under the last item (select them, Delete) and "
            "save, or save the sheet as CSV")


def test_hash_same_for_numbers_from_xlsx(tmp_path, study_dir):
    """An XLSX number cell 3 reads as the text '3', as in the CSV."""
    d = study_dir("anchored-plan", name="a")
    base = load_study(d).hash
    header, rows = read_table(d / "items.csv")
    (d / "items.csv").write_text(
        (d / "items.csv").read_text(encoding="utf-8"), encoding="utf-8")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append([*header, "n"])
    for _, row in rows:
        ws.append([row[h] for h in header] + [3])
    wb.save(d / "items.xlsx")
    with (d / "items.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([*header, "n"])
        for _, row in rows:
            w.writerow([row[h] for h in header] + ["3"])
    from_csv = load_study(d).hash
    toml = d / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'file = "items.csv"', 'file = "items.xlsx"'), encoding="utf-8")
    assert load_study(d).hash == from_csv != base


@pytest.mark.parametrize("old,new", [
    ("{ min = 2, max = 3, points = 2 }", "{ min = 2, max = 3, points = 3 }"),  # rubric bins
    ('"Evidence cited?"', '"Evidence named?"'),  # rubric question
    ("confidence = true\nlevel = \"ordinal\"\n\n[[dimensions]]\nid = \"evidence\"",
     "confidence = false\nlevel = \"ordinal\"\n\n[[dimensions]]\nid = \"evidence\""),
    ("seed = 20260915", "seed = 20260914"),  # design seed
    ("shuffle = true", "shuffle = false"),  # design
    ("{ min = 0.70, label", "{ min = 0.75, label"),  # plan band
    ("n_boot = 1000", "n_boot = 2000"),  # plan
    ("direction_agreement = 0.70", "direction_agreement = 0.75"),  # plan target
    ("min_words = 50", "min_words = 40"),
])
def test_hash_changes_with_rubric_design_and_plan(study_dir, old, new):
    base = load_study(study_dir(name="a")).hash
    d = study_dir(name="b")
    toml = d / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert old in text
    toml.write_text(text.replace(old, new, 1), encoding="utf-8")
    assert load_study(d).hash != base


def test_hash_changes_with_any_item_text(study_dir):
    base = load_study(study_dir(name="a")).hash
    d = study_dir(name="b")
    items = d / "items.csv"
    text = items.read_text(encoding="utf-8")
    items.write_text(text.replace("open-source", "open source", 1), encoding="utf-8")
    assert load_study(d).hash != base


def test_hash_changes_with_instructions(study_dir):
    base = load_study(study_dir(name="a")).hash
    d = study_dir(name="b")
    (d / "instructions.md").write_text("Other words.\n", encoding="utf-8")
    assert load_study(d).hash != base


def test_hash_is_pinned_for_the_bundled_template():
    """A golden value: any change to canonical JSON or the template shows up here."""
    study = load_study(data_dir("templates") / "paired-rubric")
    assert spec_hash(study) == study.hash
    assert study.hash == GOLDEN_PAIRED_RUBRIC_HASH


# the template's rater texts name the workbook's own parts (its Submission area, note fields)
# and say the number of cases as {n_cases}, not its own sample's 18
GOLDEN_PAIRED_RUBRIC_HASH = "ba21ea836a16bf5677919880ea8094d5e3c77913656b59fee6dedbfd3801e8e9"


def test_template_folder_is_untouched_by_init(tmp_path):
    source = data_dir("templates") / "keep-known"
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    init_study(tmp_path / "k", "keep-known")
    (tmp_path / "k" / "items.csv").write_text("changed", encoding="utf-8")
    assert {p.name: p.read_bytes() for p in source.iterdir()} == before
    shutil.rmtree(tmp_path / "k")


def _copy_stops_at(monkeypatch, n: int, error: BaseException) -> None:
    """The n-th file copied raises ``error`` (a full disk, Ctrl-C) mid-copy."""
    real, calls = shutil.copyfile, []

    def copyfile(src, dst, *args, **kwargs):
        calls.append(dst)
        if len(calls) == n:
            raise error
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copyfile)


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"),
                                   KeyboardInterrupt()])
@pytest.mark.parametrize("empty_folder", [False, True])
def test_an_init_stopped_mid_copy_leaves_no_half_made_study(tmp_path, monkeypatch, error,
                                                            empty_folder):
    """A plain copy stopped after two files left a folder of two files: not a study,
    and refused by the next init as not empty. The copy now appears whole or not at
    all: a new folder is not made, an empty one is left empty, with nothing beside."""
    target = tmp_path / "parent" / "study"
    if empty_folder:
        target.mkdir(parents=True)
    _copy_stops_at(monkeypatch, 3, error)
    with pytest.raises(type(error)):
        init_study(target, "paired-rubric")
    monkeypatch.undo()
    if empty_folder:
        assert list(target.iterdir()) == []
    else:
        assert not target.exists()
    assert [p.name for p in target.parent.iterdir()] == (["study"] if empty_folder else [])
    init_study(target, "paired-rubric")  # the same init again succeeds
    source = data_dir("templates") / "paired-rubric"
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in source.iterdir())


def test_an_init_into_an_empty_folder_stopped_while_moving_in_takes_back_what_moved(
        tmp_path, monkeypatch):
    """Into an existing empty folder (the one the user is in, perhaps) the copy is
    moved in a file at a time; stopped in between, the files moved are taken back."""
    import os

    target = tmp_path / "study"
    target.mkdir()
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        init_study(target, "keep-known")
    monkeypatch.undo()
    assert len(calls) == 3 and list(target.iterdir()) == []


def test_init_into_the_folder_the_user_is_in(tmp_path, monkeypatch):
    """The default folder is "." : filled where it is, not replaced by another."""
    monkeypatch.chdir(tmp_path)
    init_study(".", "keep-known")
    assert (tmp_path / "study.toml").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


_KILLED_INIT = """
import os, shutil, signal, sys
from sheetflow.spec.templates import init_study
real, calls = shutil.copyfile, []
def copyfile(src, dst, *args, **kwargs):
    calls.append(dst)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup runs: as a kill -9 mid-copy
    return real(src, dst, *args, **kwargs)
shutil.copyfile = copyfile
init_study(sys.argv[1], "paired-rubric")
"""


@pytest.mark.parametrize("empty_folder", [False, True])
def test_an_init_killed_mid_copy_leaves_nothing_the_next_init_trips_on(tmp_path,
                                                                       empty_folder):
    """Killed (SIGKILL: no cleanup) while it copied, init left its hidden staging
    folder: inside an empty folder it made the next init refuse the folder as "not
    empty" with nothing the user could see; beside a new one it stayed for good. The
    next init of the same folder now removes what the killed one left, and succeeds."""
    import subprocess
    import sys

    target = tmp_path / "parent" / "study"
    if empty_folder:
        target.mkdir(parents=True)
    run = subprocess.run([sys.executable, "-c", _KILLED_INIT, str(target)], check=False)
    assert run.returncode == -9
    left = [p for p in target.parent.rglob(".*") if p.name.endswith(".partial")]
    assert left, "the killed init left no staging folder: the test kills too early"
    init_study(target, "paired-rubric")
    source = data_dir("templates") / "paired-rubric"
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in source.iterdir())
    assert [p.name for p in target.parent.iterdir()] == ["study"]


def test_init_leaves_the_staging_folder_of_a_folder_with_a_longer_name(tmp_path):
    """The staging folders init removes are its own folder's, killed: one of
    "study.v2" (another init, perhaps still copying into it) matched ".study.*" and
    was removed by an init of "study"."""
    other = tmp_path / ".study.v2.4242-0123abcd.partial"
    (other / "sub").mkdir(parents=True)
    mine = tmp_path / ".study.4242-89abcdef.partial"
    mine.mkdir()
    init_study(tmp_path / "study", "keep-known")
    assert (other / "sub").is_dir() and not mine.exists()
