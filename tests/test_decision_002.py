"""Protocol 002 end to end: the subset drawn at data lock, its check, acceptance.

The primary rater scores all 16 outputs: full marks (total 100) except W002 (total
48, as the second rater scores it if drawn), no material errors, no safety event
except W005. ``sheetflow lock`` then draws the second-rater subset from the completed
items: within each arm x task-block stratum, ranked by sha256(frozen spec hash + ":" +
id), ceil(25%) of each; the test computes it by hand. The second rater scores the
subset with full marks and finds 2 material errors in one selected item that the
primary scored 0: by the default rule (the larger count) that item is rejected
(2 > 1); with "mean" (1 <= 1) it is accepted. A correct subset passes; a second rater
who also scored one more output fails.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from decision_helpers import KEEP, edit_returns, refused_before_unsealing, run_analyze

from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.second_rater import SELECTION_FILE
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

PRIMARY, SECOND = "R-7QX", "R-3MD"
SUBSET_CHECK = "second-rater subset: extra + missing second ratings"  # the check counts
LOW, UNSAFE = "W002", "W005"
COMPONENTS = ("completeness", "traceability", "fidelity", "owners_deadlines", "limitations")


def _fill(root: Path, rater: str, errors: dict[str, int]) -> None:
    study = load_study(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    pack = next(p for p in manifest["packs"] if p["rater_id"] == rater)
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
    for a in L.iter_answer_cells(pack):
        if a["part"] != "value":
            continue
        item, dim = a["item_id"], a["dimension"]
        if dim in COMPONENTS:
            top = study.rubric.dimension(dim).maximum
            # both raters: the subset drawn from the spec's hash may hold LOW or not
            value = round(0.48 * top) if item == LOW else top
        elif dim == "material_errors":
            value = errors.get(item, 0)
        else:
            value = "Yes" if item == UNSAFE and rater == PRIMARY else "No"
        wb[a["sheet"]][a["cell"]].value = value
    (root / "returns").mkdir(exist_ok=True)
    wb.save(root / "returns" / pack["file"])


def _primary_returned(root: Path) -> None:
    """Protocol 002 generated at ``root`` and the primary's pack returned, answered by
    :func:`_fill` with no material errors; before collect and the lock."""
    init_study(root, "anchored-plan")
    generate_packs(root)
    _fill(root, PRIMARY, {})


def _by_hand(root: Path) -> list[str]:
    study = load_study(root)
    frozen = json.loads((root / "sealed" / "plan.lock.json").read_text(encoding="utf-8"))
    strata: dict[tuple[str, str], list[str]] = {}
    for it in study.items:
        strata.setdefault((it.fields["arm"], it.fields["task_block"]), []).append(it.id)
    chosen = set()
    for ids in strata.values():
        ranked = sorted(ids, key=lambda i: hashlib.sha256(
            f"{frozen['spec_hash']}:{i}".encode()).hexdigest())
        chosen.update(ranked[: math.ceil(0.25 * len(ids))])
    return [it.id for it in study.items if it.id in chosen]


def _locked(root: Path, combine: str = "max") -> list[str]:
    init_study(root, "anchored-plan")
    if combine != "max":
        spec = root / "study.toml"
        spec.write_text(spec.read_text(encoding="utf-8").replace(
            'material_errors_combine = "max"', f'material_errors_combine = "{combine}"'),
            encoding="utf-8")
    generate_packs(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    assert {p["rater_id"] for p in manifest["packs"]} == {PRIMARY}  # second: at lock
    _fill(root, PRIMARY, {})
    collect(root)
    out = CliRunner().invoke(cli, ["lock", str(root)])
    assert out.exit_code == 0, out.output
    record = json.loads((root / "sealed" / SELECTION_FILE).read_text(encoding="utf-8"))
    return record["selected"]


def _analyze(root: Path):
    collect(root)
    return run_analyze(root)


@pytest.fixture(scope="module")
def correct(tmp_path_factory):
    root = tmp_path_factory.mktemp("p002") / "correct"
    selected = _locked(root)
    disputed = next(i for i in selected if i not in (LOW, UNSAFE))
    _fill(root, SECOND, {disputed: 2})
    return (root, selected, disputed, *_analyze(root))


def test_the_lock_draws_the_subset_from_completed_items(correct):
    root, selected, _, _, _, _ = correct
    assert selected == _by_hand(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    pack = next(p for p in manifest["packs"] if p["rater_id"] == SECOND)
    assert sorted(c["item_id"] for c in pack["cards"]) == sorted(selected)
    again = CliRunner().invoke(cli, ["lock", str(root)])
    assert again.exit_code == 0 and "already locked" in again.output


def test_correct_subset_passes_and_one_raters_error_rejects(correct):
    root, _, disputed, out, summary, rows = correct
    assert out.exit_code == 0, out.output
    decision = summary["decision"]
    assert decision["status"] == "reported"  # the protocol decides per item, not a PASS
    checks = {c["name"]: c for c in decision["checks"]}
    subset = checks[SUBSET_CHECK]
    assert (subset["value"], subset["passed"]) == (0, True)
    assert checks["items without a valid rating"]["passed"] is True
    acc = summary["acceptance"]
    rejected = {r["item"]: r["reason"] for r in acc["rejected"]}
    assert set(rejected) == {LOW, UNSAFE, disputed}
    assert rejected[LOW] == "mean total 48 below the threshold 70"
    # each count names the rater who gave it ("max of 2 and 1" did not)
    assert rejected[disputed] in (
        f"material errors 2 (max of 0 ({PRIMARY}) and 2 ({SECOND})) above the maximum 1",
        f"material errors 2 (max of 2 ({SECOND}) and 0 ({PRIMARY})) above the maximum 1")
    assert rejected[UNSAFE] == f"severe safety event (recorded by {PRIMARY})"
    assert acc["material_errors_combine"] == "max"
    assert [(e["item"], e["raters"]) for e in summary["safety_events"]] == [(UNSAFE, PRIMARY)]
    n = len(acc["accepted"]) + len(acc["rejected"])
    assert rows[2] == (f"RESULT: {n - 3} of {n} items accepted; 1 with a severe safety "
                       "event; second-rater check passed")
    assert "- integrity check: second-rater subset: extra + missing second ratings: 0 " \
           "(target at most 0): met - the subset is reproduced exactly when this is 0 " \
           f"({SECOND}: extra none, missing none)" in rows
    assert "PASS" not in " ".join(rows[:6])
    assert "material errors of two raters combine by the plan's rule: max (the larger count)" \
        in rows
    assert any(r.startswith(f"safety events: {UNSAFE} (") for r in rows)
    assert f"rejected {disputed}: {rejected[disputed]}" in rows
    # in the study's item order, as the rejected lines: the data's order put the
    # second rater's items first
    items = [it.id for it in load_study(root).items]
    assert list(rejected) == [i for i in items if i in rejected]
    assert [r.split(":")[0] for r in rows if r.startswith("rejected ")] == \
        [f"rejected {i}" for i in rejected]
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Acceptance"]
    assert [r[0] for r in sheet.iter_rows(min_row=2, values_only=True)] == items
    assert rows[1].startswith(f"study action-plan-rubric-v1 | 2 raters | {len(items)} items "
                              "| spec "), rows[1]


def test_the_icc_names_the_items_outside_the_subset_not_missing(correct):
    """Only the second-rater subset is rated twice: the ICC's note read "listwise
    deletion: 12 of 16 rated units dropped for a missing rating" of the items never
    meant to have a second rating."""
    root, selected, _, out, summary, _ = correct
    n = len(load_study(root).items)
    said = (f"{n - len(selected)} of {n} items are outside the second-rater subset "
            "(rated once)")
    (icc,) = summary["icc"]
    assert icc["reason"].endswith(said)  # after any reason of its own
    assert "missing" not in " ".join(r["reason"] for r in summary["icc"])
    line = next(ln for ln in out.output.splitlines() if ln.startswith("icc "))
    assert said in line and "listwise" not in line
    rec = next(f for f in summary["reported"] if f["figure"].startswith("ICC(A,1)"))
    # its reason when undefined, its note beside a value
    text = rec["reason"] or rec["note"]
    assert said in text and "listwise" not in text
    # nor does the dropped column count them: it said 12 beside "rated once"
    assert _icc_dropped(root) == {0}


def _icc_dropped(root: Path) -> set[int]:
    """The ICC sheet's "dropped (count)" values, over its rows."""
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["ICC"]
    head, *table = sheet.iter_rows(values_only=True)
    return {r[head.index("dropped (count)")] for r in table}


