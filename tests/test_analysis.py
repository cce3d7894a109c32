"""analysis.run_plan on constructed data with known answers, and the seal checks."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from sheetflow import stats
from sheetflow.analysis import (
    add_totals,
    key_sides,
    run_plan,
    second_rater_expected,
    unblind,
    verify_seal,
)
from sheetflow.errors import SealError
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir

TEMPLATES = data_dir("templates")


def _paired_data(study, noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Every rater scores every response; values are latent quality + noise."""
    rng = np.random.default_rng(seed)
    first, second = (a.id for a in study.design.arms)
    rows = []
    for case in (it.id for it in study.items):
        for arm in (first, second):
            q = rng.uniform()
            for r in study.raters:
                for d in study.rubric.by_scope("response"):
                    dom = d.value_domain()
                    idx = int(np.clip(round((q + rng.normal(0, noise)) * (len(dom) - 1)), 0,
                                      len(dom) - 1))
                    rows.append({"rater": r.id, "case": case, "arm": arm, "dimension": d.id,
                                 "value": float(dom[idx]), "confidence": "High"})
        for r in study.raters:
            rows.append({"rater": r.id, "case": case, "arm": "", "dimension": "direction",
                         "value": second, "confidence": ""})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def paired():
    return load_study(TEMPLATES / "paired-rubric")


def test_perfect_agreement_gives_alpha_one(paired):
    res = run_plan(paired, _paired_data(paired, noise=0.0))
    alpha = res.tables["alpha"].set_index("measure")
    assert np.allclose(alpha.loc[["depth", "evidence", "total"], "alpha"], 1.0)
    assert alpha.loc["total", "band"] == "High reliability (publication-grade)"
    kappa = res.tables["cohen_kappa"]
    assert np.allclose(kappa.loc[kappa["measure"] == "depth", "kappa"], 1.0)
    assert set(kappa.loc[kappa["measure"] == "depth", "weights"]) == {"quadratic"}
    assert set(kappa.loc[kappa["measure"] == "direction", "weights"]) == {"identity"}


def test_alpha_matches_stats_function(paired):
    data = _paired_data(paired, noise=0.3, seed=3)
    res = run_plan(paired, data)
    depth = paired.rubric.dimension("depth")
    tidy = data[data["dimension"] == "depth"].assign(unit=lambda d: d["case"] + "|" + d["arm"])
    expected = stats.krippendorff_alpha(tidy, level="ordinal", unit="unit", rater="rater",
                                        value_domain=[float(v) for v in depth.value_domain()],
                                        n_boot=paired.plan.n_boot, seed=paired.plan.seed)
    got = res.tables["alpha"].set_index("measure").loc["depth"]
    assert got["alpha"] == pytest.approx(expected.loc[0, "alpha"])
    assert got["ci_low"] == pytest.approx(expected.loc[0, "ci_low"])
    assert got["n_units"] == 36


def test_totals_are_recomputed_sums(paired):
    data = _paired_data(paired, noise=0.5, seed=4)
    with_totals = add_totals(data.assign(role="primary", sitting=1, label=""), paired.rubric)
    one = with_totals[(with_totals["rater"] == "EV-01") & (with_totals["case"] == "TC-003")
                      & (with_totals["arm"] == paired.design.arms[1].id)]
    parts = one[one["dimension"].isin(paired.rubric.totals[0].of)]["value"].sum()
    assert one.loc[one["dimension"] == "total", "value"].item() == pytest.approx(parts)


def test_icc_reports_six_forms_and_marks_plan_form(paired):
    res = run_plan(paired, _paired_data(paired, noise=0.4, seed=5))
    icc = res.tables["icc"]
    assert list(icc["type"]) == ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"]
    assert icc.loc[icc["primary"], "mcgraw_wong"].item() == "ICC(A,1)"


def test_direction_unanimous_and_wilcoxon(paired):
    res = run_plan(paired, _paired_data(paired, noise=0.2, seed=6))
    direction = res.tables["direction_agreement"]
    assert np.allclose(direction.loc[direction["comparison"] == "pairs", "agreement"], 1.0)
    wil = res.tables["wilcoxon_totals"].iloc[0]
    assert wil["arm_x"] == paired.design.arms[1].id and wil["n"] <= 18


def test_values_off_the_scale_give_a_reason_not_an_exception(paired):
    data = _paired_data(paired)
    data.loc[data["dimension"] == "depth", "value"] = 99.0
    res = run_plan(paired, data)
    assert "could not be computed" in res.tables["alpha"]["reason"].iloc[0]


