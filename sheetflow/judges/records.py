"""Protocol 004's JSONL records checked against themselves, and ``pilot-summary.json``.

Each record (one cell x task) carries the candidate response, three judges' scores
and figures derived from them. :func:`check_records` recomputes what can be
recomputed and names every mismatch by line, record and field:

- the schema of the document ("Output JSONL schema"): every field present with its
  type; the six scores whole numbers 1-5; ``overall_verdict`` one of the four labels;
- each judge's ``mean`` = the mean of its six scores (to :data:`MEAN_TOLERANCE`,
  since records round to four decimals);
- ``trio_mean`` = the mean of the three judges' means (same tolerance);
- the verdicts against the stated thresholds: a judge's ``overall_verdict`` against
  its mean (PASS_STRONG >= 4.0, PASS_ADEQUATE 3.5-3.99, FAIL_WEAK 2.5-3.49,
  FAIL_CRITICAL < 2.5), ``trio_strict_pass`` (2 of 3 judges >= the strict-pass
  target) and ``trio_critical_fail`` (2 of 3 judges below the critical target);
- ``candidate_response`` against the item's response text (line ends normalised);
- every text of a judge's object written into a workbook: no character a cell cannot
  hold, no longer than a cell holds.

:func:`unknown_fields` names the fields of the records that none of this knows (nor
the import writes): they are ignored, which the import says.

:func:`pilot_summary` builds the document's ``pilot-summary.json`` from checked
records: costs, call counts, execution window, ``results_per_task`` and
``aggregate``. Trio means are recomputed from the judges' scores; the cell means,
deltas and verdict are the analysis's own computation (:mod:`.pilot`). A hypothesis is
directional when its delta exceeds the plan's tolerance (an exact tie is not), or for
one stated "at least" (``relation = ">="``) when its delta is not below 0 beyond that
tolerance (a tie is).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..workbook.layout import CELL_LIMIT_UTF16
from .pilot import hypothesis_table, pilot_verdict, summary_results

DIMENSIONS = ("completeness", "accuracy", "synthesis", "judgment", "actionability",
              "structure")
VERDICTS = (("PASS_STRONG", 4.0), ("PASS_ADEQUATE", 3.5), ("FAIL_WEAK", 2.5),
            ("FAIL_CRITICAL", -math.inf))
"""A judge's verdict label and the lowest mean it covers (protocol 004's judge prompt)."""
MEAN_TOLERANCE = 0.005
"""Stated and recomputed means may differ by rounding to this much (records keep 4
decimals; anything larger is a mismatch)."""
DIRECTION_TOLERANCE = 1e-9
"""Default: a delta must exceed this to count as directional (``[analysis.params]
direction_tolerance``); float noise such as 4.4e-16 on an exact tie does not."""
_RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "task_id": (str,), "cell_id": (str,), "model": (str,), "configuration": (str,),
    "candidate_response": (str,), "candidate_latency_ms": (int,),
    "candidate_tokens_in": (int,), "candidate_tokens_out": (int,),
    "candidate_cost_usd": (int, float), "trio_mean": (int, float),
    "trio_strict_pass": (bool,), "trio_critical_fail": (bool,),
    "manifest_anchor": (str,), "head_sha": (str,),
}
_JUDGE_FIELDS: dict[str, tuple[type, ...]] = {
    **{d: (int,) for d in DIMENSIONS}, "rationale": (str,), "overall_verdict": (str,),
    "mean": (int, float),
}


@dataclass(frozen=True)
class Mismatch:
    """One field of one record that is missing, mistyped or disagrees with itself."""

    line: int
    record: str
    field: str
    message: str
    absent_judge: bool = False
    """A judge's object is absent (or null): the record lacks that judge's output."""

    def text(self, name: str) -> str:
        """``file: line N (task-1/A): field: message``; ``file (the record set): ...``
        for what no one line holds (line 0)."""
        where = f"{name}: line {self.line}" if self.line else name
        return f"{where} ({self.record}): {self.field}: {self.message}"


@dataclass(frozen=True)
class Thresholds:
    """The stated thresholds a record's verdicts are checked against."""

    strict_pass: float = 3.5
    critical_below: float = 2.0


