"""The second-rater subset of protocol 002, drawn at data lock from completed items.

"At data lock, rank completed work-item IDs by the frozen plan hash separately within
every arm-by-task-block stratum and select the required ceiling fraction. The
validator reproduces the selection exactly; extra or missing second ratings fail."

With ``[design.second_rater] select_at = "lock"`` raters whose role is ``second`` get
no workbook at ``generate``. Once the primary returns are collected,
:func:`lock_second_rater` (``sheetflow lock``):

1. takes the completed items: items every primary rater scored completely (a
   recomputed total in ``out/ratings.csv``); a primary rater with no collected
   return stops the lock (the subset would depend on who happened to return);
2. ranks them within each stratum (the values of ``strata``) by
   ``sha256(<frozen spec hash> + ":" + item id)`` and takes the first
   ``ceil(fraction x n)`` of each;
3. writes ``sealed/second-rater-selection.json`` (and its ``.sha256``): plan hash,
   method, fraction, strata, per stratum the completed, ranked and selected ids, the
   sha256 of the ratings it was drawn from and of the key before the lock;
4. generates again: the primary packs come out byte-identical, the second raters'
   packs hold the selected items, and the key and manifest gain those packs (the new
   key hash is printed to publish beside the old one, which the selection records).

The selection is reproducible from the frozen plan hash and the completed items
alone; :func:`draw` recomputes it and the analysis compares the second ratings
with the recorded selection. With ``select_at = "generate"`` (the default) the subset
is drawn from all items at generate, as before.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SheetflowError, UsageError
from .seal import KEY_FILE, KEY_HASH_FILE, PLAN_LOCK_FILE, SEALED_DIR, dump_json, sha256_file
from .study import Item, Study, load_study

SELECTION_FILE = "second-rater-selection.json"
METHOD = "sha256_ranked_completed_items_within_arm_task_block"


def rank_key(plan_hash: str, item_id: str) -> str:
    """The sha256 an item is ranked by: of ``<plan hash>:<item id>`` (hex)."""
    return hashlib.sha256(f"{plan_hash}:{item_id}".encode()).hexdigest()


def draw(items: Iterable[Item], strata: tuple[str, ...], fraction: float,
         plan_hash: str) -> dict[str, dict[str, list[str]]]:
    """Per stratum: the items, ranked by :func:`rank_key`, and the ceiling fraction taken.

    Parameters
    ----------
    items : iterable of Item
        The items to draw from (completed items at lock, all items at generate).
    strata : tuple of str
        Item columns whose values form the strata (``arm``, ``task_block``).
    fraction : float
        Share of each stratum to select, rounded up.
    plan_hash : str
        The frozen spec (plan) hash.

    Returns
    -------
    dict
        ``"<value> x <value>"`` -> ``{"ranked": [...], "selected": [...]}``.
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for item in items:
        groups.setdefault(tuple(item.fields.get(c, "") for c in strata), []).append(item.id)
    out = {}
    for values in sorted(groups):
        ranked = sorted(groups[values], key=lambda i: rank_key(plan_hash, i))
        out[" x ".join(values)] = {"ranked": ranked,
                                   "selected": ranked[: math.ceil(fraction * len(ranked))]}
    return out


def selection_path(study: Study) -> Path:
    """Where the lock records its selection."""
    return study.root / SEALED_DIR / SELECTION_FILE