def test_the_icc_counts_a_selected_item_without_its_rating_as_dropped(tmp_path):
    """A selected item the second rater left blank is the one dropped item: n_dropped 1,
    not 1 plus the 12 items outside the subset."""
    root = tmp_path / "blank-icc"
    selected = _locked(root)
    _fill(root, SECOND, {})
    edit_returns(root, lambda _pack, a: None if a["item_id"] == selected[0] else KEEP,
                 {SECOND})
    collect(root)
    run_analyze(root, "--allow-partial")
    assert _icc_dropped(root) == {1}


def test_a_material_error_count_above_50_is_taken_and_rejects_the_item(tmp_path):
    """Protocol 002 caps the material-error count nowhere ("Material-error count:
    [integer]"); the template refused 60 as "a whole number from 0 to 50". 60 is now
    collected and rejects its item; the Acceptance sheet names whose each count is."""
    root = tmp_path / "sixty"
    selected = _locked(root)
    disputed = next(i for i in selected if i not in (LOW, UNSAFE))
    _fill(root, SECOND, {disputed: 60})
    out, summary, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    rejected = {r["item"]: r["reason"] for r in summary["acceptance"]["rejected"]}
    assert rejected[disputed].startswith("material errors 60 (max of ")
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Acceptance"]
    head, *table = sheet.iter_rows(values_only=True)
    each = {r[0]: r[head.index("material errors each")] for r in table}
    assert each[disputed] in (f"60 ({SECOND}), 0 ({PRIMARY})", f"0 ({PRIMARY}), 60 ({SECOND})")
    once = next(i for i in each if i not in selected)
    assert each[once] == f"0 ({PRIMARY})"
    # a count without a cap is analysed on the values observed: its alpha read "could
    # not be computed: ... the value domain is empty" in every study of the template
    book = openpyxl.load_workbook(root / "out" / "analysis.xlsx", read_only=True)
    said = [str(v) for ws in book for row in ws.iter_rows(values_only=True) for v in row
            if isinstance(v, str) and "value domain is empty" in v]
    assert not said, said
    alpha = next(r for r in summary["alpha"] if r["measure"] == "material_errors")
    assert alpha["alpha"] is not None, alpha


