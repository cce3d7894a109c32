"""``sheetflow lock``: draw protocol 002's second-rater subset and generate its packs.

The draw itself (:func:`~sheetflow.packs.second_rater.draw`) sits below
:mod:`sheetflow.packs.generate`, which reads a recorded selection; this step sits
above both it and collect's outputs, since it reads the collected ratings and
generates again. The procedure is described in :mod:`sheetflow.packs.second_rater`.

Every input is read once: the ratings table is the one ``out/collection.json``
records (checked from the bytes parsed), and the selection's sha256 sealed in the lock
record is that of the very bytes the second raters' packs are drawn by. The selection
and its ``.sha256`` are written whole or not at all, and the lock holds the study lock
(``out/.lock``) so no ``collect`` replaces the ratings meanwhile.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SealError, SheetflowError, UsageError, WriteError
from ..hints import command_line
from ..packs.generate import generate_packs
from ..packs.seal import (
    KEY_FILE,
    KEY_HASH_FILE,
    LOCK_RECORD_FILE,
    LOCK_RECORD_HASH_FILE,
    PLAN_LOCK_FILE,
    SEALED_DIR,
    dump_json,
    sha256_file,
)
from ..packs.second_rater import (
    METHOD,
    SELECTION_FILE,
    RecordedSelection,
    draw,
    read_selection,
    selection_path,
    selects_at_lock,
)
from ..spec.study import Study, load_study
from ..staging import OutputSet, recover_interrupted
from ..words import counted, first_few
from .outputs import (
    LOCK_WAIT,
    OUT_DIR,
    RATINGS_NAME,
    Collected,
    check_row_count,
    collection_secret,
    returns_since_collect,
    verify_ratings,
)
from .run_lock import study_lock


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
    record_sha256: str = ""
    """The sha256 of ``sealed/lock-record.json``, to publish beside the key's."""
    drafts: list[Path] = field(default_factory=list)
    """The second raters' invitation drafts (``packs/eml/``), their packs attached."""
    warnings: list[str] = field(default_factory=list)
    """A second rater without an e-mail address gets no draft; a stopped commit this
    lock rolled back first (the CLI rolls back and says so before it calls)."""


def lock_second_rater(study_dir: str | Path, *, lock_wait: float = LOCK_WAIT) -> LockResult:
    """Draw the second-rater subset from completed items and generate its packs.

    Parameters
    ----------
    study_dir : str or Path
        A study after ``generate`` and ``collect`` of the primary returns.
    lock_wait : float
        Seconds to wait for another run holding the study lock (``out/.lock``).

    Returns
    -------
    LockResult

    Raises
    ------
    UsageError
        The study does not select at lock, is not generated or collected, or a lock
        already drew a different selection.
    OutputError
        ``out/ratings.csv`` is not the table ``collect`` recorded, or another sheetflow
        run holds the study lock.
    SheetflowError
        A primary rater has no ratings collected (no return, or a return collect left
        out for errors, named with its file), or the recorded selection is damaged.
    """
    study = load_study(study_dir)
    if not selects_at_lock(study):
        raise UsageError(_nothing_to_lock(study))
    plan_hash = _frozen_hash(study)
    with study_lock(study.root, "lock", lock_wait):  # no collect replaces the ratings meanwhile
        # a lock stopped while its files moved in is rolled back before anything is read
        recovered = recover_interrupted(study.root)
        result = _lock(study, plan_hash, _collected_ratings(study))
    if recovered:
        result.warnings.insert(0, recovered)
    return result


