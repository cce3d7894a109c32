"""Unseal and unblind: the sealed key and plan lock, the collector's ratings, totals.

The unblinded table has one row per rating: ``rater, role, sitting, case, label, arm,
dimension, value, confidence``. ``value`` is the analysable value: points for a count
dimension, the number of Yes for a checklist, the label for categorical, binary, flag
and preference dimensions (a preference is unblinded to the preferred arm id or
``Tied``), the text for text dimensions. Totals are added as rows whose ``dimension``
is the total's id.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import seal as generator_seal
from ..rubric import Dimension, Rubric
from ..study import Study, read_table
from .context import DATA_COLUMNS, number

RATINGS_FILE = Path("out") / "ratings.csv"


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify_seal(study_dir: Path, study: Study) -> tuple[dict[str, Any], str]:
    """Check the sealed key and plan lock; return the key and its sha256.

    Parameters
    ----------
    study_dir : Path
        The study folder.
    study : Study
        The loaded study (its spec hash is compared with the frozen one).

    Returns
    -------
    (dict, str)
        The key as loaded from ``sealed/key.json`` and its sha256.

    Raises
    ------
    SealError
        A file is missing; the key's hash differs from ``sealed/key.sha256`` or the
        plan lock; the spec hashes of key, plan lock and study disagree; or a sealed
        input (the internal scores) changed (see :func:`sheetflow.seal.verify_seal`).
    """
    return generator_seal.unseal(study_dir, study)


def key_sides(key: dict[str, Any]) -> pd.DataFrame:
    """Label -> arm per rater, sitting and case, from a sealed key.

    Parameters
    ----------
    key : dict
        The sealed key: per rater (and sitting) a list of cards, each with the item id
        and, in a paired design, a label -> arm mapping (``sides``), or an ``arm``.

    Returns
    -------
    pandas.DataFrame
        Columns ``rater, sitting, case, label, arm, order`` (``label`` empty in a single
        design).
    """
    rows: list[dict[str, Any]] = []
    for entry in key_entries(key):
        rater = str(entry.get("rater_id", entry.get("rater", "")))
        sitting = int(entry.get("sitting", 1))
        cards = entry.get("cases", entry.get("cards", []))
        for pos, card in enumerate(cards, 1):
            case = str(card.get("item_id", card.get("case", card.get("id", ""))))
            order = card.get("position", card.get("order", pos))
            sides = card.get("sides", card.get("labels"))
            if isinstance(sides, list):
                sides = dict(sides) if sides and isinstance(sides[0], list) else {
                    s["label"]: s["arm"] for s in sides}
            if sides:
                rows += [{"rater": rater, "sitting": sitting, "case": case, "label": lab,
                          "arm": str(arm), "order": order} for lab, arm in sides.items()]
            else:
                rows.append({"rater": rater, "sitting": sitting, "case": case, "label": "",
                             "arm": str(card.get("arm", "")), "order": order})
    return pd.DataFrame(rows, columns=["rater", "sitting", "case", "label", "arm", "order"])


def key_entries(key: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-rater (per-sitting) entries of a key, whichever container holds them."""
    for name in ("packs", "raters", "assignments"):
        value = key.get(name)
        if isinstance(value, list):
            return value
        if isinstance(value, dict):
            out = []
            for rater, entry in value.items():
                parts = entry if isinstance(entry, list) else [entry]
                out += [{"rater_id": rater, **p} for p in parts]
            return out
    return []


_SYNONYMS = {
    "rater": ("rater_id", "rater"),
    "sitting": ("sitting",),
    "case": ("item_id", "case_id", "case"),
    "label": ("label",),
    "dimension": ("dimension", "dimension_id"),
    "part": ("field", "part"),
    "value": ("value",),
    "raw": ("raw_value", "raw"),
    "confidence": ("confidence",),
}


def _standard_columns(raw: pd.DataFrame) -> pd.DataFrame:
    """The collector's ratings table with this module's column names."""
    out = pd.DataFrame(index=raw.index)
    for name, options in _SYNONYMS.items():
        col = next((c for c in options if c in raw.columns), None)
        out[name] = raw[col].astype(str).map(_unneutralise) if col else ""
    out["sitting"] = pd.to_numeric(out["sitting"], errors="coerce").fillna(1).astype(int)
    return out


def _unneutralise(text: str) -> str:
    """Undo the CSV export's formula guard (a ``'`` before ``= + - @``)."""
    return text[1:] if len(text) > 1 and text[0] == "'" and text[1] in "=+-@\t\r\n" else text