def verdict_for(mean: float) -> str:
    """The judge verdict label a mean earns (protocol 004's bands)."""
    return next(label for label, low in VERDICTS if mean >= low)


def judge_mean(judged: Mapping[str, Any]) -> float | None:
    """Mean of the six scores, or None when one is not a number."""
    scores = [judged.get(d) for d in DIMENSIONS]
    if not all(_is_number(s) for s in scores):
        return None
    return sum(scores) / len(scores)


def check_records(records: list[tuple[int, dict[str, Any]]], judges: list[str],
                  responses: Mapping[tuple[str, str], str],
                  thresholds: Thresholds,
                  written: Collection[str] | None = None) -> list[Mismatch]:
    """Every mismatch in ``records`` (schema, recomputed means, verdicts, responses).

    Parameters
    ----------
    records : list of (line number, record)
    judges : list of str
        The judge keys of the locked trio (``judge_opus``...).
    responses : mapping
        (task id, cell id) -> the item's response text; a record whose task and cell
        match no item is reported.
    thresholds : Thresholds
    written : collection of str, optional
        The fields of a judge's object written into its workbook (the rubric's
        dimension ids): each of them given as text must fit a cell (no character a
        workbook cannot hold, not too long). Default: every field of the object.

    Returns
    -------
    list of Mismatch
        Empty when every record agrees with itself and with the items.
    """
    out: list[Mismatch] = []
    for line, rec in records:
        where = f"{rec.get('task_id', '?')}/{rec.get('cell_id', '?')}"

        def bad(field: str, message: str, line: int = line, where: str = where) -> None:
            out.append(Mismatch(line, where, field, message))

        _check_types(rec, _RECORD_FIELDS, "", bad)
        means = []
        for key in judges:
            judged = rec.get(key)
            if judged is None:  # absent: the import leaves that judge's cells blank
                out.append(Mismatch(line, where, key, "missing: the trio is locked, every "
                                    "judge scores every record", absent_judge=True))
                continue
            if not isinstance(judged, dict):  # present but broken: not "no output"
                bad(key, f"{_json_kind(judged)}, where the judge's object of scores, "
                    "rationale, verdict and mean belongs")
                continue
            means.append(_check_judge(key, judged, bad, written))
        _check_trio(rec, means, len(judges), thresholds, bad)
        _check_response(rec, responses, bad)
        _check_extra_judges(rec, judges, bad)
    out += _check_set(records, responses)
    return out


@dataclass(frozen=True)
class Unknown:
    """A field no check knows and no cell is filled from: ignored by the import."""

    field: str
    """As a mismatch names it: ``seed``, or ``judge_opus.confidence``."""
    line: int
    """The first line holding it."""
    record: str
    """That line's record (task/cell)."""
    more: int
    """How many later lines hold it too."""


def unknown_fields(records: list[tuple[int, dict[str, Any]]], judges: list[str],
                   known: Collection[str] = (), written: Collection[str] = ()
                   ) -> list[Unknown]:
    """Each field of ``records`` outside the schema, once per field name.

    Parameters
    ----------
    records : list of (line number, record)
    judges : list of str
        The judge keys of the locked trio.
    known : collection of str
        Record fields known besides the schema's (the mapping's task and cell fields).
    written : collection of str
        Fields of a judge's object written into its workbook (the rubric's dimension
        ids) besides the schema's.

    Returns
    -------
    list of Unknown
        In the order first met.
    """
    top = {*_RECORD_FIELDS, *judges, *known}
    inner = {*_JUDGE_FIELDS, *written}
    found: dict[str, Unknown] = {}
    for line, rec in records:
        where = f"{rec.get('task_id', '?')}/{rec.get('cell_id', '?')}"
        names = [n for n in rec if n not in top]
        names += [f"{key}.{n}" for key in judges if isinstance(rec.get(key), dict)
                  for n in rec[key] if n not in inner]
        for name in names:
            seen = found.get(name)
            found[name] = Unknown(name, line, where, 0) if seen is None else \
                Unknown(name, seen.line, seen.record, seen.more + 1)
    return list(found.values())