def _lock(study: Study, plan_hash: str, collected: Collected) -> LockResult:
    """Draw from ``collected`` (the ratings as read once and checked), record the
    selection (or finish a lock that recorded one) and generate the packs."""
    completed = completed_items(study, collected)
    plan = study.design.second_rater
    assert plan is not None
    strata = draw([it for it in study.items if it.id in set(completed)], plan.strata,
                  plan.fraction, plan_hash)
    chosen = {i for s in strata.values() for i in s["selected"]}
    selected = [it.id for it in study.items if it.id in chosen]
    record = {"plan_hash": plan_hash, "method": METHOD, "fraction": plan.fraction,
              "strata_columns": list(plan.strata), "completed": completed,
              "strata": strata, "selected": selected,
              "ratings_sha256": hashlib.sha256(collected.data).hexdigest(),
              "key_sha256_before": _key_hash(study)}
    selection = read_selection(study)  # read once: its sha256 sealed, its ids drawn by
    if selection is not None:
        again = _again(study, selection, record)
        if (study.root / SEALED_DIR / LOCK_RECORD_FILE).exists():
            return again
        # a lock stopped after recording its selection: finish it with that selection
        completed, selected = again.completed, again.selected
        _finish_hash_file(study, selection)
    else:
        selection = _record_selection(study, selection_path(study), record)
    # only the second raters' invitations are drafted with their packs: a primary rater
    # has been invited already (most have returned), so their drafts stay as they were
    second = frozenset(r.id for r in study.raters if r.role == "second")
    result = generate_packs(study.root, lock_selection=selection, emails=True,
                            draft_only=second)
    packs = [p.path for p in result.packs if p.rater_id in second]
    stems = {p.stem for p in packs}
    return LockResult(selection.path, completed, selected, _key_hash(study),
                      _key_hash(study), packs, record_sha256=result.key_sha256,
                      drafts=[d for d in result.eml_paths if d.stem in stems],
                      warnings=[w for w in result.warnings if any(s in w for s in stems)])


def _collected_ratings(study: Study) -> Collected:
    """``out/ratings.csv`` as read once and checked against ``out/collection.json``
    (its sha256, and the mark under the study secret): a table cut off or changed
    after collect would draw the subset from the wrong completed items."""
    ratings = study.root / OUT_DIR / RATINGS_NAME
    if not ratings.exists():
        raise UsageError(f"{ratings} not found; collect the primary returns first "
                         f"('{command_line('collect', study.root)}')")
    # before the draw only: a return added or corrected after collect (or a collect
    # stopped before its outputs moved in) would leave its items out of the completed
    # ones; once drawn, the selection stands and second raters' files come in
    changed = [] if selection_path(study).exists() else returns_since_collect(study.root)
    if changed:
        shown = first_few(changed)
        raise UsageError(f"{study.root / 'returns'} holds {counted(len(changed), 'file')} "
                         f"the last collect did not read ({shown}): the subset would be "
                         "drawn without them; collect the primary returns first "
                         f"('{command_line('collect', study.root)}')")
    return verify_ratings(study.root, collection_secret(study.root))


def _record_selection(study: Study, path: Path, record: dict[str, Any]) -> RecordedSelection:
    """Write the selection and its ``.sha256`` whole or not at all; the selection the
    packs are drawn by is the one written, its hash of the very bytes written."""
    data = dump_json(record)
    digest = hashlib.sha256(data).hexdigest()
    _write_whole(study, {path: data, path.with_suffix(".sha256"): _hash_line(digest)})
    return RecordedSelection(path, digest, record)


def _finish_hash_file(study: Study, selection: RecordedSelection) -> None:
    """A lock stopped before the selection's ``.sha256`` was written: write it from the
    bytes read; one that gives another hash is not overwritten."""
    path = selection.path.with_suffix(".sha256")
    line = _hash_line(selection.sha256)
    if not path.exists():
        _write_whole(study, {path: line})
    elif path.read_bytes() != line:
        raise SealError(f"{path}: does not give the sha256 of {SELECTION_FILE} "
                        f"({selection.sha256}): one of them was changed after the lock "
                        "drew the subset, and no packs were sealed from it; remove both, "
                        f"then run '{command_line('lock', study.root)}' again")


def _hash_line(digest: str) -> bytes:
    return f"{digest}  {SELECTION_FILE}\n".encode()


def _write_whole(study: Study, files: dict[Path, bytes]) -> None:
    """Write ``files`` as one set, staged then replaced: a full disk or a stop leaves
    none of them half-written (a 0-byte selection stopped every later lock). Its commit
    record is kept in the study folder, which every command recovers before it reads
    anything: a rerun never reads a selection a stopped lock left half in place."""
    with OutputSet(study.root, label="lock", what="second-rater selection") as outputs:
        for path, data in files.items():
            try:
                outputs.stage(path).write_bytes(data)
            except OSError as exc:
                raise WriteError(f"{path}: could not be written "
                                 f"({(exc.strerror or str(exc)).lower()}); free some space "
                                 "or fix the folder's permissions, then run again") from None


