"""The decision: one status, the rule in words, and the checks behind it.

Every protocol module gives its decision through one interface: ``PLAN.decide`` (a
function of the context, the result tables and the summary so far) returns a
:class:`Decision`; ``PLAN.arms`` returns the :class:`Arms` comparison for designs with
arms. A study whose protocol has no module gets :func:`default_decision` from the
plan's targets. :func:`finish` then applies the panel: a missing or excluded rater
makes the status "incomplete" whatever the checks say (what they say on the included
raters stays in ``provisional_status``).

Statuses: ``pass`` (every check met), ``fail`` (a check in its failing range),
``null`` (a check not met where the protocol calls anything short of its signal a
null result, published as one: 001), ``inconclusive`` (no check failed, but one is
undefined or in the protocol's weak or marginal range), ``incomplete`` (the panel is
not complete), ``reported`` (the protocol sets no pass rule: its figures are reported,
and nothing is called passed).

A check without a target is never "met": its outcome is ``reported`` (the value is
shown, nothing is judged), and it takes no part in a pass.

A check is decided on its full value; wherever it is shown (:func:`shown_against`) it
has as many decimals as it takes to stand on the same side of its target and of every
other bound it is read against as that value (:data:`~sheetflow.words.ROUNDING_RULE`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..words import decimals_for, interval_said, p_said, p_text, percent, settled
from .panel import Panel

STATUSES = ("pass", "fail", "null", "incomplete", "inconclusive", "reported")
MET, WEAK, NOT_MET, UNDEFINED, REPORTED = "met", "weak", "not met", "undefined", "reported"
COMPARED = {">=": "at least", ">": "above", "<=": "at most", "<": "below"}
"""How a check's comparison with its target is said beside the target: which side
passes, and whether the target itself does ("at least 2" passes at 2, "below 0.05"
fails at it)."""
NO_TARGET = "no target in the plan"
"""How an undecided check on a defined figure reads when the plan sets no target: the
figure is not undefined, its target is missing (:func:`outcome_words`)."""


@dataclass
class Check:
    """One check of the decision.

    Attributes
    ----------
    name : str
    value : float or None
    target : float, str or None
        A number, or a bar in words where a number would read as a target the plan
        set (001: "above the reference's yield, 0/15 = 0.0%").
    passed : bool or None
        True when the target is met; None when the value is undefined.
    outcome : str
        ``met``, ``weak`` (in the protocol's intermediate range), ``not met``,
        ``undefined``, or ``reported`` (no target: shown, not judged).
    note : str
    has_target : bool
        False for a figure with nothing to pass (reported, or a threshold the plan
        sets none for): its "passed" reads "no target", not "undefined".
    proportion : bool
        True when the value and target are proportions (a share, an agreement rate,
        a yield): shown as percentages wherever the check is shown.
    bounds : list of float
        Bounds besides the target the value is read against (the weak range's lower
        end, the bands its note names): shown on the same side of each as the value.
    p_value : bool
        True when the value is a p-value and the target the limit it is compared with:
        both are shown as every p-value is (:func:`~sheetflow.words.p_text`: three
        significant digits, "< 0.001" below), never as a coefficient.
    comparison : str
        How the value is compared with a numeric target to be met: ``>=``, ``>``,
        ``<=`` or ``<`` (:data:`COMPARED`, said "at least", "above", "at most",
        "below" beside the target); "" where the check does not say.
    said : str
        The outcome in the protocol's own word where it names the range the value is
        in (000: "marginal", "weak signal", "investigate"): its line and the Summary
        sheet show it in place of the generic ``outcome``, which the status is read
        from; "" where the protocol names none.
    """

    name: str
    value: Any
    target: Any
    passed: bool | None
    outcome: str
    note: str = ""
    has_target: bool = True
    proportion: bool = False
    bounds: list[float] = field(default_factory=list)
    p_value: bool = False
    comparison: str = ""
    said: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def threshold_check(name: str, value: Any, target: float | None, *,
                    weak_from: float | None = None, note: str = "",
                    proportion: bool = False, bounds: tuple[float, ...] = ()) -> Check:
    """``value >= target`` met; ``weak_from <= value < target`` weak; else not met,
    on the full value (never as shown).

    A missing or non-finite value (or a missing target) is undefined. ``proportion``:
    see :class:`Check`; ``bounds``: other bounds the note reads the value against
    (``weak_from`` is one already).
    """
    read = sorted({*map(float, bounds), *([float(weak_from)] if weak_from is not None else [])})
    if target is None or not _finite(value):
        # a defined figure without a target says so as its outcome (outcome_words)
        return Check(name, _plain(value), _plain(target), None, UNDEFINED,
                     note or ("" if _finite(value) else NO_TARGET if target is None
                              else "undefined"),
                     has_target=target is not None, proportion=proportion, bounds=read,
                     comparison=">=" if target is not None else "")
    value = settled(value, (target, *read))  # a bound up to rounding is the bound
    if value >= target:
        return Check(name, _plain(value), _plain(target), True, MET, note,
                     proportion=proportion, bounds=read, comparison=">=")
    weak = weak_from is not None and value >= weak_from
    return Check(name, _plain(value), _plain(target), False, WEAK if weak else NOT_MET, note,
                 proportion=proportion, bounds=read, comparison=">=")


def reported_check(name: str, value: Any, note: str = "") -> Check:
    """A figure the protocol names without a target: reported, never met; undefined
    when it could not be computed."""
    if value is None or (isinstance(value, numbers.Real) and not _finite(value)):
        return Check(name, None, None, None, UNDEFINED, note or "undefined", has_target=False)
    return Check(name, _plain(value), None, None, REPORTED, note, has_target=False)


def passed_words(check: dict[str, Any]) -> str:
    """A check's "passed" in words.

    Parameters
    ----------
    check : dict
        A check as :meth:`Check.to_dict` gives it (``has_target`` may be absent: a
        check reported without a target is then taken to have none).

    Returns
    -------
    str
        "Yes" or "No"; "no target" for a figure with nothing to pass; "undefined" for
        a check with a target whose figure could not be computed.
    """
    if check["passed"] is not None:
        return "Yes" if check["passed"] else "No"
    has_target = check.get("has_target", check["outcome"] != REPORTED)
    return "undefined" if has_target else "no target"


def outcome_words(check: dict[str, Any]) -> str:
    """A check's outcome in words, as its line and the Summary sheet say it.

    Parameters
    ----------
    check : dict
        A check as :meth:`Check.to_dict` gives it.

    Returns
    -------
    str
        The protocol's own word for it where the check has one (``said``), else the
        outcome; for a defined figure the plan sets no target for (outcome
        ``undefined``, ``has_target`` false) "no target in the plan": the figure is
        defined, what is missing is its target.
    """
    if check.get("said"):
        return str(check["said"])
    if check["outcome"] == UNDEFINED and not check.get("has_target", True) and \
            _finite(check["value"]):
        return NO_TARGET
    return str(check["outcome"])


def flag_check(name: str, ok: bool | None, value: Any = None, target: Any = None,
               note: str = "", *, proportion: bool = False, p_value: bool = False,
               comparison: str = "") -> Check:
    """A yes/no check (None: could not be decided); ``proportion``, ``p_value``,
    ``comparison`` (how ``ok`` was decided from the value and target): see
    :class:`Check`."""
    outcome = UNDEFINED if ok is None else MET if ok else NOT_MET
    return Check(name, _plain(value), _plain(target), ok, outcome, note,
                 proportion=proportion, p_value=p_value, comparison=comparison)


def headline_text(status: str, reasons: list[str]) -> str:
    """The decision's first line: the same text heads what ``sheetflow analyze`` prints,
    the Summary sheet and ``summary.json``'s ``decision.headline``.

    Parameters
    ----------
    status : str
        One of :data:`STATUSES`.
    reasons : list of str
        Why the status is what it is, one line each.

    Returns
    -------
    str
        "DECISION: FAIL"; where the protocol sets no pass rule, "RESULT: " and the first
        reason, which answers the protocol's own question (never "PASS"); where it
        calls a missing signal a null result, published as one, "NULL: " and the first
        reason (never "FAIL").
    """
    if status == "reported" and reasons:
        return f"RESULT: {reasons[0]}"
    if status == "null" and reasons:
        return f"NULL: {reasons[0]}"
    return f"DECISION: {status.upper()}"


@dataclass
class Decision:
    """A protocol's decision.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`.
    rule : str
        The protocol's rule in words.
    checks : list of Check
    provisional_status : str
        What the checks say on the raters included (differs from ``status`` only
        when the panel is incomplete).
    reasons : list of str
        Why the status is what it is, one line each.
    """

    status: str
    rule: str
    checks: list[Check] = field(default_factory=list)
    provisional_status: str = ""
    reasons: list[str] = field(default_factory=list)

    def headline(self) -> str:
        """The decision's first line (:func:`headline_text`)."""
        return headline_text(self.status, self.reasons)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``decision`` object of ``summary.json``)."""
        return {"status": self.status, "rule": self.rule, "headline": self.headline(),
                "provisional_status": self.provisional_status or self.status,
                "reasons": list(self.reasons), "checks": [c.to_dict() for c in self.checks]}


@dataclass
class Arms:
    """Which arm wins, by how much, how sure.

    Attributes
    ----------
    winner : str
        The arm with the better result ("" when no arm is ahead).
    other : str
        The arm it is compared with.
    effect : float or None
        ``compared`` (the winner, when there is one) minus other, in
        ``effect_measure`` units.
    effect_measure : str
    ci : list of two floats or None
        Interval for ``effect`` (``ci_level``), None when the design gives none.
    p : float or None
    test : str
    means : dict
        Arm -> the compared figure (``means_label``: mean total, yield...).
    ci_level : float
    note : str
    means_label : str
    proportion : bool
        True when the compared figures are proportions (yields): the means, the effect
        (a difference in percentage points) and its interval are shown as percentages.
    ci_note : str
        The interval's mark when it rests on too few units
        (:func:`~sheetflow.words.few_units_note`), said right after it; "" otherwise.
    without_items : list of str
        Arms of the design with no item, whose figure is undefined: said "no items"
        where the others' figures are, never "n/a".
    alpha : float or None
        The level ``p`` is compared with where the decision rests on that test, not on
        the interval (001: the permutation p against ``alpha_test``): the difference
        is then shown exactly when p is below it, whatever the interval, which is
        shown as it is. None: the interval says (:meth:`shown`).
    p_of : str
        The test named before ``p`` in the reason a difference is not shown
        ("permutation": "permutation p = 0.0608, not below 0.05"); "" for none.
    compared : str
        The arm ``effect`` is measured for, against ``other``: the winner, or when no
        arm is ahead the one the effect still compares (001's best candidate), so
        that an effect without a winner still says which two arms it is between;
        "" when not known.
    """

    winner: str
    other: str
    effect: float | None
    effect_measure: str
    ci: list[float | None] | None
    p: float | None
    test: str
    means: dict[str, Any] = field(default_factory=dict)
    ci_level: float = 0.95
    note: str = ""
    means_label: str = "figure per arm"
    proportion: bool = False
    ci_note: str = ""
    without_items: list[str] = field(default_factory=list)
    alpha: float | None = None
    p_of: str = ""
    compared: str = ""

    def sentence(self) -> str:
        """One line: winner, both figures, effect with interval, p and test."""
        if not self.winner:
            empty = f"; {', '.join(self.without_items)}: no items" if self.without_items else ""
            return f"no arm ahead ({self.note or self.test}){empty}"
        num = figure_text(self.proportion)
        figs = " vs ".join(f"{a} {'no items' if a in self.without_items else num(v)}"
                           for a, v in self.means.items())
        ci = f" {interval_said(num(self.ci[0]), num(self.ci[1]), self.ci_level)}" \
            if self.ci else ""
        ci += f" ({self.ci_note})" if self.ci and self.ci_note else ""
        unsure = "" if self.shown() is not False else f" (not shown to differ: {self._why()})"
        note = f"; {self.note}" if self.note else ""
        return (f"{self.winner} ahead of {self.other}{unsure}: {figs}; {self.effect_measure} "
                f"{num(self.effect)}{ci}; {self.test} {p_said(self.p, self._p_limits())}"
                f"{note}")

    def _why(self) -> str:
        """Why the difference is not shown, by the rule :meth:`shown` applied."""
        if self.alpha is not None:
            said = f"{p_said(self.p, [self.alpha])}, not below {self.alpha:g}"
            return f"{self.p_of} {said}" if self.p_of else said
        if self.ci and None not in self.ci:
            return "the interval includes 0"
        return p_said(self.p, [0.05])

    def _p_limits(self) -> list[float]:
        """The limit p is compared with (``alpha``; 0.05 when no interval decides): its
        text then stands on the right side of it."""
        if self.alpha is not None:
            return [self.alpha]
        return [] if self.ci and all(_finite(v) for v in self.ci) else [0.05]

    def shown(self) -> bool | None:
        """Whether the difference is shown: p below ``alpha`` where the decision rests
        on that test; else the effect's interval excludes 0 (without an interval, p
        below 0.05); None when what decides is not known."""
        if self.alpha is not None:  # the decision's own test, never a second opinion
            return float(self.p) < self.alpha if _finite(self.p) else None  # type: ignore[arg-type]
        if self.ci and all(_finite(v) for v in self.ci):
            low, high = (float(v) for v in self.ci)  # type: ignore[arg-type]
            return not low <= 0.0 <= high
        if _finite(self.p):
            return float(self.p) < 0.05  # type: ignore[arg-type]
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``arms`` object of ``summary.json``)."""
        return {**self.__dict__, "shown": self.shown(), "sentence": self.sentence()}