_NON_NEGATIVE = ("candidate_latency_ms", "candidate_tokens_in", "candidate_tokens_out",
                 "candidate_cost_usd")
_SAME_IN_A_RUN = ("manifest_anchor", "head_sha")


def _check_extra_judges(rec: dict[str, Any], judges: list[str], bad: Any) -> None:
    """A judge outside the locked trio would pass unseen: every record holds the trio
    and nothing that looks like another judge."""
    for key, value in rec.items():
        if isinstance(value, dict) and key not in judges and set(DIMENSIONS) & set(value):
            bad(key, f"is not a judge of the locked trio ({', '.join(judges)})")


def _check_set(records: list[tuple[int, dict[str, Any]]],
               responses: Mapping[tuple[str, str], str]) -> list[Mismatch]:
    """The records as one run: every task and cell once, one manifest anchor and head,
    and one model and configuration per cell."""
    out: list[Mismatch] = []
    seen: dict[tuple[str, str], int] = {}
    first: dict[str, tuple[int, Any]] = {}
    cells: dict[str, tuple[int, tuple[Any, Any]]] = {}
    for line, rec in records:
        key = (str(rec.get("task_id")), str(rec.get("cell_id")))
        where = "/".join(key)
        if key in seen:
            out.append(Mismatch(line, where, "task_id/cell_id",
                                f"scored twice (first on line {seen[key]})"))
        seen.setdefault(key, line)
        for name in _SAME_IN_A_RUN:
            line0, value0 = first.setdefault(name, (line, rec.get(name)))
            if rec.get(name) != value0:
                out.append(Mismatch(line, where, name, f"{rec.get(name)!r}, but line {line0} "
                                    f"has {value0!r}: the records come from different runs"))
        pair = (rec.get("model"), rec.get("configuration"))
        line0, pair0 = cells.setdefault(key[1], (line, pair))
        if pair != pair0:
            out.append(Mismatch(line, where, "model/configuration",
                                f"{pair[0]!r}/{pair[1]!r}, but cell {key[1]} is "
                                f"{pair0[0]!r}/{pair0[1]!r} on line {line0}"))
    missing = [k for k in responses if k not in seen]
    if missing:
        shown = ", ".join("/".join(k) for k in missing[:4]) + (", ..." if len(missing) > 4
                                                               else "")
        out.append(Mismatch(0, "the record set", "task_id/cell_id",
                            f"{len(missing)} of the design's {len(responses)} task and cell "
                            f"records missing ({shown}): the pilot needs every cell of every "
                            "task"))
    return out


