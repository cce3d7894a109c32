"""Each validator's feedback tables (protocol 000 section 7.2): their own scores beside
the de-identified group, shown so that no colleague's score can be worked out.

The protocol promises each validator "your scores compared to group median
(de-identified)". A median over every validator who scored a response, the reader's
own score included, gives away a colleague's: with two validators, twice the median
minus one's own score is the other's; with three, it is one of the other two whenever
one's own is not the middle. So the group figures here are

- computed over the *other* validators only (the reader's own score is never in them);
- shown only where at least :data:`MIN_OTHERS` other validators rated the response
  (or, for a direction, the case): below that the cells are blank, the workbook says
  why, and the analysis's Methods sheet and panel notes count them;
- for a direction, said as "fewer than half", "half" or "more than half" of the other
  validators choosing the same response, never as an exact share: a share of 100%
  would tell the reader every colleague's direction. With at least three others each
  word covers at least two counts (none or one, all or all but one), so it never
  says that all of them, or none of them, chose alike.

A median of three or more others is one of their scores only in the sense that a
median always is: it does not say whose, nor what any other score was.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..packs.guides import display_label
from ..words import counted
from .context import TIED, Context, natural_order, split_rows

MIN_OTHERS = 3
"""The fewest other validators whose figures a validator's feedback shows."""

FEEDBACK_TOPIC = "Feedback workbooks"

RULE = (f"Group figures come from the other validators only, and are shown only where "
        f"at least {MIN_OTHERS} other validators rated the same response (a direction: "
        "the same case): with fewer, a median or a share would let a validator work out "
        "a colleague's score (with one other, the median is that colleague's score; "
        "with two, it is their mean, which at either end of a scale is both their "
        "scores). "
        "Directions are said as fewer than half, half or more than half of the other "
        "validators, never as an exact share, which at 100% would tell every "
        "colleague's direction.")

NO_DIRECTIONS = pd.DataFrame(columns=["case", "your_direction", "others_same", "n_others"])


class Withheld(NamedTuple):
    """How many of the feedback's scores and directions go without group figures."""

    scores: int
    of_scores: int
    directions: int
    of_directions: int


def feedback_tables(ctx: Context) -> dict[str, dict[str, pd.DataFrame]]:
    """Each validator's feedback tables, by rater id then sheet name.

    Per validator: every response they scored, by the label they saw (arms are not
    named), each measure's points beside the median of the *other* validators who
    scored that response; a per-measure overview; and their direction per case beside
    how many of the other validators named the same response. Group figures follow
    the rule of this module (:data:`RULE`): blank where fewer than :data:`MIN_OTHERS`
    other validators rated it.
    """
    scores = _scores(ctx)
    if scores.empty:
        return {}
    labels = ctx.first.drop_duplicates(["rater", "case", "arm"]).set_index(
        ["rater", "case", "arm"])["label"]
    medians, others = others_medians(_codes(scores, ["case", "arm", "measure"]),
                                     scores["value"].to_numpy(dtype=float))
    medians = np.where(others >= MIN_OTHERS, medians, np.nan)
    shown = labels.reindex(pd.MultiIndex.from_frame(scores[["rater", "case", "arm"]]))
    table = pd.DataFrame({
        "rater": scores["rater"].astype(str).to_numpy(), "case": scores["case"].to_numpy(),
        "response": shown.fillna("").to_numpy(), "measure": scores["measure"].to_numpy(),
        "you": scores["value"].to_numpy(dtype=float), "others_median": medians,
        "difference": scores["value"].to_numpy(dtype=float) - medians, "n_others": others})
    # one sort and one grouped overview for the whole panel, then split per rater
    table = ctx.as_seen(natural_order(table, ["case", "response"]))
    overview = _overview(table)
    words = _measure_words(ctx)  # each measure by the words the rater scored it under
    overview["measure"] = overview["measure"].map(words)
    table["measure"] = table["measure"].map(words)
    overviews = split_rows(overview, "rater", list(overview.columns[1:]))
    mine = split_rows(table, "rater", list(table.columns[1:]))
    directions = _direction_tables(ctx, labels)
    return {rater: {"Overview": overviews[rater], "Your scores": mine[rater],
                    "Your directions": directions.get(rater, NO_DIRECTIONS)}
            for rater in scores["rater"].astype(str).unique()}