def unblind(study: Study, raw: pd.DataFrame, sides: pd.DataFrame) -> pd.DataFrame:
    """Turn the collector's tidy ratings into the unblinded analysable table.

    Parameters
    ----------
    study : Study
    raw : pandas.DataFrame
        ``out/ratings.csv`` as text.
    sides : pandas.DataFrame
        From :func:`key_sides`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`DATA_COLUMNS`, without totals (see :func:`add_totals`).
    """
    df = _standard_columns(raw)
    arm_of = {(r.rater, r.sitting, r.case, r.label): r.arm for r in sides.itertuples()}
    items = {it.id: it for it in study.items}
    roles = {r.id: r.role for r in study.raters}
    rows = []
    for (rater, sitting, case, label, dim_id), grp in df.groupby(
            ["rater", "sitting", "case", "label", "dimension"], sort=False):
        try:
            dim = study.rubric.dimension(dim_id)
        except KeyError:
            continue  # batch times and other non-rubric fields
        value, confidence = _analysable(dim, grp)
        arm = arm_of.get((rater, sitting, case, label), "")
        if not arm and case in items and study.design.arm_column:
            arm = items[case].fields.get(study.design.arm_column, "")
        if dim.kind == "preference":
            value = _preferred_arm(value, arm_of, rater, sitting, case, study)
        rows.append({"rater": rater, "role": roles.get(rater, "primary"), "sitting": sitting,
                     "case": case, "label": label, "arm": arm, "dimension": dim_id,
                     "value": value, "confidence": confidence})
    return pd.DataFrame(rows, columns=list(DATA_COLUMNS))


def _analysable(dim: Dimension, grp: pd.DataFrame) -> tuple[Any, str]:
    """One rating's analysable value and confidence from its raw cells."""
    parts = dict(zip(grp["part"], grp["value"], strict=False))
    raws = dict(zip(grp["part"], grp["raw"], strict=False))
    confidence = parts.get("confidence", "") or next(
        (c for c in grp["confidence"] if c), "")
    if dim.kind == "checklist":
        answers = [v for p, v in parts.items() if p.startswith("q")]
        if answers:
            return (sum(a.strip().lower() == "yes" for a in answers)
                    if all(a for a in answers) else np.nan), confidence
    value = parts.get("value", parts.get("", next(iter(parts.values()), "")))
    if value == "" and raws.get("value"):
        value = raws["value"]
    if dim.kind == "count":
        count = number(value)
        return (dim.points_for_count(int(count)) if not math.isnan(count) else np.nan,
                confidence)
    if dim.kind in ("scale", "number", "checklist"):
        if dim.kind == "scale" and value in dim.na_choices:
            return np.nan, confidence
        return number(value), confidence
    if dim.kind == "binary" and value == "" and dim.blank_means:
        return dim.blank_means, confidence
    if value in dim.na_choices:
        return np.nan, confidence
    return (value if value != "" else np.nan), confidence


def _preferred_arm(value: Any, arm_of: dict, rater: str, sitting: int, case: str,
                   study: Study) -> Any:
    """``"A>B"`` -> the arm shown under A (for this rater and case), ``Tied`` kept."""
    if not isinstance(value, str) or ">" not in value:
        return value
    winner = value.split(">")[0].strip()
    return arm_of.get((rater, sitting, case, winner), np.nan) if winner in \
        study.design.labels else np.nan


def internal_scores(study: Study) -> pd.DataFrame | None:
    """The internal team's scores (``params.internal_scores_file``), if the plan names one."""
    name = study.plan.params.get("internal_scores_file")
    if not name or not (study.root / name).exists():
        return None
    _, rows = read_table(study.root / name)
    frame = pd.DataFrame([r for _, r in rows])
    frame["total"] = pd.to_numeric(frame.get("total"), errors="coerce")
    return frame.rename(columns={"case_id": "case"})


def add_totals(data: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Append one row per rating and total, recomputed from its dimensions' points.

    A total is missing (NaN) when any of its dimensions is missing for that rating.
    """
    if not rubric.totals or data.empty:
        return data
    keys = ["rater", "role", "sitting", "case", "label", "arm"]
    extra = []
    for total in rubric.totals:
        part = data[data["dimension"].isin(total.of)].copy()
        part["value"] = pd.to_numeric(part["value"], errors="coerce")
        wide = part.pivot_table(index=keys, columns="dimension", values="value",
                                aggfunc="first", dropna=False)
        wide = wide.reindex(columns=list(total.of))
        values = wide.sum(axis=1, skipna=False) if total.method == "sum" else \
            wide.mean(axis=1, skipna=False)
        frame = values.rename("value").reset_index()
        frame["dimension"], frame["confidence"] = total.id, ""
        extra.append(frame[list(DATA_COLUMNS)])
    return pd.concat([data, *extra], ignore_index=True)


def complete_columns(data: pd.DataFrame) -> pd.DataFrame:
    data = data.copy()
    defaults = {"role": "primary", "sitting": 1, "label": "", "confidence": "", "arm": ""}
    for col, default in defaults.items():
        if col not in data.columns:
            data[col] = default
    data["case"] = data["case"].astype(str)
    return data[list(DATA_COLUMNS)]
