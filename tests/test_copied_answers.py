"""A workbook filled with another rater's answers is named, though every per-file check
passes: the row ids bind a file to a pack, not to the person who filled it.

The forged return is made as a colluding rater would: EV-01's own answers typed into
EV-02's blank pack, each case found by the text it shows (the manifest's locked digest
is that text), answers moved to the other side and the direction turned round where
EV-02's labels are the other way round.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from roundtrip_helpers import generate_every_template

from sheetflow.collect import copies
from sheetflow.collect.copies import CODE, AnswerPrint, find_copies
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

TURNED = {"A>B": "B>A", "B>A": "A>B"}


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """The paired-rubric study (3 raters, 18 cases), every pack filled honestly into
    ``honest/``; ``returns/`` is left for each test to fill."""
    root = init_study(tmp_path_factory.mktemp("copies") / "s", "paired-rubric")
    generate_packs(root)
    fill_packs(root, root / "honest", seed=11)
    return root


def _packs(root: Path) -> dict[str, dict[str, Any]]:
    return {p["rater_id"]: p for p in
            read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]}


def _cells(answer: dict[str, Any]) -> list[str]:
    refs = [q["cell"] for q in answer["questions"]] if "questions" in answer \
        else [answer["cell"]]
    return refs + ([answer["confidence"]["cell"]] if "confidence" in answer else [])


def _transplant(root: Path, src: dict[str, Any], dst: dict[str, Any], out: Path) -> int:
    """EV-01's filled answers (``src``) typed into ``dst``'s blank pack, saved as
    ``out``; how many cards have their sides the other way round."""
    filled = openpyxl.load_workbook(root / "honest" / src["file"])[L.SCORING_SHEET]
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / dst["file"])
    ws = wb[L.SCORING_SHEET]
    theirs = {c["item_id"]: c for c in src["cards"]}
    turned = 0
    for card in dst["cards"]:
        other = theirs[card["item_id"]]
        by_text = {r["locked_sha256"]: r for r in other["rows"]}
        swap = any(by_text[r["locked_sha256"]]["label"] != r["label"] for r in card["rows"])
        turned += swap
        for row in card["rows"]:
            source = by_text[row["locked_sha256"]]
            for dim, answer in row["answers"].items():
                for ref, from_ref in zip(_cells(answer), _cells(source["answers"][dim]),
                                         strict=True):
                    ws[ref].value = filled[from_ref].value
        for dim, answer in card["case_answers"].items():
            for ref, from_ref in zip(_cells(answer), _cells(other["case_answers"][dim]),
                                     strict=True):
                value = filled[from_ref].value
                ws[ref].value = TURNED.get(value, value) if swap else value
    for dim, answer in dst["study_answers"].items():
        ws[answer["cell"]].value = filled[src["study_answers"][dim]["cell"]].value
    wb.save(out)
    return turned


def _returns(root: Path, name: str, forged: dict[str, Path] | None = None) -> Path:
    """A returns folder: every honest file, but the raters in ``forged`` send those."""
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for rater, pack in _packs(root).items():
        source = (forged or {}).get(rater, root / "honest" / pack["file"])
        shutil.copyfile(source, folder / pack["file"])
    return folder


def _warnings(result: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for item in result.report.issues:
        if item.code == CODE:
            out.setdefault(item.rater, []).append(item)
    return out


def _answers_given(result: Any, rater: str) -> int:
    """Non-blank answer cells of the rater's file, one confidence per answer."""
    rows = [r for r in result.ratings if r["rater_id"] == rater and r["cell"]
            and r["dimension"] != "batch"]
    confidences = {(r["case_id"], r["label"], r["dimension"]) for r in rows if r["confidence"]}
    return sum(bool(r["value"]) for r in rows) + len(confidences)


def _forge(root: Path, out: Path) -> int:
    packs = _packs(root)
    return _transplant(root, packs["EV-01"], packs["EV-02"], out)


def test_transplanted_copy_warns_both_files_naming_each_other(study, tmp_path):
    forged = tmp_path / "forged.xlsx"
    assert _forge(study, forged) > 0  # some cards have their sides turned round
    packs = _packs(study)
    result = collect(study, [_returns(study, "r1", {"EV-02": forged})], write=False)
    assert result.report.error_count == 0
    assert all(f.used for f in result.report.files)
    found = _warnings(result)
    assert sorted(found) == ["EV-01", "EV-02"]
    n = _answers_given(result, "EV-01")
    assert n > 250
    for me, other in (("EV-01", "EV-02"), ("EV-02", "EV-01")):
        (warning,) = found[me]
        assert warning.severity == "warning" and warning.value == other
        assert warning.file == packs[me]["file"]
        assert warning.message.startswith(f"{me}'s answers equal {other}'s "
                                          f"({packs[other]['file']}) in {n} of {n} answers")
        assert "identical free texts" in warning.message  # the methodology note
        assert "Ask both before using either" in warning.message


