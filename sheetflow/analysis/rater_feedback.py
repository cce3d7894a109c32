"""Each validator's feedback tables (protocol 000 section 7.2): their own scores beside
the de-identified group median.

The protocol promises each validator "your scores compared to group median
(de-identified)". The group is every validator who scored the response, the reader
included, and no validator is named. Its figures are

- shown only where at least :data:`MIN_GROUP` validators scored the response (or, for
  a direction, the case), the reader's own included. With two, twice the median minus
  one's own score is the colleague's, so below the bar the cells are blank, the
  workbook says why, and the analysis's Methods sheet and panel notes count them;
- with three, the median of the three scores: the reader's own or one colleague's,
  without saying whose. A reader whose score is above the median learns that one
  colleague scored the median and the other no more (below it: no less), not which
  colleague is which. Where the reader's score is above a median at the measure's
  lowest points (or below one at its highest), both colleagues scored exactly that;
  and a total is the sum of its measures for each colleague alike, so a response's
  medians read together can pin colleagues' scores on other measures too. No
  validator is named (the protocol's "de-identified"); the workbook's rule line
  (:data:`RULE`) says what can be told;
- for a direction, said as "fewer than half", "half" or "more than half" of the
  group choosing the same response, never as an exact share: a share of 100% would
  tell the reader every colleague's direction. "More than half" always covers all
  and all but one; with three or four validators "fewer than half" means that no
  colleague chose as the reader did (not which of the two other choices each made).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..packs.guides import display_label
from ..words import counted
from .context import TIED, Context, natural_order, split_rows

MIN_GROUP = 3
"""The fewest validators, the reader included, whose scores a group figure is shown
over."""

FEEDBACK_TOPIC = "Feedback workbooks"

RULE = ("The group is every validator who scored the same response (for a direction, "
        "the same case), the reader included, and no validator is named. Its figures "
        f"are shown only where at least {MIN_GROUP} validators scored it: with two, "
        "twice the median minus one's own score would be the colleague's score, so "
        "those cells are blank. With three, the median is one of the three scores, "
        "the reader's own or one colleague's, without saying whose. It can still tell "
        "colleagues' scores: where the reader's score is above a median at the "
        "measure's lowest points (or below one at its highest), both colleagues scored "
        "that, and a response's medians read together with its total's can tell "
        "colleagues' scores on other measures too. Directions "
        "are said as fewer than half, half or more than half of the group, never as an "
        "exact share, which at 100% would tell every colleague's direction; with three "
        "or four validators, fewer than half means that no colleague chose as the "
        "reader did.")

"""The rule in full, for the analyst (the Methods sheet)."""

YOUR_RULE = ("The group is every validator who scored the same response (for a direction, "
             "the same case), you included; no one is named. Group figures are shown only "
             f"where at least {MIN_GROUP} validators scored it, and left blank otherwise "
             "(with two, the median would give your colleague's score). Directions are given as "
             "fewer than half, half or more than half of the group, never as an exact "
             "share. With three validators, a median at the end of the scale, or a "
             "response's medians read with its total, can still show what your colleagues "
             "gave.")
"""The rule as the validator reads it above their feedback: in the second person and
short (:data:`RULE` is the analyst's full account of what can be told)."""

NO_DIRECTIONS = pd.DataFrame(columns=["case", "your_direction", "group_same", "n_group"])


class Withheld(NamedTuple):
    """How many of the feedback's scores and directions go without group figures."""

    scores: int
    of_scores: int
    directions: int
    of_directions: int


def feedback_tables(ctx: Context) -> dict[str, dict[str, pd.DataFrame]]:
    """Each validator's feedback tables, by rater id then sheet name.

    Per validator: every response they scored, by the label they saw (arms are not
    named), each measure's points beside the median of every validator who scored that
    response, theirs included; a per-measure overview; and their direction per case
    beside how many of the group named the same response. Group figures follow the
    rule of this module (:data:`RULE`): blank where fewer than :data:`MIN_GROUP`
    validators rated it.
    """
    scores = _scores(ctx)
    if scores.empty:
        return {}
    labels = ctx.first.drop_duplicates(["rater", "case", "arm"]).set_index(
        ["rater", "case", "arm"])["label"]
    values = scores["value"].to_numpy(dtype=float)
    medians, sizes = group_medians(_codes(scores, ["case", "arm", "measure"]), values)
    medians = np.where(sizes >= MIN_GROUP, medians, np.nan)
    shown = labels.reindex(pd.MultiIndex.from_frame(scores[["rater", "case", "arm"]]))
    table = pd.DataFrame({
        "rater": scores["rater"].astype(str).to_numpy(), "case": scores["case"].to_numpy(),
        "response": shown.fillna("").to_numpy(), "measure": scores["measure"].to_numpy(),
        "you": values, "group_median": medians, "difference": values - medians,
        "n_group": sizes})
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


def group_medians(groups: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each value, the median of its group (the value itself included) and the
    group's size.

    Parameters
    ----------
    groups : numpy.ndarray of int
        Group code of each value (0 to the number of groups - 1).
    values : numpy.ndarray of float
        The values, none missing.

    Returns
    -------
    medians, sizes : numpy.ndarray
        The median of each value's group, and how many values the group holds.
    """
    if not len(values):
        return np.array([], dtype=float), np.array([], dtype=int)
    grouped = pd.Series(values).groupby(groups)
    sizes = np.bincount(groups)[groups]
    return grouped.transform("median").to_numpy(dtype=float), sizes


def share_words(same: np.ndarray, group: np.ndarray) -> np.ndarray:
    """How many of a ``group`` of validators (the reader included) chose as the reader
    did, ``same`` (the reader included), in words: "fewer than half", "half", "more
    than half"; None (a blank cell) in a group smaller than :data:`MIN_GROUP`."""
    said = np.select([2 * same > group, 2 * same == group],
                     ["more than half", "half"], "fewer than half").astype(object)
    said[group < MIN_GROUP] = None
    return said


def withheld(ctx: Context) -> Withheld:
    """How many scores and directions of every validator's feedback come from fewer
    than :data:`MIN_GROUP` validators (their group figures withheld).

    Counted once per context: the Summary's note and the Methods entry both say it."""
    if ctx not in _WITHHELD:
        _WITHHELD[ctx] = _count_withheld(ctx)
    return _WITHHELD[ctx]


_WITHHELD: weakref.WeakKeyDictionary[Context, Withheld] = weakref.WeakKeyDictionary()


def _count_withheld(ctx: Context) -> Withheld:
    scores = _scores(ctx)
    sizes = scores.groupby(["case", "arm", "measure"])["value"].transform("size") \
        if not scores.empty else pd.Series(dtype=int)
    directions = _directions(ctx)
    per_case = directions.groupby("case")["value"].transform("size") \
        if not directions.empty else pd.Series(dtype=int)
    return Withheld(int((sizes < MIN_GROUP).sum()), len(sizes),
                    int((per_case < MIN_GROUP).sum()), len(per_case))


def feedback_notes(ctx: Context) -> list[str]:
    """A note for the Summary (the panel's notes) when group figures were withheld from
    the feedback workbooks; none when every one is shown."""
    count = withheld(ctx)
    if not count.scores and not count.directions:
        return []
    return [f"feedback workbooks: the group's figures are withheld beside "
            f"{_part(count.scores, count.of_scores, 'score')} and "
            f"{_part(count.directions, count.of_directions, 'direction')}, where fewer "
            f"than {MIN_GROUP} validators (the reader included) rated the same response "
            "or case, so that no validator can work out a colleague's score "
            f"(Methods: {FEEDBACK_TOPIC})"]


def feedback_methods(ctx: Context) -> list[tuple[str, str]]:
    """The Methods entry: what the feedback workbooks show, the rule, and its counts
    in this study."""
    count = withheld(ctx)
    return [(FEEDBACK_TOPIC,
             "Each validator's feedback workbook sets their points, by the label they "
             "saw, beside the median of every validator who scored the same response, "
             "their own score included, and their direction beside how many of that "
             f"group chose the same response. {RULE} Here withheld beside "
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
    """Per rater and measure: their mean, and against the group median over the
    responses where it is shown."""
    compared = table["difference"].notna()
    within = (table["difference"].abs() <= 1).astype(float).where(compared)
    return table.assign(within_1_point=within, compared=compared).groupby(
        ["rater", "measure"], sort=False).agg(
        you_mean=("you", "mean"), group_median_mean=("group_median", "mean"),
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
    """Per rater: their direction per case beside how many of the group (them included)
    named the same."""
    values = _directions(ctx)
    if values.empty:
        return {}
    group = values.groupby("case")["value"].transform("size").to_numpy()
    same = values.groupby(["case", "value"])["value"].transform("size").to_numpy()
    table = values.assign(n_group=group, group_same=share_words(same, group))
    keys = pd.MultiIndex.from_arrays([table["rater"], table["case"], table["value"]])
    shown = pd.Series(labels.reindex(keys).to_numpy(), index=table.index)
    table["your_direction"] = np.where(
        table["value"] == TIED, TIED,
        "response " + shown.fillna(table["value"]).astype(str) + " better")
    cols = ["case", "your_direction", "group_same", "n_group"]
    firsts = ctx.as_seen(natural_order(table, ["case"]))
    return {str(rater): part for rater, part in split_rows(firsts, "rater", cols).items()}
