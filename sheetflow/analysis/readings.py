"""The agreement figures a protocol names beside its decision: ICC, pairwise and
intra-rater kappa, each with its target (when the plan sets one) and a published reading.

None of the five protocols sets a pass mark for these figures ("reported for
transparency", 000 section 4.3; "report it even if it is bad", 001), so they never
enter a decision. What a figure means in words comes from the scale its literature
uses, named beside it: Landis & Koch (1977) for kappa, Koo & Li (2016) for the ICC.
A plan may set a target (``[analysis.targets]`` ``icc``, ``cohen_kappa``,
``intra_rater_kappa``); the Summary then says whether the figure reaches it, still
outside the decision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from .._groups import groups_in_order
from ..stats.kappa import FIXED_AT_ZERO
from ..words import FEW_UNITS, FEW_UNITS_NOTE, counted, few_units_note, settled, shown_number
from .context import Context
from .na_answers import na_left_out_note

KAPPA_SCALE = "Landis & Koch 1977"
LANDIS_KOCH_REF = ("Landis, J. R., & Koch, G. G. (1977). The measurement of observer "
                   "agreement for categorical data. Biometrics 33, 159-174.")
KOO_LI_REF = ("Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting "
              "intraclass correlation coefficients for reliability research. J. Chiropr. "
              "Med. 15, 155-163.")
ICC_SCALE = "Koo & Li 2016"
ANALYSES = ("icc", "cohen_kappa", "intra_rater_kappa")  # the tables the figures come from

# Landis, J. R., & Koch, G. G. (1977). The measurement of observer agreement for
# categorical data. Biometrics 33, 159-174, table on p. 165: (lower bound, label).
_LANDIS_KOCH = ((0.81, "almost perfect"), (0.61, "substantial"), (0.41, "moderate"),
                (0.21, "fair"), (0.0, "slight"), (-math.inf, "poor"))
# Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass
# correlation coefficients for reliability research. J. Chiropr. Med. 15, 155-163, p. 161:
# below 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, above 0.9 excellent.
# "Excellent" is strictly above 0.9, so icc_reading tests it before this closed-below scale.
_KOO_LI = ((0.75, "good"), (0.5, "moderate"), (-math.inf, "poor"))
ICC_EXCELLENT = 0.9


def kappa_reading(value: float | None) -> str:
    """Landis & Koch's (1977) word for a kappa, read at its full value against the lower
    ends of their table's ranges (0.21-0.40 "fair": 0.21 and above, below 0.41), as
    every figure is read (:data:`~sheetflow.words.ROUNDING_RULE`): a kappa of 0.2096
    is "slight" and shown 0.2096, never "0.210"; "" when undefined."""
    return _read(value, _LANDIS_KOCH)


NOT_READ = "not read: 0 by construction"
"""The reading of a kappa the margins fix at 0 (a rater gave one category throughout,
:data:`~sheetflow.stats.kappa.FIXED_AT_ZERO`): Landis & Koch's "slight" would read a
figure no agreement or disagreement produced."""


def fixed_kappa_reading(value: float | None, reasons: Iterable[str]) -> str:
    """:func:`kappa_reading`, or :data:`NOT_READ` where every pair's ``reasons`` say the
    kappa is 0 by construction (the mean of such kappas is fixed at 0 too)."""
    said = [str(r) for r in reasons]
    if said and all(r.startswith(FIXED_AT_ZERO) for r in said):
        return NOT_READ
    return kappa_reading(value)


def reading_said(figure: dict[str, Any]) -> str:
    """A reported figure's reading in words: "slight (Landis & Koch 1977)", the reading
    alone when it has no scale (:data:`NOT_READ`), else "undefined: why".

    Parameters
    ----------
    figure : dict
        A record of :func:`reported_figures` (``reading``, ``scale``, ``reason``).

    Returns
    -------
    str
    """
    if not figure["reading"]:
        return f"undefined: {figure['reason']}"
    return f"{figure['reading']} ({figure['scale']})" if figure["scale"] else \
        figure["reading"]


def icc_reading(value: float | None) -> str:
    """Koo & Li's (2016) word for an ICC point estimate, read at its full value (their
    guideline also reads the interval; the Summary shows it beside); "" when undefined.
    Their words set the bounds: 0.75 and 0.9 are "good" ("between 0.75 and 0.9"),
    "excellent" is "greater than 0.90", 0.5 is "moderate"."""
    if value is not None and math.isfinite(value) and \
            settled(value, (ICC_EXCELLENT,)) > ICC_EXCELLENT:
        return "excellent"
    return _read(value, _KOO_LI)


def reading_bounds(scale: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The bounds a figure read on ``scale`` is read against: those it reaches at or
    above them, and those it passes only above them (Koo & Li's "excellent"), for
    :func:`~sheetflow.words.decimals_for`; none for another scale."""
    if scale == KAPPA_SCALE:
        return tuple(b for b, _ in _LANDIS_KOCH if math.isfinite(b)), ()
    if scale == ICC_SCALE:
        return tuple(b for b, _ in _KOO_LI if math.isfinite(b)), (ICC_EXCELLENT,)
    return (), ()