def test_undefined_alpha_is_nan_with_reason(paired):
    data = _paired_data(paired)
    direction = data["dimension"] == "direction"
    data["value"] = pd.Series(0.0, index=data.index, dtype=object).mask(
        direction, paired.design.arms[1].id
    )
    res = run_plan(paired, data)
    row = res.tables["alpha"].set_index("measure").loc["depth"]
    assert np.isnan(row["alpha"]) and row["reason"]
    json.dumps(res.summary, allow_nan=False)


def test_unblind_maps_labels_to_arms(paired):
    raw = pd.DataFrame([
        {"rater_id": "EV-01", "sitting": "1", "case_id": "TC-001", "label": "A",
         "dimension": "depth", "field": "value", "value": "4", "raw": "4", "confidence": "High"},
        {"rater_id": "EV-01", "sitting": "1", "case_id": "TC-001", "label": "A",
         "dimension": "evidence", "field": "q1", "value": "Yes", "raw": "Yes",
         "confidence": "High"},
        {"rater_id": "EV-01", "sitting": "1", "case_id": "TC-001", "label": "A",
         "dimension": "evidence", "field": "q2", "value": "No", "raw": "No", "confidence": ""},
        {"rater_id": "EV-01", "sitting": "1", "case_id": "TC-001", "label": "A",
         "dimension": "evidence", "field": "q3", "value": "Yes", "raw": "Yes",
         "confidence": ""},
        {"rater_id": "EV-01", "sitting": "1", "case_id": "TC-001", "label": "",
         "dimension": "direction", "field": "value", "value": "B>A", "raw": "B>A",
         "confidence": ""},
    ])
    key = {"packs": [{"rater_id": "EV-01", "sitting": 1, "cases": [
        {"position": 1, "item_id": "TC-001", "sides": {"A": "improved", "B": "baseline"}}]}]}
    out = unblind(paired, raw, key_sides(key)).set_index("dimension")
    assert out.loc["depth", "value"] == 4.0  # 4-5 factors -> 4 points
    assert out.loc["depth", "arm"] == "improved"
    assert out.loc["evidence", "value"] == 2
    assert out.loc["direction", "value"] == "baseline"


# --------------------------------------------------------------------------- 001


def _keep_known_data(study, yields: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """Owner marks: per arm (n_keep, n_items) with KNOWN always No."""
    rows = []
    items = [it for it in study.items if it.fields.get("in_corpus", "no") == "no"]
    by_arm: dict[str, list] = {}
    for it in items:
        by_arm.setdefault(it.fields["arm"], []).append(it)
    for arm, (n_keep, n) in yields.items():
        for k, it in enumerate(by_arm[arm][:n]):
            for dim, value in (("keep", "Yes" if k < n_keep else "No"), ("known", "No")):
                rows.append({"rater": "OWNER", "case": it.id, "arm": arm, "dimension": dim,
                             "value": value})
    return pd.DataFrame(rows)


def test_keep_known_fisher_matches_scipy():
    study = load_study(TEMPLATES / "keep-known")
    arms = [a.id for a in study.design.arms]
    counts = {arms[0]: (2, 10), arms[1]: (8, 10), arms[2]: (3, 10), arms[3]: (5, 10)}
    res = run_plan(study, _keep_known_data(study, counts))
    table = res.tables["yield_fisher"]
    primary = table[table["test"] == "primary"].iloc[0]
    expected = sps.fisher_exact([[8, 2], [2, 8]], alternative="greater")[1]
    assert primary["p"] == pytest.approx(expected)
    assert "b3_distance_forced vs b1_random_pairing" in primary["arm"]
    perm = res.tables["permutation"].iloc[0]
    assert perm["n_permutations"] == 10_000 and perm["seed"] == study.plan.seed
    assert perm["diff"] == pytest.approx(0.6)
    # protocol 001: labels shuffled across every arm's items; both candidates compared
    assert perm["n_candidates"] == 2 and perm["n_others"] == 10
    direct = stats.permutation_test_proportions(
        [1] * 8 + [0] * 2, [1] * 2 + [0] * 8, others=[1] * 3 + [0] * 7 + [1] * 5 + [0] * 5,
        alternative="greater", seed=study.plan.seed)
    # the fixed-winner reading is the old test; the decision's max-statistic p is not below
    assert perm["p_fixed_winner"] == pytest.approx(direct.loc[0, "p"], abs=0.01)  # MC error
    assert perm["p"] >= perm["p_fixed_winner"]
    assert res.summary["yield"][arms[1]] == pytest.approx(0.8)
    intra = res.tables["intra_rater_kappa"]
    assert intra["reason"].str.contains("second sitting").all()


# --------------------------------------------------------------------------- 002


def _anchored_at_generate(tmp_path):
    """The anchored-plan template with its subset drawn at generate (not at lock)."""
    import shutil

    folder = tmp_path / "anchored"
    shutil.copytree(TEMPLATES / "anchored-plan", folder)
    spec = folder / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace('select_at = "lock"',
                                                             'select_at = "generate"'),
                    encoding="utf-8")
    return load_study(folder)


