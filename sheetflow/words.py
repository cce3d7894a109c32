"""Counts in words (a number with its noun in the number the count takes), and the
number forms every figure sheetflow reports is shown in.

The rule for a figure read against a bound (:data:`ROUNDING_RULE`, stated on the
Summary and the Methods sheet): the figure is read in words, put in its band and
compared with its target at its full value, so no reading and no decision ever changes
with how the figure is shown. It is shown to three decimals (a percentage to one, a
p-value to three significant digits), or to as many more as it takes for the number
shown to stand on the same side of each bound it is read against as the full value
does: an ICC of 0.74963 beside Koo & Li's 0.75 is shown "0.7496" and read "moderate",
never "0.750" read "moderate". :func:`decimals_for` finds those decimals;
:func:`shown_number`, :func:`shown_percent` and :func:`p_text` write the figure
(:func:`p_said` puts a p-value in a sentence).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

DIGITS = 3
"""Decimals of a coefficient, mean or test statistic ("0.583")."""
PERCENT_DIGITS = 1
"""Decimals of a percentage ("58.3%")."""
MOST_DIGITS = 12
"""Past this many decimals a figure is written exactly (its shortest exact text)."""
BOUND_NOISE = 1e-12
"""A figure this close to a bound it is read against is that bound: the two differ only
by rounding (a kappa exactly at chance computed as -9.5e-16 is 0, read from 0)."""
CI_LEVEL = 0.95
"""The level of every interval sheetflow reports (each statistic's default)."""
P_STEPS = (0.001, 0.01, 0.1)
"""A p-value below the first step is "< 0.001"; from each step on it takes one decimal
fewer (5, 4, then 3): three significant digits ("0.00953", "0.0953", "0.953")."""

ROUNDING_RULE = (
    "A figure is read in words, put in its band and compared with its target at its "
    "full value; it is shown with more decimals than usual where fewer would put the "
    "shown number on the other side of a bound it is read against (an ICC of 0.74963 is "
    "shown 0.7496 and read moderate, never 0.750). A figure within 1e-12 of a bound is "
    "that bound (the difference is rounding) and is read and shown as it.")
NUMBER_FORMS = (
    "Proportions (shares, agreement rates, yields, preferences, their intervals, and "
    "differences between them in percentage points) are shown as percentages with one "
    "decimal (58.3%); coefficients (alpha, kappa, ICC, AC, rho), means and test "
    "statistics with three decimals (0.583); p-values with three significant digits "
    "(0.00953, 0.0953, 0.953), below 0.001 as < 0.001. " + ROUNDING_RULE)
"""How every figure is shown (the Summary and the Methods sheet state it)."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: "1 error", "0 errors", "2 rating rows".

    Parameters
    ----------
    n : int
        The count (thousands are separated: "800,300 rating rows").
    noun : str
        The singular.
    plural : str, optional
        The plural where it is not the singular with "s" ("analyses").

    Returns
    -------
    str
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def resting_on(figure: dict[str, Any]) -> str:
    """The units and raters an agreement figure rests on, from its ``n_units`` and
    ``n_raters``: "4 units, 2 raters"; only the counts it has ("" with neither)."""
    counts = [counted(int(figure[key]), noun) for key, noun in
              (("n_units", "unit"), ("n_raters", "rater")) if finite_number(figure.get(key))]
    return ", ".join(counts)


WORD_GAPS = " \t\n\r\u00a0"
"""What separates words in a text answer: spaces, tabs, line breaks and non-breaking
spaces. The pack's word-range hint can only count these (its formula turns them into
spaces and counts the spaces), so collect counts the same: text split on every Unicode
space (an em or ideographic space too) warned of nothing where the pack showed the
text outside its range."""
_WORD_GAP = re.compile(f"[{WORD_GAPS}]+")


def text_words(text: str) -> int:
    """Words in ``text``: runs of characters between :data:`WORD_GAPS`, as the pack's
    word-range hint counts them."""
    return sum(1 for word in _WORD_GAP.split(text) if word)


FEW_UNITS = 10
"""An interval resting on fewer units than this is marked as unstable."""
FEW_UNITS_NOTE = f"fewer than {FEW_UNITS} units: too few for a stable interval"
FEW_UNITS_TOPIC = "Intervals on few units"
FEW_UNITS_INTERVALS = {
    "alpha": "Krippendorff's alpha's bootstrap interval",
    "confidence_agreement": "Krippendorff's alpha's bootstrap interval",
    "icc": "the ICC's F-based interval",
    "cohen_kappa": "Cohen's kappa's standard-error interval",
    "intra_rater_kappa": "intra-rater kappa's standard-error interval",
    "fleiss_kappa": "Fleiss' kappa's standard-error interval",
    "gwet": "Gwet's AC1/AC2's standard-error interval",
    "spearman_internal": ("Spearman's rho's Fisher-z interval (its units are the responses "
                          "whose two totals it correlates)"),
}
"""The intervals marked on few units, by the analysis that reports them."""
FEW_UNITS_PROPORTIONS = {
    "yield_fisher": ("each arm's yield's Wilson interval (its units: the ratings the yield "
                     "counts) and the yield gap's Newcombe interval (the fewer of its two "
                     "arms' ratings)"),
    "trend": "each distance band's Wilson interval (the band's ratings)",
    "position_bias": "the label-A share's Clopper-Pearson interval (the decisive judgements)",
    "position_free_preference": ("the position-free preference's interval (the decisive "
                                 "judgements)"),
    "direction_by_confidence": ("the direction share's Clopper-Pearson interval at each "
                                "confidence level (the judgements at that level)"),
    "wilcoxon_totals": ("the arms' mean total difference's t interval (the cases with both "
                        "arms' totals)"),
}
"""The intervals of a proportion or of the arms' difference marked on few units, by the
analysis that reports them (``wilcoxon_totals``: the arms comparison of protocol 000)."""
_FEW_PROPORTIONS_WHY = (
    "On so few units a proportion's interval is wide and its coverage unreliable: "
    "Wilson's and Newcombe's can cover less often than their nominal 95%, "
    "Clopper-Pearson's more often (it is wider than it need be), and a t interval rests "
    "on a normality so few differences cannot check.")
_FEW_UNITS_WHY = {
    "bootstrap": ("A bootstrap resample of n units is one of only a few distinct draws (35 "
                  "with 4 units, against 92,378 with 10), so the percentile interval is "
                  "coarse and tends to cover less often than its nominal 95%."),
    "standard-error": ("A standard-error or Fisher-z interval is a large-sample "
                       "approximation, which so few units do not support."),
    "F-based": ("The ICC's F interval is exact only under the normal two-way model, "
                "which so few units cannot check."),
}


def few_units_method(ran: Iterable[str]) -> str:
    """The Methods text on marking intervals on few units, naming only the intervals of
    the analyses in ``ran`` (and the reason each kind is marked); "" when none is."""
    ran = set(ran)
    shown = list(dict.fromkeys(FEW_UNITS_INTERVALS[name] for name in FEW_UNITS_INTERVALS
                               if name in ran))
    shares = [text for name, text in FEW_UNITS_PROPORTIONS.items() if name in ran]
    if not shown and not shares:
        return ""
    why = [text for kind, text in _FEW_UNITS_WHY.items()
           if any(kind in interval or (kind == "standard-error" and "Fisher-z" in interval)
                  for interval in shown)]
    where = "wherever it is shown (the Summary, summary.json, its own sheet)"
    mark = f"is marked \"{FEW_UNITS_NOTE}\" beside it {where}"
    said = [f"Every interval of an agreement or correlation figure that rests on fewer "
            f"than {FEW_UNITS} units {mark}, whatever its method: {listed(shown)}."
            ] if shown else []
    if shares:  # proportions are marked by the same rule and words (see _FEW_PROPORTIONS_WHY)
        said.append((f"So is every interval of a proportion or of the arms' difference on "
                     f"fewer than {FEW_UNITS} units" if shown else
                     f"Every interval of a proportion or of the arms' difference that rests "
                     f"on fewer than {FEW_UNITS} units {mark}") + f": {listed(shares)}.")
    return " ".join([*said, *why, *([_FEW_PROPORTIONS_WHY] if shares else [])])


def listed(texts: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"


def first_few(names: list[str], shown: int = 3) -> str:
    """The first ``shown`` of ``names`` joined, "..." after them when there are more:
    "a.xlsx, b.xlsx, c.xlsx, ..." (a one-line message names a few, not hundreds)."""
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def few_units_note(n_units: Any, ci_low: Any, ci_high: Any) -> str:
    """What to say beside an interval (of an agreement figure, a proportion or the
    arms' difference) that rests on too few units.

    Parameters
    ----------
    n_units : int or float
        The units the figure and its interval rest on.
    ci_low, ci_high : float
        The interval's ends (an undefined interval gets no note: there is none to read).

    Returns
    -------
    str
        :data:`FEW_UNITS_NOTE` when the interval is defined and ``n_units`` is below
        :data:`FEW_UNITS`, else "".
    """
    if not (finite_number(n_units) and finite_number(ci_low) and finite_number(ci_high)):
        return ""
    return FEW_UNITS_NOTE if float(n_units) < FEW_UNITS else ""


def percent(share: float, digits: int = PERCENT_DIGITS) -> str:
    """A proportion as a percentage: 0.5833 -> "58.3%" (``digits`` decimals).

    Every proportion sheetflow reports (shares, agreement rates, yields, preferences
    and their intervals) is shown this way, in text and in cells alike.
    """
    return f"{100 * share:.{digits}f}%"


def decimals_for(value: Any, at_least: Iterable[float] = (), above: Iterable[float] = (),
                 *, digits: int = DIGITS, as_percent: bool = False) -> int | None:
    """The fewest decimals, ``digits`` or more, at which ``value`` is shown on the same
    side of every bound it is read against as its full value (the module's rule).

    Parameters
    ----------
    value : float
        The figure at its full value.
    at_least : iterable of float
        Bounds the figure reaches when it is at or above them (a target, a band's
        lower end, the 0.75 of Koo & Li's "good").
    above : iterable of float
        Bounds the figure passes only when it is above them (Koo & Li's "excellent":
        greater than 0.90; a share band's upper end).
    digits : int
        The usual decimals of the figure's form.
    as_percent : bool
        Decimals of the percentage (58.34%: 2), not of the proportion.

    Returns
    -------
    int or None
        ``digits`` for an undefined value; None when even :data:`MOST_DIGITS` decimals
        leave the shown number on the wrong side (write it exactly, see
        :func:`shown_number`). A value within :data:`BOUND_NOISE` of a bound is that
        bound (:func:`settled`), so noise never widens the figure.
    """
    if not finite_number(value):
        return digits
    low, high = tuple(at_least), tuple(above)
    value, scale = settled(value, low + high), 100.0 if as_percent else 1.0
    for d in range(digits, MOST_DIGITS + 1):
        shown = float(f"{value * scale:.{d}f}") / scale  # the number as written
        if all((shown >= b) == (value >= b) for b in low) and \
                all((shown > b) == (value > b) for b in high):
            return d
    return None


def shown_number(value: Any, at_least: Iterable[float] = (),
                 above: Iterable[float] = ()) -> str:
    """A coefficient, mean or statistic as text: three decimals, or as many more as
    :func:`decimals_for` asks; "n/a" when undefined; a whole number as it is."""
    if isinstance(value, bool) or (isinstance(value, int) and not isinstance(value, float)):
        return str(value)
    if not finite_number(value):
        return "n/a"
    bounds = tuple(at_least), tuple(above)
    d = decimals_for(value, *bounds)
    value = settled(value, bounds[0] + bounds[1])  # never "-0.000" for a bound of 0
    return repr(value) if d is None else f"{value:.{d}f}"


def shown_percent(value: Any, at_least: Iterable[float] = (),
                  above: Iterable[float] = ()) -> str:
    """A proportion as a percentage: one decimal ("58.3%"), or as many more as
    :func:`decimals_for` asks; "n/a" when undefined."""
    if not finite_number(value):
        return "n/a"
    bounds = tuple(at_least), tuple(above)
    d = decimals_for(value, *bounds, digits=PERCENT_DIGITS, as_percent=True)
    return percent(settled(value, bounds[0] + bounds[1]), MOST_DIGITS if d is None else d)


def settled(value: float, bounds: Iterable[float]) -> float:
    """``value``, or the bound it lies within :data:`BOUND_NOISE` of.

    A figure that equals a bound up to rounding (a kappa exactly at chance computed as
    -9.5e-16) is that bound: it is read, compared and shown as the bound (0, "slight",
    "0.000"), never widened to every digit of its noise and read below it.
    """
    value = float(value)
    near = [b for b in bounds if math.isfinite(b) and abs(value - b) <= BOUND_NOISE]
    return float(near[0]) if near and value not in near else value


def interval_said(low: str, high: str, level: float = CI_LEVEL) -> str:
    """An interval with its level, its ends as shown: "[95% CI 57.7%, 79.7%]" (a bare
    "[57.7%, 79.7%]" did not say how sure it is)."""
    return f"[{level:.0%} CI {low}, {high}]"


def p_decimals(p: float) -> int:
    """The decimals of a p-value's usual form (:data:`P_STEPS`); 0 below 0.001
    (written "< 0.001")."""
    return 0 if abs(p) < P_STEPS[0] else \
        DIGITS + sum(abs(p) < step for step in P_STEPS[1:])


def p_text(p: Any, below: Iterable[float] = ()) -> str:
    """A p-value as every sheetflow output writes it: "< 0.001", else three significant
    digits ("0.00953", "0.0953", "0.953"), or more where a limit it is compared with
    (``below``: flagged, shown to differ when p is under it) would otherwise look
    crossed; "n/a" when undefined."""
    if not finite_number(p):
        return "n/a"
    p = float(p)
    limits = tuple(below)
    if abs(p) < P_STEPS[0] and all(b >= P_STEPS[0] for b in limits):
        return "< 0.001"
    d = decimals_for(p, at_least=limits, digits=max(p_decimals(p), DIGITS))
    return repr(p) if d is None else f"{p:.{d}f}"


def p_said(p: Any, below: Iterable[float] = ()) -> str:
    """A p-value in a sentence: "p < 0.001" or "p = 0.0953" (:func:`p_text`'s form),
    never "p = < 0.001"; "p = n/a" when undefined."""
    text = p_text(p, below)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a finite number (None, a bool, NaN or text that is no
    number are not): a summary's figure may be JSON null."""
    if value is None or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def setting_text(value: float) -> str:
    """A setting of the plan as the plan writes it: the shortest text that reads back as
    ``value``, a tiny or huge one with its exponent unpadded ("1e-9", "0.25", "2e+20").

    A tolerance of 1e-9 written out as a decimal, "0.000000001", had to be counted
    zero by zero to be read; in a number format it reads as a figure the study measured.
    """
    mantissa, _, exponent = repr(float(value)).partition("e")
    if not exponent:
        return mantissa.removesuffix(".0")
    return f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"