def status_of(checks: list[Check]) -> str:
    """pass / fail / inconclusive / reported from the checks' outcomes (see the module
    notes): ``pass`` needs at least one check with a target, every one of them met."""
    outcomes = [c.outcome for c in checks]
    if NOT_MET in outcomes:
        return "fail"
    if not outcomes or WEAK in outcomes or UNDEFINED in outcomes:
        return "inconclusive"
    if all(o == REPORTED for o in outcomes):
        return "reported"
    return "pass"


def reasons_of(checks: list[Check]) -> list[str]:
    """One short line per check (:func:`check_line`)."""
    return [check_line(c.to_dict()) for c in checks]


def check_line(check: dict[str, Any], *, with_note: bool = True) -> str:
    """A check in one line, "label: value (target ...): outcome - note", as the decision
    lines and ``sheetflow analyze`` print it.

    Parameters
    ----------
    check : dict
        A check as :meth:`Check.to_dict` gives it.
    with_note : bool, default True
        False leaves the note out (a line that names only the checks not met).

    Returns
    -------
    str
        The name, the value shown against its target (:func:`shown_against`), the
        target with the side that passes ("(target at least 0.800)",
        :func:`target_words`; "(no target)" for a figure reported without one; a target
        in words as it is), the outcome (:func:`outcome_words`; none for a reported figure: nothing
        is judged) and the note. A colon follows the name and the target, so neither
        runs into the value or the outcome ("... approach 0 (target 0) met" read as one phrase).
    """
    value, goal = shown_against(check["value"], check["target"],
                                percent=check.get("proportion", False),
                                bounds=check.get("bounds", ()),
                                p_value=check.get("p_value", False))
    target = f" ({goal})" if isinstance(check["target"], str) else \
        f" (target {target_words(check, goal)})" if check["target"] is not None else \
        " (no target)" if check["outcome"] == REPORTED else ""
    outcome = "" if check["outcome"] == REPORTED else f": {outcome_words(check)}"
    note = f" - {check['note']}" if with_note and check.get("note") else ""
    return f"{check['name']}: {value}{target}{outcome}{note}"


