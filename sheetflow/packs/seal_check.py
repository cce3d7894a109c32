"""Checking the seal that :mod:`.seal` wrote.

:func:`verify_seal` recomputes the key's sha256 and compares it with ``key.sha256``, the
published hash and the plan lock; compares the spec hash the key records (which the
published hash covers) with the plan lock's and with the study as it is now; and
re-hashes the sealed input files. :func:`unseal` is the same check for ``analyze``,
raising the first problem.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SealError, UsageError
from ..hints import command_line
from ..spec.internal import input_changed
from ..spec.study import SPEC_FILE, Study, load_study
from ..staging import interrupted_commit
from .seal_files import (
    KEY_FILE,
    KEY_HASH_FILE,
    LOCK_RECORD_FILE,
    LOCK_RECORD_HASH_FILE,
    PLAN_LOCK_FILE,
    SEALED_DIR,
    SELECTION_FILE,
    require_seal,
    sealed_input_names,
)
from .secret import DEMO_SECRET, SECRET_FILE, demo_secret_line, is_demo_secret, parse_secret


@dataclass
class SealCheck:
    """The outcome of :func:`verify_seal`: ``ok`` when ``problems`` is empty."""

    key_sha256: str = ""
    spec_hash: str = ""
    current_spec_hash: str = ""
    inputs: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    key: dict[str, Any] = field(default_factory=dict, repr=False)
    secret: bytes | None = field(default=None, repr=False)
    """The study secret as read and checked (None for keys sealed before it existed)."""
    input_bytes: dict[str, bytes] = field(default_factory=dict, repr=False)
    """Each sealed input file's bytes as read and hashed: parse these, not the file."""
    notes: list[str] = field(default_factory=list)
    """What the check could not cover, though nothing is wrong (not problems)."""
    lock_record_sha256: str = ""
    """The sha256 of the data lock's chained record (protocol 002), when there is one."""
    manifest_sha256: str = ""
    """The manifest's sealed sha256 (the data lock's record's, else the key's or the plan
    lock's): the one ``collect`` must have placed the ratings by."""
    checked: list[str] = field(default_factory=list)
    """What was compared and found to agree, one line each (only what was compared:
    the published hash, for one, only when it was given)."""
    study_dir: str | Path = "."
    """The study folder as the user gave it: the commands the problems name run on it."""
    out_dir: str | Path | None = None
    """Where ``packs/`` and ``sealed/`` are when not in the study folder (``--out``)."""
    demo_secret: bool = False
    """The secret checked is the demo's public one: the seal may hold, but the packs
    blind nothing (:meth:`demo_line`)."""

    def demo_line(self) -> str:
        """The line saying the study is sealed with the demo's public secret."""
        return demo_secret_line(self.sealed(SECRET_FILE), self.command("generate", "--force"))

    def command(self, step: str, *options: str) -> str:
        """The whole command ``step`` on this study (with its ``--out`` for generate)."""
        elsewhere = ("--out", str(self.out_dir)) if self.out_dir is not None and \
            step == "generate" else ()
        return command_line(step, self.study_dir, *elsewhere, *options)

    def sealed(self, name: str) -> str:
        """The file ``name`` of ``sealed/`` as messages name it, with the folder holding
        it (the study's, or ``--out``): ``my-study/sealed/key.json``."""
        return str(Path(self.out_dir or self.study_dir, SEALED_DIR, name))

    def pack(self, name: str) -> str:
        """The file ``name`` of ``packs/`` as messages name it: ``my-study/packs/R1.xlsx``."""
        return str(Path(self.out_dir or self.study_dir, "packs", name))

    @property
    def manifest(self) -> str:
        """The manifest as messages name it: ``my-study/packs/manifest.json``."""
        return self.pack("manifest.json")

    @property
    def ok(self) -> bool:
        """Whether the seal holds and the spec is unchanged."""
        return not self.problems


