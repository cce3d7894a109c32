"""Reliability figures published for real rating data, reproduced by sheetflow.stats.

The data are reductions of public data sets (tests/stats/fixtures/README.md gives their
sources, licences and citations). Each case cites where its figure is printed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st

FIXTURES = Path(__file__).parent / "fixtures"
PANDALM = Path(__file__).parents[1] / "plan" / "fixtures" / "pandalm_annotations.csv"


@pytest.mark.parametrize(
    ("first", "second", "published", "full"),
    # Wang et al. (2024), PandaLM, ICLR; repository README (github.com/WeOpenML/PandaLM):
    # pairwise Cohen's kappa of the three annotators 0.85, 0.88, 0.86 (2 decimals).
    # The full values are statsmodels' and scikit-learn's on the same 999 items.
    [("annotator1", "annotator2", 0.85, 0.8520226785167025),
     ("annotator1", "annotator3", 0.88, 0.8789438112500383),
     ("annotator2", "annotator3", 0.86, 0.8616614540762908)],
)  # fmt: skip
def test_pandalm_pairwise_cohen_kappa(first: str, second: str, published: float,
                                      full: float) -> None:
    table = pd.read_csv(PANDALM)
    res = st.cohen_kappa(table[[first, second]].to_numpy(dtype=float).T).loc[0]
    assert round(float(res["kappa"]), 2) == published
    assert float(res["kappa"]) == pytest.approx(full, abs=1e-12)
    assert res["n_units"] == 999


def _votes_matrix(counts: pd.DataFrame) -> np.ndarray:
    """Slots x conversations, votes coded No 0, Yes 1, Unsure 2 and padded with NaN: the
    layout JUDGE-BENCH computes alpha on (nominal alpha depends only on the counts)."""
    per_unit = counts[["no", "yes", "unsure"]].to_numpy()
    matrix = np.full((int(per_unit.sum(axis=1).max()), len(per_unit)), np.nan)
    for u, row in enumerate(per_unit):
        votes = np.repeat([0.0, 1.0, 2.0], row)
        matrix[: votes.size, u] = votes
    return matrix


@pytest.mark.parametrize(
    ("name", "published", "full"),
    # Bavaresco et al. (2025), JUDGE-BENCH, ACL, Appendix A Table 3: DICES-350 0.16,
    # DICES-990 0.14 (nominal Krippendorff's alpha); full precision from its
    # results/regular/dices-350-crowdsourced.json and dices-990.json.
    [("dices_350", 0.16, 0.16086021565770392), ("dices_990", 0.14, 0.14324966231784253)],
)
def test_dices_nominal_alpha(name: str, published: float, full: float) -> None:
    counts = pd.read_csv(FIXTURES / f"{name}_votes.csv")
    res = st.krippendorff_alpha(_votes_matrix(counts), level="nominal", n_boot=0).loc[0]
    assert round(float(res["alpha"]), 2) == published
    assert float(res["alpha"]) == pytest.approx(full, abs=1e-12)
    assert res["n_units"] == len(counts)


RECIPE_STATEMENTS = ["grammar", "fluency", "verbosity", "structure", "success", "overall"]


def test_recipe_crowd_ordinal_alpha_per_statement_and_mean() -> None:
    # Bavaresco et al. (2025), JUDGE-BENCH: results/regular/recipe-crowd-sourcing-data.json
    # gives ordinal alpha per statement (6 decimals here); Appendix A Table 3 prints their
    # mean, "Recipe-generation 0.41". Unit = recipe text and condition (52 units).
    published = [0.415127, 0.432398, 0.399142, 0.398558, 0.362716, 0.435101]
    table = pd.read_csv(FIXTURES / "recipe_crowd_ratings.csv")
    table["unit"] = table["recipeid"] + "_" + table["condition"]
    alphas = []
    for statement in RECIPE_STATEMENTS:
        res = st.krippendorff_alpha(table, level="ordinal", rater="participant",
                                    value=statement, value_domain=[1, 2, 3, 4, 5, 6],
                                    n_boot=0).loc[0]
        assert res["n_units"] == 52 and res["n_raters"] == 88
        alphas.append(float(res["alpha"]))
    assert [round(a, 6) for a in alphas] == published
    assert round(float(np.mean(alphas)), 2) == 0.41


@pytest.mark.parametrize(
    ("judge", "published", "agree"),
    # PandaLM repository README at commit 6fdac727d948518e7788201b699af7535157af99
    # (2023-06-09): accuracy against the human majority, gpt-3.5-turbo 71.07 and
    # PandaLM-7B 66.77 (per cent). gpt-3.5-turbo's 25 unparsable answers count as ties
    # there, the only reading that reproduces the README's tables.
    [("gpt_3_5_turbo", 71.07, 710), ("pandalm_7b", 66.77, 667)],
)
def test_pandalm_judge_agreement_with_the_human_majority(judge: str, published: float,
                                                         agree: int) -> None:
    humans = pd.read_csv(PANDALM).melt("idx", var_name="rater", value_name="value")
    judges = pd.read_csv(FIXTURES / "pandalm_judges.csv", dtype=str)
    verdict = judges[judge].replace({"Tie": "0", "garbage": "0"})
    rows = pd.concat([humans.assign(value=humans["value"].astype(str)),
                      pd.DataFrame({"idx": judges["idx"].astype(int), "rater": judge,
                                    "value": verdict})])
    res = st.direction_agreement(rows, unit="idx", against="reference",
                                 reference=["annotator1", "annotator2", "annotator3"]).loc[0]
    assert (res["rater"], res["n_units"], res["n_ties"]) == (judge, 999, 0)
    assert res["n_agree"] == agree
    assert round(100 * float(res["agreement"]), 2) == published
