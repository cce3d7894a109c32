"""The panel names every expected pack that is not in the analysis, and why."""

from __future__ import annotations

import pandas as pd

from sheetflow.analysis.decision import Decision, finish, flag_check
from sheetflow.analysis.panel import build_panel

EXPECTED = [("R1", 1), ("R2", 1), ("R3", 1), ("R3", 2)]


def _data(*packs: tuple[str, int]) -> pd.DataFrame:
    return pd.DataFrame([{"rater": r, "sitting": s} for r, s in packs])


def test_complete_panel():
    panel = build_panel(EXPECTED, _data(*EXPECTED), [])
    assert panel.complete and panel.missing == [] and panel.notes == []
    assert panel.sentence().startswith("panel complete: 3 of 3")


def test_missing_return_and_refused_file_are_named():
    files = [{"file": "r2.xlsx", "rater": "R2", "used": False,
              "reason": "1 error: answer-missing at Scoring!D12"},
             {"file": "stray.xlsx", "rater": "", "used": False,
              "reason": "1 error: identity-unknown"},
             {"file": "r1.xlsx", "rater": "R1", "used": True, "reason": ""}]
    panel = build_panel(EXPECTED, _data(("R1", 1), ("R3", 1)), files)
    assert not panel.complete
    assert panel.missing == ["R2", "R3"]
    assert panel.missing_packs == [
        {"rater": "R2", "sitting": 1,
         "reason": "file r2.xlsx not used: 1 error: answer-missing at Scoring!D12"},
        {"rater": "R3", "sitting": 2, "reason": "no return collected"}]
    assert [f["file"] for f in panel.excluded_files] == ["r2.xlsx", "stray.xlsx"]
    assert "R2: file r2.xlsx" in panel.sentence() and "R3 (sitting 2)" in panel.sentence()


def test_without_a_collection_record_the_panel_says_so():
    panel = build_panel(EXPECTED, _data(*EXPECTED), None)
    assert panel.complete and "collection.json" in panel.notes[0]


def test_an_incomplete_panel_overrides_a_pass():
    checks = [flag_check("x", True, 1, 1)]
    panel = build_panel(EXPECTED, _data(("R1", 1), ("R2", 1), ("R3", 1)), [])
    decision = finish(Decision("pass", "rule", checks), panel)
    assert decision.status == "incomplete" and decision.provisional_status == "pass"
    assert decision.headline() == "DECISION: INCOMPLETE"
    assert decision.reasons[0].startswith("panel incomplete: missing R3")
    assert any("checks say PASS" in reason for reason in decision.reasons)


def test_threshold_bands_give_the_status():
    from sheetflow.analysis.decision import status_of, threshold_check

    def one(value):
        return threshold_check("alpha", value, 0.70, weak_from=0.60)

    assert one(0.70).outcome == "met" and one(0.70).passed is True
    assert one(0.65).outcome == "weak" and one(0.65).passed is False
    assert one(0.59).outcome == "not met"
    assert one(float("nan")).outcome == "undefined" and one(float("nan")).passed is None
    assert status_of([one(0.8), one(0.9)]) == "pass"
    assert status_of([one(0.8), one(0.65)]) == "inconclusive"
    assert status_of([one(0.8), one(float("nan"))]) == "inconclusive"
    assert status_of([one(0.65), one(0.5)]) == "fail"
    assert status_of([]) == "inconclusive"


def test_a_value_just_under_its_target_never_prints_as_the_target():
    """An ordinal alpha of 0.69978 planted in a paired-rubric study printed "0.700
    (target 0.700) weak"; the decision lines (and the CLI, the demo and the Summary
    sheet's cells, which take their decimals from the same function) show the digits
    that tell them apart."""
    from sheetflow.analysis.decision import reasons_of, shown_against, threshold_check

    check = threshold_check("Krippendorff's alpha", 0.6997792463703456, 0.70, weak_from=0.6)
    assert reasons_of([check]) == ["Krippendorff's alpha: 0.6998 (target at least 0.7000): weak"]
    assert shown_against(0.70004, 0.7) == ("0.70004", "0.70000")
    assert shown_against(69.9996, 70) == ("69.9996", "70.0000")
    assert shown_against(0.7, 0.7) == ("0.700", "0.700")  # equal: met, as printed
    assert shown_against(0.65, 0.7) == ("0.650", "0.700")
    assert shown_against(3, 5) == ("3", "5") and shown_against(None, 0.7) == ("n/a", "0.700")
    # within 1e-12 of its target a value is the target up to rounding noise: shown and
    # read as the target, as the check decides it (words.settled)
    assert shown_against(0.6999999999999997, 0.7) == ("0.700", "0.700")


def test_headline_names_each_file_left_out_once():
    from sheetflow.report import headline_lines

    files = [{"file": "r2.xlsx", "rater": "R2", "used": False, "reason": "answer-missing"},
             {"file": "stray.xlsx", "rater": "", "used": False, "reason": "identity-unknown"}]
    panel = build_panel(EXPECTED, _data(("R1", 1), ("R3", 1), ("R3", 2)), files)
    decision = finish(Decision("pass", "rule", [flag_check("x", True, 1, 1)]), panel)
    lines = headline_lines({"decision": decision.to_dict(), "panel": panel.to_dict()})
    assert lines[0] == "DECISION: INCOMPLETE"
    text = "\n".join(lines)
    assert text.count("r2.xlsx") == 1 and "MISSING R2: file r2.xlsx not used" in text
    assert "file left out: stray.xlsx (rater unknown): identity-unknown" in lines


