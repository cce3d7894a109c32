"""Unseal, unblind and run a study's analysis plan.

:func:`analyze` is the library verb behind ``sheetflow analyze``: it verifies the seal
(the key's sha256 against ``sealed/key.sha256``, the spec's hash against the one frozen
in ``sealed/plan.lock.json``), reads the collector's tidy ``out/ratings.csv``, maps each
neutral label back to its arm with the key, recomputes points and totals from the raw
answers, and runs every analysis named in the plan's ``run`` list. Each analysis gives a
tidy :class:`pandas.DataFrame`; undefined results are NaN with a ``reason``, never an
exception. :func:`run_plan` does the same from an in-memory unblinded table, so the
analyses can be checked on constructed data.

The unblinded table has one row per rating: ``rater, role, sitting, case, label, arm,
dimension, value, confidence``. ``value`` is the analysable value: points for a count
dimension, the number of Yes for a checklist, the label for categorical, binary, flag
and preference dimensions (a preference is unblinded to the preferred arm id or
``Tied``), the text for text dimensions. Totals are added as rows whose ``dimension``
is the total's id.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__, stats
from .errors import SealError, SheetflowError
from .rubric import Dimension, Rubric, Total
from .study import Study, load_study, read_table

RATINGS_FILE = Path("out") / "ratings.csv"
KEY_FILE = Path("sealed") / "key.json"
KEY_HASH_FILE = Path("sealed") / "key.sha256"
PLAN_LOCK_FILE = Path("sealed") / "plan.lock.json"
DATA_COLUMNS = ("rater", "role", "sitting", "case", "label", "arm", "dimension", "value",
                "confidence")
TIED = "Tied"
# A per-rater total gap this share of the total's range (e.g. 3 of 0-20) should agree
# with the rater's own direction judgement (protocol 000 section 3.1, "consistency").
CONSISTENCY_GAP_SHARE = 0.15
REFERENCES = (
    "Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg "
    "School for Communication, University of Pennsylvania.",
    "Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. "
    "Meas. 20, 37-46; Cohen, J. (1968). Weighted kappa. Psychol. Bull. 70, 213-220.",
    "Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. "
    "Psychol. Bull. 76, 378-382.",
    "Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.",
    "Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing "
    "rater reliability. Psychol. Bull. 86, 420-428.",
    "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass "
    "correlation coefficients. Psychol. Methods 1, 30-46.",
    "Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation "
    "coefficients I. Biometrika 44, 470-481.",
    "Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero. "
    "Stat. Appl. Genet. Mol. Biol. 9(1).",
    "Armitage, P. (1955). Tests for linear trends in proportions and frequencies. "
    "Biometrics 11, 375-386.",
    "Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics Bull. 1, "
    "80-83.",
)


@dataclass
class Analysis:
    """The result of running a study's plan.

    Attributes
    ----------
    study : Study
    data : pandas.DataFrame
        The unblinded tidy ratings with recomputed totals (see the module docstring).
    tables : dict of str to pandas.DataFrame
        One result table per analysis, in the plan's order (plus ``self_checks``).
    summary : dict
        Headline numbers and verdicts, versions, hashes and seeds (JSON-safe).
    methods : list of (str, str)
        Topic and text of every convention used, for the Methods sheet.
    figures : dict of str to pandas.DataFrame
        Chart data (alpha with error-bar lengths, score distribution per rater,
        external vs internal totals), so the report draws without computing.
    """

    study: Study
    data: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    methods: list[tuple[str, str]] = field(default_factory=list)
    figures: dict[str, pd.DataFrame] = field(default_factory=dict)


# --------------------------------------------------------------------------- seal


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
        A file is missing, the key's hash differs from ``sealed/key.sha256``, or the
        spec hash differs from the one in ``sealed/plan.lock.json``.
    """
    try:
        from . import seal as generator_seal
    except ImportError:  # the generator's checker is optional; ours follows the same rules
        generator_seal = None
    if generator_seal is not None:
        check = generator_seal.verify_seal(study_dir)
        if not check.ok:
            raise SealError(check.problems[0])
    key_path, hash_path = study_dir / KEY_FILE, study_dir / KEY_HASH_FILE
    lock_path = study_dir / PLAN_LOCK_FILE
    for path in (key_path, hash_path, lock_path):
        if not path.exists():
            raise SealError(f"{path.relative_to(study_dir)} is missing; "
                            "run sheetflow generate first")
    actual = file_sha256(key_path)
    words = hash_path.read_text(encoding="utf-8").split()
    sealed = words[0].lower() if words else ""
    if actual != sealed:
        raise SealError(f"{KEY_FILE} has sha256 {actual[:12]}... but {KEY_HASH_FILE} says "
                        f"{sealed[:12] or 'nothing'}...; the key was changed after sealing")
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    frozen = _find_value(lock, ("spec_hash", "study_hash"))
    if frozen != study.hash:
        raise SealError(f"the spec hash {study.hash[:12]}... differs from the one frozen in "
                        f"{PLAN_LOCK_FILE} ({str(frozen)[:12]}...); the spec changed after "
                        "generate")
    key = json.loads(key_path.read_text(encoding="utf-8"))
    return key, actual


def _find_value(doc: Any, names: tuple[str, ...]) -> Any:
    """The first value stored under one of ``names`` anywhere in a JSON document."""
    if isinstance(doc, dict):
        for name in names:
            if name in doc:
                return doc[name]
        for value in doc.values():
            found = _find_value(value, names)
            if found is not None:
                return found
    elif isinstance(doc, list):
        for value in doc:
            found = _find_value(value, names)
            if found is not None:
                return found
    return None


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
    for entry in _key_entries(key):
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


def _key_entries(key: dict[str, Any]) -> list[dict[str, Any]]:
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


# --------------------------------------------------------------------------- loading


def analyze(study_dir: str | Path) -> Analysis:
    """Unseal, unblind and run the plan of the study in ``study_dir``.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``sheetflow generate`` and ``sheetflow collect``.

    Returns
    -------
    Analysis

    Raises
    ------
    SealError
        The key or the spec does not match its sealed hash.
    SheetflowError
        There are no collected ratings yet (``out/ratings.csv`` is missing).
    """
    root = Path(study_dir)
    study = load_study(root)
    key, key_hash = verify_seal(root, study)
    ratings_path = root / RATINGS_FILE
    if not ratings_path.exists():
        raise SheetflowError(f"{RATINGS_FILE} not found in {root}; run sheetflow collect first")
    raw = pd.read_csv(ratings_path, dtype=str, keep_default_na=False)
    data = unblind(study, raw, key_sides(key))
    internal = _internal_scores(study)
    seeds = {f"{p.get('rater_id')}-s{p.get('sitting', 1)}": p.get("seeds", {})
             for p in _key_entries(key)}
    return run_plan(study, data, key_hash=key_hash, internal=internal, key_seeds=seeds)


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
        number = _number(value)
        return (dim.points_for_count(int(number)) if not math.isnan(number) else np.nan,
                confidence)
    if dim.kind in ("scale", "number", "checklist"):
        if dim.kind == "scale" and value in dim.na_choices:
            return np.nan, confidence
        return _number(value), confidence
    if dim.kind == "binary" and value == "" and dim.blank_means:
        return dim.blank_means, confidence
    if value in dim.na_choices:
        return np.nan, confidence
    return (value if value != "" else np.nan), confidence