def test_copy_with_a_few_answers_changed_is_still_warned(study, tmp_path):
    forged = tmp_path / "forged.xlsx"
    _forge(study, forged)
    dst = _packs(study)["EV-02"]
    wb = openpyxl.load_workbook(forged)
    ws = wb[L.SCORING_SHEET]
    counts = [a["cell"] for c in dst["cards"] for r in c["rows"]
              for a in r["answers"].values() if a["kind"] == "count"]
    for ref in counts[:10]:  # ten counts one higher: ten answers no longer the same
        ws[ref].value = int(ws[ref].value) + 1
    wb.save(forged)
    result = collect(study, [_returns(study, "r2", {"EV-02": forged})], write=False)
    assert result.report.error_count == 0
    n = _answers_given(result, "EV-01")
    found = _warnings(result)
    assert sorted(found) == ["EV-01", "EV-02"]
    assert f"in {n - 10} of {n} answers" in found["EV-02"][0].message


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_honest_simulated_raters_are_not_warned(study, tmp_path, seed):
    folder = tmp_path / "returns"
    fill_packs(study, folder, seed=seed)
    result = collect(study, [folder], write=False)
    assert result.report.error_count == 0 and len(result.report.files) == 3
    assert _warnings(result) == {}


def test_the_check_leaves_ratings_unchanged(study, tmp_path, monkeypatch):
    forged = tmp_path / "forged.xlsx"
    _forge(study, forged)
    folder = _returns(study, "r4", {"EV-02": forged})
    checked = collect(study, [folder])
    table = (study / L.OUT_DIR / "ratings.csv").read_bytes()
    used = [(f.file, f.used) for f in checked.report.files]
    assert _warnings(checked)
    monkeypatch.setattr("sheetflow.collect.run.warn_copies", lambda works: None)
    unchecked = collect(study, [folder])
    assert not _warnings(unchecked)
    assert (study / L.OUT_DIR / "ratings.csv").read_bytes() == table
    assert [(f.file, f.used) for f in unchecked.report.files] == used


# --------------------------------------------------------------------------- the rule


def _print(answers: list[int]) -> AnswerPrint:
    """An answer print of questions 0, 1, ... with the given answers."""
    keys = [copies._hash(f"k{i}") for i in range(len(answers))]
    values = [copies._hash(f"k{i}={v}") for i, v in enumerate(answers)]
    return AnswerPrint(b"".join(keys), b"".join(values), bytes(len(answers)))


@pytest.mark.parametrize(("shared", "differ", "warned"), [
    (20, 1, True),  # 19 of 20 identical: 95%
    (20, 2, False),  # 18 of 20: 90%
    (19, 0, False),  # too few answers to judge
    (400, 20, True),  # 380 of 400: 95%
    (400, 21, False),
])
def test_rule_needs_enough_shared_answers_nearly_all_identical(shared, differ, warned):
    a = _print([0] * shared)
    b = _print([1] * differ + [0] * (shared - differ))
    found = find_copies([a, b], ["R1", "R2"])
    assert bool(found) == warned
    if warned:
        assert (found[0].shared, found[0].identical) == (shared, shared - differ)


def test_honest_real_raters_who_agree_closely_are_not_warned():
    """PandaLM's three annotators (Wang et al., ICLR 2024; 999 three-way preferences,
    ``tests/plan/fixtures/pandalm_annotations.csv``) agree on 91.3%, 91.8% and 92.9% of
    their answers: honest people on an easy judgement come this close to the 95% line,
    which is why it is not lower (``docs/integrity.md``). No pair of them is warned;
    the same answers with one annotator's copied into another's file are."""
    import pandas as pd

    table = pd.read_csv(Path(__file__).parent / "plan" / "fixtures" /
                        "pandalm_annotations.csv")
    names = ["annotator1", "annotator2", "annotator3"]
    shares = sorted(round(float((table[a] == table[b]).mean()), 3)
                    for i, a in enumerate(names) for b in names[i + 1:])
    assert shares == [0.913, 0.918, 0.929]
    prints = [_print(table[name].tolist()) for name in names]
    assert find_copies(prints, names) == []
    copied = _print(table["annotator1"].tolist())
    assert [(m.first, m.second, m.identical) for m in
            find_copies([prints[0], copied, prints[2]], names)] == [(0, 1, len(table))]


def test_one_raters_two_sittings_are_not_compared():
    same = _print([0] * 50)
    assert find_copies([same, same], ["R1", "R1"]) == []
    found = find_copies([same, same, same], ["R1", "R1", "R2"])
    assert [(m.first, m.second) for m in found] == [(0, 2), (1, 2)]