def test_second_rater_selection_reproduces_generator(tmp_path):
    from sheetflow.packs.assign import second_rater_items

    study = _anchored_at_generate(tmp_path)
    assert second_rater_expected(study) == [it.id for it in second_rater_items(study)]
    locked = load_study(TEMPLATES / "anchored-plan")
    assert second_rater_expected(locked) is None  # drawn at data lock, not yet


def test_acceptance_and_extra_second_ratings_fail(tmp_path):
    study = _anchored_at_generate(tmp_path)
    primary = next(r.id for r in study.raters if r.role == "primary")
    second = next(r.id for r in study.raters if r.role == "second")
    chosen = set(second_rater_expected(study))
    extra = next(it.id for it in study.items if it.id not in chosen)
    rows = []
    for it in study.items:
        raters = [primary] + ([second] if it.id in chosen or it.id == extra else [])
        for rater in raters:
            share = 1.0 if it.id == study.items[0].id else 0.5
            for d in ("completeness", "traceability", "fidelity", "owners_deadlines",
                      "limitations"):
                top = study.rubric.dimension(d).maximum
                rows.append({"rater": rater, "case": it.id, "arm": it.fields["arm"],
                             "dimension": d, "value": float(int(share * top))})
            rows.append({"rater": rater, "case": it.id, "arm": it.fields["arm"],
                         "dimension": "material_errors", "value": 0.0})
            rows.append({"rater": rater, "case": it.id, "arm": it.fields["arm"],
                         "dimension": "severe_safety", "value": "No"})
    res = run_plan(study, pd.DataFrame(rows))
    acc = res.tables["acceptance"].set_index("item")
    assert acc.loc[study.items[0].id, "accepted"]  # 100 >= 70
    assert not acc.loc[study.items[1].id, "accepted"]  # 48 < 70
    sel = res.tables["second_rater_selection"].iloc[0]
    assert sel["status"] == "fail" and extra in sel["extra"] and sel["n_missing"] == 0
    assert res.summary["second_rater_selection"] == "fail"


# --------------------------------------------------------------------------- 003


def test_refusal_counts_and_gold_disputes():
    study = load_study(TEMPLATES / "answer-review")
    rows = []
    for it in study.items:
        for rater in (r.id for r in study.raters):
            arm = it.fields["system"]
            refusal = "Over-refusal" if arm == "assistant_dense_rag" else "Appropriate"
            rows.append({"rater": rater, "case": it.id, "arm": arm,
                         "dimension": "refusal_appropriateness", "value": refusal})
            rows.append({"rater": rater, "case": it.id, "arm": arm,
                         "dimension": "overall_rating", "value": "Correct"})
    first = study.items[0]
    rows.append({"rater": study.raters[0].id, "case": first.id,
                 "arm": first.fields["system"], "dimension": "gold_dispute", "value": "Y"})
    rows.append({"rater": study.raters[0].id, "case": first.id,
                 "arm": first.fields["system"], "dimension": "rater_note",
                 "value": "gold answer omits the technical route"})
    res = run_plan(study, pd.DataFrame(rows))
    counts = res.tables["refusal_counts"]
    pooled = counts[counts["rater"] == "all raters"].set_index("arm")
    n_dense = sum(it.fields["system"] == "assistant_dense_rag" for it in study.items)
    assert pooled.loc["assistant_dense_rag", "over_refusal"] == n_dense * len(study.raters)
    assert pooled.loc["assistant_hybrid_rag", "over_refusal"] == 0
    # the pooled counts add up every rater's ratings: said with what they are out of
    from sheetflow.analysis.p003_answer_review import refusal_line

    dense, raters = res.summary["refusals"]["assistant_dense_rag"], len(study.raters)
    assert (dense["n_ratings"], dense["n_raters"], dense["n_answers"]) == \
        (n_dense * raters, raters, n_dense)
    assert refusal_line("assistant_dense_rag", dense) == (
        f"assistant_dense_rag: over-refusal {n_dense * raters}, under-refusal 0, of "
        f"{n_dense * raters} ratings ({raters} raters, {n_dense} answers; every rater's "
        "ratings counted)")
    disputes = res.tables["gold_disputes"]
    assert disputes["item"].tolist() == [first.id]
    assert "technical route" in disputes["note"].item()


