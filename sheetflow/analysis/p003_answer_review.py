"""Protocol 003 (answer-review): refusal counts per system, gold disputes, N/A handling.

Whether an N/A answer counts toward agreement is the plan setting
``[analysis.params] na_handling`` (see :mod:`.na`); the Methods sheet states it with
the n it leaves, and ``summary.json`` carries the same counts under ``na_handling``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..spec.params import YES_WORDS
from ..spec.study import Study
from ..words import counted
from .context import Context, empty_reason, natural_key
from .decision import (
    REPORTED,
    UNDEFINED,
    Check,
    Decision,
    reasons_of,
    reported_check,
    status_of,
    threshold_check,
)
from .na import na_handling
from .na_answers import na_answers
from .protocol import ProtocolPlan


def na_counts(ctx: Context) -> dict[str, dict[str, int]]:
    """Per dimension with N/A labels: N/A answers, ratings and units left for agreement.

    ``n_units`` and ``n_ratings`` count what agreement pairs under the setting (see
    :meth:`Context.ratings`): the units two or more raters have a value for, and the
    ratings on them. A rating whose unit has no other rating left (the other answer
    N/A under "missing") pairs with none, so it is not counted: "30 ratings on 12
    units" could not be true of two raters.
    """
    out = {}
    for dim in ctx.study.rubric.dimensions:
        if not dim.na_choices or dim.kind != "categorical" or dim.scope != "response":
            continue
        n_na, n_answers = na_answers(ctx, dim.id)
        used = ctx.ratings(dim.id)
        paired = used["unit"].map(used.groupby("unit")["rater"].nunique()) >= 2
        out[dim.id] = {"n_na": n_na, "n_answers": n_answers, "n_ratings": int(paired.sum()),
                       "n_units": int(used.loc[paired, "unit"].nunique())}
    return out


def _unpaired(counts: dict[str, int], setting: str) -> str:
    """The ratings left that pair with none, in words ("" when there are none): under
    "missing" the ratings left are the answers less the N/A ones."""
    left = counts["n_answers"] - (counts["n_na"] if setting == "missing" else 0)
    alone = left - counts["n_ratings"]
    return f" ({counted(alone, 'more rating')} on units with no other rating left, " \
        "so paired with none)" if alone else ""


def na_methods(ctx: Context) -> list[tuple[str, str]]:
    """The Methods entry: the setting and the n it leaves per dimension."""
    counts = na_counts(ctx)
    if not counts:
        return []
    setting = na_handling(ctx.study)
    rule = ("left out (missing): agreement over the answers with a rating; two N/A answers "
            "do not count as agreement" if setting == "missing" else
            "a category of its own: two N/A answers agree, N/A against a rating disagrees; "
            "the dimension is analysed at the nominal level")
    parts = [f"{dim}: {c['n_na']} of {c['n_answers']} answers N/A; agreement uses "
             f"{c['n_ratings']} ratings on {c['n_units']} units rated by two or more"
             f"{_unpaired(c, setting)}" for dim, c in counts.items()]
    return [("N/A answers", f"[analysis.params] na_handling = \"{setting}\": N/A is {rule}. "
             + "; ".join(parts) + ".")]


def _refusals(ctx: Context) -> pd.DataFrame:
    """Over- and under-refusal counts per system (pooled and per rater)."""
    dim_id = REFUSAL
    rows_in = ctx.ratings(dim_id)
    if rows_in.empty:
        return empty_reason(pd.DataFrame(), f"no {dim_id} ratings", arm="")
    should = [it.id for it in ctx.study.items if _should_refuse(ctx, it.fields) == "yes"]
    counted = pd.DataFrame({
        "rater": rows_in["rater"], "arm": rows_in["arm"], "n": 1,
        **{col: (rows_in["value"] == label).astype(int) for col, label in _REFUSALS.items()},
        "n_should_refuse": rows_in["case"].isin(should).astype(int)})
    arms = [a.id for a in ctx.study.design.arms]
    raters = ["all raters", *sorted(rows_in["rater"].unique())]
    sums = pd.concat([counted.assign(rater="all raters"), counted]).groupby(
        ["rater", "arm"]).sum()
    order = pd.MultiIndex.from_product([raters, arms], names=["rater", "arm"])
    out = sums.reindex(order, fill_value=0).astype(int).reset_index()
    out.attrs["headers"] = REFUSAL_HEADERS
    return out


REFUSAL = "refusal_appropriateness"
_REFUSALS = {"over_refusal": "Over-refusal", "under_refusal": "Under-refusal",
             "appropriate": "Appropriate"}
# every column counts ratings (each rater's answer on an item), the "all raters" rows
# adding them up: "should refuse (count)" read as a number of items
REFUSAL_HEADERS = {"n": "ratings", "over_refusal": "over-refusal (ratings)",
                   "under_refusal": "under-refusal (ratings)",
                   "appropriate": "appropriate (ratings)",
                   "n_should_refuse": "ratings of should-refuse items"}


def _should_refuse(ctx: Context, fields: dict[str, str]) -> str:
    """"yes" or "no": whether an item's question should be refused, by the plan's
    ``should_refuse_column`` (blank means no, as check requires); "" without one."""
    column = ctx.param("should_refuse_column")
    if not column:
        return ""
    return "yes" if str(fields.get(column, "")).strip().lower() in YES_WORDS else "no"


def _gold_disputes(ctx: Context) -> pd.DataFrame:
    """Every item a rater flagged gold_dispute, with whether its question should be
    refused, the rater's refusal_appropriateness answer and note; by item in the
    study's order, then by rater (the flags came in each rater's data order, one
    item's disputes apart on the sheet)."""
    data = ctx.first
    gold = data[data["dimension"] == "gold_dispute"]  # text checks on these rows only
    flagged = gold[gold["value"].notna() & (gold["value"].astype(str) != "")]
    qcol = ctx.param("question_column")
    items = {it.id: it.fields for it in ctx.study.items}
    # the protocol has a grounded refusal of a should-refuse question rated Appropriate
    # and flagged ("we want that pattern recoverable"): both are shown beside the flag
    refusal_of = _answers_of(data, REFUSAL, flagged)
    rows = [{"item": r.case, "question": items.get(r.case, {}).get(qcol, "") if qcol else "",
             "arm": r.arm, "rater": r.rater,
             "should_refuse": _should_refuse(ctx, items.get(r.case, {})),
             "refusal_rating": refusal, "note": note}
            for r, refusal, note in zip(flagged.itertuples(), refusal_of,
                                        _answers_of(data, "rater_note", flagged), strict=True)]
    rank = {it_id: n for n, it_id in enumerate(items)}
    rows.sort(key=lambda row: (rank.get(row["item"], len(rank)), natural_key(row["rater"])))
    out = pd.DataFrame(rows, columns=["item", "question", "arm", "rater", "should_refuse",
                                      "refusal_rating", "note"])
    out.attrs["headers"] = {"should_refuse": "should refuse",
                            "refusal_rating": "refusal appropriateness (this rater)"}
    return out


