"""Protocol 001's rater description, per-owner record and deviations.

The protocol's Reporting section asks for a rater description (relationship to the
corpus, time spent, breaks taken, deviations from the protocol) and its multi-owner
extension for compensation and consent per owner "in the run's metadata.yaml".
sheetflow writes the same record as JSON (``out/results/metadata.json``: no YAML
library is needed to read it, and every YAML 1.2 reader reads JSON):

- the owner's own answers, from the study-scope questions of sitting 1
  (``relationship``, ``breaks``, ``deviations``, ``compensation``, ``consent``: the
  template's ids; a study without them gets what it has);
- the time spent, summed over the batches whose start and end are both dated;
- the deviations found in the batch times (a sitting-2 batch begun less than 24 hours
  after sitting 1 ended; two batches of one sitting overlapping; a batch of zero
  length), which collect also reports as warnings.

Every deviation, found or reported, is a line on the Summary and in ``summary.json``
(``deviations``). An answer that means none ("none", "no", "n/a", "-", "nil", "no
deviations"; any case, spaces and a final full stop aside) reports no deviation.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..collect.protocol_checks import batch_overlaps, sitting_gaps

if TYPE_CHECKING:  # pragma: no cover - types only
    from .context import Analysis

OWNER_QUESTIONS = ("relationship", "breaks", "deviations", "compensation", "consent")
IRB_NOTE = "no IRB approval is claimed unless one was obtained (protocol 001)"
# what owners type into the deviations question when there was none
NONE_ANSWERS = frozenset({"none", "no", "n/a", "-", "nil", "no deviations"})


def owner_records(analysis: Analysis) -> list[dict[str, Any]]:
    """One record per owner: their answers, time spent per sitting, deviations."""
    answers = _study_answers(analysis)
    times = _dated_batches(analysis.batches)
    owners = list(dict.fromkeys(analysis.data["rater"].astype(str)))
    records = []
    for owner in owners:
        mine = times.get(owner, {})
        record: dict[str, Any] = {"owner": owner, **answers.get(owner, {})}
        record["minutes_spent"] = {str(s): _minutes(spans) for s, spans in sorted(mine.items())}
        record["deviations_found"] = _found(mine)
        records.append(record)
    return records


def add_owner_records(analysis: Analysis) -> None:
    """Put the records and every deviation into the summary (and its Summary lines)."""
    records = owner_records(analysis)
    deviations = []
    for rec in records:
        deviations += [{"owner": rec["owner"], "source": "batch times", "text": text}
                       for text in rec["deviations_found"]]
        said = str(rec.get("deviations", "") or "").strip()
        if not means_none(said):
            deviations.append({"owner": rec["owner"], "source": "reported by the owner",
                               "text": said})
    summary = analysis.summary
    summary["owners"] = records
    summary["deviations"] = deviations
    lines = summary.setdefault("summary_lines", [])
    lines.append(f"deviations from the protocol: {len(deviations)}" if deviations
                 else "deviations from the protocol: none found in the batch times, none "
                 "reported")
    lines += [f"deviation ({d['owner']}, {d['source']}): {d['text']}" for d in deviations]


TOO_SOON = "after sitting 1 ended"
"""Words of a batch-time deviation where sitting 2 began under 24 hours after sitting 1
(:func:`~sheetflow.collect.protocol_checks.sitting_gaps`)."""


def began_too_soon(deviation: dict[str, Any]) -> bool:
    """Whether a ``deviations`` record is a sitting-2 batch begun less than 24 hours after
    sitting 1 ended: the repeats then rest on a memory the protocol's wait should fade.

    Parameters
    ----------
    deviation : dict
        A record of ``summary["deviations"]`` (``owner``, ``source``, ``text``).

    Returns
    -------
    bool
    """
    text = str(deviation.get("text", ""))
    return deviation.get("source") == "batch times" and text.startswith("sitting 2: ") \
        and TOO_SOON in text


def means_none(answer: str) -> bool:
    """Whether an owner's answer to the deviations question reports no deviation.

    Parameters
    ----------
    answer : str
        The answer as typed.

    Returns
    -------
    bool
        True for a blank answer and for one meaning none ("none", "no", "n/a", "-",
        "nil", "no deviations"), in any case, with surrounding spaces and a final full
        stop ignored; False for anything else, which is then a reported deviation.
    """
    word = answer.strip().lower()
    return not word or word.rstrip(".").strip() in NONE_ANSWERS


def metadata(analysis: Analysis) -> dict[str, Any]:
    """The ``metadata.json`` document: study, owners and the IRB statement."""
    summary = analysis.summary
    return {"study_id": analysis.study.id, "spec_hash": summary.get("spec_hash", ""),
            "irb": IRB_NOTE, "owners": summary.get("owners", owner_records(analysis))}


def _study_answers(analysis: Analysis) -> dict[str, dict[str, str]]:
    """Owner -> question id -> answer, from sitting 1's study-scope questions."""
    ids = {d.id for d in analysis.study.rubric.by_scope("study")}
    data = analysis.data
    rows = data[data["dimension"].isin(ids) & (data["sitting"].astype(int) == 1)]
    out: dict[str, dict[str, str]] = {}
    for rater, dim, value in zip(rows["rater"].astype(str), rows["dimension"], rows["value"],
                                 strict=True):
        out.setdefault(rater, {})[dim] = "" if pd.isna(value) else str(value)
    return out


Span = tuple[int, dt.datetime | None, dt.datetime | None]


def _dated_batches(batches: pd.DataFrame | None) -> dict[str, dict[int, list[Span]]]:
    """Owner -> sitting -> (batch, start, end), each time parsed (None when undated)."""
    out: dict[str, dict[int, list[Span]]] = {}
    if batches is None or batches.empty:
        return out
    spans = batches.drop_duplicates(["rater", "sitting", "batch"])
    for r in spans.to_dict("records"):
        out.setdefault(str(r["rater"]), {}).setdefault(int(r["sitting"]), []).append(
            (int(r["batch"]), _when(r["batch_start"]), _when(r["batch_end"])))
    return out


def _when(text: Any) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None


def _minutes(spans: list[Span]) -> float | None:
    """Minutes over the batches dated at both ends in order; None when there is none."""
    whole = [(end - start).total_seconds() / 60 for _, start, end in spans
             if start is not None and end is not None and end >= start]
    return round(sum(whole), 1) if whole else None


def _found(sittings: dict[int, list[Span]]) -> list[str]:
    """Deviations the batch times show, with the same words as collect's warnings."""
    def moments(spans: list[Span]) -> list[tuple[int, str, dt.datetime, str]]:
        return [(b, part, when, "") for b, start, end in spans
                for part, when in (("start", start), ("end", end)) if when is not None]

    found = []
    for sitting, spans in sorted(sittings.items()):
        found += [f"sitting {sitting}: {f.detail}" for f in batch_overlaps(moments(spans))]
        found += [f"sitting {sitting}: batch {b} starts and ends at {start:%Y-%m-%d %H:%M}"
                  for b, start, end in spans if start is not None and start == end]
    if 1 in sittings and 2 in sittings:
        found += [f"sitting 2: {g.detail}" for g in
                  sitting_gaps(moments(sittings[1]), moments(sittings[2]))]
    return found