# --------------------------------------------------------------------------- 004


def _judge_data(study, means: dict[tuple[str, str], tuple[float, float, float]]):
    rows = []
    judges = [r.id for r in study.raters][:3]
    items = {(it.fields["task_id"], it.fields["cell"]): it.id for it in study.items}
    for (task, cell), scores in means.items():
        for judge, score in zip(judges, scores, strict=True):
            for d in ("completeness", "accuracy", "synthesis", "judgment", "actionability",
                      "structure"):
                rows.append({"rater": judge, "case": items[(task, cell)], "arm": cell,
                             "dimension": d, "value": float(score)})
    return pd.DataFrame(rows)


def test_judge_trio_verdicts_known_by_hand():
    study = load_study(TEMPLATES / "judge-likert")
    a, b, c, d = (a.id for a in study.design.arms)
    means = {}
    for task in ("task-1", "task-2", "task-3"):
        means.update({(task, a): (3, 3, 3), (task, b): (4, 4, 3), (task, c): (2, 3, 3),
                      (task, d): (3, 4, 4)})
    means[("task-2", c)] = (2, 2, 4)  # FAIL: 2 of 3 judges below 3.0, none below 2.0
    means[("task-3", c)] = (1, 1, 4)  # a critical failure: 2 of 3 judges below 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_plan(study, _judge_data(study, means))
    trio = res.tables["judge_trio"].set_index(["task", "arm"])
    assert trio.loc[("task-1", b), "trio_mean"] == pytest.approx(11 / 3)
    assert trio.loc[("task-1", b), "strict_pass"]  # 4, 4 >= 3.5
    assert not trio.loc[("task-1", a), "strict_pass"]
    assert not trio.loc[("task-1", c), "trio_fail"]  # only one judge below 3.0
    assert trio.loc[("task-2", c), "trio_fail"] and not trio.loc[("task-2", c), "critical_fail"]
    assert trio.loc[("task-3", c), "critical_fail"]
    hyp = res.tables["hypothesis_deltas"].set_index(["task", "hypothesis"])
    assert hyp.loc[("task-1", "H2"), "delta"] == pytest.approx(2 / 3)
    assert hyp.loc[("task-1", "H2"), "threshold_pass"]
    assert res.summary["pilot"]["pilot_verdict"] == "FAIL"  # one critical failure
    assert res.summary["pilot"]["pass_counts"] == {"H2": 3, "H3": 3, "H4": 3}


# --------------------------------------------------------------------------- seal


def _sealed_study(tmp_path):
    import shutil

    from sheetflow.packs.generate import generate_packs

    root = tmp_path / "study"
    shutil.copytree(TEMPLATES / "paired-rubric", root)
    generate_packs(root)
    return root


def test_seal_refuses_changed_key_and_spec(tmp_path):
    root = _sealed_study(tmp_path)
    study = load_study(root)
    sealed = verify_seal(root, study)
    key, digest = sealed.key, sealed.key_sha256
    assert key["packs"] and len(digest) == 64
    key_path = root / "sealed" / "key.json"
    original = key_path.read_bytes()
    key_path.write_bytes(original.replace(b"baseline", b"improvex", 1))
    with pytest.raises(SealError):
        verify_seal(root, study)
    key_path.write_bytes(original)
    spec = root / "study.toml"
    spec.write_text(spec.read_text().replace("n_boot = 1000", "n_boot = 999"))
    with pytest.raises(SealError, match="spec"):
        verify_seal(root, load_study(root))


@pytest.mark.parametrize("seed", range(5))
def test_split_rows_equals_a_groupby_per_key(seed):
    """``split_rows`` (one sort, a slice per key) gives what a copy per group gives."""
    from sheetflow.analysis.context import split_rows

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    data = pd.DataFrame({
        "rater": rng.choice(["R2", "R10", "R1", None], n),
        "case": rng.choice(["C1", "C2"], n), "value": rng.normal(size=n),
        "n": rng.integers(0, 9, n)})
    got = split_rows(data, "rater", ["case", "value", "n"])
    want = {k: g[["case", "value", "n"]].reset_index(drop=True)
            for k, g in data.groupby("rater", sort=False)}
    assert list(got) == list(want)
    for key, part in want.items():
        pd.testing.assert_frame_equal(got[key], part)