def _answers_of(data: pd.DataFrame, dim_id: str, rows: pd.DataFrame) -> list[str]:
    """The answer to ``dim_id`` of each of ``rows``' rater on its case, as text ("" when
    none)."""
    answers = data[data["dimension"] == dim_id].set_index(["rater", "case"])["value"]
    if answers.index.is_unique:  # one lookup for all rows, not one per row
        found = answers.reindex(pd.MultiIndex.from_arrays([rows["rater"], rows["case"]]))
        return [_text(v) for v in found.tolist()]
    keys = zip(rows["rater"], rows["case"], strict=True)
    return [_text(answers.get(key, "")) for key in keys]


def _h_refusals(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    """Pooled counts per system with what they are counted out of: the counts add up
    every rater's ratings, so 6 over-refusals among 2 raters' 9 answers are 6 of 18."""
    if "over_refusal" in table:
        pooled = table[table["rater"] == "all raters"]
        rated = ctx.ratings("refusal_appropriateness").groupby("arm")
        answers, raters = rated["case"].nunique(), rated["rater"].nunique()
        empty = _arms_without_items(ctx)
        out["refusals"] = {r["arm"]: {"over_refusal": r["over_refusal"],
                                      "under_refusal": r["under_refusal"],
                                      "n_ratings": r["n"],
                                      "n_raters": int(raters.get(r["arm"], 0)),
                                      "n_answers": int(answers.get(r["arm"], 0)),
                                      **({"no_items": True} if r["arm"] in empty else {})}
                           for r in pooled.to_dict("records")}


def _arms_without_items(ctx: Context) -> set[str]:
    """The arms no item is in (the spec warns of each): their counts of 0 are of
    nothing, so they are said to have no items, as protocol 001 says of its yield."""
    column = ctx.study.design.arm_column
    if not column:
        return set()
    present = {it.fields.get(column, "") for it in ctx.study.items}
    return {a.id for a in ctx.study.design.arms if a.id not in present}


def refusal_line(arm: str, counts: dict[str, Any]) -> str:
    """A system's refusal counts in words, with the ratings they are counted among.

    Parameters
    ----------
    arm : str
    counts : dict
        ``over_refusal``, ``under_refusal`` and, when known, ``n_ratings``,
        ``n_raters``, ``n_answers`` (a summary written before they were kept has none);
        ``no_items`` True for a system no item is in, said so instead of its counts.

    Returns
    -------
    str
    """
    if counts.get("no_items"):  # "0 of 0 ratings" would read as a count of nothing
        return f"{arm}: no items, so no refusals to count"
    line = f"{arm}: over-refusal {counts['over_refusal']}, under-refusal " \
        f"{counts['under_refusal']}"
    if "n_ratings" not in counts:
        return line
    return (f"{line}, of {counted(counts['n_ratings'], 'rating')} "
            f"({counted(counts['n_raters'], 'rater')}, "
            f"{counted(counts['n_answers'], 'answer')}; every rater's ratings counted)")


def _h_disputes(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    out["gold_disputes"] = sorted(set(table["item"])) if "item" in table else []


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """Agreement per rating column, defined (or at the plan's alpha target, if any)."""
    out["na_handling"] = {"setting": na_handling(ctx.study), "dimensions": na_counts(ctx)}
    target = ctx.target("alpha")
    named = ctx.study.rubric.named
    checks = [threshold_check(f"alpha on {named(r['measure'])}", r["alpha"], target,
                              note=_said(_undefined_alpha(ctx, r) or r.get("reason"), r))
              if target is not None else _reported_alpha(ctx, r) for r in out.get("alpha", [])]
    rule = (f"every rating column's agreement reaches alpha {target:g}" if target is not None
            else "the protocol sets no pass mark: agreement per column is reported, and "
            "nothing is called passed (set [analysis] targets.alpha for a pass rule)")
    status = status_of(checks)
    reasons = reasons_of(checks)
    if status == "reported":
        reasons = [f"agreement reported for {len(checks)} rating columns; the protocol sets "
                   "no pass mark, so nothing is called passed", *reasons]
    elif target is None and status == "inconclusive":
        reasons = [_unmeasured(checks), *reasons]
    return Decision(status, rule, checks, reasons=reasons)


def _unmeasured(checks: list[Check]) -> str:
    """Why a study with no pass mark is inconclusive: the columns whose agreement
    could not be measured (each check's line says why)."""
    undefined = [c.name.removeprefix("alpha on ") for c in checks if c.outcome == UNDEFINED]
    return (f"agreement could not be measured on {len(undefined)} of {len(checks)} rating "
            f"columns ({', '.join(undefined)}; see each line below for why), so the "
            "study's agreement is not known in full")


def _reported_alpha(ctx: Context, row: dict[str, Any]) -> Check:
    """A column's alpha where the protocol sets no pass mark: reported, never judged.

    Alpha is undefined when every rater gave one category throughout (no variation to
    measure agreement against); that is complete agreement, not a gap in the data, so
    it is said as such and leaves the study's outcome as it is. Any other undefined
    alpha stays undefined.
    """
    name = f"alpha on {ctx.study.rubric.named(row['measure'])}"
    agreed = _undefined_alpha(ctx, row)
    if not agreed:
        return reported_check(name, row["alpha"], _said(row.get("reason"), row))
    return Check(name, None, None, None, REPORTED, _said(f"undefined: {agreed}", row),
                 has_target=False)


def _said(reason: str | None, row: dict[str, Any]) -> str:
    """A column's check note: why its alpha is undefined (or what it left out), then
    what the Alpha table's note says of it (resamples without variation left out of
    the interval, too few units, N/A answers left out), so the check line says what
    the table says."""
    note = row.get("note") or ""
    return "; ".join(p for p in dict.fromkeys((reason or "", *note.split("; "))) if p)


def _undefined_alpha(ctx: Context, row: dict[str, Any]) -> str:
    """Why a column's alpha is undefined when every rater gave one category on every
    unit compared, with the agreement it stands for (100%); "" for a defined alpha or
    any other reason. Said the same with a target as without (the check's outcome says
    "undefined" there): an undefined alpha beside a target still says the raters
    agreed on every unit compared.

    "Throughout" only when every answer given is that category; otherwise the answers
    left out of the comparison (N/A under ``na_handling = "missing"``, a unit one rater
    answered) are named, since one may be another category.
    """
    only = _one_category(ctx, row["measure"])
    if math.isfinite(row["alpha"]) or only is None:
        return ""
    category, n_units, n_raters, left_out = only
    who = "both raters" if n_raters == 2 else f"all {n_raters} raters"
    if not left_out:
        return (f"{who} gave one category throughout ('{category}' on all {n_units} units: "
                "100% agreement)")
    rated = "both rated" if n_raters == 2 else "rated by two or more"
    return (f"{who} gave one category on every unit compared ('{category}' on all "
            f"{n_units} units {rated}: 100% agreement; {left_out})")


def _one_category(ctx: Context, dim_id: str) -> tuple[str, int, int, str] | None:
    """(the category, units, raters, the answers left out in words: "" when every
    answer given is that category) when every rating of ``dim_id`` on the units two
    or more raters rated is the same category; None otherwise."""
    rated = ctx.ratings(dim_id)
    pairable = rated[rated.groupby("unit")["rater"].transform("nunique") >= 2]
    values = pairable["value"].astype(str).unique()
    if pairable.empty or len(values) != 1:
        return None
    given = ctx.answers(dim_id)
    compared = pd.MultiIndex.from_frame(pairable[["unit", "rater"]])
    out = given[~pd.MultiIndex.from_frame(given[["unit", "rater"]]).isin(compared)]
    said = "" if (given["value"].astype(str) == values[0]).all() else _left_out(
        out, set(pairable["unit"]))
    return str(values[0]), int(pairable["unit"].nunique()), \
        int(pairable["rater"].nunique()), said


_NAMED_UNITS = 5
"""Units named where answers were left out of a comparison; the rest are counted."""


def _left_out(out: pd.DataFrame, compared: set[str]) -> str:
    """The answers left out of a comparison, per unit: "1 unit left out: HV-03
    (system_b): N/A by rater1, Unfaithful by rater2"; on a unit compared, the answers
    of the raters left out of it ("also left out: N/A by rater3 on HV-05 (system_a)")."""
    def answers(unit: str) -> str:
        rows = out[out["unit"] == unit]
        return ", ".join(f"{v} by {r}" for v, r in zip(rows["value"], rows["rater"],
                                                       strict=True))

    def name(unit: str) -> str:
        case, _, arm = str(unit).partition("|")
        return f"{case} ({arm})" if arm else case

    units = list(dict.fromkeys(out["unit"]))
    whole = [u for u in units if u not in compared]
    part = [u for u in units if u in compared]
    said = []
    if whole:
        named = "; ".join(f"{name(u)}: {answers(u)}" for u in whole[:_NAMED_UNITS])
        more = f"; and {counted(len(whole) - _NAMED_UNITS, 'more unit')}" \
            if len(whole) > _NAMED_UNITS else ""
        said.append(f"{counted(len(whole), 'unit')} left out: {named}{more}")
    if part:
        named = "; ".join(f"{answers(u)} on {name(u)}" for u in part[:_NAMED_UNITS])
        more = f"; and on {counted(len(part) - _NAMED_UNITS, 'more unit')}" \
            if len(part) > _NAMED_UNITS else ""
        said.append(f"also left out: {named}{more}")
    return "; ".join(said)


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    return [("Refusals (003)",
             "Each rating of refusal_appropriateness is Appropriate, Over-refusal (the "
             "system refused a question the evidence plainly answers) or "
             "Under-refusal (it answered one it should have refused). The counts per system "
             "add up every rater's ratings ('all raters'), so they are out of the ratings "
             "(raters x answers), which the Summary gives beside them; the Refusals sheet "
             "also shows each rater's own counts.")]


PLAN = ProtocolPlan(
    protocol="003",
    template="answer-review",
    analyses={
        "refusal_counts": _refusals,
        "gold_disputes": _gold_disputes,
    },
    headlines={
        "refusal_counts": _h_refusals,
        "gold_disputes": _h_disputes,
    },
    decide=_decide,
    methods=methods,
    method_topics={"Refusals (003)": ("refusal_counts",)},
    data_methods=na_methods,
)
