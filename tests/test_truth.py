"""What the tool says is so: planted cases whose right answer is known beforehand."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from roundtrip_helpers import return_every_pack

from sheetflow.packs.second_rater import ceil_share, draw
from sheetflow.spec.model import Item


@pytest.mark.parametrize(("fraction", "n"), [(0.28, 25), (0.1, 30), (0.3, 10), (0.07, 100),
                                             (0.35, 20), (0.2, 5), (1.0, 7), (0.5, 3)])
def test_the_second_rater_share_is_an_exact_ceiling(fraction, n):
    """ceil(fraction x n) on the fraction as written: 0.28 of 25 is 7, though
    0.28 * 25 == 7.000000000000001 in floating point (whose ceiling is 8)."""
    expected = math.ceil(Fraction(str(fraction)) * n)  # by hand: the decimal, exactly
    assert ceil_share(fraction, n) == expected
    items = [Item(f"W{i:03d}", {"arm": "a"}, i + 2) for i in range(n)]
    (stratum,) = draw(items, ("arm",), fraction, "0" * 64).values()
    assert len(stratum["selected"]) == expected


def test_the_float_trap_is_real():
    assert math.ceil(0.28 * 25) == 8 and ceil_share(0.28, 25) == 7


def test_a_mix_of_directions_is_counted_on_the_labels_the_rater_chose():
    """Protocol 000's self-check: a rater who answers "A better" on every card has no
    mix of directions, though the arms behind A alternate (the sides are balanced)."""
    import pandas as pd

    from sheetflow.analysis.selfchecks import _direction_checks
    from sheetflow.spec.rubric import Total

    rows = []
    for n in range(6):
        sides = {"A": "base", "B": "new"} if n % 2 else {"A": "new", "B": "base"}
        for rater, choice in (("always-A", "A"), ("mixed", "A" if n % 3 else "B")):
            for label, arm in sides.items():
                rows.append({"rater": rater, "case": f"C{n}", "label": label, "arm": arm,
                             "dimension": "total", "value": "10" if label == "A" else "5",
                             "confidence": ""})
            rows.append({"rater": rater, "case": f"C{n}", "label": "", "arm": "",
                         "dimension": "direction", "value": sides[choice], "confidence": ""})
    out = _direction_checks(pd.DataFrame(rows), "direction",
                            Total("total", "Total", ("x",), "sum", 0.0, 20.0), (0.0, 20.0))
    assert out.loc["always-A", "direction_kinds"] == 1
    assert not out.loc["always-A", "mixed_directions"]
    assert out.loc["mixed", "direction_kinds"] == 2 and out.loc["mixed", "mixed_directions"]


def test_an_incomplete_panel_is_named_and_the_key_never_read(tmp_path, monkeypatch):
    """Unblinding cannot be undone: without allow_partial, analyze names who is missing
    from the blinded manifest and collect's record, and never opens the key."""
    from roundtrip_helpers import fill_openpyxl, plan_answers

    import sheetflow.analysis.plan as plan_module
    from sheetflow.collect import collect
    from sheetflow.errors import IncompleteError
    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study
    from sheetflow.workbook import layout as L

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for pack in packs[1:]:  # the first rater never returns
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      plan_answers(pack))
    collect(root)
    opened = []
    real = plan_module.verify_seal
    monkeypatch.setattr(plan_module, "verify_seal",
                        lambda *a, **k: opened.append(a) or real(*a, **k))
    with pytest.raises(IncompleteError, match=f"{packs[0]['rater_id']} \\(sitting 1\\): no "
                                              "return collected"):
        plan_module.analyze(root)
    assert opened == []
    analysis = plan_module.analyze(root, allow_partial=True)
    assert opened and analysis.summary["decision"]["status"] == "incomplete"