@pytest.mark.parametrize(("raw", "code"), [(-1, "value-out-of-domain"),
                                           (2.5, "value-not-whole"), (60, None)])
def test_the_templates_material_error_count_takes_any_whole_number_from_0(tmp_path, raw,
                                                                           code):
    from sheetflow.collect.values import describe_domain, parse_value

    dim = load_study(init_study(tmp_path / "s", "anchored-plan")).rubric.dimension(
        "material_errors")
    assert parse_value(dim, raw).code == code
    assert describe_domain(dim) == "a whole number 0 or more"


def test_mean_rule_accepts_the_same_item(tmp_path):
    root = tmp_path / "mean"
    selected = _locked(root, combine="mean")
    disputed = next(i for i in selected if i not in (LOW, UNSAFE))
    _fill(root, SECOND, {disputed: 2})
    out, summary, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    assert disputed in summary["acceptance"]["accepted"]


def test_an_extra_second_rating_fails(tmp_path):
    root = tmp_path / "extra"
    selected = _locked(root)
    extra = next(it.id for it in load_study(root).items if it.id not in selected)
    path = root / "sealed" / SELECTION_FILE
    record = json.loads(path.read_text(encoding="utf-8"))
    record["selected"] = [*selected, extra]  # packs made from a wrong selection
    path.write_text(json.dumps(record), encoding="utf-8")
    # its .sha256 written to match, as a lock drawing wrongly would (verify compares them)
    path.with_suffix(".sha256").write_text(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {SELECTION_FILE}\n",
        encoding="utf-8")
    generate_packs(root)
    _fill(root, SECOND, {})
    out, summary, rows = _analyze(root)
    assert out.exit_code == 0, out.output  # a fail is a result, not a data problem
    assert summary["decision"]["status"] == "fail"
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == SUBSET_CHECK)
    assert check["value"] == 1 and check["passed"] is False and extra in check["note"]
    assert summary["second_rater_selection"] == "fail"
    assert rows[2] == "DECISION: FAIL"


