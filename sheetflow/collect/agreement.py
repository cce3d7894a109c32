"""Agreement while returns come in, from the blinded ratings alone (``status --agreement``).

Calibration needs no arms: whether raters agree is a question about the ratings, and
the key stays sealed. Each response is recognised across raters by the sha256 of its
text, which the blinded manifest records for every row (raters see one response under
different labels, so a label says nothing across raters; the text hash does). The
unit of a response-level dimension (and of a total) is ``(item, response text
sha256)``; of a case-level dimension, the item. A preference dimension gets a row with
no alpha that says why: a direction names a label, and labels mean different responses
to different raters. Nothing under ``sealed/`` is read.

Per dimension and per total: Krippendorff's alpha at the rubric's level over the values
observed, with its bootstrap interval (the plan's ``n_boot`` and seed), and for each
rater the change in alpha when that rater is left out (leave-one-out), so a rater who
misread the rubric is seen while there is time to talk to them.

The alpha is the one ``analyze`` computes on the same ratings; its interval may differ a
little (:data:`PREVIEW_NOTE`): the bootstrap draws units by their position, and analyze
orders a case's responses by arm, which only the sealed key tells.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..errors import MissingStepError
from ..hints import command_line
from ..packs.manifest import open_manifest
from ..spec.study import Study, load_study
from .outputs import COLLECTION_FILE, OUT_DIR, RATINGS_NAME, verify_ratings

_NUMERIC = ("scale", "number", "count", "checklist", "total")
_POINTS = ("count", "checklist")  # analysed on their points (binned count, Yes count)
_LABELLED = ("categorical", "binary")  # values are labels, not numbers
_LEFT_OUT_KINDS = ("preference", "text")
PREFERENCE_LEFT_OUT = ("no alpha before analyze: a direction names a label, and a label "
                       "shows different responses to different raters (analyze reads it "
                       "by arm, with the key)")
PREVIEW_NOTE = ("a preview from the blinded ratings ({n_boot:,} resamples, seed {seed}): "
                "each alpha is analyze's on the same ratings, but an interval may differ a "
                "little from analyze's, which orders each case's responses by arm (sealed); "
                "analyze's figures are final")


@dataclass
class DimensionAgreement:
    """Alpha on the blinded ratings of one dimension, and each rater's leave-one-out."""

    dimension: str
    level: str
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    n_units: int
    n_raters: int
    leave_one_out: dict[str, float | None] = field(default_factory=dict)
    """Rater -> alpha without them minus alpha with everyone."""
    raises_most: str = ""
    """The rater whose removal raises alpha most ("" when none raises it)."""
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def blinded_agreement(study_dir: str | Path) -> list[DimensionAgreement]:
    """Alpha per dimension on the returns collected so far, without the key.

    Parameters
    ----------
    study_dir : str or Path
        A study after ``collect`` (``out/ratings.csv``).

    Returns
    -------
    list of DimensionAgreement
        One per response- or case-level dimension with values to agree on (preference
        dimensions named without one; text and flag dimensions left out, as analyze
        leaves them; see the module notes); counts and checklists
        on their points, as the analysis takes them.
    """
    study, ratings, text_of = _blinded_inputs(Path(study_dir))
    out = []
    for dim in study.rubric.dimensions:
        # analyze gives a flag (a mark, blank when not made) no alpha either: the preview
        # read its blanks as missing ratings, "fewer than two raters on any unit so far"
        if dim.scope == "study" or dim.kind in ("text", "flag"):
            continue
        if dim.kind == "preference":  # named, so the list shows every measure analyze has
            out.append(DimensionAgreement(dim.id, "nominal", None, None, None, 0, 0,
                                          reason=PREFERENCE_LEFT_OUT))
            continue
        rows = _rows_of(ratings, dim.id, dim.kind)
        # labels carry no order of their own: an ordinal one is compared in the rubric's
        # order, as analyze does (without it alpha refuses ordered text)
        domain = dim.value_domain() if dim.kind in _LABELLED else None
        out.append(_agreement(study, dim.id, dim.level, _matrix(rows, dim.kind, text_of,
                                                                dim.na_choices), domain))
    for total in study.rubric.totals:  # the measure the decision rests on
        rows = _rows_of(ratings, total.id, "total")
        out.append(_agreement(study, total.id, total.level,
                              _matrix(rows, "total", text_of, ())))
    return out


def check_collected(study_dir: str | Path) -> None:
    """Raise :class:`MissingStepError` when collect has written no ratings yet (before
    anything else is shown: the agreement cannot be computed)."""
    root = Path(study_dir)
    if not (root / OUT_DIR / RATINGS_NAME).exists() and \
            not (root / OUT_DIR / COLLECTION_FILE).exists():  # not "collect again"
        raise MissingStepError(f"{root / OUT_DIR / RATINGS_NAME}: no ratings collected yet",
                               command_line("collect", root))