def test_honest_raters_of_every_template_are_not_warned(tmp_path):
    for template, root in generate_every_template(tmp_path).items():
        fill_packs(root, seed=3)
        result = collect(root, write=False)
        assert result.report.error_count == 0, template
        assert not _warnings(result), template


@pytest.mark.parametrize("code, fields", [
    ("answers-match-other-rater", {"rater": "EV-02", "value": "EV-01",
                                   "other_file": "scores-Okafor.xlsx", "detail": "9 of 9",
                                   "texts": ""}),
    ("rows-from-other-rater", {"rater": "EV-02", "detail": "EV-01", "claimed": "EV-02"}),
    ("file-name-mismatch", {"rater": "EV-02", "detail": "EV-01", "claimed": "EV-02"}),
    ("sender-not-rater", {"rater": "EV-02", "detail": "ev01@example.org"}),
    ("saved-by-same-user", {"rater": "EV-02", "value": "Jo",
                            "detail": "EV-01's scores-Okafor.xlsx"}),
])
def test_a_reply_draft_names_no_other_rater(code, fields):
    """A reply goes to one rater: an issue that names another rater, their file or
    address is quoted there by its kind only, or left out when only the coordinator can
    act on it (a warning about the sender, the name, a copy); the Issues sheet keeps
    the names."""
    from sheetflow.collect.coordinator import RosterRow
    from sheetflow.collect.rater_words import in_reply
    from sheetflow.collect.replies import feedback_body
    from sheetflow.collect.validate import CATALOGUE, issue
    from sheetflow.spec.study import Rater

    found = issue(code, file="mine.xlsx", **fields)
    assert "EV-01" in found.message or "ev01@" in found.message  # the sheet keeps it
    rater = Rater(id="EV-02", name="Rater Two", email="ev02@example.org")
    row = RosterRow(state="errors", rater_id="EV-02", name="Rater Two", email="", sitting=1,
                    pack="p.xlsx", file="mine.xlsx", percent_complete=100.0, errors=1,
                    warnings=1, used=False, todo="")
    body = feedback_body(rater, row, [issue("answer-missing", file="mine.xlsx",
                                            sheet="Scoring", cell="C9"), found])
    assert (CATALOGUE[code].meaning in body) is in_reply(found)
    assert in_reply(found) is (found.severity == "error")  # the warnings: coordinator's
    for other in ("EV-01", "Okafor", "ev01@"):
        assert other not in body


def test_two_raters_files_saved_under_one_user_name_are_named(study, tmp_path):
    """Excel writes the saving account's name into the file (a fresh pack has none):
    two raters' returns saved under one name are named on both, a third is not."""
    from sheetflow.collect.copies import SAVER_CODE

    folder = _returns(study, "saver")
    names = {}
    for path, user in zip(sorted(folder.glob("*.xlsx")),
                          ("Jo Smith", "jo smith", "Ann Lee"), strict=False):
        wb = openpyxl.load_workbook(path)
        wb.properties.lastModifiedBy = user
        wb.save(path)
        names[path.name] = user
    result = collect(study, [folder], write=False)
    warned = {i.file: i for i in result.report.issues if i.code == SAVER_CODE}
    shared = sorted(n for n, u in names.items() if u.casefold() == "jo smith")
    assert sorted(warned) == shared
    first, second = shared
    assert f"'{names[first]}'" in warned[first].message and second in warned[first].message
    assert all(f.used for f in result.report.files)


@pytest.mark.parametrize("seed", range(6))
def test_sets_and_matrix_products_find_the_same_pairs(seed, monkeypatch):
    """The pair-by-pair path (few files) and numpy's (many) agree on random panels with
    copies, near-copies, partial overlaps, long texts and one rater's two sittings."""
    import random

    rng = random.Random(seed)
    base = [rng.randrange(3) for _ in range(60)]
    prints, raters = [], []
    for f in range(rng.randrange(8, 30)):
        start, kept = rng.randrange(0, 30), rng.choice((0.5, 0.97, 1.0))
        answers = [v if rng.random() < kept else 3 for v in base]
        keys = [copies._hash(f"k{i}") for i in range(start, 60)]
        values = [copies._hash(f"k{i}={answers[i]}") for i in range(start, 60)]
        texts = bytes(rng.random() < 0.2 for _ in range(start, 60))
        prints.append(AnswerPrint(b"".join(keys), b"".join(values), texts))
        raters.append(f"R{f // 2 if f % 5 == 0 else f}")
    by_sets = find_copies(prints, raters)
    monkeypatch.setattr(copies, "SMALL_PANEL", 0)
    by_products = find_copies(prints, raters)
    assert by_sets == by_products
    assert by_sets  # the panel has some