def target_words(check: dict[str, Any], goal: str) -> str:
    """A numeric target as shown (``goal``) with the side that passes: "at least 2",
    "at most 0", "below 0.05" (:data:`COMPARED`); as it is where the check does not
    say how it compares."""
    said = COMPARED.get(str(check.get("comparison") or ""))
    return f"{said} {goal}" if said else goal


def default_decision(verdicts: list[dict[str, Any]]) -> Decision:
    """Every verdict against a plan target is a check; all must be met."""
    checks = [flag_check(v["name"], v["met"], v["value"], v["target"], v.get("note", ""))
              for v in verdicts]
    return Decision(status_of(checks), "every check against the plan's targets is met",
                    checks, reasons=reasons_of(checks))


def finish(decision: Decision, panel: Panel) -> Decision:
    """Apply the panel: an incomplete panel makes the status "incomplete"."""
    if not decision.provisional_status:  # a protocol may have set it (004's trio)
        decision.provisional_status = decision.status
    if not decision.reasons:
        decision.reasons = reasons_of(decision.checks)
    if not panel.complete:
        decision.status = "incomplete"
        decision.reasons = [f"panel incomplete: {_gaps(panel)} (see the panel line)",
                            f"on the raters included the checks say "
                            f"{decision.provisional_status.upper()}", *decision.reasons]
    return decision


