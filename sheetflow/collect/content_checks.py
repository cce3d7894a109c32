"""Checks on a return's content that take plain data and give issues: word counts,
batch times, and the rater self-checks of protocol 000.

Nothing here reads files, so the rules can be tested on their own; the issues come
from :mod:`.validate`'s catalogue.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ..words import settled, shown_percent, text_words
from .validate import Issue, issue, show_value
from .values import parse_time


def check_word_count(text: str, min_words: int | None, max_words: int | None
                     ) -> tuple[int, str] | None:
    """(words, range text) when ``text`` is outside [min_words, max_words], else None
    (words as :func:`~sheetflow.words.text_words` counts them, as the pack does)."""
    n = text_words(text)
    too_few = min_words is not None and n < min_words
    too_many = max_words is not None and n > max_words
    if not (too_few or too_many):
        return None
    if min_words is not None and max_words is not None:
        return n, f"{min_words} to {max_words} words"
    if min_words is not None:
        return n, f"at least {min_words} words"
    return n, f"at most {max_words} words"


@dataclass(frozen=True)
class BatchTimeFinding:
    """A problem with one batch's times: issue ``code``, the ``part`` (start/end) it
    is about, and the ``detail`` for the message."""

    code: str
    part: str
    detail: str


def check_batch_times(batch: int, start: Any, end: Any,
                      date1904: bool = False) -> list[BatchTimeFinding]:
    """Check one batch's start and end time cells (protocol 001).

    Parameters
    ----------
    batch : int
        The batch number, for the messages.
    start, end : object
        The raw cells.
    date1904 : bool
        Whether the workbook counts dates from 1904 (:func:`parse_time`).

    Returns
    -------
    list of BatchTimeFinding
        ``batch-time-missing`` for a blank one, ``batch-time-invalid`` for one that
        is not a date and time, ``batch-time-no-date`` for a time of day alone,
        ``batch-time-order`` when the end is before the start, ``batch-time-zero``
        when both are the same moment.
    """
    out = []
    parsed = {"start": parse_time(start, date1904), "end": parse_time(end, date1904)}
    for part, value in parsed.items():
        if value.code:
            out.append(BatchTimeFinding(value.code, part, f"batch {batch} {part}"))
        elif value.blank:
            out.append(BatchTimeFinding("batch-time-missing", part, f"batch {batch} {part}"))
        elif not isinstance(value.value, dt.datetime):
            out.append(BatchTimeFinding("batch-time-no-date", part, f"batch {batch} {part}"))
    first, last = parsed["start"].value, parsed["end"].value
    if first is not None and last is not None and _before(last, first):
        out.append(BatchTimeFinding(
            "batch-time-order", "end",
            f"Batch {batch} ends at {_clock(last)}, before it starts at {_clock(first)}"))
    elif first is not None and last is not None and type(first) is type(last) \
            and first == last:
        out.append(BatchTimeFinding(
            "batch-time-zero", "end", f"Batch {batch} starts and ends at {_clock(first)}"))
    return out


def _before(a: Any, b: Any) -> bool:
    """Whether time or datetime ``a`` is earlier than ``b`` (times of day when mixed)."""
    if type(a) is not type(b):
        a, b = (x.time() if hasattr(x, "date") and callable(x.date) else x for x in (a, b))
    return a < b


def _clock(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M" if hasattr(value, "date") else "%H:%M")


@dataclass(frozen=True)
class SelfCheckInput:
    """What the protocol 000 self-checks look at, for one rater.

    Attributes
    ----------
    totals : list of float
        Every recomputed total (one per scored response).
    total_range : (float, float) or None
        The range totals can take.
    confidences : list of str
        Every confidence given (Low/Medium/High).
    directions : list of (case, direction, total of A minus total of B or None)
        One per case with a direction.
    direction_cells : dict of case to (sheet, cell)
        Where each direction was read, so a warning can point at it.
    extreme_low_max, extreme_high_min : float or None
        Totals <= low or >= high count as extreme (``[analysis.params]``).
    confidence_target : float or None
        Minimum share of Medium/High confidence (``[analysis.targets]``).
    labels : (str, str)
        The pair's neutral labels, first then second.
    preference_choices : (str, str, str)
        The preference labels: first wins, second wins, tied.
    batch_times : list of (batch, part, value, cell)
        Every batch start and end read as a date and time (``part`` is ``start`` or
        ``end``), for the check between sittings across files (protocol 001).
    """

    totals: list[float] = field(default_factory=list)
    total_range: tuple[float, float] | None = None
    confidences: list[str] = field(default_factory=list)
    directions: list[tuple[str, str, float | None]] = field(default_factory=list)
    direction_cells: dict[str, tuple[str, str]] = field(default_factory=dict)
    extreme_low_max: float | None = None
    extreme_high_min: float | None = None
    confidence_target: float | None = None
    labels: tuple[str, str] = ("A", "B")
    preference_choices: tuple[str, str, str] = ("A>B", "B>A", "Tied")
    batch_times: list[tuple[int, str, Any, str]] = field(default_factory=list)


EXTREME_SHARE = 0.25
"""Warn when more than this share of a rater's totals are extreme: sheetflow's own bar
(protocol 000 asks only whether extreme totals are "rare"), stated in the warning."""
CLEAR_MARGIN = 3.0
"""A total this many points higher makes a contrary direction suspicious."""
MIN_FOR_PATTERN = 3
"""Pattern checks (variance, one direction) need at least this many answers."""


def self_checks(data: SelfCheckInput, *, file: str, rater: str) -> list[Issue]:
    """The protocol 000 section 3.1 self-checks for one rater, as warnings.

    Each check runs only when its data is there: totals for variance and extremes,
    confidences with a target for the confidence share, directions for the rest.

    Parameters
    ----------
    data : SelfCheckInput
    file, rater : str
        Where, for the issues.

    Returns
    -------
    list of Issue
    """
    where = {"file": file, "rater": rater}
    out: list[Issue] = []
    out += _variance_check(data, where)
    out += _extremes_check(data, where)
    out += _confidence_check(data, where)
    out += _direction_checks(data, where)
    return out


def _variance_check(data: SelfCheckInput, where: dict[str, str]) -> list[Issue]:
    if len(data.totals) < MIN_FOR_PATTERN or len(set(data.totals)) > 1:
        return []
    return [issue("totals-no-variance", **where, value=data.totals[0],
                  detail=len(data.totals))]


def _extremes_check(data: SelfCheckInput, where: dict[str, str]) -> list[Issue]:
    low, high = data.extreme_low_max, data.extreme_high_min
    if not data.totals or low is None or high is None:
        return []
    extreme = sum(t <= low or t >= high for t in data.totals)
    share = settled(extreme / len(data.totals), (EXTREME_SHARE,))  # the bar up to rounding
    if share <= EXTREME_SHARE:
        return []
    lo_text = f"{show_value(float(data.total_range[0]))}-" if data.total_range else "<="
    hi_text = f"-{show_value(float(data.total_range[1]))}" if data.total_range else "+"
    # the bar is sheetflow's own (the protocol says only "rare"), so the warning says it
    expected = (f"{lo_text}{show_value(float(low))} or {show_value(float(high))}{hi_text}; "
                f"sheetflow warns above {shown_percent(EXTREME_SHARE)}")
    # shown on its side of the bar: 25.04% is "25.04%", never "25.0%" above 25.0%
    return [issue("totals-many-extreme", **where,
                  detail=shown_percent(share, above=[EXTREME_SHARE]), expected=expected)]


def _confidence_check(data: SelfCheckInput, where: dict[str, str]) -> list[Issue]:
    if data.confidence_target is None or not data.confidences:
        return []
    share = settled(sum(c in ("Medium", "High") for c in data.confidences)
                    / len(data.confidences), (data.confidence_target,))
    if share >= data.confidence_target:
        return []
    # shown on its side of the target: 125/179 is "69.8%", never "70%" below a 70% target
    return [issue("confidence-low-share", **where,
                  detail=shown_percent(share, at_least=[data.confidence_target]),
                  expected=shown_percent(data.confidence_target))]


def _direction_checks(data: SelfCheckInput, where: dict[str, str]) -> list[Issue]:
    out: list[Issue] = []
    given = [d for _, d, _ in data.directions]
    if len(given) >= MIN_FOR_PATTERN and len(set(given)) == 1:
        out.append(issue("direction-all-same", **where, value=given[0], detail=len(given)))
    first, second = data.labels
    first_wins, second_wins, _tied = data.preference_choices
    for case, direction, margin in data.directions:
        # two mean totals 3 apart can differ by 2.9999999999999996: the bar, up to rounding
        gap = settled(abs(margin), (CLEAR_MARGIN,)) if margin is not None else None
        if gap is None or gap < CLEAR_MARGIN:
            continue
        leader = first if margin > 0 else second
        expected = first_wins if margin > 0 else second_wins
        if direction != expected:
            detail = (f"{leader} scored {show_value(gap)} points higher "
                      f"(at least {show_value(CLEAR_MARGIN)})")
            sheet, cell = data.direction_cells.get(case, ("", ""))
            out.append(issue("direction-inconsistent", **where, sheet=sheet, cell=cell,
                             case=case, value=direction, detail=detail))
    return out
