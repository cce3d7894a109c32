"""Collect checks that a protocol asks for across cells or across files.

Each is pure: it takes what the collector read and returns findings.

- :func:`flag_notes_missing` -- a marked flag whose companion note is blank (protocol
  003: "Put Y in gold_dispute and one line in rater_note"); the flag dimension names
  its note with the spec key ``note``.
- :func:`sitting_gaps` -- a sitting-2 batch that starts less than 24 hours after the
  rater's sitting 1 ended (protocol 001: "At least 24 hours later, sitting 2"). Only
  batch times read as a date and time take part; a time of day alone has its own
  warning (``batch-time-no-date``) where it was read.
- :func:`batch_overlaps` -- two batches of one sitting whose times overlap (protocol
  001: one batch at a time, with a break between).
- :func:`verdicts_off_band` -- a verdict that is not the band of its own total
  (protocol 004's judge prompt; the rule is ``[analysis.params.verdict_bands]``).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..spec.rubric import Dimension
from ..spec.verdicts import VerdictRule

MIN_SITTING_GAP = dt.timedelta(hours=24)
"""Protocol 001: sitting 2 starts at least this long after sitting 1 ended."""


@dataclass(frozen=True)
class NoteFinding:
    """A marked flag without its note: where, the flag's value, the note's dimension."""

    case: str
    label: str
    cell: str
    flag: Dimension
    value: str
    note: Dimension


def flag_notes_missing(values: Mapping[tuple[str, str, str], tuple[str, str]],
                       dims: Mapping[str, Dimension]) -> list[NoteFinding]:
    """Marked flags whose ``note`` dimension is blank in the same row.

    Parameters
    ----------
    values : mapping
        (case, label, dimension id) -> (value as text, cell) for every answer read.
    dims : mapping
        Dimension id -> :class:`~sheetflow.spec.rubric.Dimension`.

    Returns
    -------
    list of NoteFinding
    """
    flags = {d.id: d for d in dims.values() if d.kind == "flag" and d.note in dims}
    out = []
    for (case, label, dim_id), (value, cell) in values.items():
        flag = flags.get(dim_id)
        if flag is None or not value or str(values.get((case, label, flag.note), ("",))[0]
                                            ).strip():
            continue
        out.append(NoteFinding(case, label, cell, flag, value, dims[flag.note]))
    return out


@dataclass(frozen=True)
class GapFinding:
    """A sitting-2 batch that started too soon: its batch, cell and the message detail."""

    batch: int
    cell: str
    start: str
    detail: str


def sitting_gaps(first: Iterable[tuple[int, str, dt.datetime, str]],
                 second: Iterable[tuple[int, str, dt.datetime, str]],
                 minimum: dt.timedelta = MIN_SITTING_GAP) -> list[GapFinding]:
    """Sitting-2 batches starting less than ``minimum`` after sitting 1's last end.

    Parameters
    ----------
    first, second : iterable of (batch, part, when, cell)
        One rater's batch times in sitting 1 and sitting 2 (``part`` ``start``/``end``).
    minimum : datetime.timedelta
        The gap the protocol asks for (24 hours).

    Returns
    -------
    list of GapFinding
        One per sitting-2 batch start that is too soon (none when sitting 1 has no
        dated time).

    Examples
    --------
    >>> t = dt.datetime
    >>> gaps = sitting_gaps([(1, "end", t(2026, 11, 2, 10, 40), "C5")],
    ...                     [(1, "start", t(2026, 11, 3, 9, 0), "C4")])
    >>> gaps[0].detail
    'Batch 1 starts 22.3 h after sitting 1 ended (2026-11-02 10:40)'
    """
    moments = [when for _, _, when, _ in first]
    if not moments:
        return []
    ended = max(moments)
    out = []
    for batch, part, when, cell in second:
        if part != "start" or when - ended >= minimum:
            continue
        # cut to the tenth toward 0, never rounded up: 23 h 59 min is "23.9 h", as
        # "24.0 h" would read as the gap the protocol asks for
        hours = math.trunc((when - ended).total_seconds() / 360) / 10
        out.append(GapFinding(batch, cell, f"{when:%Y-%m-%d %H:%M}", (
            f"Batch {batch} starts {hours:.1f} h after sitting 1 ended ({ended:%Y-%m-%d %H:%M})")))
    return out


def batch_overlaps(times: Iterable[tuple[int, str, dt.datetime, str]]) -> list[GapFinding]:
    """Batches of one sitting whose dated spans overlap (protocol 001: one batch at a
    time, a break between).

    Parameters
    ----------
    times : iterable of (batch, part, when, cell)
        One pack's dated batch times (``part`` ``start``/``end``).

    Returns
    -------
    list of GapFinding
        One per batch that starts before an earlier-numbered batch has ended; ``cell``
        is the later batch's start. Batches missing a time, or ending before they
        start, take no part (their own warnings name them).

    Examples
    --------
    >>> t = dt.datetime
    >>> found = batch_overlaps([(1, "start", t(2026, 11, 2, 9), "C4"),
    ...                         (1, "end", t(2026, 11, 2, 10), "C5"),
    ...                         (2, "start", t(2026, 11, 2, 9, 30), "C26"),
    ...                         (2, "end", t(2026, 11, 2, 11), "C27")])
    >>> found[0].detail
    'Batch 2 starts at 2026-11-02 09:30, before batch 1 ends (2026-11-02 10:00)'
    """
    spans: dict[int, dict[str, tuple[dt.datetime, str]]] = {}
    for batch, part, when, cell in times:
        spans.setdefault(batch, {})[part] = (when, cell)
    whole = sorted((b, p["start"], p["end"]) for b, p in spans.items()
                   if "start" in p and "end" in p and p["start"][0] <= p["end"][0])
    out = []
    for i, (batch, (start, cell), _) in enumerate(whole):
        for earlier, _, (end, _) in whole[:i]:
            if start < end:
                # within one minute the seconds tell the two apart ("09:40:00,
                # before batch 1 ends (09:40:30)", never "09:40 ... (09:40)")
                fmt = "%Y-%m-%d %H:%M" if end - start >= dt.timedelta(minutes=1) \
                    or start.minute != end.minute else "%Y-%m-%d %H:%M:%S"
                out.append(GapFinding(batch, cell, start.strftime(fmt), (
                    f"Batch {batch} starts at {start.strftime(fmt)}, before batch "
                    f"{earlier} ends ({end.strftime(fmt)})")))
                break
    return out


@dataclass(frozen=True)
class VerdictFinding:
    """A verdict that is not the band of its own total."""

    case: str
    label: str
    cell: str
    value: str
    detail: str


def verdicts_off_band(values: Mapping[tuple[str, str, str], tuple[str, str]],
                      rule: VerdictRule) -> list[VerdictFinding]:
    """Verdicts whose label differs from the band their total falls in (protocol 004).

    Parameters
    ----------
    values : mapping
        (case, label, dimension id) -> (value as text, cell) for every answer read,
        the totals included (cell blank).
    rule : VerdictRule

    Returns
    -------
    list of VerdictFinding
        None for a blank verdict or a total not computed (its answers are incomplete:
        reported as such).
    """
    out = []
    for (case, label, dim_id), (verdict, cell) in values.items():
        if dim_id != rule.dimension or not verdict:
            continue
        total = values.get((case, label, rule.total), ("",))[0]
        try:
            mean = float(total)
        except ValueError:
            continue
        band = rule.label_for(mean)
        if verdict != band:
            out.append(VerdictFinding(case, label, cell, verdict, (
                f"the mean of this response's scores is {mean:.2f}, which is {band}")))
    return out
