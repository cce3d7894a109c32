"""Protocol 003 end to end on planted returns: agreement per column, N/A setting, disputes.

Both reviewers give the same planted answers, varied across items, so every column's
alpha is 1; the protocol sets no pass mark, so the decision is "reported" (agreement
per column, nothing called passed). Three items are planted N/A on faithfulness for
both reviewers. With na_handling = "missing" those answers are left out: agreement on
faithfulness uses 2 x 15 = 30 ratings on 15 units; with "category" it uses all 36 on
18 units (nominal level). Methods says which, with the n. A gold dispute with its note
is listed; one without a note is refused by collect (flag-note-missing), so that
reviewer is missing and the decision waits.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import openpyxl
import pytest
from decision_helpers import refused_before_unsealing, run_analyze
from plant_helpers import plant_answer_review

from sheetflow.collect.run import collect
from sheetflow.spec.study import load_study

NA_ITEMS = ("HV-02", "HV-05", "HV-09")
DISPUTED = "HV-04"


def _answer(study, dim_id: str, index: int, item: str):
    dim = study.rubric.dimension(dim_id)
    if dim_id == "faithfulness":
        return "N/A" if item in NA_ITEMS else ("Faithful", "Partial", "Unfaithful")[index % 3]
    if dim_id == "gold_dispute":
        return "Y" if item == DISPUTED else None
    if dim_id == "rater_note":
        return "The gold answer misquotes section 6.3.2." if item == DISPUTED else None
    return dim.choices[index % len(dim.choices)]


def _study(root: Path, na: str = "missing", note: bool = True) -> Path:
    def set_na(root: Path) -> None:
        spec = root / "study.toml"
        spec.write_text(spec.read_text(encoding="utf-8").replace(
            'na_handling = "missing"', f'na_handling = "{na}"'), encoding="utf-8")

    def answer(study, pack, a, index):
        if a["dimension"] == "rater_note" and not note and pack["rater_id"] == "rater2":
            return None
        return _answer(study, a["dimension"], index, a["item_id"])

    plant_answer_review(root, answer, set_na)
    return root


def _analyze(root: Path, *args: str):
    collect(root)
    out, summary, rows = run_analyze(root, *args)
    wb = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    methods = {r[0]: r[1] for r in wb["Methods"].iter_rows(values_only=True) if r[0]}
    return out, summary, rows, methods


@pytest.mark.parametrize("na,n_ratings,n_units", [("missing", 30, 15), ("category", 36, 18)])
def test_agreement_per_column_and_the_na_setting(tmp_path, na, n_ratings, n_units):
    root = _study(tmp_path / na, na)
    out, summary, rows, methods = _analyze(root)
    assert out.exit_code == 0, out.output
    decision = summary["decision"]
    assert decision["status"] == "reported"  # no pass mark in the protocol: no PASS
    checks = {c["name"]: c for c in decision["checks"]}
    assert set(checks) == {f"alpha on {load_study(root).rubric.named(d)}" for d in (
        "overall_rating", "factual_correctness", "faithfulness", "citation_quality",
        "refusal_appropriateness")}
    assert "alpha on Overall rating (overall_rating)" in checks  # as the rubric names it
    assert all(c["passed"] is None and c["outcome"] == "reported" and c["target"] is None
               and c["value"] == pytest.approx(1.0) for c in checks.values())
    faith = next(a for a in summary["alpha"] if a["measure"] == "faithfulness")
    assert faith["n_units"] == n_units
    assert faith["level"] == ("ordinal" if na == "missing" else "nominal")
    counts = summary["na_handling"]
    assert counts["setting"] == na
    assert counts["dimensions"]["faithfulness"] == {
        "n_na": 6, "n_answers": 36, "n_ratings": n_ratings, "n_units": n_units}
    text = methods["N/A answers"]
    assert f'na_handling = "{na}"' in text
    assert f"faithfulness: 6 of 36 answers N/A; agreement uses {n_ratings} ratings on " \
           f"{n_units} units" in text
    assert summary["gold_disputes"] == [DISPUTED]
    assert rows[2] == ("RESULT: agreement reported for 5 rating columns; the protocol sets "
                       "no pass mark, so nothing is called passed")
    assert not [r for r in rows if " met" in r]  # nothing without a target is "met"
    assert f"gold disputes: 1 item ({DISPUTED})" in rows
    # refusal counts pool every rater's ratings: each is given out of them
    study = load_study(tmp_path / na)
    n_raters = len(study.raters)
    for arm, got in summary["refusals"].items():
        answers = sum(it.fields["system"] == arm for it in study.items)
        assert (got["n_ratings"], got["n_raters"], got["n_answers"]) == \
            (n_raters * answers, n_raters, answers)
        assert f"{arm}: over-refusal {got['over_refusal']}, under-refusal " \
               f"{got['under_refusal']}, of {n_raters * answers} ratings ({n_raters} raters, " \
               f"{answers} answers; every rater's ratings counted)" in rows
    assert "Over-refusal (the system refused a question the evidence plainly answers)" \
        in methods["Refusals (003)"]


def test_the_screen_says_the_refusals_and_the_gold_disputes_as_the_sheet(tmp_path):
    """``sheetflow analyze`` prints each system's refusal counts and the gold-disputed
    items in the Summary sheet's words, each line once."""
    root = _study(tmp_path / "screen")
    out, summary, rows, _ = _analyze(root)
    screen = out.output.splitlines()
    said = [r for r in rows if ": over-refusal " in r or r.startswith("gold disputes: ")]
    assert len(said) == len(summary["refusals"]) + 1
    for line in said:
        label = "disputes" if line.startswith("gold disputes") else "refusals"
        assert screen.count(f"{label:<10} {line}") == 1, (line, out.output)
    assert f"disputes   gold disputes: 1 item ({DISPUTED})" in screen


