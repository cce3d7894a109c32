"""Protocol 001 (keep-known): yield per arm, Fisher, permutation, trend, the decision.

Yield = P(KEEP and not KNOWN and not already in the corpus) per sitting-1 rating,
with Wilson intervals; the gap between two arms with Newcombe's interval. The trend
runs over the ordered distance bands only. The results files (``verdicts.jsonl``,
``results/T2.csv``, ``results/T3.csv``) and the multi-owner mixed-effects model are
in :mod:`.keep_known_files`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..spec.study import Study
from ..words import (
    FEW_UNITS_TOPIC,
    counted,
    few_units_note,
    finite_number,
    interval_said,
    p_said,
    shown_number,
    shown_percent,
)
from .context import Context, add_verdict, empty_reason, number
from .decision import Arms, Check, Decision, flag_check, reasons_of, reported_check, status_of
from .keep_known_files import MIXED_METHOD, h_mixed, mixed_effects, yield_items
from .protocol import ProtocolPlan


def _yield_table(ctx: Context) -> pd.DataFrame:
    items = yield_items(ctx)
    rows = []
    for arm in (a.id for a in ctx.study.design.arms):
        grp = items[items["arm"] == arm]
        n = len(grp)
        k = int(grp["yield"].sum())
        wilson = stats.wilson_interval(k, n).iloc[0]
        rows.append({"arm": arm, "n": n, "n_yield": k,
                     "yield": grp["yield"].mean() if n else np.nan,
                     "ci_low": wilson["ci_low"], "ci_high": wilson["ci_high"],
                     "note": few_units_note(n, wilson["ci_low"], wilson["ci_high"]),
                     "n_keep": int(grp["keep"].sum()), "n_known": int(grp["known"].sum()),
                     "known_rate": grp["known"].mean() if n else np.nan,
                     "n_in_corpus": int(grp["in_corpus"].sum())})
    return pd.DataFrame(rows)


def _gap(table: pd.DataFrame, winner: str, other: str) -> dict[str, Any]:
    """Yield of ``winner`` minus ``other`` with Newcombe's 95% interval, and its mark
    when the fewer of the two arms' ratings are too few for it (``note``)."""
    t = table.set_index("arm")
    res = stats.newcombe_difference(int(t.loc[winner, "n_yield"]), int(t.loc[winner, "n"]),
                                    int(t.loc[other, "n_yield"]), int(t.loc[other, "n"]))
    row = res.iloc[0]
    fewer = min(int(t.loc[winner, "n"]), int(t.loc[other, "n"]))
    return {"diff": row["diff"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
            "reason": row["reason"],
            "note": few_units_note(fewer, row["ci_low"], row["ci_high"])}


def _winner(ctx: Context, table: pd.DataFrame) -> str:
    """The candidate arm with the highest yield (first in the plan on a tie)."""
    cands = [c for c in ctx.param("candidates", []) if c in set(table["arm"])]
    if not cands:
        return ""
    yields = table.set_index("arm")["yield"]
    return max(cands, key=lambda c: (np.nan_to_num(yields[c], nan=-1.0), -cands.index(c)))


def _tied_with(ctx: Context, table: pd.DataFrame, winner: str) -> list[str]:
    """The other candidates whose yield equals the winner's (the winner is then only
    the first of them in the plan; every test reads the same for each)."""
    yields = table.set_index("arm")["yield"]
    return [c for c in ctx.param("candidates", []) if c != winner and c in yields.index
            and winner in yields.index and yields[c] == yields[winner]]


def _winner_named(ctx: Context, table: pd.DataFrame, winner: str) -> str:
    """``winner``, with the candidates tied with it named."""
    tied = _tied_with(ctx, table, winner) if winner else []
    return f"{winner} (tied with {', '.join(tied)})" if tied else winner


def _two_by_two(table: pd.DataFrame, a: str, b: str) -> list[list[int]]:
    t = table.set_index("arm")
    return [[int(t.loc[a, "n_yield"]), int(t.loc[a, "n"] - t.loc[a, "n_yield"])],
            [int(t.loc[b, "n_yield"]), int(t.loc[b, "n"] - t.loc[b, "n_yield"])]]


def _yield_fisher(ctx: Context) -> pd.DataFrame:
    """Yield per arm and one-sided Fisher tests: winner vs control (and vs reference)."""
    table = _yield_table(ctx)
    winner, rows = _winner(ctx, table), []
    for role, other in (("primary", ctx.param("control")),
                        ("secondary", ctx.param("reference"))):
        if not winner or not other or other not in set(table["arm"]):
            continue
        res = stats.fisher_exact_test(_two_by_two(table, winner, other), alternative="greater")
        gap = _gap(table, winner, other)
        rows.append({"arm": f"test: {winner} vs {other}", "test": role,
                     **res.iloc[0].to_dict(), "gap": gap["diff"], "gap_ci_low": gap["ci_low"],
                     "gap_ci_high": gap["ci_high"], "note": gap["note"]})
    return _pooled_column(ctx, pd.concat([table.assign(test="yield"), pd.DataFrame(rows)],
                                         ignore_index=True))


def _pooled_column(ctx: Context, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a ``pooled`` column saying :func:`pooled_said` on every row when
    two or more owners' ratings are pooled in its intervals and p (its sheet and
    ``results/T2.csv`` and ``T3.csv`` show them apart from the Summary's marked lines);
    with one owner ``table`` unchanged, no column."""
    said = pooled_said(ctx)
    return table.assign(pooled=said) if said else table


def _permutation(ctx: Context) -> pd.DataFrame:
    """Permutation test of the yield gap, the best candidate vs control (labels shuffled).

    The best candidate is chosen from the data, so every relabelling chooses it again
    (max-statistic, :func:`~sheetflow.stats.permutation_test_best_of`); the p with the
    winner held fixed is reported beside it (``p_fixed_winner``), never decided on.
    With two or more owners an item's arm is shared by all its ratings, so labels are
    shuffled across items, each keeping its ratings
    (:func:`~sheetflow.stats.clustered_permutation_best_of`), not across ratings.
    """
    items = yield_items(ctx)
    table = _yield_table(ctx)
    winner, control = _winner(ctx, table), ctx.param("control")
    if not winner or not control:
        return empty_reason(pd.DataFrame(), "no candidate or control arm", comparison="")
    cands = [c for c in ctx.param("candidates", []) if c in set(items["arm"])]
    m, owners = int(ctx.param("permutations", 10_000)), items["rater"].nunique()
    if owners >= 2:
        res = _owner_permutation(items, cands, control, m, ctx.plan.seed)
        how = f"items shuffled, each with its {owners} owners' ratings"
    else:
        # protocol 001: arm labels are shuffled across all scored items, every arm's
        # included; each candidate's gap to the control is read off its positions
        others = items.loc[~items["arm"].isin([*cands, control]), "yield"]
        res = stats.permutation_test_best_of(
            {c: items.loc[items["arm"] == c, "yield"] for c in cands},
            items.loc[items["arm"] == control, "yield"], others=others,
            n_permutations=m, seed=ctx.plan.seed)
        how = "ratings shuffled"
    found = res.iloc[0].to_dict()
    return pd.DataFrame([{"comparison": f"{winner} vs {control}", **found, "winner": winner,
                          "control": control, "n_owners": owners, "statistic": "best of "
                          f"{len(cands)} candidates (max-statistic; {how})"}])


def _owner_permutation(items: pd.DataFrame, cands: list[str], control: str, m: int,
                       seed: int) -> pd.DataFrame:
    """The clustered test: strata are the sets of owners who rated an item, so items
    of one owner's own corpus are only relabelled among themselves."""
    raters = items.groupby("case")["rater"].agg(lambda r: "|".join(sorted(set(r))))
    return stats.clustered_permutation_best_of(
        items["yield"], items["case"], items["arm"], cands, control,
        strata=items["case"].map(raters), n_permutations=m, seed=seed)


def _trend(ctx: Context) -> pd.DataFrame:
    """Cochran-Armitage trend of yield across the ordered distance bands only.

    Items whose band is not one of the ordered bands (the single-note arm's
    ``single``, a blank) take no part in the trend; the table says how many.
    """
    items = yield_items(ctx)
    bands, left_out = ordered_bands(ctx, items["band"].unique().tolist())
    counts = [(b, int(items.loc[items["band"] == b, "yield"].sum()),
               int((items["band"] == b).sum())) for b in bands]
    res = stats.cochran_armitage([c[1] for c in counts], [c[2] for c in counts])
    per_band = pd.DataFrame([{"band": b, "score": i, "n_yield": x, "n": n,
                              **_band_interval(x, n), "none_rate": _none_rate(items, b)}
                             for i, (b, x, n) in enumerate(counts, 1)])
    outside = items[~items["band"].isin(bands)]
    note = (f"{_items_and_ratings(outside)} outside the ordered bands left out "
            f"({', '.join(repr(b) for b in left_out)})") if len(outside) else ""
    test = res.assign(band="trend test", note=note)
    return _pooled_column(ctx, pd.concat([per_band, test], ignore_index=True))


def _items_and_ratings(rows: pd.DataFrame) -> str:
    """How many items ``rows`` (one per rating) hold, with the ratings when there are
    more of them (two or more owners rate each item): "15 items (30 ratings)"."""
    n_items = rows["case"].nunique()
    said = counted(n_items, "item")
    return said if len(rows) == n_items else f"{said} ({counted(len(rows), 'rating')})"


def _band_interval(x: int, n: int) -> dict[str, float]:
    w = stats.wilson_interval(x, n).iloc[0]
    return {"yield": w["share"], "ci_low": w["ci_low"], "ci_high": w["ci_high"],
            "note": few_units_note(n, w["ci_low"], w["ci_high"])}


def _none_rate(items: pd.DataFrame, band: str) -> float:
    """The band's share of ratings with neither mark (the protocol's NONE, undefined
    there; the Methods say this reading)."""
    grp = items[items["band"] == band]
    return float((~grp["keep"] & ~grp["known"]).mean()) if len(grp) else np.nan


_BAND_ORDER = ("near", "close", "low", "mid", "medium", "middle", "far", "high", "distant")


def ordered_bands(ctx: Context, bands: list[str]) -> tuple[list[str], list[str]]:
    """(the ordered distance bands present, the other band values present).

    The order is ``[analysis.params] band_order`` when the plan gives it; otherwise
    numeric bands in numeric order, or known words (near ... far). Anything else
    (``single``, blank) has no place in an order and is not a band of the trend.
    """
    present = [b for b in dict.fromkeys(bands)]
    declared = ctx.param("band_order")
    if declared:
        order = [str(b) for b in declared]
        return [b for b in order if b in present], [b for b in present if b not in order]
    numeric = [b for b in present if b != "" and not math.isnan(number(b))]
    words = [b for b in present if b.strip().lower() in _BAND_ORDER]
    chosen = sorted(numeric, key=number) if numeric else \
        sorted(words, key=lambda b: _BAND_ORDER.index(b.strip().lower()))
    return chosen, [b for b in present if b not in chosen]


def _h_yield(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    y = table[table["test"] == "yield"]
    out["yield"] = {r["arm"]: r["yield"] for r in y.to_dict("records")}
    # with two or more owners every interval and Fisher p here pools their ratings as
    # if independent (only the permutation test, which decides, shuffles items)
    pooled = pooled_said(ctx)
    # counts as whole numbers: the table's test rows made the column float
    out["yield_ci"] = {r["arm"]: {"n": int(r["n"]), "n_yield": int(r["n_yield"]),
                                  "ci_low": r["ci_low"],
                                  "ci_high": r["ci_high"], "note": r["note"],
                                  "pooled": pooled}
                       for r in y.to_dict("records")}
    tests = table[table["test"] != "yield"]
    out["fisher"] = [{"comparison": r["arm"], "p": r["p"], "odds_ratio": r["odds_ratio"],
                      "gap": r["gap"], "gap_ci": [r["gap_ci_low"], r["gap_ci_high"]],
                      "gap_note": r["note"], "pooled": pooled}
                     for r in tests.to_dict("records")]
    lines = out.setdefault("summary_lines", [])
    pct = shown_percent
    lines += [f"yield {r['arm']}: {int(r['n_yield'])}/{int(r['n'])} = {pct(r['yield'])} "
              f"{interval_said(pct(r['ci_low']), pct(r['ci_high']))}"
              f"{_marked(r['note'], pooled)}"
              if r["n"] else f"yield {r['arm']}: no items (none of {ctx.study.items_file} is "
              "in this arm), so no yield" for r in y.to_dict("records")]
    lines += [f"gap {f['comparison'].removeprefix('test: ')}: {pct(f['gap'])} "
              f"{interval_said(pct(f['gap_ci'][0]), pct(f['gap_ci'][1]))}"
              f"{_marked(f['gap_note'], pooled)}"
              for f in out["fisher"]]


def _marked(*notes: str) -> str:
    """An interval's marks after it (" (fewer than ...; pooled over 2 owners ...)"), or
    "", as the arms' sentence marks its interval."""
    said = "; ".join(filter(None, notes))
    return f" ({said})" if said else ""


def pooled_said(ctx: Context) -> str:
    """The mark of a figure computed from every owner's ratings as if independent:
    "pooled over 2 owners as if independent: descriptive" with two or more owners, who
    share each item's arm and band, so its interval is too narrow and its p too small
    when they agree; "" with one owner, whose ratings are the items."""
    owners = _owners(ctx)
    return f"pooled over {owners} owners as if independent: descriptive" \
        if owners >= 2 else ""


def _owners(ctx: Context) -> int:
    """How many owners' sitting-1 ratings the yields rest on."""
    return int(yield_items(ctx)["rater"].nunique())


def _h_trend(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    test = table[table["band"] == "trend test"]
    if test.empty:
        return
    row = test.iloc[0]
    per_band = table[table["band"] != "trend test"]
    bands = per_band["band"].tolist()
    alpha = ctx.target("alpha_test", 0.05)
    owners = _owners(ctx)
    # an item's band is shared by all its owners' ratings: pooled as if independent,
    # they give a p too small when owners agree, so no direction is read from it
    direction = trend_direction(row["z"], row["p"], alpha) if owners < 2 else \
        POOLED_TREND
    out["trend"] = {"bands": bands, "statistic": row["statistic"], "z": row["z"],
                    "direction": direction,
                    "shown": direction not in (NO_TREND, POOLED_TREND), "n_owners": owners,
                    "alpha": alpha, "sided": "two-sided", "p": row["p"], "n": row["n"],
                    "per_band": [{"band": r["band"], "n_yield": int(r["n_yield"]),
                                  "n": int(r["n"]), "yield": r["yield"]}
                                 for r in per_band.to_dict("records")],
                    "note": row.get("note", ""),
                    # why p is undefined ("" when it is not): n/a is no comparison
                    "reason": "" if finite_number(row["p"]) else str(row.get("reason") or "")}
    out.setdefault("summary_lines", []).append(_trend_line(out["trend"]))


def _trend_line(trend: dict[str, Any]) -> str:
    """The trend in one line: a direction only when the test shows one, its two-sided
    p against alpha, and each band's yield with its counts."""
    p, alpha = trend["p"], trend["alpha"]
    side = "below" if trend["shown"] else "not below"
    yields = ", ".join(f"{b['band']} {shown_percent(b['yield'])} ({b['n_yield']}/{b['n']})"
                       for b in trend["per_band"])
    note = trend["note"] if isinstance(trend["note"], str) else ""
    if not finite_number(p):  # an undefined p is compared with nothing: why it is undefined
        return (f"trend across {' -> '.join(trend['bands'])}: trend undefined: "
                f"{trend.get('reason') or 'no p'} (Cochran-Armitage, n {int(trend['n'])}); "
                f"yield {yields}" + (f"; {note}" if note else ""))
    if trend["direction"] == POOLED_TREND:
        return (f"trend across {' -> '.join(trend['bands'])}: {POOLED_TREND} (the "
                f"{trend['n_owners']} owners' ratings pooled as if independent, though an "
                "item's band is shared by all its ratings, so this p is too small when "
                f"owners agree: descriptive; Cochran-Armitage, two-sided {p_said(p)}; "
                f"z = {shown_number(trend['z'])}, chi2 {shown_number(trend['statistic'])}, "
                f"n {int(trend['n'])}); yield {yields}" + (f"; {note}" if note else ""))
    return (f"trend across {' -> '.join(trend['bands'])}: {trend['direction']} "
            f"(Cochran-Armitage, two-sided {p_said(p, [alpha])}, {side} {alpha:g}; "
            f"z = {shown_number(trend['z'])}, chi2 {shown_number(trend['statistic'])}, "
            f"n {int(trend['n'])}); "
            f"yield {yields}" + (f"; {note}" if note else ""))


NO_TREND = "no trend shown"
POOLED_TREND = "no direction read"


def trend_direction(z: float, p: float, alpha: float) -> str:
    """The trend in words: a direction only when the test shows one.

    The Cochran-Armitage test is two-sided (chi-square, 1 df), so a trend is shown
    when its p is below ``alpha``; only then does the sign of z say which way. A z of
    one sign with a p above alpha is no evidence of a direction, and the bands' yields
    need not be monotone even when the test shows a linear trend.

    Parameters
    ----------
    z : float
        The signed statistic, positive when the yield rises with the band's score.
    p : float
        The test's two-sided p.
    alpha : float
        The plan's level (``[analysis.targets] alpha_test``).

    Returns
    -------
    str
        "yield rises across the bands (linear trend)", "yield falls across the bands
        (linear trend)", or "no trend shown" when p is not below alpha or either
        figure is undefined.
    """
    if z is None or p is None or not (np.isfinite(z) and np.isfinite(p)) or z == 0 \
            or not p < alpha:
        return NO_TREND
    return f"yield {'rises' if z > 0 else 'falls'} across the bands (linear trend)"


def _h_permutation(ctx: Context, table: pd.DataFrame, out: dict) -> None:
    if "p" not in table:
        return
    row = table.iloc[0]
    out["permutation"] = {"comparison": row["comparison"], "diff": row["diff"], "p": row["p"],
                          "p_fixed_winner": row["p_fixed_winner"],
                          "statistic": row["statistic"],
                          "n_permutations": row["n_permutations"], "seed": row["seed"],
                          "n_owners": int(row.get("n_owners", 1))}
    alpha = ctx.target("alpha_test", 0.05)
    yields = out.get("yield") or _yield_table(ctx).set_index("arm")["yield"].to_dict()
    ref = ctx.param("reference")
    above_ref = bool(yields.get(row["winner"], np.nan) > yields.get(ref, np.nan)) if ref \
        else True
    signal = bool(row["p"] < alpha) and above_ref
    add_verdict(out, "signal (permutation p below alpha and winner above reference)", row["p"],
             alpha, signal, "signal" if signal else "null: published as one")


def _decide(ctx: Context, tables: dict[str, pd.DataFrame], out: dict) -> Decision:
    """Protocol 001's signal rule: permutation p below alpha and the winner above the
    reference arm. Anything else "is a null and is published as one": the status is
    then ``null`` (a result, not a study that went wrong), never ``fail``."""
    alpha = ctx.target("alpha_test", 0.05)
    perm = out.get("permutation") or {}
    p = perm.get("p")
    table = _yield_table(ctx)
    winner, ref = _winner(ctx, table), ctx.param("reference")
    checks = [flag_check(f"permutation p ({perm.get('comparison', 'winner vs control')})",
                         None if p is None or not np.isfinite(p) else bool(p < alpha), p,
                         alpha, "one-sided; below the target is a signal", p_value=True,
                         comparison="<")]
    if ref:
        checks.append(_above_reference(ctx, table, winner, ref, out.get("fisher") or []))
    rule = (f"signal when the permutation p of the best candidate vs the control is below "
            f"{alpha:g} and the winner's yield is above the reference arm's; anything else "
            "is a null, published as one")
    owners = int(perm.get("n_owners") or 1)
    if owners >= 2:
        checks.append(reported_check(
            "owners (five before any generalisation claim)", owners,
            "" if owners >= _GENERAL_CLAIM_OWNERS else
            f"below five: the result holds for these {owners} owners, no general claim"))
    status = status_of(checks)
    if status == "fail":  # the protocol's own word: short of the signal is a null
        status = "null"
    said = {"pass": "signal: the protocol's rule is met",
            "null": _null_reason(checks, alpha)}
    return Decision(status, rule, checks,
                    reasons=[said[status], *reasons_of(checks)] if status in said else [])


def _above_reference(ctx: Context, table: pd.DataFrame, winner: str, ref: str,
                     fisher: list[dict[str, Any]]) -> Check:
    """The rule's second half, "the winner above B4": the two yields compared as they
    are, no test deciding it (the one-sided Fisher test of the two is named beside it,
    reported, not decided on). The bar is the reference's yield, said in words with its
    counts: as a bare number it read as a target the plan set."""
    name = f"winner {_winner_named(ctx, table, winner) or '?'} above reference {ref}"
    t = table.set_index("arm")
    if not winner or ref not in t.index:
        return flag_check(name, None, None, None, f"no winner, or no yield for {ref}",
                          proportion=True)
    ahead, behind = t.loc[winner], t.loc[ref]
    ok = None if not (np.isfinite(ahead["yield"]) and np.isfinite(behind["yield"])) \
        else bool(ahead["yield"] > behind["yield"])
    test = next((f for f in fisher if f["comparison"] == f"test: {winner} vs {ref}"), None)
    # with two or more owners that p pools their ratings: marked where it is quoted
    said = "" if test is None else ", ".join(filter(None, (p_said(test["p"]),
                                                           test.get("pooled"))))
    tested = f"; the one-sided Fisher test of the two ({said}) is reported, not decided " \
        "on" if said else ""
    note = (f"yields {winner} {_counts(ahead)} vs the reference {ref} {_counts(behind)}; "
            f"the rule compares the two yields, no test decides it{tested}")
    return flag_check(name, ok, ahead["yield"], f"above the reference's yield, "
                      f"{_counts(behind)}", note, proportion=True)


def _counts(row: pd.Series) -> str:
    """A yield with its counts: "3/15 = 20.0%"."""
    return f"{int(row['n_yield'])}/{int(row['n'])} = {shown_percent(row['yield'])}"


def _null_reason(checks: list[Check], alpha: float) -> str:
    """Why the result is a null, in one line: each half of the rule not met."""
    perm, *rest = checks
    why = []
    if perm.passed is False:
        why.append(f"permutation {p_said(perm.value, [alpha])}, not below {alpha:g}")
    why += [f"{c.name.removeprefix('winner ').replace(' above ', ' not above ')}"
            for c in rest if c.passed is False and c.name.startswith("winner ")]
    return (f"no signal shown ({'; '.join(why)}): a null, published as one, as the "
            "protocol says")


_GENERAL_CLAIM_OWNERS = 5  # protocol 001, multi-owner extension


def _arms(ctx: Context, tables: dict[str, pd.DataFrame]) -> Arms | None:
    """The best candidate vs the control: yield gap and permutation p, the difference
    shown when that p is below alpha_test, as the decision reads it."""
    table = _yield_table(ctx)
    winner, control = _winner(ctx, table), ctx.param("control")
    if not winner or not control or control not in set(table["arm"]):
        return None
    yields = table.set_index("arm")["yield"]
    perm = tables.get("permutation")
    p = float(perm["p"].iloc[0]) if perm is not None and "p" in perm else None
    interval = _gap(table, winner, control)
    gap = float(interval["diff"])
    tied = _tied_with(ctx, table, winner)
    # "no arm ahead (...)" names the two arms the effect is between
    note = "" if gap > 0 else f"the best candidate, {winner}, is not above the control, {control}"
    if tied and gap > 0:
        note = (f"{winner} and {', '.join(tied)} have the same yield: either reads the same "
                f"in every test; {winner} is named as the first in the plan")
    return Arms(winner=winner if gap > 0 else "", other=control, compared=winner,
                effect=gap,
                effect_measure="yield difference (Newcombe 95% CI)",
                ci=[interval["ci_low"], interval["ci_high"]], p=p,
                test="permutation test of the yield gap (one-sided)",
                means={a: float(v) for a, v in yields.items()}, means_label="yield",
                note=note, proportion=True, ci_note=_pooled_mark(ctx, interval["note"]),
                without_items=table.loc[table["n"] == 0, "arm"].tolist(),
                # "shown" is the decision's test: the 95% interval is two-sided and
                # may include 0 where the one-sided permutation p is below alpha
                alpha=float(ctx.target("alpha_test", 0.05)), p_of="permutation")


def _pooled_mark(ctx: Context, note: str) -> str:
    """The gap interval's marks: ``note`` (few ratings) and, with two or more owners,
    that it pools their ratings as if independent, so it is too narrow when they agree
    (the permutation p beside it shuffles items, not ratings)."""
    owners = _owners(ctx)
    pooled = (f"the interval pools the {owners} owners' ratings as if independent: "
              "descriptive, too narrow when owners agree") if owners >= 2 else ""
    return "; ".join(filter(None, (note, pooled)))


def methods(study: Study) -> list[tuple[str, str]]:
    """Methods-sheet entries: (topic, text)."""
    plan = study.plan
    return [
        ("Permutation test",
         "Arm labels shuffled across all scored items (every arm, as protocol 001 says) "
         f"{int(plan.params.get('permutations', 10000))} times with seed {plan.seed}. The "
         "winner is the candidate with the higher yield, chosen from the data, so each "
         "relabelling chooses it again: the statistic is the largest candidate-minus-"
         "control yield gap (max-statistic; Westfall & Young 1993), and the decision uses "
         "its p; the arms line calls the winner shown to differ from the control only when "
         "this p is below alpha_test, as the decision does (the Newcombe 95% interval of "
         "the gap beside it is two-sided and may include 0 where the one-sided p is below "
         "alpha_test). The protocol's 'p below 0.05 for B3 or B6' read with the winner held "
         "fixed across shuffles gives a smaller p, which ignores that the winner was "
         "picked as the best; it is reported beside (p_fixed_winner), not decided on. "
         "p = (b + 1)/(m + 1), counting the observed labelling (Phipson & Smyth 2010). "
         "With two or more owners an item's arm is shared by all its ratings, so the "
         "labels are shuffled across items, each keeping its owners' ratings, among items "
         "rated by the same owners (a clustered test); shuffling ratings as if independent "
         "would be pseudo-replication and give too small a p. The Fisher tests, the trend "
         "test, the Wilson intervals and the Newcombe interval of the gap then pool the "
         "owners' ratings and are descriptive (the Summary reads no direction from the "
         "trend's p, and marks each of the others where it shows it: the arms line's "
         "interval, every yield, gap and Fisher line, and the Fisher p beside the "
         "reference check, which no test decides; the Yield Fisher and Trend by band "
         "sheets say it above their tables, results/T2.csv and T3.csv in their pooled "
         "column); the owner-adjusted "
         "effects are the mixed model's. Below five owners the Summary says that no "
         "general claim is made (protocol 001)."),
        ("Yield, Fisher and trend (001)",
         "Yield = P(KEEP and not KNOWN and not already in corpus) per sitting-1 rating. "
         "Each yield with Wilson's 95% score interval (Wilson 1927); the gap between two "
         "arms with Newcombe's hybrid score interval (Newcombe 1998, method 10); either "
         f"is marked when it rests on few ratings (see {FEW_UNITS_TOPIC}). "
         "Primary: one-sided Fisher exact test, the candidate with the higher yield vs the "
         "control; secondary vs the reference arm. Cochran-Armitage chi-square (Cochran "
         "1954; Armitage 1955) for a linear trend in yield across the ordered distance "
         "bands only (band_order "
         f"{list(plan.params.get('band_order', [])) or 'near..far / numeric'}, scores "
         "1..G), without continuity correction; its p is two-sided (chi-square, 1 df: a "
         "trend either way counts). A direction is stated only when that p is below "
         "alpha_test; the signed z then gives it: positive when the yield rises from the "
         "first band to the last, negative when it falls. Otherwise the Summary says no "
         "trend shown, whatever the sign of z; with two or more owners it reads no "
         "direction at all, as the trend pools their ratings as if independent while an "
         "item's band is shared by all its ratings. Each band's yield is listed beside it with "
         "its counts (k/n). Items "
         "outside the bands (the single-note arm) take no part. Intra-rater kappa: "
         "Cohen's kappa between sitting 1 and sitting 2 on the repeated items."),
        ("Mixed-effects model (001)", MIXED_METHOD),
        ("Rater description and deviations (001)",
         "Each owner answers, once in sitting 1, the protocol's rater description "
         "(relationship to the corpus, breaks taken, deviations) and the multi-owner "
         "record (compensation, consent). out/results/metadata.json holds them per owner "
         "with the minutes spent (the batches dated at both ends, summed per sitting) and "
         "the deviations the batch times show: batches of one sitting that overlap, a "
         "batch of zero length, a sitting-2 batch begun less than 24 hours after sitting 1 "
         "ended. It is the protocol's metadata.yaml written as JSON (any YAML 1.2 reader "
         "reads it). Every deviation, found or reported, is a line on the Summary, and "
         "sheetflow analyze counts them beside the intra-rater kappa, naming an owner "
         "whose sitting 2 began under 24 hours after sitting 1; an "
         "owner's answer meaning none (none, no, n/a, -, nil, no deviations; any case) "
         "reports none. No IRB approval is claimed."),
        ("Results files (001)",
         "out/verdicts.jsonl: one line per item and sitting with the unsealed arm, both "
         "marks, the sitting, the batch and its start and end (as typed in the workbook). "
         "out/results/T2.csv: per arm n, yield with Wilson interval, KEEP, KNOWN and "
         "in-corpus counts. out/results/T3.csv: per ordered band n, yield with Wilson "
         "interval and NONE rate (the 'none rate' of the trend sheet). The protocol asks "
         "for a NONE rate by band without defining NONE; sheetflow reads it as the share "
         "of the band's sitting-1 ratings with neither KEEP nor KNOWN marked. In both, "
         "note marks an interval on too few ratings (see "
         f"{FEW_UNITS_TOPIC}); with two or more owners a last column, pooled, says on "
         "every row that the interval pools their ratings as if independent "
         "(descriptive: an item's arm and band are shared by all its ratings); with one "
         "owner there is no such column."),
    ]


def monte_carlo_methods(ctx: Context, summary_doc: dict[str, Any]) -> dict[str, str]:
    """The permutation test's Methods entry completed from its result: the shuffles
    and the Monte Carlo standard error of each p shown (the decided p and the
    fixed-winner p), as a p from random shuffles only estimates the exact one."""
    perm = summary_doc.get("permutation") or {}
    m = perm.get("n_permutations")
    if not m or not finite_number(perm.get("p")):  # no test run (null p): nothing to complete
        return {}
    m, alpha = int(m), float(ctx.target("alpha_test", 0.05))
    each = [f"{_se_text(stats.monte_carlo_se(perm['p'], m))} for the decided "
            f"{p_said(perm['p'], [alpha])}"]
    if finite_number(perm.get("p_fixed_winner")):
        each.append(f"{_se_text(stats.monte_carlo_se(perm['p_fixed_winner'], m))} for the "
                    f"fixed-winner {p_said(perm['p_fixed_winner'], [alpha])}")
    return {"Permutation test": (
        f"Monte Carlo error: each p here rests on {m:,} random shuffles, so it estimates "
        f"the exact permutation p with a standard error of sqrt(p(1 - p)/{m:,}): "
        f"{' and '.join(each)}.")}


def _se_text(se: float) -> str:
    """A standard error to two significant digits, never in exponent form."""
    if not np.isfinite(se) or se <= 0:
        return "0" if se == 0 else "undefined"
    return f"{se:.{max(0, 1 - math.floor(math.log10(se)))}f}"


PLAN = ProtocolPlan(
    protocol="001",
    template="keep-known",
    analyses={
        "yield_fisher": _yield_fisher,
        "permutation": _permutation,
        "trend": _trend,
        "mixed_effects": mixed_effects,
    },
    headlines={
        "yield_fisher": _h_yield,
        "permutation": _h_permutation,
        "trend": _h_trend,
        "mixed_effects": h_mixed,
    },
    methods=methods,
    result_methods=monte_carlo_methods,
    decide=_decide,
    arms=_arms,
    method_topics={
        "Permutation test": ("permutation",),
        "Yield, Fisher and trend (001)": ("yield_fisher", "trend", "intra_rater_kappa",),
        "Mixed-effects model (001)": ("mixed_effects",),
        "Rater description and deviations (001)": ("yield_fisher",),
        "Results files (001)": ("yield_fisher", "trend"),
    },
)