def _nothing_to_lock(study: Study) -> str:
    """Why ``lock`` has nothing to do for ``study``: it draws only a second-rater subset
    set to be drawn at data lock, and this study plans none, or draws it at generate."""
    where = study.root / "study.toml"
    applies = ("sheetflow lock applies only to a study whose second-rater subset is drawn "
               "at data lock ([design.second_rater] select_at = \"lock\")")
    if study.design.second_rater is None:
        return f"{where}: {applies}; this study has no second-rater subset: nothing to lock"
    return (f"{where}: {applies}; this study's subset is drawn at generate (select_at = "
            "\"generate\"), so its second raters' packs were written by generate: nothing "
            "to lock")


def _again(study: Study, selection: RecordedSelection, record: dict[str, Any]) -> LockResult:
    """A second lock: the same draw is fine (nothing written), a different one is not."""
    old = selection.record
    if old["selected"] != record["selected"]:
        raise UsageError(f"{selection.path}: the subset was already drawn "
                         f"({len(old['selected'])} items) and the completed items now give "
                         "another; the lock is final. Remove the file only if no second "
                         "rater has started")
    record_hash = study.root / SEALED_DIR / LOCK_RECORD_HASH_FILE
    return LockResult(selection.path, list(old.get("completed", [])), selection.selected,
                      str(old.get("key_sha256_before", "")), _key_hash(study), already=True,
                      record_sha256=record_hash.read_text(encoding="utf-8").split()[0]
                      if record_hash.exists() else "")


def completed_items(study: Study, collected: Collected) -> list[str]:
    """Items every primary rater scored completely (a recomputed total), spec order.

    Parameters
    ----------
    study : Study
    collected : Collected
        ``out/ratings.csv`` and ``out/collection.json`` as read once and checked: the
        table, the row count the record gives it (checked once parsed) and the record's
        files (a primary rater without ratings is named with the return left out).

    Raises
    ------
    SheetflowError
        A primary rater has no collected rating at all (the message names a return
        collect left out for errors).
    OutputError
        The table has another number of rows than its record gives.
    """
    import pandas as pd  # heavy: only the lock reads the ratings table

    table = pd.read_csv(io.BytesIO(collected.data), dtype=str, keep_default_na=False)
    check_row_count(collected.rows, len(table), study_dir=study.root)
    total = study.rubric.totals[0].id if study.rubric.totals else None
    primaries = [r.id for r in study.raters if r.role != "second"]
    rated = table[(table["sitting"] == "1") & (table["rater_id"].isin(primaries))]
    missing = [r for r in primaries if r not in set(rated["rater_id"])]
    if missing:
        raise SheetflowError(_primaries_not_in(study, missing, collected.files))
    if total is not None:
        rated = rated[(rated["dimension"] == total) & (rated["value"] != "")]
    done = rated.groupby("case_id")["rater_id"].nunique()
    complete = set(done[done == len(primaries)].index)
    return [it.id for it in study.items if it.id in complete]


def _primaries_not_in(study: Study, missing: list[str],
                      files: list[dict[str, Any]]) -> str:
    """Why the lock cannot draw: per primary rater without ratings, the return collect
    left out for errors (its file and reason, and where to read them), or that no
    return was collected."""
    left_out = _left_out_files(files)
    mine = {rater: [f for f in left_out if f.get("rater") == rater] for rater in missing}
    said = "; ".join(_not_in(rater, files) for rater, files in mine.items())
    book = study.root / "out" / "validation.xlsx"
    fix = (f"; the Status sheet of {book} says what to do with a file left out (its "
           "Issues sheet lists every error): once it is fixed, run "
           f"'{command_line('collect', study.root)}' and lock again"
           if any(mine.values()) else "")
    return f"{said}. The subset is drawn when every primary return is in{fix}"


def _not_in(rater: str, files: list[dict[str, Any]]) -> str:
    """A primary rater's ratings are not in: their ``files`` collect left out, or none."""
    if not files:
        return f"no collected return from primary rater {rater}"
    return (f"the return of primary rater {rater} was collected but left out for errors: "
            + "; ".join(f"file {f.get('file')} ({f.get('reason') or 'not used'})"
                        for f in files))


def _left_out_files(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The returned files collect did not use, of its record's ``files``."""
    return [f for f in files if isinstance(f, dict) and not f.get("used")
            and not f.get("set_aside")]


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