def test_a_dispute_without_its_note_keeps_the_reviewer_out(tmp_path):
    root = _study(tmp_path / "nonote", note=False)
    collect(root)
    refused_before_unsealing(root, "rater2 (sitting 1)", "flag-note-missing")
    out, summary, rows, _ = _analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # the outputs written, the panel incomplete
    assert summary["decision"]["status"] == "incomplete"
    assert summary["panel"]["missing"] == ["rater2"]
    assert "flag-note-missing" in summary["panel"]["excluded_files"][0]["reason"]
    assert rows[2] == "DECISION: INCOMPLETE"
    # one reviewer left: the refusal counts are of 1 rater's ratings, said so
    assert [r for r in rows if ": over-refusal " in r and "(1 rater, 9 answers;" in r]
    assert not [r for r in rows if "1 raters" in r]


def test_one_category_throughout_is_complete_agreement_not_an_inconclusive_study(tmp_path):
    """Both reviewers rate every answer 'Correct' on factual correctness: alpha is
    undefined (nothing varies), the protocol sets no pass rule, so the study keeps its
    usual outcome and reason, and that column says why its alpha is undefined."""
    root = tmp_path / "one"

    def answer(study, pack, a, index):
        if a["dimension"] == "factual_correctness":
            return "Correct"
        return _answer(study, a["dimension"], index, a["item_id"])

    plant_answer_review(root, answer)
    out, summary, rows, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["decision"]["status"] == "reported"
    assert rows[2] == ("RESULT: agreement reported for 5 rating columns; the protocol sets "
                       "no pass mark, so nothing is called passed")
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == "alpha on Factual correctness (factual_correctness)")
    assert check["value"] is None and check["outcome"] == "reported"
    assert check["note"] == ("undefined: both raters gave one category throughout "
                             "('Correct' on all 18 units: 100% agreement)")
    line = ("alpha on Factual correctness (factual_correctness): n/a (no target) - undefined: "
            "both raters gave one category throughout ('Correct' on all 18 units: 100% "
            "agreement)")
    assert f"- {line}" in out.output and "INCONCLUSIVE" not in out.output


def test_one_category_on_the_units_compared_names_the_answers_left_out(tmp_path):
    """Every faithfulness answer is 'Faithful' but on one answer, which rater1 rated N/A
    and rater2 Unfaithful: with na_handling = "missing" that unit is left out, the 17
    compared all 'Faithful', so alpha is undefined. The raters did not give one
    category throughout (rater2 rated it Unfaithful): the note says what is true and
    names what was left out."""
    root = tmp_path / "na"

    def answer(study, pack, a, index):
        if a["dimension"] == "faithfulness":
            if a["item_id"] == "HV-03":
                return "N/A" if pack["rater_id"] == "rater1" else "Unfaithful"
            return "Faithful"
        return _answer(study, a["dimension"], index, a["item_id"])

    plant_answer_review(root, answer)
    out, summary, rows, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == "alpha on Faithfulness to the evidence (faithfulness)")
    arm = next(it.fields["system"] for it in load_study(root).items if it.id == "HV-03")
    assert check["value"] is None and check["note"] == (
        "undefined: both raters gave one category on every unit compared ('Faithful' on "
        f"all 17 units both rated: 100% agreement; 1 unit left out: HV-03 ({arm}): N/A by "
        "rater1, Unfaithful by rater2)")
    assert f"- {check['name']}: n/a (no target) - {check['note']}" in rows
    assert f"- {check['name']}: n/a (no target) - {check['note']}" in out.output