def blinded_matrix(study_dir: str | Path, dimension: str) -> pd.DataFrame:
    """The raters x units table :func:`blinded_agreement` computes alpha on."""
    study, ratings, text_of = _blinded_inputs(Path(study_dir))
    dim = study.rubric.dimension(dimension)
    return _matrix(_rows_of(ratings, dimension, dim.kind), dim.kind, text_of, dim.na_choices)


def _blinded_inputs(root: Path) -> tuple[Study, pd.DataFrame, dict[str, str]]:
    """The study, its sitting-1 blinded ratings (checked against collect's record) and
    each row id's response text hash."""
    study = load_study(root)
    check_collected(root)
    ratings = pd.read_csv(io.BytesIO(verify_ratings(root).data), dtype=str,
                          keep_default_na=False)
    return study, ratings[ratings["sitting"] == "1"], _response_hashes(root)


def _rows_of(ratings: pd.DataFrame, dim_id: str, kind: str) -> pd.DataFrame:
    """A dimension's analysable ratings: the points of a count or checklist (as the
    analysis takes them), a total's sum, the value of every other kind."""
    if kind == "total":
        return _total_rows(ratings, dim_id)
    wanted = "points" if kind in _POINTS else "value"
    return ratings[(ratings["dimension"] == dim_id) & (ratings["field"] == wanted)]


def _total_rows(ratings: pd.DataFrame, total_id: str) -> pd.DataFrame:
    """A total's sums, each with the row id of the response it sums: a total's line in
    the ratings table names the response by its label alone, and the rater's other
    answers on that response carry the row id (a label means different responses to
    different raters; the row id leads to the response's text)."""
    rows = ratings[(ratings["dimension"] == total_id) & (ratings["field"] == "total")]
    keys = ["rater_id", "case_id", "label"]
    named = ratings[ratings["row_id"] != ""].drop_duplicates(keys)[[*keys, "row_id"]]
    joined = rows.drop(columns="row_id").merge(named, on=keys, how="left")
    return joined.assign(row_id=joined["row_id"].fillna(""))


def _response_hashes(root: Path) -> dict[str, str]:
    """Row id -> the sha256 of the response text on that row (blinded manifest)."""
    manifest = open_manifest(root)
    try:
        return {row["row_id"]: row["locked"][0]["sha256"]
                for head in manifest.heads for card in manifest.pack(head)["cards"]
                for row in card["rows"] if row.get("locked")}
    finally:
        manifest.close()


def _matrix(rows: pd.DataFrame, kind: str, text_of: dict[str, str],
            na: tuple[str, ...]) -> pd.DataFrame:
    values = rows[(rows["value"] != "") & ~rows["value"].isin(na)]
    unit = values["case_id"] + np.where(values["row_id"] != "", "|" + values["row_id"].map(
        text_of).fillna(values["row_id"]), "")
    cell = pd.to_numeric(values["value"], errors="coerce") if kind in _NUMERIC \
        else values["value"]
    frame = pd.DataFrame({"rater": values["rater_id"], "unit": unit, "value": cell})
    return frame.pivot_table(index="rater", columns="unit", values="value", aggfunc="first")


def _alpha(wide: pd.DataFrame, level: str, n_boot: int, seed: int,
           domain: list[Any] | None = None) -> pd.Series:
    return stats.krippendorff_alpha(wide.to_numpy(dtype=object), level=level,  # type: ignore[arg-type]
                                    value_domain=domain, n_boot=n_boot, seed=seed).iloc[0]


def _agreement(study: Study, dim_id: str, level: str, wide: pd.DataFrame,
               domain: list[Any] | None = None) -> DimensionAgreement:
    n_units = int((wide.notna().sum(axis=0) >= 2).sum()) if not wide.empty else 0
    result = DimensionAgreement(dim_id, level, None, None, None, n_units, len(wide))
    if len(wide) < 2 or n_units == 0:
        result.reason = "fewer than two raters on any unit so far"
        return result
    try:
        whole = _alpha(wide, level, study.plan.n_boot, study.plan.seed, domain)
    except ValueError as exc:
        result.reason = f"could not be computed: {exc}"
        return result
    result.alpha, result.ci_low, result.ci_high = (_finite(whole["alpha"]),
                                                   _finite(whole["ci_low"]),
                                                   _finite(whole["ci_high"]))
    if result.alpha is None:
        result.reason = str(whole.get("reason") or "") or \
            "undefined: the values so far do not vary"
    else:  # a defined alpha with a reason has no interval (one unit): why, beside it
        result.reason = str(whole.get("reason") or "")
    if len(wide) > 2 and result.alpha is not None:
        for rater in wide.index:
            without = _finite(_alpha(wide.drop(index=rater), level, 0, 0, domain)["alpha"])
            result.leave_one_out[str(rater)] = None if without is None else \
                without - result.alpha
        gains = {r: d for r, d in result.leave_one_out.items() if d is not None and d > 0}
        result.raises_most = max(gains, key=lambda r: gains[r]) if gains else ""
    return result


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None