def _check_types(obj: Mapping[str, Any], fields: Mapping[str, tuple[type, ...]], prefix: str,
                 bad: Any) -> None:
    for name, types in fields.items():
        value = obj.get(name)
        if name not in obj:
            bad(prefix + name, "missing")
        elif (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            bad(prefix + name, _wrong_type(value, types))
        elif isinstance(value, float) and not math.isfinite(value):
            bad(prefix + name, f"{value!r} is not a finite number")
        elif name in _NON_NEGATIVE and value < 0:
            bad(prefix + name, f"{value!r} is negative")


def _wrong_type(value: Any, types: tuple[type, ...]) -> str:
    """Why ``value`` is not of ``types``; a score given as ``4.0`` or ``"4"`` is told to
    be written as the whole number (``4``), which is what the schema takes."""
    if types == (int,) and isinstance(value, float) and value.is_integer():
        return f"{value!r} has a decimal point: write the whole number {int(value)}"
    if types == (int,) and isinstance(value, str) and re.fullmatch(r"-?[0-9]+",
                                                                     value.strip()):
        return f"{value!r} is text: write the whole number {int(value)}, without quotes"
    return f"{value!r} is not {' or '.join(t.__name__ for t in types)}"


def _check_judge(key: str, judged: dict[str, Any], bad: Any,
                 written: Collection[str] | None = None) -> float | None:
    _check_types(judged, _JUDGE_FIELDS, f"{key}.", bad)
    if isinstance(judged.get("rationale"), str) and not judged["rationale"].strip():
        bad(f"{key}.rationale", "is empty: every score needs its reason")
    for name, value in judged.items():
        # every text the import writes into a cell, not the rationale alone: openpyxl
        # refuses a control character mid-import, and writes XML cannot read back
        problem = _cell_problem(value) if isinstance(value, str) and (
            written is None or name in written) else ""
        if problem:
            bad(f"{key}.{name}", problem)
    for dim in DIMENSIONS:
        score = judged.get(dim)
        if _is_number(score) and not 1 <= score <= 5:
            bad(f"{key}.{dim}", f"{score} is outside 1-5")
    mean = judge_mean(judged)
    if mean is None:
        return None
    stated = judged.get("mean")
    if _is_number(stated) and abs(stated - mean) > MEAN_TOLERANCE:
        bad(f"{key}.mean", f"{stated} stated, {mean:.4f} recomputed from the six scores")
    verdict = judged.get("overall_verdict")
    labels = [label for label, _ in VERDICTS]
    if isinstance(verdict, str) and verdict not in labels:
        bad(f"{key}.overall_verdict", f"{verdict!r} is not one of {', '.join(labels)}; "
            f"a mean of {mean:.4f} is {verdict_for(mean)}")
    elif isinstance(verdict, str) and verdict != verdict_for(mean):
        bad(f"{key}.overall_verdict", f"{verdict} stated, but a mean of {mean:.4f} is "
            f"{verdict_for(mean)}")
    return mean


def _json_kind(value: Any) -> str:
    """What a JSON value is, with the value itself cut short: ``a list ([1, 2])``."""
    kind = ("true/false" if isinstance(value, bool) else "a list" if isinstance(value, list)
            else "text" if isinstance(value, str) else "a number")
    shown = json.dumps(value, ensure_ascii=False)
    return f"{kind} ({shown if len(shown) <= 40 else shown[:37] + '...'})"


def _cell_problem(text: str) -> str:
    """Why a workbook cell cannot hold ``text`` as given ("" when it can)."""
    if _too_long(text):
        return (f"{_too_long(text):,} characters (UTF-16 units, as Excel counts), but a "
                f"workbook cell holds at most {CELL_LIMIT_UTF16:,}: shorten it in the record")
    code = _unwritable(text)
    if code:
        return (f"contains {code}, a {_kind_of(code)} a workbook cell cannot hold: take it "
                "out of the record")
    return ""


def _unwritable(text: str) -> str:
    """The first character of ``text`` no worksheet cell may hold, as ``U+0007``; ""
    when there is none.

    A control character other than tab and line breaks openpyxl refuses when the cell
    is filled. A lone surrogate (JSON's ``\\ud800``) or U+FFFE/U+FFFF it writes, but
    XML has no such character: the saved workbook cannot be opened, and the judge's
    whole output would be lost at collect.
    """
    for ch in text:
        code = ord(ch)
        if (code < 32 and ch not in "\t\n\r") or 0xD800 <= code <= 0xDFFF \
                or code in (0xFFFE, 0xFFFF):
            return f"U+{code:04X}"
    return ""


def _too_long(text: str) -> int:
    """The length of ``text`` in UTF-16 units when a cell cannot hold it, else 0: openpyxl
    cuts longer text at 32,767 code points without a word, so the judge's rationale
    would be imported cut short."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return units if units > CELL_LIMIT_UTF16 else 0


def _kind_of(code: str) -> str:
    """What the character :func:`_unwritable` named is, for the message."""
    value = int(code[2:], 16)
    return ("control character" if value < 32 else "lone surrogate"
            if 0xD800 <= value <= 0xDFFF else "non-character")


def _check_trio(rec: dict[str, Any], means: list[float | None], size: int,
                thresholds: Thresholds, bad: Any) -> None:
    if len(means) != size or any(m is None for m in means):
        return
    trio = sum(means) / size  # type: ignore[arg-type]
    stated = rec.get("trio_mean")
    if _is_number(stated) and abs(stated - trio) > MEAN_TOLERANCE:
        bad("trio_mean", f"{stated} stated, {trio:.4f} recomputed from the judges' scores")
    majority = size // 2 + 1
    strict = sum(m >= thresholds.strict_pass for m in means) >= majority  # type: ignore[operator]
    critical = sum(m < thresholds.critical_below for m in means) >= majority  # type: ignore[operator]
    for name, value, rule in (
            ("trio_strict_pass", strict, f"{majority} of {size} judges >= "
                                         f"{thresholds.strict_pass:g}"),
            ("trio_critical_fail", critical, f"{majority} of {size} judges < "
                                             f"{thresholds.critical_below:g}")):
        if isinstance(rec.get(name), bool) and rec[name] != value:
            bad(name, f"{rec[name]} stated, but {rule} is {value}")


def _check_response(rec: dict[str, Any], responses: Mapping[tuple[str, str], str],
                    bad: Any) -> None:
    key = (str(rec.get("task_id")), str(rec.get("cell_id")))
    if key not in responses:
        bad("task_id/cell_id", "no item has this task and cell")
        return
    text = rec.get("candidate_response")
    if isinstance(text, str) and _norm(text) != _norm(responses[key]):
        bad("candidate_response", "differs from the item's response text in the items file")


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value)


# --------------------------------------------------------------------------- summary


def pilot_summary(records: list[dict[str, Any]], judges: list[str],
                  hypotheses: list[dict[str, Any]], cells: Mapping[str, str], *,
                  pilot_id: str, window: str, min_tasks: int,
                  thresholds: Thresholds,
                  tolerance: float = DIRECTION_TOLERANCE) -> dict[str, Any]:
    """``pilot-summary.json`` in protocol 004's schema, from checked records.

    Parameters
    ----------
    records : list of dict
        Checked records with every judge present.
    judges : list of str
        The trio's judge keys.
    hypotheses : list of dict
        ``id`` (H2), ``better``/``worse`` (arm ids), optional ``name`` for the delta key
        (``h2_delta_opus``).
    cells : mapping
        Cell id (``A``) -> arm id, as in ``[analysis.params.jsonl] arms``.
    pilot_id, window : str
        The pilot's id and ``"<ISO start> to <ISO end>"``.
    min_tasks : int
        Tasks in which every hypothesis must be directional for PASS.
    thresholds : Thresholds
    tolerance : float
        A delta must exceed this to be directional.

    Returns
    -------
    dict
    """
    items = pd.DataFrame([_item(rec, judges, cells, thresholds) for rec in records],
                         columns=list(_ITEM_COLUMNS))
    deltas = hypothesis_table(items, hypotheses, tolerance)
    results = summary_results(items, deltas, pilot_verdict(deltas, items, min_tasks),
                              hypotheses, cells)
    return {
        "pilot_id": pilot_id,
        "execution_window_utc": window,
        "total_cost_usd": round(sum(r["candidate_cost_usd"] for r in records), 6),
        "total_judge_calls": len(records) * len(judges),
        "total_candidate_calls": len(records),
        **results,
    }


_ITEM_COLUMNS = ("case", "task", "arm", "trio_mean", "critical_fail", "critical_open",
                 "reason")


def _item(rec: dict[str, Any], judges: list[str], cells: Mapping[str, str],
          thresholds: Thresholds) -> dict[str, Any]:
    """A checked record as the item row :mod:`.pilot` computes from (every judge scored
    it: nothing is open)."""
    means = [judge_mean(rec[k]) for k in judges]
    majority = len(means) // 2 + 1
    return {"case": f"{rec['task_id']}/{rec['cell_id']}", "task": rec["task_id"],
            "arm": cells.get(rec["cell_id"], rec["cell_id"]), "trio_mean": sum(means) / len(means),
            "critical_fail": sum(m < thresholds.critical_below for m in means) >= majority,
            "critical_open": False, "reason": ""}