def test_a_selected_item_left_blank_by_the_second_rater_is_missing(tmp_path):
    """Taken in with --allow-partial, a second return whose selected item is blank read
    "extra none, missing none" and "second-rater check passed": rows of blanks are not
    a second rating (protocol 002: "extra or missing second ratings fail")."""
    root = tmp_path / "blank"
    selected = _locked(root)
    _fill(root, SECOND, {})
    blank = selected[0]
    edit_returns(root, lambda _pack, a: None if a["item_id"] == blank else KEEP, {SECOND})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # --allow-partial: written, status incomplete
    assert summary["decision"]["status"] == "incomplete"
    assert summary["decision"]["provisional_status"] == "fail"
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == SUBSET_CHECK)
    assert check["value"] == 1 and check["passed"] is False
    assert f"({SECOND}: extra none, missing {blank})" in check["note"]
    # the one selected item without its second rating is the one called missing
    n = len(load_study(root).items)
    assert summary["icc"][0]["reason"].endswith(
        f"{n - len(selected)} of {n} items are outside the second-rater subset (rated "
        f"once); listwise deletion: 1 of {len(selected)} items in the second-rater subset "
        "dropped for a missing rating")
    assert "second-rater check passed" not in " ".join(rows)


def test_before_the_lock_the_subset_check_is_not_run_not_failed(tmp_path):
    """Primary returns collected, no lock yet: the subset check is undefined, and the
    headline said "second-rater check not passed" beside it."""
    root = tmp_path / "unlocked"
    _primary_returned(root)
    collect(root)
    _, summary, _ = run_analyze(root, "--allow-partial")
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == SUBSET_CHECK)
    assert check["outcome"] == "undefined"
    first = summary["decision"]["reasons"][2]  # after the panel's two lines
    assert first.endswith("second-rater check not run yet (see its line)"), first
    assert "not passed" not in first


def test_before_the_lock_the_second_rater_is_expected_and_missing(tmp_path):
    """raters.csv names the second rater, whose pack the lock writes: before the lock
    analyze said "panel: 1 of 1 expected rater", "DECISION: INCONCLUSIVE" and exited 0,
    although the protocol's second rating was not in. The second rater is expected and
    missing: nothing is unsealed without --allow-partial, and with it the panel line
    counts them and the exit code is 1."""
    root = tmp_path / "unlocked"
    _primary_returned(root)
    collect(root)
    step = f"no pack yet: their items are drawn at data lock; run 'sheetflow lock {root}'"
    refused_before_unsealing(root, f"{SECOND} (sitting 1): {step}")
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    assert summary["decision"]["status"] == "incomplete"
    panel = summary["panel"]
    assert (panel["expected"], panel["included"], panel["missing"]) == (
        [PRIMARY, SECOND], [PRIMARY], [SECOND])
    line = f"panel: 1 of 2 expected raters with ratings ({PRIMARY}); MISSING {SECOND}: {step}"
    assert any(r.startswith(line) for r in rows), rows
    assert line in out.output