def others_medians(groups: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each value, the median of the other values of its group, and how many there
    are (NaN where there is none).

    Parameters
    ----------
    groups : numpy.ndarray of int
        Group code of each value (0 to the number of groups - 1).
    values : numpy.ndarray of float
        The values, none missing.

    Returns
    -------
    medians, others : numpy.ndarray
        The median of the group's values without this one, and the group's size less
        one. Computed from one sort: a panel of hundreds of validators has hundreds of
        thousands of scores.
    """
    if not len(values):
        return np.array([], dtype=float), np.array([], dtype=int)
    order = np.lexsort((values, groups))
    ranked = values[order]
    sizes = np.bincount(groups)
    size = sizes[groups[order]]
    start = (np.cumsum(sizes) - sizes)[groups[order]]
    at = np.arange(len(ranked)) - start  # the value's place in its sorted group
    others = size - 1

    def without_self(j: np.ndarray) -> np.ndarray:
        """The ``j``-th of the group's other values, sorted (skipping the value itself)."""
        return ranked[np.clip(start + j + (j >= at), 0, len(ranked) - 1)]

    middle = (without_self((others - 1) // 2) + without_self(others // 2)) / 2
    medians = np.empty(len(values))
    medians[order] = np.where(others > 0, middle, np.nan)
    counts = np.empty(len(values), dtype=int)
    counts[order] = others
    return medians, counts


def share_words(same: np.ndarray, others: np.ndarray) -> np.ndarray:
    """How many of ``others`` other validators chose as the reader did, in words:
    "fewer than half", "half", "more than half"; None (a blank cell) below
    :data:`MIN_OTHERS` others."""
    said = np.select([2 * same > others, 2 * same == others],
                     ["more than half", "half"], "fewer than half").astype(object)
    said[others < MIN_OTHERS] = None
    return said


def withheld(ctx: Context) -> Withheld:
    """How many scores and directions of every validator's feedback have fewer than
    :data:`MIN_OTHERS` other validators beside them (their group figures withheld)."""
    scores = _scores(ctx)
    sizes = scores.groupby(["case", "arm", "measure"])["value"].transform("size") \
        if not scores.empty else pd.Series(dtype=int)
    directions = _directions(ctx)
    per_case = directions.groupby("case")["value"].transform("size") \
        if not directions.empty else pd.Series(dtype=int)
    return Withheld(int((sizes - 1 < MIN_OTHERS).sum()), len(sizes),
                    int((per_case - 1 < MIN_OTHERS).sum()), len(per_case))


def feedback_notes(ctx: Context) -> list[str]:
    """A note for the Summary (the panel's notes) when group figures were withheld from
    the feedback workbooks; none when every one is shown."""
    count = withheld(ctx)
    if not count.scores and not count.directions:
        return []
    return [f"feedback workbooks: the other validators' figures are withheld beside "
            f"{_part(count.scores, count.of_scores, 'score')} and "
            f"{_part(count.directions, count.of_directions, 'direction')}, where fewer "
            f"than {MIN_OTHERS} other validators rated the same response or case, so that "
            f"no validator can work out a colleague's score (Methods: {FEEDBACK_TOPIC})"]


def feedback_methods(ctx: Context) -> list[tuple[str, str]]:
    """The Methods entry: what the feedback workbooks show, the rule, and its counts
    in this study."""
    count = withheld(ctx)
    return [(FEEDBACK_TOPIC,
             "Each validator's feedback workbook sets their points, by the label they "
             "saw, beside the median of the other validators who scored the same "
             "response, and their direction beside how many of the other validators "
             f"chose the same response. {RULE} Here withheld beside "
             f"{_part(count.scores, count.of_scores, 'score')} and "
             f"{_part(count.directions, count.of_directions, 'direction')}.")]


def _part(n: int, of: int, noun: str) -> str:
    return f"{n} of {counted(of, noun)}"


def _scores(ctx: Context) -> pd.DataFrame:
    """Every numeric score of a response measure and total: rater, case, arm, value,
    measure."""
    measures = [d.id for d in ctx.response_dims() if d.kind != "preference"] + \
        [t.id for t in ctx.study.rubric.totals]
    if not measures:
        return pd.DataFrame(columns=["rater", "case", "arm", "value", "measure"])
    return pd.concat([ctx.numeric(m).assign(measure=m) for m in measures],
                     ignore_index=True)


def _codes(table: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Group code of each row by ``columns``."""
    return table.groupby(columns, sort=False, dropna=False).ngroup().to_numpy()


def _overview(table: pd.DataFrame) -> pd.DataFrame:
    """Per rater and measure: their mean, and against the others' median over the
    responses where it is shown."""
    compared = table["difference"].notna()
    within = (table["difference"].abs() <= 1).astype(float).where(compared)
    return table.assign(within_1_point=within, compared=compared).groupby(
        ["rater", "measure"], sort=False).agg(
        you_mean=("you", "mean"), others_median_mean=("others_median", "mean"),
        mean_difference=("difference", "mean"), within_1_point=("within_1_point", "mean"),
        n_responses=("you", "size"), n_compared=("compared", "sum")).reset_index()


def _measure_words(ctx: Context) -> dict[str, str]:
    """Dimension and total id -> the label the pack showed (:func:`display_label`)."""
    words = {d.id: display_label(d) for d in ctx.study.rubric.dimensions}
    words.update({t.id: t.label or t.id for t in ctx.study.rubric.totals})
    return words


def _directions(ctx: Context) -> pd.DataFrame:
    """Each validator's direction per case (one row each): rater, case, value."""
    pref = next((d.id for d in ctx.study.rubric.dimensions if d.kind == "preference"), None)
    if pref is None:
        return pd.DataFrame(columns=["rater", "case", "value"])
    return ctx.ratings(pref).drop_duplicates(["rater", "case"]).reset_index(drop=True)


def _direction_tables(ctx: Context, labels: pd.Series) -> dict[str, pd.DataFrame]:
    """Per rater: their direction per case beside how many of the others named the same."""
    values = _directions(ctx)
    if values.empty:
        return {}
    others = values.groupby("case")["value"].transform("size").to_numpy() - 1
    same = values.groupby(["case", "value"])["value"].transform("size").to_numpy() - 1
    table = values.assign(n_others=others, others_same=share_words(same, others))
    keys = pd.MultiIndex.from_arrays([table["rater"], table["case"], table["value"]])
    shown = pd.Series(labels.reindex(keys).to_numpy(), index=table.index)
    table["your_direction"] = np.where(
        table["value"] == TIED, TIED,
        "response " + shown.fillna(table["value"]).astype(str) + " better")
    cols = ["case", "your_direction", "others_same", "n_others"]
    firsts = ctx.as_seen(natural_order(table, ["case"]))
    return {str(rater): part for rater, part in split_rows(firsts, "rater", cols).items()}