def demo_seal_line(study_dir: str | Path) -> str | None:
    """The line saying the study in ``study_dir`` is sealed with the demo's public
    secret (``check`` warns with it), or None when it is not."""
    if not is_demo_secret(Path(study_dir, SEALED_DIR, SECRET_FILE)):
        return None
    return SealCheck(study_dir=study_dir).demo_line()


def verify_seal(study_dir: str | Path, out: str | Path | None = None, *,
                study: Study | None = None, published: str | None = None,
                published_lock: str | None = None, pack_files: bool = False) -> SealCheck:
    """Check the seal of the study in ``study_dir``.

    The key's sha256 must equal ``key.sha256`` (and ``published``, the hash announced
    before scoring, when given) and the plan lock's record; the spec hash recorded in
    the key, the one in the plan lock and the study's current hash must all agree (so
    editing the spec and writing its new hash into the plan lock does not pass); every
    input file hashed at generate (the internal scores) must be unchanged; and the
    manifest, when present, must be the one generated. With ``pack_files``, every pack
    workbook the manifest lists must be in ``packs/`` with the sha256 its entry records
    (the manifest is sealed, so those hashes are too); a manifest written before
    sheetflow recorded them gets a note instead (:attr:`SealCheck.notes`).

    Parameters
    ----------
    study_dir : str or Path
        The study folder.
    out : str or Path, optional
        The folder holding ``sealed/`` when it is not the study folder.
    study : Study, optional
        The study as already loaded (loaded from ``study_dir`` when not given).
    published : str, optional
        The key sha256 published before scoring.
    published_lock : str, optional
        The sha256 of ``lock-record.json`` published at the data lock (protocol 002).
    pack_files : bool
        Also check the pack workbooks are there and unchanged (``sheetflow verify``);
        ``analyze`` reads no pack, so a pack removed or changed after it was sent does
        not stop it.

    Returns
    -------
    SealCheck
        Each problem is one line naming the file and what differs; ``key`` holds the
        sealed key when it could be read.

    Raises
    ------
    SpecError
        When the study itself no longer loads.
    MissingStepError
        When there is no seal (``generate`` has not run).
    """
    study_dir = Path(study_dir)
    root = Path(out or study_dir)
    sealed = root / SEALED_DIR
    check = SealCheck(study_dir=study_dir, out_dir=Path(out) if out is not None else None)
    interrupted = interrupted_commit(root)
    if interrupted:  # a set half replaced: whatever differs in it is no edit
        check.problems.append(interrupted)
        return check
    paths = require_seal(study_dir, root)
    key_bytes = paths[KEY_FILE].read_bytes()  # the bytes hashed are the bytes parsed
    _check_key_hash(check, key_bytes, paths, published)
    lock = _read_json(paths[PLAN_LOCK_FILE], check)
    key = _read_json(paths[KEY_FILE], check, key_bytes)
    if lock is None or key is None:
        return check
    check.key = key
    if lock.get("key_sha256") != check.key_sha256 and not check.problems:
        check.problems.append(f"{check.sealed(PLAN_LOCK_FILE)} records key sha256 "
                              f"{lock.get('key_sha256')} but the key has {check.key_sha256}")
    elif lock.get("key_sha256") == check.key_sha256:
        check.checked.append(f"{PLAN_LOCK_FILE} records the same key sha256")
    _check_secret(check, key, sealed)
    if study is None:
        study = _load(check, key, lock)
        if study is None:
            return check
    _check_spec_hashes(check, key, lock, study.hash)
    _check_inputs(check, key, lock, study)
    record = _check_lock_record(check, sealed, published_lock)
    path = root / "packs" / "manifest.json"
    manifest = path.read_bytes() if path.is_file() else None  # read once: hashed, parsed
    _check_manifest(check, manifest, record or lock, key if record is None else None)
    packs = _manifest_packs(manifest)
    _check_cards(check, packs, check.key.get("packs", []))
    if pack_files:
        _check_pack_files(check, packs, root / "packs")
    return check