def test_paired_rubric_takes_alpha_on_the_total_at_the_ordinal_level(tmp_path):
    """Protocol 000 grounds alpha in ordinal data; the template's total says so, the
    decision names the level, and the interval reading is reported beside it."""
    import pandas as pd

    from sheetflow import stats
    from sheetflow.analysis import analyze
    from sheetflow.collect import collect
    from sheetflow.packs import generate_packs
    from sheetflow.spec import init_study, load_study

    root = init_study(tmp_path / "s", "paired-rubric")
    assert next(t for t in load_study(root).rubric.totals).level == "ordinal"
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    analysis = analyze(root)
    total = next(r for r in analysis.summary["alpha"] if r["kind"] == "total")
    assert total["level"] == "ordinal" and total["other_level"] == "interval"
    data = analysis.data[analysis.data["dimension"] == "total"]
    # protocol 000 sections 4.1-4.2: the internal team's totals are one more rater
    internal = pd.read_csv(root / "internal_scores.csv").rename(columns={
        "case_id": "case", "total": "value"}).assign(rater="internal team")
    rows = pd.concat([data[["rater", "case", "arm", "value"]], internal], ignore_index=True)
    wide = rows.assign(unit=rows["case"] + "|" + rows["arm"], value=rows["value"].astype(
        float)).pivot_table(index="rater", columns="unit", values="value")
    assert len(wide) == len(load_study(root).raters) + 1
    for level, figure in (("ordinal", total["alpha"]), ("interval", total["alpha_other_level"])):
        assert figure == pytest.approx(float(stats.krippendorff_alpha(
            wide.to_numpy(), level=level, n_boot=0).loc[0, "alpha"]))
    check = next(c for c in analysis.summary["decision"]["checks"]
                 if c["name"].startswith("Krippendorff's alpha"))
    assert check["name"] == "Krippendorff's alpha on Total (total), ordinal level"
    assert "at the interval level" in check["note"]


def test_a_keep_known_batch_never_scored_is_not_read_as_no(tmp_path):
    """A blank KEEP means "No" in a batch the rater did; two batches with no time and
    no mark were read as 40 "No" verdicts and the study still passed. They are now an
    error naming the batch, and the return is not used."""
    from roundtrip_helpers import fill_openpyxl, plan_answers

    from sheetflow.collect import collect
    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study
    from sheetflow.workbook import layout as L

    root = init_study(tmp_path / "s", "keep-known")
    generate_packs(root)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    answers = plan_answers(pack)
    blank = {a["cell"] for c in pack["cards"] if c["batch"] in (1, 2) for r in c["rows"]
             for a in r["answers"].values()}
    kept = {cell: v for cell, v in answers.items() if cell not in blank}
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                  kept)
    result = collect(root)
    errors = [i for i in result.report.issues if i.severity == "error"]
    starts = {b["batch"]: b["start"]["cell"] for b in pack["batches"]}
    assert [(i.code, i.cell) for i in errors] == [("batch-not-scored", starts[1]),
                                                  ("batch-not-scored", starts[2])]
    assert "Batch 1 has no start or end time and no mark" in errors[0].message
    assert not result.report.files[0].used
    # the error asks for the times: no warning beside it says each is blank again
    times = {b[part]["cell"] for b in pack["batches"] if b["batch"] in (1, 2)
             for part in ("start", "end")}
    assert not [i for i in result.report.issues if i.cell in times
                and i.code == "batch-time-missing"]
    assert any(i.code == "batch-time-missing" for i in result.report.issues)  # batch 3 on


def test_a_validator_who_recognised_the_arms_is_named_and_the_decision_waits(tmp_path):
    """Protocol 000: "If blinding is compromised, your data may need to be excluded";
    the research lead decides. A Yes is named and the decision is inconclusive."""
    from roundtrip_helpers import fill_openpyxl, plan_answers

    from sheetflow.analysis import analyze
    from sheetflow.collect import collect
    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study
    from sheetflow.workbook import layout as L

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for n, pack in enumerate(packs):
        answers = plan_answers(pack)
        cell = pack["study_answers"]["recognised_arm"]["cell"]
        answers[cell] = ("Yes", "Yes") if n == 1 else ("No", "No")
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      answers)
    collect(root)
    summary = analyze(root).summary
    who = packs[1]["rater_id"]
    assert summary["blinding_reports"]["recognised"] == [who]
    check = next(c for c in summary["decision"]["checks"] if "recognised" in c["name"])
    assert check["outcome"] == "weak" and who in check["note"]
    assert summary["decision"]["status"] in ("inconclusive", "fail")
    assert any(who in r and "answered Yes" in r for r in summary["decision"]["reasons"])
    # the line says what it counts ("no validator recognised which response came from
    # which approach 0 (target 0) met" ran the label into the value and the outcome)
    assert f"- validators who said they recognised which response came from which " \
        f"approach: 1 (target at most 0): research lead decides - {who} answered Yes" in \
        "\n".join(f"- {r}" for r in summary["decision"]["reasons"])