def _gaps(panel: Panel) -> str:
    """Who is missing, whose return has every answer blank, and whose answers are in
    only in part (``--allow-partial``): a rater alone when none of their packs is in,
    else each pack with its sitting where the rater has another (as the panel line)."""
    flagged = {p["rater"] for p in panel.missing_packs if p.get("partial") or p.get("empty")}

    def label(pack: dict[str, Any]) -> str:
        sitting = int(pack.get("sitting", 1))
        if pack["rater"] not in panel.included and pack["rater"] not in flagged:
            return str(pack["rater"])  # nothing of theirs is in: every sitting missing
        if sitting == 1 and (pack.get("partial") or pack.get("empty")):
            return str(pack["rater"])  # the panel line leaves sitting 1 unsaid
        return f"{pack['rater']} sitting {sitting}"

    def whose(kind: str) -> list[str]:
        return list(dict.fromkeys(label(p) for p in panel.missing_packs if kind == (
            "empty" if p.get("empty") else "partial" if p.get("partial") else "missing")))

    missing, empty, partial = whose("missing"), whose("empty"), whose("partial")
    said = [f"missing {', '.join(missing)}"] if missing else []
    if empty:
        said.append(f"every answer blank from {', '.join(empty)}")
    if partial:
        said.append(f"answers in part from {', '.join(partial)}")
    return "; ".join(said)