def locked_selection(study: Study) -> list[str] | None:
    """The selected item ids recorded at lock, or None before the lock."""
    path = selection_path(study)
    if not path.exists():
        return None
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["selected"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise SheetflowError(f"{path}: is not a second-rater selection sheetflow wrote; "
                             "run 'sheetflow lock' again") from None


def selects_at_lock(study: Study) -> bool:
    """Whether the study draws its second-rater subset at data lock."""
    plan = study.design.second_rater
    return plan is not None and plan.select_at == "lock"


@dataclass
class LockResult:
    """What :func:`lock_second_rater` drew and wrote."""

    selection_path: Path
    completed: list[str]
    selected: list[str]
    key_sha256_before: str
    key_sha256: str
    packs: list[Path] = field(default_factory=list)
    already: bool = False


def lock_second_rater(study_dir: str | Path) -> LockResult:
    """Draw the second-rater subset from completed items and generate its packs.

    Parameters
    ----------
    study_dir : str or Path
        A study after ``generate`` and ``collect`` of the primary returns.

    Returns
    -------
    LockResult

    Raises
    ------
    UsageError
        The study does not select at lock, is not generated or collected, or a lock
        already drew a different selection.
    SheetflowError
        A primary rater has no collected return.
    """
    from .generate import generate_packs  # generate imports this module

    study = load_study(study_dir)
    if not selects_at_lock(study):
        raise UsageError(f"{study.root / 'study.toml'}: [design.second_rater] select_at = "
                         "\"lock\" is needed to draw the second-rater subset at data lock")
    plan_hash = _frozen_hash(study)
    ratings = study.root / "out" / "ratings.csv"
    if not ratings.exists():
        raise UsageError(f"{ratings} not found; collect the primary returns first "
                         f"('sheetflow collect {study.root}')")
    completed = completed_items(study, ratings.read_bytes())
    plan = study.design.second_rater
    assert plan is not None
    strata = draw([it for it in study.items if it.id in set(completed)], plan.strata,
                  plan.fraction, plan_hash)
    chosen = {i for s in strata.values() for i in s["selected"]}
    selected = [it.id for it in study.items if it.id in chosen]
    record = {"plan_hash": plan_hash, "method": METHOD, "fraction": plan.fraction,
              "strata_columns": list(plan.strata), "completed": completed,
              "strata": strata, "selected": selected,
              "ratings_sha256": sha256_file(ratings),
              "key_sha256_before": _key_hash(study)}
    path = selection_path(study)
    if path.exists():
        return _again(study, path, record)
    path.write_bytes(dump_json(record))
    path.with_suffix(".sha256").write_text(f"{sha256_file(path)}  {SELECTION_FILE}\n",
                                           encoding="utf-8")
    result = generate_packs(study.root)
    second = {r.id for r in study.raters if r.role == "second"}
    return LockResult(path, completed, selected, record["key_sha256_before"],
                      result.key_sha256, [p.path for p in result.packs if p.rater_id in second])


def _again(study: Study, path: Path, record: dict[str, Any]) -> LockResult:
    """A second lock: the same draw is fine (nothing written), a different one is not."""
    old = json.loads(path.read_text(encoding="utf-8"))
    if old.get("selected") != record["selected"]:
        raise UsageError(f"{path}: the subset was already drawn ({len(old.get('selected', []))} "
                         "items) and the completed items now give another; the lock is "
                         "final. Remove the file only if no second rater has started")
    return LockResult(path, old["completed"], old["selected"], old["key_sha256_before"],
                      _key_hash(study), already=True)


def completed_items(study: Study, ratings_csv: bytes) -> list[str]:
    """Items every primary rater scored completely (a recomputed total), spec order.

    Raises
    ------
    SheetflowError
        A primary rater has no collected rating at all.
    """
    import pandas as pd  # heavy: only the lock reads the ratings table

    table = pd.read_csv(io.BytesIO(ratings_csv), dtype=str, keep_default_na=False)
    total = study.rubric.totals[0].id if study.rubric.totals else None
    primaries = [r.id for r in study.raters if r.role != "second"]
    rated = table[(table["sitting"] == "1") & (table["rater_id"].isin(primaries))]
    missing = [r for r in primaries if r not in set(rated["rater_id"])]
    if missing:
        raise SheetflowError(f"no collected return from primary rater(s) {', '.join(missing)}; "
                             "the subset is drawn when every primary return is in")
    if total is not None:
        rated = rated[(rated["dimension"] == total) & (rated["value"] != "")]
    done = rated.groupby("case_id")["rater_id"].nunique()
    complete = set(done[done == len(primaries)].index)
    return [it.id for it in study.items if it.id in complete]


def _frozen_hash(study: Study) -> str:
    lock = study.root / SEALED_DIR / PLAN_LOCK_FILE
    if not lock.exists():
        raise UsageError(f"{lock} not found; run 'sheetflow generate {study.root}' first")
    return str(json.loads(lock.read_text(encoding="utf-8"))["spec_hash"])


def _key_hash(study: Study) -> str:
    path = study.root / SEALED_DIR / KEY_HASH_FILE
    if path.exists():
        return path.read_text(encoding="utf-8").split()[0]
    return sha256_file(study.root / SEALED_DIR / KEY_FILE)
