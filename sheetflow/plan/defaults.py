"""What a study's plan is about, from its spec: the statistic its protocol decides on,
the measure, why, and the study's own design (its raters, items, sittings, and the
second-rater subset).

The intra-rater kappa of a second sitting (``[design.repeats]``, protocol 001), alpha on
the first total where the plan has bands (000), the ICC where the analysis runs one on
a total (002, 004), Cohen's kappa per column for two raters (003's) or Fleiss' kappa
for more, alpha last. Some protocols fix the number of raters
(:data:`~sheetflow.spec.raters.FIXED_RATERS`, :data:`PLANNED_RATERS`, :data:`TRIO`) or
of items (:data:`FIXED_ITEMS`). The narrowest band (:func:`band_width`) is the default
target width for alpha.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise

from ..spec.model import Study
from ..spec.raters import FIXED_RATERS, protocol_number
from ..words import counted
from .subset import Subset

_NAMES = {"alpha": "alpha", "fleiss_kappa": "Fleiss' kappa", "cohen_kappa": "Cohen's kappa",
          "icc": "the ICC"}


def band_width(study: Study) -> float | None:
    """The narrowest band of the plan (0.10 for bands at 0.80 / 0.70 / 0.60), or None."""
    edges = sorted(b.minimum for b in study.plan.bands if b.minimum > -1)
    gaps = [hi - lo for lo, hi in pairwise(edges)]
    return round(min(gaps), 10) if gaps else None


@dataclass(frozen=True)
class StudyDefaults:
    """What the protocol decides on: the statistic, the measure, why, the own design."""

    statistic: str
    measure: str | None
    reason: str
    raters: int
    items: int
    sittings: bool = False  # one rater's two sittings stand for the two "raters"
    locked: bool = False  # the protocol fixes the rater count (002: two; 004: the trio)
    locked_why: str = ""  # where the protocol fixes it, in words
    subset: Subset | None = None  # second raters rate only a subset (002): agreement is on it
    team: bool = False  # the internal team rates beside the raters in every design (000)
    items_fixed_why: str = ""  # where the protocol fixes the item count, in words, or ""
    items_fixed: int = 0  # the item count the protocol fixes (0: none)
    protocol_raters: int = 0  # the raters (004: judges) a locking protocol fixes
    listed: int = 0  # how many of those the study lists (it departs where they differ)
    listed_word: str = "rater"  # what they are: "rater", or "judge" (004)


TRIO = "protocol 004 scores with a locked trio of judges"
TRIO_SIZE = 3  # its judge ensemble: Claude Opus 4.7, GPT-5.4 and MiniMax M2.7

FIXED_ITEMS = {
    "000": (False, 18, "protocol 000 has 18 test cases, TC-001 to TC-018"),
    "001": (True, 30, "protocol 001's second sitting re-scores 30 items"),
    "003": (False, 18, "protocol 003's second rater rates 18 items"),
    "004": (False, 12, "protocol 004's pilot has 12 records, 3 tasks x 4 cells"),
}
"""Protocols whose text fixes the number of items: (whether it is the number of
repeated items of a second sitting, that number, where the protocol says so)."""

PLANNED_RATERS = {
    "003": (2, "protocol 003 adds one second rater to the first (\"this half-hour is what "
            "makes the reliability figure in the study computable at all\")"),
}
"""Protocols whose text implies a number of raters the plan keeps, as it keeps those
:data:`~sheetflow.spec.raters.FIXED_RATERS` holds (``check`` refuses another count
there): (count, where the protocol says so)."""


def study_defaults(study: Study) -> StudyDefaults:
    """The statistic and measure a study's plan is about (see the module notes)."""
    number = protocol_number(study.protocol)
    fixed = FIXED_RATERS.get(number) or PLANNED_RATERS.get(number)
    own = _study_defaults(study, fixed[0] if fixed else None)
    repeats, count, why = FIXED_ITEMS.get(number, (False, 0, ""))
    if why and repeats == own.sittings:  # 001 fixes its repeats, not all its items
        own = replace(own, items_fixed_why=why, items_fixed=count)
    if fixed is not None and not own.sittings:
        return replace(own, raters=fixed[0], locked=True, locked_why=fixed[1],
                       protocol_raters=fixed[0], listed=len(study.raters))
    if not own.locked:
        return own
    judges, beside = _trio(study)  # people may rate beside a mapped trio (check allows)
    own = replace(own, protocol_raters=TRIO_SIZE, listed=judges, listed_word="judge")
    if beside == 0:
        return replace(own, locked_why=TRIO)
    who = "1 other rater rates" if beside == 1 else f"{beside} other raters rate"
    return replace(own, locked_why=f"{TRIO}, and {who} beside them")


def _trio(study: Study) -> tuple[int, int]:
    """Of the raters a protocol-004 study lists, how many are its judges and how many
    rate beside them: the judges are those the judge mapping (``[analysis.params.jsonl]
    judges``) names, or every rater without one. The designs plan the protocol's
    :data:`TRIO_SIZE` judges and the others beside them, whatever the study lists."""
    ids = {r.id for r in study.raters}
    jsonl = study.plan.params.get("jsonl")
    judges = jsonl.get("judges") if isinstance(jsonl, dict) else None
    if isinstance(judges, dict) and judges:
        named = len(ids & {str(v) for v in judges.values()})
        return named, len(ids) - named
    return len(ids), 0


def _study_defaults(study: Study, fixed: int | None = None) -> StudyDefaults:
    """:func:`study_defaults` before a protocol's fixed rater count is marked locked;
    ``fixed``, that count, is the raters the statistic is chosen for (Cohen's kappa
    for a protocol's two raters, whatever the raters file lists)."""
    run, rubric = set(study.plan.run), study.rubric
    raters, items = fixed or max(2, len(study.raters)), max(2, len(study.items))
    locked = "judge_trio" in run  # protocol 004: three judges, locked by the protocol
    if locked:  # the protocol's trio, not the judges the study lists, and the others
        raters = TRIO_SIZE + _trio(study)[1]
    repeats = study.design.repeats
    if repeats is not None and "intra_rater_kappa" in run:
        first = next((d.id for d in rubric.dimensions if d.level == "nominal" and d.scope != "study"
                      and d.value_domain()), None)
        return StudyDefaults("cohen_kappa", first, "intra-rater Cohen's kappa of the "
                             f"{repeats.count} repeated items", 2, repeats.count, True)
    total = rubric.totals[0].id if rubric.totals else None
    if study.plan.bands:
        return StudyDefaults("alpha", total, "alpha on the total against the bands",
                             raters, items)
    if "icc" in run and total is not None:
        form = "ICC(A,1)" if study.plan.icc_form == "ICC2" else study.plan.icc_form
        beside = raters - TRIO_SIZE if locked else 0
        others = counted(beside, "other rater")
        trio = "" if not locked else f" of the locked {TRIO_SIZE} judges" if not beside \
            else f" of the locked trio's {TRIO_SIZE} judges and {others}"
        return StudyDefaults("icc", total, f"{form}{trio} on the total", raters, items,
                             locked=locked)
    if run & {"cohen_kappa", "fleiss_kappa"}:
        statistic = "cohen_kappa" if raters == 2 else "fleiss_kappa"
        return StudyDefaults(statistic, None, "kappa per column", raters, items,
                             locked=locked)
    return StudyDefaults("alpha", None, "alpha", raters, items, locked=locked)