def _load(check: SealCheck, key: dict[str, Any], lock: dict[str, Any]) -> Study | None:
    """The study, its sealed input files compared before their content is checked (an
    edit after generate is told as one, valid or not); None with that problem."""
    inputs = lock.get("inputs")
    # inputs the key and lock disagree on are named by _check_inputs, as a lock edited
    sealed = inputs if isinstance(inputs, dict) and key.get("inputs") == inputs else None
    try:
        return load_study(check.study_dir, sealed)
    except SealError as exc:
        check.problems.append(str(exc))
        return None


def _manifest_packs(data: bytes | None) -> list[dict[str, Any]]:
    """The ``packs`` of the manifest's bytes (none when missing or unreadable: named by
    :func:`_check_manifest`, by its hash, and by collect)."""
    try:
        manifest = json.loads(data.decode("utf-8")) if data is not None else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return []
    packs = manifest.get("packs") if isinstance(manifest, dict) else None
    return [p for p in packs if isinstance(p, dict)] if isinstance(packs, list) else []


def _check_pack_files(check: SealCheck, packs: list[dict[str, Any]], folder: Path) -> None:
    """Each pack workbook the manifest lists must be in ``folder`` (``packs/``), since a
    reminder attaches it again, and hold the bytes its entry records the sha256 of."""
    unhashed = [p.get("file") for p in packs if "sha256" not in p]
    if packs and len(unhashed) == len(packs):
        check.notes.append("pack bytes were not recorded for this study (its manifest was "
                           "written by a sheetflow before 'generate' hashed each pack): "
                           "verify checked that each pack is in packs/, not that it is "
                           "unchanged")
    elif unhashed:  # generate hashes every pack or none: the manifest was pieced together
        check.problems.append(f"{check.manifest} records the sha256 of some packs but "
                              f"not of packs/{unhashed[0]}: generate wrote no such manifest; "
                              "restore it from the generate run")
    before, present, hashed = len(check.problems), 0, 0
    for pack in packs:
        name = pack.get("file")
        if not isinstance(name, str) or not name:
            continue
        path = folder / name
        if not path.is_file():
            check.problems.append(f"{check.pack(name)}: missing (packs/manifest.json lists it); "
                                  "restore it from the generate run")
            continue
        present += 1
        if "sha256" in pack:
            hashed += 1
            _check_pack_bytes(check, name, path.read_bytes(), pack["sha256"])
    if len(check.problems) > before or not present:
        return
    verb = "has" if hashed == 1 else "have"
    check.checked.append(f"{_packs(hashed)} in packs/ {verb} the sha256 packs/manifest.json "
                         "records" if hashed else
                         f"{_packs(present)} in packs/ (presence only: see the note)")


def _packs(count: int) -> str:
    """``"1 pack"``, ``"3 packs"``."""
    return f"{count} pack{'' if count == 1 else 's'}"


def _check_pack_bytes(check: SealCheck, name: str, data: bytes, recorded: Any) -> None:
    """One pack's bytes against the sha256 its manifest entry records."""
    found = hashlib.sha256(data).hexdigest()
    if found != recorded:
        check.problems.append(
            f"{check.pack(name)}: sha256 {found} but packs/manifest.json records {recorded} for "
            "it: the workbook was changed or replaced after generate. Not sent yet: restore "
            f"it ('{check.command('generate')}' on the unchanged spec writes the same bytes "
            "again). Sent already: restoring it does not change the copy the rater holds; "
            "find which copy they got (mail.jsonl records the sha256 of each attachment "
            "sent)")