def test_a_blinding_question_nobody_answered_is_not_met_but_undefined(tmp_path):
    """Protocol 000 with the blinding question made optional and left blank by every
    validator: no answer is no report, so "no validator recognised" is undefined (the
    decision cannot pass), not met on nothing."""
    from roundtrip_helpers import fill_openpyxl, plan_answers

    from sheetflow.analysis import analyze
    from sheetflow.collect import collect
    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study
    from sheetflow.workbook import layout as L

    root = init_study(tmp_path / "s", "paired-rubric")
    spec = root / "study.toml"
    text = spec.read_text(encoding="utf-8")
    head = 'id = "recognised_arm"\n'
    assert text.count(head) == 1
    spec.write_text(text.replace(head, head + "required = false\n"), encoding="utf-8")
    generate_packs(root)
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        answers = plan_answers(pack)
        del answers[pack["study_answers"]["recognised_arm"]["cell"]]
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      answers)
    assert collect(root).valid
    summary = analyze(root).summary
    assert summary["blinding_reports"]["n_answered"] == 0
    check = next(c for c in summary["decision"]["checks"] if "recognised" in c["name"])
    assert (check["outcome"], check["passed"]) == ("undefined", None)
    assert check["note"] == "no validator answered the question"
    assert summary["decision"]["status"] != "pass"


def test_answer_review_scatters_the_two_answers_to_a_question():
    """Protocol 003: the two assistants' answers to one question are "deliberately
    scattered": no pack shows them on adjacent cards."""
    import tempfile
    from itertools import pairwise
    from pathlib import Path

    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study, load_study
    from sheetflow.workbook import layout as L

    root = init_study(Path(tempfile.mkdtemp()) / "s", "answer-review")
    generate_packs(root)
    study = load_study(root)
    question = {it.id: it.fields["question_id"] for it in study.items}
    orders = []
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        order = [question[c["item_id"]] for c in pack["cards"]]
        assert all(a != b for a, b in pairwise(order)), order
        orders.append(order)
    assert len(set(map(tuple, orders))) == len(orders)  # still shuffled per rater


@pytest.mark.parametrize("groups", ["aabb", "aaabb", "aaab", "abcabcaa", "aaaa", "ab"])
def test_scattering_avoids_neighbours_whenever_any_order_can(groups):
    from collections import Counter
    from itertools import pairwise, permutations

    from sheetflow.packs.assign import scattered

    items = [Item(f"i{n}", {"q": g}, n) for n, g in enumerate(groups)]
    out = [it.fields["q"] for it in scattered(items, "q")]
    assert Counter(out) == Counter(groups)
    best = min(sum(a == b for a, b in pairwise(p))
               for p in set(permutations(groups)))
    assert sum(a == b for a, b in pairwise(out)) == best


def test_after_the_lock_the_second_rater_gets_an_invitation_draft(tmp_path):
    import email
    import email.policy

    from click.testing import CliRunner

    from sheetflow.cli import cli
    from sheetflow.collect import collect
    from sheetflow.packs import generate_packs
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec import init_study
    from sheetflow.workbook import layout as L

    root = init_study(tmp_path / "a", "anchored-plan")
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    result = CliRunner().invoke(cli, ["lock", str(root)])
    assert result.exit_code == 0 and "draft " in result.output, result.output
    second = next(p for p in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
                  if p["role"] == "second")
    draft = root / L.PACKS_DIR / "eml" / (second["file"].removesuffix(".xlsx") + ".eml")
    message = email.message_from_bytes(draft.read_bytes(), policy=email.policy.default)
    (attached,) = list(message.iter_attachments())
    assert attached.get_filename() == second["file"]
    assert attached.get_content() == (root / L.PACKS_DIR / second["file"]).read_bytes()


def test_passed_reads_no_target_only_where_there_is_none():
    """"undefined" means a check with a target whose figure could not be computed; a
    figure reported without a target has nothing to pass."""
    from sheetflow.analysis.decision import (
        flag_check,
        passed_words,
        reported_check,
        threshold_check,
    )

    assert passed_words(reported_check("owners", 3).to_dict()) == "no target"
    assert passed_words(reported_check("alpha", float("nan")).to_dict()) == "no target"
    assert passed_words(threshold_check("rho", 0.7, None).to_dict()) == "no target"
    assert passed_words(threshold_check("rho", float("nan"), 0.6).to_dict()) == "undefined"
    assert passed_words(flag_check("pilot verdict", None).to_dict()) == "undefined"
    assert passed_words(threshold_check("rho", 0.7, 0.6).to_dict()) == "Yes"
    assert passed_words(threshold_check("rho", 0.5, 0.6).to_dict()) == "No"