def test_answers_left_out_are_named_per_unit():
    """A unit no two raters compared is named with each answer on it; on a unit compared,
    a third rater's answer left out is named too; past five units the rest are counted."""
    import pandas as pd

    from sheetflow.analysis.p003_answer_review import _left_out

    out = pd.DataFrame({"unit": ["HV-03|a", "HV-03|a", "HV-05|b"],
                        "rater": ["rater1", "rater2", "rater3"],
                        "value": ["N/A", "Unfaithful", "N/A"]})
    assert _left_out(out, {"HV-05|b"}) == ("1 unit left out: HV-03 (a): N/A by rater1, "
                                           "Unfaithful by rater2; also left out: N/A by "
                                           "rater3 on HV-05 (b)")
    many = pd.DataFrame({"unit": [f"HV-{i:02d}" for i in range(7)], "rater": "rater1",
                         "value": "N/A"})
    assert _left_out(many, set()) == ("7 units left out: HV-00: N/A by rater1; HV-01: N/A "
                                      "by rater1; HV-02: N/A by rater1; HV-03: N/A by "
                                      "rater1; HV-04: N/A by rater1; and 2 more units")


def test_a_system_without_items_is_said_to_have_none_not_counted_of_0(tmp_path):
    """A system no item is in (the spec warns of it) had its refusals said "0 of 0
    ratings (0 raters, 0 answers; every rater's ratings counted)": counts of nothing.
    It is now said to have no items, as protocol 001 says of its yield, on the screen,
    the Summary sheet and in summary.json."""
    def one_system(root: Path) -> None:
        items = root / "items.csv"
        items.write_text(items.read_text(encoding="utf-8").replace(
            "assistant_dense_rag", "assistant_hybrid_rag"), encoding="utf-8")

    def answer(study, pack, a, index):
        return _answer(study, a["dimension"], index, a["item_id"])

    root = tmp_path / "one"
    plant_answer_review(root, answer, one_system)
    out, summary, rows, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["refusals"]["assistant_dense_rag"]["no_items"] is True
    assert "no_items" not in summary["refusals"]["assistant_hybrid_rag"]
    line = "assistant_dense_rag: no items, so no refusals to count"
    assert line in rows and f"refusals   {line}" in out.output.splitlines()
    assert not [r for r in rows if "of 0 ratings" in r]
    schema = json.loads((Path(__file__).parent.parent / "docs" / "summary-schema.json")
                        .read_text(encoding="utf-8"))
    jsonschema.validate(summary, schema)


def test_na_counts_give_the_ratings_agreement_pairs_not_ratings_it_cannot(tmp_path):
    """Protocol 003, "The five columns you fill in", 3. faithfulness: N/A when the answer
    makes no factual claim. rater1 answers N/A on HV-02, rater2 on HV-05, both on HV-09:
    under na_handling = "missing" 32 ratings are left, but 2 of them sit on units whose
    other answer was N/A and pair with none. Agreement pairs 30 ratings on 15 units; the
    Methods sheet said "32 ratings on 15 units", which two raters cannot give."""
    root = tmp_path / "scattered"
    own = {"rater1": "HV-02", "rater2": "HV-05"}

    def answer(study, pack, a, index):
        if a["dimension"] == "faithfulness" and a["item_id"] in (own[pack["rater_id"]],
                                                                  "HV-09"):
            return "N/A"
        if a["dimension"] == "faithfulness":
            return ("Faithful", "Partial", "Unfaithful")[index % 3]
        return _answer(study, a["dimension"], index, a["item_id"])

    plant_answer_review(root, answer)
    out, summary, _, methods = _analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["na_handling"]["dimensions"]["faithfulness"] == {
        "n_na": 4, "n_answers": 36, "n_ratings": 30, "n_units": 15}
    faith = next(a for a in summary["alpha"] if a["measure"] == "faithfulness")
    assert faith["n_units"] == 15
    assert ("faithfulness: 4 of 36 answers N/A; agreement uses 30 ratings on 15 units rated "
            "by two or more (2 more ratings on units with no other rating left, so paired "
            "with none).") in methods["N/A answers"]


