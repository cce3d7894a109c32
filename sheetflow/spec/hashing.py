"""The spec hash: a sha256 of a canonical JSON of everything that shapes the study."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Study

SPEC_FORMAT = 1


def canonical_spec(study: Study) -> dict[str, Any]:
    """Everything that shapes the workbooks and the analysis, as plain JSON data.

    Item texts are included whole, with line endings normalised to LF; rater ids
    and roles are included (names and e-mail addresses are not: fixing a typo in an
    address does not unfreeze a study). ``show_id`` and ``sizing`` (the design recorded
    by ``sheetflow plan --record``) are included only when set, so specs written before
    they existed keep their hash.
    """
    out = {
        "spec_format": SPEC_FORMAT,
        "study": {
            "id": study.id,
            "title": study.title,
            "version": study.version,
            "date": study.date,
            "protocol": study.protocol,
            "instructions": study.instructions,
            "pack_name": study.pack_name,
        },
        "rubric": _without_unset(plain_data(asdict(study.rubric))),
        "design": _design(study),
        "plan": plain_data(asdict(study.plan)),
        "shown": [asdict(s) for s in study.shown],
        "items": [{"id": it.id, "fields": dict(sorted(it.fields.items()))} for it in study.items],
        "raters": [{"id": r.id, "role": r.role} for r in study.raters],
    }
    if study.show_id:
        out["show_id"] = True
    if study.sizing is not None:  # the planned design and its rationale (sizing.json)
        out["sizing"] = study.sizing
    return out


def spec_hash(study: Study) -> str:
    """The sha256 (hex) of the canonical JSON of :func:`canonical_spec`.

    The JSON has sorted keys, no insignificant whitespace and UTF-8 text, so the hash
    does not depend on key order, whitespace or line endings in the spec, nor on
    whether items came from CSV or XLSX.
    """
    data = json.dumps(
        canonical_spec(study), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


_OPTIONAL_DIMENSION_KEYS = ("note",)
"""Dimension keys added after studies were sealed: left out of the hash when unset, so
an existing study keeps its hash."""


def _design(study: Study) -> dict[str, Any]:
    """The design; ``second_rater.select_at`` only when not the default (older studies
    keep their hash)."""
    design = plain_data(asdict(study.design))
    second = design.get("second_rater")
    if isinstance(second, dict) and second.get("select_at") == "generate":
        second.pop("select_at")
    return design


def _without_unset(rubric: dict[str, Any]) -> dict[str, Any]:
    for dim in rubric.get("dimensions", []):
        for key in _OPTIONAL_DIMENSION_KEYS:
            if dim.get(key) is None:
                dim.pop(key, None)
    return rubric


def plain_data(obj: Any, leaf: Callable[[Any], Any] | None = None) -> Any:
    """Nested dicts, lists and tuples as JSON-shaped data.

    Keys become strings and tuples lists; every other value is passed through ``leaf``
    (kept as it is by default).

    Parameters
    ----------
    obj : Any
        Typically :func:`dataclasses.asdict` of a spec object, or analysis results.
    leaf : callable, optional
        Applied to each value that is not a dict, list or tuple.

    Returns
    -------
    Any
        The same structure with plain containers.
    """
    if isinstance(obj, dict):
        return {str(k): plain_data(v, leaf) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain_data(v, leaf) for v in obj]
    return obj if leaf is None else leaf(obj)