def test_headline_of_a_large_panel_names_a_few_included_and_every_missing_rater():
    from sheetflow.report import headline_lines

    expected = [(f"R{i:03d}", 1) for i in range(40)]
    panel = build_panel(expected, _data(*expected[:-2]), [])  # the last two never returned
    decision = finish(Decision("pass", "rule", [flag_check("x", True, 1, 1)]), panel)
    line = next(x for x in headline_lines({"decision": decision.to_dict(),
                                            "panel": panel.to_dict()})
                if x.startswith("panel:"))
    assert line.startswith("panel: 38 of 40 expected raters with ratings (R000, R001,")
    assert "R011 and 26 more, all listed in summary.json under panel.included)" in line
    assert "R012," not in line and "MISSING R038" in line and "R039" in line


def test_headline_of_a_one_rater_panel_counts_in_the_singular():
    """One owner, two sittings, the second not back: "1 of 1 expected rater", and the
    missing sitting named."""
    from sheetflow.report import headline_lines

    panel = build_panel([("owner-01", 1), ("owner-01", 2)], _data(("owner-01", 1)), [])
    decision = finish(Decision("pass", "rule", [flag_check("x", True, 1, 1)]), panel)
    line = next(x for x in headline_lines({"decision": decision.to_dict(),
                                            "panel": panel.to_dict()})
                if x.startswith("panel:"))
    assert line.startswith("panel: 1 of 1 expected rater with ratings (owner-01); "
                           "MISSING owner-01 sitting 2: ")


def test_a_partial_return_with_every_answer_blank_is_empty_not_included():
    """R2's return was taken in with --allow-partial and every answer in it is blank:
    it was "included" and counted "with ratings". It is an empty pack, missing."""
    from sheetflow.report import headline_lines

    data = pd.DataFrame([{"rater": r, "sitting": 1, "value": v}
                         for r, v in (("R1", "3"), ("R1", None), ("R2", None), ("R2", ""),
                                      ("R3", "2"))])
    files = [{"file": "r2.xlsx", "rater": "R2", "used": False,
              "reason": "2 errors: answer-missing"}]
    panel = build_panel(EXPECTED[:3], data, files,
                        partial={("R2", 1): "0 of 1 cases in full, 0 in part"})
    assert panel.included == ["R1", "R3"] and panel.missing == ["R2"]
    (pack,) = panel.missing_packs
    assert pack["empty"] is True and "partial" not in pack
    decision = finish(Decision("pass", "rule", [flag_check("x", True, 1, 1)]), panel)
    assert decision.reasons[0] == "panel incomplete: every answer blank from R2 (see the " \
        "panel line)"
    line = next(x for x in headline_lines({"decision": decision.to_dict(),
                                            "panel": panel.to_dict()})
                if x.startswith("panel:"))
    assert line.startswith("panel: 2 of 3 expected raters with ratings (R1, R3); "
                           "RETURNED EMPTY R2: file r2.xlsx (2 errors: answer-missing) was "
                           "left out by collect; every answer in it is blank")


def test_a_rater_whose_pack_is_still_to_be_written_is_expected_and_missing():
    panel = build_panel([("P1", 1)], _data(("P1", 1)), [], awaiting={"S1": "no pack yet"})
    assert panel.expected == ["P1", "S1"] and panel.included == ["P1"]
    assert panel.missing_packs == [{"rater": "S1", "sitting": 1, "reason": "no pack yet"}]
    assert not panel.complete


def test_each_sitting_names_its_own_file_left_out():
    """A rater who refused consent in sitting 1 has both files left out; the panel named
    both files under each sitting, as if each sitting's file were the other's reason."""
    files = [{"file": "r3.xlsx", "rater": "R3", "pack_id": "R3-s1", "used": False,
              "reason": "1 error: consent-refused at Scoring!C260"},
             {"file": "r3-sitting2.xlsx", "rater": "R3", "pack_id": "R3-s2", "used": False,
              "reason": "1 error: consent-refused-elsewhere"}]
    panel = build_panel(EXPECTED, _data(("R1", 1), ("R2", 1)), files)
    assert panel.missing_packs == [
        {"rater": "R3", "sitting": 1,
         "reason": "file r3.xlsx not used: 1 error: consent-refused at Scoring!C260"},
        {"rater": "R3", "sitting": 2,
         "reason": "file r3-sitting2.xlsx not used: 1 error: consent-refused-elsewhere"}]


def test_a_file_naming_no_pack_stays_under_each_pack_it_may_be():
    """A file that names no pack (unreadable) is its rater's, and that of the pack it
    was linked to, as before the key is opened."""
    files = [{"file": "broken.xlsx", "rater": "R3", "pack_id": "", "used": False,
              "reason": "1 error: file-damaged"},
             {"file": "shown.xlsx", "rater": "", "pack_id": "", "linked": ["R2-s1"],
              "linked_raters": ["R2"], "used": False, "reason": "1 error: rows-of-another"}]
    panel = build_panel(EXPECTED, _data(("R1", 1)), files)
    reasons = {(p["rater"], p["sitting"]): p["reason"] for p in panel.missing_packs}
    assert reasons == {("R2", 1): "file shown.xlsx not used: 1 error: rows-of-another",
                       ("R3", 1): "file broken.xlsx not used: 1 error: file-damaged",
                       ("R3", 2): "file broken.xlsx not used: 1 error: file-damaged"}