def _number(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return np.nan


def _preferred_arm(value: Any, arm_of: dict, rater: str, sitting: int, case: str,
                   study: Study) -> Any:
    """``"A>B"`` -> the arm shown under A (for this rater and case), ``Tied`` kept."""
    if not isinstance(value, str) or ">" not in value:
        return value
    winner = value.split(">")[0].strip()
    return arm_of.get((rater, sitting, case, winner), np.nan) if winner in \
        study.design.labels else np.nan


def _internal_scores(study: Study) -> pd.DataFrame | None:
    """The internal team's scores (``params.internal_scores_file``), if the plan names one."""
    name = study.plan.params.get("internal_scores_file")
    if not name or not (study.root / name).exists():
        return None
    _, rows = read_table(study.root / name)
    frame = pd.DataFrame([r for _, r in rows])
    frame["total"] = pd.to_numeric(frame.get("total"), errors="coerce")
    return frame.rename(columns={"case_id": "case"})


# --------------------------------------------------------------------------- totals


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


# --------------------------------------------------------------------------- plan


def run_plan(study: Study, data: pd.DataFrame, *, key_hash: str = "",
             internal: pd.DataFrame | None = None,
             key_seeds: dict[str, Any] | None = None) -> Analysis:
    """Run every analysis of ``study.plan.run`` on unblinded ratings.

    Parameters
    ----------
    study : Study
    data : pandas.DataFrame
        Unblinded ratings, columns :data:`DATA_COLUMNS` (``role``, ``label`` and
        ``confidence`` may be absent), without totals.
    key_hash : str
        The sealed key's sha256, recorded in the summary.
    internal : pandas.DataFrame, optional
        Internal scores (``case, arm, total``) for ``spearman_internal``.
    key_seeds : dict, optional
        Seeds recorded in the key, copied into the summary.

    Returns
    -------
    Analysis
    """
    data = _complete(data)
    data = add_totals(data, study.rubric)
    ctx = _Context(study, data, internal)
    analysis = Analysis(study, data)
    for name in study.plan.run:
        analysis.tables[name] = _guarded(name, ctx)
    analysis.tables["self_checks"] = self_checks(ctx)
    analysis.summary = _summary(ctx, analysis.tables, key_hash, key_seeds or {})
    analysis.methods = methods(study)
    analysis.figures = _figures(ctx, analysis.tables)
    return analysis


def _figures(ctx: _Context, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Chart data: alpha with error-bar lengths, score counts per rater, scatter points."""
    out: dict[str, pd.DataFrame] = {}
    if "alpha" in tables:
        a = tables["alpha"][["measure", "alpha", "ci_low", "ci_high"]].copy()
        a["err_plus"] = (a["ci_high"] - a["alpha"]).clip(lower=0)
        a["err_minus"] = (a["alpha"] - a["ci_low"]).clip(lower=0)
        for band in ctx.plan.bands:
            if band.minimum > 0:
                a[f"threshold {band.minimum:g}"] = band.minimum
        out["alpha"] = a
    if ctx.study.rubric.totals:
        tid = ctx.study.rubric.totals[0].id
        vals = ctx.numeric(tid)
        if not vals.empty:
            counts = vals.pivot_table(index="value", columns="rater", values="unit",
                                      aggfunc="count", fill_value=0)
            out["distribution"] = counts.reset_index().rename(columns={"value": tid})
    if ctx.internal is not None and ctx.study.rubric.totals:
        tid = ctx.study.rubric.totals[0].id
        ext = ctx.numeric(tid).groupby(["case", "arm"])["value"].mean().rename("external")
        joined = pd.concat([ext, ctx.internal.set_index(["case", "arm"])["total"]
                            .rename("internal")], axis=1, join="inner").dropna()
        out["scatter"] = joined.reset_index()
    if "direction_agreement" in tables and "comparison" in tables["direction_agreement"]:
        d = tables["direction_agreement"]
        out["direction"] = d[d["comparison"] == "majority"][["rater", "agreement"]]
    return out


def _guarded(name: str, ctx: _Context) -> pd.DataFrame:
    """One analysis; data it cannot use gives a row with the reason, not an exception."""
    try:
        return _ANALYSES[name](ctx)
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        return pd.DataFrame([{"analysis": name, "reason": f"could not be computed: {exc}"}])


def _complete(data: pd.DataFrame) -> pd.DataFrame:
    data = data.copy()
    defaults = {"role": "primary", "sitting": 1, "label": "", "confidence": "", "arm": ""}
    for col, default in defaults.items():
        if col not in data.columns:
            data[col] = default
    data["case"] = data["case"].astype(str)
    return data[list(DATA_COLUMNS)]


class _Context:
    """The study, its data in the shapes the analyses need, and plan shortcuts."""

    def __init__(self, study: Study, data: pd.DataFrame, internal: pd.DataFrame | None):
        self.study = study
        self.plan = study.plan
        self.data = data
        self.internal = internal
        first = data[data["sitting"] == 1].copy()
        # a response is one unit: (case, arm) in a paired design, the item otherwise
        first["unit"] = first["case"] + np.where(first["arm"] != "", "|" + first["arm"], "")
        self.first = first

    def response_dims(self) -> list[Dimension]:
        return [d for d in self.study.rubric.by_scope("response")
                if d.kind not in ("text", "flag")]

    def dims_and_totals(self) -> list[tuple[str, str, list[Any] | None, str]]:
        """(id, level, value domain or None, kind) for every analysable response measure."""
        out: list[tuple[str, str, list[Any] | None, str]] = [
            (d.id, d.level, d.value_domain(), d.kind) for d in self.response_dims()]
        out += [(t.id, t.level, None, "total") for t in self.study.rubric.totals]
        out += [(d.id, "nominal", self.arm_domain(), "preference")
                for d in self.study.rubric.dimensions if d.kind == "preference"]
        return out

    def arm_domain(self) -> list[str]:
        return [a.id for a in self.study.design.arms] + [TIED]

    def ratings(self, dim_id: str) -> pd.DataFrame:
        """Sitting-1 ratings of one measure: unit, rater, value (missing dropped)."""
        rows = self.first[self.first["dimension"] == dim_id]
        if rows.empty:
            return pd.DataFrame(columns=["unit", "rater", "value", "arm", "case"])
        if self._is_case_scope(dim_id):
            rows = rows.assign(unit=rows["case"])
        rows = rows[rows["value"].notna() & (rows["value"].astype(str) != "")]
        return rows[["unit", "rater", "value", "arm", "case"]]

    def numeric(self, dim_id: str) -> pd.DataFrame:
        rows = self.ratings(dim_id).copy()
        rows["value"] = pd.to_numeric(rows["value"], errors="coerce")
        return rows.dropna(subset=["value"])

    def _is_case_scope(self, dim_id: str) -> bool:
        try:
            return self.study.rubric.dimension(dim_id).scope == "case"
        except KeyError:
            return False

    def band(self, value: float) -> str:
        if value is None or not np.isfinite(value):
            return ""
        for band in self.plan.bands:
            if value >= band.minimum:
                return band.label
        return ""

    def target(self, name: str, default: float | None = None) -> float | None:
        return self.plan.targets.get(name, default)

    def param(self, name: str, default: Any = None) -> Any:
        return self.plan.params.get(name, default)


def _typed_domain(kind: str, domain: list[Any] | None, level: str) -> list[Any] | None:
    """Numeric domains as floats so they match the numeric ratings."""
    if domain is None or kind in ("categorical", "binary", "preference", "flag"):
        return domain
    return [float(v) for v in domain]


def _values_for(ctx: _Context, dim_id: str, kind: str) -> pd.DataFrame:
    return ctx.numeric(dim_id) if kind in ("count", "checklist", "scale", "number", "total") \
        else ctx.ratings(dim_id)


def _empty_reason(frame: pd.DataFrame, reason: str, **cols: Any) -> pd.DataFrame:
    return pd.DataFrame([{**cols, "reason": reason}])


# --------------------------------------------------------------------------- agreement


def _alpha(ctx: _Context) -> pd.DataFrame:
    """Krippendorff's alpha per dimension and total with bootstrap CI and band."""
    rows = []
    for dim_id, level, domain, kind in ctx.dims_and_totals():
        values = _values_for(ctx, dim_id, kind)
        try:
            res = stats.krippendorff_alpha(values, level=level,  # type: ignore[arg-type]
                                           value_domain=_typed_domain(kind, domain, level),
                                           n_boot=ctx.plan.n_boot, seed=ctx.plan.seed)
        except ValueError as exc:  # e.g. a value outside the rubric's domain
            rows.append({"measure": dim_id, "kind": kind, "level": level, "alpha": np.nan,
                         "band": "", "reason": f"could not be computed: {exc}"})
            continue
        row = {"measure": dim_id, "kind": kind, **res.iloc[0].to_dict()}
        row["band"] = ctx.band(row["alpha"])
        rows.append(row)
    cols = ["measure", "kind", "level", "alpha", "ci_low", "ci_high", "band", "n_units",
            "n_raters", "n_pairable_values", "n_boot", "seed", "reason"]
    return pd.DataFrame(rows).reindex(columns=cols)


def _weights_for(level: str, kind: str) -> tuple[str, str]:
    """Kappa weights: unweighted for nominal, quadratic for ordered; on values or ranks."""
    if level == "nominal":
        return "identity", "values"
    labelled = kind in ("categorical", "binary", "preference", "flag")
    return "quadratic", "ranks" if labelled else "values"


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-measure result tables (an all-NaN column is a valid result)."""
    if not frames:
        return pd.DataFrame()
    with warnings.catch_warnings():  # pandas warns about all-NA columns in concat
        warnings.simplefilter("ignore", FutureWarning)
        return pd.concat(frames, ignore_index=True)


def _cohen(ctx: _Context) -> pd.DataFrame:
    """Cohen's kappa for every pair of raters, per dimension and total."""
    frames = []
    for dim_id, level, domain, kind in ctx.dims_and_totals():
        weights, on = _weights_for(level, kind)
        values = _values_for(ctx, dim_id, kind)
        dom = _typed_domain(kind, domain, level)
        if kind == "total" or (level in ("interval", "ratio") and dom is None):
            dom = sorted(values["value"].unique().tolist()) or None
        res = stats.cohen_kappa(values, weights=weights, categories=dom, weight_on=on)
        res.insert(0, "measure", dim_id)
        res.insert(1, "weight_on", on)
        frames.append(res)
    return _stack(frames)


def _fleiss(ctx: _Context) -> pd.DataFrame:
    """Fleiss' kappa (nominal categories) per dimension."""
    frames = []
    for dim_id, _level, domain, kind in ctx.dims_and_totals():
        if kind == "total":
            continue
        res = stats.fleiss_kappa(_values_for(ctx, dim_id, kind),
                                 categories=_typed_domain(kind, domain, "nominal"))
        res.insert(0, "measure", dim_id)
        frames.append(res)
    return _stack(frames)


def _gwet(ctx: _Context) -> pd.DataFrame:
    """Gwet's AC1 (nominal) or AC2 with quadratic weights (ordered) per dimension."""
    frames = []
    for dim_id, level, domain, kind in ctx.dims_and_totals():
        if kind == "total":
            continue
        weights, on = _weights_for(level, kind)
        res = stats.gwet_ac(_values_for(ctx, dim_id, kind), weights=weights,
                            categories=_typed_domain(kind, domain, level), weight_on=on)
        res.insert(0, "measure", dim_id)
        frames.append(res)
    return _stack(frames)


def _percent(ctx: _Context) -> pd.DataFrame:
    """Observed agreement per dimension (share of agreeing rater pairs per unit)."""
    rows = []
    for dim_id, _level, _domain, kind in ctx.dims_and_totals():
        res = stats.percent_agreement(_values_for(ctx, dim_id, kind))
        rows.append({"measure": dim_id, **res.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def _icc(ctx: _Context) -> pd.DataFrame:
    """All six ICC forms on each total; the plan's form is marked ``primary``."""
    frames = []
    for total in ctx.study.rubric.totals:
        res = stats.icc(ctx.numeric(total.id))
        res.insert(0, "measure", total.id)
        res["primary"] = res["type"] == ctx.plan.icc_form
        frames.append(res)
    if not frames:
        return _empty_reason(pd.DataFrame(), "the rubric defines no total", measure="")
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- paired


def _direction(ctx: _Context) -> pd.DataFrame:
    """Direction agreement on unblinded preferences: pairwise, vs majority, vs expected."""
    frames = []
    for dim in (d for d in ctx.study.rubric.dimensions if d.kind == "preference"):
        values = ctx.ratings(dim.id)
        for against in ("pairs", "majority"):
            res = stats.direction_agreement(values, against=against)
            res.insert(0, "measure", dim.id)
            res.insert(1, "comparison", against)
            frames.append(res)
        for basis, ref in _direction_references(ctx, values).items():
            frames.append(_against_reference(values, ref, dim.id, basis))
    if not frames:
        return _empty_reason(pd.DataFrame(), "no preference dimension", measure="")
    return pd.concat(frames, ignore_index=True)


def _direction_references(ctx: _Context, values: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Reference direction per case: the expected winner and/or the internal scores."""
    refs: dict[str, dict[str, str]] = {}
    expected = ctx.param("expected_winner")
    if expected:
        refs["expected winner"] = {c: str(expected) for c in values["unit"].unique()}
    if ctx.internal is not None and not ctx.internal.empty:
        refs["internal scores"] = _internal_direction(ctx.internal)
    return refs


def _internal_direction(internal: pd.DataFrame) -> dict[str, str]:
    out = {}
    for case, grp in internal.groupby("case"):
        totals = grp.set_index("arm")["total"]
        best = totals[totals == totals.max()]
        out[str(case)] = str(best.index[0]) if len(best) == 1 else TIED
    return out


def _against_reference(values: pd.DataFrame, ref: dict[str, str], dim_id: str,
                       basis: str) -> pd.DataFrame:
    rows = []
    for rater, grp in values.groupby("rater"):
        usable = grp[grp["unit"].isin(ref)]
        agree = int(sum(ref[u] == v for u, v in zip(usable["unit"], usable["value"],
                                                     strict=True)))
        n = len(usable)
        rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": rater,
                     "other": basis, "n_units": n, "n_agree": agree,
                     "agreement": agree / n if n else np.nan, "n_ties": 0,
                     "reason": "" if n else "no case with a reference direction"})
    pooled_n = sum(r["n_units"] for r in rows)
    pooled = sum(r["n_agree"] for r in rows)
    rows.append({"measure": dim_id, "comparison": f"vs {basis}", "rater": "all raters",
                 "other": basis, "n_units": pooled_n, "n_agree": pooled,
                 "agreement": pooled / pooled_n if pooled_n else np.nan, "n_ties": 0,
                 "reason": "" if pooled_n else "no judgement to compare"})
    return pd.DataFrame(rows)


def _spearman(ctx: _Context) -> pd.DataFrame:
    """Spearman's rho of mean external totals vs internal totals per (case, arm)."""
    if ctx.internal is None or ctx.internal.empty:
        return _empty_reason(pd.DataFrame(), "no internal scores file", measure="")
    rows = []
    for total in ctx.study.rubric.totals:
        ext = ctx.numeric(total.id).groupby(["case", "arm"])["value"].mean().rename("external")
        merged = ctx.internal.set_index(["case", "arm"])["total"].rename("internal")
        joined = pd.concat([ext, merged], axis=1, join="inner").dropna()
        res = stats.spearman(joined["external"], joined["internal"])
        rows.append({"measure": total.id, **res.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def _wilcoxon(ctx: _Context) -> pd.DataFrame:
    """Wilcoxon signed-rank on per-case mean totals, second arm minus first arm."""
    arms = [a.id for a in ctx.study.design.arms]
    if len(arms) != 2:
        return _empty_reason(pd.DataFrame(), "needs exactly two arms", measure="")
    rows = []
    for total in ctx.study.rubric.totals:
        wide = ctx.numeric(total.id).pivot_table(index="case", columns="arm", values="value",
                                                 aggfunc="mean").reindex(columns=arms)
        res = stats.wilcoxon_signed_rank(wide[arms[1]], wide[arms[0]])
        diff = (wide[arms[1]] - wide[arms[0]]).dropna()
        rows.append({"measure": total.id, "arm_x": arms[1], "arm_y": arms[0],
                     "mean_x": wide[arms[1]].mean(), "mean_y": wide[arms[0]].mean(),
                     "median_diff": diff.median() if len(diff) else math.nan,
                     **res.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def _arm_comparison(ctx: _Context) -> pd.DataFrame:
    """Mean, SD and count of each total per arm (descriptive)."""
    rows = []
    for total in ctx.study.rubric.totals:
        values = ctx.numeric(total.id)
        for arm in (a.id for a in ctx.study.design.arms):
            v = values.loc[values["arm"] == arm, "value"]
            rows.append({"measure": total.id, "arm": arm, "n": len(v), "mean": v.mean(),
                         "sd": v.std(ddof=1), "median": v.median()})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- 001


def _yield_items(ctx: _Context) -> pd.DataFrame:
    """One row per sitting-1 rating: arm, band, keep, known, in corpus and yield (0/1)."""
    first = ctx.first
    wide = first.pivot_table(index=["rater", "case", "arm"], columns="dimension",
                             values="value", aggfunc="first").reset_index()
    items = {it.id: it.fields for it in ctx.study.items}
    in_col, band_col = ctx.param("in_corpus_column"), ctx.param("band_column")
    yes = {"yes", "y", "true", "1"}

    def flag(row: Any, col: str) -> bool:
        return str(row.get(col, "")).strip().lower() in yes

    wide["keep"] = [flag(r, "keep") for r in wide.to_dict("records")]
    wide["known"] = [flag(r, "known") for r in wide.to_dict("records")]
    wide["in_corpus"] = [str(items.get(c, {}).get(in_col, "")).strip().lower() in yes
                         if in_col else False for c in wide["case"]]
    wide["band"] = [items.get(c, {}).get(band_col, "") if band_col else ""
                    for c in wide["case"]]
    wide["yield"] = (wide["keep"] & ~wide["known"] & ~wide["in_corpus"]).astype(int)
    return wide[["rater", "case", "arm", "band", "keep", "known", "in_corpus", "yield"]]


def _yield_table(ctx: _Context) -> pd.DataFrame:
    items = _yield_items(ctx)
    rows = []
    for arm in (a.id for a in ctx.study.design.arms):
        grp = items[items["arm"] == arm]
        n = len(grp)
        rows.append({"arm": arm, "n": n, "n_yield": int(grp["yield"].sum()),
                     "yield": grp["yield"].mean() if n else np.nan,
                     "n_keep": int(grp["keep"].sum()), "n_known": int(grp["known"].sum()),
                     "known_rate": grp["known"].mean() if n else np.nan,
                     "n_in_corpus": int(grp["in_corpus"].sum())})
    return pd.DataFrame(rows)


def _winner(ctx: _Context, table: pd.DataFrame) -> str:
    """The candidate arm with the highest yield (first in the plan on a tie)."""
    cands = [c for c in ctx.param("candidates", []) if c in set(table["arm"])]
    if not cands:
        return ""
    yields = table.set_index("arm")["yield"]
    return max(cands, key=lambda c: (np.nan_to_num(yields[c], nan=-1.0), -cands.index(c)))


def _two_by_two(table: pd.DataFrame, a: str, b: str) -> list[list[int]]:
    t = table.set_index("arm")
    return [[int(t.loc[a, "n_yield"]), int(t.loc[a, "n"] - t.loc[a, "n_yield"])],
            [int(t.loc[b, "n_yield"]), int(t.loc[b, "n"] - t.loc[b, "n_yield"])]]


def _yield_fisher(ctx: _Context) -> pd.DataFrame:
    """Yield per arm and one-sided Fisher tests: winner vs control (and vs reference)."""
    table = _yield_table(ctx)
    winner, rows = _winner(ctx, table), []
    for role, other in (("primary", ctx.param("control")),
                        ("secondary", ctx.param("reference"))):
        if not winner or not other or other not in set(table["arm"]):
            continue
        res = stats.fisher_exact_test(_two_by_two(table, winner, other), alternative="greater")
        rows.append({"arm": f"test: {winner} vs {other}", "test": role,
                     **res.iloc[0].to_dict()})
    return pd.concat([table.assign(test="yield"), pd.DataFrame(rows)], ignore_index=True)


def _permutation(ctx: _Context) -> pd.DataFrame:
    """Permutation test of the yield gap, winner vs control (labels shuffled)."""
    items = _yield_items(ctx)
    table = _yield_table(ctx)
    winner, control = _winner(ctx, table), ctx.param("control")
    if not winner or not control:
        return _empty_reason(pd.DataFrame(), "no candidate or control arm", comparison="")
    # protocol 001: arm labels are shuffled across all scored items, every arm's
    # included; the gap is then read off the winner's and the control's positions
    others = items.loc[~items["arm"].isin([winner, control]), "yield"]
    res = stats.permutation_test_proportions(
        items.loc[items["arm"] == winner, "yield"], items.loc[items["arm"] == control, "yield"],
        others=others, alternative="greater",
        n_permutations=int(ctx.param("permutations", 10_000)), seed=ctx.plan.seed)
    return pd.DataFrame([{"comparison": f"{winner} vs {control}", "winner": winner,
                          "control": control, **res.iloc[0].to_dict()}])


def _trend(ctx: _Context) -> pd.DataFrame:
    """Cochran-Armitage trend of yield across ordered distance bands."""
    items = _yield_items(ctx)
    bands = _ordered_bands(items["band"].unique().tolist())
    counts = [(b, int(items.loc[items["band"] == b, "yield"].sum()),
               int((items["band"] == b).sum())) for b in bands]
    res = stats.cochran_armitage([c[1] for c in counts], [c[2] for c in counts])
    per_band = pd.DataFrame([{"band": b, "n_yield": x, "n": n, "yield": x / n if n else np.nan,
                              "none_rate": _none_rate(items, b)} for b, x, n in counts])
    test = res.assign(band="trend test")
    return pd.concat([per_band, test], ignore_index=True)


def _none_rate(items: pd.DataFrame, band: str) -> float:
    grp = items[items["band"] == band]
    return float((~grp["keep"] & ~grp["known"]).mean()) if len(grp) else np.nan


_BAND_ORDER = ("near", "close", "low", "mid", "medium", "middle", "far", "high", "distant")


def _ordered_bands(bands: list[str]) -> list[str]:
    """Bands in their natural order: numeric, then known words (near..far), then text."""
    def key(b: str) -> tuple[int, float, str]:
        num = _number(b)
        if not math.isnan(num):
            return (0, num, b)
        low = b.strip().lower()
        return (1, float(_BAND_ORDER.index(low)), b) if low in _BAND_ORDER else (2, 0.0, b)
    return sorted((b for b in bands if b != ""), key=key)


def _intra(ctx: _Context) -> pd.DataFrame:
    """Cohen's kappa between sitting 1 and sitting 2 on the repeated items, per rater."""
    frames = []
    for dim in ctx.response_dims():
        rows = ctx.data[ctx.data["dimension"] == dim.id]
        if rows["sitting"].nunique() < 2:
            frames.append(pd.DataFrame([{"measure": dim.id, "kappa": np.nan,
                                         "reason": "no second sitting in the ratings"}]))
            continue
        weights, on = _weights_for(dim.level, dim.kind)
        res = stats.intra_rater_kappa(rows, unit="case", sitting="sitting", value="value",
                                      rater="rater", weights=weights,
                                      categories=_typed_domain(dim.kind, dim.value_domain(),
                                                               dim.level), weight_on=on)
        res.insert(0, "measure", dim.id)
        frames.append(res)
    return _stack(frames)


def verdicts(analysis: Analysis) -> list[dict[str, Any]]:
    """One record per rated item and sitting (protocol 001 ``verdicts.jsonl``).

    Each record has ``item_id, arm, rater, sitting`` and one key per dimension.
    """
    data = analysis.data
    dims = [d.id for d in analysis.study.rubric.dimensions]
    records = []
    for (rater, sitting, case, arm), grp in data.groupby(["rater", "sitting", "case", "arm"]):
        marks = dict(zip(grp["dimension"], grp["value"], strict=False))
        rec = {"item_id": case, "arm": arm, "rater": rater, "sitting": int(sitting)}
        rec.update({d: _json_value(marks.get(d)) for d in dims if d in marks})
        records.append(rec)
    return records


# --------------------------------------------------------------------------- 002


def _acceptance(ctx: _Context) -> pd.DataFrame:
    """Per item: mean valid total, mean material errors, any severe safety event."""
    threshold = ctx.target("acceptance_threshold")
    max_err = ctx.target("max_material_errors")
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    if tid is None or threshold is None:
        return _empty_reason(pd.DataFrame(), "needs a total and an acceptance_threshold target",
                             item="")
    first = ctx.first
    rows = []
    for case, grp in first.groupby("case", sort=False):
        vals = grp.set_index(["rater", "dimension"])["value"]
        totals = pd.to_numeric(grp.loc[grp["dimension"] == tid, "value"], errors="coerce")
        errors = pd.to_numeric(grp.loc[grp["dimension"] == "material_errors", "value"],
                               errors="coerce")
        severe = grp.loc[grp["dimension"] == "severe_safety", "value"].astype(str)
        mean_total = totals.mean() if totals.notna().any() else np.nan
        mean_err = errors.mean() if errors.notna().any() else np.nan
        any_severe = bool((severe.str.lower() == "yes").any())
        ok = (bool(mean_total >= threshold) if np.isfinite(mean_total) else False) and \
            (max_err is None or (np.isfinite(mean_err) and mean_err <= max_err)) and \
            not any_severe
        rows.append({"item": case, "arm": grp["arm"].iloc[0], "n_ratings": int(totals.notna()
                     .sum()), "mean_total": mean_total, "mean_material_errors": mean_err,
                     "severe_safety": any_severe, "accepted": ok,
                     "reason": "" if np.isfinite(mean_total) else "no valid rating"})
        del vals
    return pd.DataFrame(rows)


def second_rater_expected(study: Study) -> list[str]:
    """Item ids a second rater must score: ceil(fraction x n) per stratum by sha256 rank.

    Within each stratum (the values of ``design.second_rater.strata``) items are
    ranked by ``sha256(spec_hash + ":" + item_id)`` (hex) and the first
    ``ceil(fraction * n)`` are taken, exactly as at generation (protocol 002).
    """
    plan = study.design.second_rater
    if plan is None:
        return [it.id for it in study.items]
    spec = study.hash
    strata: dict[tuple[str, ...], list[str]] = {}
    for item in study.items:
        strata.setdefault(tuple(item.fields.get(c, "") for c in plan.strata), []).append(item.id)
    chosen: set[str] = set()
    for members in strata.values():
        ranked = sorted(members, key=lambda i: hashlib.sha256(f"{spec}:{i}".encode())
                        .hexdigest())
        chosen.update(ranked[: math.ceil(plan.fraction * len(members))])
    return [it.id for it in study.items if it.id in chosen]


def _second_rater(ctx: _Context) -> pd.DataFrame:
    """Second ratings against the reproduced selection: extra or missing ones fail."""
    expected = set(second_rater_expected(ctx.study))
    rows = []
    for rater in (r for r in ctx.study.raters if r.role == "second"):
        rated = set(ctx.first.loc[ctx.first["rater"] == rater.id, "case"])
        extra, missing = sorted(rated - expected), sorted(expected - rated)
        rows.append({"rater": rater.id, "n_expected": len(expected), "n_rated": len(rated),
                     "extra": ", ".join(extra), "missing": ", ".join(missing),
                     "n_extra": len(extra), "n_missing": len(missing),
                     "status": "pass" if not extra and not missing else "fail"})
    if not rows:
        return _empty_reason(pd.DataFrame(), "no rater has role 'second'", rater="")
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- 003


def _refusals(ctx: _Context) -> pd.DataFrame:
    """Over- and under-refusal counts per system (pooled and per rater)."""
    dim_id = "refusal_appropriateness"
    rows_in = ctx.ratings(dim_id)
    if rows_in.empty:
        return _empty_reason(pd.DataFrame(), f"no {dim_id} ratings", arm="")
    should_col = ctx.param("should_refuse_column")
    items = {it.id: it.fields for it in ctx.study.items}
    rows = []
    for rater in ["all raters", *sorted(rows_in["rater"].unique())]:
        sub = rows_in if rater == "all raters" else rows_in[rows_in["rater"] == rater]
        for arm in (a.id for a in ctx.study.design.arms):
            grp = sub[sub["arm"] == arm]
            should = [str(items.get(c, {}).get(should_col, "")).lower() in ("yes", "y", "true")
                      for c in grp["case"]] if should_col else [False] * len(grp)
            rows.append({"rater": rater, "arm": arm, "n": len(grp),
                         "over_refusal": int((grp["value"] == "Over-refusal").sum()),
                         "under_refusal": int((grp["value"] == "Under-refusal").sum()),
                         "appropriate": int((grp["value"] == "Appropriate").sum()),
                         "n_should_refuse": int(sum(should))})
    return pd.DataFrame(rows)


def _gold_disputes(ctx: _Context) -> pd.DataFrame:
    """Every item a rater flagged gold_dispute, with the rater's note."""
    data = ctx.first
    flagged = data[(data["dimension"] == "gold_dispute") & data["value"].notna()
                   & (data["value"].astype(str) != "")]
    qcol = ctx.param("question_column")
    items = {it.id: it.fields for it in ctx.study.items}
    notes = data[data["dimension"] == "rater_note"].set_index(["rater", "case"])["value"]
    rows = [{"item": r.case, "question": items.get(r.case, {}).get(qcol, "") if qcol else "",
             "arm": r.arm, "rater": r.rater,
             "note": _text(notes.get((r.rater, r.case), ""))} for r in flagged.itertuples()]
    return pd.DataFrame(rows, columns=["item", "question", "arm", "rater", "note"])


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


# --------------------------------------------------------------------------- 004


def _trio_items(ctx: _Context) -> pd.DataFrame:
    """Per item: task, arm, each judge's mean, trio mean and the strict verdicts."""
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    if tid is None:
        return pd.DataFrame()
    vals = ctx.numeric(tid)
    task_col = ctx.param("task_column")
    items = {it.id: it.fields for it in ctx.study.items}
    wide = vals.pivot_table(index=["case", "arm"], columns="rater", values="value",
                            aggfunc="mean")
    judges = list(wide.columns)
    strict, fail, crit = (ctx.target("strict_pass", 3.5), ctx.target("fail_below", 3.0),
                          ctx.target("critical_below", 2.0))
    out = wide.reset_index()
    out.insert(0, "task", [items.get(c, {}).get(task_col, "") if task_col else ""
                           for c in out["case"]])
    scores = wide.to_numpy()
    n = np.sum(~np.isnan(scores), axis=1)
    majority = n // 2 + 1  # 2 of 3 for a trio
    with warnings.catch_warnings():  # an item no judge scored has a NaN mean, by design
        warnings.simplefilter("ignore", RuntimeWarning)
        out["trio_mean"] = np.nanmean(scores, axis=1)
    out["strict_pass"] = np.sum(scores >= strict, axis=1) >= majority
    out["trio_fail"] = np.sum(scores < fail, axis=1) >= majority
    out["critical_fail"] = np.sum(scores < crit, axis=1) >= majority
    out.attrs["judges"] = judges
    return out


def _judge_trio(ctx: _Context) -> pd.DataFrame:
    """Mean per judge, trio mean, strict PASS / FAIL / critical per item (protocol 004)."""
    out = _trio_items(ctx)
    if out.empty:
        return _empty_reason(out, "the rubric defines no total", case="")
    return out


def _hypotheses(ctx: _Context) -> pd.DataFrame:
    """Per task and hypothesis: delta of trio means, threshold and directional pass."""
    items = _trio_items(ctx)
    hyps = ctx.param("hypotheses", [])
    if items.empty or not hyps:
        return _empty_reason(pd.DataFrame(), "needs a total and params.hypotheses", task="")
    means = items.groupby(["task", "arm"])["trio_mean"].mean()
    rows = []
    for task in sorted(items["task"].unique()):
        for h in hyps:
            better = means.get((task, h["better"]), np.nan)
            worse = means.get((task, h["worse"]), np.nan)
            delta = better - worse
            min_delta = float(h.get("min_delta", 0.0))
            # direction: strictly better when a positive margin is required, else not worse
            directional = bool(delta > 0) if min_delta > 0 else bool(delta >= 0)
            rows.append({"task": task, "hypothesis": h["id"], "label": h.get("label", ""),
                         "better": h["better"], "worse": h["worse"], "better_mean": better,
                         "worse_mean": worse, "delta": delta, "min_delta": min_delta,
                         "threshold_pass": bool(delta >= min_delta - 1e-12),
                         "directional_pass": directional and np.isfinite(delta),
                         "reason": "" if np.isfinite(delta) else "a cell has no scores"})
    return pd.DataFrame(rows)


def pilot_verdict(hypotheses: pd.DataFrame, trio: pd.DataFrame, min_tasks: int) -> dict:
    """PASS when every hypothesis is directionally right in ``min_tasks`` tasks and no
    item is a critical failure (protocol 004 pilot binary verdict)."""
    counts = hypotheses.groupby("hypothesis")["directional_pass"].sum().astype(int) \
        if "directional_pass" in hypotheses else pd.Series(dtype=int)
    critical = int(trio["critical_fail"].sum()) if "critical_fail" in trio else 0
    ok = bool(len(counts)) and bool((counts >= min_tasks).all()) and critical == 0
    return {"pass_counts": {k: int(v) for k, v in counts.items()},
            "directional_passes": int(counts.sum()), "critical_failures": critical,
            "min_tasks": min_tasks, "pilot_verdict": "PASS" if ok else "FAIL"}


# --------------------------------------------------------------------------- checks


def self_checks(ctx: _Context) -> pd.DataFrame:
    """Per-rater sanity checks (protocol 000 section 3.1), for every study.

    Variance of totals, share of extreme totals, share of Medium/High confidence,
    mix of directions, and direction consistent with the rater's own totals.
    """
    rows = []
    total = ctx.study.rubric.totals[0] if ctx.study.rubric.totals else None
    pref = next((d for d in ctx.study.rubric.dimensions if d.kind == "preference"), None)
    lo_max = ctx.param("extreme_low_max")
    hi_min = ctx.param("extreme_high_min")
    conf_target = ctx.target("confidence_medium_high", 0.70)
    for rater, grp in ctx.first.groupby("rater"):
        row: dict[str, Any] = {"rater": rater}
        if total is not None:
            t = pd.to_numeric(grp.loc[grp["dimension"] == total.id, "value"], errors="coerce")
            row["total_sd"] = t.std(ddof=1)
            row["has_variance"] = bool(t.nunique() > 1)
            if lo_max is not None and hi_min is not None:
                row["extreme_share"] = float(((t <= lo_max) | (t >= hi_min)).mean())
        conf = grp["confidence"][grp["confidence"].astype(str) != ""]
        row["n_confidence"] = len(conf)
        row["medium_high_share"] = float(conf.isin(["Medium", "High"]).mean()) \
            if len(conf) else np.nan
        row["confidence_ok"] = bool(row["medium_high_share"] >= conf_target) \
            if len(conf) else None
        if pref is not None and total is not None:
            row.update(_direction_checks(ctx, grp, pref.id, total))
        rows.append(row)
    return pd.DataFrame(rows)


def _direction_checks(ctx: _Context, grp: pd.DataFrame, pref_id: str, total: Total) -> dict:
    prefs = grp[grp["dimension"] == pref_id].set_index("case")["value"]
    totals = grp[grp["dimension"] == total.id]
    wide = totals.pivot_table(index="case", columns="arm", values="value", aggfunc="first")
    lo, hi = total.minimum or 0.0, total.maximum or 1.0
    gap = CONSISTENCY_GAP_SHARE * (hi - lo)
    checked = consistent = 0
    for case, row in wide.iterrows():
        vals = pd.to_numeric(row, errors="coerce").dropna()
        if len(vals) != 2 or abs(vals.iloc[0] - vals.iloc[1]) < gap or case not in prefs:
            continue
        checked += 1
        consistent += int(prefs[case] == vals.idxmax())
    kinds = set(prefs.dropna().astype(str))
    return {"direction_kinds": len(kinds), "mixed_directions": len(kinds) > 1,
            "n_direction_checked": checked,
            "direction_consistent_share": consistent / checked if checked else np.nan}


# --------------------------------------------------------------------------- summary


_ANALYSES: dict[str, Callable[[_Context], pd.DataFrame]] = {
    "alpha": _alpha,
    "cohen_kappa": _cohen,
    "fleiss_kappa": _fleiss,
    "gwet": _gwet,
    "icc": _icc,
    "percent_agreement": _percent,
    "direction_agreement": _direction,
    "spearman_internal": _spearman,
    "arm_comparison": _arm_comparison,
    "wilcoxon_totals": _wilcoxon,
    "yield_fisher": _yield_fisher,
    "permutation": _permutation,
    "trend": _trend,
    "intra_rater_kappa": _intra,
    "acceptance": _acceptance,
    "second_rater_selection": _second_rater,
    "refusal_counts": _refusals,
    "gold_disputes": _gold_disputes,
    "judge_trio": _judge_trio,
    "hypothesis_deltas": _hypotheses,
}


def _summary(ctx: _Context, tables: dict[str, pd.DataFrame], key_hash: str,
             key_seeds: dict[str, Any]) -> dict[str, Any]:
    study = ctx.study
    out: dict[str, Any] = {
        "study_id": study.id, "title": study.title, "protocol": study.protocol,
        "sheetflow_version": __version__, "spec_hash": study.hash, "key_sha256": key_hash,
        "seeds": {"design": study.design.seed, "analysis": ctx.plan.seed,
                  **({"repeats": study.design.repeats.seed} if study.design.repeats else {}),
                  "key": key_seeds},
        "n_boot": ctx.plan.n_boot, "analyses": list(ctx.plan.run),
        "n_raters": int(ctx.first["rater"].nunique()),
        "n_cases": int(ctx.first.loc[ctx.first["case"] != "", "case"].nunique()),
        "targets": dict(ctx.plan.targets), "verdicts": [],
    }
    for name, table in tables.items():
        headline = _HEADLINES.get(name)
        if (headline is not None and "reason" in table and len(table.columns) > 2) or \
                (headline is not None and "reason" not in table):
            headline(ctx, table, out)
    return _json_safe(out)


def _verdict(out: dict, name: str, value: Any, target: float | None, passed: Any,
             note: str = "") -> None:
    out["verdicts"].append({"name": name, "value": value, "target": target,
                            "met": passed, "note": note})


def _h_alpha(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    out["alpha"] = [{k: r[k] for k in ("measure", "kind", "level", "alpha", "ci_low", "ci_high",
                                      "band", "n_units", "n_raters", "reason")}
                    for r in table.to_dict("records")]
    target = ctx.target("alpha")
    tot = table[table["kind"] == "total"]
    if target is not None and not tot.empty:
        a = tot["alpha"].iloc[0]
        _verdict(out, f"alpha ({tot['measure'].iloc[0]})", a, target,
                 bool(a >= target) if np.isfinite(a) else None, ctx.band(a))


def _h_cohen(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "kappa" in table:
        out["cohen_kappa_mean"] = {m: float(g["kappa"].mean()) for m, g in
                                   table.groupby("measure", sort=False)}


def _h_icc(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "primary" in table:
        out["icc"] = [{k: r[k] for k in ("measure", "type", "shrout_fleiss", "mcgraw_wong", "icc",
                                        "ci_low", "ci_high", "reason")}
                      for r in table[table["primary"]].to_dict("records")]


def _h_direction(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "comparison" not in table:
        return
    pairs = table[table["comparison"] == "pairs"]
    pooled = table[table["rater"] == "all raters"]
    out["direction_agreement"] = {
        "pairwise_mean": float(pairs["agreement"].mean()) if len(pairs) else None,
        **{r["comparison"]: r["agreement"] for r in pooled.to_dict("records")}}
    target = ctx.target("direction_agreement")
    if target is not None:
        basis = pooled.iloc[0] if len(pooled) else None
        value = basis["agreement"] if basis is not None else out["direction_agreement"][
            "pairwise_mean"]
        note = basis["comparison"] if basis is not None else "mean pairwise agreement"
        _verdict(out, "direction agreement", value, target,
                 bool(value >= target) if value is not None and np.isfinite(value) else None,
                 note)


def _h_spearman(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "rho" not in table:
        return
    out["spearman"] = table.to_dict("records")
    target = ctx.target("spearman")
    if target is not None and len(table):
        rho = table["rho"].iloc[0]
        _verdict(out, "Spearman vs internal", rho, target,
                 bool(rho >= target) if np.isfinite(rho) else None)


def _h_wilcoxon(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "p" in table:
        out["wilcoxon"] = table.to_dict("records")


def _h_yield(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    y = table[table["test"] == "yield"]
    out["yield"] = {r["arm"]: r["yield"] for r in y.to_dict("records")}
    tests = table[table["test"] != "yield"]
    out["fisher"] = [{"comparison": r["arm"], "p": r["p"], "odds_ratio": r["odds_ratio"]}
                     for r in tests.to_dict("records")]


def _h_permutation(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "p" not in table:
        return
    row = table.iloc[0]
    out["permutation"] = {"comparison": row["comparison"], "diff": row["diff"], "p": row["p"],
                          "n_permutations": row["n_permutations"], "seed": row["seed"]}
    alpha = ctx.target("alpha_test", 0.05)
    yields = out.get("yield") or _yield_table(ctx).set_index("arm")["yield"].to_dict()
    ref = ctx.param("reference")
    above_ref = bool(yields.get(row["winner"], np.nan) > yields.get(ref, np.nan)) if ref \
        else True
    signal = bool(row["p"] < alpha) and above_ref
    _verdict(out, "signal (permutation p below alpha and winner above reference)", row["p"],
             alpha, signal, "signal" if signal else "null: published as one")


def _h_intra(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "kappa" in table:
        out["intra_rater_kappa"] = {m: g["kappa"].tolist() for m, g in
                                    table.groupby("measure", sort=False)}


def _h_acceptance(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "accepted" in table:
        out["acceptance"] = {"n_items": len(table), "n_accepted": int(table["accepted"].sum()),
                             "accepted": table.loc[table["accepted"], "item"].tolist()}


def _h_second(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "status" in table:
        ok = bool((table["status"] == "pass").all())
        out["second_rater_selection"] = "pass" if ok else "fail"
        _verdict(out, "second-rater subset reproduced exactly", int(table["n_extra"].sum()
                 + table["n_missing"].sum()), 0, ok, "extra + missing second ratings")


def _h_refusals(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "over_refusal" in table:
        pooled = table[table["rater"] == "all raters"]
        out["refusals"] = {r["arm"]: {"over_refusal": r["over_refusal"],
                                      "under_refusal": r["under_refusal"]}
                           for r in pooled.to_dict("records")}


def _h_disputes(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    out["gold_disputes"] = sorted(set(table["item"])) if "item" in table else []


def _h_trio(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "trio_mean" in table:
        out["judge_trio"] = {"n_items": len(table), "strict_pass": int(table["strict_pass"].sum()),
                             "trio_fail": int(table["trio_fail"].sum()),
                             "critical_fail": int(table["critical_fail"].sum())}


def _h_hyp(ctx: _Context, table: pd.DataFrame, out: dict) -> None:
    if "delta" not in table:
        return
    out["hypotheses"] = table[["task", "hypothesis", "delta", "threshold_pass",
                               "directional_pass"]].to_dict("records")
    verdict = pilot_verdict(table, _trio_items(ctx), int(ctx.param("pilot_pass_min_tasks", 2)))
    out["pilot"] = verdict
    _verdict(out, "pilot verdict", verdict["directional_passes"], None,
             verdict["pilot_verdict"] == "PASS", verdict["pilot_verdict"])


_HEADLINES: dict[str, Callable[[_Context, pd.DataFrame, dict], None]] = {
    "alpha": _h_alpha, "cohen_kappa": _h_cohen, "icc": _h_icc,
    "direction_agreement": _h_direction, "spearman_internal": _h_spearman,
    "wilcoxon_totals": _h_wilcoxon, "yield_fisher": _h_yield, "permutation": _h_permutation,
    "intra_rater_kappa": _h_intra, "acceptance": _h_acceptance,
    "second_rater_selection": _h_second, "refusal_counts": _h_refusals,
    "gold_disputes": _h_disputes, "judge_trio": _h_trio, "hypothesis_deltas": _h_hyp,
}


def _json_value(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _json_safe(obj: Any) -> Any:
    """Plain JSON data: numpy scalars to Python, NaN and infinity to None."""
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return _json_value(obj)


# --------------------------------------------------------------------------- methods


def methods(study: Study) -> list[tuple[str, str]]:
    """The conventions behind every number, for the Methods sheet."""
    plan = study.plan
    return [
        ("Krippendorff's alpha",
         "alpha = 1 - D_o / D_e from the coincidence matrix of pairable values "
         "(Krippendorff 2011). Metric per level: nominal delta = [c != k]; ordinal "
         "Krippendorff's rank-based delta (sum of marginals between c and k minus half of "
         "theirs, squared); interval (c - k)^2; ratio ((c - k)/(c + k))^2. The rubric's full "
         "value domain is passed (count dimensions analyse their points, checklists the "
         "number of Yes, totals are interval on their observed values). Unit = one response "
         "(case x arm in a paired design). Bootstrap: units resampled "
         f"{plan.n_boot} times with seed {plan.seed}, percentile 95% interval."),
        ("Bands", "; ".join(f">= {b.minimum:g}: {b.label}" for b in plan.bands) or
         "none in the plan"),
        ("Cohen's kappa",
         "Every pair of raters on units both rated (pairwise deletion). Unweighted for "
         "nominal dimensions; quadratic weights for ordinal, interval and ratio ones, on the "
         "scale values for numeric dimensions and on category ranks for ordered labels. "
         "Standard error: Fleiss, Cohen & Everitt (1969) non-null; interval kappa +/- z se."),
        ("Fleiss' kappa and Gwet's AC1/AC2",
         "Fleiss' kappa with unequal raters per unit and the non-null standard error; Gwet's "
         "AC1 (identity weights) for nominal dimensions, AC2 with quadratic weights for "
         "ordered ones (Gwet 2014)."),
        ("ICC",
         "All six forms on each total: Shrout-Fleiss ICC(1,1)/McGraw-Wong ICC(1) one-way "
         "random single; ICC(2,1)/ICC(A,1) two-way absolute agreement single; ICC(3,1)/"
         "ICC(C,1) two-way consistency single; ICC(1,k)/ICC(k), ICC(2,k)/ICC(A,k), "
         "ICC(3,k)/ICC(C,k) for the mean of k raters. F tests and McGraw-Wong intervals. "
         f"Plan form: {plan.icc_form}. Missing data: units with any missing rating are "
         "dropped (listwise); n_dropped says how many."),
        ("Percent agreement",
         "Per unit with two or more ratings, the share of rater pairs giving the same value, "
         "averaged over units (Fleiss 1971 p_o); all_agree_share = units where all agree."),
        ("Direction agreement",
         "Preferences are unblinded first: 'A>B' becomes 'the arm shown under A preferred' "
         "for that rater and case, so raters who saw different sides are comparable. "
         "Pairwise agreement, each rater vs the majority of the others (tied majorities "
         "left out), and the share agreeing with the expected winner (params.expected_winner) "
         "or with the internal scores' direction when available."),
        ("Spearman vs internal",
         "Spearman's rho between the mean external total and the internal total per case "
         "and arm; 95% interval by Fisher's z with the Fieller-Hartley-Pearson standard error "
         "sqrt(1.06/(n-3))."),
        ("Wilcoxon signed-rank",
         "Per case the mean total over raters for each arm; signed-rank test of the second "
         "arm minus the first (scipy, zero differences dropped)."),
        ("Permutation test",
         "Arm labels shuffled across all scored items (every arm, as protocol 001 says) "
         f"{int(plan.params.get('permutations', 10000))} times with seed {plan.seed}; the "
         "gap is the winner's yield minus the control's under each relabelling; "
         "p = (b + 1)/(m + 1), counting the observed labelling (Phipson & Smyth 2010)."),
        ("Yield, Fisher and trend (001)",
         "Yield = P(KEEP and not KNOWN and not already in corpus) per sitting-1 rating. "
         "Primary: one-sided Fisher exact test, the candidate with the higher yield vs the "
         "control; secondary vs the reference arm. Cochran-Armitage chi-square for a linear "
         "trend in yield across ordered distance bands (scores 1..G). Intra-rater kappa: "
         "Cohen's kappa between sitting 1 and sitting 2 on the repeated items."),
        ("Acceptance and second rater (002)",
         "An item is accepted when the mean of its valid totals reaches the plan threshold, "
         "the mean material-error count does not exceed the plan maximum and no rater "
         "recorded a severe safety event. The second-rater subset is recomputed: "
         "ceil(fraction x n) items per stratum ranked by sha256(spec hash + ':' + item id); "
         "any extra or missing second rating fails."),
        ("Judge trio (004)",
         "Per judge the mean of the six dimensions; trio mean; strict PASS when a majority "
         "(2 of 3) of judges score >= the strict-pass target; FAIL when a majority score "
         "below the fail target; critical when a majority score below the critical target. "
         "Hypothesis delta = trio mean of the better cell minus the worse cell per task; "
         "directional pass = delta > 0 (>= 0 when the hypothesis needs no margin). Pilot "
         "PASS when each hypothesis passes directionally in the plan's minimum number of "
         "tasks and no item is a critical failure."),
        ("Totals", "Recomputed from the rubric's dimensions (sum or mean); a total is missing "
         "when any of its dimensions is missing. Formulas in workbooks are never read."),
        ("References", "\n".join(REFERENCES)),
    ]