def _check_cards(check: SealCheck, packs: list[dict[str, Any]],
                 sealed_packs: list[dict[str, Any]]) -> None:
    """Each pack the key sealed must show the same item under each card code in the
    manifest (``packs``, its pack entries): whatever hash a lock record or plan lock
    gives the manifest, a card moved to another item fails here against the published
    key."""
    from .manifest_form import card_items  # only when a seal is checked

    sealed = {(p.get("rater_id"), p.get("sitting")):
              {c.get("code") or c.get("item_id"): c.get("item_id") for c in p.get("cases", [])}
              for p in sealed_packs if isinstance(p, dict)}
    compared = 0
    for pack in packs:
        want = sealed.get((pack.get("rater_id"), pack.get("sitting")))
        if want is not None and card_items(pack.get("cards") or []) != want:
            check.problems.append(
                f"{check.manifest}: the cards of {pack.get('rater_id')} (sitting "
                f"{pack.get('sitting')}) do not show the items {KEY_FILE} sealed for them: "
                "the manifest was changed after generate; restore it")
            return
        compared += want is not None
    if compared:
        check.checked.append(f"the cards of {_packs(compared)} in packs/manifest.json show "
                             f"the items {KEY_FILE} sealed for them")


def _check_lock_record(check: SealCheck, sealed: Path,
                       published: str | None = None) -> dict[str, Any] | None:
    """The data lock's record, chained to this key: its packs join the key's.

    ``published``: the record's sha256 as published at the lock (it alone tells a
    rewritten record and hash file from the sealed ones)."""
    path = sealed / LOCK_RECORD_FILE
    if not path.exists():
        if published:
            check.problems.append(f"a lock record hash was given, but there is no "
                                  f"{SEALED_DIR}/{LOCK_RECORD_FILE}")
        if (sealed / SELECTION_FILE).exists():
            check.problems.append(f"{check.sealed(SELECTION_FILE)} records a data lock whose "
                                  "packs were never sealed (the lock stopped half-way); run "
                                  f"'{check.command('lock')}' again to finish it")
        return None
    data = path.read_bytes()  # read once: hashed, then parsed
    before = len(check.problems)
    check.lock_record_sha256 = hashlib.sha256(data).hexdigest()
    hash_path = sealed / LOCK_RECORD_HASH_FILE
    recorded = hash_path.read_text(encoding="utf-8", errors="replace").split()[:1] \
        if hash_path.exists() else []
    if published and published.strip().lower() != check.lock_record_sha256:
        check.problems.append(f"{check.sealed(LOCK_RECORD_FILE)} has sha256 "
                              f"{check.lock_record_sha256}, not the {published.strip()} "
                              "published at the lock: the lock's record was replaced")
    if recorded != [check.lock_record_sha256]:
        check.problems.append(f"{check.sealed(LOCK_RECORD_FILE)} has sha256 "
                              f"{check.lock_record_sha256} but {LOCK_RECORD_HASH_FILE} says "
                              f"{recorded[0] if recorded else 'nothing readable'}: the lock's "
                              "record was changed after the lock")
    record = _read_json(path, check, data)
    if record is None:
        return None
    if record.get("chained_to") != check.key_sha256:
        check.problems.append(f"{check.sealed(LOCK_RECORD_FILE)} extends the key with sha256 "
                              f"{record.get('chained_to')}, not this one ({check.key_sha256})")
        return record
    check.key = {**check.key, "packs": [*check.key.get("packs", []),
                                        *record.get("packs", [])]}
    if len(check.problems) == before:
        check.checked.append(f"{LOCK_RECORD_FILE} matches {SEALED_DIR}/{LOCK_RECORD_HASH_FILE}"
                             + (" and the hash given with --lock-sha256" if published else "")
                             + f", and extends this {KEY_FILE}")
    _check_selection(check, sealed, record)
    return record