def test_refusal_counts_of_one_rater_say_one_rater():
    """Protocol 003, "5. refusal_appropriateness" (record an over-refusal every time):
    the counts per system are said with the ratings they are counted among. With one
    rater's ratings (a partial panel, analysed with --allow-partial) the line said
    "of 9 ratings (1 raters, 9 answers; ...)"; a count of one takes the singular."""
    from sheetflow.analysis.p003_answer_review import refusal_line

    one = {"over_refusal": 1, "under_refusal": 0, "n_ratings": 1, "n_raters": 1,
           "n_answers": 1}
    assert refusal_line("a", one) == ("a: over-refusal 1, under-refusal 0, of 1 rating "
                                      "(1 rater, 1 answer; every rater's ratings counted)")
    two = {**one, "n_ratings": 18, "n_raters": 2, "n_answers": 9}
    assert refusal_line("a", two).endswith("of 18 ratings (2 raters, 9 answers; every "
                                           "rater's ratings counted)")


def test_the_refusal_and_dispute_sheets_say_what_they_count_and_show(tmp_path):
    """The Refusals sheet's "should refuse (count)" beside "count" read as items: every
    column counts ratings (2 should-refuse items of a system, rated by 2 raters, are 4),
    and now each header says so. The protocol has a grounded refusal of a should-refuse
    question rated Appropriate and flagged gold_dispute "so the pattern is recoverable";
    the Gold disputes sheet showed neither whether the question should be refused nor
    the refusal rating. Both are now beside each dispute."""
    flagged = {"HV-04": "The gold answer misquotes section 6.3.2.",
               "HV-12": "Grounded refusal quoting the safeguarding policy."}

    def answer(study, pack, a, index):
        dim, item = a["dimension"], a["item_id"]
        if dim == "gold_dispute":
            return "Y" if item in flagged and pack["rater_id"] == "rater1" else None
        if dim == "rater_note":
            return flagged.get(item) if pack["rater_id"] == "rater1" else None
        if dim == "refusal_appropriateness" and item in flagged:
            return {"HV-04": "Over-refusal", "HV-12": "Appropriate"}[item]
        return _answer(study, dim, index, item)

    root = tmp_path / "s"
    plant_answer_review(root, answer)
    out, _, _, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    wb = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    head, *rows = wb["Refusals"].iter_rows(values_only=True)
    assert head == ("rater", "arm", "ratings", "over-refusal (ratings)",
                    "under-refusal (ratings)", "appropriate (ratings)",
                    "ratings of should-refuse items")
    pooled = {r[1]: r for r in rows if r[0] == "all raters"}
    # HV-12 and HV-16 should be refused in the hybrid system: 2 items x 2 raters
    assert pooled["assistant_hybrid_rag"][6] == 4
    head, *rows = wb["Gold disputes"].iter_rows(values_only=True)
    assert head == ("item", "question", "arm", "rater", "should refuse",
                    "refusal appropriateness (this rater)", "note")
    assert sorted((r[0], r[4], r[5]) for r in rows) == [
        ("HV-04", "no", "Over-refusal"), ("HV-12", "yes", "Appropriate")]


def test_the_gold_disputes_sheet_lists_by_item_in_study_order_then_rater(tmp_path):
    """The Gold disputes sheet listed each rater's flags in data order (all of rater1's,
    then rater2's), so the two disputes of one item printed apart; now the rows go by
    item in the study's order, then by rater, as the other per-item sheets read."""
    flags = {"rater1": ("HV-09", "HV-02", "HV-12"), "rater2": ("HV-04", "HV-02", "HV-11")}

    def answer(study, pack, a, index):
        dim, item = a["dimension"], a["item_id"]
        mine = flags.get(pack["rater_id"], ())
        if dim == "gold_dispute":
            return "Y" if item in mine else None
        if dim == "rater_note":
            return f"The gold answer of {item} is wrong." if item in mine else None
        return _answer(study, dim, index, item)

    root = tmp_path / "order"
    plant_answer_review(root, answer)
    out, summary, _, _ = _analyze(root)
    assert out.exit_code == 0, out.output
    _, *rows = openpyxl.load_workbook(root / "out" / "analysis.xlsx")[
        "Gold disputes"].iter_rows(values_only=True)
    order = [it.id for it in load_study(root).items]
    expected = sorted(((item, rater) for rater, items in flags.items() for item in items),
                      key=lambda pair: (order.index(pair[0]), pair[1]))
    assert [(r[0], r[3]) for r in rows] == expected
    assert summary["gold_disputes"] == ["HV-02", "HV-04", "HV-09", "HV-11", "HV-12"]
