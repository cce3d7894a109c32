"""The second-rater subset of protocol 002, drawn at data lock from completed items.

"At data lock, rank completed work-item IDs by the frozen plan hash separately within
every arm-by-task-block stratum and select the required ceiling fraction. The
validator reproduces the selection exactly; extra or missing second ratings fail."

With ``[design.second_rater] select_at = "lock"`` raters whose role is ``second`` get
no workbook at ``generate``. Once the primary returns are collected,
:func:`sheetflow.collect.data_lock.lock_second_rater` (``sheetflow lock``):

1. takes the completed items: items every primary rater scored completely (a
   recomputed total in ``out/ratings.csv``, read once and held to the sha256
   ``out/collection.json`` records); a primary rater with no ratings there stops the
   lock (the subset would depend on who happened to return), naming the file when
   collect left their return out for errors;
2. ranks them within each stratum (the values of ``strata``) by
   ``sha256(<frozen spec hash> + ":" + item id)`` and takes the first
   ``ceil(fraction x n)`` of each;
3. writes ``sealed/second-rater-selection.json`` and its ``.sha256``, whole or not at
   all: plan hash, method, fraction, strata, per stratum the completed, ranked and
   selected ids, the sha256 of the ratings it was drawn from and of the key before
   the lock;
4. generates again: the primary packs come out byte-identical, the second raters'
   packs hold the items of the selection as written, the manifest gains those packs,
   and ``sealed/lock-record.json`` seals them with the sha256 of those same selection
   bytes, chained to the key sealed at generate (its hash is printed to publish
   beside the key's).

The selection is reproducible from the frozen plan hash and the completed items
alone; :func:`draw` recomputes it and the analysis compares the second ratings
with the recorded selection. With ``select_at = "generate"`` (the default) the subset
is drawn from all items at generate, as before.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import SheetflowError
from ..hints import command_line
from ..spec.study import Item, Study
from .seal import LOCK_RECORD_FILE, SEALED_DIR, SELECTION_FILE

METHOD = "sha256_ranked_completed_items_within_arm_task_block"


def ceil_share(fraction: float, n: int) -> int:
    """``ceil(fraction x n)`` in exact arithmetic on the fraction as written.

    The fraction comes from ``study.toml`` as a float: ``0.28 * 25`` is
    ``7.000000000000001`` in binary floating point, whose ceiling would draw 8 items
    where the plan says 7. The decimal the spec wrote (``repr`` of the float, ``0.28``)
    is taken as an exact fraction instead (7/25 of 25 is 7).
    """
    return math.ceil(Fraction(repr(float(fraction))) * n)


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
                                   "selected": ranked[: ceil_share(fraction, len(ranked))]}
    return out


def selection_path(study: Study) -> Path:
    """Where the lock records its selection."""
    return study.root / SEALED_DIR / SELECTION_FILE


@dataclass(frozen=True)
class RecordedSelection:
    """A data lock's selection as read once: the sha256 of its bytes and what they say,
    so the hash sealed is that of the selection the packs are drawn by."""

    path: Path
    sha256: str
    record: dict[str, Any]

    @property
    def selected(self) -> list[str]:
        """The selected item ids."""
        return list(self.record["selected"])


def read_selection(study: Study) -> RecordedSelection | None:
    """The selection recorded at lock, read once; None before the lock.

    Raises
    ------
    SheetflowError
        The file is not a selection sheetflow wrote (cut off, edited): one line naming
        it and what to do, which depends on whether a lock sealed packs from it.
    """
    path = selection_path(study)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return RecordedSelection(path, hashlib.sha256(data).hexdigest(),
                             _parsed_selection(study, path, data))


def _parsed_selection(study: Study, path: Path, data: bytes) -> dict[str, Any]:
    """The record in ``data``, or the one-line error of a damaged selection file."""
    try:
        record = json.loads(data.decode("utf-8"))
        selected = record["selected"]
        if isinstance(selected, list) and all(isinstance(i, str) for i in selected):
            return dict(record)
        problem = "its 'selected' is not a list of item ids"
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        problem = "it is empty" if not data.strip() else "cut off or edited: not the JSON " \
            "the lock writes"
    if (path.parent / LOCK_RECORD_FILE).exists():
        raise SheetflowError(f"{path}: is not the second-rater selection the lock wrote "
                             f"({problem}); {LOCK_RECORD_FILE} seals the sha256 of the "
                             "one its packs were drawn by: restore that file from a "
                             "backup") from None
    raise SheetflowError(f"{path}: is not a second-rater selection sheetflow wrote "
                         f"({problem}) and no packs were sealed from it; remove it, then "
                         f"run '{command_line('lock', study.root)}' again") from None


def locked_selection(study: Study) -> list[str] | None:
    """The selected item ids recorded at lock, or None before the lock."""
    selection = read_selection(study)
    return None if selection is None else selection.selected


def awaiting_lock(study: Study, packed: Iterable[str]) -> dict[str, str]:
    """The second raters whose pack ``sheetflow lock`` has still to write, each with
    what is to be done: with ``select_at = "lock"``, every rater of role ``second``
    not among ``packed`` (the raters with a pack so far). Their rating is the protocol's
    second-rater check, so they are expected from the start, not from the lock on.
    """
    if not selects_at_lock(study):
        return {}
    have = set(packed)
    step = (f"no pack yet: their items are drawn at data lock; run "
            f"'{command_line('lock', study.root)}' once every primary return is collected, "
            "then send them the pack it writes and collect their return")
    return {r.id: step for r in study.raters if r.role == "second" and r.id not in have}


def selects_at_lock(study: Study) -> bool:
    """Whether the study draws its second-rater subset at data lock."""
    plan = study.design.second_rater
    return plan is not None and plan.select_at == "lock"