def _check_selection(check: SealCheck, sealed: Path, record: dict[str, Any]) -> None:
    """The selection the lock drew by: the bytes whose sha256 the lock record seals
    (read once: hashed, then parsed), the ``.sha256`` beside them, and the second
    raters' packs the record seals holding exactly the items it selected."""
    path = sealed / SELECTION_FILE
    data = path.read_bytes() if path.is_file() else None
    before = len(check.problems)
    sealed_sha = record.get("selection_sha256")
    if data is None:
        check.problems.append(f"{check.sealed(SELECTION_FILE)} is missing, but "
                              f"{LOCK_RECORD_FILE} records a lock drawn by it; restore the "
                              "file the lock wrote")
        return
    found = hashlib.sha256(data).hexdigest()
    if found != sealed_sha:
        check.problems.append(f"{check.sealed(SELECTION_FILE)} has sha256 {found} but "
                              f"{LOCK_RECORD_FILE} seals {sealed_sha}: the selection was "
                              "changed after the lock; restore the file the lock wrote")
    _check_selection_hash_file(check, path.with_suffix(".sha256"), found)
    doc = _read_json(path, check, data)
    selected = doc.get("selected") if doc is not None else None
    if not isinstance(selected, list):
        return
    for pack in record.get("packs", []):
        if isinstance(pack, dict) and pack.get("sitting") == 1 and \
                sorted(map(str, pack.get("order") or [])) != sorted(map(str, selected)):
            check.problems.append(
                f"{check.sealed(LOCK_RECORD_FILE)}: the pack of {pack.get('rater_id')} holds "
                f"{_ids(pack.get('order') or [])}, but {SELECTION_FILE} selected "
                f"{_ids(selected)}: the second raters' packs were not drawn by the selection "
                "the lock sealed. Send none of them; if no second rater has started, remove "
                f"{LOCK_RECORD_FILE} and {LOCK_RECORD_HASH_FILE}, then run "
                f"'{check.command('lock')}' again")
            return
    if len(check.problems) == before:
        check.checked.append(f"{SELECTION_FILE} has the sha256 {LOCK_RECORD_FILE} seals, "
                             "and the second raters' packs hold the items it selected")


def _check_selection_hash_file(check: SealCheck, path: Path, found: str) -> None:
    """The selection's ``.sha256`` must give its hash; one missing (a lock resumed by a
    sheetflow that did not write it) is a note: the lock record seals the hash too."""
    if not path.is_file():
        check.notes.append(f"{check.sealed(path.name)} is missing (a lock finished after "
                           "a stop, by a sheetflow that did not write it); the selection "
                           f"was checked against {LOCK_RECORD_FILE}, which seals its sha256")
        return
    given = path.read_text(encoding="utf-8", errors="replace").split()[:1]
    if given != [found]:
        check.problems.append(f"{check.sealed(path.name)} says "
                              f"{given[0] if given else 'nothing readable'}, but "
                              f"{SELECTION_FILE} has sha256 {found}: one of them was changed "
                              "after the lock; restore both as the lock wrote them")


def _ids(ids: list[Any]) -> str:
    """``"4 items (W001, W002, W003, ...)"``: a count and the first few ids."""
    shown = ", ".join(map(str, ids[:3])) + (", ..." if len(ids) > 3 else "")
    return f"{len(ids)} item{'' if len(ids) == 1 else 's'} ({shown})"


def unseal(study_dir: str | Path, study: Study, published: str | None = None,
           ) -> SealCheck:
    """The seal check after :func:`verify_seal` found nothing wrong: the key, its sha256,
    the study secret (None for keys sealed before it existed) and the sealed inputs'
    bytes, each read once.

    Raises
    ------
    SealError
        The first problem :func:`verify_seal` found, as one line.
    """
    check = verify_seal(study_dir, study=study, published=published)
    if not check.ok:
        raise SealError(check.problems[0])
    return check