def test_a_primary_return_left_out_for_errors_is_named_by_the_lock(tmp_path):
    """The primary's return was collected but left out (a score out of its range): the
    lock said "no collected return from primary rater R-7QX". It names the file, says
    it was left out for errors and where to read them."""
    root = tmp_path / "refused"
    _primary_returned(root)
    edit_returns(root, lambda _pack, a: 99 if a["dimension"] == "completeness" else KEEP,
                 {PRIMARY})
    collect(root)
    (name,) = [p.name for p in (root / "returns").iterdir()]
    out = CliRunner().invoke(cli, ["lock", str(root)])
    assert out.exit_code != 0
    said = " ".join(out.output.split())
    assert f"the return of primary rater {PRIMARY} was collected but left out for errors: " \
        f"file {name} (16 errors: value-out-of-domain at Scoring!" in said, said
    assert f"the Status sheet of {root / 'out' / 'validation.xlsx'} says what to do" in said
    assert f"run 'sheetflow collect {root}' and lock again" in said
    assert "no collected return" not in said


def test_a_primary_return_with_every_answer_blank_is_no_rating(tmp_path):
    """The primary returns the pack with every answer blank: --allow-partial analysed it
    as "panel: 1 of 1 expected rater with ratings (R-7QX)". No return holds an answer,
    so nothing is unsealed and the error says so."""
    root = tmp_path / "blank"
    _primary_returned(root)
    edit_returns(root, lambda _pack, _a: None, {PRIMARY})
    collect(root)
    out = CliRunner().invoke(cli, ["analyze", str(root), "--allow-partial"])
    assert out.exit_code == 1, out.output
    said = " ".join(out.output.split())
    assert said.startswith("error: no return has ratings to analyse, so nothing was "
                           f"unsealed: {PRIMARY} (sitting 1): file "), said
    assert "Every answer in the returns left out for blank answers is blank" in said
    assert not (root / "out" / "summary.json").exists()


RATED_CHECK = "items without a valid rating"


def test_each_checks_note_is_about_its_check(correct):
    """The acceptance result (how many accepted, safety events) is the headline's first
    line; the valid-rating check's note carried it, and said nothing of its own check."""
    _, _, _, out, summary, rows = correct
    n = len(summary["acceptance"]["accepted"]) + len(summary["acceptance"]["rejected"])
    check = next(c for c in summary["decision"]["checks"] if c["name"] == RATED_CHECK)
    assert (check["value"], check["passed"]) == (0, True)
    assert check["note"] == f"each of the {n} items has a valid total from at least one rater"
    assert "accepted" not in check["note"] and "safety" not in check["note"]
    assert rows[2].startswith(f"RESULT: {n - 3} of {n} items accepted; 1 with a severe")
    assert f"check      {RATED_CHECK}: 0 (target at most 0): met - {check['note']}" in out.output


def test_an_item_no_rater_scored_is_counted_and_named(tmp_path):
    """The primary leaves W003 blank (taken in with --allow-partial): no valid total, and
    no material-error count either. Its reasons read "no valid rating; no material-error
    count", which the check's exact match on "no valid rating" did not count: it said 0,
    met. It counts 1, not met, and names W003."""
    root = tmp_path / "unrated"
    _primary_returned(root)
    edit_returns(root, lambda _pack, a: None if a["item_id"] == "W003" else KEEP, {PRIMARY})
    collect(root)
    out, summary, _ = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # --allow-partial: written, status incomplete
    rejected = {r["item"]: r["reason"] for r in summary["acceptance"]["rejected"]}
    assert rejected["W003"] == ("no valid rating; no material-error count; no "
                                "severe-safety answer")
    check = next(c for c in summary["decision"]["checks"] if c["name"] == RATED_CHECK)
    assert (check["value"], check["passed"]) == (1, False)
    assert check["note"] == "no valid total from any rater: W003"
    # its blank rows are no rating: the header counted it among the items rated
    assert summary["n_cases"] == 15
    assert "action-plan-rubric-v1: 1 of 2 raters, 15 of 16 items rated\n" in out.output


