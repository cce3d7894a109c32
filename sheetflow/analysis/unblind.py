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
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..collect.values import is_blank
from ..packs import seal as generator_seal
from ..spec.rubric import Dimension, Rubric
from ..spec.study import Study, read_table
from .context import DATA_COLUMNS, number

RATINGS_FILE = Path("out") / "ratings.csv"


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify_seal(study_dir: Path, study: Study, published: str | None = None,
                ) -> generator_seal.SealCheck:
    """Check the sealed key and plan lock; return what was read (key, its sha256, the
    secret, the sealed inputs' bytes).

    Parameters
    ----------
    study_dir : Path
        The study folder.
    study : Study
        The loaded study (its spec hash is compared with the frozen one).
    published : str, optional
        The key sha256 published before scoring.

    Returns
    -------
    SealCheck
        ``key`` as loaded from ``sealed/key.json``, ``key_sha256``, ``secret`` (read
        once and checked against the key; None for keys sealed before it) and
        ``input_bytes`` (the internal scores as hashed).

    Raises
    ------
    SealError
        A file is missing; the key's hash differs from ``sealed/key.sha256`` or the
        plan lock; the spec hashes of key, plan lock and study disagree; or a sealed
        input (the internal scores) changed (see :func:`sheetflow.packs.seal.verify_seal`).
    """
    return generator_seal.unseal(study_dir, study, published)


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
    rows: list[tuple[Any, ...]] = []  # tuples: a third of the time of dicts on 40k cards
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
                rows += [(rater, sitting, case, lab, str(arm), order)
                         for lab, arm in sides.items()]
            else:
                rows.append((rater, sitting, case, "", str(card.get("arm", "")), order))
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

# every column unblinding (and the batch times) reads; the collector's others (sheet,
# cell, file, hashes) are long text that reading would only turn into objects
RAW_COLUMNS = frozenset(c for options in _SYNONYMS.values() for c in options)


def _standard_columns(raw: pd.DataFrame) -> pd.DataFrame:
    """The collector's ratings table with this module's column names."""
    out = pd.DataFrame(index=raw.index)
    for name, options in _SYNONYMS.items():
        col = next((c for c in options if c in raw.columns), None)
        out[name] = _unneutralise(raw[col].astype(str)) if col else ""
    # parsed once per distinct text (a handful), not once per cell
    codes, texts = pd.factorize(out["sitting"])
    sittings = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").fillna(1)
    out["sitting"] = sittings.astype(int).to_numpy()[codes]
    return out


def _unneutralise(text: pd.Series) -> pd.Series:
    """Undo the CSV export's formula guard (a ``'`` before ``= + - @``)."""
    values = text.tolist()
    # one search over the joined column finds whether any cell starts with a quote
    # (a cell holding NUL before a quote only sends us to the exact scan below)
    if "\x00'" not in "\x00" + "\x00".join(values):
        return text
    guarded = [i for i, v in enumerate(values)
               if v[:1] == "'" and v[1:2] in _GUARDED_STARTS]
    if not guarded:
        return text
    out = text.copy()
    out.iloc[guarded] = [values[i][1:] for i in guarded]
    return out


_GUARDED_STARTS = frozenset("=+-@\t\r\n")


def unblind(study: Study, raw: pd.DataFrame, sides: pd.DataFrame) -> pd.DataFrame:
    """Turn the collector's tidy ratings into the unblinded analysable table.

    Vectorised: one pass of group numbering, one pivot of the parts, then each
    dimension's values are worked out over its unique raw values, not per rating.

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
        Columns :data:`DATA_COLUMNS`, one row per rating in the order the ratings table
        first names it, without totals (see :func:`add_totals`).
    """
    df = _standard_columns(raw)
    dims = {d.id: d for d in study.rubric.dimensions}
    df = df[df["dimension"].isin(list(dims))]  # batch times and other non-rubric fields
    if df.empty:
        return pd.DataFrame(columns=list(DATA_COLUMNS))
    gid = df.groupby(_RATING_KEYS, sort=False).ngroup().to_numpy()
    df = df.assign(gid=gid)
    starts = _first_rows(gid)
    # a rating's keys from its first cell (no key is ever missing, so as groupby first)
    ratings = df[_RATING_KEYS].iloc[starts].set_axis(pd.RangeIndex(len(starts), name="gid"))
    parts = _Parts(df, starts)
    ratings["confidence"] = parts.confidence()
    value = parts.chosen_value()
    out = np.empty(len(ratings), dtype=object)
    for dim_id, where in ratings.groupby("dimension").indices.items():
        out[where] = _dimension_values(dims[dim_id], value[where], parts, where)
    ratings["value"] = out
    ratings["arm"] = _arms(study, ratings, sides)
    preference = ratings["dimension"].isin(
        [d for d in dims if dims[d].kind == "preference"]).to_numpy()
    if preference.any():
        ratings.loc[preference, "value"] = _preferred_arms(
            study, ratings.loc[preference], sides)
    roles = {r.id: r.role for r in study.raters}
    ratings["role"] = ratings["rater"].map(roles).fillna("primary")
    return ratings.reset_index(drop=True)[list(DATA_COLUMNS)]