def _read(value: float | None, scale: tuple[tuple[float, str], ...]) -> str:
    if value is None or not math.isfinite(value):
        return ""
    value = settled(value, [bound for bound, _ in scale])  # a bound up to rounding is it
    return next(label for bound, label in scale if value >= bound)


def reported_figures(ctx: Context, tables: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """One record per figure the plan computed among ICC, pairwise Cohen's kappa and
    intra-rater kappa: what it measures, its value and interval, units and raters, the
    target (None when the plan sets none), whether it is met, and its reading."""
    rows: list[dict[str, Any]] = []
    if "icc" in tables and "primary" in tables["icc"]:
        rows += _icc_rows(ctx, tables["icc"])
    if "cohen_kappa" in tables and "kappa" in tables["cohen_kappa"]:
        rows += _pairwise_rows(ctx, tables["cohen_kappa"])
    if "intra_rater_kappa" in tables and "kappa" in tables["intra_rater_kappa"]:
        rows += _intra_rows(ctx, tables["intra_rater_kappa"])
    return rows


PAST_ONE = ("the interval runs past 1, the largest kappa can be: a normal-approximation "
            "interval (kappa +/- 1.96 SE) is not cut at the bound")
_NO_WIDTH = "a zero-width interval (standard error 0) is no certainty: "
ZERO_WIDTH = (_NO_WIDTH + "the normal approximation gives no width when the two ratings "
              "agree on every unit, however few the units")
"""The note of a kappa interval of no width where the two ratings agree on every unit."""
ZERO_WIDTH_NONE = (_NO_WIDTH + "the normal approximation gives no width when the two "
                   "ratings agree on no unit, however few the units")
ZERO_WIDTH_CHANCE = (_NO_WIDTH + "the observed agreement equals the agreement expected by "
                     "chance, so kappa is 0, and the normal approximation gives it no width "
                     "here")
ZERO_WIDTH_OTHER = _NO_WIDTH + "the normal approximation gives it no width here"


def one_category_note(who: str) -> str:
    """The note of a kappa where ``who`` ("sitting 2") gave one category throughout:
    kappa is 0 by construction, whatever the agreement, and has no interval."""
    return f"{who}{_ONE_CATEGORY}"


_ONE_CATEGORY = (" used one category throughout, so the agreement expected by chance "
                 "equals the observed agreement and kappa is 0 by construction (Cohen 1960), "
                 "with no standard error or interval")


def interval_notes(table: pd.DataFrame) -> pd.DataFrame:
    """A kappa table with a ``note`` beside each interval that reads as more than it is.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with ``ci_low`` and ``ci_high`` (Cohen's or intra-rater kappa) and
        ``n_units``; with ``p_o`` and ``p_e`` (observed and chance agreement) a zero
        width gets its cause, and ``one_category`` (who gave one category throughout,
        "" for none) names that cause where it is the one.

    Returns
    -------
    pandas.DataFrame
        ``table`` itself (a frame just built: changed in place), with ``note``:
        :data:`PAST_ONE` where the interval's end passes 1; where it has no width, why
        (:data:`ZERO_WIDTH` for agreement on every unit,
        :data:`ZERO_WIDTH_NONE` on none, :data:`ZERO_WIDTH_CHANCE` for agreement at
        chance, else :data:`ZERO_WIDTH_OTHER`); :func:`one_category_note` where
        ``one_category`` names who gave one category throughout; and
        :data:`~sheetflow.words.FEW_UNITS_NOTE` (after any of these) where it rests on
        fewer than :data:`~sheetflow.words.FEW_UNITS` units, else blank (categorical:
        the pairwise table can hold a row per pair of hundreds of raters). Unchanged
        without intervals.
    """
    if "ci_high" not in table or "ci_low" not in table:
        return table
    low, high = (pd.to_numeric(table[c], errors="coerce").to_numpy(float)
                 for c in ("ci_low", "ci_high"))
    # category codes, not the texts: a text array of 873,000 rows (500 raters' pairs)
    # took some 700 MB, and a copy of the table (assign) 100 MB more
    texts = ["", PAST_ONE, ZERO_WIDTH, ZERO_WIDTH_NONE, ZERO_WIDTH_CHANCE, ZERO_WIDTH_OTHER]
    codes = np.zeros(len(table), np.int16)
    flat = np.isfinite(low) & (high == low)
    codes[flat] = _zero_width_codes(table, flat)
    who = table["one_category"].fillna("").astype(str).to_numpy() \
        if "one_category" in table else np.full(len(table), "")
    # kappa 0 by construction has no interval (NaN), so this note stands without one;
    # an undefined kappa (one and the same category in both) has its reason instead
    zero = pd.to_numeric(table["kappa"], errors="coerce").to_numpy(float) == 0 \
        if "kappa" in table else flat
    for name in sorted(set(who[zero]) - {""}):  # few: a sitting, a rater
        codes[zero & (who == name)] = len(texts)
        texts.append(one_category_note(name))
    codes[high > 1] = 1  # past 1 first: a zero-width interval at 1.1 is past 1
    few = _few_units(table, low, high)
    codes[few] += len(texts)  # the same texts, each with the mark after
    table["note"] = pd.Categorical.from_codes(
        codes, categories=texts + ["; ".join(filter(None, (t, FEW_UNITS_NOTE))) for t in texts])
    return table


def _zero_width_codes(table: pd.DataFrame, flat: np.ndarray) -> np.ndarray:
    """The cause of each zero-width interval (rows ``flat``) as a code of
    :func:`interval_notes`' texts, from the observed and chance agreement."""
    if "p_o" not in table or "p_e" not in table:
        return np.full(int(flat.sum()), 5, np.int16)
    p_o = pd.to_numeric(table["p_o"], errors="coerce").to_numpy(float)[flat]
    p_e = pd.to_numeric(table["p_e"], errors="coerce").to_numpy(float)[flat]
    return np.select([p_o >= 1 - 1e-12, p_o <= 1e-12, np.abs(p_o - p_e) <= 1e-12],
                     [2, 3, 4], default=5).astype(np.int16)


def few_units_notes(table: pd.DataFrame, units: str = "n_units") -> pd.DataFrame:
    """A table of figures with intervals, each interval on too few units marked.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with ``ci_low``, ``ci_high`` and the count of units in ``units`` (the
        ICC, Fleiss' kappa, Gwet's AC, Spearman's rho: ``n``).
    units : str
        The column holding the units each interval rests on.

    Returns
    -------
    pandas.DataFrame
        ``table`` itself (changed in place), with
        :data:`~sheetflow.words.FEW_UNITS_NOTE` in ``note`` (after what it already
        says) where the interval is defined and rests on fewer than
        :data:`~sheetflow.words.FEW_UNITS` units; unchanged without intervals or counts.
    """
    if not {"ci_low", "ci_high", units} <= set(table.columns):
        return table
    low, high = (pd.to_numeric(table[c], errors="coerce").to_numpy(float)
                 for c in ("ci_low", "ci_high"))
    few = _few_units(table, low, high, units)
    said = table["note"].fillna("").astype(str) if "note" in table else \
        pd.Series("", index=table.index)
    table["note"] = [("; ".join(filter(None, (text, FEW_UNITS_NOTE))) if mark else text)
                     for text, mark in zip(said, few, strict=True)]
    return table


ZERO_WIDTH_VARIANCE = (_NO_WIDTH + "the variance formula gives no width when the ratings "
                       "agree on every unit, however few the units")
"""The note of a Fleiss' kappa or Gwet's AC1/AC2 of 1 with an interval of no width."""
ZERO_WIDTH_BOOTSTRAP = ("a zero-width interval is no certainty: when the ratings agree on "
                        "every unit, every resample of units does too, so the bootstrap "
                        "gives no width, however few the units")
"""The note of a Krippendorff's alpha of 1 with a bootstrap interval of no width."""


def agreed_throughout_notes(table: pd.DataFrame, figure: str, text: str) -> pd.DataFrame:
    """A table of agreement figures with ``text`` first in the ``note`` of each row
    whose figure is 1 with an interval of no width, [1, 1]: agreement on every unit,
    which reads as certainty however few the units (as Cohen's kappa's
    :data:`ZERO_WIDTH` says).

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with ``figure``, ``ci_low`` and ``ci_high``.
    figure : str
        The column of the coefficient ("alpha", "kappa", "ac").
    text : str
        The note: :data:`ZERO_WIDTH_VARIANCE` or :data:`ZERO_WIDTH_BOOTSTRAP`.

    Returns
    -------
    pandas.DataFrame
        ``table`` itself (changed in place); unchanged without those columns.
    """
    if not {figure, "ci_low", "ci_high"} <= set(table.columns) or table.empty:
        return table
    value, low, high = (pd.to_numeric(table[c], errors="coerce").to_numpy(float)
                        for c in (figure, "ci_low", "ci_high"))
    flat = (np.abs(value - 1.0) <= 1e-12) & (np.abs(low - 1.0) <= 1e-12) \
        & (np.abs(high - 1.0) <= 1e-12)
    if not flat.any():
        return table
    said = table["note"].astype(object).where(table["note"].notna(), "") \
        if "note" in table else pd.Series("", index=table.index, dtype=object)
    table["note"] = [("; ".join(filter(None, (text, str(n)))) if mark else n)
                     for n, mark in zip(said, flat, strict=True)]
    return table


def _few_units(table: pd.DataFrame, low: np.ndarray, high: np.ndarray,
               units: str = "n_units") -> np.ndarray:
    """Rows whose interval is defined and rests on fewer than FEW_UNITS units."""
    if units not in table:
        return np.zeros(len(table), bool)
    n = pd.to_numeric(table[units], errors="coerce").to_numpy(float)
    return np.isfinite(low) & np.isfinite(high) & (n < FEW_UNITS)


def _kappa_bound(rec: dict[str, Any], table_note: Any = "") -> dict[str, Any]:
    """A kappa record whose interval end passes 1 (it reads as an impossible kappa)
    with :data:`PAST_ONE` in its note; one whose interval has no width, or none because
    a sitting gave one category throughout, with why, as its row's ``table_note`` says
    (:func:`interval_notes`)."""
    if (rec["ci_high"] or 0) > 1:
        rec["note"] = "; ".join(filter(None, (rec["note"], PAST_ONE)))
    elif rec["ci_low"] is not None and rec["ci_low"] == rec["ci_high"]:
        said = str(table_note or "").split("; ")[0]
        if said.startswith(_NO_WIDTH):
            rec["note"] = "; ".join(filter(None, (said, rec["note"])))
    elif rec["ci_low"] is None:  # kappa 0 by construction: who gave one category
        said = str(table_note or "").split("; ")[0]
        if said.endswith(_ONE_CATEGORY):
            rec["note"] = "; ".join(filter(None, (said, rec["note"])))
    return rec


def _record(ctx: Context, target_name: str, figure: str, measure: str, value: Any,
            ci: tuple[Any, Any], units: Any, raters: Any, reading: str, scale: str,
            reason: str = "") -> dict[str, Any]:
    target = ctx.target(target_name)
    value = _finite(value)
    met = None if target is None or value is None else \
        bool(settled(value, (target,)) >= target)
    # the table it comes from (its target's name is the table's): what a plan sizes
    return {"analysis": target_name, "figure": figure, "measure": measure, "value": value,
            "ci_low": _finite(ci[0]), "ci_high": _finite(ci[1]), "units": _count(units),
            "units_range": None, "raters": _count(raters), "target": target, "met": met,
            "reading": reading, "scale": scale if reading and reading != NOT_READ else "",
            "reason": "" if value is not None else (reason or "undefined"),
            # a figure that stands may still say what it left out (ICC's listwise
            # deletion: "18 of 36 rated units dropped"), beside it where it is read,
            # and whether its interval rests on too few units
            "note": "; ".join(filter(None, (reason if value is not None else "",
                                            few_units_note(units, ci[0], ci[1]))))}


def _icc_rows(ctx: Context, table: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in table[table["primary"].astype(bool)].to_dict("records"):
        out.append(_record(
            ctx, "icc", f"{r['mcgraw_wong']} ({r['shrout_fleiss']}), {r.get('description', '')}",
            str(r["measure"]),
            r["icc"], (r.get("ci_low"), r.get("ci_high")), r.get("n_units"),
            r.get("n_raters"), icc_reading(_finite(r["icc"])), ICC_SCALE,
            str(r.get("reason") or "")))
    return out


def _pairwise_rows(ctx: Context, table: pd.DataFrame) -> list[dict[str, Any]]:
    """Per measure, the mean kappa over rater pairs, and the pair agreeing least (the
    protocol's use: "identifying if specific rater pairs diverge")."""
    out = []
    read = ("measure", "rater1", "rater2", "n_units", "kappa", "ci_low", "ci_high", "reason",
            "weights", "note")
    table = table[[c for c in table.columns if c in read]]  # a group at a time, these only
    for measure, g in groups_in_order(table, "measure"):
        k = pd.to_numeric(g["kappa"], errors="coerce")
        raters = [r for r in _distinct(g["rater1"], g["rater2"]) if not _blank(r)] \
            if "rater1" in g else []
        mean = float(k.mean()) if k.notna().any() else None
        pairs = int(k.notna().sum())
        one = len(g) == 1  # two raters: the pair's own kappa and interval, no mean
        kappa = f"Cohen's kappa{weighting(g)}"
        figure = kappa if one and len(raters) < 2 else \
            f"{kappa} of {g['rater1'].iloc[0]} with {g['rater2'].iloc[0]}" if one else \
            f"{kappa}, mean of {pairs} rater pairs"  # no pair: the row says why
        if not one and pairs < len(g):  # the mean leaves the undefined pairs out: say so
            figure = (f"{kappa}, mean of {pairs} of {len(g)} rater pairs "
                      f"({len(g) - pairs} undefined: {_first_reason(g)})")
        if not one:
            figure += _fixed_pairs_said(g, k)
        ci = (g["ci_low"].iloc[0], g["ci_high"].iloc[0]) if one else (None, None)
        fewest, most = _pair_units(g, k)
        rec = _record(ctx, "cohen_kappa", figure, str(measure), mean, ci,
                      fewest if fewest == most else None, len(raters),
                      _pairs_reading(mean, g, k), KAPPA_SCALE, _first_reason(g))
        if fewest is not None and fewest != most:  # no one N is true of every pair
            rec["units_range"] = [fewest, most]
        if mean is not None:  # a unit count smaller than the other columns', said why
            rec["note"] = "; ".join(filter(None, (rec["note"],
                                                  na_left_out_note(ctx, str(measure)))))
        if k.notna().any() and not one:
            low = g.loc[k.idxmin()]
            rec["note"] = (f"lowest pair {low['rater1']} with {low['rater2']}: "
                           f"{shown_number(float(low['kappa']))}")
            if "n_units" in g:  # the pair's own N, not the mean's
                rec["note"] += f" ({counted(int(low['n_units']), 'unit')})"
        out.append(_kappa_bound(rec, g["note"].iloc[0] if one and "note" in g else ""))
    return out


def _fixed_pairs_said(g: pd.DataFrame, kappa: pd.Series) -> str:
    """", 2 of them 0 by construction (...)" for the pairs of a mean whose kappa a rater's
    one category fixed at 0, "" for none. Light's (1971) mean over pairs counts every
    defined pair, these too (their kappa is 0 by Cohen's formula); they pull the mean
    towards 0 whatever the other raters agreed, so the figure says how many."""
    if "reason" not in g:
        return ""
    said = [str(r) for r in g.loc[kappa.notna(), "reason"]]
    fixed = sum(r.startswith(FIXED_AT_ZERO) for r in said)
    return (f", {fixed} of them 0 by construction (a rater gave one category "
            "throughout)") if fixed else ""


def _pairs_reading(mean: float | None, g: pd.DataFrame, kappa: pd.Series) -> str:
    """The reading of a measure's (mean) pairwise kappa, from the defined pairs."""
    # the column may be categorical (hundreds of raters' pairs): read as text
    reasons = [str(r) for r in g.loc[kappa.notna(), "reason"]] if "reason" in g else []
    return fixed_kappa_reading(mean, reasons)


_WEIGHTINGS = {"identity": "unweighted", "linear": "linear weights",
               "quadratic": "quadratic weights"}


def weighting(table: pd.DataFrame) -> str:
    """The weighting of a measure's kappas in words, to follow the figure's name.

    Parameters
    ----------
    table : pandas.DataFrame
        Kappa rows of one measure, with the ``weights`` column the statistics give.

    Returns
    -------
    str
        " (quadratic weights)", " (linear weights)" or " (unweighted)"; "" without a
        ``weights`` column or a name it knows. A weighted kappa on point values reads
        higher than an unweighted one on the same ratings, so a headline kappa never
        goes without it.
    """
    if "weights" not in table or table.empty:
        return ""
    named = _WEIGHTINGS.get(str(table["weights"].iloc[0]), "")
    return f" ({named})" if named else ""


def _pair_units(g: pd.DataFrame, kappa: pd.Series) -> tuple[int | None, int | None]:
    """The fewest and the most units a pair of ``g`` rests on, among the pairs the mean
    takes (those with a kappa; every pair when none has one); (None, None) without
    counts."""
    if "n_units" not in g:
        return None, None
    units = pd.to_numeric(g["n_units"], errors="coerce")
    if kappa.notna().any():
        units = units[kappa.notna()]
    units = units.dropna()
    return (int(units.min()), int(units.max())) if len(units) else (None, None)


def _intra_rows(ctx: Context, table: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in table.to_dict("records"):
        who = r.get("rater")
        figure = f"intra-rater Cohen's kappa{weighting(pd.DataFrame([r]))}, sitting 1 vs 2" + (
            f" ({who})" if isinstance(who, str) and who else "")
        out.append(_kappa_bound(_record(
            ctx, "intra_rater_kappa", figure, str(r["measure"]), r["kappa"],
            (r.get("ci_low"), r.get("ci_high")), r.get("n_units"), 1,
            fixed_kappa_reading(_finite(r["kappa"]), [str(r.get("reason") or "")]),
            KAPPA_SCALE, str(r.get("reason") or "")),
            r.get("note")))
    return out


def _distinct(*columns: pd.Series) -> np.ndarray:
    """The distinct values of ``columns`` together: each column's own first (a pairwise
    table's rater ids are categoricals; joined whole they would be a million objects)."""
    return pd.unique(np.concatenate([np.asarray(pd.unique(c), dtype=object)
                                     for c in columns]))


def _blank(value: Any) -> bool:
    """A missing rater id, or an empty one (the row of a measure with no pair)."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _first_reason(g: pd.DataFrame) -> str:
    if "reason" not in g:
        return ""
    given = g["reason"]
    if isinstance(given.dtype, pd.CategoricalDtype):  # a pairwise table's: by its codes
        texts = given.cat.categories.astype(str)
        codes = given.cat.codes.to_numpy()
        named = np.flatnonzero(np.isin(codes, np.flatnonzero(texts != "")))
        return str(texts[codes[named[0]]]) if len(named) else ""
    given = given.fillna("").astype(str)
    given = given[given != ""]  # one vectorised pass: 124,750 pairs at 500 raters
    return str(given.iloc[0]) if len(given) else ""


def _finite(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _count(value: Any) -> int | None:
    v = _finite(value)
    return int(v) if v is not None else None


_FIGURES = {"icc": "ICC", "cohen_kappa": "pairwise Cohen's kappa",
            "intra_rater_kappa": "intra-rater kappa"}
_KAPPA_SCALE_TEXT = (
    "kappa on Landis & Koch (1977, p. 165), each range from its lower end: below 0 poor, "
    "0.00 to below 0.21 slight, 0.21 to below 0.41 fair, 0.41 to below 0.61 moderate, "
    "0.61 to below 0.81 substantial, 0.81 and above almost perfect (their table: "
    "0.00-0.20, 0.21-0.40, ...)")
_ICC_SCALE_TEXT = (
    "ICC on Koo & Li (2016, p. 161) for the point estimate: below 0.50 poor, 0.50 to "
    "below 0.75 moderate, 0.75 to 0.90 good, above 0.90 excellent (their guideline also "
    "reads the 95% interval, shown beside)")
_READ_AT_FULL_VALUE = (
    "Each figure is read and compared with its target at its full value, and shown with "
    "as many decimals as it takes to stand on the same side of those bounds (see number "
    "forms).")
_KAPPA_WEIGHTS_TEXT = (
    "Each kappa's name gives its weighting: unweighted on nominal dimensions, quadratic "
    "weights on ordered ones (on the scale values of numeric dimensions, on the "
    "category ranks of ordered labels). A weighted kappa counts a near miss as partial "
    "agreement, so it reads higher than the unweighted kappa of the same ratings.")
_PAIRWISE_TEXT = (
    "Pairwise kappa: the mean over every pair of raters with a defined kappa, and the "
    "pair agreeing least (with two raters, the one pair's kappa and interval). A pair "
    "where a rater gave one category throughout has kappa 0 by construction and counts "
    "in the mean as 0, as in the mean of the pairs' kappas of Light (1971); the figure says "
    "how many of its pairs are such, and a mean of such pairs alone is not read on "
    "Landis & Koch. Its units "
    "are those each pair in the mean rests on, or their range (fewest-most) when the "
    "pairs rest on different numbers of units; the pairwise table gives each pair's.")


def methods(ran: Iterable[str]) -> list[tuple[str, str]]:
    """The Methods entry on the figures this module reads, naming only those reported.

    Parameters
    ----------
    ran : iterable of str
        The analyses whose figures are reported.

    Returns
    -------
    list of (str, str)
        ("Other agreement figures", text) when any of :data:`ANALYSES` is in ``ran``,
        else nothing. The text names the figures reported and the scale each is read
        on (Landis & Koch for kappa, Koo & Li for the ICC), and no other.
    """
    shown = [name for name in ANALYSES if name in set(ran)]
    if not shown:
        return []
    kappa = any(name != "icc" for name in shown)
    figures, one = _listing([_FIGURES[name] for name in shown]), len(shown) == 1
    scales = [_ICC_SCALE_TEXT] * ("icc" in shown) + [_KAPPA_SCALE_TEXT] * kappa
    text = [
        f"{figures[0].upper()}{figures[1:]} {'is' if one else 'are'} reported beside the "
        f"decision, never in it: no protocol sets a pass mark for {'it' if one else 'them'} "
        "(000: reported for transparency; 001: report it even if it is bad). A plan may "
        f"set a target ([analysis.targets] {', '.join(shown)}); the Summary then says "
        "whether the figure reaches it (value >= target).",
        f"Readings in words: {'; '.join(scales)}.", _READ_AT_FULL_VALUE,
        *([_PAIRWISE_TEXT] if "cohen_kappa" in shown else []),
        *([_KAPPA_WEIGHTS_TEXT, "Kappa intervals are kappa +/- 1.96 SE and are not cut at 1."]
          if kappa else []),
    ]
    return [("Other agreement figures", " ".join(text))]


def _listing(names: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