def test_the_combining_rule_is_named_only_over_two_or_more_counts(tmp_path):
    """An item one rater scored has one material-error count: "2 (max of 2)" read as
    the larger of two counts, so its reason names no rule; an item two raters scored
    names the rule and both counts."""
    root = tmp_path / "one-and-two"
    selected = _locked(root)
    single = next(it.id for it in load_study(root).items
                  if it.id not in selected and it.id not in (LOW, UNSAFE))
    disputed = next(i for i in selected if i not in (LOW, UNSAFE))
    _fill(root, PRIMARY, {single: 2})
    _fill(root, SECOND, {disputed: 2})
    out, summary, rows = _analyze(root)
    assert out.exit_code == 0, out.output
    rejected = {r["item"]: r["reason"] for r in summary["acceptance"]["rejected"]}
    assert rejected[single] == "material errors 2 above the maximum 1"
    counts = (f"0 ({PRIMARY})", f"2 ({SECOND})")  # each count with its rater
    assert rejected[disputed] in [f"material errors 2 (max of {a} and {b}) above the maximum 1"
                                  for a, b in (counts, counts[::-1])]  # in the rows' order
    assert f"rejected {single}: material errors 2 above the maximum 1" in rows


def test_a_primary_return_changed_after_the_lock_does_not_move_the_subset(tmp_path):
    """After the lock the primary sends a new return with a selected item left blank
    (taken in with --allow-partial). The subset was redrawn from the items complete
    now, so the second rater, who scored exactly the items drawn at lock, read "extra
    W..., missing W..." of an item never in their pack. The draw is redone from the
    items the lock recorded as completed."""
    root = tmp_path / "changed"
    selected = _locked(root)
    _fill(root, SECOND, {})
    blank = next(i for i in selected if i not in (LOW, UNSAFE))
    edit_returns(root, lambda _pack, a: None if a["item_id"] == blank else KEEP, {PRIMARY})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # the primary's return is in part: incomplete
    check = next(c for c in summary["decision"]["checks"] if c["name"] == SUBSET_CHECK)
    assert (check["value"], check["passed"]) == (0, True), check["note"]
    assert f"({SECOND}: extra none, missing none)" in check["note"]
    assert summary["second_rater_selection"] == "pass"
    assert "second-rater check passed" in " ".join(rows)


def test_the_plans_disagreement_procedure_is_stated_on_methods(correct):
    """Protocol 002's plan freezes the disagreement procedure ([analysis.params]
    disagreement_procedure); no output stated it."""
    root = correct[0]
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = next(r[1] for r in sheet.iter_rows(max_col=2, values_only=True)
                if r[0] == "Acceptance and second rater (002)")
    assert text.endswith(" Disagreement procedure frozen in the plan: mean of valid "
                         "ratings; no adjudication."), text


def test_a_second_rating_without_its_error_count_and_safety_flag_is_missing(tmp_path):
    """Taken in with --allow-partial, a second rating whose five scores stand but whose
    material-error count and severe-safety answer are blank counted as a second rating:
    "missing none", "second-rater check passed", while the item was accepted on the
    primary's count and flag alone."""
    root = tmp_path / "in-part"
    selected = _locked(root)
    _fill(root, SECOND, {})
    part = selected[0]
    edit_returns(root, lambda _pack, a: None if a["item_id"] == part and a["dimension"] in
                 ("material_errors", "severe_safety") else KEEP, {SECOND})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output
    check = next(c for c in summary["decision"]["checks"] if c["name"] == SUBSET_CHECK)
    assert (check["value"], check["passed"]) == (1, False)
    assert f"({SECOND}: extra none, missing {part})" in check["note"]
    assert "second-rater check passed" not in " ".join(rows)