def _check_key_hash(check: SealCheck, key_bytes: bytes, paths: dict[str, Path],
                    published: str | None) -> None:
    check_published(published)
    before = len(check.problems)
    check.key_sha256 = hashlib.sha256(key_bytes).hexdigest()
    recorded = _published_hash(paths[KEY_HASH_FILE])
    if not _SHA256.fullmatch(recorded):
        check.problems.append(f"{check.sealed(KEY_HASH_FILE)} is not the line '<sha256>  "
                              f"{KEY_FILE}', so {KEY_FILE} cannot be checked against it: "
                              "restore it as published before scoring")
    elif recorded != check.key_sha256:
        check.problems.append(f"{check.sealed(KEY_FILE)} has sha256 {check.key_sha256} but "
                              f"{KEY_HASH_FILE} says {recorded}: the key (or its hash file) "
                              "was changed after sealing")
    if published and published.strip().lower() != check.key_sha256:
        check.problems.append(f"{check.sealed(KEY_FILE)} has sha256 {check.key_sha256} but the "
                              f"published hash is {published.strip().lower()}: this is not the "
                              "key sealed before scoring")
    if len(check.problems) > before:
        return
    check.checked.append(f"{KEY_FILE} matches {SEALED_DIR}/{KEY_HASH_FILE}" + (
        " and the hash given with --key-sha256" if published else
        " (give --key-sha256 to check it against the hash published before scoring)"))


def _check_secret(check: SealCheck, key: dict[str, Any], sealed: Path) -> None:
    """The secret on disk must be the one the key (and so the published hash) records.

    Keys sealed before the study secret existed record none; nothing is checked then.
    """
    recorded = key.get("secret_sha256")
    if recorded is None:
        return
    path = sealed / SECRET_FILE
    data = path.read_bytes() if path.is_file() else None  # read once: checked, then used
    now = hashlib.sha256(data).hexdigest() if data is not None else \
        "nothing (the file is missing)"
    if now != recorded:
        check.problems.append(f"{check.sealed(SECRET_FILE)} has sha256 {now} but the sealed key "
                              f"records {recorded}: restore the secret made at generate")
        return
    check.secret = parse_secret(data, path)
    check.demo_secret = check.secret == DEMO_SECRET
    check.checked.append(f"{SEALED_DIR}/{SECRET_FILE} has the sha256 {KEY_FILE} records")


def _check_spec_hashes(check: SealCheck, key: dict[str, Any], lock: dict[str, Any],
                       current: str) -> None:
    check.spec_hash = str(key.get("spec_hash", ""))
    check.current_spec_hash = current
    locked = str(lock.get("spec_hash", ""))
    if locked != check.spec_hash:
        check.problems.append(f"{check.sealed(PLAN_LOCK_FILE)} records spec hash {locked} but "
                              f"the sealed key records {check.spec_hash}: the plan lock was "
                              "edited after generate")
    if current != check.spec_hash:
        check.problems.append(f"{check.study_dir / SPEC_FILE}: the study spec (this file, "
                              "its items or raters) changed after generate: frozen spec hash "
                              f"{check.spec_hash}, current {current}; undo the edit so the "
                              "hash matches again, or, if no rater has scored yet, run "
                              f"'{check.command('generate', '--force')}' and send the new packs")
    if locked == check.spec_hash == current:
        check.checked.append(f"the spec hash {KEY_FILE} and {PLAN_LOCK_FILE} record is the "
                             "study's as it is now")


def _check_inputs(check: SealCheck, key: dict[str, Any], lock: dict[str, Any],
                  study: Study) -> None:
    sealed = key.get("inputs", {})
    if not isinstance(sealed, dict) or lock.get("inputs", {}) != sealed:
        check.problems.append(f"{check.sealed(PLAN_LOCK_FILE)} and {KEY_FILE} record different "
                              "input hashes: the plan lock was edited after generate")
        return
    check.inputs = dict(sealed)
    for name in sealed_input_names(study):
        if name not in sealed:
            check.problems.append(f"{study.root / name} was not sealed at generate (the key "
                                  "records no hash for it); run "
                                  f"'{check.command('generate', '--force')}' before anyone "
                                  "scores")
    for name, digest in sealed.items():
        path = study.root / name
        data = path.read_bytes() if path.is_file() else None  # read once: hashed, then used
        now = hashlib.sha256(data).hexdigest() if data is not None else \
            "nothing (the file is missing)"
        if data is not None and now == digest:
            check.input_bytes[name] = data
        if now != digest:
            check.problems.append(input_changed(str(study.root / name), digest, now))
    if sealed and all(name in check.input_bytes for name in sealed):
        check.checked.append(f"{', '.join(sorted(sealed))} unchanged since generate")


