"""The targets a protocol's decision rests on, checked against ``[analysis.targets]``.

Protocol 000 fixes its three numbers in its own text: alpha 0.70 (section 4.2's "study
threshold"; section 4.4 calls 0.60-0.69 marginal and below 0.60 a failed validation),
direction agreement 70% (section 4.3's target; section 4.4 calls 50-70% a weak
signal, and 50% is chance) and Spearman's rho 0.60 (section 4.3's target; section 4.4
names rho below 0.60 a divergence). Its consequence bands are fixed numbers that end
at these targets, so any other target puts a band on the wrong side of it: a
direction target of 0% read 39% as met, below the 50% the rule itself calls a fail,
and an alpha target of 1.0 called 0.85, "high reliability", marginal.

Protocol 002 leaves its two numbers to the plan but requires them there: "the
operative acceptance threshold and maximum material-error count are frozen in the
hash-bound machine-readable plan before enrolment". Without them no item can be
decided.

``check`` and ``generate`` refuse a spec that lacks such a target or contradicts
one; a study generated before this check still analyses, and its decision says the
check it could not decide, and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .raters import protocol_number


@dataclass(frozen=True)
class ProtocolTarget:
    """One target a protocol's decision needs.

    Attributes
    ----------
    name : str
        Its name in ``[analysis.targets]``.
    value : float or None
        The value the protocol fixes; None when the protocol leaves it to the plan.
    said : str
        Where and how the protocol fixes it (or requires it), in its own words.
    example : str
        What to write when the protocol gives no value (the template's line).
    """

    name: str
    value: float | None
    said: str
    example: str = ""


PROTOCOL_TARGETS: dict[str, tuple[ProtocolTarget, ...]] = {
    "000": (
        ProtocolTarget("alpha", 0.70,
                       "sections 4.2 and 4.4 fix it: alpha 0.70-0.79 is the 'study "
                       "threshold', 0.60-0.69 'marginal', below 0.60 'cannot validate'"),
        ProtocolTarget("direction_agreement", 0.70,
                       "sections 4.3 and 4.4 fix it: 'Target: >=70% agreement (better than "
                       "random 50%)', and 50-70% is a 'weak signal'"),
        ProtocolTarget("spearman", 0.60,
                       "sections 4.3 and 4.4 fix it: 'Target: rho >= 0.60', and rho < 0.60 "
                       "is an 'external/internal scoring divergence'"),
    ),
    "002": (
        ProtocolTarget("acceptance_threshold", None,
                       "the protocol freezes the operative acceptance threshold (a total "
                       "from 0 to 100) in the plan before enrolment",
                       "acceptance_threshold = 70, the template's value"),
        ProtocolTarget("max_material_errors", None,
                       "the protocol freezes the maximum material-error count in the plan "
                       "before enrolment",
                       "max_material_errors = 1, the template's value"),
    ),
}
"""Protocol number -> the targets its decision needs."""


@dataclass(frozen=True)
class TargetProblem:
    """A target the plan lacks (``missing``) or sets against its protocol."""

    name: str
    message: str
    missing: bool


def needed_targets(protocol: str) -> tuple[ProtocolTarget, ...]:
    """The targets the decision of ``protocol`` (a study's ``protocol`` text) needs."""
    return PROTOCOL_TARGETS.get(protocol_number(protocol), ())


def target_problems(protocol: str, targets: dict[str, float]) -> list[TargetProblem]:
    """Every target ``protocol``'s decision needs that ``targets`` lacks or contradicts.

    Parameters
    ----------
    protocol : str
        The study's ``[study] protocol`` text ("000 External Validation ...").
    targets : dict
        ``[analysis.targets]`` as loaded.

    Returns
    -------
    list of TargetProblem
        One per such target, its message naming the field, the value allowed and why.
    """
    number = protocol_number(protocol)
    out = []
    for need in needed_targets(protocol):
        given = targets.get(need.name)
        if given is None:
            write = f"write {need.name} = {need.value:.2f}" if need.value is not None else \
                f"write the frozen value (e.g. {need.example})"
            out.append(TargetProblem(
                need.name, f"{need.name} is missing: protocol {number}'s decision needs it "
                f"and {need.said}; {write}", True))
        elif need.value is not None and not math.isclose(given, need.value, abs_tol=1e-12):
            out.append(TargetProblem(
                need.name, f"{need.name} = {given:g} contradicts protocol {number}: "
                f"{need.said}, so the only target its consequence bands allow is "
                f"{need.value:.2f} (another puts a band on the wrong side of it); write "
                f"{need.name} = {need.value:.2f}", False))
    return out


PROTOCOL_ICC_FORMS = {"002": ("ICC2", "its plan freezes the ICC(A,1) absolute-agreement "
                              "method (Shrout-Fleiss ICC(2,1))")}
"""Protocol number -> the ICC form (``[analysis] icc_form``) it fixes, and why."""


def icc_form_problem(protocol: str, icc_form: str) -> str:
    """Why ``icc_form`` contradicts ``protocol`` ("" when it does not, or the protocol
    fixes none): another form is reported as the protocol's ICC."""
    fixed = PROTOCOL_ICC_FORMS.get(protocol_number(protocol))
    if fixed is None or icc_form == fixed[0]:
        return ""
    return (f"icc_form = {icc_form!r} contradicts protocol {protocol_number(protocol)}: "
            f"{fixed[1]}; write icc_form = {fixed[0]!r}")