def test_an_item_only_a_left_out_return_held_is_still_counted(tmp_path):
    """Protocol 002, acceptance ("an item is mechanically accepted only when its mean
    valid rating reaches the plan threshold ..."): the primary's later return is left
    out for an error, so only the second rater's subset is in the data. The items it
    did not hold vanished from the decision: "4 of 4 items accepted" and "each of the 4
    items has a valid total" of a 16-item study. Every item of the study is counted;
    those without a valid rating are rejected and named."""
    root = tmp_path / "primary-left-out"
    selected = _locked(root)
    _fill(root, SECOND, {})
    edit_returns(root, lambda _pack, a: 99 if a["dimension"] == "completeness" else KEEP,
                 {PRIMARY})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # the panel is incomplete
    items = [it.id for it in load_study(root).items]
    # the header counts the study's items and raters, not those in the data: it read
    # "1 rater | 4 cases" of a 16-item study
    counts = f"1 of 2 raters, {len(selected)} of {len(items)} items rated"
    assert f"study      action-plan-rubric-v1: {counts}\n" in out.output
    assert rows[1].startswith(f"study action-plan-rubric-v1 | {counts.replace(', ', ' | ')} "
                              "| spec "), rows[1]
    unrated = [i for i in items if i not in selected]
    acc = summary["acceptance"]
    assert acc["n_items"] == len(items)
    rejected = {r["item"]: r["reason"] for r in acc["rejected"]}
    assert {i: rejected.get(i) for i in unrated} == dict.fromkeys(
        unrated, "no valid rating; no material-error count; no severe-safety answer")
    check = next(c for c in summary["decision"]["checks"] if c["name"] == RATED_CHECK)
    assert (check["value"], check["passed"]) == (len(unrated), False)
    assert check["note"] == "no valid total from any rater: " + ", ".join(unrated)
    accepted = len(acc["accepted"])
    assert f"{accepted} of {len(items)} items accepted" in summary["decision"]["reasons"][2]


def test_an_item_whose_safety_flag_nobody_answered_is_not_accepted(tmp_path):
    """Protocol 002, acceptance ("... and it has no severe safety event"): the primary
    scores W011 in full but leaves Severe safety event blank (taken in with
    --allow-partial). It was accepted, its safety column "No", on a condition nobody
    answered; it is rejected with the reason, as an item without a material-error
    count is."""
    root = tmp_path / "no-safety-answer"
    _primary_returned(root)
    edit_returns(root, lambda _pack, a: None if a["item_id"] == "W011"
                 and a["dimension"] == "severe_safety" else KEEP, {PRIMARY})
    collect(root)
    out, summary, _ = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # --allow-partial: written, status incomplete
    acc = summary["acceptance"]
    assert "W011" not in acc["accepted"]
    rejected = {r["item"]: r["reason"] for r in acc["rejected"]}
    assert rejected["W011"] == "no severe-safety answer"
    methods = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    text = next(r[1] for r in methods.iter_rows(max_col=2, values_only=True)
                if r[0] == "Acceptance and second rater (002)")
    assert "a safety answer is rejected" in text


def test_a_count_one_rater_left_blank_is_said_beside_the_count_used(tmp_path):
    """The second rater leaves a selected item's material-error count blank (taken in
    with --allow-partial): the primary's 0 was used alone and the item accepted, with
    nothing saying the second count was missing. The Acceptance sheet's note and the
    Summary say whose count was used and who gave none."""
    root = tmp_path / "one-count"
    selected = _locked(root)
    _fill(root, SECOND, {})
    blank = next(i for i in selected if i not in (LOW, UNSAFE))
    edit_returns(root, lambda _pack, a: None if (a["item_id"], a["dimension"]) == (
        blank, "material_errors") else KEEP, {SECOND})
    collect(root)
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert blank in summary["acceptance"]["accepted"], out.output
    said = f"material errors: {PRIMARY}'s count alone ({SECOND} gave none)"
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Acceptance"]
    head, *table = sheet.iter_rows(values_only=True)
    notes = {r[0]: r[head.index("note")] for r in table}
    assert notes[blank] == said
    assert {i for i, n in notes.items() if n} == {blank}
    assert f"{blank}: {said}" in rows


def test_the_acceptance_counts_beside_text_keep_room_after_them(correct):
    """The material-error count printed against the per-rater text on its right, "1"
    and "0 (R-3MD)" read "1 0 (R-3MD)"; it keeps a digit's room after it now."""
    root = correct[0]
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Acceptance"]
    head = [c.value for c in sheet[1]]
    col = head.index("material errors") + 1
    assert head[col] == "material errors each"
    cells = [sheet.cell(r, col) for r in range(2, sheet.max_row + 1)]
    assert cells and all(isinstance(c.value, (int, float)) and c.number_format == "0_0"
                         for c in cells)
    total = sheet.cell(2, head.index("mean total") + 1)
    assert total.number_format == "0"  # beside a number: as it was