def _check_manifest(check: SealCheck, data: bytes | None, lock: dict[str, Any],
                    key: dict[str, Any] | None) -> None:
    """The manifest (``data``: its bytes, None when missing) must be the one sealed:
    the plan lock's (or the data lock's record) and, for keys that record it, the
    key's own."""
    recorded = lock.get("manifest_sha256")
    in_key = (key or {}).get("manifest_sha256")
    check.manifest_sha256 = str(in_key or recorded or "")
    if in_key and recorded != in_key:
        check.problems.append(f"{check.sealed(PLAN_LOCK_FILE)} records manifest sha256 "
                              f"{recorded} but {KEY_FILE} sealed {in_key}: the plan lock was "
                              "edited after generate")
        return
    found = hashlib.sha256(data).hexdigest() if data is not None else ""
    if recorded and data is None:
        check.problems.append(f"{check.manifest} is missing (sha256 {recorded} was "
                              "sealed); restore it from the generate run")
    elif recorded and found != recorded:
        check.problems.append(f"{check.manifest} has sha256 {found} but "
                              f"{SEALED_DIR}/{PLAN_LOCK_FILE} records {recorded}: the manifest "
                              "was changed after generate")
    elif recorded:
        check.checked.append("packs/manifest.json has the sha256 sealed for it")


def check_collected_manifest(check: SealCheck, record: dict[str, Any]) -> None:
    """The collection must have placed the ratings by the sealed manifest.

    Raises
    ------
    SealError
        ``out/collection.json`` names another manifest: the ratings were placed by an
        edited one (each card's answers may sit under another item).
    """
    used = record.get("manifest_sha256")
    if used and check.manifest_sha256 and used != check.manifest_sha256:
        raise SealError(f"{check.study_dir / 'out' / 'collection.json'} was collected with a "
                        f"manifest of sha256 {used}, not the sealed {check.manifest_sha256}: "
                        "the ratings may sit under other items; restore packs/manifest.json "
                        f"from the generate run and run '{check.command('collect')}' again")


_SHA256 = re.compile(r"[0-9a-f]{64}")


def check_published(published: str | None, option: str = "--key-sha256") -> None:
    """Refuse a published hash that is not a sha256 at all (a typo, a prefix): a usage
    error, not a broken seal."""
    if published and not _SHA256.fullmatch(published.strip().lower()):
        what = KEY_HASH_FILE if option == "--key-sha256" else LOCK_RECORD_HASH_FILE
        raise UsageError(f"{option} {published.strip()!r}: not a sha256 (64 hexadecimal "
                         f"digits, the first word of {SEALED_DIR}/{what} as published)")


def _published_hash(path: Path) -> str:
    parts = path.read_text(encoding="utf-8", errors="replace").split()
    return parts[0].lower() if len(parts) == 2 and parts[1] == KEY_FILE else ""


def _read_json(path: Path, check: SealCheck, data: bytes | None = None,
               ) -> dict[str, Any] | None:
    """``path``'s JSON object (parsed from ``data`` when given), or None with the problem."""
    try:
        doc = json.loads((path.read_bytes() if data is None else data).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        check.problems.append(f"{check.sealed(path.name)} is not valid JSON ({exc})")
        return None
    if not isinstance(doc, dict):
        check.problems.append(f"{check.sealed(path.name)} is not a JSON object")
        return None
    return doc