_RATING_KEYS = ["rater", "sitting", "case", "label", "dimension"]


def _first_rows(gid: np.ndarray) -> np.ndarray:
    """Row of each group's first cell, in group order (groups numbered as first seen)."""
    new = np.ones(len(gid), dtype=bool)
    new[1:] = gid[1:] > np.maximum.accumulate(gid)[:-1]
    return np.flatnonzero(new)


# a control character as the ratings table's raw column writes it (``_x0085_``)
_ESCAPED = re.compile(r"_x([0-9A-F]{4})_")


def _read_blank(raw: str) -> bool:
    """Whether collect read the raw text ``raw`` as a blank cell: only spaces, the
    zero-width space or control characters (those as ``_xHHHH_``). Its value is then
    blank; taking the raw text instead would make a pasted control character an
    answer (a gold dispute flagged, a label out of domain)."""
    return is_blank(_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), raw))


class _Parts:
    """The cells of every rating side by side: one row per rating, one column per part.

    Mirrors a per-rating ``dict(zip(part, value))``: the last cell of a part wins, and
    "the first part" is the part of the rating's first cell.
    """

    def __init__(self, df: pd.DataFrame, starts: np.ndarray):
        last = df.drop_duplicates(["gid", "part"], keep="last")
        self.values = _pivot_parts(last)
        # only the "value" cell's raw text is ever read (the fallback for a blank value)
        self.raw_value = last[last["part"] == "value"].set_index("gid")["raw"].reindex(
            self.values.index)
        self.first_part = pd.Series(df["part"].to_numpy()[starts], index=self.values.index)
        self.df = df

    def column(self, part: str) -> pd.Series:
        """One part's text per rating (NaN where the rating has no such cell)."""
        if part in self.values.columns:
            return self.values[part]
        return pd.Series(np.nan, index=self.values.index, dtype=object)

    def confidence(self) -> np.ndarray:
        """The confidence cell, else the first non-empty confidence column of the rating."""
        own = self.column("confidence").fillna("")
        listed = self.df[self.df["confidence"] != ""].groupby("gid")["confidence"].first()
        listed = listed.reindex(own.index, fill_value="")
        return np.where(own != "", own, listed).astype(object)

    def chosen_value(self) -> np.ndarray:
        """``value``, else the ``""`` part, else the first part; a blank falls back to raw."""
        table = self.values
        cols = {c: i for i, c in enumerate(table.columns)}
        first = table.to_numpy(dtype=object)[
            np.arange(len(table)), self.first_part.map(cols).to_numpy()]
        chosen = self.column("value").combine_first(self.column("")).to_numpy(dtype=object)
        chosen = np.where(pd.isna(chosen), first, chosen)
        raw = self.raw_value.fillna("").to_numpy(dtype=object)
        fill = (chosen == "") & (raw != "")
        if fill.any():  # a cell collect read as blank stays blank, whatever it held
            fill[fill] = [not _read_blank(text) for text in raw[fill]]
        return np.where(fill, raw, chosen).astype(object)

    def checklist(self, where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(has answers, number of Yes or NaN when one is blank) for the ratings at ``where``."""
        questions = [c for c in self.values.columns if str(c).startswith("q")]
        answers = self.values[questions].iloc[where] if questions else \
            pd.DataFrame(index=self.values.index[where])
        present = answers.notna()
        has_any = present.any(axis=1).to_numpy()
        blank = (present & (answers == "")).any(axis=1).to_numpy()
        counts = _yes_counts(answers.to_numpy(dtype=object))
        counts = np.array([int(c) for c in counts], dtype=object)
        return has_any, np.where(blank, np.nan, counts)


def _yes_counts(answers: np.ndarray) -> np.ndarray:
    """Per row of ``answers`` (text, NaN where absent), the answers that read "yes"
    (case and surrounding spaces aside): each distinct answer read once, as
    ``str.strip().str.lower()`` reads it (a value that is not text is no yes)."""
    codes, distinct = pd.factorize(answers.ravel())  # NaN: -1, the last entry below
    yes = np.array([isinstance(v, str) and v.strip().lower() == "yes"
                    for v in distinct.tolist()] + [False])
    return yes[codes].reshape(answers.shape).sum(axis=1)


def _pivot_parts(last: pd.DataFrame) -> pd.DataFrame:
    """``last.pivot(index="gid", columns="part", values="value")`` by array indexing.

    Every group number from 0 has a row, parts are sorted as pivot sorts them and
    each (gid, part) occurs once; the values stay objects, NaN where a part is absent.
    """
    at, parts = pd.factorize(last["part"], sort=True)
    gids = last["gid"].to_numpy()
    n_rows = int(gids.max()) + 1 if len(gids) else 0
    table = np.full((n_rows, len(parts)), np.nan, dtype=object)
    table[gids, at] = last["value"].to_numpy(dtype=object)
    return pd.DataFrame(table, index=pd.Index(np.arange(n_rows), name="gid"),
                        columns=pd.Index(parts, name="part"))


def _dimension_values(dim: Dimension, values: np.ndarray, parts: _Parts,
                      where: np.ndarray) -> np.ndarray:
    """The analysable values of one dimension's ratings (see the module docstring)."""
    text = pd.Series(values, dtype=object).fillna("")
    if dim.kind == "count":
        points = {v: _count_points(dim, v) for v in text.unique()}
        return text.map(points).to_numpy(dtype=object)
    if dim.kind in ("scale", "number", "checklist"):
        na = set(dim.na_choices) if dim.kind == "scale" else set()
        numbers = {v: (np.nan if v in na else number(v)) for v in text.unique()}
        out = text.map(numbers).to_numpy(dtype=object)
        if dim.kind == "checklist":
            has_any, counts = parts.checklist(where)
            out = np.where(has_any, counts, out)
        return out
    if dim.kind == "binary" and dim.blank_means:
        text = text.mask(text == "", dim.blank_means)
    # an N/A label stays as answered; the analyses apply the plan's na_handling
    out = text.to_numpy(dtype=object)
    return np.where(out == "", np.nan, out)


def _count_points(dim: Dimension, value: Any) -> float:
    count = number(value)
    return dim.points_for_count(int(count)) if not math.isnan(count) else np.nan


def _arms(study: Study, ratings: pd.DataFrame, sides: pd.DataFrame) -> np.ndarray:
    """The arm behind each rating: the key's side, else the item's arm column."""
    keys = ["rater", "sitting", "case", "label"]
    side = sides.drop_duplicates(keys, keep="last")
    at = _key_positions(side, ratings, keys)
    found = np.append(side["arm"].to_numpy(dtype=object), np.nan)[at]  # -1: not in key
    arm = pd.Series(found, index=ratings.index).fillna("")
    column = study.design.arm_column
    if column:
        item_arm = {it.id: it.fields.get(column, "") for it in study.items}
        fallback = ratings["case"].map(item_arm).fillna("")
        arm = arm.mask(arm == "", fallback)
    return arm.to_numpy(dtype=object)


def _key_positions(table: pd.DataFrame, query: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Row of ``table`` (unique on ``keys``) holding each query row's keys, else -1.

    The keys of both sides numbered together, one column at a time (as a MultiIndex
    lookup matches them, without building one over every rating).
    """
    code = np.zeros(len(table) + len(query), dtype=np.int64)
    for key in keys:
        both = np.concatenate([table[key].to_numpy(dtype=object),
                               query[key].to_numpy(dtype=object)])
        step, uniques = pd.factorize(both, use_na_sentinel=False)
        code, _ = pd.factorize(code * len(uniques) + step)  # stays below the row count
    return pd.Index(code[:len(table)]).get_indexer(code[len(table):])


def _preferred_arms(study: Study, prefs: pd.DataFrame, sides: pd.DataFrame) -> np.ndarray:
    """``"A>B"`` -> the arm shown under A (for this rater and case); ``Tied`` kept."""
    value = prefs["value"]
    text = value.map(lambda v: v if isinstance(v, str) else "")
    decisive = text.str.contains(">", regex=False)
    winner = text.str.split(">").str[0].str.strip()
    keys = ["rater", "sitting", "case", "label"]
    side = sides.drop_duplicates(keys, keep="last").set_index(keys)["arm"]
    lookup = pd.MultiIndex.from_arrays([prefs["rater"], prefs["sitting"], prefs["case"],
                                        winner])
    arm = pd.Series(side.reindex(lookup).to_numpy(), index=prefs.index)
    known = winner.isin(list(study.design.labels))
    resolved = arm.where(known, np.nan)
    return np.where(decisive, resolved, value).astype(object)


def internal_scores(study: Study, sealed: dict[str, bytes] | None = None,
                    ) -> pd.DataFrame | None:
    """The internal team's scores (``params.internal_scores_file``), if the plan names one.

    ``sealed`` holds the bytes the seal check hashed (:attr:`SealCheck.input_bytes`);
    when the file is among them those bytes are parsed, never the file read again.
    """
    name = study.plan.params.get("internal_scores_file")
    if not name:
        return None
    data = (sealed or {}).get(name)
    if data is None and not (study.root / name).exists():
        return None
    _, rows = read_table(study.root / name, data=data)
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
        # only ratings that exist: a pivot over every combination of the keys would
        # add empty "ratings" (e.g. a rater x label x arm pairing the key never made)
        wide = part.groupby([*keys, "dimension"], sort=False, dropna=False)["value"] \
            .first().unstack("dimension")
        wide = wide.reindex(columns=list(total.of))
        values = wide.sum(axis=1, skipna=False) if total.method == "sum" else \
            wide.mean(axis=1, skipna=False)
        frame = values.rename("value").reset_index()
        frame["dimension"], frame["confidence"] = total.id, ""
        extra.append(frame[list(DATA_COLUMNS)])
    return pd.concat([data, *extra], ignore_index=True)


NAMED_RATERS = 12
"""Raters a note on missing totals names before "and N more"."""


def missing_total_notes(data: pd.DataFrame, rubric: Rubric) -> list[str]:
    """A note per total that some ratings lack (a dimension of it left blank, where the
    rubric allows that): who, how many, and which dimensions were blank. The figures on
    the total leave those ratings out, so the panel that stands behind them is smaller
    than the one the analysis names."""
    notes = []
    for total in rubric.totals:
        rows = data[data["dimension"] == total.id]
        lacking = rows[pd.to_numeric(rows["value"], errors="coerce").isna()]
        if lacking.empty:
            continue
        parts = data[data["dimension"].isin(total.of)]
        blank = parts[pd.to_numeric(parts["value"], errors="coerce").isna()]
        dims = ", ".join(repr(d) for d in total.of if d in set(blank["dimension"]))
        left = f" ({dims} left blank)" if dims else ""
        if len(lacking) == len(rows):
            notes.append(f"{total.id}: no rating has a {total.id}{left}, so every figure "
                         f"on the {total.id} is undefined")
            continue
        counts = lacking.groupby("rater", sort=False).size()
        of = rows.groupby("rater", sort=False).size()
        named = [f"{rater} {n} of {of[rater]}" for rater, n in counts.items()]
        if len(named) > NAMED_RATERS:
            named = [*named[:NAMED_RATERS], f"and {len(named) - NAMED_RATERS} more"]
        notes.append(f"{total.id}: {len(lacking)} of {len(rows)} ratings have no "
                     f"{total.id}{left}: {', '.join(named)}; the figures on the "
                     f"{total.id} leave them out")
    return notes


def complete_columns(data: pd.DataFrame) -> pd.DataFrame:
    data = data.copy()
    defaults = {"role": "primary", "sitting": 1, "label": "", "confidence": "", "arm": ""}
    for col, default in defaults.items():
        if col not in data.columns:
            data[col] = default
    data["case"] = data["case"].astype(str)
    return data[list(DATA_COLUMNS)]