def _finite(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and \
        math.isfinite(float(value))


def _plain(value: Any) -> Any:
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return float(value) if math.isfinite(float(value)) else None
    return value


def shown_against(value: Any, target: Any, *, percent: bool = False,
                  bounds: Any = (), p_value: bool = False) -> tuple[str, str]:
    """A check's value and target as text: as :func:`_num` prints them, or with as many
    decimals (up to 12) as it takes to show which side of the target the value lies on
    and to keep the value on the same side of each of ``bounds`` as its full value (an
    alpha of 0.69978 is "0.69978" beside "0.70000", never "0.700" beside "0.700" and
    "weak"). With ``percent`` (a proportion) both are percentages, "69.978%" beside
    "70.000%" in the same way (one decimal when that shows the side). A target in
    words (001: "above the reference's yield, 0/15 = 0.0%") is shown as it is. A value
    within rounding of the target or a bound is shown as it (:func:`~sheetflow.words.settled`).
    With ``p_value`` the value is a p-value as every output writes it
    (:func:`~sheetflow.words.p_text`: "0.0552", "< 0.001"), with more digits where fewer
    would put it on the other side of the target, and the target is the level as the
    plan and the protocol write it ("0.05", never "0.0500": a level is no p-value)."""
    if p_value and not isinstance(target, str):
        return p_text(value, [float(target)] if _finite(target) else []), _level(target)
    if isinstance(target, str):
        return figure_text(percent)(value), target
    if isinstance(value, float) and _finite(value):  # a bound up to rounding is it, as read
        value = settled(value, (*bounds, *([float(target)] if _finite(target) else [])))
    if percent:
        return _percent_against(value, target, bounds)
    shown = _num(value), _num(target)
    if not isinstance(value, float) or not _finite(value) or abs(value) >= 100:
        return shown  # a count as it is, "n/a", a large number to one decimal
    digits = decimals_for(value, bounds)
    apart = _finite(target) and value != target
    while digits is not None and apart and \
            f"{value:.{digits}f}" == f"{float(target):.{digits}f}":
        digits = digits + 1 if digits < 12 else None
    if digits is None:  # closer still: the shortest exact texts
        return repr(value), repr(float(target)) if _finite(target) else shown[1]
    if digits == 3 or not _finite(target):
        return f"{value:.{digits}f}", shown[1]
    return f"{value:.{digits}f}", f"{float(target):.{digits}f}"


def _level(target: Any) -> str:
    """A significance level as written ("0.05", "0.025"): its shortest exact decimals,
    never padded and never in exponent form; "n/a" when undefined."""
    return np.format_float_positional(float(target), trim="-") if _finite(target) \
        else _num(target)


def _percent_against(value: Any, target: Any, bounds: Any = ()) -> tuple[str, str]:
    """:func:`shown_against` for proportions: percentages, one decimal or as many more
    as it takes to tell the value from the target and keep it beside its bounds."""
    if not _finite(value):
        return figure_text(True)(value), figure_text(True)(target)
    digits = decimals_for(value, bounds, digits=1, as_percent=True) or 10
    if not _finite(target):
        return percent(value, digits), figure_text(True)(target)
    shown = percent(value, digits), percent(target, digits)
    while value != target and shown[0] == shown[1] and digits < 10:
        digits += 1
        shown = percent(value, digits), percent(target, digits)
    return shown


def figure_text(proportion: bool) -> Callable[[Any], str]:
    """How a figure reads in a sentence: a percentage for a proportion ("58.3%"), else
    as :func:`_num` ("0.583"); "n/a" when undefined."""
    if not proportion:
        return _num
    return lambda value: percent(float(value)) if _finite(value) else "n/a"


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)
